"""The in-memory medians, read by position in one sort, are polars' own median per group.

`medians.medians_in_memory` sorts the known usage by group and value and takes the middle
positions of each run; this checks it against `median()` in a `group_by`, the definition it
replaced, on frames with null and several keys, Categorical keys, empty groups in the drop
view and values up to 2**50 (past 2**52 both paths take the exact median).
"""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from tui_ledger.medians import medians_in_memory
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
