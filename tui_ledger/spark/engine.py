"""Attempts on a Spark Connect server: the ledger, its validation pass, a CSV's types.

`opening.open_ledger` maps an input onto the canonical attempt schema (the loader's contract,
SPEC.md section 1, written as Spark column expressions; its docstring says what differs from
the local loader and why) and returns a `SparkLedger`: the plan of the attempts with helper
columns (`cells` names them) that the validation pass here counts, in one global aggregation
(the loader's unreadable cells and warnings, over the whole input, each first bad cell named by
its row's identifying columns: a distributed table has no line numbers). A CSV's columns are
read as text; the ones no parsing step types get the loader's types from that same pass.

Imports pyspark: only the Spark path imports this module.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tui_ledger import schema
from tui_ledger.load.outcomes import status_vocabulary
from tui_ledger.spark.batch import Part, run_parts
from tui_ledger.spark.cells import (
    BAD,
    CONTRADICTING,
    MISMATCH,
    PASSED_UNKNOWN,
    STATUS_UNKNOWN,
    WHY,
    ZERO,
)
from tui_ledger.spark.errors import SparkCellError, SparkInputError
from tui_ledger.spark.inputs import Input, column, input_error

__all__ = [
    "SparkLedger",
    "SparkLoadReport",
    "finish_validation",
    "polars_schema",
    "read_errors",
    "validation_aggregates",
    "validation_columns",
    "validation_plan",
]

# Helper columns live only inside the engine's plans; none reaches a result (`cells` names
# them).
HELPER_PREFIX = "__ledger_"
# Internal order of the rows of a file input (file, block, position in the scan): the files'
# own order, for a page's tiebreak and a bootstrap's draws.
ORDER_COLUMNS = (schema.SOURCE_COLUMN, "__ledger_block", "__ledger_position")

_COUNT_PROBLEMS: dict[str, str] = {
    "negative": "is negative; token counts are 0 or more",
    "not_number": "is not a number",
    "fractional": "is not a whole number; token counts are whole numbers",
    "infinite": "is not a finite number",
    "range": "is larger than the biggest count stored exactly (9,223,372,036,854,775,807)",
}


# --------------------------------------------------------------------------- the ledger


@dataclass
class SparkLoadReport:
    """What the validation pass counted (the loader's warnings), over the whole input.

    `examples` are the identifying columns of up to five rows of each warning, filled only
    when asked for (`SparkLedger.warning_examples`): a distributed table has no line numbers.
    """

    source: str
    rows: int
    mapping: dict[str, str]
    derived: list[str]
    counts: dict[str, int]
    examples: dict[str, list[dict[str, object]]] = field(default_factory=dict)


_WARNING_FLAGS = (
    "contradicting_status",
    "bucket_mismatch",
    "suspect_zero",
    "missing_usage",
    "ungraded",
)


@dataclass
class SparkLedger:
    """One input on a Spark Connect server, mapped onto the canonical attempt schema.

    `frame` is the engine's plan of the attempts: canonical columns (workflow, task, outcome,
    tokens, ...), every other input column as it was, and helper columns (`__ledger_*`) that
    the validation reads; `names` are its columns, known when the input is opened, so no
    later question asks the server for a schema again. `attempts()` is the same plan without
    the helpers (typed as the loader types them), validated first. Nothing is computed until
    a method asks a question.
    """

    spark: SparkSession
    source: str
    frame: DataFrame
    names: tuple[str, ...]
    mapping: dict[str, str]
    derived: list[str]
    identity: list[str]
    fmt: str
    input_types: dict[str, T.DataType]
    other_types: dict[str, T.DataType] = field(default_factory=dict)  # the non-canonical ones
    order_frame: DataFrame | None = None
    parsed_counts: tuple[str, ...] = ()  # count columns read from text by the exact parser
    zero_is_missing: bool = False
    _report: SparkLoadReport | None = None
    _kept: DataFrame | None = None  # the parsed rows, checkpointed on the server
    _casts: dict[str, str] | None = None
    _schema: dict[str, pl.DataType] | None = None

    @property
    def columns(self) -> list[str]:
        """The attempts' columns, in the loader's order (canonical first)."""
        return [name for name in self.names if not name.startswith(HELPER_PREFIX)]

    @property
    def tiebreak(self) -> list[str]:
        """The columns of the rows' total order: a file input's rows in their files' order
        (file, block, position in the scan); a table's by every column."""
        return list(ORDER_COLUMNS) if self.order_frame is not None else list(self.columns)

    def rows(self) -> DataFrame:
        """The plan every question reads: the mapped rows with their helper columns (and the
        order columns of a file input).

        Where counts are parsed from text (CSV, or JSON strings), the parsed rows are
        materialised once, before anything else reads them (`localCheckpoint`, on the
        cluster, memory then disk), with their helpers and order columns: validation, every
        figure, filter and page then read them without parsing the text again. A filter on
        a parsed count (`tokens>1k`) is otherwise pushed down through every parsing step,
        each helper's expression pasted in at each of its uses, a tree Spark took 10-15 s
        to plan for a 360-row CSV. Typed inputs (Parquet, tables) stay lazy, so a filter
        reaches the scan (a checkpoint of 1M Parquet rows took 4 s here and made an
        aggregation no faster)."""
        if self._kept is None and self.parsed_counts:
            source = self.order_frame if self.order_frame is not None else self.frame
            self._kept = source.localCheckpoint(eager=True)
        if self._kept is not None:
            return self._kept
        return self.frame

    def validate(self) -> SparkLoadReport:
        """One pass over the whole input: the first unreadable cell raises `SparkCellError`;
        otherwise the warnings' counts (and, for a CSV, the other columns' types). Run
        once; later calls return the same report."""
        if self._report is None:
            with read_errors(self):
                # (`run_parts`, not `collect`: a collect reads two settings first, one
                # more round trip)
                asked = {"validation": Part(validation_plan(self), validation_columns(self))}
                summary = run_parts(asked)["validation"].row(0, named=True)
            finish_validation(self, summary)
        assert self._report is not None
        return self._report

    @property
    def validated(self) -> SparkLoadReport | None:
        """The validation's report once it has run (no question asked), else None."""
        return self._report

    def attempts(self, *, typed: bool = True) -> DataFrame:
        """The validated attempts, without helper columns, a CSV's other columns typed as the
        loader types them (integer, float or boolean where every value reads so, else text,
        from the validation pass). `typed=False`: a CSV not validated yet keeps those columns
        as text (`probed` names them) rather than running its validation now."""
        if self._casts is None and not typed:
            return self.rows().select(*[column(name) for name in self.columns])
        if self._casts is None:
            self.validate()  # a CSV's other columns are typed by its validation pass
        return _apply_casts(
            self.rows().select(*[column(name) for name in self.columns]),
            self.columns,
            self._casts or {},
        )

    def typed_attempts(self) -> DataFrame:
        """The same as `attempts()` (kept for callers that ask for the typed columns)."""
        return self.attempts()

    def cached(self) -> list[DataFrame]:
        """What this ledger keeps on the server (the parsed rows' checkpoint, if made)."""
        return [self._kept] if self._kept is not None else []

    def ordered_attempts(self, *, typed: bool = True) -> tuple[DataFrame, list[str]]:
        """The typed attempts with a total order's tiebreak (`tiebreak`), and its columns
        (`typed=False`: as `attempts` says)."""
        if self._casts is None and typed:
            self.validate()
        if self.order_frame is None:
            return self.attempts(typed=typed), self.tiebreak
        names = [*self.columns, *ORDER_COLUMNS[1:]]
        source = self._kept if self._kept is not None else self.order_frame
        frame = source.select(*[column(name) for name in names])
        return _apply_casts(frame, names, self._casts or {}), self.tiebreak

    @property
    def typed(self) -> bool:
        """Whether every column has its type (all but a CSV's, until its validation)."""
        return self._casts is not None

    @property
    def probed(self) -> list[str]:
        """The columns whose types the validation pass decides (a CSV's text columns no
        parsing step types): as text in `attempts(typed=False)` until it has run."""
        return [] if self._casts is not None else _probe_targets(self)

    def schema(self) -> dict[str, pl.DataType]:
        """The typed attempts' columns as polars dtypes (`polars_schema`): one question to
        the server, the first time only."""
        if self._schema is None:
            self._schema = polars_schema(self.attempts())
        return self._schema

    def warning_examples(self, kind: str, count: int = 5) -> list[dict[str, object]]:
        """The identifying columns of up to `count` rows a warning counts (a bounded query;
        the loader names lines, which a distributed table does not have)."""
        report = self.validate()
        if kind not in report.examples:
            on_attempts = {
                "missing_usage": F.col("tokens").isNull(),
                "suspect_zero": F.col("tokens") == 0,
                "ungraded": F.col("outcome") == "ungraded",
            }
            if kind in on_attempts and not (kind == "suspect_zero" and self.zero_is_missing):
                frame, condition = self.attempts(), on_attempts[kind]
            else:
                frame, condition = self.rows(), _warning_flags(self.names)[kind]
            identity = [column(name) for name in self.identity]
            rows = frame.where(condition).select(*identity).limit(count).collect()
            report.examples[kind] = [row.asDict() for row in rows]
        return report.examples[kind]


