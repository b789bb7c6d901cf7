"""Writing what the CLI and the app export: summaries and attempts, atomically, never
replacing a file unasked, and safe for spreadsheets on request.

Decisions:

- Files are written atomically (`write_atomic`): a temporary file in the target's folder,
  flushed to disk, then moved into place; a failure leaves the target as it was and no
  temporary file. An existing file is replaced only with `overwrite` (the CLI's `--force`, the
  app's confirmation); without it the final move itself refuses (a hard link).
- CSV exports keep the data exactly (nested values as their JSON, `polars_text`); with
  `spreadsheet_safe` (`--spreadsheet-safe`), text cells and column names that start with
  = + - @ (or their full-width forms), a tab or a CR get a leading apostrophe, so a
  spreadsheet shows them instead of running them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import polars as pl

from tui_ledger.polars_text import nested_json
from tui_ledger.procfs import proc_field

ATTEMPT_FORMATS: tuple[str, ...] = ("csv", "parquet", "jsonl", "json")


class ExportError(Exception):
    """A file could not be written; the message is one line for people."""


def format_for_path(path: str | Path, choices: Sequence[str]) -> str:
    """The format a file name asks for (`.md` -> markdown, `.jsonl` -> jsonl, ...)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    name = {"md": "markdown", "markdown": "markdown", "ndjson": "jsonl", "txt": "table"}.get(
        suffix, suffix
    )
    if name not in choices:
        raise ExportError(
            f"{path}: cannot tell the format from the extension .{suffix}; "
            f"use one of: {', '.join('.' + c for c in choices)}"
        )
    return name


def write_text_atomic(path: str | Path, text: str, *, overwrite: bool = False) -> Path:
    """Write text through a temporary file and a rename; refuse to replace a file unasked."""
    return write_atomic(Path(path), lambda handle: handle.write(text.encode()), overwrite)


def write_attempts(
    frame: pl.DataFrame,
    path: str | Path,
    fmt: str | None = None,
    *,
    overwrite: bool = False,
    spreadsheet_safe: bool = False,
) -> Path:
    """Write attempts as csv, parquet, jsonl or json, atomically, never overwriting unasked.

    The data is written exactly (CSV carries lists and objects as their JSON text).
    `spreadsheet_safe` (CSV only) neutralises every cell, and column name, that a
    spreadsheet would run as a formula: see `neutralise_formulas`.
    """
    target = Path(path)
    chosen = fmt or format_for_path(target, ATTEMPT_FORMATS)
    writers = {
        "csv": lambda handle: _csv_file_ready(frame, spreadsheet_safe).write_csv(handle),
        "parquet": lambda handle: frame.write_parquet(handle),
        "jsonl": lambda handle: _csv_ready(frame).write_ndjson(handle),
        "json": lambda handle: _csv_ready(frame).write_json(handle),
    }
    if chosen not in writers:
        raise ExportError(f"{target}: unknown attempts format {chosen!r}")
    return write_atomic(target, writers[chosen], overwrite)


def _csv_ready(frame: pl.DataFrame) -> pl.DataFrame:
    # Text formats carry the outcome as its word and 128-bit sums as text-safe integers.
    return frame.with_columns(
        pl.col(name).cast(pl.String)
        for name, dtype in frame.schema.items()
        if isinstance(dtype, (pl.Enum, pl.Categorical)) or dtype == pl.Int128
    )


def _csv_file_ready(frame: pl.DataFrame, spreadsheet_safe: bool) -> pl.DataFrame:
    """CSV holds no nested values: lists and objects become their JSON text."""
    ready = _csv_ready(frame)
    nested = [name for name, dtype in ready.schema.items() if dtype.is_nested()]
    if nested:
        ready = ready.with_columns(nested_json(pl.col(name)).alias(name) for name in nested)
    binary = [name for name, dtype in ready.schema.items() if dtype == pl.Binary]
    if binary:
        ready = ready.with_columns(pl.col(name).bin.encode("hex") for name in binary)
    return neutralise_formulas(ready) if spreadsheet_safe else ready


