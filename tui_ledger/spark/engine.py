"""Attempts on a Spark Connect server: connect, read, map, derive outcome and usage, validate.

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

Nothing here imports pyspark until a function is called from `tui_ledger.spark`; this module
itself is only imported by `tui_ledger.spark` when the Spark path is used.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import polars as pl
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tui_ledger import schema
from tui_ledger.checks import ID_COLUMNS
from tui_ledger.spark.errors import (
    SparkCellError,
    SparkEngineError,
    SparkInputError,
    SparkUnreachable,
)

__all__ = [
    "TABLE_PREFIX",
    "SparkLedger",
    "SparkLoadReport",
    "column",
    "connect",
    "open_ledger",
    "polars_schema",
]

TABLE_PREFIX = "table:"
CONNECT_TIMEOUT_S = 10.0
INT64_MAX = 2**63 - 1
# Helper columns live only inside the engine's plans; none reaches a result.
_WHY = "__ledger_why_"  # + canonical name: why a cell cannot be read (null when it can)
_BAD = "__ledger_bad_"  # + canonical name: the cell as written, where it cannot be read
_ZERO = "__ledger_zero"
_MISMATCH = "__ledger_mismatch"
_CONTRADICTING = "__ledger_contradicting"
_PASSED_UNKNOWN = "__ledger_passed_unknown"
_STATUS_UNKNOWN = "__ledger_status_unknown"
HELPER_PREFIX = "__ledger_"
# Internal order of the rows of a file input (file, block, position in the scan): the files'
# own order, for a page's tiebreak and a bootstrap's draws.
ORDER_COLUMNS = (schema.SOURCE_COLUMN, "__ledger_block", "__ledger_position")

# White space as the loader strips it: polars' strip_chars (Rust's char::is_whitespace) for
# keys and counts; Python's str.strip (which also strips \x1c-\x1f) for outcome words.
_RUST_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_PYTHON_SPACE = _RUST_SPACE + "\x1c\x1d\x1e\x1f"
# The loader's number grammar, for Java's regex engine (same syntax).
_NUMBER = r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$"
_INFINITY_WORDS = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity")
# Exponents are clamped to this before arithmetic: past it every count is out of range or
# fractional anyway, and long arithmetic can then never overflow (an error under ANSI).
_EXPONENT_CLAMP = 1_000_000_000

_COUNT_PROBLEMS: dict[str, str] = {
    "negative": "is negative; token counts are 0 or more",
    "not_number": "is not a number",
    "fractional": "is not a whole number; token counts are whole numbers",
    "infinite": "is not a finite number",
    "range": "is larger than the biggest count stored exactly (9,223,372,036,854,775,807)",
}

_FORMATS: dict[str, tuple[str, dict[str, str]]] = {
    ".csv.gz": ("csv", {}),
    ".tsv.gz": ("csv", {"sep": "\t"}),
    ".csv": ("csv", {}),
    ".tsv": ("csv", {"sep": "\t"}),
    ".parquet": ("parquet", {}),
    ".jsonl": ("json", {}),
    ".ndjson": ("json", {}),
    ".json": ("json", {"multiLine": "true"}),
}
_FORMAT_NAMES: dict[str, str] = {
    "csv": ".csv",
    "tsv": ".tsv",
    "parquet": ".parquet",
    "json": ".json",
    "ndjson": ".jsonl",
    "jsonl": ".jsonl",
}
_CSV_OPTIONS = {
    "header": "true",
    "inferSchema": "false",
    "escape": '"',  # RFC 4180: a quote inside a quoted cell is doubled
    "multiLine": "true",  # a quoted cell may hold a line end, as the loader reads it
    "mode": "FAILFAST",  # a malformed row stops the read instead of becoming nulls
    "encoding": "UTF-8",
}


# --------------------------------------------------------------------------- connection


def connect(url: str | None = None, *, timeout: float = CONNECT_TIMEOUT_S) -> SparkSession:
    """A Spark Connect session at `url` (or $SPARK_REMOTE), checked to answer.

    An unreachable server is a `SparkUnreachable` within `timeout` seconds, not after the
    client's ten minutes of retries. The session reads column names case-sensitively, so
    `Tokens` and `tokens` are two columns, as they are in the file.
    """
    url = url or os.environ.get("SPARK_REMOTE")
    if not url:
        raise SparkUnreachable(
            "no Spark Connect URL: pass --spark sc://HOST:PORT or set SPARK_REMOTE."
        )
    parsed = urlparse(url)
    if parsed.scheme != "sc" or not parsed.hostname:
        raise SparkUnreachable(
            f"{url!r} is not a Spark Connect URL; write it as sc://HOST:PORT (e.g. "
            "sc://127.0.0.1:15002)."
        )
    host, port = parsed.hostname, parsed.port or 15002
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise SparkUnreachable(
            f"cannot reach the Spark Connect server at {host}:{port} ({reason.lower()}); "
            "check the URL and that the server is running."
        ) from None
    try:
        spark = SparkSession.builder.remote(url).create()
        _few_retries(spark)
        spark.conf.set("spark.sql.caseSensitive", "true")
    except PySparkException as error:
        raise SparkUnreachable(
            f"the server at {host}:{port} does not answer as Spark Connect: {first_line(error)}"
        ) from None
    return spark


def _few_retries(spark: SparkSession) -> None:
    """Retry a dropped call a few times over seconds, not 15 times over ten minutes."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    client = getattr(spark, "client", None)
    if client is not None and hasattr(client, "set_retry_policies"):
        client.set_retry_policies([DefaultPolicy(max_retries=3, max_backoff=2000)])