@contextmanager
def read_errors(ledger: SparkLedger) -> Iterator[None]:
    """An error reading the input (a malformed CSV row, a file gone) as one line."""
    try:
        yield
    except PySparkException as error:
        raise input_error(Input(ledger.source, ledger.source, ledger.fmt, {}), error) from None


# --------------------------------------------------------------------------- validation


def _warning_flags(names: Sequence[str]) -> dict[str, Column]:
    flags = {
        "contradicting_status": F.col(CONTRADICTING),
        "bucket_mismatch": F.col(MISMATCH) if MISMATCH in names else None,
        "suspect_zero": F.col(ZERO),
        "missing_usage": F.col("tokens").isNull(),
        "ungraded": F.col("outcome") == "ungraded",
    }
    return {kind: flag for kind, flag in flags.items() if flag is not None}


def _problems(names: Sequence[str]) -> dict[str, Column]:
    problems: dict[str, Column] = {}
    if PASSED_UNKNOWN in names:
        problems["passed"] = F.col(PASSED_UNKNOWN)
    if STATUS_UNKNOWN in names:
        problems["status"] = F.col(STATUS_UNKNOWN)
    for name in ("workflow", *schema.INTEGER_COLUMNS):
        if WHY + name in names:
            problems[name] = F.col(WHY + name).isNotNull()
    return problems


