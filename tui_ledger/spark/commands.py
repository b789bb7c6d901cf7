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
from dataclasses import dataclass, field
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
    BUCKETS_PER_DOUBLING,
    COST_COLUMN,
    FINE_BUCKETS_PER_DOUBLING,
    aggregate_frame,
    aggregates_from,
    bootstrap_from,
    bootstrap_plan,
    bootstrap_rows,
    cell_plan,
    cells_and_pairs_plan,
    median_plan,
    pair_columns,
    to_polars,
)
from tui_ledger.spark.batch import Part, run_parts
from tui_ledger.spark.cells import RAW
from tui_ledger.spark.check_figures import (
    DuplicateFigures,
    check_cell_plan,
    duplicate_plans,
    finish_check_cells,
    finish_duplicates,
)
from tui_ledger.spark.engine import (
    SparkLedger,
    SparkLoadReport,
    finish_validation,
    read_errors,
    validation_aggregates,
    validation_columns,
    validation_plan,
)
from tui_ledger.spark.errors import SparkEngineError, SparkInputError
from tui_ledger.spark.filters import spark_filter
from tui_ledger.spark.fine_cells import (
    TASK,
    counted_sums,
    empty_keys,
    merged_histogram,
    pair_tasks,
    split_cells_and_pairs,
    trimmed,
)
from tui_ledger.spark.inputs import local_rows_at_most, resolve_input
from tui_ledger.spark.opening import open_ledger
from tui_ledger.spark.session import (
    INTERPRET_BELOW_ROWS,
    connect,
    interpret,
    leave,
    release,
)

Result = TypeVar("Result")
MOST_ROWS = 2_000_000  # attempts a bootstrap may bring back: auto's cap allows at most this

__all__ = [
    "SparkFigures",
    "SparkInput",
    "filtered_by",
    "load_report",
    "on_engine",
    "open_input",
    "spark_checks",
    "spark_comparison",
    "spark_figures",
    "spark_per_task",
    "spark_rows",
]


@dataclass(repr=False)  # a Spark plan's repr asks the server (a setting, a schema)
class SparkInput:
    """One input opened on a server: the session, the mapped ledger, the attempts the
    `--where` filter keeps and the filter itself as a Spark column (None: every attempt).
    `report` is the validation's (as the loader's `LoadReport`): read when first asked, or
    with the first figures (`spark_figures`), whichever comes first."""

    spark: SparkSession
    ledger: SparkLedger
    filtered: DataFrame | None  # the attempts `where` keeps (None: every attempt, `attempts`)
    where: Column | None
    # Known to hold fewer than `INTERPRET_BELOW_ROWS` attempts (`open_input`): its queries
    # run interpreted, and its usage histogram is fine enough that a middle value seldom
    # lies inside a bucket (`FINE_BUCKETS_PER_DOUBLING`), so no second query is asked.
    small: bool = False
    _every: tuple[DataFrame, bool] | None = None  # every attempt's plan, and whether typed

    @property
    def attempts(self) -> DataFrame:
        """The attempts `where` keeps; with no filter, every attempt as the ledger types them
        now (a CSV's text columns are text until its validation has run: `SparkLedger.probed`;
        the plan is made again once it has)."""
        if self.filtered is not None:
            return self.filtered
        typed = self.ledger.typed
        if self._every is None or self._every[1] != typed:
            self._every = (self.ledger.attempts(typed=False), typed)
        return self._every[0]

    def leave(self) -> None:
        """This run is done with the server (`session.leave`: a kept session stays warm
        for the next run, without this input's checkpoint)."""
        leave(self.spark, self.ledger.cached())

    @property
    def report(self) -> LoadReport:
        return load_report(self.ledger.validate())

    @property
    def columns(self) -> list[str]:
        """The attempts' columns (known since the input was opened)."""
        return self.ledger.columns


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
    validate: bool = True,
    connect_to: Callable[[str | None], SparkSession] | None = None,
) -> SparkInput:
    """Connect, map and validate one input (a path, a glob or `table:catalog.schema.name`),
    then apply `where`. Raises `SparkEngineError` (one line) or `query.FilterError`.

    The session is the one the last run on an input of the same kind left on the server
    (`session.connect(keep=...)`: its compiled queries are warm), unless `connect_to` gives
    one. An input known to be small (its files are on this machine too and hold fewer than
    `INTERPRET_BELOW_ROWS` attempts) has its queries run interpreted (`session.interpret`).

    `validate=False`: the validation pass waits for the first figures and runs in their
    query (`spark_figures`); a CSV's text columns stay text until then (`SparkLedger.probed`:
    their types come from that pass), and figures that read one validate first. A filter
    validates now (it is parsed against the typed columns)."""
    if len(locations) != 1:
        raise SparkInputError(
            f"--spark reads one input, not {len(locations)}: give a glob (e.g. "
            "'runs/*.parquet') or a folder for several files, or a table:catalog.schema.name."
        )
    item = resolve_input(locations[0], load_options.get("fmt"))
    rows = local_rows_at_most(item)
    small = rows is not None and rows < INTERPRET_BELOW_ROWS
    if connect_to is None:  # the session the last run of this kind left warm (`connect`)
        spark = connect(url, keep="interpreted" if small else "compiled")
    else:
        spark = connect_to(url)
    ledger: SparkLedger | None = None
    try:
        if small:
            interpret(spark)  # a small input: compiling its queries would cost more than them
        ledger = open_ledger(spark, locations[0], **dict(load_options))
        if validate:
            ledger.validate()
        condition = None
        if where and not where.isspace():
            condition = spark_filter(where, ledger.schema())  # (validates)
        filtered = None if condition is None else ledger.attempts().where(condition)
    except BaseException:  # a bad cell or filter: nothing of this run stays on the server
        cached = ledger.cached() if ledger is not None else []
        if connect_to is None:
            leave(spark, cached)
        else:
            release(spark, cached)  # (the session is the caller's)
        raise
    return SparkInput(spark, ledger, filtered, condition, small=small)


