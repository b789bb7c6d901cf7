"""The in-memory medians, read by position in one sort, are polars' own median per group.

`medians.medians_in_memory` sorts the known usage by group and value and takes the middle
positions of each run; this checks it against `median()` in a `group_by`, the definition it
replaced, on frames with null and several keys, Categorical keys, empty groups in the drop
view and values up to 2**50 (past 2**52 both paths take the exact median).
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from tui_ledger.accounting.medians import medians_in_memory
from tui_ledger.schema import ACCEPTED, OUTCOME_DTYPE, OUTCOMES

KEEP, DROP = "keep__median_tokens_per_attempt", "drop__median_tokens_per_attempt"

rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "ü", None]),
        st.sampled_from([1, 2, None]),
        st.sampled_from(OUTCOMES),
        st.one_of(st.none(), st.integers(0, 5), st.integers(0, 2**50)),
    ),
    max_size=40,
)


def _polars_medians(frame: pl.LazyFrame, keys: list[str]) -> pl.DataFrame:
    tokens = pl.col("tokens")
    return (
        frame.filter(tokens.is_not_null())
        .group_by(keys)
        .agg(
            tokens.median().alias(KEEP),
            tokens.filter(pl.col("outcome") == ACCEPTED).median().alias(DROP),
        )
        .collect()
    )


@given(
    rows=rows, keys=st.sampled_from([["name"], ["name", "number"], ["number"]]), cat=st.booleans()
)
def test_medians_by_position_are_polars_medians(
    rows: list[tuple[str | None, int | None, str, int | None]], keys: list[str], cat: bool
) -> None:
    frame = pl.DataFrame(
        rows,
        schema={
            "name": pl.Categorical if cat else pl.String,
            "number": pl.Int64,
            "outcome": OUTCOME_DTYPE,
            "tokens": pl.Int64,
        },
        orient="row",
    ).lazy()
    _, got = medians_in_memory(frame, keys, frame.group_by(keys).agg(pl.len()))
    want = _polars_medians(frame, keys)
    order = [pl.col(name).cast(pl.String) if name == "name" else pl.col(name) for name in keys]
    assert_frame_equal(
        got.sort(order, nulls_last=True), want.sort(order, nulls_last=True), check_dtypes=True
    )


packed_rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "ü", "z", None]),
        st.sampled_from(OUTCOMES),
        st.one_of(
            st.none(),
            st.integers(0, 5),
            st.integers(-(2**40), 2**40),
            st.integers(2**62, 2**63 - 1),  # too wide to pack: the plain sort answers
        ),
        st.sampled_from(["x", "y", None]),
    ),
    max_size=60,
)


@given(rows=packed_rows, keys=st.sampled_from([["name"], ["name", "kind"], ["kind", "name"]]))
def test_the_packed_sort_gives_the_plain_sorts_figures(
    rows: list[tuple[str | None, str, int | None, str | None]], keys: list[str]
) -> None:
    """Categorical keys' medians from one sorted Int64 (their codes, usage and outcome packed
    together) are the medians of the plain sort, cells included, on any rows: one key or two,
    null keys, negative and huge values, groups with no known usage, none accepted."""
    frame = pl.DataFrame(
        rows,
        schema={
            "name": pl.Categorical,
            "outcome": OUTCOME_DTYPE,
            "tokens": pl.Int64,
            "kind": pl.Categorical,
        },
        orient="row",
    ).lazy()
    cells = frame.group_by([*keys, "outcome"]).agg(pl.len())
    fast_cells, fast = medians_in_memory(frame, keys, cells)
    plain_cells, plain = medians_in_memory(frame, keys, cells, packed=False)
    by_text = [pl.col(name).cast(pl.String) for name in keys]
    order = [*by_text, pl.col("outcome")]
    assert_frame_equal(fast_cells.sort(order), plain_cells.sort(order))
    assert_frame_equal(fast.sort(by_text, nulls_last=True), plain.sort(by_text, nulls_last=True))


def test_the_packed_sort_is_taken_for_categorical_keys() -> None:
    """The fast path is the one a loaded ledger's workflow (and workflow, model) takes (a
    differential test of two calls to the same path could not fail)."""
    from tui_ledger.accounting.medians import _Packing

    frame = pl.DataFrame(
        {"name": ["b", "a", "b"], "outcome": ["passed", "failed", "passed"], "tokens": [3, 1, 2]},
        schema={"name": pl.Categorical, "outcome": OUTCOME_DTYPE, "tokens": pl.Int64},
    ).lazy()
    packing = _Packing.of(frame, ["name"])
    assert packing is not None and packing.low == 1 and packing.scale == 2**3
    assert _Packing.of(frame.with_columns(pl.col("name").cast(pl.String)), ["name"]) is None
    wide = frame.with_columns(pl.Series("tokens", [0, 2**62, 1]))
    assert _Packing.of(wide, ["name"]) is None
    # Two Categorical keys pack as one code (workflow and model); a text one does not.
    two = frame.with_columns(pl.Series("kind", ["x", None, "y"], dtype=pl.Categorical))
    assert _Packing.of(two, ["name", "kind"]) is not None
    text = two.with_columns(pl.col("kind").cast(pl.String))
    assert _Packing.of(text, ["name", "kind"]) is None


@pytest.mark.parametrize("high", [1_000, 2**20, 2**31, 2**40])
def test_the_packing_is_32_bits_where_it_fits_and_64_past_it(high: int) -> None:
    """Usage 0..high packs into bits(null code) + bits(high) + 1: a UInt32 where that is 32
    or fewer, an Int64 past it (Categorical codes are the process's, so the null code is read,
    not assumed). Either way the medians are the plain sort's, values at both ends included."""
    from tui_ledger.accounting.medians import _Packing

    frame = pl.DataFrame(
        {
            "name": ["a", "a", "a", "b", "b", None],
            "outcome": ["passed", "failed", "passed", "passed", "failed", "passed"],
            "tokens": [0, high, high, high - 1, 0, high],
        },
        schema={"name": pl.Categorical, "outcome": OUTCOME_DTYPE, "tokens": pl.Int64},
    ).lazy()
    packing = _Packing.of(frame, ["name"])
    assert packing is not None
    width = packing.null_codes[0].bit_length() + high.bit_length() + 1
    assert packing.dtype == (pl.UInt32 if width <= 32 else pl.Int64)
    if high == 1_000:
        assert packing.dtype == pl.UInt32  # fewer than 2M categories in the process
    if high >= 2**31:
        assert packing.dtype == pl.Int64
    cells = frame.group_by(["name", "outcome"]).agg(pl.len())
    _, fast = medians_in_memory(frame, ["name"], cells)
    _, plain = medians_in_memory(frame, ["name"], cells, packed=False)
    by_name = pl.col("name").cast(pl.String)
    assert_frame_equal(fast.sort(by_name, nulls_last=True), plain.sort(by_name, nulls_last=True))


