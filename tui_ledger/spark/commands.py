"""The headless commands on Spark: what `summary`, `check` and `convert --spark URL` compute.

The CLI calls these instead of loading the files itself; everything past the engine's
aggregates is the polars path's own code: `ledger.compare_aggregates` (every figure of
SPEC.md section 3 from the aggregate frame), `checks.checks_from_cells` (every check from the
check cells), `report.render_summary` (the JSON and the tables), `export_files` (the write).
So `summary --spark ... --format json` prints what `summary ... --format json` prints; where
it cannot, the difference is named in docs/SPARK.md ("What differs from a local run"):
warnings and checks carry no line numbers (a distributed table has none).

Imports pyspark (through the engine): only the `--spark` path imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import polars as pl
from pyspark.sql import Column, DataFrame, SparkSession

from tui_ledger.accounting.ledger import Comparison, compare_aggregates
from tui_ledger.accounting.pairs import PairCells
from tui_ledger.accounting.stats import IntervalSettings
from tui_ledger.findings import Finding
from tui_ledger.load.load_report import LoadReport, LoadWarning
from tui_ledger.load.warning_rules import WARNING_KINDS, warning_message
from tui_ledger.schema import CANONICAL_ORDER
from tui_ledger.spark.aggregate import (
    COST_COLUMN,
    aggregate_frame,
    bootstrap_rows,
    check_cells,
    duplicate_figures,
    to_polars,
)
from tui_ledger.spark.engine import SparkLedger, SparkLoadReport, open_ledger
from tui_ledger.spark.errors import SparkEngineError, SparkInputError
from tui_ledger.spark.filters import spark_filter
from tui_ledger.spark.session import connect

Result = TypeVar("Result")
MOST_ROWS = 2_000_000  # attempts a bootstrap may bring back: auto's cap allows at most this

__all__ = [
    "SparkInput",
    "load_report",
    "on_engine",
    "open_input",
    "spark_checks",
    "spark_comparison",
    "spark_per_task",
    "spark_rows",
]


@dataclass
class SparkInput:
    """One input opened on a server: the session, the mapped ledger, its validation report
    (as the loader's `LoadReport`), the attempts the `--where` filter keeps and the filter
    itself as a Spark column (None: every attempt)."""

    spark: SparkSession
    ledger: SparkLedger
    report: LoadReport
    attempts: DataFrame
    where: Column | None


def on_engine(work: Callable[[], Result]) -> Result:
    """Run `work`, turning an error the server or the client raises mid-query (a dropped
    connection, a query the cluster refuses) into one line, as `SparkEngineError`."""
    from pyspark.errors import PySparkException

    from tui_ledger.spark.session import first_line

    try:
        return work()
    except PySparkException as error:
        raise SparkEngineError(f"the Spark server failed the query: {first_line(error)}") from None


def open_input(
    url: str | None,
    locations: Sequence[str],
    *,
    load_options: Mapping[str, Any],
    where: str = "",
    connect_to: Callable[[str | None], SparkSession] = connect,
) -> SparkInput:
    """Connect, map and validate one input (a path, a glob or `table:catalog.schema.name`),
    then apply `where`. Raises `SparkEngineError` (one line) or `query.FilterError`."""
    if len(locations) != 1:
        raise SparkInputError(
            f"--spark reads one input, not {len(locations)}: give a glob (e.g. "
            "'runs/*.parquet') or a folder for several files, or a table:catalog.schema.name."
        )
    spark = connect_to(url)
    ledger = open_ledger(spark, locations[0], **dict(load_options))
    report = load_report(ledger.validate())
    attempts, condition = ledger.attempts(), None
    if where and not where.isspace():
        from tui_ledger.spark.engine import polars_schema

        typed = ledger.typed_attempts()
        condition = spark_filter(where, polars_schema(typed))
        if condition is not None:
            attempts = typed.where(condition)
    return SparkInput(spark, ledger, report, attempts, condition)


def load_report(report: SparkLoadReport) -> LoadReport:
    """The validation pass's report in the loader's shape (its warnings in the loader's
    order and words), so `check` prints it and the checks restate it as they do a load's.
    No example lines: a distributed table has none."""
    warnings = [
        LoadWarning(kind, warning_message(kind, report.counts[kind]), report.counts[kind])
        for kind in WARNING_KINDS
        if report.counts.get(kind)
    ]
    return LoadReport(
        files=[report.source],
        rows=report.rows,
        mapping={  # in the loader's order
            name: report.mapping[name] for name in CANONICAL_ORDER if name in report.mapping
        },
        derived=list(report.derived),
        warnings=warnings,
    )


def spark_comparison(
    opened: SparkInput, by: Sequence[str], intervals: IntervalSettings
) -> Comparison:
    """Both views and the trap figures: the engine's aggregate frame, then ledger.py's own
    definitions. Bootstrap intervals resample the same rows (in the input's order) the polars
    path draws from, fetched from the engine for the small groups only."""
    with_cost = COST_COLUMN in opened.attempts.columns

    def rows_for(groups: pl.DataFrame) -> pl.DataFrame:
        try:
            return bootstrap_rows(
                opened.ledger, by, groups, where=opened.where, with_cost=with_cost, most=MOST_ROWS
            )
        except ValueError:
            raise SparkEngineError(
                f"--intervals bootstrap would bring more than {MOST_ROWS:,} attempts from the "
                "cluster to resample them; use --intervals auto (bootstrap for small groups, "
                "the delta method above) or delta."
            ) from None

    raw = aggregate_frame(opened.attempts, by, with_cost=with_cost)
    return compare_aggregates(
        raw, by, with_cost=with_cost, intervals=intervals, bootstrap_rows=rows_for
    )


def spark_per_task(opened: SparkInput, keys: Mapping[str, Any]) -> pl.DataFrame:
    """One group (`keys`: column -> value, None for a null key) task by task, as
    `per_task.per_task` computes it: the engine's aggregate frame by task of the group's
    attempts, then ledger.py's keep view and per_task.py's columns."""
    from pyspark.sql import functions as F

    from tui_ledger.accounting.per_task import per_task_from_summary
    from tui_ledger.spark.inputs import column

    if "task" not in opened.attempts.columns:
        raise SparkInputError("per-task figures need a task column")
    condition = F.lit(True)
    for name, value in keys.items():
        condition = condition & (
            column(name).isNull() if value is None else column(name) == F.lit(value)
        )
    attempts = opened.attempts.where(condition)
    with_cost = COST_COLUMN in attempts.columns

    def no_rows(groups: pl.DataFrame) -> pl.DataFrame:
        raise SparkEngineError("per-task figures have no intervals")  # intervals="none"

    raw = aggregate_frame(attempts, ["task"], with_cost=with_cost)
    summary = compare_aggregates(
        raw, ["task"], with_cost=with_cost, intervals="none", bootstrap_rows=no_rows
    ).keep
    return per_task_from_summary(summary, with_cost)


def spark_pair_cells(
    opened: SparkInput,
    by: Sequence[str],
    run: Callable[[Callable[[], pl.DataFrame]], pl.DataFrame] | None = None,
) -> PairCells:
    """`pairs.task_cells` counted on the engine: the per-task sums now, the per-value counts
    when the draws ask for them, each one query whose result the draws then read here
    (`pairs.with_pairs(cells=...)`), so the same seed gives the same verdicts on either
    engine (every sum is of whole token counts: exact in any order). `run`: how a query is
    run (the app's, to cancel it with newer figures); by default, at once."""
    from pyspark.sql import functions as F

    from tui_ledger.schema import ACCEPTED
    from tui_ledger.spark.inputs import column

    attempts = opened.attempts
    has_task = "task" in attempts.columns
    task = column("task").cast("string") if has_task else F.lit(None).cast("string")
    tokens = F.coalesce(column("tokens"), F.lit(0)).cast("double")
    accepted = F.coalesce(column("outcome") == F.lit(ACCEPTED), F.lit(False))
    unnamed = task.isNull()
    keys = [column(name).alias(name) for name in by]
    counted = run or (lambda work: work())

    def tasks() -> pl.DataFrame:
        cells = (
            attempts.select(
                *keys,
                task.alias("__task"),
                F.when(unnamed, tokens).alias("__tokens"),
                F.when(unnamed, accepted).alias("__passed"),
                tokens.alias("__value"),
                accepted.alias("__accepted"),
            )
            .groupBy(*by, "__task", "__tokens", "__passed")
            .agg(
                F.count(F.lit(1)).cast("long").alias("__n"),
                F.sum("__value").alias("__spend"),
                F.sum(F.col("__accepted").cast("long")).alias("__accepted"),
                F.sum(F.when(F.col("__accepted"), F.col("__value")).otherwise(0.0)).alias(
                    "__accepted_spend"
                ),
            )
        )
        return to_polars(cells).with_columns(
            pl.col("__task").cast(pl.String),
            pl.col("__tokens").cast(pl.Float64),
            pl.col("__passed").cast(pl.Boolean),
            pl.col("__n").cast(pl.Int64),
            pl.col("__spend").cast(pl.Float64),
            pl.col("__accepted").cast(pl.Int64),
            pl.col("__accepted_spend").cast(pl.Float64),
        )

    def values() -> pl.DataFrame:
        cells = (
            attempts.select(*keys, tokens.alias("__tokens"), accepted.alias("__accepted"))
            .groupBy(*by, "__tokens", "__accepted")
            .agg(F.count(F.lit(1)).cast("long").alias("__n"))
        )
        return to_polars(cells).with_columns(
            pl.col("__tokens").cast(pl.Float64),
            pl.col("__accepted").cast(pl.Boolean),
            pl.col("__n").cast(pl.Int64),
        )

    return PairCells(counted(tasks), lambda: counted(values))


def spark_checks(
    opened: SparkInput, by: Sequence[str], warnings: Sequence[Finding] = ()
) -> list[Any]:
    """Every fair-comparison check, from the engine's check cells and duplicate figures,
    worded by checks.py (`checks_from_cells` and its duplicate checks)."""
    from tui_ledger.accounting import checks

    keys = list(by)
    figures = duplicate_figures(opened.attempts, keys)
    duplicates: list[Any] = []
    if figures.id_column is not None and figures.repeated_id_rows:
        duplicates.append(
            checks.duplicate_ids_check(
                figures.id_column,
                figures.repeated_id_rows,
                figures.repeated_ids or 0,
                figures.id_examples,
            )
        )
    if figures.repeated_attempt_rows:
        identity = [*dict.fromkeys([*keys, "task", "attempt"])]
        groups, examples = _repeated_identities(opened.attempts, identity)
        duplicates.append(
            checks.duplicate_attempts_check(
                identity, figures.repeated_attempt_rows, groups, examples
            )
        )
    if figures.copied_rows:
        duplicates.append(checks.duplicate_rows_check(figures.copied_rows))
    return checks.checks_from_cells(
        check_cells(opened.attempts, keys),
        keys,
        opened.attempts.columns,
        loader=opened.report.warnings,
        warnings=warnings,
        duplicates=duplicates,
    )


def _repeated_identities(attempts: DataFrame, identity: list[str]) -> tuple[int, list[str]]:
    """How many (keys, task, attempt) values repeat, and the first three as labels (sorted:
    a distributed table has no first rows)."""
    from pyspark.sql import functions as F

    from tui_ledger.spark.inputs import column

    label = F.concat_ws(
        " · ", *[F.coalesce(column(n).cast("string"), F.lit("—")) for n in identity]
    )
    repeats = (
        attempts.where(F.col("attempt").isNotNull())
        .groupBy(label.alias("who"))
        .agg(F.count(F.lit(1)).alias("n"))
        .where(F.col("n") > 1)
    )
    total = int(repeats.count())
    examples = [str(row["who"]) for row in repeats.orderBy("who").limit(3).collect()]
    return total, examples


def spark_rows(opened: SparkInput) -> pl.DataFrame:
    """Every attempt the filter keeps, in the input's order, as the cluster returns them
    (what `convert` writes). This brings every row to this machine: it is an export."""
    frame, tiebreak = opened.ledger.ordered_attempts()
    if opened.where is not None:
        frame = frame.where(opened.where)
    from tui_ledger.spark.engine import ORDER_COLUMNS
    from tui_ledger.spark.inputs import column

    ordered = frame.orderBy(*[column(name).asc_nulls_last() for name in tiebreak])
    names = [name for name in ordered.columns if name not in ORDER_COLUMNS[1:]]
    result = pl.from_arrow(ordered.select(*[column(n) for n in names]).toArrow())
    if not isinstance(result, pl.DataFrame):
        raise SparkEngineError("the server returned no table of attempts")
    return result