def filtered_by(opened: SparkInput, where: str) -> SparkInput:
    """`opened` under the filter `where` as well (the app's filter box)."""
    condition = spark_filter(where, opened.ledger.schema())
    if condition is None:
        return opened
    both = condition if opened.where is None else opened.where & condition
    filtered = opened.attempts.where(condition)
    return SparkInput(opened.spark, opened.ledger, filtered, both, small=opened.small)


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


# --------------------------------------------------------------------------- one query


@dataclass
class SparkFigures:
    """What one recompute asks the server, answered by one query (`spark_figures`): the
    aggregate frame, the bootstrap's candidate rows, the checks' cells and duplicate
    figures, the pairs' per-task cells and the pages asked for; None where not asked."""

    by: tuple[str, ...]
    aggregates: pl.DataFrame
    with_cost: bool
    bootstrap: pl.DataFrame | None = None
    check_cells: pl.DataFrame | None = None
    duplicates: DuplicateFigures | None = None
    pair_tasks: pl.DataFrame | None = None
    pages: dict[str, pl.DataFrame] = field(default_factory=dict)
    extra: dict[str, pl.DataFrame] = field(default_factory=dict)


def spark_figures(
    opened: SparkInput,
    by: Sequence[str],
    *,
    intervals: IntervalSettings | None = None,
    checks: bool = False,
    pairs: bool = False,
    pages: Mapping[str, Part] | None = None,
    extra: Mapping[str, Part] | None = None,
) -> SparkFigures:
    """Everything one recompute needs, in **one query** (`batch.run_parts`): the cells and
    the usage histogram of both views, and as asked, the rows an `auto` bootstrap may
    resample (`intervals`, on an input known to be small), the check cells and duplicate
    figures (`checks`), the pairs' per-task cells (`pairs`), `pages` and `extra` questions
    (by name). Where the input is
    not validated yet, its validation pass is a part of the same query (a bad cell then
    raises, before any figure is used)."""
    keys = list(by)
    names = opened.columns
    with_cost = COST_COLUMN in names
    if set(opened.ledger.probed) & {*keys, COST_COLUMN, *(names if checks else ())}:
        # A column the figures read is a CSV's text until its validation types it: now.
        opened.ledger.validate()
    attempts = opened.attempts
    ledger = opened.ledger
    validating = ledger.validated is None
    # With the pairs, the cells come from one aggregation with theirs, and on every
    # attempt of an input not validated yet, with the validation's counts, grouped by the
    # text keys as read (trimmed here after): each part of a query reads and derives the
    # rows again (0.2-0.3 s each at 1M rows), a trimmed key 0.2 s more (`fine_cells`).
    counted = validating and pairs and opened.filtered is None
    raw = _grouped_as_read(ledger, keys) if counted else {}
    counts = (
        dict(zip(validation_columns(ledger), validation_aggregates(ledger), strict=True))
        if counted
        else {}
    )
    if "workflow" in raw:
        del counts["bad_workflow"]  # (counted here: `fine_cells.empty_keys`)
    buckets = FINE_BUCKETS_PER_DOUBLING if opened.small else BUCKETS_PER_DOUBLING
    parts: dict[str, Part] = {
        "cells": (
            cells_and_pairs_plan(
                ledger.rows() if counted else attempts,
                names,
                keys,
                with_cost,
                counts,
                raw,
            )
            if pairs
            else cell_plan(attempts, keys, with_cost)
        ),
        "medians": median_plan(ledger.rows() if raw else attempts, keys, buckets, raw),
    }
    if validating and not counted:
        parts["validation"] = Part(validation_plan(ledger), validation_columns(ledger))
    settings = intervals
    # The candidates only where groups are likely small: on an input not known to be small,
    # the part scanned every row twice for none at 1M rows (1.0 s of the query); a small
    # group there is asked for after the figures (`spark_comparison`: one more query).
    if settings is not None and settings.method == "auto" and opened.small:
        parts["bootstrap"] = bootstrap_plan(
            ledger,
            attempts,
            keys,
            where=opened.where,
            with_cost=with_cost,
            most_per_group=settings.max_draws // settings.resamples,
            most_rows=_bootstrap_most(settings),
        )
    if checks:
        parts["check_cells"] = check_cell_plan(attempts, keys, names)
        parts.update(duplicate_plans(attempts, keys, names))
    for kind, asked in (("page", pages), ("extra", extra)):
        parts.update({f"{kind}:{name}": part for name, part in (asked or {}).items()})
    with read_errors(ledger):
        found = run_parts(parts)
    if raw:
        found["cells"] = trimmed(found["cells"], [*raw, TASK])
        found["medians"] = merged_histogram(trimmed(found["medians"], list(raw)), keys)
    if validating:
        summary = (
            counted_sums(found["cells"]) if counted else found["validation"].row(0, named=True)
        )
        if "workflow" in raw:
            summary["bad_workflow"] = empty_keys(found["cells"], "workflow")
        finish_validation(ledger, summary)
    cells, pair_tasks = found["cells"], None
    if pairs:
        cells, pair_tasks = split_cells_and_pairs(cells, keys, with_cost)
    return SparkFigures(
        by=tuple(keys),
        aggregates=aggregates_from(cells, found["medians"], attempts, keys, with_cost),
        with_cost=with_cost,
        bootstrap=found.get("bootstrap"),
        check_cells=finish_check_cells(found["check_cells"]) if checks else None,
        duplicates=finish_duplicates(found, names) if checks else None,
        pair_tasks=pair_tasks,
        pages={k.split(":", 1)[1]: v for k, v in found.items() if k.startswith("page:")},
        extra={k.split(":", 1)[1]: v for k, v in found.items() if k.startswith("extra:")},
    )


