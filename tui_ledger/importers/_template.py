"""The importer template: what every harness importer does the same way, said once.

An importer says only what is its own: what a file of its kind looks like (`looks_like`),
which files of a folder decide (`verdict`), which files a walk keeps, and how one record
becomes a row. Finding a file or a folder within a depth, walking it, the "holds no ..." and
"does not exist" errors, and building the frame from rows live here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tui_ledger.importers._base import ImporterError, build_frame

# Detection looks into at most this many subfolders of each folder.
DETECT_FANOUT = 3

# A folder's verdict from its sorted file names: True or False decides, None looks deeper.
Verdict = Callable[[Path, list[str]], "bool | None"]


def detect_in(
    path: Path,
    looks_like: Callable[[Path], bool],
    in_folder: Callable[[Path], bool] | None = None,
) -> bool:
    """True when `path` is a file that `looks_like` one, or a folder that `in_folder` accepts
    (never, without one); a path that cannot be read is no match."""
    try:
        if path.is_file():
            return looks_like(path)
        if path.is_dir() and in_folder is not None:
            return in_folder(path)
    except OSError:
        return False
    return False


def detect(path: Path, looks_like: Callable[[Path], bool], verdict: Verdict, depth: int) -> bool:
    """True when `path` is a file that `looks_like` one, or a folder with one (by `verdict`)
    at most `depth` levels down; a path that cannot be read is no match."""
    return detect_in(path, looks_like, lambda folder: find_below(folder, depth, verdict))


def find_below(folder: Path, depth: int, verdict: Verdict, fanout: int = DETECT_FANOUT) -> bool:
    """`verdict` on `folder`'s files, else on its first `fanout` visible subfolders, `depth`
    levels down at most."""
    with os.scandir(folder) as entries:
        ordered = sorted(entries, key=lambda entry: entry.name)
    found = verdict(folder, [entry.name for entry in ordered if entry.is_file()])
    if found is not None:
        return found
    if depth == 0:
        return False
    subfolders = [e for e in ordered if e.is_dir() and not e.name.startswith(".")]
    return any(find_below(Path(e.path), depth - 1, verdict, fanout) for e in subfolders[:fanout])


def first_file_decides(
    is_candidate: Callable[[str], bool], looks_like: Callable[[Path], bool]
) -> Verdict:
    """A verdict: the first candidate file of a folder (by name) decides by its contents."""

    def verdict(folder: Path, names: list[str]) -> bool | None:
        for name in names:
            if is_candidate(name):
                return looks_like(folder / name)
        return None

    return verdict


def walk_files(root: Path, keep: Callable[[str], bool]) -> list[Path]:
    """Every file below `root` whose name `keep`s, folder by folder in name order, hidden
    folders skipped."""
    found = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        found += [Path(folder) / name for name in sorted(files) if keep(name)]
    return found


def input_files(path: Path, walk: Callable[[Path], Iterable[Path]], nothing: str) -> list[Path]:
    """The files to read: those `walk` finds below a folder, or the file `path` is.

    A folder with none is an `ImporterError` "holds no ..." (`nothing`); a missing path is
    "does not exist".
    """
    if path.is_dir():
        files = list(walk(path))
        if not files:
            raise ImporterError.at(path, nothing)
        return files
    if path.is_file():
        return [path]
    raise ImporterError.at(path, "does not exist")


def rows_frame(
    rows: Sequence[Mapping[str, Any]],
    schema: Mapping[str, pl.DataType],
    optional: Sequence[str] = (),
) -> pl.DataFrame:
    """The frame of `rows` (one mapping per attempt, a missing key is null) in `schema`."""
    columns = {name: [row.get(name) for row in rows] for name in schema}
    return build_frame(columns, schema, drop_if_all_null=optional)
