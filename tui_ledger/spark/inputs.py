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


# The fewest bytes an attempt takes in each format (a floor: the row count is overestimated,
# so an input is taken for small only when it surely is). The demo's CSV is 130 bytes a row,
# generated ledgers' 52; their Parquet 5 (so a compressed text file counts as Parquet).
_FEWEST_BYTES_A_ROW = {"parquet": 4, "csv": 40, "json": 40}
_COMPRESSED = (".gz", ".bz2", ".zst", ".snappy", ".lz4")


def local_rows_at_most(item: Input) -> int | None:
    """At most how many attempts `item` holds, from the size of its files where they are on
    this machine too (a local server's input); None for a table or a path this machine cannot
    see (the cluster's to resolve: no question is asked of it here)."""
    if item.fmt == "table" or "://" in item.location or item.location.startswith("file:"):
        return None
    path = Path(item.location)
    if any(character in item.location for character in "*?["):
        files = [found for found in path.parent.glob(path.name) if found.is_file()]
    elif path.is_dir():
        files = [found for found in path.rglob("*") if found.is_file()]
    else:
        files = [path] if path.is_file() else []
    if not files:
        return None
    size = sum(found.stat().st_size for found in files)
    compressed = any(found.name.lower().endswith(_COMPRESSED) for found in files)
    fewest = 4 if compressed else _FEWEST_BYTES_A_ROW.get(item.fmt, 4)
    return size // fewest + 1


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
    """canonical -> input column: the explicit mapping first, then the aliases (SPEC.md 1),
    and the required columns: the loader's own rule (`load.columns.map_names`,
    `require_names`), its errors raised as `SparkInputError`."""
    from tui_ledger.load.columns import map_names, require_names
    from tui_ledger.load.errors import LoadError

    try:
        mapping = map_names(list(names), explicit, display, what="input")
        require_names(mapping, list(names), display)
    except LoadError as error:
        raise SparkInputError(str(error)) from None
    return mapping