def _grouped_as_read(ledger: SparkLedger, keys: Sequence[str]) -> dict[str, str]:
    """The keys to group by their text as read (`cells.RAW`), and the pairs' `task`
    (grouped by whatever the keys are): those the input has it for."""
    wanted = ["workflow", "task"] if "workflow" in keys else ["task"]
    return {key: RAW + key for key in wanted if RAW + key in ledger.names}


def _bootstrap_most(settings: IntervalSettings) -> int:
    """The candidate rows fetched with the figures: both views' caps, twice over."""
    return 4 * (settings.max_draws // settings.resamples)


def spark_comparison(
    opened: SparkInput,
    by: Sequence[str],
    intervals: IntervalSettings,
    figures: SparkFigures | None = None,
) -> Comparison:
    """Both views and the trap figures: the engine's aggregate frame, then ledger.py's own
    definitions. Bootstrap intervals resample the same rows (in the input's order) the polars
    path draws from: the candidates fetched with the figures, or (`--intervals bootstrap`,
    or many small groups) the chosen groups' rows, one more query."""
    if figures is None:
        figures = spark_figures(opened, by, intervals=intervals)
    with_cost = figures.with_cost

    def rows_for(groups: pl.DataFrame) -> pl.DataFrame:
        if figures.bootstrap is not None:
            rows = bootstrap_from(figures.bootstrap, by, groups, _bootstrap_most(intervals))
            if rows is not None:
                return rows
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

    return compare_aggregates(
        figures.aggregates, by, with_cost=with_cost, intervals=intervals, bootstrap_rows=rows_for
    )


def spark_per_task(opened: SparkInput, keys: Mapping[str, Any]) -> pl.DataFrame:
    """One group (`keys`: column -> value, None for a null key) task by task, as
    `per_task.per_task` computes it: the engine's aggregate frame by task of the group's
    attempts (one query), then ledger.py's keep view and per_task.py's columns."""
    from pyspark.sql import functions as F

    from tui_ledger.accounting.per_task import per_task_from_summary
    from tui_ledger.spark.inputs import column

    names = opened.columns
    if "task" not in names:
        raise SparkInputError("per-task figures need a task column")
    condition = F.lit(True)
    for name, value in keys.items():
        condition = condition & (
            column(name).isNull() if value is None else column(name) == F.lit(value)
        )
    attempts = opened.attempts.where(condition)
    with_cost = COST_COLUMN in names

    def no_rows(groups: pl.DataFrame) -> pl.DataFrame:
        raise SparkEngineError("per-task figures have no intervals")  # intervals="none"

    raw = aggregate_frame(attempts, ["task"], with_cost=with_cost, columns=names)
    summary = compare_aggregates(
        raw, ["task"], with_cost=with_cost, intervals="none", bootstrap_rows=no_rows
    ).keep
    return per_task_from_summary(summary, with_cost)


def spark_pair_cells(
    opened: SparkInput,
    by: Sequence[str],
    run: Callable[[Callable[[], pl.DataFrame]], pl.DataFrame] | None = None,
    figures: SparkFigures | None = None,
) -> PairCells:
    """`pairs.task_cells` counted on the engine: the per-task sums (asked with the figures,
    `figures.pair_tasks`, or now), the per-value counts when the draws ask for them, each
    one query whose result the draws then read here (`pairs.with_pairs(cells=...)`), so the
    same seed gives the same verdicts on either engine (every sum is of whole token counts:
    exact in any order). `run`: how a query is run (the app's, to cancel it with newer
    figures); by default, at once."""
    from pyspark.sql import functions as F

    from tui_ledger.spark.inputs import column

    _, tokens, accepted = pair_columns(opened.columns)
    counted = run or (lambda work: work())

    def tasks() -> pl.DataFrame:  # (the summary's cells' aggregation: `fine_cells`)
        plan = cells_and_pairs_plan(opened.attempts, opened.columns, by, False, cells=False)
        return pair_tasks(run_parts({"tasks": plan})["tasks"], by)

    def values() -> pl.DataFrame:
        cells = (
            opened.attempts.select(
                *[column(name).alias(name) for name in by],
                tokens.alias("__tokens"),
                accepted.alias("__accepted"),
            )
            .groupBy(*[column(name) for name in by], "__tokens", "__accepted")
            .agg(F.count(F.lit(1)).cast("long").alias("__n"))
        )
        return to_polars(cells).with_columns(
            pl.col("__tokens").cast(pl.Float64),
            pl.col("__accepted").cast(pl.Boolean),
            pl.col("__n").cast(pl.Int64),
        )

    known = figures.pair_tasks if figures is not None else None
    return PairCells(known if known is not None else counted(tasks), lambda: counted(values))


def spark_checks(
    opened: SparkInput,
    by: Sequence[str],
    warnings: Sequence[Finding] = (),
    figures: SparkFigures | None = None,
) -> list[Any]:
    """Every fair-comparison check, from the engine's check cells and duplicate figures
    (asked with the figures, or now in one query), worded by checks.py
    (`checks_from_cells` and its duplicate checks)."""
    from tui_ledger.accounting import checks

    keys = list(by)
    names = opened.columns
    if figures is None or figures.check_cells is None or figures.duplicates is None:
        parts = {"check_cells": check_cell_plan(opened.attempts, keys, names)}
        parts.update(duplicate_plans(opened.attempts, keys, names))
        found = run_parts(parts)
        cells = finish_check_cells(found["check_cells"])
        duplicated = finish_duplicates(found, names)
    else:
        cells, duplicated = figures.check_cells, figures.duplicates
    duplicates: list[Any] = []
    if duplicated.id_column is not None and duplicated.repeated_id_rows:
        duplicates.append(
            checks.duplicate_ids_check(
                duplicated.id_column,
                duplicated.repeated_id_rows,
                duplicated.repeated_ids or 0,
                duplicated.id_examples,
            )
        )
    if duplicated.repeated_attempt_rows:
        identity = [*dict.fromkeys([*keys, "task", "attempt"])]
        duplicates.append(
            checks.duplicate_attempts_check(
                identity,
                duplicated.repeated_attempt_rows,
                duplicated.repeated_identities,
                list(duplicated.identity_examples),
            )
        )
    if duplicated.copied_rows:
        duplicates.append(checks.duplicate_rows_check(duplicated.copied_rows))
    return checks.checks_from_cells(
        cells,
        keys,
        names,
        loader=opened.report.warnings,
        warnings=warnings,
        duplicates=duplicates,
    )


def spark_rows(opened: SparkInput) -> pl.DataFrame:
    """Every attempt the filter keeps, in the input's order, as the cluster returns them
    (what `convert` writes). This brings every row to this machine: it is an export."""
    frame, tiebreak = opened.ledger.ordered_attempts()
    if opened.where is not None:
        frame = frame.where(opened.where)
    from tui_ledger.spark.inputs import column

    ordered = frame.orderBy(*[column(name).asc_nulls_last() for name in tiebreak])
    result = pl.from_arrow(ordered.select(*[column(n) for n in opened.columns]).toArrow())
    if not isinstance(result, pl.DataFrame):
        raise SparkEngineError("the server returned no table of attempts")
    return result
