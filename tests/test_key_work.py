"""What a key need not redo (issue 56): the callout is made once per comparison, so the view
toggle and the follow-ups redraw the summary without computing its sentence again."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.pilot_helpers import screen_text, settle, wait_until
from tui_ledger.accounting.ledger import compare
from tui_ledger.load import load
from tui_ledger.reports import callout as callout_module
from tui_ledger.reports.callout import callout
from tui_ledger.tui.app import LedgerApp

REPO = Path(__file__).resolve().parent.parent
RUNS = REPO / "sample_data" / "runs.csv"


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    """Each time the callout's sentence is computed: (the comparison's id, the metric)."""
    made: list[tuple[int, str]] = []
    original = callout_module._callout

    def counted(comparison: Any, metric: Any) -> str:
        made.append((id(comparison), metric))
        return original(comparison, metric)

    monkeypatch.setattr(callout_module, "_callout", counted)
    return made


def test_the_callout_is_made_once_per_comparison_and_metric(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = _counting(monkeypatch)
    comparison = compare(load([str(RUNS)]).attempts)
    first = callout(comparison)
    assert "flips the ranking" in first
    assert callout(comparison) == first
    assert len(made) == 1
    # A new comparison (pairs or intervals arrived: `replace`) says it afresh, the same words.
    again = replace(comparison)
    assert callout(again) == first
    assert len(made) == 2


async def test_the_toggle_does_not_compute_the_callout_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = _counting(monkeypatch)
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        assert app.pipeline.snapshot is not None
        settled = len(made)
        assert settled >= 1
        for view in ("drop", "keep", "drop"):
            await pilot.press("t")
            await wait_until(pilot, lambda view=view: app.view == view, f"the {view} view")
        assert "DROP FAILURES" in screen_text(app)
        assert len(made) == settled
