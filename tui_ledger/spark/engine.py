"""Attempts on a Spark Connect server: map, derive outcome and usage, validate.

This is the loader's contract (SPEC.md section 1) written as Spark column expressions, so the
rows never leave the cluster: the same aliases and explicit mapping (`schema.ALIASES`,
`schema.canonical_for`), the same outcome vocabularies (`schema.TRUE_WORDS`, `FALSE_WORDS`,
`MISSING_WORDS`, `STATUS_WORDS`), the same usage rules (missing words, buckets summed where
`tokens` is absent, suspect zeros, `zero_usage_is_missing`) and the same exact reading of a
count from its text (plain, decimal or scientific notation, whole numbers only, nothing past
Int64, nothing read through a float). What differs, and why:

- A distributed table has no line numbers: a bad cell is reported with its row's identifying
  columns (workflow, task, and an id or run column when there is one), never a line.
- Expressions are ANSI-proof: every cast that can fail is a `try_cast` and every sum of
  counts a DECIMAL(38, 0), so a cluster's `spark.sql.ansi.enabled` changes no figure.
- CSV is read with every column as text (the counts are then parsed exactly, as the loader
  does); the other columns get their types from one probe query (integer, float, boolean,
  else text, decided on every row as the loader does), only when a filter or a page needs
  them. Parquet, JSON and tables keep the types the engine gives them.
- The CSV dialect: header row, `"` quotes doubled inside a quoted cell, quoted line ends
  allowed, a malformed row stops the read (FAILFAST). A row whose every cell is empty is
  skipped, as a blank line is.

The session is `session.connect`; an input is read and its columns mapped in `inputs`; the
cell rules `open_ledger` runs as steps are in `cells`.

Nothing here imports pyspark until a function is called from `tui_ledger.spark`; this module
itself is only imported by `tui_ledger.spark` when the Spark path is used.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

import polars as pl
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tui_ledger import schema
from tui_ledger.accounting.checks import ID_COLUMNS
from tui_ledger.load.outcomes import outcome_sentence, status_vocabulary
from tui_ledger.spark.cells import (
    BAD,
    INT64_MAX,
    RAW,
    WHY,
    as_text,
    count_steps,
    is_integral,
    outcome_from,
    read_boolean_passed,
    read_passed,
    read_status,
    stripped,
)
from tui_ledger.spark.errors import SparkCellError, SparkInputError
from tui_ledger.spark.inputs import (
    Input,
    column,
    input_error,
    map_columns,
    read_input,
    resolve_input,
)

__all__ = [
    "SparkLedger",
    "SparkLoadReport",
    "finish_validation",
    "open_ledger",
    "polars_schema",
    "read_errors",
    "validation_aggregates",
    "validation_columns",
    "validation_plan",
]

# Helper columns live only inside the engine's plans; none reaches a result (and `cells.WHY`,
# `cells.BAD`).
_ZERO = "__ledger_zero"
_MISMATCH = "__ledger_mismatch"
_CONTRADICTING = "__ledger_contradicting"
_PASSED_UNKNOWN = "__ledger_passed_unknown"
_STATUS_UNKNOWN = "__ledger_status_unknown"
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
                summary = to_rows(validation_plan(self).collect())
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


def to_rows(rows: list[Any]) -> dict[str, Any]:
    """The one row of a global aggregation as a dict."""
    return dict(rows[0].asDict())


def open_ledger(
    spark: SparkSession,
    location: str,
    *,
    columns: Mapping[str, str] | None = None,
    zero_usage_is_missing: bool = False,
    fmt: str | None = None,
) -> SparkLedger:
    """Map an input on the cluster onto the canonical attempt schema (no rows are read yet).

    `location` is a path or glob the cluster can read (Parquet, CSV, TSV, JSON, NDJSON, by
    extension or `fmt`; a folder is read as Parquet unless `fmt` says otherwise) or
    `table:catalog.schema.name`. `columns` maps canonical names to input columns and beats
    the aliases. Raises `SparkInputError` for a missing input or a missing or doubly named
    column; unreadable cells are found by `SparkLedger.validate`.
    """
    item = resolve_input(location, fmt)
    raw = read_input(spark, item)
    fields = {f.name: f.dataType for f in raw.schema.fields}
    names = list(fields)
    mapping = map_columns(names, columns or {}, item.display)
    source_of = {name: canonical for canonical, name in mapping.items()}
    taken = set(schema.CANONICAL_ORDER) | {schema.SOURCE_COLUMN, schema.LINE_COLUMN, "outcome"}
    taken |= set(names)
    derived: list[str] = []
    kept: list[Column] = []
    other_types: dict[str, T.DataType] = {}  # the non-canonical columns' types, as read
    canonical: dict[str, Column] = {}  # canonical name -> the input column
    renamed: dict[str, str] = {}
    for name in names:
        if name in source_of:
            canonical[source_of[name]] = column(name)
        elif name in schema.CANONICAL_ORDER or name in (
            schema.SOURCE_COLUMN,
            schema.LINE_COLUMN,
            "outcome",
        ):
            new = _free_name(f"{name}_in_file", taken)
            renamed[name] = new
            kept.append(column(name).alias(new))
            other_types[new] = fields[name]
        else:
            kept.append(column(name))
            other_types[name] = fields[name]
    if renamed:
        pairs = ", ".join(f"{old!r} as {new!r}" for old, new in renamed.items())
        derived.append(f"kept the input's unmapped {pairs}")

    # A row whose every cell is empty is a blank line, not an attempt.
    filled = reduce(lambda a, b: a | b, [column(name).isNotNull() for name in names])
    frame = raw.where(filled) if item.fmt in ("csv", "json") else raw
    source = F.col("_metadata.file_path") if item.fmt != "table" else F.lit(item.location)
    # Text keys as read too, where the rows are not checkpointed (their counts are typed):
    # the summary groups by them and trims the groups, not every row (`fine_cells`).
    raws = {RAW + k: canonical[k] for k in _raw_keys(canonical, fields, mapping)}
    base = frame.select(
        *[expr.alias(name) for name, expr in canonical.items()],
        *kept,
        source.alias(schema.SOURCE_COLUMN),
        *[expr.alias(name) for name, expr in raws.items()],
    )
    # The base's columns, known here (each frame's `columns` would ask the server again).
    base_names = [*canonical, *other_types, schema.SOURCE_COLUMN, *raws]
    # The same plan with the rows' order in their files, for pages and bootstrap draws only:
    # a position from `monotonically_increasing_id` is nondeterministic to the optimiser and
    # would stop filters reaching the scan, so the aggregations never see it.
    ordered_base = (
        frame.select(
            *[expr.alias(name) for name, expr in canonical.items()],
            *kept,
            source.alias(schema.SOURCE_COLUMN),
            *[expr.alias(name) for name, expr in raws.items()],
            F.col("_metadata.file_block_start").alias(ORDER_COLUMNS[1]),
            F.monotonically_increasing_id().alias(ORDER_COLUMNS[2]),
        )
        if item.fmt != "table"
        else None
    )
    types = {name: fields[mapping[name]] for name in canonical}

    # Keys: trimmed text; an empty workflow is an error.
    steps: list[dict[str, Column]] = [{}]
    for key in ("workflow", "task"):
        if key in canonical:
            steps[0][key] = stripped(as_text(F.col(key), types[key]))
    workflow = F.col("workflow")
    empty = workflow.isNull() | (workflow == "")
    steps.append(
        {
            WHY + "workflow": F.when(empty, F.lit("empty")),
            BAD + "workflow": F.when(empty, workflow),
        }
    )

    # Counts, step by step side by side (see `count_steps`).
    counts = [name for name in schema.INTEGER_COLUMNS if name in mapping]
    parsers = [count_steps(name, types[name]) for name in counts]
    for index in range(max((len(p) for p in parsers), default=0)):
        steps.append(
            {k: v for parser in parsers if index < len(parser) for k, v in parser[index].items()}
        )
    buckets = [name for name in schema.BUCKETS if name in mapping]
    derived_tokens: dict[str, Column] = {}
    if buckets:
        total = reduce(lambda a, b: a + b, [F.col(name).cast("decimal(21,0)") for name in buckets])
        if "tokens" not in mapping:
            steps.append({"__ledger_total": total})
            over = F.col("__ledger_total") > F.lit(INT64_MAX)
            derived_tokens = {
                "tokens": F.when(~over, F.col("__ledger_total").cast("long")),
                WHY + "tokens": F.when(over, F.lit("range")),
                BAD + "tokens": F.when(over, F.col("__ledger_total").cast("string")),
            }
            derived.append(
                f"tokens = {' + '.join(buckets)} (a row missing any of them has missing usage)"
            )
        elif "input_tokens" in buckets and "output_tokens" in buckets:
            tokens_now = F.col("tokens")
            derived_tokens = {
                _MISMATCH: F.coalesce(
                    tokens_now.isNotNull() & total.isNotNull() & (total != tokens_now),
                    F.lit(False),
                )
            }
    if derived_tokens:
        steps.append(derived_tokens)
    tokens = F.col("tokens")
    usage: dict[str, Column] = {_ZERO: F.coalesce(tokens == 0, F.lit(False))}
    if zero_usage_is_missing:
        usage["tokens"] = F.when(tokens != 0, tokens)
        derived.append("a usage of exactly 0 tokens is read as missing (--zero-usage-is-missing)")
    steps.append(usage)

    # Outcome words, then the outcome (SPEC.md section 1).
    words: dict[str, Column] = {}
    for name in ("passed", "status"):
        if name in canonical:
            words[f"__ledger_{name}_text"] = as_text(F.col(name), types[name])
    steps.append(words)
    steps.append(
        {
            **(
                {"__ledger_passed_word": _passed_word(types["passed"])}
                if "passed" in canonical
                else {}
            ),
            **(
                {"__ledger_status_word": read_status(F.col("__ledger_status_text"))}
                if "status" in canonical
                else {}
            ),
        }
    )
    passed_word = F.col("__ledger_passed_word") if "passed" in canonical else None
    status_word = F.col("__ledger_status_word") if "status" in canonical else None
    outcome, contradicting = outcome_from(passed_word, status_word)
    verdict: dict[str, Column] = {
        "outcome": outcome,
        _CONTRADICTING: F.coalesce(contradicting, F.lit(False)),
    }
    if passed_word is not None:
        verdict["passed"] = F.when(passed_word == "true", F.lit(True)).when(
            passed_word == "false", F.lit(False)
        )
        verdict[_PASSED_UNKNOWN] = passed_word == "unknown"
        verdict[BAD + "passed"] = F.when(passed_word == "unknown", F.col("__ledger_passed_text"))
    if status_word is not None:
        verdict[_STATUS_UNKNOWN] = status_word == "unknown"
        verdict[BAD + "status"] = F.when(status_word == "unknown", F.col("__ledger_status_text"))
    steps.append(verdict)
    derived.append(outcome_sentence(mapping))
    frame, frame_names = _finished(base, base_names, steps)
    order_frame = (
        _finished(ordered_base, [*base_names, *ORDER_COLUMNS[1:3]], steps)[0]
        if ordered_base is not None
        else None
    )
    identity = ["workflow", *(["task"] if "task" in canonical else [])]
    id_column = next(
        (name for name in (*ID_COLUMNS, "run", "attempt") if name in frame_names), None
    )
    if id_column is not None:
        identity.append(id_column)
    return SparkLedger(
        spark=spark,
        source=item.display,
        frame=frame,
        names=frame_names,
        mapping=mapping,
        derived=derived,
        identity=identity,
        fmt=item.fmt,
        input_types=fields,
        other_types=other_types,
        order_frame=order_frame,
        parsed_counts=tuple(name for name in counts if not is_integral(types[name])),
        zero_is_missing=zero_usage_is_missing,
        _casts=None if item.fmt == "csv" else {},  # a CSV's types come from its validation
    )


def _raw_keys(
    canonical: Mapping[str, Column], fields: Mapping[str, T.DataType], mapping: Mapping[str, str]
) -> list[str]:
    """The text keys kept as read (`cells.RAW`): where no count is parsed from text."""
    if any(not is_integral(fields[mapping[n]]) for n in schema.INTEGER_COLUMNS if n in mapping):
        return []
    keys = [k for k in ("workflow", "task") if k in canonical]
    return [k for k in keys if isinstance(fields[mapping[k]], T.StringType)]


def _passed_word(dtype: T.DataType) -> Column:
    """`read_passed` of the input's `passed`: a BOOLEAN column as it is, else its text."""
    if isinstance(dtype, T.BooleanType):
        return read_boolean_passed(F.col("passed"))
    return read_passed(F.col("__ledger_passed_text"))


