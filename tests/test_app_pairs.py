"""The pairwise verdicts in the app: drawn in their own worker once new figures are on screen,
then shown in the callout (a flip decided, or within noise), the focus block's `vs cheapest`
line, the groups table's `~#` column and its legend, and the presenter's flip step."""

from __future__ import annotations

import threading
from pathlib import Path

import polars as pl
import pytest

from tests.pilot_helpers import screen_text, settle
from tests.test_app import summary_cells
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.pipeline import Pipeline
from tui_ledger.tui.presenter import PresenterScreen, PresentingApp
from tui_ledger.tui.snapshot import Snapshot

REPO = Path(__file__).resolve().parent.parent
RUNS = str(REPO / "sample_data" / "runs.csv")
DEMO = str(REPO / "sample_data" / "demo.csv")
SIZE = (160, 45)


def _column(app: LedgerApp, heading: str) -> dict[str, str]:
    cells = summary_cells(app)
    at = cells[""].index(heading)
    return {label: row[at] for label, row in cells.items() if label}


def _text(app: LedgerApp, selector: str) -> str:
    return " ".join(str(app.query_one(selector).render()).split())


async def test_the_fixture_flip_is_within_noise_in_the_callout_and_the_focus_block() -> None:
    app = LedgerApp([RUNS])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.pipeline.snapshot is not None
        assert app.pipeline.snapshot.comparison.pairs is not None
        callout = _text(app, "#callout")
        assert "would flip the ranking" in callout
        assert "the flip is within noise: steady vs lean ×0.53" in callout
        assert "3 attempts a side" in callout
        assert "checking" not in callout
        focus = _text(app, "#focus")
        assert "vs cheapest steady vs lean: ×0.53, 95% 0.00–1.60, within noise" in focus
        assert "(unpaired, by attempt; 3 attempts a side)" in focus
        assert _column(app, "~#") == {"lean": "1–2", "steady": "1–2"}
        assert _column(app, "#") == {"lean": "2", "steady": "1"}
        note = _text(app, "#missing-note")
        assert "~#: rank the sample supports (groups within noise share places)" in note


async def test_the_demo_flip_is_decided_and_the_focus_block_names_the_cheaper() -> None:
    app = LedgerApp([DEMO])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        callout = _text(app, "#callout")
        assert "and flips the ranking: lean-loop looks cheapest" in callout
        assert "noise" not in callout
        focus = _text(app, "#focus")
        assert focus.startswith("▸ lean-loop")
        assert "vs cheapest steady-planner vs lean-loop: ×0.65, 95% 0.48–0.85" in focus
        assert "steady-planner is cheaper (paired by task; 30 tasks each)" in focus
        ranks = _column(app, "~#")
        assert ranks["steady-planner"] == "1"
        # The cheapest itself is shown against the second cheapest.
        app.summary.focus_group("steady-planner")
        await pilot.pause()
        assert "vs 2nd cheapest steady-planner vs" in _text(app, "#focus")


async def test_the_drop_view_shows_its_own_verdicts() -> None:
    app = LedgerApp([DEMO])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        comparison = app.pipeline.snapshot.comparison  # type: ignore[union-attr]
        assert comparison.pairs is not None
        focus = _text(app, "#focus")
        expected = comparison.pairs.against_cheapest("drop", "lean-loop")
        assert expected is None or expected.a == "lean-loop"  # lean-loop is cheapest dropped
        assert "vs 2nd cheapest lean-loop vs" in focus
        ranks = comparison.pairs.noise_ranks("drop")
        assert ranks is not None
        best, worst = ranks["lean-loop"]
        assert best == 1
        assert _column(app, "~#")["lean-loop"] == ("1" if worst == 1 else f"1–{worst}")