def first_line(error: BaseException) -> str:
    """The first line of an engine error, without its JVM stack or error-class boilerplate."""
    text = str(error).strip().splitlines()
    line = text[0] if text else type(error).__name__
    return line.removeprefix("[").split("] ", 1)[-1] if line.startswith("[") else line


# --------------------------------------------------------------------------- reading


def column(name: str) -> Column:
    """A column by its exact name, even one holding dots, spaces or backticks."""
    return F.col("`" + name.replace("`", "``") + "`")


@dataclass(frozen=True)
class _Input:
    display: str
    location: str
    fmt: str  # csv, parquet, json, table
    options: dict[str, str]


def _input(location: str, fmt: str | None) -> _Input:
    if location.startswith(TABLE_PREFIX):
        name = location.removeprefix(TABLE_PREFIX)
        if not name:
            raise SparkInputError("table: needs a table name, e.g. table:catalog.schema.name")
        return _Input(location, name, "table", {})
    suffix = _FORMAT_NAMES.get(fmt.lower(), "") if fmt else ""
    if fmt and not suffix:
        raise SparkInputError(
            f"--format {fmt}: the Spark path reads {', '.join(_FORMAT_NAMES)}; pick one."
        )
    if not suffix:
        lowered = location.rstrip("/").lower()
        suffix = next((s for s in _FORMATS if lowered.endswith(s)), ".parquet")
    kind, options = _FORMATS[suffix]
    # A local path that exists here is given to the server whole (a local server's working
    # folder is not the user's); anything else is the cluster's to resolve (s3a://, ...).
    resolved = location
    if "://" not in location and not location.startswith("file:"):
        local = Path(location).expanduser()
        if local.exists() or (any(c in location for c in "*?[") and local.parent.exists()):
            resolved = str(local.absolute())
    return _Input(location, resolved, kind, dict(options))


def _read(spark: SparkSession, item: _Input) -> DataFrame:
    """The input as the engine reads it, its schema resolved now (a missing path or table is
    an error here, not at the first figure)."""
    try:
        if item.fmt == "table":
            frame = spark.read.table(item.location)
        elif item.fmt == "csv":
            frame = spark.read.options(**_CSV_OPTIONS, **item.options).csv(item.location)
        elif item.fmt == "json":
            frame = spark.read.options(**item.options).json(item.location)
        else:
            frame = spark.read.parquet(item.location)
        frame.schema  # noqa: B018 - resolving the schema is the point: it surfaces a bad input
    except PySparkException as error:
        raise _input_error(item, error) from None
    return frame


def _input_error(item: _Input, error: BaseException) -> SparkEngineError:
    text = str(error)
    if "PATH_NOT_FOUND" in text or "Path does not exist" in text:
        return SparkInputError(f"{item.display}: no such file or folder on the cluster.")
    if "TABLE_OR_VIEW_NOT_FOUND" in text:
        return SparkInputError(
            f"{item.display}: no such table; name it as table:catalog.schema.name."
        )
    if "UNAVAILABLE" in text or "Connection refused" in text:
        return SparkUnreachable(f"the Spark Connect server went away: {first_line(error)}")
    return SparkInputError(f"{item.display}: cannot be read: {first_line(error)}")


# --------------------------------------------------------------------------- mapping


