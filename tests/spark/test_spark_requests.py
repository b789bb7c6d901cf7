"""Counting the Spark Connect requests a piece of work sends (`spark.requests`), by gRPC
method, on a real server."""

from __future__ import annotations

from typing import Any

import pytest

from tui_ledger.spark.requests import ROUND_TRIPS, count_requests

pytestmark = pytest.mark.spark


def round_trips(counts: dict[str, int]) -> int:
    return sum(counts.get(name, 0) for name in ROUND_TRIPS)


def test_counting_sees_each_kind_of_request(spark: Any) -> None:
    counter = count_requests(spark)
    assert count_requests(spark) is counter  # one counter per session
    before = counter.counts()
    frame = spark.range(3)
    assert frame.columns == ["id"]  # a schema: AnalyzePlan
    assert len(frame.collect()) == 3  # a query: ExecutePlan
    counts = counter.since(before)
    assert counts.get("AnalyzePlan") == 1
    assert counts.get("ExecutePlan") == 1
    # The client reads settings for a collect (Config); those are waited for, the background
    # ReleaseExecute is not.
    assert round_trips(counts) == 2 + counts.get("Config", 0)
    assert "ReleaseExecute" not in ROUND_TRIPS
    assert counter.round_trips() >= 2


async def test_a_filter_keystroke_is_one_query_for_its_figures(spark: Any) -> None:
    """The figures of both views and both first pages: one query, no schema asked again (30
    round trips before, 9 of them queries); then the checks' cells and the pairs' cells, one
    query each; the checks say what one query asking everything (`summary --spark`'s) says."""
    from tests.pilot_helpers import press, settle
    from tests.spark.test_spark_app import DEMO, SIZE, spark_app
    from tui_ledger.accounting.stats import IntervalSettings
    from tui_ledger.spark.commands import filtered_by, spark_checks, spark_figures

    counter = count_requests(spark)
    app = spark_app(spark, DEMO)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"lea")
        typed = counter.counts()
        await press(pilot, "n")
        await settle(pilot)
        keystroke = counter.since(typed)
        assert app.filter_text == "lean"
        comparison, checks = app.comparison, app.pipeline.checks
        assert comparison is not None and checks is not None
        assert comparison.keep["workflow"].to_list() == ["lean-loop"]
        snapshot = app.pipeline.snapshot
        assert snapshot.figures.check_cells is None and snapshot.figures.pair_tasks is None
        filtered = filtered_by(app.pipeline.opened, "lean")
    # The figures (asking neither the checks' nor the pairs' cells), the checks, the pairs.
    assert keystroke.get("ExecutePlan", 0) == 3, keystroke
    assert keystroke.get("AnalyzePlan", 0) == 0, keystroke
    together = spark_figures(
        filtered, ("workflow",), intervals=IntervalSettings(), checks=True, pairs=True
    )
    assert spark_checks(filtered, ["workflow"], figures=together) == checks
    assert comparison.pairs is not None  # drawn from their own query
