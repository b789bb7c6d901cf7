"""Paths -> the inputs a load reads: folders walked, links followed once, pipes, devices and
dangling links refused by name, permissions checked, a format or an importer for each file."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import polars as pl

from tui_ledger.load.errors import LoadError, shown
from tui_ledger.load.formats import (
    FORMAT_LABELS,
    FORMAT_NAMES,
    SUFFIX_FORMATS,
    SUPPORTED_SUFFIXES,
    Head,
    head_of,
    suffix_of,
)

if TYPE_CHECKING:
    from tui_ledger.importers import Imported, ImportOptions


class Importer(Protocol):
    """What the loader needs of a harness importer (tui_ledger.importers.Importer)."""

    @property
    def name(self) -> str: ...

    def read(self, path: Path, options: ImportOptions | None = None) -> pl.DataFrame: ...

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported: ...


@dataclass(frozen=True)
class Input:
    """One file (or harness run) to read: its path, as the user named it, and how to read it."""

    path: Path
    display: str
    fmt: str | None  # None: an importer reads it
    importer: Importer | None = None
    # A table file's size and first bytes, read once when it is found (`expand`); None when
    # that read failed (opening it says why) or an importer reads the path.
    head: Head | None = field(default=None, compare=False, repr=False)


def find_importer(path: Path) -> Importer | None:
    """The harness importer that recognises `path`, if the importers package offers one."""
    try:
        from tui_ledger.importers import find_importer
    except ImportError:  # the loader works without importers, for plain tables
        return None
    return find_importer(path)


def named_importer(name: str) -> Importer | None:
    """The importer called `name` (as `fmt`), or None when there is no such importer."""
    try:
        from tui_ledger.importers import get_importer
    except ImportError:
        return None
    try:
        return get_importer(name)
    except ValueError:
        return None


def importer_names() -> list[str]:
    """The names `fmt` may give an importer by."""
    try:
        from tui_ledger.importers import importer_names
    except ImportError:
        return []
    return list(importer_names())


def expand(paths: Sequence[str | Path] | str | Path, fmt: str | None) -> list[Input]:
    """The inputs `paths` name: folders walked, each file once, each with its format or
    importer (`fmt` forces either). Raises `LoadError` for a path that cannot be read."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    forced, forced_importer = _format_name(fmt)
    if not paths:
        raise LoadError("No file given; name at least one file or folder of attempts.")
    inputs: list[Input] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given).expanduser()
        display = str(given)
        if not path.exists() and not path.is_symlink():
            raise LoadError(f"{display}: no such file or folder; check the path.", source=display)
        _check_kind(path, display)
        if forced_importer is not None:
            _check_readable(path, display)
            found = [Input(path, display, None, forced_importer)]
        else:
            found = _inputs_for(path, display, forced)
        for item in found:
            key = item.path.resolve()
            if key not in seen:
                seen.add(key)
                inputs.append(item)
    return inputs


def _inputs_for(path: Path, display: str, forced: str | None) -> list[Input]:
    _check_readable(path, display)
    importer = None if forced else find_importer(path)
    if importer is not None:
        return [Input(path, display, None, importer)]
    if not path.is_dir():
        return [_table(path, display, forced)]
    inputs = []
    for child in files_below(path, display):
        shown = str(Path(display) / child.relative_to(path))
        _check_readable(child, shown)
        child_importer = None if forced else find_importer(child)
        if child_importer is not None:
            inputs.append(Input(child, shown, None, child_importer))
        else:
            inputs.append(_table(child, shown, forced))
    if not inputs:
        raise LoadError(
            f"{display}: the folder holds no {FORMAT_LABELS} files "
            f"(extensions {', '.join(SUPPORTED_SUFFIXES)}); name the files to read.",
            source=display,
        )
    return inputs


