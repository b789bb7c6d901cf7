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

import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from tui_ledger import schema
from tui_ledger.load import Ledger, LoadError, LoadReport, load
from tui_ledger.text.wording import plural
from tui_ledger.watching.stamps import (
    TAIL_BYTES,
    FileStamp,
    RecordCounter,
    WatchedPath,
    appendable_format,
    file_stamp,
    fingerprint_of,
    folder_mode_of,
    folder_stamp,
    read_tail,
    verdict_of,
)
from tui_ledger.watching.watch_merge import merge_appended, relocate, same_mapping

if TYPE_CHECKING:
    from tui_ledger.importers import ImportOptions

__all__ = ["INTERVAL", "Change", "Stamp", "Watcher"]

INTERVAL = 0.25
"""Seconds between two polls."""

_LOAD_OPTIONS = ("columns", "zero_usage_is_missing", "fmt", "imports")
_SUFFIX_OF = {"csv": ".csv", "tsv": ".tsv", "ndjson": ".jsonl"}


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
class _Appended:
    """New complete records of one file, loaded and placed on the real file's lines."""

    watched: WatchedPath
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
        self._watched: list[WatchedPath] = []
        seen: set[Path] = set()
        for given in self.paths:
            path = Path(given).expanduser()
            key = path.resolve()
            if key in seen:
                continue  # the loader reads a path given twice once
            seen.add(key)
            tail = appendable_format(path, fmt) if appendable else None
            self._watched.append(WatchedPath(path, given, tail))
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
            if watched.fmt is not None and isinstance(stamp, FileStamp):
                watched.tail = read_tail(watched.path, watched.fmt, stamp)

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
        appended: list[tuple[WatchedPath, FileStamp]] = []
        for watched, old, new in zip(self._watched, self._seen, now, strict=True):
            if old == new:
                continue
            verdict = verdict_of(watched, new)
            if verdict == "reload":
                return self._reload(now)
            if verdict == "append":
                assert isinstance(new, FileStamp)
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

    def _append(self, appended: list[tuple[WatchedPath, FileStamp]], now: Stamp) -> Change | None:
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
            tail.tail = (tail.tail + found.piece_tail)[-TAIL_BYTES:]
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
        self, watched: WatchedPath, stamp: FileStamp, report: LoadReport
    ) -> _Appended | None:
        tail = watched.tail
        assert tail is not None
        with watched.path.open("rb") as stream:
            stream.seek(tail.consumed)
            data = stream.read(stamp.size - tail.consumed)
            counter = RecordCounter(tail.fmt)
            counter.feed(data)
            if counter.end == 0:
                if counter.open_across_lines:
                    raise _OpenRecord
                return None
            fingerprint = fingerprint_of(stream, tail.consumed + counter.end)
        piece = data[: counter.end]
        if not piece.strip():
            return _Appended(
                watched, counter.end, counter.numbered, None, None, piece[-TAIL_BYTES:], fingerprint
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
            watched,
            counter.end,
            counter.numbered,
            attempts,
            moved,
            piece[-TAIL_BYTES:],
            fingerprint,
        )

    # ------------------------------------------------------------------ stamps

    def _detect_folders(self) -> bool:
        """How each folder is read (a harness importer's, or files of attempts); whether any
        changed."""
        changed = False
        for watched in self._watched:
            mode = folder_mode_of(watched.path, self.fmt) if watched.path.is_dir() else "plain"
            changed |= mode != watched.folder_mode
            watched.folder_mode = mode
        return changed

    def _stamp_of(self, watched: WatchedPath) -> object:
        path = watched.path
        try:
            if path.is_dir():
                return folder_stamp(path, watched.folder_mode)
            return file_stamp(path)
        except OSError:
            return None  # gone or unreadable: the load will say which
