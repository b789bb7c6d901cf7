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

Medians are exact at any magnitude. Spark's exact `percentile` goes through a double: it is
exact while every value of the group is below 2**52 (each middle value and their half are
then representable, and the weights of an even count are exactly 0.5), so it is used when the
largest known usage is below 2**52. Past that, the two middle values are found by rank instead
(a count of each distinct usage value per group, then a running count in usage order), never
through a double. The same split as ledger.py: a float median where it is exact, an exact one
where it might not be. (An approximate bracket, `percentile_approx` then a count of the values
inside it, was tried: slower here, since both percentile functions cost microseconds a row.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from tui_ledger.accounting import ledger
from tui_ledger.accounting.checks import (
    CELL_COUNTS,
    ID_COLUMNS,
    IDENTIFYING_COLUMNS,
    VERSION_COLUMNS,
)
from tui_ledger.accounting.key_order import sorted_by_text
from tui_ledger.schema import (
    ACCEPTED,
    LINE_COLUMN,
    OUTCOME_DTYPE,
    OUTCOMES,
    SOURCE_COLUMN,
    normalise_name,
)
from tui_ledger.spark.engine import HELPER_PREFIX, ORDER_COLUMNS, SparkLedger
from tui_ledger.spark.inputs import column

__all__ = [
    "COUNT_AGGREGATES",
    "MEDIAN_EXACT_DTYPE",
    "DuplicateFigures",
    "aggregate_frame",
    "aggregate_names",
    "bootstrap_rows",
    "check_cells",
    "duplicate_figures",
    "medians_from_middles",
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
MEDIAN_EXACT_DTYPE = pl.Decimal(38, 1)
COST_COLUMN = "cost"


def aggregate_names(with_cost: bool) -> list[str]:
    """The aggregate columns of one view, in order (without the `{view}__` prefix)."""
    return [*COUNT_AGGREGATES, *TOKEN_AGGREGATES, *(COST_AGGREGATES if with_cost else ())]


def _cell_aggregates(with_cost: bool) -> list[Column]:
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


def _value_counts(attempts: DataFrame, keys: list[str]) -> DataFrame:
    """How many attempts of each group reported each known usage value (`n_keep`), and how
    many of those were accepted (`n_drop`): a plain hash aggregation, combined map-side, so
    only distinct (group, value) pairs are shuffled. Both medians are read from it."""
    tokens = F.col("tokens")
    accepted = F.col("outcome") == ACCEPTED
    # Missing usage lands in a null value with counts of 0, not in a `where` (which Spark
    # would push down through a CSV's count parser); a count of 0 never holds a rank.
    return attempts.groupBy(*[column(k) for k in keys], tokens).agg(
        F.count(tokens).alias("n_keep"), F.count(F.when(accepted, tokens)).alias("n_drop")
    )


def _medians(keys: list[str]) -> list[Column]:
    """Both views' medians by Spark's exact `percentile` (exact below 2**52, see the module
    docstring), and the largest known usage, which says whether they can be trusted."""
    tokens = F.col("tokens")
    accepted = F.col("outcome") == ACCEPTED
    return [
        F.percentile(tokens, F.lit(0.5)).alias("keep__median_tokens_per_attempt"),
        F.percentile(F.when(accepted, tokens), F.lit(0.5)).alias("drop__median_tokens_per_attempt"),
        F.max(tokens).alias("__max_known"),
    ]


def _middles(counts: DataFrame, keys: list[str]) -> DataFrame:
    """Both views' two middle values of known usage per group, exactly, by rank, from the
    value counts (`_value_counts`): a running count in usage order within each group; the
    value whose running count first passes a rank is the value at that rank.
    """
    tokens = F.col("tokens")
    group = [column(k) for k in keys]
    running = (
        Window.partitionBy(*group)
        .orderBy("tokens")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    whole = Window.partitionBy(*group)
    ranked = counts.select(
        *group,
        "tokens",
        "n_keep",
        "n_drop",
        *[F.sum(f"n_{view}").over(running).alias(f"c_{view}") for view in VIEWS],
        *[F.sum(f"n_{view}").over(whole).alias(f"t_{view}") for view in VIEWS],
    )

    def at_rank(view: str, rank: Column) -> Column:
        n, running_count = F.col(f"n_{view}"), F.col(f"c_{view}")
        holds = (n > 0) & (running_count - n <= rank) & (rank < running_count)
        return F.max(F.when(holds, tokens))

    middles = []
    for view in VIEWS:
        total = F.col(f"t_{view}")
        middles += [
            at_rank(view, F.floor((total - 1) / 2)).alias(f"{view}__median_low"),
            at_rank(view, F.floor(total / 2)).alias(f"{view}__median_high"),
        ]
    return ranked.groupBy(*group).agg(*middles)


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
    result = pl.from_arrow(frame.toArrow())
    assert isinstance(result, pl.DataFrame)
    return result


def aggregate_frame(
    attempts: DataFrame, by: Sequence[str], *, with_cost: bool | None = None
) -> pl.DataFrame:
    """The aggregate frame (module docstring) of validated, possibly filtered `attempts`.

    Two Spark queries, whose results are a few rows per group: the cells (a group-by of
    (keys, outcome): counts, sums, means and spreads, from which both views follow by
    ledger.py's definitions) and the medians of both views (a group-by of the keys). Where
    some usage reaches 2**52 the medians are recomputed exactly by rank, and where a cell's
    sum of tokens passes a LONG it is recomputed as DECIMAL(38, 0). `with_cost` defaults to
    whether the attempts have a `cost` column.
    """
    keys = list(by)
    if not keys:
        raise ValueError("group by needs at least one column")
    missing = [key for key in keys if key not in attempts.columns]
    if missing:
        raise ValueError(f"no column {missing[0]!r} to group by")
    if with_cost is None:
        with_cost = COST_COLUMN in attempts.columns
    selected = attempts.select(
        *[column(k) for k in keys],
        "outcome",
        "tokens",
        *([COST_COLUMN] if with_cost else []),
    )
    group = [column(k) for k in keys]
    cell_query = selected.groupBy(*group, F.col("outcome")).agg(*_cell_aggregates(with_cost))
    cells = to_polars(cell_query)
    if cells.filter(pl.col("sum_tokens").is_null() & (pl.col("known") > 0)).height:
        # A cell's LONG sum overflowed: the same sums as DECIMAL(38, 0), which cannot.
        exact = to_polars(
            selected.groupBy(*group, F.col("outcome")).agg(
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
    medians = to_polars(selected.groupBy(*group).agg(*_medians(keys)))
    largest = medians["__max_known"].max()
    if largest is not None and int(largest) >= HALVES_EXACT:  # type: ignore[arg-type]
        # Some value reaches 2**52: a double median may have lost digits. Exactly, by rank.
        medians = medians_from_middles(to_polars(_middles(_value_counts(selected, keys), keys)))
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


# --------------------------------------------------------------------------- checks


def version_columns(names: Sequence[str], keys: Sequence[str]) -> list[str]:
    """Columns that name what ran inside a group (model, version, ...), as checks.py picks
    them: a group holding more than one value of one mixes them."""
    wanted = set(VERSION_COLUMNS)
    return [
        name
        for name in names
        if name not in keys
        and not name.startswith(HELPER_PREFIX)
        and (normalise_name(name) in wanted or normalise_name(name).endswith("_version"))
    ]


def check_cells(attempts: DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """Counts per group, task and model/version value: the frame checks.py's `_cells` makes,
    from which every group-, task- and version-level check is a sum. Columns: the keys,
    `task` (when present and not a key), the version columns, then `attempts`, `accepted`,
    `missing_usage`, `suspect_zero`, `ungraded`, `recorded_usage` (Int64: rows with usage
    above 0; none in a group is usage not recorded). Sorted by every grouping column."""
    keys = list(by)
    names = attempts.columns
    task = ["task"] if "task" in names and "task" not in keys else []
    grouping = [*keys, *task, *version_columns(names, keys)]
    tokens = F.col("tokens")
    cells = attempts.groupBy(*[column(name) for name in grouping]).agg(
        F.count(F.lit(1)).alias("attempts"),
        F.count_if(F.col("outcome") == ACCEPTED).alias("accepted"),
        F.count_if(tokens.isNull()).alias("missing_usage"),
        F.count_if(tokens == 0).alias("suspect_zero"),
        F.count_if(F.col("outcome") == "ungraded").alias("ungraded"),
        F.count_if(tokens > 0).alias("recorded_usage"),
    )
    frame = to_polars(cells).with_columns(pl.col(CELL_COUNTS).cast(pl.Int64))
    return sorted_by_text(frame, grouping)


@dataclass(frozen=True)
class DuplicateFigures:
    """What checks.py's duplicate checks count, computed by the engine.

    `id_column`: the first of `checks.ID_COLUMNS` present; `repeated_id_rows` rows carry an
    id that appears more than once, over `repeated_ids` distinct ids (`id_examples`: the
    first five, sorted). `repeated_attempt_rows`: rows sharing keys, task and an explicit
    attempt number with another. `copied_rows`: rows that are exact copies of another
    (every column but the source and line alike), counted only when an identifying column
    exists; None where a check does not apply.
    """

    id_column: str | None
    repeated_id_rows: int | None
    repeated_ids: int | None
    id_examples: tuple[str, ...]
    repeated_attempt_rows: int | None
    copied_rows: int | None


def duplicate_figures(attempts: DataFrame, by: Sequence[str]) -> DuplicateFigures:
    """The duplicate checks' figures (a few group-bys; only counts and five ids come back)."""
    keys = list(by)
    names = [name for name in attempts.columns if not name.startswith(HELPER_PREFIX)]
    id_column = next((name for name in ID_COLUMNS if name in names), None)
    repeated_id_rows = repeated_ids = None
    examples: tuple[str, ...] = ()
    if id_column is not None:
        ids = (
            attempts.where(column(id_column).isNotNull())
            .groupBy(column(id_column).alias("id"))
            .agg(F.count(F.lit(1)).alias("n"))
            .where(F.col("n") > 1)
        )
        figures = ids.agg(F.sum("n").alias("rows"), F.count(F.lit(1)).alias("ids")).collect()[0]
        repeated_id_rows, repeated_ids = int(figures["rows"] or 0), int(figures["ids"])
        first = ids.select(F.col("id").cast("string").alias("id")).orderBy("id").limit(5)
        examples = tuple(str(row["id"]) for row in first.collect())
    repeated_attempt_rows = None
    if "attempt" in names and "task" in names:
        identity = list(dict.fromkeys([*keys, "task", "attempt"]))
        repeated_attempt_rows = _rows_in_repeats(
            attempts.where(F.col("attempt").isNotNull()), identity
        )
    copied_rows = None
    if any(name in names for name in (*IDENTIFYING_COLUMNS, *ID_COLUMNS)):
        content = [
            name
            for name in names
            if name not in (LINE_COLUMN, SOURCE_COLUMN) and name not in ORDER_COLUMNS
        ]
        groups = attempts.groupBy(*[column(n) for n in content]).agg(F.count(F.lit(1)).alias("n"))
        figures = (
            groups.where(F.col("n") > 1)
            .agg(F.sum("n").alias("rows"), F.count(F.lit(1)).alias("groups"))
            .collect()[0]
        )
        copied_rows = int(figures["rows"] or 0) - int(figures["groups"])
    return DuplicateFigures(
        id_column, repeated_id_rows, repeated_ids, examples, repeated_attempt_rows, copied_rows
    )


def _rows_in_repeats(attempts: DataFrame, identity: list[str]) -> int:
    repeats = (
        attempts.groupBy(*[column(n) for n in identity])
        .agg(F.count(F.lit(1)).alias("n"))
        .where(F.col("n") > 1)
    )
    return int(repeats.agg(F.sum("n")).collect()[0][0] or 0)


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
    frame, tiebreak = spark_ledger.ordered_attempts()
    if where is not None:
        frame = frame.where(where)
    spark = spark_ledger.spark
    wanted = spark.createDataFrame(
        groups.select(pl.col(GROUP_ID).cast(pl.Int64), *keys, pl.col("__every_row")).to_arrow()
    )
    renamed = wanted.select(
        F.col(GROUP_ID), F.col("__every_row"), *[column(k).alias(f"__wanted_{k}") for k in keys]
    )
    condition = [column(key).eqNullSafe(F.col(f"__wanted_{key}")) for key in keys]
    accepted = F.col("outcome") == ACCEPTED
    numerators = {"tokens_per_accepted_result": F.col("tokens")}
    if with_cost:
        numerators["cost_per_accepted_result"] = F.col(COST_COLUMN).try_cast("double")
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
