"""Per-group aggregates computed by Spark: everything SPEC.md section 3 is derived from.

Only per-group rows travel back, as a small polars frame. The frame is the *aggregate frame*
of docs/SPARK.md: for each group (the `by` keys) and each view (`keep`: every attempt;
`drop`: only the accepted ones), columns named `{view}__{aggregate}`:

=====================  ==============  ===================================================
aggregate              polars dtype    definition (over the view's attempts of the group)
=====================  ==============  ===================================================
attempts               Int64           rows
accepted               Int64           rows whose outcome is `passed`
passed ... ungraded    Int64           rows of each outcome (`schema.OUTCOMES`)
missing_usage          Int64           rows whose usage is missing
known_usage            Int64           rows whose usage is known (0 included)
suspect_zeros          Int64           rows reporting exactly 0 tokens (a suspect zero)
sum_known_tokens       Int128          exact sum of known usage (0 when none is known)
median_tokens...       Float64 or      median of known usage (mean of the two middle
  _per_attempt         Decimal(38, 1)  values): Float64 while every median is below 2**52
                                       (exact there), else Decimal(38, 1) for every group
var_tokens             Float64         sample variance of usage with missing read as 0
                                       (null under two attempts), for the delta method
known_cost             Int64           (with a cost column) rows with a cost
suspect_zero_cost      Int64           rows costing $0 whose usage is missing or 0
sum_known_cost         Float64         sum of known cost (0.0 when none)
var_cost               Float64         sample variance of cost with missing read as 0
=====================  ==============  ===================================================

Rows are sorted by the keys, nulls last, as `ledger.compare` sorts its groups. Counts are
Int64, never UInt32: a group on a cluster can pass 4,294,967,295 attempts.

Medians are exact at any magnitude, without sorting a group on the cluster: a histogram of
each group's known usage (`median_plan`, one hash aggregation) locates the two middle ranks,
and the few buckets a middle lies inside are counted by value (`middles.middle_values`);
the values come back as whole numbers and `medians_from_middles` applies ledger.py's rule (a
float median where it is exact, an exact one where it might not be). Sorting each group
(`array_sort(collect_list(...))`, used before) cost 2.2-3.7 s at 1M rows and 23-28 s at
10M on local[2]; Spark's `percentile` goes through a double.

Each question is a `batch.Part` (a plan whose columns are known here), so a caller asks the
cells, the usage histogram, the check cells, the duplicate figures and the bootstrap's rows in
one query (`commands.spark_figures`); `aggregate_frame` is one query on its own. The check cells
and the duplicate figures are `check_figures.py`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce
from typing import Any

import polars as pl
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from tui_ledger.accounting import ledger
from tui_ledger.accounting.key_order import sorted_by_text
from tui_ledger.schema import (
    ACCEPTED,
    OUTCOME_DTYPE,
    OUTCOMES,
)
from tui_ledger.spark.batch import Part, arrow_table, run_parts
from tui_ledger.spark.engine import SparkLedger
from tui_ledger.spark.fine_cells import COUNTED, SPEND, TASK, TOKENS, cell_names
from tui_ledger.spark.inputs import column
from tui_ledger.spark.middles import BUCKET, HISTOGRAM_COLUMNS, VALUE, middle_values

__all__ = [
    "BUCKETS_PER_DOUBLING",
    "COUNT_AGGREGATES",
    "FINE_BUCKETS_PER_DOUBLING",
    "MEDIAN_EXACT_DTYPE",
    "aggregate_frame",
    "aggregate_names",
    "aggregates_from",
    "bootstrap_from",
    "bootstrap_plan",
    "bootstrap_rows",
    "cell_aggregates",
    "cell_plan",
    "cells_and_pairs_plan",
    "median_plan",
    "medians_from_middles",
    "middles_of",
    "pair_columns",
]

VIEWS: tuple[str, ...] = ("keep", "drop")
COUNT_AGGREGATES: tuple[str, ...] = (
    "attempts",
    "accepted",
    *OUTCOMES,
    "missing_usage",
    "known_usage",
    "suspect_zeros",
)
TOKEN_AGGREGATES: tuple[str, ...] = (
    "sum_known_tokens",
    "median_tokens_per_attempt",
    "var_tokens",
)
COST_AGGREGATES: tuple[str, ...] = ("known_cost", "suspect_zero_cost", "sum_known_cost", "var_cost")
# Below 2**52 a float holds every integer and every half exactly (as in ledger.py).
HALVES_EXACT = 2**52
BUCKETS_PER_DOUBLING = 32
"""The histogram's resolution (`median_plan`): a bucket spans about 2% of its values, so at
1M rows of 8 groups the histogram is 4,400 rows, and a middle inside a bucket asks for a
few thousand values (0.5-1.0 s)."""
FINE_BUCKETS_PER_DOUBLING = 1024
"""For an input known to be small (`SparkInput.small`): its histogram holds about a row an
attempt, and on the demo no middle lies inside a bucket in any grouping (with 32 a
doubling, the workflows' did: one more round trip a keystroke)."""
MEDIAN_EXACT_DTYPE = pl.Decimal(38, 1)
COST_COLUMN = "cost"


def aggregate_names(with_cost: bool) -> list[str]:
    """The aggregate columns of one view, in order (without the `{view}__` prefix)."""
    return [*COUNT_AGGREGATES, *TOKEN_AGGREGATES, *(COST_AGGREGATES if with_cost else ())]


def cell_aggregates(with_cost: bool) -> list[Column]:
    """Per (group, outcome) cell, the counts and sums both views are made of: the columns of
    ledger.py's `_cell_aggregations`, computed by Spark (`zeros` and `zero_cost` are what
    "usage not recorded" and the lower bounds are made of).

    `mean_*` and `m2_*` (sum of squared deviations) are of spend with missing read as 0, so the
    cells combine into a group's variance as one pass over its rows would (Chan et al.), by
    ledger.py's own `_combined_variance`. `sum_tokens` is a LONG `try_sum` (null where it
    would overflow, then recomputed as DECIMAL(38, 0): exact under any ANSI setting).
    """
    tokens = F.col("tokens")
    spend = F.coalesce(tokens, F.lit(0)).cast("double")
    several = F.count(F.lit(1)) > 1
    aggregates = [
        F.count(F.lit(1)).alias("n"),
        F.count(tokens).alias("known"),
        F.count_if(tokens == 0).alias("zeros"),
        F.try_sum(tokens).alias("sum_tokens"),
        F.avg(spend).alias("mean_tokens"),
        F.when(several, F.var_samp(spend) * (F.count(F.lit(1)) - 1))
        .otherwise(F.lit(0.0))
        .alias("m2_tokens"),
    ]
    if with_cost:
        cost = F.col(COST_COLUMN).try_cast("double")
        spent = F.coalesce(cost, F.lit(0.0))
        aggregates += [
            F.count(cost).alias("known_cost"),
            # ledger.py's suspect zero cost: $0 on an attempt whose usage is missing or 0.
            F.count_if((cost == 0) & (tokens.isNull() | (tokens == 0))).alias("zero_cost"),
            F.coalesce(F.sum(cost), F.lit(0.0)).alias("sum_cost"),
            F.avg(spent).alias("mean_cost"),
            F.when(several, F.var_samp(spent) * (F.count(F.lit(1)) - 1))
            .otherwise(F.lit(0.0))
            .alias("m2_cost"),
        ]
    return aggregates


def cell_plan(attempts: DataFrame, keys: Sequence[str], with_cost: bool) -> Part:
    """The cells (`cell_aggregates`): one row per (group, outcome)."""
    group = [column(k) for k in keys]
    frame = attempts.groupBy(*group, F.col("outcome")).agg(*cell_aggregates(with_cost))
    return Part(frame, [*keys, "outcome", *cell_names(with_cost)])


def pair_columns(names: Sequence[str], task_as: str | None = None) -> tuple[Column, Column, Column]:
    """The pairs' task (text; null where missing or without a task column), tokens (missing
    read as 0, as a double) and whether an attempt was accepted, as columns of attempts whose
    columns are `names` (`task_as`: the column to read the task from instead, text)."""
    if task_as is not None:
        task = column(task_as)
    elif "task" in names:
        task = column("task").cast("string")
    else:
        task = F.lit(None).cast("string")
    tokens = F.coalesce(column("tokens"), F.lit(0)).cast("double")
    accepted = F.coalesce(column("outcome") == F.lit(ACCEPTED), F.lit(False))
    return task, tokens, accepted


def cells_and_pairs_plan(
    attempts: DataFrame,
    names: Sequence[str],
    keys: Sequence[str],
    with_cost: bool,
    counts: Mapping[str, Column] | None = None,
    raw: Mapping[str, str] | None = None,
    *,
    cells: bool = True,
) -> Part:
    """One row per (group, task, outcome, tokens where the task is missing): the cell
    aggregates (`aggregate.cell_aggregates`), the sum of tokens with missing read as 0, and
    `counts` (name -> a count over the rows; `split_cells_and_pairs` adds them up): the
    validation pass's, so that its own scan of every row is not needed. `raw`: keys (and
    `task`) grouped by another column (`cells.RAW`: the text as read, trimmed here after:
    `fine_cells.trimmed`). `cells=False`: the pairs' sums alone (`fine_cells.pair_tasks`
    reads `n`, the tokens and the outcome), for the app's pairs query."""
    raw = dict(raw or {})
    task, tokens, _ = pair_columns(names, raw.get("task"))
    also = dict(counts or {})
    frame = attempts.groupBy(
        *_grouped(keys, raw),
        task.alias(TASK),
        F.col("outcome"),
        F.when(task.isNull(), tokens).alias(TOKENS),
    ).agg(
        *(cell_aggregates(with_cost) if cells else [F.count(F.lit(1)).alias("n")]),
        F.sum(tokens).alias(SPEND),
        *[count.alias(COUNTED + name) for name, count in also.items()],
    )
    names = cell_names(with_cost) if cells else ["n"]
    return Part(
        frame,
        [*keys, TASK, "outcome", TOKENS, *names, SPEND, *[COUNTED + name for name in also]],
    )


def _grouped(keys: Sequence[str], raw: Mapping[str, str]) -> list[Column]:
    """The keys as grouping columns, each read from its `raw` column where it has one."""
    return [column(raw[k]).alias(k) if k in raw else column(k) for k in keys]


def median_plan(
    attempts: DataFrame,
    keys: Sequence[str],
    per_doubling: int = BUCKETS_PER_DOUBLING,
    raw: Mapping[str, str] | None = None,
) -> Part:
    """Both views' histogram of known usage per group (`middles`): per group and bucket,
    floor(log2(usage + 1) * `per_doubling`) (never less for more usage), the count of known
    usage and its least and greatest value, over every attempt (`keep_*`) and the accepted
    ones (`drop_*`). `middles_of` makes the middle values of it. `raw`: as
    `cells_and_pairs_plan`'s (`fine_cells.merged_histogram` then adds up the buckets of
    keys alike once trimmed)."""
    tokens = F.col("tokens")
    accepted = F.col("outcome") == ACCEPTED
    group = _grouped(keys, dict(raw or {}))
    # Missing usage falls in a bucket of its own (null), counted 0: no `where` on `tokens`
    # (on a CSV's plan it would be pasted through every parsing step, docs/SPARK.md).
    bucket = F.floor(F.log2(tokens.cast("double") + F.lit(1.0)) * F.lit(per_doubling))
    accepted_usage = F.when(accepted, tokens)
    frame = attempts.groupBy(*group, bucket.cast("long").alias(BUCKET)).agg(
        F.count(tokens).alias("keep_n"),
        F.min(tokens).alias("keep_lo"),
        F.max(tokens).alias("keep_hi"),
        F.count(accepted_usage).alias("drop_n"),
        F.min(accepted_usage).alias("drop_lo"),
        F.max(accepted_usage).alias("drop_hi"),
    )
    return Part(frame, [*keys, BUCKET, *HISTOGRAM_COLUMNS])


def middles_of(histogram: pl.DataFrame, attempts: DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Each group's two middle values of known usage in both views, exactly, from
    `median_plan`'s histogram: `middles.middle_values`, which asks (one more query) the
    counts by value of the buckets a middle lies inside, when one does."""
    keys = list(keys)
    tokens = F.col("tokens")
    accepted = F.col("outcome") == ACCEPTED

    def values_in(buckets: pl.DataFrame) -> pl.DataFrame:
        if buckets.height <= MOST_NAMED_BUCKETS:
            return _values_named(attempts, keys, buckets)
        wanted = attempts.sparkSession.createDataFrame(buckets.to_arrow()).select(
            *[column(k).alias(f"__wanted_{i}") for i, k in enumerate(keys)],
            F.col(BUCKET),
            F.col("__from"),
            F.col("__to"),
        )
        condition = [column(k).eqNullSafe(F.col(f"__wanted_{i}")) for i, k in enumerate(keys)]
        condition.append(tokens.between(F.col("__from"), F.col("__to")))
        counted = (
            attempts.where(_within_ranges(tokens, buckets))
            .join(F.broadcast(wanted), on=condition, how="inner")
            .groupBy(*[column(k) for k in keys], F.col(BUCKET), tokens.alias(VALUE))
            .agg(F.count(F.lit(1)).alias("keep_n"), F.count_if(accepted).alias("drop_n"))
        )
        return to_polars(counted).select(*keys, BUCKET, VALUE, "keep_n", "drop_n")

    return middle_values(histogram, keys, values_in)


# Up to this many buckets, `middles_of`'s second question names them in its condition
# (`_values_named`); past it, they travel as a table to join (`createDataFrame`).
MOST_NAMED_BUCKETS = 64


def _values_named(attempts: DataFrame, keys: list[str], buckets: pl.DataFrame) -> pl.DataFrame:
    """`middles_of`'s second question for a few buckets: the usage in each (group, range
    of values) named in the condition, counted by group and value, and each value put in
    its bucket here (a group's buckets' ranges do not overlap). One round trip: the
    buckets sent as a table cost a settings request (`createDataFrame`) and a broadcast
    join; at 1M Parquet rows the question went from 3 requests to 1."""
    tokens = F.col("tokens")
    accepted = F.col("outcome") == ACCEPTED

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
    return (
        found.join(buckets, on=keys, how="inner", nulls_equal=True)
        .filter(pl.col(VALUE).is_between(pl.col("__from"), pl.col("__to")))
        .select(*keys, BUCKET, VALUE, "keep_n", "drop_n")
    )


def _within_ranges(tokens: Column, buckets: pl.DataFrame, most: int = 64) -> Column:
    """Usage in one of the buckets' ranges of values (all of them between the least and the
    greatest past `most` ranges): a condition on the column as read, which Spark applies
    before deriving the other columns, so only those rows pay for their derivation (at 1M
    rows the question took 1.0-2.0 s without it)."""
    ranges = buckets.select("__from", "__to").unique().sort("__from").rows()
    if len(ranges) > most:
        ranges = [(ranges[0][0], max(to for _, to in ranges))]
    return reduce(
        lambda either, other: either | other,
        [tokens.between(F.lit(low), F.lit(high)) for low, high in ranges],
    )


def medians_from_middles(frame: pl.DataFrame) -> pl.DataFrame:
    """`{view}__median_tokens_per_attempt` from each view's two middle values, by the rule of
    ledger.py: Float64 (exact) while every median is below 2**52, else Decimal(38, 1) for all.
    """
    sums = {
        view: pl.col(f"{view}__median_low").cast(pl.Int128)
        + pl.col(f"{view}__median_high").cast(pl.Int128)
        for view in VIEWS
    }
    past = frame.select(
        pl.any_horizontal([(value.abs() >= 2 * HALVES_EXACT).any() for value in sums.values()])
    ).item()
    return frame.with_columns(
        (
            (value.cast(MEDIAN_EXACT_DTYPE) / 2).cast(MEDIAN_EXACT_DTYPE)
            if past
            else value.cast(pl.Float64) / 2
        ).alias(f"{view}__median_tokens_per_attempt")
        for view, value in sums.items()
    )


def to_polars(frame: DataFrame) -> pl.DataFrame:
    """`frame`'s rows, asked in one round trip (`batch.arrow_table`: no schema request)."""
    result = pl.from_arrow(arrow_table(frame))
    assert isinstance(result, pl.DataFrame)
    return result


