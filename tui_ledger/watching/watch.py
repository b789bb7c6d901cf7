"""Follow files of attempts while a run writes them: appended rows come in, rewrites reload.

```python
watcher = Watcher(["runs.jsonl", "tb-run/"])
ledger = watcher.load()                  # a full load, remembered as the starting point
for change in watcher.follow(stop):      # polls every 250 ms until `stop` is set
    if change.ledger is not None:
        show(change.ledger)              # the attempts now: appended rows, or a full reload
    if change.error:
        say(change.error)                # one line; the last good attempts stay
```

The watcher polls `stat` (size, mtime_ns, inode) of every path; for a folder, of the files a
load would read in it. No new dependency and no platform-specific notification API: a quarter
second is well inside the one second a live view may lag.

- **Appended rows.** A CSV, TSV or NDJSON/JSONL file named on its own (not gzip, not claimed
  by a harness importer) that only grew is read from where the last read stopped, up to the
  end of the last complete record; a half-written last line (no newline yet, or a CSV record
  still inside quotes) waits for its end. The new records go through the same `load.load`
  as everything else, as a small file (the header plus the new bytes), and their line numbers
  and any error are moved back onto the real file, so "runs.csv line 812" is still true.
- **Everything else reloads fully**: a file that shrank, was replaced (inode) or rewritten
  anywhere before where the last read stopped (a fingerprint of the bytes read: their hash up
  to 8 MiB, beyond that the first and last 64 KiB and 64 blocks spread between), a folder
  that gained or changed a file its importer reads (a Terminal-Bench trial's new
  `results.json`, a Harbor trial's `result.json`, an Aider exercise's `.aider.results.json`,
  a new session log), Parquet, JSON arrays,
  gzip files, importer output, and appended rows the small load cannot take as they are (new
  columns, a column type that would change, a different column mapping). A full reload waits
  until the paths have stood still for one poll, so a file caught mid-write is not read.
- **Never silent**: a CSV record whose quote opened on an earlier line and is still open when
  the file has stood still for a poll is a stray quote, not a cell being written: the file is
  read fully, and the loader's one-line error says where (a multi-line cell written slower
  than that is read again, correctly, once it ends).
- **Errors** come back as `Change.error` (one line, as `LoadError` says it) with `ledger` None
  for a failed reload, or with the other files' new rows for a bad appended row. The watcher
  keeps the last good attempts and does not try again until a path changes again.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from tui_ledger import schema
from tui_ledger.load import SUPPORTED_SUFFIXES, Ledger, LoadError, LoadReport, load
from tui_ledger.text.wording import plural
from tui_ledger.watching.watch_merge import merge_appended, relocate, same_mapping

if TYPE_CHECKING:
    from tui_ledger.importers import ImportOptions

__all__ = ["INTERVAL", "Change", "Stamp", "Watcher"]

INTERVAL = 0.25
"""Seconds between two polls."""

_BLOCK = 1 << 20  # bytes read at a time when counting the lines of a whole file
_HEAD = 4096  # bytes compared at the start of a file to tell an append from a rewrite
_TAIL = 256  # bytes kept just before where the last read stopped
_WHOLE_HASH = 8 << 20  # up to this many bytes read, the fingerprint hashes all of them
_EDGE = 64 << 10  # beyond: the first and last bytes hashed ...
_SAMPLES, _SAMPLE = 64, 4096  # ... and this many blocks of this size spread between
_LOAD_OPTIONS = ("columns", "zero_usage_is_missing", "fmt", "imports")
_APPENDABLE = {"csv": "csv", "tsv": "tsv", "ndjson": "ndjson", "jsonl": "ndjson"}
_SUFFIX_OF = {"csv": ".csv", "tsv": ".tsv", "ndjson": ".jsonl"}
_TERMINAL_BENCH_FILES = frozenset({"results.json", "run_metadata.json"})
# Inside a Terminal-Bench trial folder: logs that change all the time and hold no attempts.
_TERMINAL_BENCH_LOGS = frozenset({"sessions", "agent-logs", "panes"})


@dataclass(frozen=True)
class _FileStamp:
    size: int
    mtime_ns: int
    inode: int


Stamp = tuple[object, ...]
"""What the watched paths look like at one moment: one entry per path, compared whole."""


@dataclass(frozen=True)
class Change:
    """What one poll found.

    `ledger` is the attempts now (None when nothing new could be read); `added` counts the
    attempts appended to their files, `reloaded` says the files were read again from scratch,
    `error` is one line for people, `seconds` what reading the change took.
    """

    ledger: Ledger | None
    added: int = 0
    reloaded: bool = False
    error: str | None = None
    seconds: float = 0.0

    def describe(self) -> str:
        """The change in a few words, e.g. "+2 attempts" or "reloaded: 1,204 attempts"."""
        if self.error is not None and self.ledger is None:
            return f"not updated: {self.error}"
        if self.reloaded and self.ledger is not None:
            rows = self.ledger.attempts.height
            return f"reloaded: {plural(rows, 'attempt')}"
        return f"+{plural(self.added, 'attempt')}"


@dataclass
class _Tail:
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
class _Path:
    """One watched path."""

    path: Path
    display: str  # as given: the loader's `source` for a file named on its own
    fmt: str | None  # csv/tsv/ndjson when appended rows can be read on their own
    folder_mode: str = "plain"  # plain (files of attempts), or the importer that reads it
    tail: _Tail | None = None
    open_at: object = None  # the stamp at which a CSV record was seen open across lines


@dataclass
class _Appended:
    """New complete records of one file, loaded and placed on the real file's lines."""

    watched: _Path
    end: int  # bytes of the new records
    numbered: int  # what the loader's numbers count in them
    attempts: pl.DataFrame | None  # None: only blank lines
    report: LoadReport | None
    piece_tail: bytes
    fingerprint: bytes  # of the file up to the end of these records


