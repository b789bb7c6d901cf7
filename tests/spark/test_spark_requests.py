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


async def test_a_filter_keystroke_is_one_query(spark: Any) -> None:
    """The figures of both views, both first pages, the checks' and the pairs' cells: one
    query a keystroke, no schema asked again (30 round trips before, 9 of them queries)."""
    from tests.pilot_helpers import press, settle
    from tests.spark.test_spark_app import DEMO, SIZE, spark_app

    counter = count_requests(spark)
    app = spark_app(spark, DEMO)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"lea")
        typed = counter.counts()
        await press(pilot, "n")
        keystroke = counter.since(typed)
        assert app.filter_text == "lean"
        assert app.comparison is not None
        assert app.comparison.keep["workflow"].to_list() == ["lean-loop"]
        assert app.pipeline.checks is not None
    assert keystroke.get("ExecutePlan", 0) == 1, keystroke
    assert keystroke.get("AnalyzePlan", 0) == 0, keystroke


async def test_a_large_inputs_figures_come_before_its_checks_and_pairs(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `BUNDLED_ROWS`, the figures' query asks neither the checks' nor the pairs' cells:
    each comes in a query of its own once the figures are drawn, and says what the bundled
    query's cells say (the same findings, the same verdicts)."""
    from tests.pilot_helpers import press, settle
    from tests.spark.test_spark_app import DEMO, SIZE, spark_app
    from tui_ledger.tui import spark_pipeline

    async def lean() -> tuple[Any, Any, Any, dict[str, int]]:
        counter = count_requests(spark)
        app = spark_app(spark, DEMO)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await press(pilot, "slash", *"lea")
            typed = counter.counts()
            await press(pilot, "n")
            await settle(pilot)
            keystroke = counter.since(typed)
            snapshot = app.pipeline.snapshot
            assert app.comparison is not None and app.pipeline.checks is not None
            return snapshot, app.comparison, list(app.pipeline.checks), keystroke

    bundled, comparison, checks, one = await lean()
    assert bundled.figures.check_cells is not None and bundled.figures.pair_tasks is not None
    assert one.get("ExecutePlan", 0) == 1, one
    monkeypatch.setattr(spark_pipeline, "BUNDLED_ROWS", 0)
    apart, apart_comparison, apart_checks, several = await lean()
    assert apart.figures.check_cells is None and apart.figures.pair_tasks is None
    assert several.get("ExecutePlan", 0) == 3, several  # the figures, the checks, the pairs
    assert apart_comparison.pairs is not None
    assert apart_comparison.pairs == comparison.pairs
    assert apart_checks == checks
