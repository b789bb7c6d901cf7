"""Writing what the CLI and the app export: summaries and attempts, atomically, never
replacing a file unasked, and safe for spreadsheets on request.

Decisions:

- Files are written atomically (`write_atomic`): a temporary file in the target's folder
  (`.NAME.ledger-tui-XXXXXXXX.tmp`, so a stray one is recognisable), flushed to disk, then
  moved into place; a failure leaves the target as it was and no temporary file, and one still
  being written when the process exits is removed then. An existing file is replaced only with
  `overwrite` (the CLI's `--force`, the app's confirmation); without it the final move itself
  refuses (a hard link). A replaced file keeps its permission bits, and its owner and group
  where this user may set them. Other hard links to a replaced file keep the old contents
  (replacing is a rename; writing in place would not be atomic).
- Never over an input: `protected` names the files and folders the ledger reads; a target that
  is one of those files (by name or by inode), or a file inside one of those folders, is
  refused with one line, whatever `overwrite` says.
- Attempts are written in the canonical schema, as `convert` does (`canonical_attempts`): a
  file with a raw `status` column is written without the derived `outcome` (which would read
  as a second status), so every export loads back to the same figures.
- CSV exports keep the data exactly (nested values as their JSON, `polars_text`); with
  `spreadsheet_safe` (the app's and `summary`'s default, `convert --spreadsheet-safe`), text
  cells and column names that start with = + - @ (or their full-width forms), a tab or a CR
  get a leading apostrophe, so a spreadsheet shows them instead of running them. A cell that
  is a plain number (`-3`, `+1.5e3`) is left as it is: a spreadsheet reads it as a number.
"""

from __future__ import annotations

import atexit
import os
import re
import stat
import tempfile
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import polars as pl

from tui_ledger.exports.trace_paths import rebased_traces
from tui_ledger.procfs import proc_field
from tui_ledger.text.polars_text import nested_json

ATTEMPT_FORMATS: tuple[str, ...] = ("csv", "parquet", "jsonl", "json")


class ExportError(Exception):
    """A file could not be written; the message is one line for people."""


class TargetExists(ExportError):
    """The file to write exists and replacing it was not asked for. The message says what a
    person does in the app; a command line names its own option (`--force`) instead."""

    def __init__(self, target: Path) -> None:
        super().__init__(f"{target}: already exists; choose another name or allow overwriting")
        self.target = target


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


def write_text_atomic(
    path: str | Path,
    text: str,
    *,
    overwrite: bool = False,
    protected: Sequence[str | Path] = (),
) -> Path:
    """Write text through a temporary file and a rename; refuse to replace a file unasked,
    and ever to replace one of `protected` (the ledger's inputs)."""
    return write_atomic(
        Path(path), lambda handle: handle.write(text.encode()), overwrite, protected=protected
    )


def canonical_attempts(frame: pl.DataFrame) -> pl.DataFrame:
    """The attempts as `convert` and the app's export write them: loading the file back
    gives the same attempts and figures.

    `outcome` is an alias of status (SPEC section 1): beside a raw `status` it would make the
    file ambiguous to every reader, ledger-tui included, so it is left out (loading derives it
    again from the status).
    """
    if "status" in frame.columns and "outcome" in frame.columns:
        return frame.drop("outcome")
    return frame


def input_problem(target: str | Path, protected: Sequence[str | Path]) -> str | None:
    """Why `target` must not be written: it is a file the ledger reads (by name or inode), or a
    file inside a folder it reads. None when it is not."""
    path = Path(target)
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return None  # a link loop: the write itself will say
    for source in protected:
        loaded = Path(source)
        try:
            loaded_resolved = loaded.resolve()
        except (OSError, RuntimeError):
            continue
        if resolved == loaded_resolved or _same_file(path, loaded):
            return f"{target}: that is {source}, which this ledger reads; pick another name"
        inside = loaded_resolved.is_dir() and resolved.is_relative_to(loaded_resolved)
        if inside and (path.exists() or path.is_symlink()):
            return f"{target}: inside {source}, a folder this ledger reads; pick another name"
    return None


def _same_file(left: Path, right: Path) -> bool:
    try:
        return os.path.samefile(left, right)
    except OSError:
        return False


def write_attempts(
    frame: pl.DataFrame,
    path: str | Path,
    fmt: str | None = None,
    *,
    overwrite: bool = False,
    spreadsheet_safe: bool = False,
    protected: Sequence[str | Path] = (),
) -> Path:
    """Write attempts as csv, parquet, jsonl or json, atomically, never overwriting unasked,
    never over one of `protected` (the ledger's inputs).

    The data is written exactly, in the canonical schema (`canonical_attempts`; CSV carries
    lists and objects as their JSON text). `spreadsheet_safe` (CSV only) neutralises every
    cell, and column name, that a spreadsheet would run as a formula: see
    `neutralise_formulas`.
    """
    target = Path(path)
    chosen = fmt or format_for_path(target, ATTEMPT_FORMATS)
    # Read back, a `trace` is relative to the written file's folder: rewritten for it.
    frame = rebased_traces(canonical_attempts(frame), target)
    writers = {
        "csv": lambda handle: _csv_file_ready(frame, spreadsheet_safe).write_csv(handle),
        "parquet": lambda handle: frame.write_parquet(handle),
        "jsonl": lambda handle: _csv_ready(frame).write_ndjson(handle),
        "json": lambda handle: _csv_ready(frame).write_json(handle),
    }
    if chosen not in writers:
        raise ExportError(f"{target}: unknown attempts format {chosen!r}")
    return write_atomic(target, writers[chosen], overwrite, protected=protected)


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
# A plain number (`-3`, `+1.5`, `-2e-3`) is read as a number, not run: it stays as it is.
_NUMBER_PATTERN = r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
_NUMBER = re.compile(_NUMBER_PATTERN)