class _OpenRecord(Exception):
    """Appended bytes hold no complete record, and a quote opened on an earlier line is still
    open: a cell being written, or a stray quote (told apart by the file standing still)."""


class _NeedsReload(Exception):
    """Appended rows that only a full reload reads faithfully."""


class _AppendError(Exception):
    """An appended row the loader refuses; the message names the real file and line."""


class Watcher:
    """Polls the paths of a load and turns what changed into new attempts (see the module).

    `paths` and the load options are those of `load.load`. One thread polls a watcher.
    """

    def __init__(
        self,
        paths: Sequence[str | Path],
        *,
        columns: Mapping[str, str] | None = None,
        zero_usage_is_missing: bool = False,
        fmt: str | None = None,
        imports: ImportOptions | None = None,
        interval: float = INTERVAL,
    ) -> None:
        self.paths = [str(path) for path in paths]
        self.imports = imports  # importer options and --outcomes: given to every full read
        # Appended rows are read on their own, where an outcomes join cannot see every key.
        appendable = imports is None or imports.outcomes is None
        self.columns = columns
        self.zero_usage_is_missing = zero_usage_is_missing
        self.fmt = fmt
        self.interval = interval
        self.ledger: Ledger | None = None
        """The attempts as last read (None until a load succeeds)."""
        self._watched: list[_Path] = []
        seen: set[Path] = set()
        for given in self.paths:
            path = Path(given).expanduser()
            key = path.resolve()
            if key in seen:
                continue  # the loader reads a path given twice once
            seen.add(key)
            tail = _appendable_format(path, fmt) if appendable else None
            self._watched.append(_Path(path, given, tail))
        self._seen: Stamp | None = None  # the stamp last acted on
        self._pending: Stamp | None = None  # a changed stamp waiting to stand still
        self._dirty = False  # the attempts may not match the files: the next change reloads
        self._detect_folders()

    @classmethod
    def from_load_options(
        cls,
        paths: Sequence[str | Path],
        load_options: Mapping[str, Any],
        *,
        interval: float = INTERVAL,
    ) -> Watcher:
        """A watcher for `load(paths, **options)`; options `load` does not take are ignored."""
        options = {name: load_options[name] for name in _LOAD_OPTIONS if name in load_options}
        return cls(paths, interval=interval, **options)

    # ------------------------------------------------------------------ the public steps

    def stamp(self) -> Stamp:
        """What the watched paths look like now (cheap: stat calls and folder listings)."""
        return tuple(self._stamp_of(watched) for watched in self._watched)

    def load(self) -> Ledger:
        """Load every path now and start following from there. Raises `LoadError`.

        After a failed load the watcher tries again when a path changes.
        """
        before = self.stamp()
        try:
            ledger = self._read_all()
        except LoadError:
            self.adopt(None, before)
            raise
        self.adopt(ledger, before)
        return ledger

    def adopt(self, ledger: Ledger | None, before: Stamp) -> None:
        """Follow on from a load made elsewhere (say the app's first load).

        `before` is `stamp()` taken before that load began: if the paths changed since, what was
        loaded may be out of step, and the next poll reloads. None: the load failed; wait for a
        change.
        """
        self.ledger = ledger
        self._pending = None
        self._seen = before
        self._dirty = ledger is None or self.stamp() != before
        for watched in self._watched:
            watched.tail = None
        if self._dirty:
            return
        for watched, stamp in zip(self._watched, before, strict=True):
            if watched.fmt is not None and isinstance(stamp, _FileStamp):
                watched.tail = _read_tail(watched.path, watched.fmt, stamp)

    def poll(self) -> Change | None:
        """Look once; return what changed, or None when nothing did (or a change is settling)."""
        now = self.stamp()
        if now == self._seen:
            self._pending = None
            if any(
                w.open_at is not None and w.open_at == s
                for w, s in zip(self._watched, now, strict=True)
            ):
                # A record opened a quote on an earlier line and the file stood still since:
                # a stray quote. The full load says what is wrong and where.
                self._pending = now
                return self._reload(now)
            return None
        if self._dirty or self.ledger is None:
            return self._reload(now)
        assert self._seen is not None
        appended: list[tuple[_Path, _FileStamp]] = []
        for watched, old, new in zip(self._watched, self._seen, now, strict=True):
            if old == new:
                continue
            verdict = _verdict(watched, new)
            if verdict == "reload":
                return self._reload(now)
            if verdict == "append":
                assert isinstance(new, _FileStamp)
                appended.append((watched, new))
        if not appended:
            self._seen, self._pending = now, None  # touched only
            return None
        return self._append(appended, now)

    def follow(self, stop: threading.Event | None = None) -> Iterator[Change]:
        """Poll every `interval` seconds until `stop` is set, yielding each change."""
        stop = stop or threading.Event()
        while not stop.wait(self.interval):
            change = self.poll()
            if change is not None:
                yield change

    # ------------------------------------------------------------------ full reloads

    def _reload(self, now: Stamp) -> Change | None:
        for watched in self._watched:
            watched.open_at = None
        # A path caught mid-write would be read half-written: wait until it stands still.
        if self._pending != now:
            self._pending = now
            return None
        if self._detect_folders():
            # A folder now reads differently (say its first Terminal-Bench trial appeared):
            # look at it the new way, and let that stand still too.
            self._pending = self.stamp()
            return None
        started = time.perf_counter()
        try:
            ledger = self._read_all()
        except (LoadError, OSError) as error:
            # Keep the last good attempts; try again once a path changes again.
            self._seen, self._pending, self._dirty = now, None, True
            return Change(None, error=str(error), seconds=time.perf_counter() - started)
        self.adopt(ledger, now)
        return Change(ledger, reloaded=True, seconds=time.perf_counter() - started)

    def _read_all(self) -> Ledger:
        return load(
            self.paths,
            columns=self.columns,
            zero_usage_is_missing=self.zero_usage_is_missing,
            fmt=self.fmt,
            imports=self.imports,
        )

    # ------------------------------------------------------------------ appended rows

    def _append(self, appended: list[tuple[_Path, _FileStamp]], now: Stamp) -> Change | None:
        started = time.perf_counter()
        assert self.ledger is not None
        ledger = self.ledger
        done: list[_Appended] = []
        errors: list[str] = []
        for watched, stamp in appended:
            try:
                found = self._read_appended(watched, stamp, ledger.report)
                watched.open_at = None
                if found is None:
                    continue  # a half-written line: wait for its end
                if found.attempts is not None and found.report is not None:
                    merged = merge_appended(ledger, found.attempts, found.report, watched.display)
                    if merged is None:
                        raise _NeedsReload
                    ledger = merged
            except _AppendError as error:
                errors.append(str(error))
                continue
            except _OpenRecord:
                watched.open_at = stamp  # if it stands still for a poll, `poll` reloads
                continue
            except (_NeedsReload, OSError, pl.exceptions.PolarsError):
                return self._reload(now)
            done.append(found)
        # Only now, when nothing asks for a full reload, move the read positions on.
        for found in done:
            tail = found.watched.tail
            assert tail is not None
            tail.consumed += found.end
            tail.loaded_size = tail.consumed
            tail.numbered += found.numbered
            tail.tail = (tail.tail + found.piece_tail)[-_TAIL:]
            tail.fingerprint = found.fingerprint
        self._seen, self._pending = now, None  # an error waits for the file to change again
        added = ledger.attempts.height - self.ledger.attempts.height
        if not added and not errors:
            return None
        self.ledger = ledger
        return Change(
            ledger if added else None,
            added=added,
            error="; ".join(errors) or None,
            seconds=time.perf_counter() - started,
        )

    def _read_appended(
        self, watched: _Path, stamp: _FileStamp, report: LoadReport
    ) -> _Appended | None:
        tail = watched.tail
        assert tail is not None
        with watched.path.open("rb") as stream:
            stream.seek(tail.consumed)
            data = stream.read(stamp.size - tail.consumed)
            counter = _RecordCounter(tail.fmt)
            counter.feed(data)
            if counter.end == 0:
                if counter.open_across_lines:
                    raise _OpenRecord
                return None
            fingerprint = _fingerprint(stream, tail.consumed + counter.end)
        piece = data[: counter.end]
        if not piece.strip():
            return _Appended(
                watched, counter.end, counter.numbered, None, None, piece[-_TAIL:], fingerprint
            )
        # Line n of the small file is line n + offset of the real one (CSV: after the header).
        offset = tail.numbered - tail.header.count(b"\n")
        with tempfile.TemporaryDirectory(prefix="ledger-tui-watch-") as folder:
            small = Path(folder) / f"appended{_SUFFIX_OF[tail.fmt]}"
            small.write_bytes(tail.header + piece)
            try:
                loaded = load(
                    [str(small)],
                    columns=self.columns,
                    zero_usage_is_missing=self.zero_usage_is_missing,
                    fmt=tail.fmt,
                )
            except LoadError as error:
                if error.line is None:
                    raise _NeedsReload from None  # about the whole file: the full load says
                message = relocate(str(error), str(small), watched.display, offset)
                raise _AppendError(message) from None
        if not same_mapping(loaded.report.mapping, report.mapping):
            raise _NeedsReload
        source_type = loaded.attempts.schema[schema.SOURCE_COLUMN]
        attempts = loaded.attempts.with_columns(
            pl.lit(watched.display, pl.String).cast(source_type).alias(schema.SOURCE_COLUMN),
            (pl.col(schema.LINE_COLUMN) + offset).alias(schema.LINE_COLUMN),
        )
        moved = replace(
            loaded.report,
            warnings=[
                replace(
                    warning,
                    lines=tuple(line + offset for line in warning.lines),
                    sources=(watched.display,) * len(warning.lines),
                )
                for warning in loaded.report.warnings
            ],
        )
        return _Appended(
            watched, counter.end, counter.numbered, attempts, moved, piece[-_TAIL:], fingerprint
        )

    # ------------------------------------------------------------------ stamps

    def _detect_folders(self) -> bool:
        """How each folder is read (a harness importer's, or files of attempts); whether any
        changed."""
        changed = False
        for watched in self._watched:
            mode = _folder_mode(watched.path, self.fmt) if watched.path.is_dir() else "plain"
            changed |= mode != watched.folder_mode
            watched.folder_mode = mode
        return changed

    def _stamp_of(self, watched: _Path) -> object:
        path = watched.path
        try:
            if path.is_dir():
                return _folder_stamp(path, watched.folder_mode)
            return _file_stamp(path)
        except OSError:
            return None  # gone or unreadable: the load will say which


