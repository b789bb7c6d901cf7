"""Each group's two middle values of known usage, exactly, from a histogram of it.

Sorting a group's usage on the cluster costs a row what a hash aggregation does many times
over (`array_sort(collect_list(...))`: 2.2-3.7 s at 1M rows on local[2], 23-28 s at 10M,
and one array of the whole group held in one row). A histogram is one hash aggregation:
per group and *bucket* of values (any function of the value that never decreases as the
value grows), the count of known usage and its least and greatest value, for both views
(`keep`: every attempt; `drop`: the accepted ones). The running counts say which bucket
holds each middle rank and the rank within it (`offset`); the value is the bucket's least
when the offset is its first, its greatest when the last, either when the two are equal.
Otherwise one more question asks the rows of those buckets alone, counted by value
(`values_in`), and the running counts within them give the value. Nothing is estimated:
the figures are those of a sort.

No pyspark here: `spark.aggregate` asks the questions; the tests run this on polars.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from tui_ledger.spark.errors import SparkInputChanged

__all__ = ["BUCKET", "HISTOGRAM_COLUMNS", "VALUE", "VIEWS", "middle_values"]

VIEWS: tuple[str, ...] = ("keep", "drop")
BUCKET = "__bucket"
VALUE = "__value"
HISTOGRAM_COLUMNS: tuple[str, ...] = tuple(
    f"{view}_{name}" for view in VIEWS for name in ("n", "lo", "hi")
)
"""A histogram's columns besides the keys and `BUCKET`: each view's count of known usage in
the bucket (`{view}_n`) and its least and greatest value (`{view}_lo`, `{view}_hi`)."""

ENDS = ("low", "high")


def middle_values(
    histogram: pl.DataFrame,
    keys: Sequence[str],
    values_in: Callable[[pl.DataFrame], pl.DataFrame],
) -> pl.DataFrame:
    """One row per group of `histogram` (the keys, `BUCKET`, `HISTOGRAM_COLUMNS`) with known
    usage: the keys and `{view}__median_{low,high}`, the values at ranks (n - 1) // 2 and
    n // 2 of the view's known usage in order (null where the view has none).

    `values_in(buckets)` is asked only when a middle lies inside a bucket: `buckets` holds
    the keys, `BUCKET` and the bucket's range of values (`__from`, `__to`: every known
    usage of the group between them is in that bucket); it returns the keys, `BUCKET`,
    `VALUE` and each view's count of that value (`keep_n`, `drop_n`). Counts that do not
    add up to the histogram's are `SparkInputChanged` (the input changed between the two
    questions), never a wrong or missing median."""
    keys = list(keys)
    targets = _targets(histogram, keys)
    at_an_end = (
        pl.when(pl.col("__offset") == 1)
        .then(pl.col("__lo"))
        .when(pl.col("__offset") == pl.col("__count"))
        .then(pl.col("__hi"))
        .when(pl.col("__lo") == pl.col("__hi"))
        .then(pl.col("__lo"))
    )
    targets = targets.with_columns(at_an_end.alias(VALUE))
    inside = targets.filter(pl.col(VALUE).is_null()).drop(VALUE)
    if inside.height:
        buckets = inside.select(*keys, BUCKET, "__from", "__to").unique()
        found = _within(values_in(buckets), inside, keys)
        targets = pl.concat(
            [targets.filter(pl.col(VALUE).is_not_null()).select(found.columns), found]
        )
    wide = histogram.filter(pl.col("keep_n") > 0).select(keys).unique()
    for view in VIEWS:
        for end in ENDS:
            picked = targets.filter((pl.col("__view") == view) & (pl.col("__end") == end))
            wide = wide.join(
                picked.select(*keys, pl.col(VALUE).alias(f"{view}__median_{end}")),
                on=keys,
                how="left",
                nulls_equal=True,
            )
    return wide


def _targets(histogram: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per group, view and end: the bucket holding the middle rank, the rank within it
    (`__offset`, from 1), its count and least and greatest value in the view, and its
    range over every known usage (`__from`, `__to`)."""
    ordered = histogram.sort(BUCKET)  # stable: each group's buckets in order
    found: list[pl.DataFrame] = []
    for view in VIEWS:
        n = pl.col(f"{view}_n")
        counted = ordered.filter(n > 0).with_columns(
            n.cum_sum().over(keys).alias("__through"), n.sum().over(keys).alias("__total")
        )
        before = pl.col("__through") - n
        for end, rank in (
            ("low", (pl.col("__total") - 1) // 2 + 1),
            ("high", pl.col("__total") // 2 + 1),
        ):
            found.append(
                counted.filter((before < rank) & (pl.col("__through") >= rank)).select(
                    *keys,
                    pl.lit(view).alias("__view"),
                    pl.lit(end).alias("__end"),
                    BUCKET,
                    (rank - before).alias("__offset"),
                    n.alias("__count"),
                    pl.col(f"{view}_lo").alias("__lo"),
                    pl.col(f"{view}_hi").alias("__hi"),
                    pl.col("keep_lo").alias("__from"),
                    pl.col("keep_hi").alias("__to"),
                )
            )
    return pl.concat(found)


def _within(values: pl.DataFrame, inside: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The value at each target's offset in its bucket, from the bucket's counts by value:
    the least value whose running count (in value order) reaches the offset."""
    found: list[pl.DataFrame] = []
    for view in VIEWS:
        wanted = inside.filter(pl.col("__view") == view)
        if not wanted.height:
            continue
        n = pl.col(f"{view}_n")
        counted = (
            values.filter(n > 0)
            .sort(VALUE)
            .with_columns(n.cum_sum().over([*keys, BUCKET]).alias("__through"))
        )
        seen = counted.group_by([*keys, BUCKET]).agg(n.sum().alias("__seen"))
        checked = wanted.join(seen, on=[*keys, BUCKET], how="left", nulls_equal=True)
        adds_up = (pl.col("__seen") == pl.col("__count")).fill_null(False).all()
        if not checked.select(adds_up).item():
            raise SparkInputChanged(
                "the input changed while its medians were read (a bucket's values no longer "
                "add up to its count in the same figures' first query); run it again once "
                "nothing writes to it."
            )
        found.append(
            wanted.join(counted, on=[*keys, BUCKET], how="inner", nulls_equal=True)
            .filter(pl.col("__through") >= pl.col("__offset"))
            .group_by([*keys, "__view", "__end"])
            .agg(pl.col(VALUE).min())
        )
    return pl.concat(found).select(*keys, "__view", "__end", VALUE)