def map_columns(names: Sequence[str], explicit: Mapping[str, str], display: str) -> dict[str, str]:
    """canonical -> input column: the explicit mapping first, then the aliases (SPEC.md 1).

    The same rule as the loader: an explicit `--col` beats the aliases; two columns that both
    map to one canonical name are an error naming both.
    """
    mapping: dict[str, str] = {}
    claimed: dict[str, str] = {}
    for key, wanted in explicit.items():
        canonical = schema.normalise_name(key)
        if canonical not in schema.ALIASES:
            raise SparkInputError(
                f"--col {key}={wanted}: {key!r} is not a column ledger-tui knows; "
                f"use one of {', '.join(schema.ALIASES)}."
            )
        if canonical in mapping:
            raise SparkInputError(
                f"--col {key}={wanted}: {canonical} is mapped twice; keep one --col {canonical}."
            )
        exact = [name for name in names if name == wanted]
        loose = [
            name for name in names if schema.normalise_name(name) == schema.normalise_name(wanted)
        ]
        found = exact[0] if exact else (loose[0] if len(loose) == 1 else None)
        if found is None:
            raise SparkInputError(
                f"{display}: --col {key}={wanted} names no column of this input; its columns "
                f"are {_listing(names)}."
            )
        if found in claimed:
            raise SparkInputError(
                f"{display}: column {found!r} is given for both {claimed[found]} and "
                f"{canonical}; map each to a different column."
            )
        mapping[canonical] = found
        claimed[found] = canonical
    candidates: dict[str, list[str]] = {}
    for name in names:
        aliased = schema.canonical_for(name)
        if name not in claimed and aliased is not None and aliased not in mapping:
            candidates.setdefault(aliased, []).append(name)
    for canonical, found_names in candidates.items():
        if len(found_names) > 1:
            listed = " and ".join(repr(name) for name in found_names)
            raise SparkInputError(
                f"{display}: columns {listed} all name {canonical}; rename one, or pick one "
                f"with --col {canonical}=COLUMN."
            )
        mapping[canonical] = found_names[0]
    _require(mapping, names, display)
    return mapping


def _require(mapping: Mapping[str, str], names: Sequence[str], display: str) -> None:
    has = f"its columns are {_listing(names)}" if names else "it has no columns"
    if "workflow" not in mapping:
        raise SparkInputError(
            f"{display}: no workflow column ({has}); name it one of "
            f"{', '.join(schema.ALIASES['workflow'])}, or pass --col workflow=COLUMN."
        )
    if "passed" not in mapping and "status" not in mapping:
        raise SparkInputError(
            f"{display}: no outcome column ({has}); add a passed column "
            f"({', '.join(schema.ALIASES['passed'])}) or a status column "
            f"({', '.join(schema.ALIASES['status'])}), or pass --col passed=COLUMN or "
            "--col status=COLUMN."
        )
    if "tokens" not in mapping and not any(bucket in mapping for bucket in schema.BUCKETS):
        raise SparkInputError(
            f"{display}: no tokens column ({has}); name it one of "
            f"{', '.join(schema.ALIASES['tokens'])}, give token buckets "
            f"({', '.join(schema.BUCKETS)}), or pass --col tokens=COLUMN."
        )


def _listing(names: Sequence[str], limit: int = 12) -> str:
    shown = list(names[:limit])
    if len(names) > limit:
        shown.append(f"and {len(names) - limit} more")
    return ", ".join(shown)


# --------------------------------------------------------------------------- cells


def _stripped(value: Column, spaces: str = _RUST_SPACE) -> Column:
    # trim(BOTH chars FROM value): no regular expression per row.
    return F.trim(value, F.lit(spaces))


def _is_integral(dtype: T.DataType) -> bool:
    if isinstance(dtype, T.DecimalType):
        return dtype.scale == 0 and dtype.precision <= 18
    return isinstance(dtype, (T.LongType, T.IntegerType, T.ShortType, T.ByteType))


def _as_text(value: Column, dtype: T.DataType) -> Column:
    """A cell as text, as the loader validates it: a nested value as its JSON."""
    if isinstance(dtype, (T.ArrayType, T.MapType, T.StructType)):
        return F.to_json(value)
    if isinstance(dtype, T.StringType):
        return value
    return value.try_cast("string")


