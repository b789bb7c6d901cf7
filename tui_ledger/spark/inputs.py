"""One input on the cluster: its location and format, read with its schema resolved, and its
columns mapped onto the canonical names (the loader's aliases and `--col`, SPEC.md section 1).

The CSV dialect: header row, `"` quotes doubled inside a quoted cell, quoted line ends allowed,
a malformed row stops the read (FAILFAST). Imports pyspark: only the Spark path imports this.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from tui_ledger import schema
from tui_ledger.spark.errors import SparkEngineError, SparkInputError, SparkUnreachable
from tui_ledger.spark.session import first_line

TABLE_PREFIX = "table:"
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


def column(name: str) -> Column:
    """A column by its exact name, even one holding dots, spaces or backticks."""
    return F.col("`" + name.replace("`", "``") + "`")


@dataclass(frozen=True)
class Input:
    display: str
    location: str
    fmt: str  # csv, parquet, json, table
    options: dict[str, str]


def resolve_input(location: str, fmt: str | None) -> Input:
    if location.startswith(TABLE_PREFIX):
        name = location.removeprefix(TABLE_PREFIX)
        if not name:
            raise SparkInputError("table: needs a table name, e.g. table:catalog.schema.name")
        return Input(location, name, "table", {})
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
    return Input(location, resolved, kind, dict(options))


def read_input(spark: SparkSession, item: Input) -> DataFrame:
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
        raise input_error(item, error) from None
    return frame


def input_error(item: Input, error: BaseException) -> SparkEngineError:
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