def aggregate_frame(
    attempts: DataFrame,
    by: Sequence[str],
    *,
    with_cost: bool | None = None,
    columns: Sequence[str] | None = None,
) -> pl.DataFrame:
    """The aggregate frame (module docstring) of validated, possibly filtered `attempts`
    (whose columns are `columns`; asked of the server when not given), in one query: the
    cells and the middle values (`cell_plan`, `median_plan`). `with_cost` defaults to
    whether the attempts have a `cost` column."""
    keys = list(by)
    names = list(columns) if columns is not None else attempts.columns
    if not keys:
        raise ValueError("group by needs at least one column")
    missing = [key for key in keys if key not in names]
    if missing:
        raise ValueError(f"no column {missing[0]!r} to group by")
    if with_cost is None:
        with_cost = COST_COLUMN in names
    found = run_parts(
        {
            "cells": cell_plan(attempts, keys, with_cost),
            "medians": median_plan(attempts, keys),
        }
    )
    return aggregates_from(found["cells"], found["medians"], attempts, keys, with_cost)


def aggregates_from(
    cells: pl.DataFrame,
    histogram: pl.DataFrame,
    attempts: DataFrame,
    keys: Sequence[str],
    with_cost: bool,
) -> pl.DataFrame:
    """The aggregate frame from the cells and the usage histogram (`median_plan`). Where a
    cell's LONG sum of tokens overflowed, the sums are recomputed as DECIMAL(38, 0), and
    where a middle value lies inside a bucket, its bucket's values are counted (one more
    query each)."""
    keys = list(keys)
    if cells.filter(pl.col("sum_tokens").is_null() & (pl.col("known") > 0)).height:
        group = [column(k) for k in keys]
        exact = to_polars(
            attempts.groupBy(*group, F.col("outcome")).agg(
                F.sum(F.col("tokens").cast("decimal(38,0)")).alias("sum_tokens")
            )
        ).with_columns(pl.col("sum_tokens").cast(pl.Int128))
        cells = cells.drop("sum_tokens").join(
            exact, on=[*keys, "outcome"], how="left", nulls_equal=True
        )
    cells = cells.with_columns(
        pl.col("outcome").cast(OUTCOME_DTYPE),
        pl.col("sum_tokens").cast(pl.Int128).fill_null(0),
    )
    medians = medians_from_middles(middles_of(histogram, attempts, keys))
    frame = _views_from_cells(cells, keys, with_cost).join(
        medians.select(*keys, *[f"{view}__median_tokens_per_attempt" for view in VIEWS]),
        on=keys,
        how="left",
        nulls_equal=True,
    )
    ordered = [f"{view}__{name}" for view in VIEWS for name in aggregate_names(with_cost)]
    return sorted_by_text(frame.select(*keys, *ordered), keys)


