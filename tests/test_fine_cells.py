"""The Spark path's one aggregation per (group, task, outcome) gives the cells and the pairs'
per-task cells the local path counts from the rows (`spark.fine_cells`): checked against
ledger.py's cells and pairs.py's `task_cells` on frames with null keys and tasks, missing and
zero usage, costs, and sums that overflow a LONG. (The fine rows are made here with polars as
the engine makes them; tests/spark run the engine's own.)"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_middles import _histogram as middles_histogram
from tui_ledger.accounting.ledger import _cell_aggregations
from tui_ledger.accounting.pairs import task_cells
from tui_ledger.spark.fine_cells import (
    COUNTED,
    SPEND,
    TASK,
    TOKENS,
    cell_names,
    counted_sums,
    empty_keys,
    merged_histogram,
    split_cells_and_pairs,
    trimmed,
)
from tui_ledger.spark.middles import BUCKET

KEYS = ["g", "h"]
OUTCOMES = ["passed", "failed", "error", "ungraded"]

rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", None]),
        st.sampled_from([1, None]),
        st.sampled_from(["t1", "t2", "t3", None]),
        st.sampled_from(OUTCOMES),
        st.one_of(st.none(), st.just(0), st.integers(1, 50), st.integers(1, 10**12)),
        st.one_of(st.none(), st.just(0.0), st.floats(0.0, 5.0, allow_nan=False)),
    ),
    min_size=1,
    max_size=60,
)


def _frame(drawn: list[tuple[Any, ...]]) -> pl.DataFrame:
    return pl.DataFrame(
        drawn,
        schema={
            "g": pl.String,
            "h": pl.Int64,
            "task": pl.String,
            "outcome": pl.String,
            "tokens": pl.Int64,
            "cost": pl.Float64,
        },
        orient="row",
    )


def _fine(frame: pl.DataFrame, with_cost: bool) -> pl.DataFrame:
    """The rows `aggregate.cells_and_pairs_plan` asks the engine for, counted here."""
    spend = pl.col("tokens").fill_null(0).cast(pl.Float64)
    fine = frame.group_by(
        *KEYS,
        pl.col("task").alias(TASK),
        "outcome",
        pl.when(pl.col("task").is_null()).then(spend).alias(TOKENS),
    ).agg(
        *_cell_aggregations(with_cost),
        spend.sum().alias(SPEND),
        pl.col("tokens").is_null().sum().alias(COUNTED + "count_missing_usage"),
    )
    counts = ["n", "known", "zeros", *(["known_cost", "zero_cost"] if with_cost else [])]
    # As the engine's: LONG counts and sums.
    return fine.with_columns(pl.col(counts).cast(pl.Int64), pl.col("sum_tokens").cast(pl.Int64))


@pytest.mark.parametrize("with_cost", [False, True])
@settings(max_examples=60, deadline=None)
@given(drawn=rows)
def test_the_split_gives_the_cells_and_the_pairs_the_rows_give(
    with_cost: bool, drawn: list[tuple[Any, ...]]
) -> None:
    frame = _frame(drawn)
    cells, tasks = split_cells_and_pairs(_fine(frame, with_cost), KEYS, with_cost)
    expected = frame.group_by([*KEYS, "outcome"]).agg(_cell_aggregations(with_cost))
    order = [*KEYS, "outcome"]
    assert cells.columns == [*order, *cell_names(with_cost)]
    got, want = cells.sort(order, nulls_last=True), expected.sort(order, nulls_last=True)
    exact = ["n", "known", "zeros", "sum_tokens", *(["known_cost", "zero_cost"] * with_cost)]
    for name in [*order, *exact]:
        assert got[name].cast(want[name].dtype).to_list() == want[name].to_list(), name
    floats = ["mean_tokens", "m2_tokens", *(["sum_cost", "mean_cost", "m2_cost"] * with_cost)]
    for name in floats:
        assert got[name].to_list() == pytest.approx(want[name].to_list(), rel=1e-9, abs=1e-6)
    wanted_tasks = task_cells(frame, KEYS).tasks
    pair_order = [*KEYS, TASK, TOKENS, "__passed"]
    assert (
        tasks.sort(pair_order, nulls_last=True).to_dicts()
        == wanted_tasks.select(tasks.columns).sort(pair_order, nulls_last=True).to_dicts()
    )
    assert counted_sums(_fine(frame, with_cost)) == {
        "count_missing_usage": frame["tokens"].is_null().sum()
    }


def test_a_cell_whose_long_sum_overflowed_has_no_pooled_sum() -> None:
    # The engine's `try_sum` is null where a LONG sum overflows; the pooled cell must be
    # too, so that the sums are counted again exactly (`aggregates_from`), not skipped.
    big = 2**62
    frame = _frame([("a", 1, "t1", "passed", big, None), ("a", 1, "t1", "passed", big, None)])
    fine = _fine(frame.head(1), False).with_columns(
        pl.col("n") * 2, pl.col("known") * 2, pl.lit(None, pl.Int64).alias("sum_tokens")
    )
    cells, _ = split_cells_and_pairs(fine, KEYS, False)
    assert cells["sum_tokens"].to_list() == [None]
    assert cells["n"].to_list() == [2]


spaced = st.lists(
    st.tuples(
        st.sampled_from(["a", " a", "a\t", "\u3000b ", "b", " ", None]),
        st.sampled_from([" t1", "t1", "  ", None]),
        st.sampled_from(OUTCOMES),
        st.one_of(st.none(), st.integers(0, 40)),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(drawn=spaced)
def test_groups_of_keys_as_read_trimmed_after_are_the_groups_of_trimmed_keys(
    drawn: list[tuple[Any, ...]],
) -> None:
    """The engine groups a typed input's text keys as read (`cells.RAW`); trimmed and added
    up here, the cells, the pairs' cells, the histogram and the empty workflows are those
    of the keys trimmed first, as the loader trims them."""
    read = pl.DataFrame(
        drawn,
        schema={"g": pl.String, "task": pl.String, "outcome": pl.String, "tokens": pl.Int64},
        orient="row",
    ).with_columns(pl.lit(1, pl.Int64).alias("h"), pl.lit(None, pl.Float64).alias("cost"))
    clean = read.with_columns(pl.col("g", "task").str.strip_chars())
    fine = trimmed(_fine(read, False), ["g", TASK])
    cells, tasks = split_cells_and_pairs(fine, KEYS, False)
    want_cells, want_tasks = split_cells_and_pairs(_fine(clean, False), KEYS, False)
    order = [*KEYS, "outcome"]
    exact = ["n", "known", "zeros", "sum_tokens"]
    assert cells.sort(order, nulls_last=True).select(*order, *exact).to_dicts() == (
        want_cells.sort(order, nulls_last=True).select(*order, *exact).to_dicts()
    )
    pair_order = [*KEYS, TASK, TOKENS, "__passed"]
    assert tasks.sort(pair_order, nulls_last=True).to_dicts() == (
        want_tasks.sort(pair_order, nulls_last=True).to_dicts()
    )
    assert empty_keys(fine, "g") == clean.filter(pl.col("g").is_null() | (pl.col("g") == "")).height

    def histogram(frame: pl.DataFrame) -> pl.DataFrame:  # (as tests/test_middles.py makes it)
        accepted = (pl.col("outcome") == "passed").alias("accepted")
        return middles_histogram(frame.with_columns(accepted), lambda value: value // 8)

    merged = merged_histogram(trimmed(histogram(read), ["g"]), KEYS)
    columns = [*KEYS, BUCKET, "keep_n", "keep_lo", "keep_hi", "drop_n", "drop_lo", "drop_hi"]
    assert merged.select(columns).sort(columns, nulls_last=True).to_dicts() == (
        histogram(clean).select(columns).sort(columns, nulls_last=True).to_dicts()
    )
