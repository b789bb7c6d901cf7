"""Opening one input: the checks every table file shares (`opened.checked`), once, then its
format's own reader (CSV/TSV, JSON/NDJSON, Parquet here, or what a harness importer gives),
and the one-line message for anything polars refuses."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import polars as pl

from tui_ledger import schema
from tui_ledger.load.columns import map_names
from tui_ledger.load.csv_errors import first_ragged_record, ragged, stray_quote, unclosed_quote
from tui_ledger.load.errors import LoadError
from tui_ledger.load.formats import FORMAT_LABEL
from tui_ledger.load.helper_columns import LINE, TYPED_TEXT
from tui_ledger.load.inputs import Input
from tui_ledger.load.opened import Opened, checked
from tui_ledger.load.read_csv import open_csv
from tui_ledger.load.read_json import open_json
from tui_ledger.text.wording import first_line

if TYPE_CHECKING:
    from tui_ledger.importers import ImportOptions


def open_input(
    item: Input,
    *,
    lazy: bool,
    lossy: bool = False,
    columns: Mapping[str, str] | None = None,
    imports: ImportOptions | None = None,
    several: bool = False,
    head: bytes | None = None,
) -> Opened:
    """Open one input. `columns` (the explicit mapping) lets an eager CSV/TSV read type its
    accounting columns as it parses (see `read_csv._read_csv_typed`). `imports` is what the
    user told the importers; `several` says the load reads more than this input (an
    importer's sources are then named with the path the user gave, not only below it);
    `head`: a CSV/TSV's first whole records (`read_csv.csv_head`), read instead of the file."""
    if item.importer is not None:
        return _open_imported(item, imports, several)
    assert item.fmt is not None
    try:
        found = checked(item)
        if item.fmt in ("csv", "tsv"):
            return open_csv(item, found, lazy=lazy, lossy=lossy, columns=columns, head=head)
        if item.fmt == "parquet":
            return _open_parquet(item, lazy=lazy, columns=columns or {})
        return open_json(item, found, lazy=lazy)
    except LoadError:
        raise
    except (pl.exceptions.PolarsError, OSError, ValueError) as error:
        raise read_error(item, error) from None


def _open_parquet(item: Input, *, lazy: bool, columns: Mapping[str, str]) -> Opened:
    """Open a Parquet file. Eagerly, its text keys and outcome words (`TYPED_TEXT`) arrive as
    Categorical from the read itself, as a CSV's do (`read_csv._read_csv_typed`): 4 bytes a
    row instead of each row's string, and no text copy beside the typed one."""
    frame = pl.scan_parquet(item.path, glob=False)
    mapping = None
    if not lazy:
        keys, mapping = _categorical_keys(item, frame, columns)
        frame = frame.with_columns(keys)
    frame = frame.with_row_index(LINE, offset=1)
    if lazy:
        names = frame.collect_schema().names()
    else:
        data = frame.collect()
        names = data.columns
        frame = data.lazy()
    frame = frame.with_columns(pl.col(LINE).cast(pl.Int64))
    own = [name for name in names if name != LINE]
    return Opened(item, "parquet", frame, own, "row", in_memory=not lazy, mapping=mapping)


def _categorical_keys(
    item: Input, frame: pl.LazyFrame, explicit: Mapping[str, str]
) -> tuple[list[pl.Expr], dict[str, str] | None]:
    """The casts to Categorical of the file's String columns that map onto a text key, and
    the mapping they follow (None when the columns cannot be mapped: prepare says why)."""
    types = frame.collect_schema()
    try:
        mapping = map_names(types.names(), explicit, item.display)
    except LoadError:
        return [], None
    casts = [
        pl.col(name).cast(pl.Categorical)
        for canonical, name in mapping.items()
        if canonical in TYPED_TEXT and types[name] == pl.String
    ]
    return casts, mapping


def _open_imported(item: Input, imports: ImportOptions | None, several: bool) -> Opened:
    assert item.importer is not None
    try:
        imported = item.importer.read_imported(item.path, imports)
        data = imported.frame
    except LoadError:
        raise
    except (OSError, ValueError, pl.exceptions.PolarsError) as error:
        text = first_line(error)
        if item.display not in text and str(item.path) not in text:
            text = (
                f"{item.display}: the {item.importer.name} importer could not read it "
                f"({text}); check the files are complete."
            )
        raise LoadError(text, source=item.display) from None
    if data.height == 0:
        raise LoadError(
            f"{item.display}: the {item.importer.name} importer found no attempts in it; "
            "check the path points at a run.",
            source=item.display,
        )
    line = schema.LINE_COLUMN
    source = schema.SOURCE_COLUMN
    names = [name for name in data.columns if name not in (line, source)]
    if line in data.columns:
        line_expr = pl.col(line).cast(pl.Int64)
        unit = "line"
    else:
        line_expr = pl.int_range(1, pl.len() + 1, dtype=pl.Int64)
        unit = "record"
    columns = [*names, line_expr.alias(LINE)]
    if source in data.columns:
        columns.append(trial_names(item, pl.col(source).cast(pl.String), several))
    frame = data.lazy().select(columns)
    whole: frozenset[str] = frozenset()
    if source in data.columns:
        counts = frame.group_by(source).len().filter(pl.col("len") == 1).collect()
        whole = frozenset(counts[source].to_list())
    kind = f"{item.importer.name.replace('-', '_')}_import"
    return Opened(
        item,
        "importer",
        frame,
        names,
        unit,
        has_source=source in data.columns,
        conventions=imported.conventions,
        notes=tuple((kind, sentence) for sentence in imported.warnings),
        whole_files=whole,
    )


def trial_names(item: Input, source: pl.Expr, several: bool) -> pl.Expr:
    """An importer's sources named by their path below the folder the user opened
    (`20250924_droid_gpt-5/.../fix-git.1-of-5/results.json`), which tells the trials apart
    where a file name (`results.json`) would not; with `several` inputs, below the path as
    the user gave it (`runs/20250924_droid_gpt-5/...`). A file opened by name keeps it."""
    if not item.path.is_dir():
        return source
    prefixes = {str(item.path), str(item.path.resolve()), os.path.abspath(item.path)}
    named = source
    given = item.display.rstrip("/") if several else ""
    for prefix in sorted(prefixes, key=len, reverse=True):
        folder = prefix.rstrip("/") + "/"
        below = source.str.strip_prefix(folder)
        named = (
            pl.when(source.str.starts_with(folder))
            .then(pl.concat_str(pl.lit(given + "/"), below) if given else below)
            .otherwise(named)
        )
    return named.alias(schema.SOURCE_COLUMN)


def read_error(item: Input, error: Exception) -> LoadError:
    """The one-line `LoadError` for anything reading `item` raised."""
    if isinstance(error, PermissionError):
        return LoadError(
            f"{item.display}: cannot be read (permission denied); check its permissions.",
            source=item.display,
        )
    if isinstance(error, LoadError):
        return error
    try:
        located = _located(item, error)
    except (OSError, EOFError):
        located = None  # it cannot be read again to find the place (a cut gzip stream)
    if located is not None:
        return located
    label = FORMAT_LABEL.get(item.fmt or "", "NDJSON")
    return LoadError(
        f"{item.display}: cannot be read as {label} ({first_line(error)}); check the file "
        "is complete and in that format.",
        source=item.display,
    )


def _located(item: Input, error: Exception) -> LoadError | None:
    """The CSV/TSV error polars' words point at, found by reading the file again (a quote
    that never closes, a row with more fields, a stray quote); None for the others."""
    if item.fmt in ("csv", "tsv") and "malformed" not in str(error):
        unclosed = unclosed_quote(item)
        if unclosed is not None:
            return unclosed
    if "more fields" in str(error):
        return ragged(item, first_ragged_record(item, None))
    if item.fmt in ("csv", "tsv") and "malformed" in str(error):
        return stray_quote(item)
    return None
