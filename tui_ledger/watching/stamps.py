"""What the watcher reads of the disk: a file's or a folder's stamp (for a folder, of the files
a load of it reads, as its importer names them), whether rows appended to a file can be read
on their own (`appendable_format`), where complete records end (`RecordCounter`), where the
last read stopped (`ReadTail`), and a cheap fingerprint of the bytes read, which tells an
append from a rewrite (`verdict_of`). The watcher (watch.py) decides from these what to read.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_ledger.load import SUPPORTED_SUFFIXES

_BLOCK = 1 << 20  # bytes read at a time when counting the lines of a whole file
_HEAD = 4096  # bytes compared at the start of a file to tell an append from a rewrite
TAIL_BYTES = 256  # bytes kept just before where the last read stopped
_WHOLE_HASH = 8 << 20  # up to this many bytes read, the fingerprint hashes all of them
_EDGE = 64 << 10  # beyond: the first and last bytes hashed ...
_SAMPLES, _SAMPLE = 64, 4096  # ... and this many blocks of this size spread between
_APPENDABLE = {"csv": "csv", "tsv": "tsv", "ndjson": "ndjson", "jsonl": "ndjson"}
_TERMINAL_BENCH_FILES = frozenset({"results.json", "run_metadata.json"})
# Inside a Terminal-Bench trial folder: logs that change all the time and hold no attempts.
_TERMINAL_BENCH_LOGS = frozenset({"sessions", "agent-logs", "panes"})


@dataclass(frozen=True)
class FileStamp:
    size: int
    mtime_ns: int
    inode: int


@dataclass
class ReadTail:
    """Where the last read of an appendable file stopped, and what it saw there."""

    fmt: str  # csv, tsv or ndjson
    inode: int
    loaded_size: int  # bytes the attempts reflect (a half-written last line included)
    consumed: int  # end of the last complete record read
    numbered: int  # what the loader's numbers count before `consumed` (CSV: lines, header too)
    header: bytes  # CSV/TSV: the header record, newline included
    fingerprint: bytes  # of the bytes before `consumed`, to tell an append from a rewrite
    tail: bytes  # the bytes just before `consumed`


@dataclass
class WatchedPath:
    """One watched path."""

    path: Path
    display: str  # as given: the loader's `source` for a file named on its own
    fmt: str | None  # csv/tsv/ndjson when appended rows can be read on their own
    folder_mode: str = "plain"  # plain (files of attempts), or the importer that reads it
    tail: ReadTail | None = None
    open_at: object = None  # the stamp at which a CSV record was seen open across lines


def file_stamp(path: Path) -> FileStamp:
    status = path.stat()
    return FileStamp(status.st_size, status.st_mtime_ns, status.st_ino)


def folder_mode_of(folder: Path, fmt: str | None) -> str:
    """The name of the importer that reads the folder, or plain (files of attempts)."""
    from tui_ledger.importers import find_importer, get_importer

    if fmt is None:
        importer = find_importer(folder)
    else:
        try:
            importer = get_importer(fmt)
        except ValueError:
            return "plain"  # a table format: the folder's files are read as such
    if importer is None:
        return "plain"
    return str(importer.name)


# The files each importer reads in a folder (the importers' own names and suffixes), so a log
# that grows beside them does not reload the ledger. Importers not named here: every file.
_TEMPORARY = re.compile(r"\.ledger-tui-[^/]*\.tmp$")  # export_files' temporary files


def _read_by(mode: str, name: str) -> bool:
    """Whether a load of a folder read as `mode` reads a file called `name` in it."""
    lower = name.lower()
    if _TEMPORARY.search(name):
        return False
    if mode == "plain":
        return not name.startswith(".") and lower.endswith(SUPPORTED_SUFFIXES)
    if mode == "terminal-bench":
        return name in _TERMINAL_BENCH_FILES
    if mode == "harbor":
        return name == "result.json"
    if mode == "swe-bench":
        return lower.endswith((".traj", ".json"))  # trajectories and harness reports
    if mode == "openhands":
        return lower.startswith("output") or lower.endswith("report.json")
    if mode == "aider":
        return name == ".aider.results.json"
    if mode in ("claude-code", "codex"):
        return lower.endswith(".jsonl")
    if mode == "otel":
        return lower.endswith((".json", ".jsonl", ".ndjson"))
    return True


def folder_stamp(folder: Path, mode: str) -> tuple[tuple[str, int, int, int], ...]:
    """(relative path, size, mtime_ns, inode) of every file below that a load would read,
    dotfiles included where the importer reads them (`.aider.results.json`)."""
    entries: list[tuple[str, int, int, int]] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(name for name in dirs if not name.startswith("."))
        if mode == "terminal-bench":
            dirs[:] = [name for name in dirs if name not in _TERMINAL_BENCH_LOGS]
        for name in names:
            if not _read_by(mode, name):
                continue
            child = Path(root) / name
            try:
                status = child.stat()
            except OSError:
                continue  # removed while listing: the next poll sees the folder as it is
            relative = str(child.relative_to(folder))
            entries.append((relative, status.st_size, status.st_mtime_ns, status.st_ino))
    return tuple(sorted(entries))


def appendable_format(path: Path, fmt: str | None) -> str | None:
    """csv, tsv or ndjson when rows appended to `path` can be read on their own, else None."""
    try:
        if not path.is_file():
            return None
        with path.open("rb") as stream:
            head = stream.read(_HEAD)
    except OSError:
        return None
    if head.startswith(b"\x1f\x8b"):
        return None  # gzip: appended bytes are not appended rows
    if fmt is not None:
        return _APPENDABLE.get(fmt.strip().lower().lstrip("."))
    from tui_ledger.importers import find_importer

    if find_importer(path) is not None:
        return None
    name = path.name.lower()
    for suffix, found in ((".csv", "csv"), (".tsv", "tsv"), (".jsonl", "ndjson")):
        if name.endswith(suffix):
            return found
    if name.endswith(".ndjson"):
        return "ndjson"
    if name.endswith(".json"):
        # JSON Lines saved as .json (the loader reads it as NDJSON): one object on line one.
        import json

        first = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n").split("\n", 1)[0]
        if not first.startswith("{"):
            return None
        try:
            json.loads(first)
        except ValueError:
            return None
        return "ndjson"
    return None


class RecordCounter:
    """Finds where complete records end in bytes fed in order, and numbers them as the loader.

    CSV/TSV: a newline outside quotes ends a record (a quoted cell may hold newlines; doubled
    quotes keep the count of quotes even), and `numbered` counts lines, since the loader numbers
    a row by the line it starts on. NDJSON: every newline ends a record, and `numbered` counts
    the lines with something on them (the loader's record numbers). `end` is the offset just
    past the last complete record.
    """

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.numbered = 0
        self.end = 0
        self._inside = False  # CSV: inside a quoted cell
        self._fed = 0
        self._lines = 0  # CSV: lines fed so far
        self._opened_at_line: int | None = None  # CSV: the line a still-open quote opened on

    @property
    def open_across_lines(self) -> bool:
        """CSV: a quote is open and a newline has passed since it opened."""
        return (
            self._inside
            and self._opened_at_line is not None
            and (self._lines > self._opened_at_line)
        )

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the file."""
        last = data.rfind(b"\n")
        if self.fmt == "ndjson":
            if last >= 0:
                self.numbered += len(re.findall(rb"(?m)^[ \t\r]*[^ \t\r\n]", data[: last + 1]))
                self.end = self._fed + last + 1
        elif not self._inside and b'"' not in data:
            if last >= 0:
                self._lines += data.count(b"\n")
                self.numbered = self._lines
                self.end = self._fed + last + 1
        else:
            pieces = data.split(b"\n")
            position = self._fed
            for piece in pieces[:-1]:
                position += len(piece) + 1
                self._lines += 1
                if piece.count(b'"') % 2:
                    self._inside = not self._inside
                    self._opened_at_line = self._lines - 1 if self._inside else None
                if not self._inside:
                    self.numbered = self._lines
                    self.end = position
            if pieces[-1].count(b'"') % 2:
                self._inside = not self._inside
                self._opened_at_line = self._lines if self._inside else None
        self._fed += len(data)


def read_tail(path: Path, fmt: str, stamp: FileStamp) -> ReadTail | None:
    """Where reading `path` (as it was at `stamp`) stopped: header, records, end bytes."""
    counter = RecordCounter(fmt)
    head = b""
    try:
        with path.open("rb") as stream:
            remaining = stamp.size
            while remaining > 0:
                block = stream.read(min(_BLOCK, remaining))
                if not block:
                    break
                head = head or block[:_HEAD]
                counter.feed(block)
                remaining -= len(block)
            end = counter.end
            fingerprint = fingerprint_of(stream, end)
            stream.seek(max(end - TAIL_BYTES, 0))
            tail = stream.read(min(end, TAIL_BYTES))
    except OSError:
        return None
    header = b"" if fmt == "ndjson" else _first_record(head)
    if fmt != "ndjson" and not header:
        return None  # no complete header in the first bytes: any change reloads
    return ReadTail(fmt, stamp.inode, stamp.size, end, counter.numbered, header, fingerprint, tail)


def fingerprint_of(stream: Any, end: int) -> bytes:
    """A cheap fingerprint of the file's first `end` bytes: their hash when they are at most
    8 MiB (a few milliseconds), else the hash of the first and last 64 KiB and of 64 blocks of
    4 KiB spread evenly between (a rewrite elsewhere in a larger file may go unseen; its
    size or the bytes around the read position usually change too). Moves the stream."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(end.to_bytes(8, "little"))
    if end <= _WHOLE_HASH:
        stream.seek(0)
        remaining = end
        while remaining > 0:
            block = stream.read(min(_BLOCK, remaining))
            if not block:
                break
            digest.update(block)
            remaining -= len(block)
        return digest.digest()
    spots = [(0, _EDGE), (end - _EDGE, _EDGE)]
    step = (end - 2 * _EDGE) // (_SAMPLES + 1)
    spots += [(_EDGE + step * (index + 1), _SAMPLE) for index in range(_SAMPLES)]
    for offset, size in spots:
        stream.seek(offset)
        digest.update(stream.read(size))
    return digest.digest()


def _first_record(block: bytes) -> bytes:
    """The header record at the start of `block`, newline included (b"" if it does not end)."""
    counter = RecordCounter("csv")
    for line in block.split(b"\n")[:-1]:
        counter.feed(line + b"\n")
        if counter.end:
            return block[: counter.end]
    return b""


def verdict_of(watched: WatchedPath, new: object) -> str:
    """ "append", "same" (touched, or still the same half line) or "reload"."""
    tail = watched.tail
    if tail is None or not isinstance(new, FileStamp):
        return "reload"
    if new.inode != tail.inode or new.size < tail.loaded_size:
        return "reload"
    try:
        with watched.path.open("rb") as stream:
            fingerprint = fingerprint_of(stream, tail.consumed)
    except OSError:
        return "reload"
    if fingerprint != tail.fingerprint:
        return "reload"  # rewritten in place
    if new.size == tail.loaded_size:
        return "same"
    if tail.consumed < tail.loaded_size:
        return "reload"  # the last load read a half line as a row; it has grown since
    return "append"
