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
suspect_zero           Int64           rows reporting exactly 0 tokens
recorded_usage         Int64           rows with known usage above 0 (none: not recorded)
sum_known_tokens       Int128          exact sum of known usage (0 when none is known)
median_tokens...       Float64 or      median of known usage (mean of the two middle
  _per_attempt         Decimal(38, 1)  values): Float64 while every median is below 2**52
                                       (exact there), else Decimal(38, 1) for every group
var_tokens             Float64         sample variance of usage with missing read as 0
                                       (null under two attempts), for the delta method
known_cost             Int64           (with a cost column) rows with a cost
sum_known_cost         Float64         sum of known cost (0.0 when none)
var_cost               Float64         sample variance of cost with missing read as 0
=====================  ==============  ===================================================

Rows are sorted by the keys, nulls last, as `ledger.compare` sorts its groups. Counts are
Int64, never UInt32: a group on a cluster can pass 4,294,967,295 attempts.

Medians are exact at any magnitude. Spark's exact `percentile` goes through a double: it is
exact while every value of the group is below 2**52 (each middle value and their half are
then representable, and the weights of an even count are exactly 0.5), so it is used, in the
same pass as the counts, when the group's largest known usage is below 2**52. Past that, the
two middle values are found by rank instead (a count of each distinct usage value per group,
then a running count in usage order), never through a double. The same split as ledger.py:
a float median where it is exact, an exact one where it might not be.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from tui_ledger.checks import ID_COLUMNS, IDENTIFYING_COLUMNS, VERSION_COLUMNS
from tui_ledger.schema import ACCEPTED, LINE_COLUMN, OUTCOMES, SOURCE_COLUMN, normalise_name
from tui_ledger.spark.engine import HELPER_PREFIX, ORDER_COLUMNS, column

__all__ = [
    "COUNT_AGGREGATES",
    "MEDIAN_EXACT_DTYPE",
    "DuplicateFigures",
    "aggregate_frame",
    "aggregate_names",
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
    "suspect_zero",
    "recorded_usage",
)
TOKEN_AGGREGATES: tuple[str, ...] = (
    "sum_known_tokens",
    "median_tokens_per_attempt",
    "var_tokens",
)
COST_AGGREGATES: tuple[str, ...] = ("known_cost", "sum_known_cost", "var_cost")
# Below 2**52 a float holds every integer and every half exactly (as in ledger.py).
HALVES_EXACT = 2**52
MEDIAN_EXACT_DTYPE = pl.Decimal(38, 1)
COST_COLUMN = "cost"


def aggregate_names(with_cost: bool) -> list[str]:
    """The aggregate columns of one view, in order (without the `{view}__` prefix)."""
    return [*COUNT_AGGREGATES, *TOKEN_AGGREGATES, *(COST_AGGREGATES if with_cost else ())]


def _view_aggregates(view: str, with_cost: bool) -> list[Column]:
    """One view's aggregates as Spark aggregate expressions, prefixed with the view.

    `keep` counts every row; `drop` only the accepted ones. Every count is a `count_if`
    (a null condition is not counted), every sum of tokens a DECIMAL(38, 0) (no overflow
    under any ANSI setting: 10**38 is past any ledger), every variance a `var_samp` (null
    under two rows, as in ledger.py).
    """
    outcome, tokens = F.col("outcome"), F.col("tokens")
    accepted = outcome == ACCEPTED
    mask: Column | None = None if view == "keep" else accepted

    def where(condition: Column) -> Column:
        return condition if mask is None else mask & condition

    def in_view(value: Column) -> Column:
        return value if mask is None else F.when(mask, value)

    aggregates: dict[str, Column] = {
        "attempts": F.count(F.lit(1)) if mask is None else F.count_if(mask),
        "accepted": F.count_if(where(accepted)),
        **{name: F.count_if(where(outcome == name)) for name in OUTCOMES},
        "missing_usage": F.count_if(where(tokens.isNull())),
        "known_usage": F.count_if(where(tokens.isNotNull())),
        "suspect_zero": F.count_if(where(tokens == 0)),
        "recorded_usage": F.count_if(where(tokens > 0)),
        "sum_known_tokens": F.coalesce(
            F.sum(in_view(tokens.cast("decimal(38,0)"))), F.lit(0).cast("decimal(38,0)")
        ),
        "var_tokens": F.var_samp(in_view(F.coalesce(tokens, F.lit(0)).cast("double"))),
        # Exact below 2**52 only; `__max_known` says whether the group stays there.
        "median_tokens_per_attempt": F.percentile(in_view(tokens), F.lit(0.5)),
        "__max_known": F.max(in_view(tokens)),
    }
    if with_cost:
        cost = F.col(COST_COLUMN).try_cast("double")
        aggregates |= {
            "known_cost": F.count_if(where(cost.isNotNull())),
            "sum_known_cost": F.coalesce(F.sum(in_view(cost)), F.lit(0.0)),
            "var_cost": F.var_samp(in_view(F.coalesce(cost, F.lit(0.0)))),
        }
    return [expr.alias(f"{view}__{name}") for name, expr in aggregates.items()]


