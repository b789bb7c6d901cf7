"""File formats and bytes, shared by every reader: which suffix means which format, what a file's
first bytes say it is, gzip, and a file's whole text (as polars keeps its `io/_utils.py`)."""

from __future__ import annotations

import gzip
import json
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


def sniff(path: Path) -> str | None:
    """The format of a file of unknown extension, from its first bytes; None if not ours."""
    head = head_bytes(path)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(GZIP_MAGIC):
        try:
            with gzip.open(path, "rb") as stream:
                head = stream.read(65536)
        except (OSError, EOFError):
            return None
    if b"\x00" in head:
        return None
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
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


def head_bytes(path: Path, size: int = 65536) -> bytes:
    """The first `size` bytes of a file (all of it when shorter)."""
    with path.open("rb") as stream:
        return stream.read(size)


def is_gzip(path: Path) -> bool:
    """Whether the file is gzip-compressed (by its first bytes, not its name)."""
    return head_bytes(path, 2) == GZIP_MAGIC


def read_bytes(path: Path, compressed: bool) -> bytes:
    """The whole file's bytes, decompressed when `compressed`."""
    if compressed:
        with gzip.open(path, "rb") as stream:
            return stream.read()
    return path.read_bytes()


def file_text(path: Path) -> str:
    """The whole file as text (gzip decompressed; bytes that are not UTF-8 as U+FFFD)."""
    raw = read_bytes(path, is_gzip(path))
    return raw.decode("utf-8", errors="replace")


def is_utf8_error(error: Exception) -> bool:
    """Whether polars refused a file for bytes that are not UTF-8."""
    text = str(error).lower()
    return "utf-8" in text or "utf8" in text
