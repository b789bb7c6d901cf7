"""Inputs are never changed: fingerprint every file a load may read, before and after.

`unchanged(paths)` is a context manager; `guarded(function)` wraps `load`, `scan` or any
function whose first argument is the path(s) it reads, so a test module can swap it in for
every call. Regular files are hashed; anything else (a pipe, a link, a folder) is recorded by
kind and mode, and never opened, so a FIFO cannot block the check. Every entry also records
its change time (ctime), which the kernel moves on any write.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

Fingerprint = dict[str, tuple[object, ...]]
_WHOLE = 1 << 30  # files up to 1 GiB are hashed whole
_SAMPLE = 16 << 20
F = TypeVar("F", bound=Callable[..., Any])


def _entry(path: Path) -> tuple[object, ...]:
    try:
        link = os.lstat(path)
    except OSError as error:
        return ("missing", error.errno)
    if stat.S_ISLNK(link.st_mode):
        return ("link", os.readlink(path))
    if not stat.S_ISREG(link.st_mode):
        return ("other", stat.S_IFMT(link.st_mode), stat.S_IMODE(link.st_mode))
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        if link.st_size <= _WHOLE:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        else:  # a (sparse) file of many GB: its ends, beside ctime, which any write moves
            digest.update(stream.read(_SAMPLE))
            stream.seek(-_SAMPLE, os.SEEK_END)
            digest.update(stream.read(_SAMPLE))
    return (
        "file",
        digest.hexdigest(),
        link.st_size,
        link.st_mtime_ns,
        link.st_ctime_ns,
        link.st_mode,
    )


def fingerprint(paths: Iterable[str | Path]) -> Fingerprint:
    """Every file and folder at or below `paths` (links not followed), by path."""
    found: Fingerprint = {}
    for given in paths:
        root = Path(given)
        found[str(root)] = _entry(root)
        if root.is_dir() and not root.is_symlink():
            for folder, dirs, names in os.walk(root):
                for name in [*dirs, *names]:
                    child = Path(folder) / name
                    found[str(child)] = _entry(child)
    return found


def _as_paths(given: object) -> list[str | Path]:
    if isinstance(given, (str, Path)):
        return [given]
    if isinstance(given, (list, tuple)):
        return [item for item in given if isinstance(item, (str, Path))]
    return []


@contextmanager
def unchanged(paths: object) -> Iterator[None]:
    """Assert that the files at `paths` (a path or a list) are byte for byte the same after
    the block, whether it returned or raised."""
    listed = _as_paths(paths)
    before = fingerprint(listed)
    try:
        yield
    finally:
        after = fingerprint(listed)
        assert after == before, f"input changed: {sorted(set(after.items()) ^ set(before.items()))}"


def guarded(function: F) -> F:
    """`function` checked to leave the files named by its first argument unchanged."""

    @functools.wraps(function)
    def wrapper(paths: object, *args: Any, **kwargs: Any) -> Any:
        with unchanged(paths):
            return function(paths, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