def _middles(attempts: DataFrame, keys: list[str]) -> DataFrame:
    """Both views' two middle values of known usage per group, exactly, by rank.

    One count per (group, usage value) pair (a map-side partial aggregation keeps the
    shuffle to the distinct values), then a running count in usage order within each group:
    the value whose running count first passes a rank is the value at that rank.
    """
    tokens = F.col("tokens")
    accepted = (F.col("outcome") == ACCEPTED).cast("long")
    counts = (
        attempts.where(tokens.isNotNull())
        .groupBy(*[column(k) for k in keys], tokens)
        .agg(F.count(F.lit(1)).alias("n_keep"), F.sum(accepted).alias("n_drop"))
    )
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


def _to_polars(frame: DataFrame) -> pl.DataFrame:
    result = pl.from_arrow(frame.toArrow())
    assert isinstance(result, pl.DataFrame)
    return result


def sorted_by_keys(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Rows in key order, nulls last, as ledger.compare orders its groups."""
    return frame.sort(list(keys), nulls_last=True, maintain_order=True)


def aggregate_frame(
    attempts: DataFrame, by: Sequence[str], *, with_cost: bool | None = None
) -> pl.DataFrame:
    """The aggregate frame (module docstring) of validated, possibly filtered `attempts`.

    One Spark query (a group-by of every count, sum, variance and median of both views), and
    a second one of the exact middle values only where some usage reaches 2**52.
    `with_cost` defaults to whether the attempts have a `cost` column.
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
    aggregates = [expr for view in VIEWS for expr in _view_aggregates(view, with_cost)]
    frame = _to_polars(selected.groupBy(*[column(k) for k in keys]).agg(*aggregates))
    largest = frame.select(pl.max_horizontal(pl.col("^.*____max_known$").max())).item()
    if largest is not None and largest >= HALVES_EXACT:
        # Some value reaches 2**52: a double median may have lost digits. Exactly, by rank.
        middles = medians_from_middles(_to_polars(_middles(selected, keys)))
        medians = [f"{view}__median_tokens_per_attempt" for view in VIEWS]
        frame = frame.drop(medians).join(
            middles.select(*keys, *medians), on=keys, how="left", nulls_equal=True
        )
    count_columns = [f"{view}__{name}" for view in VIEWS for name in COUNT_AGGREGATES]
    if with_cost:
        count_columns += [f"{view}__known_cost" for view in VIEWS]
    frame = frame.with_columns(
        pl.col(count_columns).cast(pl.Int64),
        pl.col([f"{view}__sum_known_tokens" for view in VIEWS]).cast(pl.Int128),
    )
    ordered = [f"{view}__{name}" for view in VIEWS for name in aggregate_names(with_cost)]
    return sorted_by_keys(frame.select(*keys, *ordered), keys)


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
    `missing_usage`, `suspect_zero`, `ungraded` (Int64). Sorted by every grouping column."""
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
    )
    frame = _to_polars(cells).with_columns(
        pl.col("attempts", "accepted", "missing_usage", "suspect_zero", "ungraded").cast(pl.Int64)
    )
    return sorted_by_keys(frame, grouping)


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