def _views_from_cells(cells: pl.DataFrame, keys: list[str], with_cost: bool) -> pl.DataFrame:
    """Both views' aggregates from the cells, by ledger.py's own definitions
    (`view_aggregates`: attempts, accepted, outcomes, missing and known usage, the exact
    sum, the combined variance, cost, the suspect zeros); counts as Int64."""
    frame = ledger.view_aggregates(cells.lazy(), keys, with_cost).collect()
    counts = [f"{view}__{name}" for view in VIEWS for name in COUNT_AGGREGATES]
    if with_cost:
        counts += [
            f"{view}__{name}" for view in VIEWS for name in ("known_cost", "suspect_zero_cost")
        ]
    return frame.with_columns(pl.col(counts).cast(pl.Int64))


# --------------------------------------------------------------------------- intervals

GROUP_ID = "__group_id"  # as ledger.py names a group in its interval frames


def bootstrap_rows(
    spark_ledger: SparkLedger,
    by: Sequence[str],
    groups: pl.DataFrame,
    *,
    where: Column | None = None,
    with_cost: bool = False,
    most: int = 2_000_000,
) -> pl.DataFrame:
    """The attempts a bootstrap resamples, for the chosen groups only: what view_intervals.py's
    `bootstrap_rows` returns, computed by the engine, so that `stats.bootstrap_intervals`
    (the one definition of the bootstrap) runs on them unchanged and gives the same interval.

    `groups` holds `__group_id`, the keys and `__every_row` (false for a group only the drop
    view bootstraps: its accepted attempts suffice). Rows come in the input's own order (file,
    block, position; `SparkLedger.ordered_attempts`), which is the order polars draws from
    for a file, so the draws pick the same attempts. Columns: `__group_id`, one Float64
    numerator per ratio (`tokens_per_accepted_result`, `cost_per_accepted_result`; missing
    read as 0) and `__accepted` (0/1). The rows are at most what the bootstrap's cap allows
    (`IntervalSettings.max_draws` / resamples); more than `most` raises ValueError.
    """
    keys = list(by)
    # Typed or not as `attempts` is: a CSV's probed columns are none of those read here.
    frame, tiebreak = spark_ledger.ordered_attempts(typed=False)
    if where is not None:
        frame = frame.where(where)
    spark = spark_ledger.spark
    wanted = spark.createDataFrame(
        groups.select(pl.col(GROUP_ID).cast(pl.Int64), *keys, pl.col("__every_row")).to_arrow()
    )
    renamed = wanted.select(
        F.col(GROUP_ID),
        F.col("__every_row"),
        *[column(k).alias(f"__wanted_{i}") for i, k in enumerate(keys)],
    )
    condition = [column(k).eqNullSafe(F.col(f"__wanted_{i}")) for i, k in enumerate(keys)]
    accepted = F.col("outcome") == ACCEPTED
    numerators = _bootstrap_numerators(with_cost)
    rows = (
        frame.join(F.broadcast(renamed), on=condition, how="inner")
        .where(F.col("__every_row") | accepted)
        .orderBy(*[column(name).asc_nulls_last() for name in tiebreak])
        .select(
            F.col(GROUP_ID),
            *[
                F.coalesce(value, F.lit(0)).cast("double").alias(name)
                for name, value in numerators.items()
            ],
            accepted.cast("long").alias("__accepted"),
        )
        .limit(most + 1)
    )
    result = to_polars(rows)
    if result.height > most:
        raise ValueError(f"more than {most:,} attempts to bootstrap; choose fewer groups")
    return result.with_columns(pl.col(GROUP_ID).cast(groups.schema[GROUP_ID]))