def _count_steps(name: str, dtype: T.DataType) -> list[dict[str, Column]]:
    """Steps that read one token-count column `name` into `name` (LONG, null = missing),
    `_WHY + name` (why a cell is not a count, null when fine) and `_BAD + name` (the cell as
    written, where it is not).

    Integers arrive as they are (only the sign is checked). Anything else is read from its
    text exactly as the loader reads it: `try_cast` takes the plain integers (the common
    case); only the rest go through the exact decimal parser. Each step is one `withColumns`
    over named helper columns, so no expression repeats another inside itself: written as one
    nested expression, the parser is a tree Spark takes tens of seconds to plan and compile.
    """
    raw = column(name)
    if _is_integral(dtype):
        value = raw.cast("long")
        return [
            {name: value},
            {
                _WHY + name: F.when(F.col(name) < 0, F.lit("negative")),
                _BAD + name: F.when(F.col(name) < 0, F.col(name).cast("string")),
            },
        ]

    def h(part: str) -> Column:
        return F.col(f"__ledger_{name}_{part}")

    def named(parts: dict[str, Column]) -> dict[str, Column]:
        return {f"__ledger_{name}_{part}": expr for part, expr in parts.items()}

    rest = h("rest")
    return [
        named({"text": _as_text(raw, dtype)}),
        named({"fast": h("text").try_cast("long")}),
        named({"rest": F.when(h("fast").isNull(), _stripped(h("text")))}),
        named(
            {
                "missing": F.lower(rest).isin(list(schema.MISSING_WORDS)) | h("text").isNull(),
                "matched": rest.rlike(_NUMBER),
                "sign": F.regexp_extract(rest, _NUMBER, 1),
                "fraction": F.regexp_extract(rest, _NUMBER, 3),
                "digits": F.concat(
                    F.regexp_extract(rest, _NUMBER, 2), F.regexp_extract(rest, _NUMBER, 3)
                ),
                "exponent_text": F.regexp_extract(rest, _NUMBER, 4),
            }
        ),
        named(
            {
                "significant": F.regexp_replace(h("digits"), "^0+", ""),
                "parsed_exponent": h("exponent_text").try_cast("long"),
            }
        ),
        named(
            {
                "trimmed": F.regexp_replace(h("significant"), "0+$", ""),
                # least/greatest skip nulls, so an unreadable exponent is kept null here.
                "exponent": F.when(h("exponent_text") == "", F.lit(0)).when(
                    h("parsed_exponent").isNotNull(),
                    F.least(
                        F.greatest(h("parsed_exponent"), F.lit(-_EXPONENT_CLAMP)),
                        F.lit(_EXPONENT_CLAMP),
                    ),
                ),
            }
        ),
        named(
            {
                # value = trimmed * 10 ** scale; trailing zeros moved from digits to the scale
                "scale": h("exponent")
                - F.length(h("fraction"))
                + F.length(h("significant"))
                - F.length(h("trimmed")),
                "zero": (h("digits") != "") & (h("trimmed") == ""),
            }
        ),
        named({"width": F.length(h("trimmed")) + h("scale")}),
        named(
            {
                "exact": F.when(
                    ~h("zero") & (h("scale") >= 0) & (h("width") <= 19),
                    F.rpad(h("trimmed"), F.least(h("width"), F.lit(19)).cast("int"), "0").try_cast(
                        "decimal(20,0)"
                    ),
                )
            }
        ),
        named(
            {
                "slow": F.when(h("zero"), F.lit(0).cast("long")).when(
                    h("exact") <= F.lit(INT64_MAX), h("exact").cast("long")
                )
            }
        ),
        named(
            {
                "value": F.when(h("fast").isNotNull(), h("fast"))
                .when(h("missing"), F.lit(None).cast("long"))
                .otherwise(h("slow")),
                "why": F.when(h("fast") < 0, F.lit("negative"))
                .when(h("fast").isNotNull() | h("missing"), F.lit(None).cast("string"))
                .when(F.lower(rest).isin(list(_INFINITY_WORDS)), F.lit("infinite"))
                .when(~h("matched") | (h("digits") == ""), F.lit("not_number"))
                .when(h("zero"), F.lit(None).cast("string"))
                .when(h("sign") == "-", F.lit("negative"))
                .when(
                    (h("exponent_text") != "") & h("parsed_exponent").isNull(),
                    F.when(h("exponent_text").startswith("-"), F.lit("fractional")).otherwise(
                        F.lit("range")
                    ),
                )
                .when(h("scale") < 0, F.lit("fractional"))
                .when(h("slow").isNull(), F.lit("range")),
            }
        ),
        {
            name: h("value").cast("long"),
            _WHY + name: h("why"),
            _BAD + name: F.when(h("why").isNotNull(), h("text")),
        },
    ]


