"""A filter that keeps exactly the rows on screen shows their figures again (issue 14, item 8).

Typing `tokens>1000` passes through `tokens>1`, `tokens>10` and `tokens>100`, which often keep
every row; at 200,000 groups each would cost a recompute, its bootstrap and its checks. The
figures on screen, once final, are those rows' figures: they are shown again, as they are.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.pilot_helpers import press, settle
from tui_ledger.tui.app import LedgerApp

SIZE = (160, 45)


def _ledger(tmp_path: Path) -> Path:
    rows = ["workflow,task,tokens,passed"]
    for number in range(24):
        workflow = ("lean", "steady", "wide")[number % 3]
        rows.append(f"{workflow},t{number % 5},{500 + 97 * number},{str(number % 4 != 0).lower()}")
    path = tmp_path / "runs.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@asynccontextmanager
async def filtered(tmp_path: Path) -> AsyncIterator[tuple[LedgerApp, Pilot[Any]]]:
    """The app on `_ledger`, settled with the filter `tokens>1` (every row)."""
    app = LedgerApp([str(_ledger(tmp_path))])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"tokens>1")
        yield app, pilot


async def test_a_filter_keeping_the_same_rows_shows_the_same_figures(tmp_path: Path) -> None:
    async with filtered(tmp_path) as (app, pilot):
        pipeline = app.pipeline
        shown = pipeline.snapshot
        assert shown is not None and shown.matching.height == 24
        figures, checks = shown.comparison, pipeline.checks
        assert checks is not None
        assert figures.intervals.method == "auto"  # final: the bootstrap's intervals are in

        await press(pilot, "0")  # tokens>10: every row still
        assert app.filter_text == "tokens>10"
        again = pipeline.snapshot
        assert again is not None and again is not shown
        assert again.comparison is figures
        assert pipeline.checks is checks
        assert app.unsettled == ()

        await press(pilot, "0", "0")  # tokens>1000: other rows, other figures
        fewer = pipeline.snapshot
        assert fewer is not None and 0 < fewer.matching.height < 24
        assert fewer.comparison is not figures
        assert fewer.comparison.intervals.method == "auto"

        await press(pilot, "backspace", "backspace")  # every row again
        back = pipeline.snapshot
        assert back is not None and back.matching.height == 24
        # Not the figures on screen (those were of fewer rows): computed again, the same.
        assert back.comparison is not figures
        assert back.comparison.keep.equals(figures.keep)
        assert back.comparison.drop.equals(figures.drop)


async def test_a_regrouping_never_shows_the_previous_grouping_again(tmp_path: Path) -> None:
    async with filtered(tmp_path) as (app, pilot):
        pipeline = app.pipeline
        figures = pipeline.snapshot.comparison
        app.group_by(["task"])
        await settle(pilot)
        await press(pilot, "0")
        assert pipeline.snapshot.comparison is not figures
        assert pipeline.snapshot.comparison.by == ("task",)


async def test_matched_tasks_only_keeps_its_note_among_the_warnings(tmp_path: Path) -> None:
    # Every group attempted every task: `m` keeps every row, but says so among the warnings.
    async with filtered(tmp_path) as (app, pilot):
        pipeline = app.pipeline
        await press(pilot, "escape")
        await press(pilot, "m")
        snapshot = pipeline.snapshot
        assert snapshot is not None and snapshot.matching.height == 24
        assert snapshot.notice is not None
        assert [w.kind for w in pipeline.warnings()].count("matched_tasks") == 1
