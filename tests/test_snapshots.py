"""Snapshots of the screens people look at at 160x45: the article's six attempts, and the priced
demo for the audit screens (cost headline, per task, Pareto chart).

Update them after an intended change with `pytest tests/test_snapshots.py --snapshot-update`,
and look at the report (`snapshot_report.html`) before committing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.pilot_helpers import settle
from tui_ledger.tui.app import LedgerApp

REPO = Path(__file__).resolve().parent.parent
SIZE = (160, 45)


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    # Paths are shown as given: run from the repository so they read `sample_data/runs.csv`.
    monkeypatch.chdir(REPO)


def article_app() -> LedgerApp:
    return LedgerApp(["sample_data/runs.csv"])


def test_main_screen_keep_failures(snap_compare: object) -> None:
    assert snap_compare(article_app(), terminal_size=SIZE, run_before=settle)  # type: ignore[operator]


def test_main_screen_drop_failures(snap_compare: object) -> None:
    async def toggled(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)

    assert snap_compare(article_app(), terminal_size=SIZE, run_before=toggled)  # type: ignore[operator]


def test_help_screen(snap_compare: object) -> None:
    async def helped(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)

    assert snap_compare(article_app(), terminal_size=SIZE, run_before=helped)  # type: ignore[operator]


def test_detail_panel(snap_compare: object) -> None:
    async def detailed(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("j", "i")
        await settle(pilot)

    assert snap_compare(article_app(), terminal_size=SIZE, run_before=detailed)  # type: ignore[operator]


def demo_app() -> LedgerApp:
    """The bundled demo priced by the bundled example table (the audit screens' data)."""
    from tui_ledger.accounting.prices import load_prices

    return LedgerApp(["sample_data/demo.csv"], prices=load_prices("sample_data/prices.toml"))


def test_main_screen_with_prices_cost_headline(snap_compare: object) -> None:
    async def in_money(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("dollar_sign")
        await settle(pilot)

    assert snap_compare(demo_app(), terminal_size=SIZE, run_before=in_money)  # type: ignore[operator]


def test_per_task_view(snap_compare: object) -> None:
    async def per_task(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)

    assert snap_compare(demo_app(), terminal_size=SIZE, run_before=per_task)  # type: ignore[operator]


def test_pareto_chart(snap_compare: object) -> None:
    async def charted(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)

    assert snap_compare(demo_app(), terminal_size=SIZE, run_before=charted)  # type: ignore[operator]


FIRST_SCREEN_SIZES = [(80, 24), (100, 30), (120, 40), (160, 45)]


@pytest.mark.parametrize(
    "size", FIRST_SCREEN_SIZES, ids=[f"{w}x{h}" for w, h in FIRST_SCREEN_SIZES]
)
@pytest.mark.parametrize("which", ["demo", "article"])
def test_first_screen_at_every_size(
    snap_compare: object, which: str, size: tuple[int, int]
) -> None:
    """Issue 56: with no key pressed, the trap at a glance (docs/LAYOUT.md, "The first screen")."""
    app = LedgerApp(["sample_data/demo.csv"], demo=True) if which == "demo" else article_app()
    assert snap_compare(app, terminal_size=size, run_before=settle)  # type: ignore[operator]
