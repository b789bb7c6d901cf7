"""CSV and TSV: the typed read (counts as Int64, keys as Categorical), the text read, and the
line each record starts on as an editor counts it."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from tui_ledger import schema
from tui_ledger.load.columns import map_names
from tui_ledger.load.csv_errors import first_ragged_record, ragged
from tui_ledger.load.errors import LoadError
from tui_ledger.load.formats import (
    GZIP_MAGIC,
    Head,
    field_separator,
    file_text,
    is_utf8_error,
)
from tui_ledger.load.helper_columns import LINE, PHYSICAL, TYPED_TEXT
from tui_ledger.load.inputs import Input
from tui_ledger.load.opened import Opened, empty


def open_csv(
    item: Input,
    found: Head,
    *,
    lazy: bool,
    lossy: bool,
    columns: Mapping[str, str] | None = None,
    head: bytes | None = None,
) -> Opened:
    """Open a CSV or TSV file: typed where it can be (eagerly), as text otherwise. `head`: read
    only these first whole records of it (`csv_head`), eagerly. `found`: its size and first
    bytes, read once (`opened.checked` has refused an empty or binary file)."""
    separator = field_separator(item.fmt)
    options = {
        "separator": separator,
        "infer_schema": False,
        "glob": False,
        "row_index_name": LINE,
        "row_index_offset": 2,
    }
    mapping: dict[str, str] | None = None  # what typed the read, when it was typed
    if lazy:
        encoding = "utf8-lossy" if lossy else "utf8"
        frame = pl.scan_csv(item.path, encoding=encoding, **options)  # type: ignore[arg-type]
        try:
            names = frame.collect_schema().names()
        except pl.exceptions.NoDataError:
            raise empty(item) from None
    else:
        source = item.path if head is None else head
        if not lossy:
            typed, mapping = _read_csv_typed(item, source, options, columns or {})
        else:
            typed = None
        try:
            data = (
                typed if typed is not None else _read_csv_eager(item, source, options, lossy=lossy)
            )
        except pl.exceptions.PolarsError as error:
            if lossy or not is_utf8_error(error):
                raise
            lossy = True
            data = _read_csv_eager(item, source, options, lossy=True)
        names = data.columns
        frame = data.lazy()
    own = [name for name in names if name != LINE]
    renamed, duplicates = _header_names(own)
    frame = frame.rename(dict(zip(own, renamed, strict=True)))
    frame = frame.with_columns(pl.col(LINE).cast(pl.Int64))
    # A head holds whole lines only, each one record (`csv_head`): records are lines there.
    starts = _record_starts(item, found.compressed) if head is None else None
    if starts is not None:
        # polars numbers records; people (and editors) number lines.
        frame = (
            frame.join(starts, on=LINE, how="left", maintain_order="left")
            .with_columns(pl.col(PHYSICAL).alias(LINE))
            .drop(PHYSICAL)
        )
    return Opened(
        item,
        item.fmt or "csv",
        frame,
        renamed,
        "line",
        lossy=lossy,
        in_memory=not lazy,
        infer=True,
        duplicates=duplicates,
        mapping=mapping,
        unterminated=head is None
        and not found.compressed  # gzip: a cut stream fails to decompress instead
        and _ends_without_line_end(item.path),
    )


def csv_head(path: Path, size: int) -> bytes | None:
    """The first whole lines of an uncompressed CSV/TSV, at most `size` bytes (the header and
    some records), for a first screen drawn before the whole file is read; None when that
    cannot be cut cleanly: a compressed file, no line end within `size`, or a quoted cell
    holding a line end among them (where lines and records part, only the whole file's read
    can number them)."""
    with path.open("rb") as stream:
        data = stream.read(size)
    if len(data) < size or data.startswith(GZIP_MAGIC):
        return None  # the whole file is no more than a head: read it all
    end = data.rfind(b"\n")
    if end < 0:
        return None
    data = data[: end + 1]
    if b'"' in data and any(line.count(b'"') % 2 for line in data.split(b"\n")):
        return None
    return data


def _record_starts(item: Input, compressed: bool) -> pl.LazyFrame | None:
    """The line each record starts on, keyed by its record number as `LINE` counts them,
    where some quoted cell holds a line end; None where records and lines are the same.

    A line starts a record unless an odd number of quotes came before it (polars has already
    refused quotes inside unquoted cells). A file without a quote costs one byte search.
    """
    if not compressed and not _contains_byte(item.path, b'"'):
        return None
    try:
        if compressed:
            raise pl.exceptions.ComputeError("gzip: read below")
        lines = pl.scan_lines(item.path, name="text", glob=False)
        lines.head(0).collect()
    except pl.exceptions.PolarsError:  # compressed, or not UTF-8: decode it here
        lines = pl.LazyFrame({"text": file_text(item.path, compressed).split("\n")})
    quotes = pl.col("text").str.count_matches('"', literal=True)
    inside = (quotes.cum_sum() - quotes) % 2 == 1
    marked = lines.select(inside.alias("inside")).with_row_index(PHYSICAL, offset=1)
    # Streamed (a running sum of quotes), so a file larger than memory is no problem.
    if not marked.select(pl.col("inside").any()).collect(engine="streaming").item():
        return None
    return (
        marked.filter(~pl.col("inside"))
        .select(pl.col(PHYSICAL).cast(pl.Int64))
        .with_row_index(LINE, offset=1)
        .with_columns(pl.col(LINE).cast(pl.Int64))
    )


def _contains_byte(path: Path, needle: bytes) -> bool:
    """Whether `needle` (one byte) occurs in the file, read in blocks: never the whole file in
    memory, and (unlike a memory map, whose pages count as the process's own) never more
    than one block of it resident."""
    with path.open("rb", buffering=0) as stream:
        block = bytearray(1 << 20)
        while count := stream.readinto(block):
            if block.find(needle, 0, count) >= 0:
                return True
        return False


def _ends_without_line_end(path: Path) -> bool:
    """Whether an uncompressed file's last byte is not a line end (a file cut off mid-row
    loads without complaint when the cut falls inside its last cell)."""
    with path.open("rb") as stream:
        stream.seek(-1, os.SEEK_END)
        return stream.read(1) not in (b"\n", b"\r")


def _read_csv_eager(
    item: Input, source: Path | bytes, options: dict[str, object], *, lossy: bool
) -> pl.DataFrame:
    encoding = "utf8-lossy" if lossy else "utf8"
    try:
        return pl.read_csv(source, encoding=encoding, **options)  # type: ignore[arg-type]
    except pl.exceptions.NoDataError:
        raise empty(item) from None
    except pl.exceptions.ComputeError as error:
        if "more fields" in str(error):
            raise ragged(item, first_ragged_record(item, None)) from None
        raise


def _read_csv_typed(
    item: Input, source: Path | bytes, options: dict[str, object], explicit: Mapping[str, str]
) -> tuple[pl.DataFrame | None, dict[str, str] | None]:
    """The whole file read with its accounting columns typed by the parser itself, or None
    when even its keys cannot be read so (the caller then reads every column as text, and
    says what is wrong); and the mapping of its header's names that typed it (`Opened.mapping`:
    the rest of the load maps them once).

    Token counts are read as Int64 (only plain integers parse; anything else, a missing word
    or a decimal, makes a second read with the counts as text), and the repetitive text keys
    and outcome words as Categorical.
    Reading them as text first would hold every cell as a string (about 5x the typed frame),
    then a parsed copy beside it: at 10M rows that is the difference between 0.6 and 2.5 GB.
    """
    try:
        header = pl.read_csv(source, n_rows=0, **options)  # type: ignore[arg-type]
        own = [name for name in header.columns if name != LINE]
        renamed, duplicates = _header_names(own)
        written = {name: duplicates.get(name, name) for name in renamed}
        mapping = map_names(renamed, explicit, item.display, written)
    except (LoadError, pl.exceptions.PolarsError, OSError, ValueError):
        return None, None  # the text read says what is wrong
    original = dict(zip(renamed, own, strict=True))
    counts = {
        original[name]: pl.Int64()
        for canonical, name in mapping.items()
        if canonical in schema.INTEGER_COLUMNS
    }
    keys = {
        original[name]: pl.Categorical()
        for canonical, name in mapping.items()
        if canonical in TYPED_TEXT
    }
    # Then, if some count is not a plain integer (a missing word, a decimal), the keys alone:
    # the counts stay text for the exact parser, and the keys still take 4 bytes a row.
    for overrides in ({**counts, **keys}, keys):
        if not overrides:
            continue
        try:
            typed = pl.read_csv(source, schema_overrides=overrides, **options)  # type: ignore[arg-type]
        except (pl.exceptions.PolarsError, OSError, ValueError):
            continue
        return typed, mapping
    return None, None


def _header_names(names: list[str]) -> tuple[list[str], dict[str, str]]:
    """Give unnamed header cells a name; remember which names polars de-duplicated."""
    renamed = []
    duplicates: dict[str, str] = {}
    pattern = re.compile(r"^(.*)_duplicated_\d+$")
    for position, name in enumerate(names, start=1):
        match = pattern.match(name)
        base = match.group(1) if match and match.group(1) in names[: position - 1] else None
        if name == "" or base == "":
            renamed.append(f"column_{position}")
            continue
        if base is not None:
            duplicates[name] = base
        renamed.append(name)
    return renamed, duplicates