def validation_plan(ledger: SparkLedger) -> DataFrame:
    """The validation pass as one global aggregation (one row): the rows, the unreadable
    cells of each column, each warning's count, and for a CSV the type probes of its other
    columns (`_type_probes`). `finish_validation` reads it."""
    return ledger.rows().select(*validation_aggregates(ledger))


def validation_aggregates(ledger: SparkLedger) -> list[Column]:
    """`validation_plan`'s aggregates over `ledger.rows()` (`validation_columns` names
    them): every one a count, so counted per group they add up to the pass's own row (the
    figures' query counts them with its cells: `fine_cells`)."""
    problems = _problems(ledger.names)
    flags = _warning_flags(ledger.names)
    aggregates = [F.count(F.lit(1)).alias("rows")]
    aggregates += [F.count_if(flag).alias(f"bad_{name}") for name, flag in problems.items()]
    aggregates += [F.count_if(flag).alias(f"count_{kind}") for kind, flag in flags.items()]
    aggregates += _type_probes(ledger)
    return aggregates


def validation_columns(ledger: SparkLedger) -> list[str]:
    """The columns of `validation_plan` (known without asking the server)."""
    problems = _problems(ledger.names)
    flags = _warning_flags(ledger.names)
    probes = [
        f"{kind}{index}"
        for index, _ in enumerate(_probe_targets(ledger))
        for kind in ("n", "i", "f", "b")
    ]
    return [
        "rows",
        *[f"bad_{name}" for name in problems],
        *[f"count_{kind}" for kind in flags],
        *probes,
    ]


