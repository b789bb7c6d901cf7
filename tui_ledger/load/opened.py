"""One input, opened: what every table file is checked for once before its reader sees it
(empty, UTF-16/32, binary), and what opening it gives the rest of the loader: its own columns
as a LazyFrame, and how it was read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import polars as pl

from tui_ledger.load.errors import LoadError
from tui_ledger.load.formats import FORMAT_LABEL, Head, head_of
from tui_ledger.load.inputs import Input


@dataclass
class Opened:
    """One input, opened: its frame and what its reader learned about it."""

    item: Input
    fmt: str  # csv, tsv, parquet, json, ndjson or importer
    frame: pl.LazyFrame  # the file's own columns plus LINE (and `source` from importers)
    columns: list[str]  # the file's own column names, in order
    unit: str  # what LINE counts: line, record or row
    lossy: bool = False
    in_memory: bool = True
    infer: bool = False  # CSV/TSV: give unvalidated columns their inferred types
    duplicates: dict[str, str] = field(default_factory=dict)  # polars name -> header name
    has_source: bool = False
    unterminated: bool = False  # CSV/TSV: the last line has no line end (cut off?)
    conventions: tuple[str, ...] = ()  # importers: which bucket convention was read, and why
    notes: tuple[tuple[str, str], ...] = ()  # (kind, sentence): importer and join warnings
    whole_files: frozenset[str] = frozenset()  # importers: sources holding one attempt each
    joined: tuple[str, ...] = ()  # --outcomes: what the join did, for the report's "Derived"
    # canonical -> column, where the reader already mapped the columns (`--col` as the load was
    # given it, then the aliases) to type them as it read: `columns.map_columns` says it again
    # instead of mapping twice. None: not mapped yet (or the columns changed since).
    mapping: Mapping[str, str] | None = None


def refuse(item: Input, what: str) -> None:
    """Stop the load: the input cannot be read, for the reason `what`."""
    raise LoadError(f"{item.display}: {what}.", source=item.display)


def empty(item: Input) -> LoadError:
    """The error for a file with no attempts at all."""
    return LoadError(
        f"{item.display}: the file is empty (no attempts); check it is the right file.",
        source=item.display,
    )


def checked(item: Input) -> Head:
    """The checks every table file shares, made once before its reader opens it: not empty,
    and (text formats) 8-bit text. Its `Head`, for the reader."""
    head = item.head if item.head is not None else head_of(item.path)  # raises what is wrong
    if head.size == 0:
        raise empty(item)
    if item.fmt != "parquet":
        _check_text(item, head)
    return head


_WIDE_TEXT = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}
_TEXT_CHECKED = 4096
"""How much of a text file's start the text check looks at."""


def _check_text(item: Input, head: Head) -> None:
    """Refuse a text format whose first bytes are not 8-bit text: UTF-16/32 (Excel's
    "Unicode text"), or NUL bytes (a binary file under a text extension). Read as UTF-8,
    either would only fail later with a baffling list of columns."""
    if head.text is None:
        return  # gzip that cannot be decompressed: reading says what is wrong
    start = head.text[:_TEXT_CHECKED]
    label = FORMAT_LABEL.get(item.fmt or "", "text")
    for bom, encoding in _WIDE_TEXT.items():
        if start.startswith(bom):
            return refuse(
                item,
                f"the file is {encoding} text; save it as {label} in UTF-8, or convert it "
                f"(iconv -f {encoding} -t UTF-8 FILE > NEW)",
            )
    header = start.split(b"\n", 1)[0]
    try:
        header.decode("utf-8")
        text_header = b"\x00" not in header
    except UnicodeDecodeError:
        text_header = False
    # A NUL in a cell of a text file is named with its cell; beside a header that is not
    # text, it means a binary file.
    if b"\x00" in start and not text_header:
        refuse(
            item,
            f"the file holds NUL bytes, so it is binary, not {label} text; check it is the "
            "right file",
        )
