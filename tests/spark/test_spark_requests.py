"""Counting the Spark Connect requests a piece of work sends (`spark.requests`), by gRPC
method, on a real server."""

from __future__ import annotations

from pathlib import Path
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


def test_a_csv_summary_is_its_checkpoint_and_one_query(spark: Any) -> None:
    """`summary --spark` of the demo CSV: the input's schema once, the parsed rows
    checkpointed, then one query holding the figures and the validation pass (the CSV's text
    columns stay text meanwhile: the figures read none of them). Grouped by one of those
    columns, the validation types it first; both as the local summary counts them."""
    from tests.spark.test_spark_app import DEMO
    from tui_ledger.accounting.ledger import compare
    from tui_ledger.accounting.stats import IntervalSettings
    from tui_ledger.load import load
    from tui_ledger.spark.commands import open_input, spark_comparison, spark_figures

    counter = count_requests(spark)
    before = counter.counts()
    opened = open_input(
        None, [str(DEMO)], load_options={}, validate=False, connect_to=lambda _url: spark
    )
    assert "duration_s" in opened.ledger.probed and opened.ledger.validated is None
    settings = IntervalSettings(method="delta")
    figures = spark_figures(opened, ("workflow",), intervals=settings, pairs=True)
    counts = counter.since(before)
    assert counts.get("ExecutePlan") == 2, counts  # the checkpoint, the figures
    assert counts.get("AnalyzePlan") == 1, counts  # the input's schema
    assert opened.ledger.validated is not None and opened.ledger.probed == []
    local = load([str(DEMO)]).attempts
    for by in (("workflow",), ("duration_s",)):
        if by != ("workflow",):
            figures = None  # grouped by a probed column: typed (validated) first
        got = spark_comparison(opened, by, settings, figures)
        want = compare(local.lazy(), by, intervals=settings)
        assert got.keep.select(*by, "attempts", "total_tokens").equals(
            want.keep.select(*by, "attempts", "total_tokens")
        ), by


@pytest.mark.parametrize("most_named", [64, 0])
def test_the_medians_second_question_is_one_round_trip(
    spark: Any, most_named: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a middle lies inside a bucket, its values are asked in one request when the
    buckets are few (named in the condition: no `createDataFrame` settings request, no
    schema request); past `MOST_NAMED_BUCKETS` they travel as a table to join. Both ways
    give the loader's medians."""
    import polars as pl

    import tui_ledger.spark.aggregate as aggregate
    from tests.spark.reference import polars_aggregate_frame
    from tui_ledger import load
    from tui_ledger.spark.opening import open_ledger

    monkeypatch.setattr(aggregate, "MOST_NAMED_BUCKETS", most_named)
    path = tmp_path / "middles.csv"
    lines = ["workflow,model,tokens,passed"]
    lines += [f"a,m,{tokens},{tokens % 3 == 0}" for tokens in (1000, 1001, 1001, 1005, 1013)]
    lines += [f"a,,{tokens},{tokens > 1010}" for tokens in (1002, 1004, 1004, 1011, 1020)]
    lines += ["b,m,,true", "c,m,1003,false", "c,m,1009,false", "c,m,1010,true"]
    path.write_text("\n".join(lines) + "\n")
    attempts = open_ledger(spark, str(path)).attempts()
    keys = ["workflow", "model"]
    histogram = aggregate.run_parts({"h": aggregate.median_plan(attempts, keys, 1)})["h"]
    counter = count_requests(spark)
    before = counter.counts()
    middles = aggregate.medians_from_middles(aggregate.middles_of(histogram, attempts, keys))
    counts = counter.since(before)
    if most_named:
        assert round_trips(counts) == 1 and counts.get("ExecutePlan") == 1, counts
    else:
        assert counts.get("ExecutePlan") == 1 and round_trips(counts) >= 2, counts
    expected = polars_aggregate_frame(load.load(path).attempts, keys)
    names = [*keys, *[f"{view}__median_tokens_per_attempt" for view in ("keep", "drop")]]
    ours = expected.select(keys).join(middles, on=keys, how="left", nulls_equal=True)
    assert ours.select(names).rows() == expected.select(names).rows()
    assert not expected.filter(pl.col("keep__median_tokens_per_attempt").is_null()).is_empty()


def test_opening_and_validating_a_parquet_input_asks_no_settings_for_its_answer(
    spark: Any, tmp_path: Path
) -> None:
    """Opening a Parquet ledger and validating it: its schema, the validation pass and the
    setting a small input is interpreted by; no settings read for the pass's answer (a
    `collect` reads two first: one more round trip before)."""
    import polars as pl

    from tui_ledger.spark.commands import open_input

    path = tmp_path / "ledger.parquet"
    pl.DataFrame(
        {"workflow": ["a", "a", "b"], "task": ["t1", "t2", "t1"], "tokens": [10, 20, 30]}
        | {"passed": [True, False, True]}
    ).write_parquet(path)
    counter = count_requests(spark)
    before = counter.counts()
    opened = open_input(None, [str(path)], load_options={}, connect_to=lambda _url: spark)
    counts = counter.since(before)
    assert opened.report.rows == 3
    assert counts.get("AnalyzePlan") == 1 and counts.get("ExecutePlan") == 1, counts
    assert counts.get("Config", 0) <= 1, counts  # (`interpret`, where the session lacks it)
    assert round_trips(counts) <= 3, counts