async def test_the_cost_metric_has_no_noise_column(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(
        "workflow,tokens,passed,cost_usd\n"
        "lean,1000,true,0.01\nlean,1000,false,0.01\nlean,1000,false,0.01\n"
        "steady,1600,true,0.02\nsteady,1600,true,0.02\nsteady,1600,true,0.02\n"
    )
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "~#" in summary_cells(app)[""]
        app.action_toggle_metric()
        await settle(pilot)
        assert "~#" not in summary_cells(app)[""]


async def test_while_the_pairs_are_drawn_the_callout_says_the_flip_is_being_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = threading.Event()
    original = Pipeline.pair_cells

    def held(self: Pipeline, snapshot: Snapshot) -> pl.DataFrame:
        release.wait(60)
        return original(self, snapshot)

    monkeypatch.setattr(Pipeline, "pair_cells", held)
    app = LedgerApp([RUNS])
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(500):  # (settle would wait for the held worker)
            await pilot.pause()
            if "pairs" in app.pipeline.waiting():
                break
        assert "pairs" in app.pipeline.waiting()
        callout = _text(app, "#callout")
        assert "flips the ranking" in callout and "Is it noise? checking…" in callout
        assert "~#" not in summary_cells(app)[""]
        release.set()
        await settle(pilot)
        callout = _text(app, "#callout")
        assert "within noise" in callout and "checking" not in callout
        assert "~#" in summary_cells(app)[""]


async def test_pairs_and_intervals_land_together_whichever_comes_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = threading.Event()
    original = Pipeline._intervals_worker

    def held(self: Pipeline, *args: object) -> None:
        release.wait(60)
        original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Pipeline, "_intervals_worker", held)
    app = LedgerApp([RUNS])
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(500):  # the pairs arrive while the intervals are held
            await pilot.pause()
            snapshot = app.pipeline.snapshot
            if snapshot is not None and snapshot.comparison.pairs is not None:
                break
        snapshot = app.pipeline.snapshot
        assert snapshot is not None and snapshot.comparison.pairs is not None
        assert snapshot.comparison.intervals.method == "delta"
        release.set()
        await settle(pilot)
        final = app.pipeline.snapshot
        assert final is not None
        assert final.comparison.intervals.method == "auto"
        assert final.comparison.pairs is snapshot.comparison.pairs


async def test_the_verdicts_follow_a_filter_to_the_groups_it_keeps() -> None:
    app = LedgerApp([DEMO])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"-careful", "enter")
        await settle(pilot)
        comparison = app.pipeline.snapshot.comparison  # type: ignore[union-attr]
        assert "careful-reviewer" not in comparison.labels
        assert comparison.pairs is not None
        named = {name for pair in comparison.pairs.keep for name in (pair.a, pair.b)}
        assert named <= set(comparison.labels) and len(comparison.pairs.keep) == 3
        assert set(_column(app, "~#")) == set(comparison.labels)


async def test_the_presenter_says_whether_the_flip_is_noise() -> None:
    for path, expected in (
        (RUNS, "But on this sample the flip is within noise: steady vs lean ×0.53"),
        (DEMO, "Not noise: steady-planner vs lean-loop ×0.65, 95% 0.48–0.85"),
    ):
        app = PresentingApp([path])
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, PresenterScreen)
            await pilot.press("right", "right")
            assert app.screen.step == "flip"
            assert expected in " ".join(screen_text(app).split())


async def test_the_warnings_line_says_what_still_follows_the_figures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Figures before checks: until the checks are in, the line never says "no warnings"; the
    intervals and the noise check say they are coming, and stop saying it once drawn."""
    release = threading.Event()
    find_checks, pair_cells = Pipeline.find_checks, Pipeline.pair_cells

    def held_checks(self: Pipeline, *args: object) -> object:
        release.wait(60)
        return find_checks(self, *args)  # type: ignore[arg-type]

    def held_pairs(self: Pipeline, snapshot: Snapshot) -> pl.DataFrame:
        release.wait(60)
        return pair_cells(self, snapshot)

    monkeypatch.setattr(Pipeline, "find_checks", held_checks)
    monkeypatch.setattr(Pipeline, "pair_cells", held_pairs)
    app = LedgerApp([DEMO])
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(500):  # (settle would wait for the held workers)
            await pilot.pause()
            if {"checks", "pairs"} <= set(app.pipeline.waiting()):
                break
        assert app.pipeline.coming()[:1] == ["checks"]
        line = _text(app, "#warnings-line")
        # The demo's load found 3 warnings; the checks may find more (or none: "no warnings"
        # would be a claim nobody has checked yet).
        assert line.startswith("⚠ 3 warnings so far (w)") and "no warnings" not in line
        assert "noise check coming" in line
        assert "Summary by workflow" in screen_text(app)  # the figures are already there
        release.set()
        await settle(pilot)
        assert app.pipeline.coming() == []
        line = _text(app, "#warnings-line")
        assert line.startswith("⚠ 4 warnings (w)")  # one more from the checks
        assert "so far" not in line and "coming" not in line