# A spreadsheet runs a cell as a formula when it starts with one of these (OWASP's list, and
# the full-width forms some spreadsheets also accept); tab and CR hide a formula after them.
_FORMULA_STARTS = "=+-@\t\r\uff1d\uff0b\uff0d\uff20"
_FORMULA_PATTERN = "^[" + "".join(f"\\x{{{ord(char):x}}}" for char in _FORMULA_STARTS) + "]"


def neutralise_text(text: str) -> str:
    """`text` with a leading apostrophe if a spreadsheet would run it as a formula."""
    return "'" + text if text[:1] and text[0] in _FORMULA_STARTS else text


def neutralise_formulas(frame: pl.DataFrame) -> pl.DataFrame:
    """Text cells, and column names, a spreadsheet would run as formulas get a leading
    apostrophe (`=HYPERLINK(...)` -> `'=HYPERLINK(...)`): the documented `--spreadsheet-safe`.

    Cells that start with = + - @ (or their full-width forms), a tab or a carriage return
    are text to a person but code to a spreadsheet. Numbers stay numbers: a negative number
    in a numeric column is not text. Category columns are neutralised as text.
    """
    text = frame.with_columns(
        pl.col(name).cast(pl.String)
        for name, dtype in frame.schema.items()
        if isinstance(dtype, (pl.Enum, pl.Categorical))
    )
    text = text.with_columns(
        pl.when(pl.col(name).str.contains(_FORMULA_PATTERN))
        .then(pl.lit("'") + pl.col(name))
        .otherwise(pl.col(name))
        .alias(name)
        for name, dtype in text.schema.items()
        if dtype == pl.String
    )
    renamed = {name: neutralise_text(name) for name in text.columns}
    if any(new != old for old, new in renamed.items()):
        text = text.rename(renamed)
    return text


def write_atomic(target: Path, write: Any, overwrite: bool) -> Path:
    """Write through a temporary file in the target's folder, then move it into place.

    A reader never sees a half-written file, and a failure leaves the target as it was.
    Without `overwrite` the move itself refuses an existing file (a hard link, which fails
    if the name exists), so a file that appears meanwhile is not replaced either.
    """
    if target.is_dir():
        raise ExportError(f"{target}: is a folder; name a file to write")
    if (target.exists() or target.is_symlink()) and not overwrite:
        raise ExportError(f"{target}: already exists; choose another name or allow overwriting")
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise ExportError(f"{target}: folder {directory} does not exist")
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    except OSError as error:
        raise ExportError(f"{target}: cannot write in {directory} ({error.strerror})") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file private (0600); give it the mode a new file would have.
        os.chmod(temporary, _new_file_mode())
        if overwrite:
            os.replace(temporary, target)
        else:
            _link_new(Path(temporary), target)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            reason = error.strerror or str(error)
            raise ExportError(f"{target}: could not be written ({reason})") from None
        raise
    return target


def _link_new(temporary: Path, target: Path) -> None:
    """Move `temporary` to `target` only if `target` does not exist, atomically."""
    try:
        os.link(temporary, target)
    except FileExistsError:
        raise ExportError(f"{target}: appeared while writing; nothing was replaced") from None
    except OSError:
        # A filesystem without hard links: check, then rename (a narrow race remains).
        if target.exists():
            raise ExportError(f"{target}: appeared while writing; nothing was replaced") from None
        os.replace(temporary, target)
        return
    temporary.unlink()


def _new_file_mode() -> int:
    """0o666 less the process's umask, read without changing it (`os.umask` would, for a
    moment, for every thread)."""
    mask = 0o022
    umask = proc_field("/proc/self/status", "Umask")
    with suppress(ValueError, IndexError):
        mask = int(umask.split()[0], 8) if umask else mask
    return 0o666 & ~mask