def files_below(folder: Path, display: str | None = None) -> list[Path]:
    """Every supported, non-hidden file below `folder`, sorted by its path inside it: what a
    load of a plain folder reads (`watch` lists a folder with it too; `display` is how errors
    name the folder, by default its path).

    Links to folders are followed, each real folder read once (so a link back up the tree
    cannot loop). A supported name that is not a regular file (a pipe, a device, a link to
    nothing or a link loop) stops the load, naming it, rather than being skipped unseen.
    """

    display = str(folder) if display is None else display

    def refuse(error: OSError) -> None:
        where = Path(display) / Path(error.filename).relative_to(folder)
        raise LoadError(
            f"{where}: cannot be read ({error.strerror or error}); check its permissions.",
            source=str(where),
        )

    found = []
    visited: set[Path] = set()
    for root, dirs, names in os.walk(folder, onerror=refuse, followlinks=True):
        real = Path(root).resolve()
        if real in visited:
            dirs[:] = []
            continue
        visited.add(real)
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        for name in names:
            child = Path(root) / name
            if name.startswith(".") or not suffix_of(child):
                continue
            _check_kind(child, str(Path(display) / child.relative_to(folder)))
            if child.is_file():
                found.append(child)
    return sorted(found, key=lambda child: child.relative_to(folder).parts)


def _kind_problem(path: Path) -> str | None:
    """Why `path` cannot be read as a file or a folder of attempts, or None when it can."""
    try:
        mode = path.stat().st_mode  # follows links
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a symbolic link that loops back on itself; point it at the file"
        if path.is_symlink():
            target = shown(os.readlink(path))
            return f"a symbolic link to {target}, which does not exist; fix the link"
        return None  # the caller's own checks say what is wrong
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    what = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
    )
    # A pipe can be read once and may never end; the loader reads a file more than once.
    return f"{what}, not a regular file; save the data to a file first and read that"


def check_path_kind(path: str | Path) -> None:
    """Refuse a link loop, a dangling link, a pipe or a device by name, without opening it.

    The CLI calls this before any screen is drawn, so the app fails with the loader's words.
    """
    _check_kind(Path(path), str(path))


def _check_kind(path: Path, display: str) -> None:
    """Refuse, at once and without opening it, anything but a regular file or a folder."""
    problem = _kind_problem(path)
    if problem is not None:
        raise LoadError(f"{display}: {problem}.", source=display)


def _check_readable(path: Path, display: str) -> None:
    wanted = os.R_OK | (os.X_OK if path.is_dir() else 0)
    if not os.access(path, wanted):
        raise LoadError(
            f"{display}: cannot be read (permission denied); check its permissions.",
            source=display,
        )


def _format_name(fmt: str | None) -> tuple[str | None, Importer | None]:
    """A forced table format, or a forced importer (`fmt` may name one), or neither."""
    if fmt is None:
        return None, None
    name = FORMAT_NAMES.get(fmt.strip().lower().lstrip("."))
    if name is not None:
        return name, None
    importer = named_importer(fmt)
    if importer is not None:
        return None, importer
    known = ["csv", "tsv", "parquet", "json", "ndjson", "jsonl", *importer_names()]
    raise LoadError(f"Unknown format {fmt!r}; use one of {', '.join(known)}.")


def _table(path: Path, display: str, forced: str | None) -> Input:
    """A table file's input: its head read once, its format forced or found from it."""
    try:
        head: Head | None = head_of(path)
    except OSError:
        head = None  # opening it says what is wrong
    return Input(path, display, forced or _format_of(path, display, head), head=head)


def _format_of(path: Path, display: str, head: Head | None) -> str:
    suffix = suffix_of(path) if head is None else head.suffix
    sniffed = None if head is None else head.sniffed
    if suffix == ".json" and sniffed == "ndjson":
        return "ndjson"  # JSON Lines saved as .json, as many tools do
    if suffix:
        return SUFFIX_FORMATS[suffix]
    if sniffed is None:
        kind = path.suffix or "no extension"
        raise LoadError(
            f"{display}: unsupported format ({kind}); ledger-tui reads {FORMAT_LABELS}: "
            "export the attempts to CSV, or give the file a .csv, .tsv, .parquet, .json "
            "or .jsonl extension if it is one of those.",
            source=display,
        )
    return sniffed
