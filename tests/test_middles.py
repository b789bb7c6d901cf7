"""The middle values the Spark path reads from a histogram (`spark.middles`) are those of a
sort, whatever the buckets: checked against plain Python on frames with null and several
keys, heavy ties, empty drop views and values past 2**53, with buckets from one value wide
to all values in one, and the few buckets counted by value asked only when a middle lies
inside one. (The histogram and the counts are computed here with polars; tests/spark run
the engine's own.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui_ledger.spark.errors import SparkInputChanged
from tui_ledger.spark.middles import BUCKET, VALUE, middle_values

KEYS = ["g", "h"]

rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", None]),
        st.sampled_from([1, None]),
        st.booleans(),
        st.one_of(st.none(), st.integers(0, 9), st.integers(0, 2**60)),
    ),
    max_size=60,
)

BUCKETS: dict[str, Callable[[pl.Expr], pl.Expr]] = {
    "one value": lambda v: v,
    "three values": lambda v: v // 3,
    "all in one": lambda v: v * 0,
    "32 a doubling": lambda v: ((v.cast(pl.Float64) + 1).log(2) * 32).floor().cast(pl.Int64),
}


def _frame(drawn: list[tuple[Any, ...]]) -> pl.DataFrame:
    return pl.DataFrame(
        drawn,
        schema={"g": pl.String, "h": pl.Int64, "accepted": pl.Boolean, "tokens": pl.Int64},
        orient="row",
    )


def _histogram(frame: pl.DataFrame, bucket: Callable[[pl.Expr], pl.Expr]) -> pl.DataFrame:
    tokens, accepted = pl.col("tokens"), pl.col("accepted")
    # As the engine's: missing usage in a bucket of its own (null), counted 0.
    return frame.group_by(*KEYS, bucket(tokens).alias(BUCKET)).agg(
        tokens.count().cast(pl.Int64).alias("keep_n"),
        tokens.min().alias("keep_lo"),
        tokens.max().alias("keep_hi"),
        tokens.filter(accepted).count().cast(pl.Int64).alias("drop_n"),
        tokens.filter(accepted).min().alias("drop_lo"),
        tokens.filter(accepted).max().alias("drop_hi"),
    )


def _values_in(frame: pl.DataFrame, asked: list[pl.DataFrame]) -> Callable[..., pl.DataFrame]:
    def values_in(buckets: pl.DataFrame) -> pl.DataFrame:
        asked.append(buckets)
        tokens = pl.col("tokens")
        return (
            frame.filter(tokens.is_not_null())
            .join(buckets, on=KEYS, how="inner", nulls_equal=True)
            .filter(tokens.is_between(pl.col("__from"), pl.col("__to")))
            .group_by(*KEYS, BUCKET, tokens.alias(VALUE))
            .agg(
                pl.len().cast(pl.Int64).alias("keep_n"),
                pl.col("accepted").sum().cast(pl.Int64).alias("drop_n"),
            )
        )

    return values_in


def _oracle(drawn: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Per group with known usage: each view's values at ranks (n-1)//2 and n//2, sorted."""
    groups: dict[tuple[Any, ...], list[tuple[bool, int]]] = {}
    for g, h, accepted, tokens in drawn:
        if tokens is not None:
            groups.setdefault((g, h), []).append((accepted, tokens))
    middles = {}
    for key, known in groups.items():
        found: list[Any] = []
        for values in (
            sorted(v for _, v in known),
            sorted(v for accepted, v in known if accepted),
        ):
            n = len(values)
            found += [values[(n - 1) // 2], values[n // 2]] if n else [None, None]
        middles[key] = tuple(found)
    return middles


@given(rows, st.sampled_from(sorted(BUCKETS)))
def test_the_middle_values_are_those_of_a_sort(drawn: list[tuple[Any, ...]], name: str) -> None:
    frame = _frame(drawn)
    asked: list[pl.DataFrame] = []
    found = middle_values(_histogram(frame, BUCKETS[name]), KEYS, _values_in(frame, asked))
    names = [f"{view}__median_{end}" for view in ("keep", "drop") for end in ("low", "high")]
    got = {(row[0], row[1]): tuple(row[2:]) for row in found.select(*KEYS, *names).rows()}
    assert got == _oracle(drawn)
    if name == "one value":
        assert not asked  # a bucket of one value holds its middle: nothing more to ask
    assert len(asked) <= 1


def test_a_middle_inside_a_bucket_is_asked_for_once_with_its_range() -> None:
    """Five values in one bucket: the middle (the third) is neither end, so its bucket is
    counted by value; the drop view's two middles (second and third of four accepted)
    ask in the same question."""
    drawn = [("a", 1, True, 10), ("a", 1, True, 11), ("a", 1, True, 12)]
    drawn += [("a", 1, True, 13), ("a", 1, False, 14)]
    frame = _frame(drawn)
    asked: list[pl.DataFrame] = []
    found = middle_values(_histogram(frame, BUCKETS["all in one"]), KEYS, _values_in(frame, asked))
    assert found.row(0, named=True) == {
        "g": "a",
        "h": 1,
        "keep__median_low": 12,
        "keep__median_high": 12,
        "drop__median_low": 11,
        "drop__median_high": 12,
    }
    assert len(asked) == 1
    assert asked[0].select("__from", "__to").rows() == [(10, 14)]


def test_a_bucket_whose_values_no_longer_add_up_is_an_error_not_a_median() -> None:
    """The second question reads the input again: a row added or gone in between (a file
    written into a glob, a table written to) is said, not turned into a wrong median."""
    drawn = [("a", 1, True, value) for value in (10, 11, 12, 13, 14)]
    frame = _frame(drawn)
    histogram = _histogram(frame, BUCKETS["all in one"])
    later = _frame([*drawn, ("a", 1, True, 12)])  # one more row by the second question
    with pytest.raises(SparkInputChanged, match="changed while its medians were read"):
        middle_values(histogram, KEYS, _values_in(later, []))
    gone = _frame(drawn[1:])
    with pytest.raises(SparkInputChanged):
        middle_values(histogram, KEYS, _values_in(gone, []))