selection_rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "ü", "z", None]),
        st.sampled_from(OUTCOMES),
        st.one_of(st.none(), st.integers(0, 40), st.integers(0, 3_000), st.integers(0, 2**33)),
    ),
    max_size=80,
)


@pytest.mark.parametrize("budget", [2**6, 2**9, 2**20])
@given(rows=selection_rows)
def test_the_counting_selection_gives_the_sorts_medians(
    budget: int, rows: list[tuple[str | None, str, int | None]]
) -> None:
    """The medians found by counting buckets (`_Selection`) are the sorted values' middles,
    whether a bucket holds one value or dozens (a budget of 2**6 buckets for every group),
    values repeated, groups with none accepted, 32-bit and 64-bit packings."""
    from tui_ledger.accounting import medians

    frame = pl.DataFrame(
        rows,
        schema={"name": pl.Categorical, "outcome": OUTCOME_DTYPE, "tokens": pl.Int64},
        orient="row",
    ).lazy()
    cells = frame.group_by(["name", "outcome"]).agg(pl.len())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(medians, "SELECTION_BUCKETS", budget)
        patch.setattr(medians, "MIN_BUCKET_BITS", 1)
        _, counted = medians_in_memory(frame, ["name"], cells)
    _, plain = medians_in_memory(frame, ["name"], cells, packed=False)
    by_text = [pl.col("name").cast(pl.String)]
    assert_frame_equal(counted.sort(by_text, nulls_last=True), plain.sort(by_text, nulls_last=True))


def test_a_ledgers_medians_are_found_by_counting_not_sorting() -> None:
    """A loaded ledger's grouping (a few workflows, usage up to millions) takes the counting
    selection; so many groups that each would get under 2**4 buckets take the sort."""
    from tui_ledger.accounting.medians import _Packing

    frame = pl.DataFrame(
        {
            "name": ["b", "a", "b"],
            "outcome": ["passed", "failed", "passed"],
            "tokens": [3, 1, 3_000_000],
        },
        schema={"name": pl.Categorical, "outcome": OUTCOME_DTYPE, "tokens": pl.Int64},
    ).lazy()
    packing = _Packing.of(frame, ["name"])
    assert packing is not None and packing.selection() is not None
    narrow = frame.with_columns(pl.Series("tokens", [3, 1, 2]))
    packing = _Packing.of(narrow, ["name"])
    assert packing is not None and packing.selection() is None