def finish_validation(ledger: SparkLedger, summary: Mapping[str, Any]) -> SparkLoadReport:
    """The report from the validation pass's row; the first unreadable cell raises
    `SparkCellError` (one more bounded query, to name its row)."""
    if summary["rows"] == 0:
        raise SparkInputError(
            f"{ledger.source}: no attempts in it (a header, or blank rows, and nothing else); "
            "check it is the right input."
        )
    for name, flag in _problems(ledger.names).items():
        if summary[f"bad_{name}"]:
            raise _cell_error(ledger, name, flag)
    flags = _warning_flags(ledger.names)
    counts = {kind: int(summary[f"count_{kind}"]) for kind in flags}
    ledger._casts = _inferred_types(_probe_targets(ledger), summary)
    report = SparkLoadReport(
        source=ledger.source,
        rows=int(summary["rows"]),
        mapping=dict(ledger.mapping),
        derived=list(ledger.derived),
        counts={kind: count for kind, count in counts.items() if count},
    )
    ledger._report = report
    return report


def _cell_error(ledger: SparkLedger, name: str, flag: Column) -> SparkCellError:
    """The error for one bad cell: a row where `flag` holds, named by its identifying columns."""
    input_column = ledger.mapping.get(name, name)
    wanted = [column(n) for n in ledger.identity if n != name]
    why_column = F.col(WHY + name) if WHY + name in ledger.names else F.lit(None)
    first = (
        ledger.rows()
        .where(flag)
        .select(*wanted, F.col(BAD + name).alias("__bad"), why_column.alias("__why"))
        .limit(1)
    )
    row = first.collect()[0].asDict()
    value, why = row.pop("__bad"), row.pop("__why")
    where = f"{ledger.source}: the row with {_identity_text(row)}"
    shown = _shown(value)
    if name == "passed":
        true = ", ".join(sorted(schema.TRUE_WORDS))
        false = ", ".join(sorted(schema.FALSE_WORDS))
        what = (
            f"column {input_column!r} holds {shown}, which is not a pass/fail value; accepted: "
            f"true = {true}; false = {false} (any case); empty or NA = ungraded"
        )
        fix = "Fix the cell, or map another column with --col passed=COLUMN."
    elif name == "status":
        what = (
            f"column {input_column!r} holds {shown}, which is not an outcome; accepted: "
            f"{status_vocabulary()}"
        )
        fix = "Fix the cell, or map another column with --col status=COLUMN."
    elif name == "workflow":
        what = f"column {input_column!r} is empty; every attempt needs a workflow"
        fix = "Fill it in or delete the row."
    elif name == "tokens" and "tokens" not in ledger.mapping:
        buckets = " + ".join(b for b in schema.BUCKETS if b in ledger.mapping)
        what = (
            f"{buckets} adds up to {value}, more than the biggest count stored exactly "
            "(9,223,372,036,854,775,807)"
        )
        fix = "Check the bucket columns hold token counts."
    else:
        what = f"column {input_column!r} holds {shown}, which {_COUNT_PROBLEMS[str(why)]}"
        fix = "Fix the cell, or leave it empty (or write NA) if the usage is unknown."
    return SparkCellError(f"{where}: {what}. {fix}", column=input_column, value=value, row=row)


def _identity_text(row: Mapping[str, object]) -> str:
    parts = [f"{name} {_shown(value)}" for name, value in row.items()]
    return ", ".join(parts) if parts else "no identifying columns"