def _word_table(words: Mapping[str, Any]) -> dict[str, Any]:
    """The spellings a cell is most often written in, for a hash lookup before any
    normalising (lower case, Capitalised, UPPER case of every vocabulary word)."""
    table: dict[str, Any] = {}
    for word, meaning in words.items():
        for spelling in (word, word.capitalize(), word.upper()):
            table.setdefault(spelling, meaning)
    return table


def _lookup(value: Column, table: Mapping[str, Any], otherwise: Column) -> Column:
    """`table[value]` where `value` is a key, else `otherwise` (a CASE over a few values)."""
    by_meaning: dict[Any, list[str]] = {}
    for word, meaning in table.items():
        by_meaning.setdefault(meaning, []).append(word)
    result = otherwise
    for meaning, words in by_meaning.items():
        result = F.when(value.isin(words), F.lit(meaning)).otherwise(result)
    return result


_PASSED_WORDS: dict[str, str] = {
    **dict.fromkeys(schema.TRUE_WORDS, "true"),
    **dict.fromkeys(schema.FALSE_WORDS, "false"),
    **dict.fromkeys(schema.MISSING_WORDS, "missing"),
}


def _passed(raw: Column) -> Column:
    """'true', 'false', 'missing' or 'unknown' for a `passed` cell (the loader's rule:
    trimmed, any case)."""
    word = F.lower(_stripped(raw, _PYTHON_SPACE))
    slow = _lookup(word, _PASSED_WORDS, F.lit("unknown"))
    return F.when(raw.isNull(), F.lit("missing")).otherwise(
        _lookup(raw, _word_table(_PASSED_WORDS), slow)
    )


def _status(raw: Column) -> Column:
    """The outcome a `status` cell names, or 'unknown' (the loader's rule: a missing word is
    ungraded; otherwise trimmed, lower case, spaces, dots and dashes read as `_`)."""
    lowered = F.lower(_stripped(raw, _PYTHON_SPACE))
    normalised = F.regexp_replace(lowered, r"(?U)[\s.\-]+", "_")
    slow = F.when(lowered.isin(list(schema.MISSING_WORDS)), F.lit("ungraded")).otherwise(
        _lookup(normalised, schema.STATUS_WORDS, F.lit("unknown"))
    )
    fast = {
        **_word_table(schema.STATUS_WORDS),
        **_word_table(dict.fromkeys(schema.MISSING_WORDS, "ungraded")),
    }
    return F.when(raw.isNull(), F.lit("ungraded")).otherwise(_lookup(raw, fast, slow))