_HELPERS = (_ZERO, _MISMATCH, _CONTRADICTING, _PASSED_UNKNOWN, _STATUS_UNKNOWN)


def _finished(
    frame: DataFrame, columns: Sequence[str], steps: Sequence[Mapping[str, Column]]
) -> tuple[DataFrame, tuple[str, ...]]:
    """`frame` (whose columns are `columns`) through the parsing steps, then in the loader's
    column order: canonical columns, the input's others, `source`, then the helpers
    validation reads (and the order columns, where the frame has them); the steps'
    temporaries are dropped. The columns are followed here, not asked of the server: a step
    replaces a column of its name where it stands, or adds it at the end (`withColumns`)."""
    columns = list(columns)
    for step in steps:
        if step:
            frame = frame.withColumns(dict(step))
            columns += [name for name in step if name not in columns]
    present = set(columns)
    canonical = [name for name in schema.CANONICAL_ORDER if name in present]
    others = [
        name
        for name in columns
        if name not in canonical
        and not name.startswith(HELPER_PREFIX)
        and name != schema.SOURCE_COLUMN
    ]
    helpers = [name for name in columns if name.startswith((WHY, BAD, RAW)) or name in _HELPERS]
    order = [name for name in ORDER_COLUMNS[1:] if name in present]
    names = (*canonical, *others, schema.SOURCE_COLUMN, *helpers, *order)
    kept = tuple(name for name in names if name not in ORDER_COLUMNS[1:])
    return frame.select(*[column(name) for name in names]), kept


def _free_name(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}_{number}", number + 1
    taken.add(candidate)
    return candidate


# --------------------------------------------------------------------------- validation


def _warning_flags(names: Sequence[str]) -> dict[str, Column]:
    flags = {
        "contradicting_status": F.col(_CONTRADICTING),
        "bucket_mismatch": F.col(_MISMATCH) if _MISMATCH in names else None,
        "suspect_zero": F.col(_ZERO),
        "missing_usage": F.col("tokens").isNull(),
        "ungraded": F.col("outcome") == "ungraded",
    }
    return {kind: flag for kind, flag in flags.items() if flag is not None}


def _problems(names: Sequence[str]) -> dict[str, Column]:
    problems: dict[str, Column] = {}
    if _PASSED_UNKNOWN in names:
        problems["passed"] = F.col(_PASSED_UNKNOWN)
    if _STATUS_UNKNOWN in names:
        problems["status"] = F.col(_STATUS_UNKNOWN)
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