def _shown(value: object) -> str:
    text = "" if value is None else str(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return repr(text)


# --------------------------------------------------------------------------- types


_BOOLEAN_WORDS = ("true", "false", "True", "False", "TRUE", "FALSE")  # as polars' CSV reader
_INTEGER = r"^[+-]?[0-9]+$"


def _probe_targets(ledger: SparkLedger) -> list[str]:
    """A CSV's unvalidated text columns (the input's others, and canonical ones such as
    `duration_s` that no parsing step types), whose types the validation pass probes."""
    if ledger.fmt != "csv":
        return []
    validated = {"workflow", "task", "outcome", "passed", "status", *schema.INTEGER_COLUMNS}
    targets = []
    for name in ledger.columns:
        if name in validated or name == schema.SOURCE_COLUMN:
            continue
        dtype = ledger.other_types.get(name) or ledger.input_types.get(
            ledger.mapping.get(name, name)
        )
        if isinstance(dtype, T.StringType):
            targets.append(name)
    return targets


def _type_probes(ledger: SparkLedger) -> list[Column]:
    """Per probed column: its values, and how many read as an integer, a float, a boolean."""
    probes = []
    for index, name in enumerate(_probe_targets(ledger)):
        value = column(name)
        integer = value.rlike(_INTEGER) & value.try_cast("long").isNotNull()
        probes += [
            F.count(value).alias(f"n{index}"),
            F.count_if(integer).alias(f"i{index}"),
            F.count_if(value.try_cast("double").isNotNull()).alias(f"f{index}"),
            F.count_if(value.isin(list(_BOOLEAN_WORDS))).alias(f"b{index}"),
        ]
    return probes


def _inferred_types(targets: Sequence[str], counts: Mapping[str, Any]) -> dict[str, str]:
    """A CSV's unvalidated text columns typed as the loader types them: `long` where every
    value is an integer, else `double`, else `boolean`, else left as text (from the probes
    of the validation pass, over every row). Returns column -> type for those that change."""
    casts: dict[str, str] = {}
    for index, name in enumerate(targets):
        present = counts[f"n{index}"]
        if not present:
            continue
        if counts[f"i{index}"] == present:
            casts[name] = "long"
        elif counts[f"f{index}"] == present:
            casts[name] = "double"
        elif counts[f"b{index}"] == present:
            casts[name] = "boolean"
    return casts


def _apply_casts(frame: DataFrame, names: Sequence[str], casts: Mapping[str, str]) -> DataFrame:
    if not casts:
        return frame

    def cast(name: str) -> Column:
        if casts[name] == "boolean":
            return (F.lower(column(name)) == "true").alias(name)
        return column(name).try_cast(casts[name]).alias(name)

    return frame.select(*[cast(n) if n in casts else column(n) for n in names])


def polars_schema(frame: DataFrame) -> dict[str, pl.DataType]:
    """The frame's columns as polars dtypes, for the filter language's kinds (text, number,
    boolean, date, datetime, time, other); `outcome` is the outcome Enum, as in the loader."""
    result: dict[str, pl.DataType] = {}
    for spark_field in frame.schema.fields:
        dtype = spark_field.dataType
        polars_type: pl.DataType
        if spark_field.name == "outcome":
            polars_type = schema.OUTCOME_DTYPE
        elif isinstance(dtype, T.StringType):
            polars_type = pl.String()
        elif isinstance(dtype, (T.LongType, T.IntegerType, T.ShortType, T.ByteType)):
            polars_type = pl.Int64()
        elif isinstance(dtype, (T.DoubleType, T.FloatType, T.DecimalType)):
            polars_type = pl.Float64()
        elif isinstance(dtype, T.BooleanType):
            polars_type = pl.Boolean()
        elif isinstance(dtype, T.DateType):
            polars_type = pl.Date()
        elif isinstance(dtype, T.TimestampNTZType):
            polars_type = pl.Datetime("us")
        elif isinstance(dtype, T.TimestampType):
            polars_type = pl.Datetime("us", "UTC")
        else:
            polars_type = pl.Object()
        result[spark_field.name] = polars_type
    return result