def _outcome(passed: Column | None, status: Column | None) -> tuple[Column, Column]:
    """SPEC.md section 1: the outcome from `passed`, `status`, or both; and whether a row's
    status contradicts its `passed`. Inputs are `_passed` and `_status` words."""
    if passed is not None and status is not None:
        outcome = (
            F.when(passed == "true", F.lit("passed"))
            .when(
                passed == "false",
                F.when(status.isin("timeout", "error"), status).otherwise(F.lit("failed")),
            )
            .otherwise(status)
        )
        contradicting = ((passed == "true") & status.isin("failed", "timeout", "error")) | (
            (passed == "false") & (status == "passed")
        )
        return outcome, contradicting
    if passed is not None:
        outcome = (
            F.when(passed == "true", F.lit("passed"))
            .when(passed == "false", F.lit("failed"))
            .otherwise(F.lit("ungraded"))
        )
        return outcome, F.lit(False)
    assert status is not None
    return status, F.lit(False)


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
    the validation reads. `attempts()` is the same plan without the helpers, validated first.
    Nothing is computed until a method asks a question.
    """

    spark: SparkSession
    source: str
    frame: DataFrame
    mapping: dict[str, str]
    derived: list[str]
    identity: list[str]
    fmt: str
    input_types: dict[str, T.DataType]
    order_frame: DataFrame | None = None
    parsed_counts: tuple[str, ...] = ()  # count columns read from text by the exact parser
    zero_is_missing: bool = False
    _report: SparkLoadReport | None = None
    _checkpoint: DataFrame | None = None
    _casts: dict[str, str] | None = None

    @property
    def columns(self) -> list[str]:
        """The attempts' columns, in the loader's order (canonical first)."""
        return [name for name in self.frame.columns if not name.startswith(HELPER_PREFIX)]

    def validate(self) -> SparkLoadReport:
        """One pass over the whole input: the first unreadable cell raises `SparkCellError`;
        otherwise the warnings' counts. Run once; later calls return the same report."""
        if self._report is None:
            self._report = _validate(self)
        return self._report

    def attempts(self) -> DataFrame:
        """The validated attempts, without helper columns (types as read)."""
        self.validate()
        return self.frame.select(*[column(name) for name in self.columns])

    def typed_attempts(self) -> DataFrame:
        """The validated attempts with a CSV's other columns typed as the loader types them
        (integer, float or boolean where every value reads so, else text): one probe query,
        run once, only when a filter or a page needs it. See `_queryable` for when the rows
        are materialised first."""
        frame, _ = self._queryable()
        return frame.select(*[column(name) for name in self.columns])

    def ordered_attempts(self) -> tuple[DataFrame, list[str]]:
        """The typed attempts with a total order's tiebreak, and the tiebreak's columns:
        a file input's rows in their files' order (file, block, position in the scan); a
        table's by every column (it has no order of its own, so ties are identical rows)."""
        frame, tiebreak = self._queryable(ordered=True)
        return frame, tiebreak

    def _queryable(self, *, ordered: bool = False) -> tuple[DataFrame, list[str]]:
        """The plan filters and pages run on (validated and typed; with the order columns
        when `ordered`).

        Where counts are parsed from text (CSV, or JSON strings), the parsed rows are
        materialised once (`localCheckpoint`, on the cluster, memory then disk), with their
        order columns: a filter on a parsed count (`tokens>1k`) is otherwise pushed down
        through every parsing step, each helper's expression pasted in at each of its uses,
        a tree Spark took 10-15 s to plan for a 360-row CSV; and every keystroke would parse
        the text again. Typed inputs (Parquet, tables) stay lazy, so a filter reaches the
        scan."""
        self.validate()
        if self._checkpoint is None and self.parsed_counts:
            if self.order_frame is not None:
                names = [*self.columns, *ORDER_COLUMNS[1:]]
                source = self.order_frame.select(*[column(name) for name in names])
            else:
                source = self.attempts()
            self._checkpoint = source.localCheckpoint(eager=True)
        if self._casts is None:
            probe = self._checkpoint if self._checkpoint is not None else self.attempts()
            self._casts = _inferred_types(probe) if self.fmt == "csv" else {}
        tiebreak = list(ORDER_COLUMNS) if self.order_frame is not None else list(self.columns)
        if self._checkpoint is not None:
            return _apply_casts(self._checkpoint, self._casts), tiebreak
        if not ordered or self.order_frame is None:
            return _apply_casts(self.attempts(), self._casts), tiebreak
        names = [*self.columns, *ORDER_COLUMNS[1:]]
        frame = self.order_frame.select(*[column(name) for name in names])
        return _apply_casts(frame, self._casts), tiebreak

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
                # On the queryable rows: parsed once already where the counts are text.
                frame, condition = self._queryable()[0], on_attempts[kind]
            else:
                frame, condition = self.frame, _warning_flags(self.frame.columns)[kind]
            identity = [column(name) for name in self.identity]
            rows = frame.where(condition).select(*identity).limit(count).collect()
            report.examples[kind] = [row.asDict() for row in rows]
        return report.examples[kind]


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
    item = _input(location, fmt)
    raw = _read(spark, item)
    fields = {f.name: f.dataType for f in raw.schema.fields}
    names = list(fields)
    mapping = map_columns(names, columns or {}, item.display)
    source_of = {name: canonical for canonical, name in mapping.items()}
    taken = set(schema.CANONICAL_ORDER) | {schema.SOURCE_COLUMN, schema.LINE_COLUMN, "outcome"}
    taken |= set(names)
    derived: list[str] = []
    kept: list[Column] = []
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
        else:
            kept.append(column(name))
    if renamed:
        pairs = ", ".join(f"{old!r} as {new!r}" for old, new in renamed.items())
        derived.append(f"kept the input's unmapped {pairs}")

    # A row whose every cell is empty is a blank line, not an attempt.
    filled = reduce(lambda a, b: a | b, [column(name).isNotNull() for name in names])
    frame = raw.where(filled) if item.fmt in ("csv", "json") else raw
    source = F.col("_metadata.file_path") if item.fmt != "table" else F.lit(item.location)
    base = frame.select(
        *[expr.alias(name) for name, expr in canonical.items()],
        *kept,
        source.alias(schema.SOURCE_COLUMN),
    )
    # The same plan with the rows' order in their files, for pages and bootstrap draws only:
    # a position from `monotonically_increasing_id` is nondeterministic to the optimiser and
    # would stop filters reaching the scan, so the aggregations never see it.
    ordered_base = (
        frame.select(
            *[expr.alias(name) for name, expr in canonical.items()],
            *kept,
            source.alias(schema.SOURCE_COLUMN),
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
            steps[0][key] = _stripped(_as_text(F.col(key), types[key]))
    workflow = F.col("workflow")
    empty = workflow.isNull() | (workflow == "")
    steps.append(
        {
            _WHY + "workflow": F.when(empty, F.lit("empty")),
            _BAD + "workflow": F.when(empty, workflow),
        }
    )

    # Counts, step by step side by side (see `_count_steps`).
    counts = [name for name in schema.INTEGER_COLUMNS if name in mapping]
    parsers = [_count_steps(name, types[name]) for name in counts]
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
                _WHY + "tokens": F.when(over, F.lit("range")),
                _BAD + "tokens": F.when(over, F.col("__ledger_total").cast("string")),
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
            words[f"__ledger_{name}_text"] = _as_text(F.col(name), types[name])
    steps.append(words)
    steps.append(
        {
            **(
                {"__ledger_passed_word": _passed(F.col("__ledger_passed_text"))}
                if "passed" in canonical
                else {}
            ),
            **(
                {"__ledger_status_word": _status(F.col("__ledger_status_text"))}
                if "status" in canonical
                else {}
            ),
        }
    )
    passed_word = F.col("__ledger_passed_word") if "passed" in canonical else None
    status_word = F.col("__ledger_status_word") if "status" in canonical else None
    outcome, contradicting = _outcome(passed_word, status_word)
    verdict: dict[str, Column] = {
        "outcome": outcome,
        _CONTRADICTING: F.coalesce(contradicting, F.lit(False)),
    }
    if passed_word is not None:
        verdict["passed"] = F.when(passed_word == "true", F.lit(True)).when(
            passed_word == "false", F.lit(False)
        )
        verdict[_PASSED_UNKNOWN] = passed_word == "unknown"
        verdict[_BAD + "passed"] = F.when(passed_word == "unknown", F.col("__ledger_passed_text"))
    if status_word is not None:
        verdict[_STATUS_UNKNOWN] = status_word == "unknown"
        verdict[_BAD + "status"] = F.when(status_word == "unknown", F.col("__ledger_status_text"))
    steps.append(verdict)
    derived.append(_outcome_sentence(mapping))
    frame = _finished(base, steps)
    order_frame = _finished(ordered_base, steps) if ordered_base is not None else None
    identity = ["workflow", *(["task"] if "task" in canonical else [])]
    id_column = next(
        (name for name in (*ID_COLUMNS, "run", "attempt") if name in frame.columns), None
    )
    if id_column is not None:
        identity.append(id_column)
    return SparkLedger(
        spark=spark,
        source=item.display,
        frame=frame,
        mapping=mapping,
        derived=derived,
        identity=identity,
        fmt=item.fmt,
        input_types=fields,
        order_frame=order_frame,
        parsed_counts=tuple(name for name in counts if not _is_integral(types[name])),
        zero_is_missing=zero_usage_is_missing,
    )


_HELPERS = (_ZERO, _MISMATCH, _CONTRADICTING, _PASSED_UNKNOWN, _STATUS_UNKNOWN)


def _finished(frame: DataFrame, steps: Sequence[Mapping[str, Column]]) -> DataFrame:
    """`frame` through the parsing steps, then in the loader's column order: canonical
    columns, the input's others, `source`, then the helpers validation reads (and the order
    columns, where the frame has them); the steps' temporaries are dropped."""
    for step in steps:
        if step:
            frame = frame.withColumns(dict(step))
    present = set(frame.columns)
    canonical = [name for name in schema.CANONICAL_ORDER if name in present]
    others = [
        name
        for name in frame.columns
        if name not in canonical
        and not name.startswith(HELPER_PREFIX)
        and name != schema.SOURCE_COLUMN
    ]
    helpers = [name for name in frame.columns if name.startswith((_WHY, _BAD)) or name in _HELPERS]
    order = [name for name in ORDER_COLUMNS[1:] if name in present]
    names = (*canonical, *others, schema.SOURCE_COLUMN, *helpers, *order)
    return frame.select(*[column(name) for name in names])


def _free_name(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}_{number}", number + 1
    taken.add(candidate)
    return candidate


def _outcome_sentence(mapping: Mapping[str, str]) -> str:
    if "passed" in mapping and "status" in mapping:
        return (
            "outcome from passed and status (passed decides; a false passed takes timeout "
            "or error from the status)"
        )
    if "passed" in mapping:
        return "outcome from passed (true = passed, false = failed, empty = ungraded)"
    return "outcome from status"


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


def _validate(ledger: SparkLedger) -> SparkLoadReport:
    names = ledger.frame.columns
    problems: dict[str, Column] = {}
    if _PASSED_UNKNOWN in names:
        problems["passed"] = F.col(_PASSED_UNKNOWN)
    if _STATUS_UNKNOWN in names:
        problems["status"] = F.col(_STATUS_UNKNOWN)
    for name in ("workflow", *schema.INTEGER_COLUMNS):
        if _WHY + name in names:
            problems[name] = F.col(_WHY + name).isNotNull()
    flags = _warning_flags(names)
    aggregates = [F.count(F.lit(1)).alias("rows")]
    aggregates += [F.count_if(flag).alias(f"bad_{name}") for name, flag in problems.items()]
    aggregates += [F.count_if(flag).alias(f"count_{kind}") for kind, flag in flags.items()]
    try:
        summary = ledger.frame.select(*aggregates).collect()[0].asDict()
    except PySparkException as error:
        raise _input_error(_Input(ledger.source, ledger.source, ledger.fmt, {}), error) from None
    if summary["rows"] == 0:
        raise SparkInputError(
            f"{ledger.source}: no attempts in it (a header, or blank rows, and nothing else); "
            "check it is the right input."
        )
    for name, flag in problems.items():
        if summary[f"bad_{name}"]:
            raise _cell_error(ledger, name, flag)
    counts = {kind: int(summary[f"count_{kind}"]) for kind in flags}
    return SparkLoadReport(
        source=ledger.source,
        rows=int(summary["rows"]),
        mapping=dict(ledger.mapping),
        derived=list(ledger.derived),
        counts={kind: count for kind, count in counts.items() if count},
    )


def _cell_error(ledger: SparkLedger, name: str, flag: Column) -> SparkCellError:
    """The error for one bad cell: a row where `flag` holds, named by its identifying columns."""
    input_column = ledger.mapping.get(name, name)
    wanted = [column(n) for n in ledger.identity if n != name]
    why_column = F.col(_WHY + name) if _WHY + name in ledger.frame.columns else F.lit(None)
    first = (
        ledger.frame.where(flag)
        .select(*wanted, F.col(_BAD + name).alias("__bad"), why_column.alias("__why"))
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
            f"{_status_vocabulary()}"
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


def _status_vocabulary() -> str:
    by_outcome: dict[str, list[str]] = {}
    for word, outcome in schema.STATUS_WORDS.items():
        by_outcome.setdefault(outcome, []).append(word or "empty")
    return (
        "; ".join(f"{outcome} = {', '.join(words)}" for outcome, words in by_outcome.items())
        + " (any case; spaces and dashes read as _)"
    )


# --------------------------------------------------------------------------- types


_BOOLEAN_WORDS = ("true", "false", "True", "False", "TRUE", "FALSE")  # as polars' CSV reader
_INTEGER = r"^[+-]?[0-9]+$"


def _inferred_types(attempts: DataFrame) -> dict[str, str]:
    """A CSV's unvalidated text columns typed as the loader types them: `long` where every
    value is an integer, else `double`, else `boolean`, else left as text (one probe query
    over every row). Returns column -> type for the columns that change."""
    validated = {"workflow", "task", "outcome", "passed", "status", *schema.INTEGER_COLUMNS}
    targets = [
        f.name
        for f in attempts.schema.fields
        if f.name not in validated
        and f.name != schema.SOURCE_COLUMN
        and isinstance(f.dataType, T.StringType)
    ]
    if not targets:
        return {}
    probes = []
    for index, name in enumerate(targets):
        value = column(name)
        integer = value.rlike(_INTEGER) & value.try_cast("long").isNotNull()
        probes += [
            F.count(value).alias(f"n{index}"),
            F.count_if(integer).alias(f"i{index}"),
            F.count_if(value.try_cast("double").isNotNull()).alias(f"f{index}"),
            F.count_if(value.isin(list(_BOOLEAN_WORDS))).alias(f"b{index}"),
        ]
    counts = attempts.select(*probes).collect()[0].asDict()
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


def _apply_casts(frame: DataFrame, casts: Mapping[str, str]) -> DataFrame:
    if not casts:
        return frame

    def cast(name: str) -> Column:
        if casts[name] == "boolean":
            return (F.lower(column(name)) == "true").alias(name)
        return column(name).try_cast(casts[name]).alias(name)

    return frame.select(*[cast(n) if n in casts else column(n) for n in frame.columns])


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
