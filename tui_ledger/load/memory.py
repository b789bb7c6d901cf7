"""Will it fit: the memory an eager read needs against what this process may still allocate
(MemAvailable, a cgroup's limit, RLIMIT_DATA), checked before reading."""

from __future__ import annotations

import os
import resource
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from tui_ledger.load.errors import LoadError
from tui_ledger.load.inputs import Input, expand
from tui_ledger.procfs import kilobytes, proc_field
from tui_ledger.text.numbers import format_bytes
from tui_ledger.text.wording import plural

# Bytes of memory an eager load needs at least, per byte of file, by format. Measured peaks are
# higher (about 7x for CSV, 3x for NDJSON); these stay below them so that only a load that
# certainly cannot fit is refused.
_MEMORY_PER_BYTE = {"csv": 3.0, "tsv": 3.0, "json": 1.5, "ndjson": 1.5}
_PARQUET_BYTES_PER_CELL = 8


def available_memory() -> int | None:
    """Bytes this process may still allocate: MemAvailable, or a cgroup's limit, or what
    RLIMIT_DATA (`prlimit --data`, `ulimit -d`) leaves, whichever is lowest."""
    found: list[int] = []
    limit_data = _data_limit_left()
    if limit_data is not None:
        found.append(limit_data)
    free = kilobytes(proc_field("/proc/meminfo", "MemAvailable"))
    if free is not None:
        found.append(free)
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text().strip()
        if limit != "max":
            found.append(max(int(limit) - int(used), 0))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def _data_limit_left() -> int | None:
    """What RLIMIT_DATA leaves of this process's data segment (None: no limit). Past it an
    allocation fails, and polars aborts the process instead of raising."""
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    if soft == resource.RLIM_INFINITY:
        return None
    used = kilobytes(proc_field("/proc/self/status", "VmData")) or 0
    return max(soft - used - _RUNTIME_RESERVE, 0)


# What polars' worker threads and allocator map in a data segment as soon as a query runs,
# however small the file (measured: 250-400 MB of VmData on 2 cores). Under RLIMIT_DATA it
# is not free for the data, and an allocation past the limit aborts the process.
_RUNTIME_RESERVE = 384 * 2**20


def _memory_needed(item: Input) -> int:
    """A lower bound of the memory an eager load of `item` takes (0 when unknown)."""
    if item.importer is not None or item.fmt is None:
        return 0  # importers read harness logs their own way
    try:
        if item.head is None:
            return 0  # opening it says what is wrong
        size = item.head.size
        if item.head.compressed:
            # gzip's trailer holds the uncompressed size modulo 2**32: trust it only when it
            # is at least the compressed size (text compresses, so it is never smaller).
            with item.path.open("rb") as stream:
                stream.seek(-4, os.SEEK_END)
                unpacked = int.from_bytes(stream.read(4), "little")
            size = max(unpacked, size)
        if item.fmt == "parquet":
            lazy = pl.scan_parquet(item.path, glob=False)
            rows = lazy.select(pl.len()).collect().item()
            return int(rows) * len(lazy.collect_schema()) * _PARQUET_BYTES_PER_CELL
    except (OSError, pl.exceptions.PolarsError):
        return 0  # opening it says what is wrong
    return int(size * _MEMORY_PER_BYTE.get(item.fmt, 1.0))


def read_whole(item: Input) -> bool:
    """Whether `scan` has to hold this input in memory whole (JSON arrays, gzip, importers)."""
    if item.fmt in (None, "json"):
        return True
    return item.head is not None and item.head.compressed


def _memory_shortfall(inputs: list[Input], factor: float = 1.0) -> tuple[str, str, str] | None:
    """(largest input, where, what) when `factor` x the least memory an eager read of
    `inputs` needs is more than what is free; None when it fits, or nothing is known."""
    available = available_memory()
    if available is None or not inputs:
        return None
    needed = {item.display: _memory_needed(item) for item in inputs}
    total = int(sum(needed.values()) * factor)
    if total <= available:
        return None
    largest = max(needed, key=lambda display: needed[display])
    where = largest if len(inputs) == 1 else f"{plural(len(inputs), 'file')} ({largest} and more)"
    what = f"needs {'about' if factor > 1 else 'at least'} {format_bytes(total)} of memory"
    return largest, where, f"{what} and {format_bytes(available)} is free"


def check_memory(inputs: list[Input], *, streaming: bool = False) -> None:
    """Refuse, before reading, a load that cannot fit in the memory left (rather than letting
    the system kill the process halfway); `ledger-tui summary` streams such files. `streaming`:
    these are inputs even `scan` reads whole (JSON arrays, gzip, importers)."""
    short = _memory_shortfall(inputs)
    if short is None:
        return
    largest, where, what = short
    if streaming:
        advice = (
            "this format is read whole even when streaming (a JSON array, gzip or a harness "
            "log); decompress it, or convert it to CSV, NDJSON or Parquet on a larger machine"
        )
    else:
        advice = (
            "`ledger-tui summary` streams files this large, or split the file, or filter it first"
        )
    raise LoadError(f"{where}: opening this {what}; {advice}.", source=largest)


# An eager load's measured peak was about 2x the lower bound `check_memory` refuses by (7x a
# CSV's size against 3x; 3x NDJSON against 1.5x) when CSV cells were all read as text. Read
# typed, a CSV's `summary` peaks near 1.7x its size (10M rows), so for CSV both figures are now
# cautious; they are kept, since a file that falls back to text (a ragged row, bytes that are
# not UTF-8) still takes about 5x, and under a hard limit a load that does not fit aborts.
_PEAK_OVER_LOWER_BOUND = 2.0


def too_large_to_load(
    paths: Sequence[str | Path] | str | Path, *, fmt: str | None = None
) -> str | None:
    """Why an eager `load` of `paths` is expected not to fit in the memory left (its measured
    peak, not the lower bound `load` refuses by), in words for people; None when it fits.

    `ledger-tui summary` streams (`scan`) what does not fit. Raises `LoadError` for paths that
    cannot be read at all, as `load` would.
    """
    short = _memory_shortfall(expand(paths, fmt), _PEAK_OVER_LOWER_BOUND)
    return None if short is None else f"{short[1]}: opening it in memory {short[2]}"