def bootstrap_plan(
    spark_ledger: SparkLedger,
    attempts: DataFrame,
    by: Sequence[str],
    *,
    where: Column | None,
    with_cost: bool,
    most_per_group: int,
    most_rows: int,
) -> Part:
    """The attempts an `auto` bootstrap may resample, asked with the figures, before it is
    known which groups it picks: every attempt of each group of at most `most_per_group`
    attempts, and the accepted attempts of each group of at most that many accepted ones
    (the cap of draws over resamples: `auto` picks no larger group in either view), in the
    input's order, at most `most_rows` + 1 of them. `bootstrap_from` takes the chosen
    groups' rows from them, as `bootstrap_rows` would fetch them; more than `most_rows`
    means many small groups, and `bootstrap_rows` asks for the chosen ones alone."""
    keys = list(by)
    # Typed or not as `attempts` is: a CSV's probed columns are none of those read here.
    frame, tiebreak = spark_ledger.ordered_attempts(typed=False)
    if where is not None:
        frame = frame.where(where)
    accepted = F.col("outcome") == ACCEPTED
    small = (
        attempts.groupBy(*[column(k).alias(f"__wanted_{i}") for i, k in enumerate(keys)])
        .agg(F.count(F.lit(1)).alias("__n"), F.count_if(accepted).alias("__a"))
        .where((F.col("__n") <= most_per_group) | (F.col("__a") <= most_per_group))
    )
    condition = [column(k).eqNullSafe(F.col(f"__wanted_{i}")) for i, k in enumerate(keys)]
    numerators = _bootstrap_numerators(with_cost)
    rows = (
        frame.join(F.broadcast(small), on=condition, how="inner")
        .where((F.col("__n") <= most_per_group) | accepted)
        .orderBy(*[column(name).asc_nulls_last() for name in tiebreak])
        .select(
            *[column(k) for k in keys],
            *[
                F.coalesce(value, F.lit(0)).cast("double").alias(name)
                for name, value in numerators.items()
            ],
            accepted.cast("long").alias("__accepted"),
        )
        .limit(most_rows + 1)
    )
    return Part(rows, [*keys, *numerators, "__accepted"])


def bootstrap_from(
    rows: pl.DataFrame, by: Sequence[str], groups: pl.DataFrame, most_rows: int
) -> pl.DataFrame | None:
    """The chosen `groups`' rows (as `bootstrap_rows` returns them) out of `bootstrap_plan`'s
    answer; None when it was cut at `most_rows` (then ask `bootstrap_rows`)."""
    if rows.height > most_rows:
        return None
    keys = list(by)
    chosen = groups.select(GROUP_ID, *keys, "__every_row")
    numerators = [name for name in rows.columns if name not in (*keys, "__accepted")]
    return (
        rows.join(chosen, on=keys, how="inner", nulls_equal=True, maintain_order="left")
        .filter(pl.col("__every_row") | (pl.col("__accepted") == 1))
        .select(GROUP_ID, *numerators, pl.col("__accepted").cast(pl.Int64))
    )


def _bootstrap_numerators(with_cost: bool) -> dict[str, Column]:
    numerators = {"tokens_per_accepted_result": F.col("tokens")}
    if with_cost:
        numerators["cost_per_accepted_result"] = F.col(COST_COLUMN).try_cast("double")
    return numerators
