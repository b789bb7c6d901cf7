"""The second question of the medians (`aggregate.middles_of`): the usage of the few
histogram buckets a middle value lies inside, counted by group and value, in one request.

Imports pyspark: only the Spark path imports this module.
"""

from __future__ import annotations

from functools import reduce
from typing import Any

import polars as pl
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from tui_ledger.schema import ACCEPTED
from tui_ledger.spark.batch import Part, run_parts
from tui_ledger.spark.inputs import column
from tui_ledger.spark.middles import BUCKET, VALUE

__all__ = ["MOST_NAMED_BUCKETS", "bucket_of", "in_buckets", "values_named"]


def bucket_of(tokens: Column, per_doubling: int) -> Column:
    """The histogram's bucket of a usage (`median_plan`): floor(log2(usage + 1) *
    `per_doubling`), never less for more usage; null for missing usage."""
    return F.floor(F.log2(tokens.cast("double") + F.lit(1.0)) * F.lit(per_doubling)).cast("long")


# Up to this many buckets, `middles_of`'s second question names them in its condition
# (`values_named`); past it, they travel as a table to join (`createDataFrame`).
MOST_NAMED_BUCKETS = 64


# A set of at least this many numbers is a hash set Spark's compiled code refers to
# (`InSet`, past spark.sql.optimizer.inSetConversionThreshold: 10), not constants in it.
SET_AT_LEAST = 16


def values_named(
    attempts: DataFrame, keys: list[str], buckets: pl.DataFrame, per_doubling: int | None
) -> pl.DataFrame:
    """`middles_of`'s second question for a few buckets: the usage in them counted by
    group and value, and each value put in its group's bucket here (a group's buckets'
    ranges do not overlap). One round trip: the buckets sent as a table cost a settings
    request (`createDataFrame`) and a broadcast join; at 1M Parquet rows the question went
    from 3 requests to 1.

    With `per_doubling`, the condition is the bucket's number in a set (padded with
    numbers no bucket has): the same compiled code whatever the buckets, where ranges of
    values as literals are constants in Spark's generated Java, so each keystroke's
    question was compiled anew (0.3-0.5 s of a 0.8 s question at 1M rows). Without it,
    each (group, range of values) is named in the condition."""
    tokens = F.col("tokens")
    accepted = F.col("outcome") == ACCEPTED
    if per_doubling is not None:
        numbers = sorted(set(buckets.get_column(BUCKET).to_list()))
        numbers += range(-1, -1 - max(0, SET_AT_LEAST - len(numbers)), -1)
        wanted = bucket_of(tokens, per_doubling).isin(numbers)
        counted = (
            attempts.where(wanted)
            .groupBy(*[column(k).alias(k) for k in keys], tokens.alias(VALUE))
            .agg(F.count(F.lit(1)).alias("keep_n"), F.count_if(accepted).alias("drop_n"))
        )
        asked = Part(counted, [*keys, VALUE, "keep_n", "drop_n"])
        return in_buckets(run_parts({"values": asked})["values"], keys, buckets)

    def same(name: str, value: Any) -> Column:
        return column(name).isNull() if value is None else column(name) == F.lit(value)

    named = [
        reduce(
            lambda both, other: both & other,
            [same(k, row[k]) for k in keys],
            tokens.between(F.lit(row["__from"]), F.lit(row["__to"])),
        )
        for row in buckets.iter_rows(named=True)
    ]
    counted = (
        attempts.where(reduce(lambda either, other: either | other, named))
        .groupBy(*[column(k).alias(k) for k in keys], tokens.alias(VALUE))
        .agg(F.count(F.lit(1)).alias("keep_n"), F.count_if(accepted).alias("drop_n"))
    )
    found = run_parts({"values": Part(counted, [*keys, VALUE, "keep_n", "drop_n"])})["values"]
    return in_buckets(found, keys, buckets)


def in_buckets(found: pl.DataFrame, keys: list[str], buckets: pl.DataFrame) -> pl.DataFrame:
    """The counts by group and value of `found` that fall in one of `buckets` (the
    group's range of values), with that bucket."""
    return (
        found.join(buckets, on=keys, how="inner", nulls_equal=True)
        .filter(pl.col(VALUE).is_between(pl.col("__from"), pl.col("__to")))
        .select(*keys, BUCKET, VALUE, "keep_n", "drop_n")
    )
