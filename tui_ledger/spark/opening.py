"""An input on a Spark Connect server mapped onto the attempt schema: the parsing plan.

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
cell rules `open_ledger` runs as steps are in `cells`; the ledger it returns, its validation
pass and a CSV's column types are `engine`'s.

Imports pyspark: only the Spark path imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tui_ledger import schema
from tui_ledger.accounting.checks import ID_COLUMNS
from tui_ledger.load.columns import free_name
from tui_ledger.load.outcomes import outcome_sentence
from tui_ledger.spark.cells import (
    BAD,
    CONTRADICTING,
    FLAGS,
    INT64_MAX,
    MISMATCH,
    PASSED_UNKNOWN,
    RAW,
    STATUS_UNKNOWN,
    WHY,
    ZERO,
    as_text,
    count_steps,
    is_integral,
    outcome_from,
    read_boolean_passed,
    read_passed,
    read_status,
    stripped,
)
from tui_ledger.spark.engine import HELPER_PREFIX, ORDER_COLUMNS, SparkLedger
from tui_ledger.spark.inputs import column, map_columns, read_input, resolve_input

__all__ = ["open_ledger"]


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
    taken = set(schema.RESERVED_NAMES)
    taken |= set(names)
    derived: list[str] = []
    kept: list[Column] = []
    other_types: dict[str, T.DataType] = {}  # the non-canonical columns' types, as read
    canonical: dict[str, Column] = {}  # canonical name -> the input column
    renamed: dict[str, str] = {}
    for name in names:
        if name in source_of:
            canonical[source_of[name]] = column(name)
        elif name in schema.RESERVED_NAMES:
            new = free_name(f"{name}_in_file", taken)
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
                MISMATCH: F.coalesce(
                    tokens_now.isNotNull() & total.isNotNull() & (total != tokens_now),
                    F.lit(False),
                )
            }
    if derived_tokens:
        steps.append(derived_tokens)
    tokens = F.col("tokens")
    usage: dict[str, Column] = {ZERO: F.coalesce(tokens == 0, F.lit(False))}
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
        CONTRADICTING: F.coalesce(contradicting, F.lit(False)),
    }
    if passed_word is not None:
        verdict["passed"] = F.when(passed_word == "true", F.lit(True)).when(
            passed_word == "false", F.lit(False)
        )
        verdict[PASSED_UNKNOWN] = passed_word == "unknown"
        verdict[BAD + "passed"] = F.when(passed_word == "unknown", F.col("__ledger_passed_text"))
    if status_word is not None:
        verdict[STATUS_UNKNOWN] = status_word == "unknown"
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
    helpers = [name for name in columns if name.startswith((WHY, BAD, RAW)) or name in FLAGS]
    order = [name for name in ORDER_COLUMNS[1:] if name in present]
    names = (*canonical, *others, schema.SOURCE_COLUMN, *helpers, *order)
    kept = tuple(name for name in names if name not in ORDER_COLUMNS[1:])
    return frame.select(*[column(name) for name in names]), kept