# --------------------------------------------------------------------------- helpers


def _file_stamp(path: Path) -> _FileStamp:
    status = path.stat()
    return _FileStamp(status.st_size, status.st_mtime_ns, status.st_ino)


def _folder_mode(folder: Path, fmt: str | None) -> str:
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


def _folder_stamp(folder: Path, mode: str) -> tuple[tuple[str, int, int, int], ...]:
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


def _appendable_format(path: Path, fmt: str | None) -> str | None:
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


class _RecordCounter:
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


def _read_tail(path: Path, fmt: str, stamp: _FileStamp) -> _Tail | None:
    """Where reading `path` (as it was at `stamp`) stopped: header, records, end bytes."""
    counter = _RecordCounter(fmt)
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
            fingerprint = _fingerprint(stream, end)
            stream.seek(max(end - _TAIL, 0))
            tail = stream.read(min(end, _TAIL))
    except OSError:
        return None
    header = b"" if fmt == "ndjson" else _first_record(head)
    if fmt != "ndjson" and not header:
        return None  # no complete header in the first bytes: any change reloads
    return _Tail(fmt, stamp.inode, stamp.size, end, counter.numbered, header, fingerprint, tail)


def _fingerprint(stream: Any, end: int) -> bytes:
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
    counter = _RecordCounter("csv")
    for line in block.split(b"\n")[:-1]:
        counter.feed(line + b"\n")
        if counter.end:
            return block[: counter.end]
    return b""


def _verdict(watched: _Path, new: object) -> str:
    """ "append", "same" (touched, or still the same half line) or "reload"."""
    tail = watched.tail
    if tail is None or not isinstance(new, _FileStamp):
        return "reload"
    if new.inode != tail.inode or new.size < tail.loaded_size:
        return "reload"
    try:
        with watched.path.open("rb") as stream:
            fingerprint = _fingerprint(stream, tail.consumed)
    except OSError:
        return "reload"
    if fingerprint != tail.fingerprint:
        return "reload"  # rewritten in place
    if new.size == tail.loaded_size:
        return "same"
    if tail.consumed < tail.loaded_size:
        return "reload"  # the last load read a half line as a row; it has grown since
    return "append"