def neutralise_text(text: str) -> str:
    """`text` with a leading apostrophe if a spreadsheet would run it as a formula."""
    if text[:1] and text[0] in _FORMULA_STARTS and not _NUMBER.match(text):
        return "'" + text
    return text


# What starts raw HTML in markdown (CommonMark): a tag, a closing tag, a comment, a processing
# instruction or declaration, an autolink; and an entity reference.
_HTML_START = re.compile(
    r"<(?=[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|$)|/[A-Za-z]|[!?]|[A-Za-z][A-Za-z0-9+.-]{1,31}:)"
)
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


def escape_html(text: str) -> str:
    """`text` with what markdown would read as raw HTML (a tag, a comment, an autolink, an
    entity) escaped, so it shows as text: `<script>` -> `&lt;script>`. Other `<` stay (the
    `<U+202E>` of `safe_text` reads as itself)."""
    return _HTML_START.sub("&lt;", _ENTITY.sub("&amp;", text))


def neutralise_formulas(frame: pl.DataFrame) -> pl.DataFrame:
    """Text cells, and column names, a spreadsheet would run as formulas get a leading
    apostrophe (`=HYPERLINK(...)` -> `'=HYPERLINK(...)`): the documented `--spreadsheet-safe`.

    Cells that start with = + - @ (or their full-width forms), a tab or a carriage return
    are text to a person but code to a spreadsheet. Numbers stay numbers: a negative number
    in a numeric column is not text, and a text cell that is a plain number (`-3`) is read
    by a spreadsheet as that number. Category columns are neutralised as text.
    """
    text = frame.with_columns(
        pl.col(name).cast(pl.String)
        for name, dtype in frame.schema.items()
        if isinstance(dtype, (pl.Enum, pl.Categorical))
    )
    text = text.with_columns(
        pl.when(
            pl.col(name).str.contains(_FORMULA_PATTERN)
            & ~pl.col(name).str.contains(_NUMBER_PATTERN)
        )
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


def write_atomic(
    target: Path, write: Any, overwrite: bool, *, protected: Sequence[str | Path] = ()
) -> Path:
    """Write through a temporary file in the target's folder, then move it into place.

    A reader never sees a half-written file, and a failure leaves the target as it was.
    Without `overwrite` the move itself refuses an existing file (a hard link, which fails
    if the name exists), so a file that appears meanwhile is not replaced either. A file
    the ledger reads (`protected`) is never replaced; a replaced file keeps its mode (and
    owner and group where allowed).
    """
    problem = input_problem(target, protected)
    if problem is not None:
        raise ExportError(problem)
    if target.is_dir():
        raise ExportError(f"{target}: is a folder; name a file to write")
    if (target.exists() or target.is_symlink()) and not overwrite:
        raise TargetExists(target)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise ExportError(f"{target}: folder {directory} does not exist")
    try:
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{target.name}{TEMPORARY_MARK}", suffix=".tmp", dir=directory
        )
    except OSError as error:
        raise ExportError(f"{target}: cannot write in {directory} ({error.strerror})") from None
    _in_flight.add(temporary)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        _take_over_mode(Path(temporary), target if overwrite else None)
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
    finally:
        _in_flight.discard(temporary)
    return target


TEMPORARY_MARK = ".ledger-tui-"
"""In every temporary file's name: `.NAME.ledger-tui-XXXXXXXX.tmp` beside NAME."""

# Temporary files being written now (by any thread): removed at exit if a write is cut short.
_in_flight: set[str] = set()


@atexit.register
def _remove_in_flight() -> None:
    for temporary in list(_in_flight):
        with suppress(OSError):
            os.unlink(temporary)


def _take_over_mode(temporary: Path, replaced: Path | None) -> None:
    """Give the new file the mode a new file would have, or the mode (and owner and group,
    where this user may) of the file it replaces."""
    status = None
    if replaced is not None:
        with suppress(OSError):
            status = replaced.stat()  # follows a link: the file the name points at
    if status is None:
        # mkstemp makes the file private (0600); give it the mode a new file would have.
        os.chmod(temporary, _new_file_mode())
        return
    # Owner first (chown clears set-id bits), then the group alone if the owner is not ours.
    with suppress(OSError):
        os.chown(temporary, status.st_uid, status.st_gid)
    if os.stat(temporary).st_gid != status.st_gid:
        with suppress(OSError):
            os.chown(temporary, -1, status.st_gid)
    os.chmod(temporary, stat.S_IMODE(status.st_mode))


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
