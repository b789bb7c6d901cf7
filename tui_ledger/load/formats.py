"""File formats and bytes, shared by every reader: which suffix means which format, what a file's
first bytes say it is, gzip, and a file's whole text (as polars keeps its `io/_utils.py`)."""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass
from pathlib import Path

# Longest first, so `.csv.gz` wins over any shorter match.
SUFFIX_FORMATS: dict[str, str] = {
    ".csv.gz": "csv",
    ".tsv.gz": "tsv",
    ".parquet": "parquet",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
}
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(SUFFIX_FORMATS)

FORMAT_NAMES: dict[str, str] = {
    "csv": "csv",
    "csv.gz": "csv",
    "tsv": "tsv",
    "tsv.gz": "tsv",
    "parquet": "parquet",
    "json": "json",
    "ndjson": "ndjson",
    "jsonl": "ndjson",
}
FORMAT_LABELS = "CSV, TSV, gzip CSV/TSV, Parquet, JSON and NDJSON/JSONL"
FORMAT_LABEL = {
    "csv": "CSV",
    "tsv": "TSV",
    "parquet": "Parquet",
    "json": "JSON",
    "ndjson": "NDJSON",
}
"""Each format's name in messages."""
GZIP_MAGIC = b"\x1f\x8b"
"""The first two bytes of every gzip file."""


def field_separator(fmt: str | None) -> str:
    """The field separator of a CSV (`,`) or TSV (tab) file."""
    return "\t" if fmt == "tsv" else ","


def suffix_of(path: Path) -> str:
    """The supported suffix `path` ends with (`.csv.gz`, `.json`, ...), or ""."""
    name = path.name.lower()
    return next((suffix for suffix in SUFFIX_FORMATS if name.endswith(suffix)), "")


HEAD_SIZE = 65536
"""How much of a file's start is read once, for every check that looks at it."""


@dataclass(frozen=True)
class Head:
    """What the loader needs to know of a file before reading it, found once when its input
    is found (`inputs.expand`): its supported suffix, size, whether it is gzip, its first bytes
    (decompressed), and the format they say it is where its name does not say."""

    suffix: str  # `suffix_of` its name
    size: int
    compressed: bool  # gzip, by its first bytes (not its name)
    text: bytes | None  # the first HEAD_SIZE bytes, decompressed; None: gzip that cannot be
    sniffed: str | None  # no suffix or `.json` only: the format the bytes say (`sniff`)


def head_of(path: Path) -> Head:
    """`path`'s `Head`: one stat and one read of its start (raises OSError)."""
    suffix = suffix_of(path)
    with path.open("rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        start = stream.read(HEAD_SIZE)
    compressed = start.startswith(GZIP_MAGIC)
    text: bytes | None = start
    if compressed:
        try:
            with gzip.open(path, "rb") as unpacked:
                text = unpacked.read(HEAD_SIZE)
        except (OSError, EOFError):
            text = None
    sniffed = sniff(start, text) if suffix in ("", ".json") else None
    return Head(suffix, size, compressed, text, sniffed)


def sniff(start: bytes, text_head: bytes | None) -> str | None:
    """The format of a file of unknown extension, from its first bytes as stored (`start`) and
    decompressed (`text_head`, None: gzip that cannot be); None if not ours."""
    if start.startswith(b"PAR1"):
        return "parquet"
    if text_head is None or b"\x00" in text_head:
        return None
    text = text_head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if text.startswith("["):
        return "json"
    first = text.split("\n", 1)[0]
    if text.startswith("{"):
        try:
            json.loads(first)
        except ValueError:
            return "json"
        return "ndjson"
    return "tsv" if first.count("\t") > first.count(",") else "csv"


def read_bytes(path: Path, compressed: bool) -> bytes:
    """The whole file's bytes, decompressed when `compressed`."""
    if compressed:
        with gzip.open(path, "rb") as stream:
            return stream.read()
    return path.read_bytes()


def file_text(path: Path, compressed: bool | None = None) -> str:
    """The whole file as text (gzip decompressed; bytes that are not UTF-8 as U+FFFD).
    `compressed`: whether it is gzip, when known (`Head.compressed`); else its first bytes say."""
    if compressed is None:
        with path.open("rb") as stream:
            compressed = stream.read(2) == GZIP_MAGIC
    raw = read_bytes(path, compressed)
    return raw.decode("utf-8", errors="replace")


def is_utf8_error(error: Exception) -> bool:
    """Whether polars refused a file for bytes that are not UTF-8."""
    text = str(error).lower()
    return "utf-8" in text or "utf8" in text
