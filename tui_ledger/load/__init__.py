"""Files of attempts -> one validated attempts frame and a plain-words load report.

The loader is the only place where a file's own words meet the accounting contract
(SPEC.md section 1). It reads CSV, TSV, gzip CSV/TSV, Parquet, JSON (an array of records, or
one record) and NDJSON/JSONL, or whatever a harness importer (`tui_ledger.importers`) turns a
path into; maps the file's column names onto the canonical ones; and validates every cell the
accounting depends on. Whatever it cannot read unambiguously stops the load with a
`LoadError` whose text is one line naming the file, the line and the column; whatever it can
read but looks wrong is kept and counted in a `LoadWarning`. Nothing is guessed silently.

Decisions the spec leaves open (all of them written down in docs, too):

- Line numbers. CSV/TSV: the header is line 1; a row's number is the line it starts on, as an
  editor counts, also after a quoted cell holding a line end.
  NDJSON: record index + 1 (equal to the line unless the file has blank lines). JSON: record
  index + 1, and errors say "record". Parquet: row index + 1, and errors say "row".
  Importers: their own `line` column if they give one, else record index + 1.
- Blank lines (and rows whose every cell is empty) are skipped; they still count in line numbers.
- Encoding: a file that is not valid UTF-8 is read anyway, with U+FFFD in place of the bad
  bytes, and a "lossy_decode" warning lists the rows affected (the accounting columns are
  validated after decoding, so a damaged number still stops the load). A damaged *workflow*
  name is an error instead, since two names that differ only in their bad bytes would merge.
  UTF-16/32 text (a byte-order mark) and binary files under a text extension (NUL bytes
  beside a header that is not text) are errors that say so.
- Missing words (`schema.MISSING_WORDS`, any case) mean "unknown" in `tokens`, the buckets,
  `passed` and `status`. That list includes `nan`, so a pandas NaN is missing usage;
  `inf` is an error. JSON's non-standard bare `NaN` (Python's json module writes it) reads as
  null the same way, in any column; a bare `Infinity` is an error naming its line.
- Numbers: whole numbers in plain, decimal (`1000.0`) or scientific (`1e3`) notation are
  accepted when they are exactly whole; everything is checked on the text, never via a float,
  so nothing is rounded; more than 9,223,372,036,854,775,807 is an error, never wrapped.
  (JSON: where polars would read a validated column through a float, the numbers under that
  key are read as their text instead, at any depth, and the file is read eagerly.)
- A CSV/TSV whose last line has no line end loads, with an "unterminated_last_line" warning:
  a file cut off inside its last cell looks complete otherwise. A quoted cell that never
  closes is an error naming the line it opens on.
- Only regular files and folders are read. A pipe, device or socket, a link to nothing or a
  link loop is refused at once by name, without opening it (a FIFO would block, and can be
  read only once); inside a folder too, when its name has a supported extension. Links to
  folders are followed, each real folder once.
- Memory: before an eager read (`load`, and `scan` of what it cannot stream), a lower bound of
  the memory needed (3x the CSV size, 1.5x JSON, 8 bytes per Parquet cell) is compared with
  what is free (MemAvailable, or the cgroup's limit); a load that cannot fit is refused with
  a message pointing at the streaming `ledger-tui summary`, instead of being killed halfway.
- Ctrl+C during a load leaves as exactly one KeyboardInterrupt (polars raises one and leaves
  the signal pending; a second would fire inside the caller's handler).
- Messages are for terminals: `LoadError` text and `LoadReport.lines()` show control, bidi and
  invisible characters from file names, column names and cells as visible escapes.
- Buckets are compared with `tokens` only where the file has both `input_tokens` and
  `output_tokens` (one bucket alone is a part, not a total).
- A `passed` of false beside a status of passed is counted as a contradicting status too.
- `workflow` and `task` values are trimmed of surrounding white space; every other text cell is
  kept exactly as read.
- Types. A CSV/TSV is read with its counts as Int64 and its keys and outcome words
  (workflow, task, model, run, passed, status) as Categorical, by the CSV parser itself; a
  count cell that is not a plain integer sends the counts back to being read as text, where
  the exact parser validates them. The file's name in `source` is Categorical too. `scan`
  keeps text.
- CSV/TSV columns that are not validated get the types polars' CSV reader would infer
  (integer, float, boolean, else text), decided on every row, never a sample.
- A file column that is not mapped but whose name the attempts frame uses (say a `tokens`
  column next to `--col tokens=usage_total`, or a column called `line`) is kept as
  `<name>_in_file`.
- A `.json` file holding one object per line is read as NDJSON; `fmt` may also name an
  importer (e.g. "terminal-bench") to read every path with it.
- A column whose type differs between files (other than one number type against another) is
  kept as text, nested values as their JSON.
- A path given twice is read once. Hidden files and folders (`.name`) inside a folder are
  skipped, as are files whose extension is not supported; an explicitly named file of unknown
  extension is sniffed.
"""

from __future__ import annotations

import csv
import errno
import gzip
import io
import json
import os
import re
import resource
import stat
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import polars as pl

from tui_ledger import schema
from tui_ledger.textsafe import safe_text
from tui_ledger.wording import first_line, listing, plural

__all__ = [
    "SUPPORTED_SUFFIXES",
    "Ledger",
    "LoadError",
    "LoadReport",
    "LoadWarning",
    "load",
    "scan",
    "too_large_to_load",
]

# Longest first, so `.csv.gz` wins over any shorter match.
_SUFFIX_FORMATS: dict[str, str] = {
    ".csv.gz": "csv",
    ".tsv.gz": "tsv",
    ".parquet": "parquet",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
}
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(_SUFFIX_FORMATS)

_FORMAT_NAMES: dict[str, str] = {
    "csv": "csv",
    "csv.gz": "csv",
    "tsv": "tsv",
    "tsv.gz": "tsv",
    "parquet": "parquet",
    "json": "json",
    "ndjson": "ndjson",
    "jsonl": "ndjson",
}
_FORMAT_LABELS = "CSV, TSV, gzip CSV/TSV, Parquet, JSON and NDJSON/JSONL"
_FORMAT_LABEL = {"csv": "CSV", "tsv": "TSV", "json": "JSON", "ndjson": "NDJSON"}

# Helper columns live only inside the loader; none of them reaches the attempts frame.
_LINE = "__ledger_line"
_FRAME = "__ledger_frame"
_SHORT = "__ledger_short"
_LOSSY = "__ledger_lossy"
_MISMATCH = "__ledger_mismatch"
_ZERO = "__ledger_zero"
_FILLED = "__ledger_filled"
_PHYSICAL = "__ledger_physical"
_CONTRADICTING = "__ledger_contradicting"
_STATUS_WORD = "__ledger_status_word"  # the outcome a status names
_WHY = "__ledger_why_"  # + canonical name: why a cell is not acceptable (null when it is)
_BAD = "__ledger_bad_"  # + canonical name: the offending text (null when fine)

_INT64_MAX = 2**63 - 1
_NUMBER = r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$"
_INFINITY_WORDS = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity")
_REPLACEMENT = "\ufffd"
_BOOLEAN_WORDS = ("true", "false", "True", "False", "TRUE", "FALSE")  # as polars' CSV reader
_EXAMPLES = 5
# Why a cell cannot be read (the `_WHY` helper columns): an Enum, one byte a row, since a text
# column would hold 16 bytes for every row, null or not.
_REASONS = pl.Enum(["empty", "negative", "infinite", "not_number", "fractional", "range"])


def _reason(word: str) -> pl.Expr:
    return pl.lit(word, dtype=_REASONS)


_COUNT_PROBLEMS: dict[str, str] = {
    "negative": "is negative; token counts are 0 or more",
    "not_number": "is not a number",
    "fractional": "is not a whole number; token counts are whole numbers",
    "infinite": "is not a finite number",
    "range": "is larger than the biggest count stored exactly (9,223,372,036,854,775,807)",
}
_VALIDATED = frozenset({"passed", "status", *schema.INTEGER_COLUMNS})
_TEXT_KEYS = ("workflow", "task")
# The engine of a validation query: polars' default for a frame in memory; the streaming
# engine, in bounded memory, for a file `scan` reads on demand.
_Engine = Literal["auto", "streaming"]


class LoadError(Exception):
    """A file that cannot be loaded as it is. `str(error)` is one line for people.

    The message says what is wrong, where (file, line or record, column) and what to do.
    `source`, `line` and `column` repeat the where for programs, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: str | None = None,
    ) -> None:
        # Always one line, and safe to print: a file's own text (a cell, a column name, a
        # file name) may hold terminal escapes, and this message reaches terminals.
        super().__init__(safe_text(message.replace("\r", " ").replace("\n", " ")))
        self.source = source
        self.line = line
        self.column = column


@dataclass(frozen=True)
class LoadWarning:
    """Something loaded but suspicious, counted: `count` rows, up to 5 example `lines`.

    `sources` names the file of each example line (same length as `lines`).
    """

    kind: str
    message: str
    count: int
    lines: tuple[int, ...] = ()
    sources: tuple[str, ...] = ()


@dataclass
class LoadReport:
    """What a load read, mapped, derived and warned about; `lines()` says it in plain words.

    `units` tells, per source, what its line numbers count: "line", "record" or "row".
    """

    files: list[str]
    rows: int
    mapping: dict[str, str]
    derived: list[str]
    warnings: list[LoadWarning]
    units: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The report `ledger-tui check` prints, one sentence per line."""
        out: list[str] = []
        if len(self.files) == 1:
            out.append(f"Read {self.files[0]}.")
        else:
            out.append(f"Read {len(self.files)} files: {', '.join(self.files)}.")
        out.append(f"{plural(self.rows, 'attempt')}.")
        if self.mapping:
            pairs = [
                canonical if canonical == source else f"{canonical} from {source}"
                for canonical, source in self.mapping.items()
            ]
            out.append(f"Columns: {'; '.join(pairs)}.")
        out.extend(f"Derived: {sentence}." for sentence in self.derived)
        if not self.warnings:
            out.append("No warnings.")
        for warning in self.warnings:
            where = self._where(warning)
            out.append(f"Warning ({warning.kind}, {warning.count}): {warning.message}{where}")
        # File and column names are the file's own text: shown, never obeyed by a terminal.
        return [safe_text(line) for line in out]

    def _where(self, warning: LoadWarning) -> str:
        if not warning.lines:
            return ""
        by_source: dict[str, list[int]] = {}
        sources = warning.sources or ("",) * len(warning.lines)
        for source, line in zip(sources, warning.lines, strict=True):
            by_source.setdefault(source, []).append(line)
        parts = []
        for source, numbers in by_source.items():
            unit = self.units.get(source, "line")
            label = unit if len(numbers) == 1 else f"{unit}s"
            several = len(self.files) > 1 or len(self.units) > 1
            prefix = f"{source} " if source and several else ""
            parts.append(f"{prefix}{label} {', '.join(map(str, numbers))}")
        more = " and more" if warning.count > len(warning.lines) else ""
        return f" (e.g. {'; '.join(parts)}{more})"


@dataclass
class Ledger:
    """The validated attempts (layout in docs/ARCHITECTURE.md) and the report of their load."""

    attempts: pl.DataFrame
    report: LoadReport


class _Importer(Protocol):
    """What the loader needs of a harness importer (tui_ledger.importers.Importer)."""

    @property
    def name(self) -> str: ...

    def read(self, path: Path) -> pl.DataFrame: ...


def load(
    paths: Sequence[str | Path] | str | Path,
    *,
    columns: Mapping[str, str] | None = None,
    zero_usage_is_missing: bool = False,
    fmt: str | None = None,
) -> Ledger:
    """Read, map and validate files of attempts into one attempts frame.

    `paths` are files or folders (a folder means every supported file below it, sorted);
    a harness importer is asked first about each path. `columns` maps canonical names to the
    file's column names and beats the aliases. `zero_usage_is_missing` reads a usage of exactly
    0 as missing. `fmt` forces a format (csv, tsv, parquet, json, ndjson) or an importer (by
    its name, e.g. "terminal-bench") for every path. Raises `LoadError` for anything that
    cannot be read unambiguously; the files are only ever opened for reading.
    """
    with _one_interrupt():
        return _load(paths, columns, zero_usage_is_missing, fmt)


def _load(
    paths: Sequence[str | Path] | str | Path,
    columns: Mapping[str, str] | None,
    zero_usage_is_missing: bool,
    fmt: str | None,
) -> Ledger:
    inputs = _expand(paths, fmt)
    _check_memory(inputs)
    opened = [_open(item, lazy=False, columns=columns) for item in inputs]
    try:
        frames = [
            _prepare(item, index, columns, zero_usage_is_missing)
            for index, item in enumerate(opened)
        ]
        staged = _concat([frame.lazy for frame in frames])
        if not all(frame.typed for frame in frames):
            # Parsing counts from text is the costly part: once, shared by every check.
            staged = staged.collect().lazy()
        result, findings, derived, units, rows = _finish(staged, frames, in_memory=True)
        attempts = result.collect()
    except pl.exceptions.PolarsError as error:
        # Anything polars refuses past opening is still the input's fault, said in one line.
        if len(inputs) == 1:
            raise _read_error(inputs[0], error) from None
        raise LoadError(
            f"{listing([item.display for item in inputs], limit=3)}: cannot be read together "
            f"({first_line(error)}); load them one at a time to find the file at fault."
        ) from None
    report = _report(inputs, frames, findings, derived, units, rows)
    return Ledger(attempts=attempts, report=report)


def scan(
    paths: Sequence[str | Path] | str | Path,
    *,
    columns: Mapping[str, str] | None = None,
    zero_usage_is_missing: bool = False,
    fmt: str | None = None,
) -> tuple[pl.LazyFrame, LoadReport]:
    """Like `load`, but return a LazyFrame that reads CSV, TSV, Parquet and NDJSON on demand.

    The files are validated here with lazy queries (so a bad cell still raises `LoadError`
    now, not later), each file on its own, which reads each file a few times but never holds
    it in memory whole. JSON arrays, compressed NDJSON and importer output are read eagerly.
    """
    with _one_interrupt():
        return _scan(paths, columns, zero_usage_is_missing, fmt)


def _scan(
    paths: Sequence[str | Path] | str | Path,
    columns: Mapping[str, str] | None,
    zero_usage_is_missing: bool,
    fmt: str | None,
) -> tuple[pl.LazyFrame, LoadReport]:
    inputs = _expand(paths, fmt)
    _check_memory([item for item in inputs if _read_whole(item)], streaming=True)
    results: list[pl.LazyFrame] = []
    frames: list[_Prepared] = []
    findings: list[_Finding] = []
    derived: list[tuple[str, str]] = []
    units: dict[str, str] = {}
    rows = 0
    for index, item in enumerate(inputs):
        opened = _open(item, lazy=True)
        try:
            prepared = _prepare(opened, index, columns, zero_usage_is_missing)
            result, found, said, unit, count = _finish(prepared.lazy, [prepared], in_memory=False)
        except pl.exceptions.PolarsError as error:
            if opened.fmt in ("csv", "tsv") and _is_utf8_error(error) and not opened.lossy:
                opened = _open(item, lazy=True, lossy=True)
                prepared = _prepare(opened, index, columns, zero_usage_is_missing)
                try:
                    result, found, said, unit, count = _finish(
                        prepared.lazy, [prepared], in_memory=False
                    )
                except pl.exceptions.PolarsError as again:
                    raise _read_error(opened.item, again) from None
            else:
                raise _read_error(opened.item, error) from None
        results.append(result)
        frames.append(prepared)
        findings.extend(found)
        derived.extend(said)
        units.update(unit)
        rows += count
    lazy = _concat(results) if len(results) > 1 else results[0]
    order = _column_order(lazy.collect_schema().names())
    return lazy.select(order), _report(inputs, frames, findings, derived, units, rows)


@contextmanager
def _one_interrupt() -> Iterator[None]:
    """Let Ctrl+C during a load leave as exactly one KeyboardInterrupt.

    polars notices SIGINT inside its own work and raises KeyboardInterrupt, but the signal is
    still pending for Python, which raises it a second time at the next chance: inside the
    caller's `except KeyboardInterrupt` block, as a traceback. Giving it that chance here
    settles it before the first one leaves.
    """
    try:
        yield
    except KeyboardInterrupt:
        with suppress(KeyboardInterrupt):
            time.sleep(0)  # runs pending signal handlers
        raise


# --- which files -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Input:
    path: Path
    display: str
    fmt: str | None  # None: an importer reads it
    importer: _Importer | None = None


def _find_importer(path: Path) -> _Importer | None:
    """The harness importer that recognises `path`, if the importers package offers one."""
    try:
        from tui_ledger.importers import find_importer
    except ImportError:  # the loader works without importers, for plain tables
        return None
    return find_importer(path)


def _named_importer(name: str) -> _Importer | None:
    """The importer called `name` (as `fmt`), or None when there is no such importer."""
    try:
        from tui_ledger.importers import get_importer
    except ImportError:
        return None
    try:
        return get_importer(name)
    except ValueError:
        return None


def _importer_names() -> list[str]:
    try:
        from tui_ledger.importers import importer_names
    except ImportError:
        return []
    return list(importer_names())


def _expand(paths: Sequence[str | Path] | str | Path, fmt: str | None) -> list[_Input]:
    if isinstance(paths, (str, Path)):
        paths = [paths]
    forced, forced_importer = _format_name(fmt)
    if not paths:
        raise LoadError("No file given; name at least one file or folder of attempts.")
    inputs: list[_Input] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given).expanduser()
        display = str(given)
        if not path.exists() and not path.is_symlink():
            raise LoadError(f"{display}: no such file or folder; check the path.", source=display)
        _check_kind(path, display)
        if forced_importer is not None:
            _check_readable(path, display)
            found = [_Input(path, display, None, forced_importer)]
        else:
            found = _inputs_for(path, display, forced)
        for item in found:
            key = item.path.resolve()
            if key not in seen:
                seen.add(key)
                inputs.append(item)
    return inputs


def _inputs_for(path: Path, display: str, forced: str | None) -> list[_Input]:
    _check_readable(path, display)
    importer = None if forced else _find_importer(path)
    if importer is not None:
        return [_Input(path, display, None, importer)]
    if not path.is_dir():
        return [_Input(path, display, forced or _format_of(path, display))]
    inputs = []
    for child in _files_below(path, display):
        shown = str(Path(display) / child.relative_to(path))
        _check_readable(child, shown)
        child_importer = None if forced else _find_importer(child)
        if child_importer is not None:
            inputs.append(_Input(child, shown, None, child_importer))
        else:
            inputs.append(_Input(child, shown, forced or _format_of(child, shown)))
    if not inputs:
        raise LoadError(
            f"{display}: the folder holds no {_FORMAT_LABELS} files "
            f"(extensions {', '.join(SUPPORTED_SUFFIXES)}); name the files to read.",
            source=display,
        )
    return inputs


def _files_below(folder: Path, display: str) -> list[Path]:
    """Every supported, non-hidden file below `folder`, sorted by its path inside it.

    Links to folders are followed, each real folder read once (so a link back up the tree
    cannot loop). A supported name that is not a regular file (a pipe, a device, a link to
    nothing or a link loop) stops the load, naming it, rather than being skipped unseen.
    """

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
            if name.startswith(".") or not _suffix(child):
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
            target = _shown(os.readlink(path))
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


def _suffix(path: Path) -> str:
    name = path.name.lower()
    return next((suffix for suffix in _SUFFIX_FORMATS if name.endswith(suffix)), "")


def _format_name(fmt: str | None) -> tuple[str | None, _Importer | None]:
    """A forced table format, or a forced importer (`fmt` may name one), or neither."""
    if fmt is None:
        return None, None
    name = _FORMAT_NAMES.get(fmt.strip().lower().lstrip("."))
    if name is not None:
        return name, None
    importer = _named_importer(fmt)
    if importer is not None:
        return None, importer
    known = ["csv", "tsv", "parquet", "json", "ndjson", "jsonl", *_importer_names()]
    raise LoadError(f"Unknown format {fmt!r}; use one of {', '.join(known)}.")


def _format_of(path: Path, display: str) -> str:
    suffix = _suffix(path)
    if suffix == ".json" and _sniff(path) == "ndjson":
        return "ndjson"  # JSON Lines saved as .json, as many tools do
    if suffix:
        return _SUFFIX_FORMATS[suffix]
    sniffed = _sniff(path)
    if sniffed is None:
        kind = path.suffix or "no extension"
        raise LoadError(
            f"{display}: unsupported format ({kind}); ledger-tui reads {_FORMAT_LABELS}: "
            "export the attempts to CSV, or give the file a .csv, .tsv, .parquet, .json "
            "or .jsonl extension if it is one of those.",
            source=display,
        )
    return sniffed


def _sniff(path: Path) -> str | None:
    """The format of a file of unknown extension, from its first bytes; None if not ours."""
    head = _head_bytes(path)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"\x1f\x8b"):
        try:
            with gzip.open(path, "rb") as stream:
                head = stream.read(65536)
        except (OSError, EOFError):
            return None
    if b"\x00" in head:
        return None
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if text.startswith("["):
        return "json"
    first = text.split("\n", 1)[0]
    if text.startswith("{"):
        try:
            json.loads(first)
        except ValueError:
            return "json"
        return "ndjson"
    return "tsv" if first.count("\t") > first.count(",") else "csv"


def _head_bytes(path: Path, size: int = 65536) -> bytes:
    with path.open("rb") as stream:
        return stream.read(size)


# --- memory ------------------------------------------------------------------------------

# Bytes of memory an eager load needs at least, per byte of file, by format. Measured peaks are
# higher (about 7x for CSV, 3x for NDJSON); these stay below them so that only a load that
# certainly cannot fit is refused.
_MEMORY_PER_BYTE = {"csv": 3.0, "tsv": 3.0, "json": 1.5, "ndjson": 1.5}
_PARQUET_BYTES_PER_CELL = 8


def _available_memory() -> int | None:
    """Bytes this process may still allocate: MemAvailable, or a cgroup's limit, or what
    RLIMIT_DATA (`prlimit --data`, `ulimit -d`) leaves, whichever is lowest."""
    found: list[int] = []
    limit_data = _data_limit_left()
    if limit_data is not None:
        found.append(limit_data)
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for row in meminfo:
                if row.startswith("MemAvailable:"):
                    found.append(int(row.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
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
    used = 0
    with (
        suppress(OSError, ValueError, IndexError),
        open("/proc/self/status", encoding="ascii") as status,
    ):
        for row in status:
            if row.startswith("VmData:"):
                used = int(row.split()[1]) * 1024
                break
    return max(soft - used - _RUNTIME_RESERVE, 0)


# What polars' worker threads and allocator map in a data segment as soon as a query runs,
# however small the file (measured: 250-400 MB of VmData on 2 cores). Under RLIMIT_DATA it
# is not free for the data, and an allocation past the limit aborts the process.
_RUNTIME_RESERVE = 384 * 2**20


def _memory_needed(item: _Input) -> int:
    """A lower bound of the memory an eager load of `item` takes (0 when unknown)."""
    if item.importer is not None or item.fmt is None:
        return 0  # importers read harness logs their own way
    try:
        size = item.path.stat().st_size
        if _head_bytes(item.path, 2) == b"\x1f\x8b":
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


def _read_whole(item: _Input) -> bool:
    """Whether `scan` has to hold this input in memory whole (JSON arrays, gzip, importers)."""
    if item.fmt in (None, "json"):
        return True
    try:
        return _head_bytes(item.path, 2) == b"\x1f\x8b"
    except OSError:
        return False


def _memory_shortfall(inputs: list[_Input], factor: float = 1.0) -> tuple[str, str, str] | None:
    """(largest input, where, what) when `factor` x the least memory an eager read of
    `inputs` needs is more than what is free; None when it fits, or nothing is known."""
    available = _available_memory()
    if available is None or not inputs:
        return None
    needed = {item.display: _memory_needed(item) for item in inputs}
    total = int(sum(needed.values()) * factor)
    if total <= available:
        return None
    largest = max(needed, key=lambda display: needed[display])
    where = largest if len(inputs) == 1 else f"{plural(len(inputs), 'file')} ({largest} and more)"
    what = f"needs {'about' if factor > 1 else 'at least'} {_size(total)} of memory"
    return largest, where, f"{what} and {_size(available)} is free"


def _check_memory(inputs: list[_Input], *, streaming: bool = False) -> None:
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


# An eager load's measured peak was about 2x the lower bound `_check_memory` refuses by (7x a
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
    short = _memory_shortfall(_expand(paths, fmt), _PEAK_OVER_LOWER_BOUND)
    return None if short is None else f"{short[1]}: opening it in memory {short[2]}"


def _size(count: int) -> str:
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count:,} bytes"


# --- reading one input -------------------------------------------------------------------


@dataclass
class _Opened:
    item: _Input
    fmt: str  # csv, tsv, parquet, json, ndjson or importer
    frame: pl.LazyFrame  # the file's own columns plus _LINE (and `source` from importers)
    columns: list[str]  # the file's own column names, in order
    unit: str  # what _LINE counts: line, record or row
    lossy: bool = False
    in_memory: bool = True
    infer: bool = False  # CSV/TSV: give unvalidated columns their inferred types
    duplicates: dict[str, str] = field(default_factory=dict)  # polars name -> header name
    has_source: bool = False
    unterminated: bool = False  # CSV/TSV: the last line has no line end (cut off?)


def _open(
    item: _Input,
    *,
    lazy: bool,
    lossy: bool = False,
    columns: Mapping[str, str] | None = None,
) -> _Opened:
    """Open one input. `columns` (the explicit mapping) lets an eager CSV/TSV read type its
    accounting columns as it parses (see `_read_csv_typed`)."""
    if item.importer is not None:
        return _open_imported(item)
    assert item.fmt is not None
    try:
        if item.fmt != "parquet":
            _check_text(item)
        if item.fmt in ("csv", "tsv"):
            return _open_csv(item, lazy=lazy, lossy=lossy, columns=columns)
        if item.fmt == "parquet":
            return _open_parquet(item, lazy=lazy)
        return _open_json(item, lazy=lazy)
    except LoadError:
        raise
    except (pl.exceptions.PolarsError, OSError, ValueError) as error:
        raise _read_error(item, error) from None


_WIDE_TEXT = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}


def _check_text(item: _Input) -> None:
    """Refuse a text format whose first bytes are not 8-bit text: UTF-16/32 (Excel's
    "Unicode text"), or NUL bytes (a binary file under a text extension). Read as UTF-8,
    either would only fail later with a baffling list of columns."""
    head = _head_bytes(item.path, 4096)
    if head.startswith(b"\x1f\x8b"):
        with gzip.open(item.path, "rb") as stream:
            try:
                head = stream.read(4096)
            except (OSError, EOFError):
                return  # reading says what is wrong
    label = _FORMAT_LABEL.get(item.fmt or "", "text")
    for bom, encoding in _WIDE_TEXT.items():
        if head.startswith(bom):
            return _refuse(
                item,
                f"the file is {encoding} text; save it as {label} in UTF-8, or convert it "
                f"(iconv -f {encoding} -t UTF-8 FILE > NEW)",
            )
    header = head.split(b"\n", 1)[0]
    try:
        header.decode("utf-8")
        text_header = b"\x00" not in header
    except UnicodeDecodeError:
        text_header = False
    # A NUL in a cell of a text file is named with its cell; beside a header that is not
    # text, it means a binary file.
    if b"\x00" in head and not text_header:
        _refuse(
            item,
            f"the file holds NUL bytes, so it is binary, not {label} text; check it is the "
            "right file",
        )


def _refuse(item: _Input, what: str) -> None:
    raise LoadError(f"{item.display}: {what}.", source=item.display)


def _open_csv(
    item: _Input, *, lazy: bool, lossy: bool, columns: Mapping[str, str] | None = None
) -> _Opened:
    if item.path.stat().st_size == 0:
        raise _empty(item)
    separator = "\t" if item.fmt == "tsv" else ","
    options = {
        "separator": separator,
        "infer_schema": False,
        "glob": False,
        "row_index_name": _LINE,
        "row_index_offset": 2,
    }
    if lazy:
        encoding = "utf8-lossy" if lossy else "utf8"
        frame = pl.scan_csv(item.path, encoding=encoding, **options)  # type: ignore[arg-type]
        try:
            names = frame.collect_schema().names()
        except pl.exceptions.NoDataError:
            raise _empty(item) from None
    else:
        typed = None if lossy else _read_csv_typed(item, options, columns or {})
        try:
            data = typed if typed is not None else _read_csv_eager(item, options, lossy=lossy)
        except pl.exceptions.PolarsError as error:
            if lossy or not _is_utf8_error(error):
                raise
            lossy = True
            data = _read_csv_eager(item, options, lossy=True)
        names = data.columns
        frame = data.lazy()
    own = [name for name in names if name != _LINE]
    renamed, duplicates = _header_names(own)
    frame = frame.rename(dict(zip(own, renamed, strict=True)))
    frame = frame.with_columns(pl.col(_LINE).cast(pl.Int64))
    starts = _record_starts(item)
    if starts is not None:
        # polars numbers records; people (and editors) number lines.
        frame = (
            frame.join(starts, on=_LINE, how="left", maintain_order="left")
            .with_columns(pl.col(_PHYSICAL).alias(_LINE))
            .drop(_PHYSICAL)
        )
    return _Opened(
        item,
        item.fmt or "csv",
        frame,
        renamed,
        "line",
        lossy=lossy,
        in_memory=not lazy,
        infer=True,
        duplicates=duplicates,
        unterminated=_ends_without_line_end(item.path),
    )


def _record_starts(item: _Input) -> pl.LazyFrame | None:
    """The line each record starts on, keyed by its record number as `_LINE` counts them,
    where some quoted cell holds a line end; None where records and lines are the same.

    A line starts a record unless an odd number of quotes came before it (polars has already
    refused quotes inside unquoted cells). A file without a quote costs one byte search.
    """
    compressed = _head_bytes(item.path, 2) == b"\x1f\x8b"
    if not compressed and not _contains_byte(item.path, b'"'):
        return None
    try:
        if compressed:
            raise pl.exceptions.ComputeError("gzip: read below")
        lines = pl.scan_lines(item.path, name="text", glob=False)
        lines.head(0).collect()
    except pl.exceptions.PolarsError:  # compressed, or not UTF-8: decode it here
        lines = pl.LazyFrame({"text": _file_text(item).split("\n")})
    quotes = pl.col("text").str.count_matches('"', literal=True)
    inside = (quotes.cum_sum() - quotes) % 2 == 1
    marked = lines.select(inside.alias("inside")).with_row_index(_PHYSICAL, offset=1)
    # Streamed (a running sum of quotes), so a file larger than memory is no problem.
    if not marked.select(pl.col("inside").any()).collect(engine="streaming").item():
        return None
    return (
        marked.filter(~pl.col("inside"))
        .select(pl.col(_PHYSICAL).cast(pl.Int64))
        .with_row_index(_LINE, offset=1)
        .with_columns(pl.col(_LINE).cast(pl.Int64))
    )


def _contains_byte(path: Path, needle: bytes) -> bool:
    """Whether `needle` (one byte) occurs in the file, read in blocks: never the whole file in
    memory, and (unlike a memory map, whose pages count as the process's own) never more
    than one block of it resident."""
    with path.open("rb", buffering=0) as stream:
        block = bytearray(1 << 20)
        while count := stream.readinto(block):
            if block.find(needle, 0, count) >= 0:
                return True
        return False


def _ends_without_line_end(path: Path) -> bool:
    """Whether an uncompressed file's last byte is not a line end (a file cut off mid-row
    loads without complaint when the cut falls inside its last cell)."""
    with path.open("rb") as stream:
        if stream.read(2) == b"\x1f\x8b":
            return False  # gzip: a cut stream fails to decompress instead
        stream.seek(-1, os.SEEK_END)
        return stream.read(1) not in (b"\n", b"\r")


def _read_csv_eager(item: _Input, options: dict[str, object], *, lossy: bool) -> pl.DataFrame:
    encoding = "utf8-lossy" if lossy else "utf8"
    try:
        return pl.read_csv(item.path, encoding=encoding, **options)  # type: ignore[arg-type]
    except pl.exceptions.NoDataError:
        raise _empty(item) from None
    except pl.exceptions.ComputeError as error:
        if "more fields" in str(error):
            raise _ragged(item, _first_ragged_record(item, None)) from None
        raise


_TYPED_TEXT = ("workflow", "task", "model", "run", "passed", "status")


def _read_csv_typed(
    item: _Input, options: dict[str, object], explicit: Mapping[str, str]
) -> pl.DataFrame | None:
    """The whole file read with its accounting columns typed by the parser itself, or None
    when even its keys cannot be read so (the caller then reads every column as text, and
    says what is wrong).

    Token counts are read as Int64 (only plain integers parse; anything else, a missing word
    or a decimal, makes a second read with the counts as text), and the repetitive text keys
    and outcome words as Categorical.
    Reading them as text first would hold every cell as a string (about 5x the typed frame),
    then a parsed copy beside it: at 10M rows that is the difference between 0.6 and 2.5 GB.
    """
    try:
        header = pl.read_csv(item.path, n_rows=0, **options)  # type: ignore[arg-type]
        own = [name for name in header.columns if name != _LINE]
        renamed, duplicates = _header_names(own)
        probe = _Opened(
            item, item.fmt or "csv", header.lazy(), renamed, "line", duplicates=duplicates
        )
        mapping = _map_columns(probe, explicit)
    except (LoadError, pl.exceptions.PolarsError, OSError, ValueError):
        return None  # the text read says what is wrong
    original = dict(zip(renamed, own, strict=True))
    counts = {
        original[name]: pl.Int64()
        for canonical, name in mapping.items()
        if canonical in schema.INTEGER_COLUMNS
    }
    keys = {
        original[name]: pl.Categorical()
        for canonical, name in mapping.items()
        if canonical in _TYPED_TEXT
    }
    # Then, if some count is not a plain integer (a missing word, a decimal), the keys alone:
    # the counts stay text for the exact parser, and the keys still take 4 bytes a row.
    for overrides in ({**counts, **keys}, keys):
        if not overrides:
            continue
        try:
            return pl.read_csv(item.path, schema_overrides=overrides, **options)  # type: ignore[arg-type]
        except (pl.exceptions.PolarsError, OSError, ValueError):
            continue
    return None


def _header_names(names: list[str]) -> tuple[list[str], dict[str, str]]:
    """Give unnamed header cells a name; remember which names polars de-duplicated."""
    renamed = []
    duplicates: dict[str, str] = {}
    pattern = re.compile(r"^(.*)_duplicated_\d+$")
    for position, name in enumerate(names, start=1):
        match = pattern.match(name)
        base = match.group(1) if match and match.group(1) in names[: position - 1] else None
        if name == "" or base == "":
            renamed.append(f"column_{position}")
            continue
        if base is not None:
            duplicates[name] = base
        renamed.append(name)
    return renamed, duplicates


def _open_parquet(item: _Input, *, lazy: bool) -> _Opened:
    if item.path.stat().st_size == 0:
        raise _empty(item)
    if lazy:
        frame = pl.scan_parquet(item.path, glob=False).with_row_index(_LINE, offset=1)
        names = frame.collect_schema().names()
    else:
        data = pl.read_parquet(item.path, glob=False).with_row_index(_LINE, offset=1)
        names = data.columns
        frame = data.lazy()
    frame = frame.with_columns(pl.col(_LINE).cast(pl.Int64))
    own = [name for name in names if name != _LINE]
    return _Opened(item, "parquet", frame, own, "row", in_memory=not lazy)


def _open_json(item: _Input, *, lazy: bool) -> _Opened:
    ndjson = item.fmt == "ndjson"
    unit = "line" if ndjson else "record"
    compressed = _head_bytes(item.path, 2) == b"\x1f\x8b"
    if lazy and ndjson and not compressed:
        frame = pl.scan_ndjson(item.path, infer_schema_length=None)
        try:
            types = frame.collect_schema()
        except pl.exceptions.PolarsError:
            pass  # the eager reader below says what is wrong, and where
        else:
            # Decimal numbers in a validated column are read eagerly (below): polars parses
            # them through a float even when asked for their text.
            if not _inexact_numbers(types):
                _check_wrapped(item, frame.head(2).collect())
                frame = frame.with_row_index(_LINE, offset=1)
                frame = frame.with_columns(pl.col(_LINE).cast(pl.Int64))
                return _Opened(item, "ndjson", frame, types.names(), unit, in_memory=False)
    raw = _read_bytes(item.path, compressed)
    if not raw.strip():
        raise _empty(item)
    try:
        raw.decode("utf-8")
        lossy = False
    except UnicodeDecodeError:
        raw = raw.decode("utf-8", errors="replace").encode("utf-8")
        lossy = True
    reader = pl.read_ndjson if ndjson else pl.read_json
    try:
        data = reader(io.BytesIO(raw), infer_schema_length=None)
    except pl.exceptions.PolarsError as error:
        without_nan = _json_without_nan(item, raw)
        if without_nan is None:
            raise _json_error(item, raw, error) from None
        try:
            data = reader(io.BytesIO(without_nan), infer_schema_length=None)
        except pl.exceptions.PolarsError as again:
            raise _json_error(item, raw, again) from None
        raw = without_nan
    if data.width == 0 or data.height == 0:
        raise _empty(item)
    _check_wrapped(item, data)
    names = data.columns
    inexact = _inexact_numbers(data.schema)
    if inexact:
        exact = _numbers_as_text(raw, set(inexact))
        data = reader(io.BytesIO(exact), infer_schema_length=None, schema_overrides=inexact)
    frame = data.lazy().with_row_index(_LINE, offset=1).with_columns(pl.col(_LINE).cast(pl.Int64))
    return _Opened(item, item.fmt or "json", frame, names, unit, lossy=lossy)


# A JSON string, then (for a key) the number after its colon.
_JSON_KEYED_NUMBER = re.compile(
    r'"(?:[^"\\]|\\.)*"(?:(\s*:\s*)(-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)(?![0-9.eE]))?'
)


def _numbers_as_text(raw: bytes, keys: set[str]) -> bytes:
    """The JSON text with every number under one of `keys` written as a string of its digits.

    polars reads a decimal number through a float even when asked for its text, so
    `9007199254740993.0` would become 9007199254740992; quoted, it is validated as written.
    Keys are matched at any depth (a nested object's `tokens` is quoted too).
    """
    text = raw.decode("utf-8", errors="replace")

    def quote(match: re.Match[str]) -> str:
        whole = match.group(0)
        if match.group(2) is None:
            return whole
        key = whole[: len(whole) - len(match.group(1)) - len(match.group(2))]
        try:
            name = json.loads(key)
        except ValueError:
            return whole
        if name not in keys:
            return whole
        return f'{key}{match.group(1)}"{match.group(2)}"'

    return _JSON_KEYED_NUMBER.sub(quote, text).encode("utf-8")


def _check_wrapped(item: _Input, data: pl.DataFrame) -> None:
    """One JSON object holding the records in a list (`{"runs": [...]}`): say where they are."""
    if data.height != 1 or any(schema.canonical_for(name) == "workflow" for name in data.columns):
        return
    for name, dtype in data.schema.items():
        if isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct):
            raise LoadError(
                f"{item.display}: one object whose {name!r} holds a list of records; "
                f"ledger-tui reads the records themselves: extract them, for example "
                f"jq '.[{json.dumps(name)}]' FILE > runs.json.",
                source=item.display,
                column=name,
            )


def _inexact_numbers(types: pl.Schema) -> dict[str, pl.DataType]:
    """Validated columns the JSON reader guessed as floats, or as text (numbers mixed with
    strings): read them as their text instead, so a count is checked as written, never
    through a float (polars writes `9223372036854775296.0` as `9223372036854776000`)."""
    return {
        name: pl.String()
        for name, dtype in types.items()
        if schema.canonical_for(name) in _VALIDATED and (dtype.is_float() or dtype == pl.String)
    }


def _read_bytes(path: Path, compressed: bool) -> bytes:
    if compressed:
        with gzip.open(path, "rb") as stream:
            return stream.read()
    return path.read_bytes()


def _open_imported(item: _Input) -> _Opened:
    assert item.importer is not None
    try:
        data = item.importer.read(item.path)
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
    columns = [*names, line_expr.alias(_LINE)]
    if source in data.columns:
        columns.append(pl.col(source).cast(pl.String))
    frame = data.lazy().select(columns)
    return _Opened(item, "importer", frame, names, unit, has_source=source in data.columns)


# --- mapping and per-file parsing --------------------------------------------------------


@dataclass
class _Prepared:
    opened: _Opened
    index: int
    lazy: pl.LazyFrame
    mapping: dict[str, str]  # canonical -> the file's column name
    derived: list[str]
    kept_as: dict[str, str]  # the file's column -> the name it is kept under
    typed: bool = False  # counts arrived as Int64 and keys as Categorical: cheap to recompute


def _prepare(
    opened: _Opened,
    index: int,
    explicit: Mapping[str, str] | None,
    zero_usage_is_missing: bool,
) -> _Prepared:
    item = opened.item
    mapping = _map_columns(opened, explicit or {})
    _require(opened, mapping)
    source_of = {name: canonical for canonical, name in mapping.items()}
    taken = set(schema.CANONICAL_ORDER) | {schema.SOURCE_COLUMN, schema.LINE_COLUMN}
    taken |= set(opened.columns)
    kept_as: dict[str, str] = {}
    selected: list[pl.Expr] = []
    types = opened.frame.collect_schema()
    for name in opened.columns:
        canonical = source_of.get(name)
        if canonical is not None:
            expr = pl.col(name)
            validated = canonical in _VALIDATED or canonical in _TEXT_KEYS
            if validated and not _already_typed(canonical, types[name]):
                # Validated as text: a nested value (a list or an object) as its JSON, so it
                # is refused by name like any other unreadable cell, or named as written.
                expr = _as_text(name, types[name])
            selected.append(expr.alias(canonical))
        elif name in schema.CANONICAL_ORDER or name in (
            schema.SOURCE_COLUMN,
            schema.LINE_COLUMN,
            "outcome",
        ):
            new = _free_name(f"{name}_in_file", taken)
            kept_as[name] = new
            selected.append(pl.col(name).alias(new))
        else:
            selected.append(pl.col(name))
    # One file's name on every row: Categorical holds it once (4 bytes a row, not 16+).
    source = (
        pl.col(schema.SOURCE_COLUMN)
        if opened.has_source
        else pl.lit(item.display, pl.String).cast(pl.Categorical)
    )
    frame = opened.frame
    # A row whose every cell is empty is a blank line, not an attempt. (In memory, look
    # before filtering: a filter copies every column.)
    if opened.columns:
        filled = pl.any_horizontal(pl.col(opened.columns).is_not_null())
        if not opened.in_memory or not frame.select(filled.all()).collect().item():
            # Filter on a helper column: polars' predicate pushdown of a horizontal
            # expression over thousands of columns takes time quadratic in their number.
            frame = frame.with_columns(filled.alias(_FILLED)).filter(pl.col(_FILLED))
            frame = frame.drop(_FILLED)
    helpers = [
        source.alias(schema.SOURCE_COLUMN),
        pl.col(_LINE).alias(schema.LINE_COLUMN),
        pl.lit(index, pl.Int32).alias(_FRAME),
    ]
    if opened.fmt in ("csv", "tsv") and len(opened.columns) > 1:
        helpers.append(pl.col(opened.columns[-1]).is_null().alias(_SHORT))
    if opened.lossy:
        text_columns = [
            name for name, dtype in frame.collect_schema().items() if dtype == pl.String
        ]
        helpers.append(
            pl.any_horizontal(
                pl.col(text_columns).str.contains(_REPLACEMENT, literal=True).fill_null(False)
            ).alias(_LOSSY)
        )
    frame = frame.select(*selected, *helpers)
    typed = all(
        _already_typed(canonical, types[name])
        for canonical, name in mapping.items()
        if canonical in schema.INTEGER_COLUMNS or canonical in _TEXT_KEYS
    )
    if opened.infer:
        frame = _infer_types(
            frame,
            [name for name in opened.columns if name not in mapping.values()],
            mapping,
            kept_as,
            engine="auto" if opened.in_memory else "streaming",
        )
    frame, derived = _parse(frame, mapping, zero_usage_is_missing, in_memory=opened.in_memory)
    if kept_as:
        pairs = ", ".join(f"{old!r} as {new!r}" for old, new in kept_as.items())
        derived.append(f"kept the file's unmapped {pairs}")
    return _Prepared(opened, index, frame, mapping, derived, kept_as, typed)


def _already_typed(canonical: str, dtype: pl.DataType) -> bool:
    """Whether a column arrives in a type its validation reads directly: Int64 counts (a
    parser already refused anything but plain integers) or Categorical text (validated
    through its distinct values)."""
    if canonical in schema.INTEGER_COLUMNS:
        return dtype == pl.Int64
    return canonical in _TYPED_TEXT and dtype == pl.Categorical


def _free_name(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}_{number}", number + 1
    taken.add(candidate)
    return candidate


def _map_columns(opened: _Opened, explicit: Mapping[str, str]) -> dict[str, str]:
    """canonical -> file column: the explicit mapping first, then the aliases."""
    item = opened.item
    names = opened.columns
    header = {name: opened.duplicates.get(name, name) for name in names}
    mapping: dict[str, str] = {}
    claimed: dict[str, str] = {}
    for key, wanted in explicit.items():
        canonical = schema.normalise_name(key)
        if canonical not in schema.ALIASES:
            raise LoadError(
                f"--col {key}={wanted}: {key!r} is not a column ledger-tui knows; "
                f"use one of {', '.join(schema.ALIASES)}.",
                column=key,
            )
        if canonical in mapping:
            raise LoadError(
                f"--col {key}={wanted}: {canonical} is mapped twice; keep one --col {canonical}.",
                column=key,
            )
        name = _find_column(names, header, wanted)
        if name is None:
            raise LoadError(
                f"{item.display}: --col {key}={wanted} names no column of this file; "
                f"its columns are {listing(header[n] for n in names)}.",
                source=item.display,
                column=wanted,
            )
        if name in claimed:
            raise LoadError(
                f"{item.display}: column {header[name]!r} is given for both "
                f"{claimed[name]} and {canonical}; map each to a different column.",
                source=item.display,
                column=header[name],
            )
        mapping[canonical] = name
        claimed[name] = canonical
    found: dict[str, list[str]] = {}
    for name in names:
        if name in claimed:
            continue
        aliased = schema.canonical_for(header[name])
        if aliased is not None and aliased not in mapping:
            found.setdefault(aliased, []).append(name)
    for canonical, candidates in found.items():
        if len(candidates) > 1:
            shown = [header[name] for name in candidates]
            same = len(set(shown)) == 1
            what = (
                f"the header names {shown[0]!r} twice"
                if same
                else (
                    f"columns {listing(shown, quote=True, joiner='and')} "
                    f"{'both' if len(shown) == 2 else 'all'} name {canonical}"
                )
            )
            raise LoadError(
                f"{item.display}: {what}; rename one, or pick one with --col {canonical}=COLUMN.",
                source=item.display,
                column=shown[0],
            )
        mapping[canonical] = candidates[0]
    return mapping


def _find_column(names: list[str], header: dict[str, str], wanted: str) -> str | None:
    exact = [name for name in names if header[name] == wanted or name == wanted]
    if exact:
        return exact[0]
    key = schema.normalise_name(wanted)
    loose = [name for name in names if schema.normalise_name(header[name]) == key]
    return loose[0] if len(loose) == 1 else None


def _require(opened: _Opened, mapping: dict[str, str]) -> None:
    display = opened.item.display
    has = f"its columns are {listing(opened.columns)}" if opened.columns else "it has no columns"
    if "workflow" not in mapping:
        raise LoadError(
            f"{display}: no workflow column ({has}); name it one of "
            f"{', '.join(schema.ALIASES['workflow'])}, or pass --col workflow=COLUMN.",
            source=display,
        )
    if "passed" not in mapping and "status" not in mapping:
        raise LoadError(
            f"{display}: no outcome column ({has}); add a passed column "
            f"({', '.join(schema.ALIASES['passed'])}) or a status column "
            f"({', '.join(schema.ALIASES['status'])}), or pass --col passed=COLUMN "
            "or --col status=COLUMN.",
            source=display,
        )
    if "tokens" not in mapping and not any(bucket in mapping for bucket in schema.BUCKETS):
        raise LoadError(
            f"{display}: no tokens column ({has}); name it one of "
            f"{', '.join(schema.ALIASES['tokens'])}, give token buckets "
            f"({', '.join(schema.BUCKETS)}), or pass --col tokens=COLUMN.",
            source=display,
        )


def _infer_types(
    frame: pl.LazyFrame,
    candidates: list[str],
    mapping: dict[str, str],
    kept_as: dict[str, str],
    *,
    engine: _Engine,
) -> pl.LazyFrame:
    """Give CSV text columns that nobody validates the type polars' reader would infer."""
    renamed = {name: canonical for canonical, name in mapping.items()}
    targets = [kept_as.get(name, renamed.get(name, name)) for name in candidates]
    targets += [c for c in ("model", "run", "timestamp", "duration_s", "cost") if c in mapping]
    if not targets:
        return frame
    types = frame.collect_schema()
    categorical = {name for name in targets if types[name] == pl.Categorical}
    probes: list[pl.Expr] = []
    for index, name in enumerate(targets):
        column = pl.col(name)
        if name in categorical:
            # Every value parses exactly when every distinct value does.
            column = column.unique().cast(pl.String)
        present = column.is_not_null().sum()
        probes += [
            present.alias(f"n{index}"),
            column.str.to_integer(strict=False).is_not_null().sum().alias(f"i{index}"),
            column.cast(pl.Float64, strict=False).is_not_null().sum().alias(f"f{index}"),
            column.is_in(_BOOLEAN_WORDS).sum().alias(f"b{index}"),
        ]
    counts = frame.select(probes).collect(engine=engine).row(0, named=True)
    casts: list[pl.Expr] = []
    for index, name in enumerate(targets):
        present = counts[f"n{index}"]
        if present == 0:
            continue
        text = pl.col(name).cast(pl.String) if name in categorical else pl.col(name)
        if counts[f"i{index}"] == present:
            casts.append(text.str.to_integer(strict=False))
        elif counts[f"f{index}"] == present:
            casts.append(text.cast(pl.Float64, strict=False))
        elif counts[f"b{index}"] == present:
            casts.append(text.str.to_lowercase() == "true")
    return frame.with_columns(casts) if casts else frame


def _parse(
    frame: pl.LazyFrame,
    mapping: dict[str, str],
    zero_usage_is_missing: bool,
    *,
    in_memory: bool,
) -> tuple[pl.LazyFrame, list[str]]:
    """Token counts, the workflow and the task, parsed in polars; problems as helper columns.

    In memory, a cheap probe first finds the count columns holding anything but plain
    integers and empty cells; only those pay for the exact decimal parser.
    """
    derived: list[str] = []
    exprs: list[pl.Expr] = []
    types = frame.collect_schema()
    keys = [name for name in _TEXT_KEYS if name in mapping]
    trimmed = _trimmed_keys(
        frame,
        [name for name in keys if types[name] == pl.Categorical],
        engine="auto" if in_memory else "streaming",
    )
    for name in keys:
        trimmed.setdefault(name, pl.col(name).str.strip_chars())
        exprs.append(trimmed[name].alias(name))
    workflow = trimmed["workflow"]
    exprs.append(
        pl.when(workflow.is_null() | (workflow == ""))
        .then(_reason("empty"))
        .alias(_WHY + "workflow")
    )
    counts = [name for name in schema.INTEGER_COLUMNS if name in mapping]
    typed = {name for name in counts if types[name] == pl.Int64}
    plain: set[str] = set()
    probed = [name for name in counts if name not in typed]
    if in_memory and probed:
        probe = frame.select(
            (pl.col(name).is_not_null() & pl.col(name).str.to_integer(strict=False).is_null())
            .any()
            .alias(name)
            for name in probed
        )
        plain = {name for name, other in probe.collect().row(0, named=True).items() if not other}
    frame = _parse_counts(frame.with_columns(exprs), counts, plain, typed)
    buckets = [name for name in schema.BUCKETS if name in mapping]
    if buckets:
        total = pl.col(buckets[0]).cast(pl.Int128)
        for name in buckets[1:]:
            total = total + pl.col(name)  # null in any bucket -> null: missing usage
        if "tokens" not in mapping:
            frame = frame.with_columns(
                pl.when(total <= _INT64_MAX).then(total).cast(pl.Int64).alias("tokens"),
                pl.when(total > _INT64_MAX).then(_reason("range")).alias(_WHY + "tokens"),
                pl.when(total > _INT64_MAX).then(total.cast(pl.String)).alias(_BAD + "tokens"),
            )
            derived.append(
                f"tokens = {' + '.join(buckets)} (a row missing any of them has missing usage)"
            )
        elif "input_tokens" in buckets and "output_tokens" in buckets:
            tokens = pl.col("tokens")
            frame = frame.with_columns(
                (tokens.is_not_null() & total.is_not_null() & (total != tokens))
                .fill_null(False)
                .alias(_MISMATCH)
            )
    if zero_usage_is_missing:
        frame = frame.with_columns(
            pl.when(pl.col("tokens") != 0).then(pl.col("tokens")).alias("tokens"),
            (pl.col("tokens") == 0).alias(_ZERO),
        )
        derived.append("a usage of exactly 0 tokens is read as missing (--zero-usage-is-missing)")
    else:
        frame = frame.with_columns((pl.col("tokens") == 0).alias(_ZERO))
    return frame, derived


def _trimmed_keys(frame: pl.LazyFrame, names: list[str], *, engine: _Engine) -> dict[str, pl.Expr]:
    """Categorical key columns trimmed of surrounding white space: untouched (the common
    case, decided on the distinct values) or, where some value has spaces, trimmed as text."""
    expressions: dict[str, pl.Expr] = {}
    for name in names:
        # One query per column: a streamed `unique` of one column at a time.
        distinct = frame.select(pl.col(name).unique().cast(pl.String)).collect(engine=engine)
        values = distinct.to_series()
        if (values.str.strip_chars() != values).any():
            text = pl.col(name).cast(pl.String).str.strip_chars()
            expressions[name] = text.cast(pl.Categorical)
        else:
            expressions[name] = pl.col(name)
    return expressions


_Helper = Callable[[str], pl.Expr]


def _number_steps() -> list[Callable[[pl.Expr, _Helper], dict[str, pl.Expr]]]:
    """The exact decimal parser, as steps over named helper columns (see `_parse_counts`)."""
    int64 = pl.Int64
    return [
        lambda raw, h: {
            "rest": pl.when(h("fast").is_null() & raw.is_not_null()).then(raw.str.strip_chars())
        },
        lambda raw, h: {
            "unknown": pl.when(
                ~h("rest").str.to_lowercase().is_in(list(schema.MISSING_WORDS))
            ).then(h("rest"))
        },
        lambda raw, h: {"simple": h("unknown").str.strip_suffix(".0").str.to_integer(strict=False)},
        lambda raw, h: {"slow": pl.when(h("simple").is_null()).then(h("unknown"))},
        lambda raw, h: {"parts": h("slow").str.extract_groups(_NUMBER)},
        lambda raw, h: {
            "sign": h("parts").struct.field("1"),
            "fraction": h("parts").struct.field("3").fill_null(""),
            "digits": pl.concat_str(
                h("parts").struct.field("2").fill_null(""),
                h("parts").struct.field("3").fill_null(""),
            ),
            "exponent_text": h("parts").struct.field("4"),
        },
        lambda raw, h: {
            "exponent": h("exponent_text").str.to_integer(strict=False),
            "significant": h("digits").str.strip_chars_start("0"),
        },
        lambda raw, h: {"trimmed": h("significant").str.strip_chars_end("0")},
        lambda raw, h: {
            # value = trimmed * 10 ** scale; trailing zeros moved from the digits to the scale
            "scale": h("exponent").fill_null(0)
            - h("fraction").str.len_chars().cast(int64)
            + h("significant").str.len_chars().cast(int64)
            - h("trimmed").str.len_chars().cast(int64),
            "zero": h("sign").is_not_null() & (h("digits") != "") & (h("trimmed") == ""),
        },
        lambda raw, h: {"width": h("trimmed").str.len_chars().cast(int64) + h("scale")},
        lambda raw, h: {
            "exact": pl.when(~h("zero") & (h("scale") >= 0) & (h("width") <= 19))
            .then(h("trimmed").str.pad_end(h("width").clip(0, 19).cast(pl.UInt32), "0"))
            .str.to_integer(strict=False)
        },
        lambda raw, h: {
            "value": pl.coalesce(
                h("fast"),
                h("simple"),
                pl.when(h("zero")).then(pl.lit(0, int64)).otherwise(h("exact")),
            ),
            "why": pl.when(h("fast") < 0)
            .then(_reason("negative"))
            .when(h("fast").is_not_null())
            .then(None)
            .when(h("simple") < 0)
            .then(_reason("negative"))
            .when(h("slow").is_null())
            .then(None)
            .when(h("slow").str.to_lowercase().is_in(list(_INFINITY_WORDS)))
            .then(_reason("infinite"))
            .when(h("sign").is_null() | (h("digits") == ""))
            .then(_reason("not_number"))
            .when(h("zero"))
            .then(None)
            .when(h("sign") == "-")
            .then(_reason("negative"))
            .when(h("exponent_text").is_not_null() & h("exponent").is_null())
            .then(
                pl.when(h("exponent_text").str.starts_with("-"))
                .then(_reason("fractional"))
                .otherwise(_reason("range"))
            )
            .when(h("scale") < 0)
            .then(_reason("fractional"))
            .when(h("exact").is_null())
            .then(_reason("range")),
        },
    ]


def _parse_counts(
    frame: pl.LazyFrame, names: list[str], plain: set[str], typed: set[str]
) -> pl.LazyFrame:
    """Token counts from their text, exactly.

    Each column `name` becomes Int64 (null = missing), with `_WHY + name` (why a cell is not a
    count, null when fine) and `_BAD + name` (the cell's text, where it is not). Plain integers
    take the fast path; only the rest go through the exact decimal parser, and columns in
    `plain` are known to hold nothing else. Columns in `typed` are Int64 already, so only
    their sign is checked. Every step is its own `with_columns` over named helper columns, so
    no expression repeats another inside itself.
    """
    if not names:
        return frame

    def helper(name: str) -> _Helper:
        return lambda part: pl.col(f"__ledger_{name}_{part}")

    frame = frame.with_columns(
        (pl.col(name) if name in typed else pl.col(name).str.to_integer(strict=False)).alias(
            f"__ledger_{name}_fast"
        )
        for name in names
    )
    exact = [name for name in names if name not in plain and name not in typed]
    if exact:
        for build in _number_steps():
            frame = frame.with_columns(
                expr.alias(f"__ledger_{name}_{part}")
                for name in exact
                for part, expr in build(pl.col(name), helper(name)).items()
            )
    final: list[pl.Expr] = []
    for name in names:
        h = helper(name)
        why: pl.Expr
        if name in plain or name in typed:
            value, why = h("fast"), pl.when(h("fast") < 0).then(_reason("negative"))
        else:
            value, why = h("value"), h("why")
        final += [
            value.alias(name),
            why.alias(_WHY + name),
            pl.when(why.is_not_null()).then(pl.col(name).cast(pl.String)).alias(_BAD + name),
        ]
    temporary = [f"__ledger_{name}_" for name in names]
    return frame.with_columns(final).select(
        pl.exclude([f"^{re.escape(prefix)}.*$" for prefix in temporary])
    )


# --- across files: outcome, checks, warnings ---------------------------------------------


@dataclass(frozen=True)
class _Finding:
    kind: str
    count: int
    examples: tuple[tuple[str, int], ...]


def _concat(frames: list[pl.LazyFrame]) -> pl.LazyFrame:
    """Stack the files' frames; a column whose type differs between files (other than one
    number type against another) is kept as text, nested values as their JSON."""
    if len(frames) == 1:
        return frames[0]
    schemas = [frame.collect_schema() for frame in frames]
    types: dict[str, set[pl.DataType]] = {}
    for types_of_frame in schemas:
        for name, dtype in types_of_frame.items():
            if dtype != pl.Null:
                types.setdefault(name, set()).add(dtype)
    as_text = {
        name
        for name, found in types.items()
        if len(found) > 1 and not all(dtype.is_numeric() for dtype in found)
    }
    if as_text:
        frames = [
            frame.with_columns(
                _as_text(name, dtype) for name, dtype in frame_types.items() if name in as_text
            )
            for frame, frame_types in zip(frames, schemas, strict=True)
        ]
    return pl.concat(frames, how="diagonal_relaxed")


def _decode_bytes(values: pl.Series) -> pl.Series:
    return pl.Series(
        values.name,
        [None if raw is None else raw.decode("utf-8", "backslashreplace") for raw in values],
        dtype=pl.String,
    )


def _as_text(name: str, dtype: pl.DataType) -> pl.Expr:
    column = pl.col(name)
    if dtype == pl.Binary:
        # Raw bytes (rare, Parquet only): decoded in Python, since polars' cast fails on the
        # first byte that is not UTF-8; such bytes show as \xNN, never as a silent null.
        return column.map_batches(_decode_bytes, return_dtype=pl.String).alias(name)
    if not dtype.is_nested():
        return column.cast(pl.String)
    encoded = pl.struct(column.alias("v")).struct.json_encode()
    text = encoded.str.strip_prefix('{"v":').str.strip_suffix("}")
    return pl.when(column.is_not_null()).then(text).alias(name)


def _finish(
    staged: pl.LazyFrame, frames: list[_Prepared], *, in_memory: bool
) -> tuple[pl.LazyFrame, list[_Finding], list[tuple[str, str]], dict[str, str], int]:
    """Outcomes, the checks that stop a load, the warnings, and the final column layout.

    `in_memory` materialises the outcomes once, so the checks and the result share them.
    Otherwise (`scan`) every query here is one the streaming engine runs natively, so a file
    larger than memory is validated in bounded memory: no `implode` and no `unique` inside a
    select (polars runs those in memory), and the example lines of each warning are a
    `filter().head()` of their own, which stops reading once it has them.
    """
    engine: _Engine = "auto" if in_memory else "streaming"
    names = staged.collect_schema().names()
    has_passed = "passed" in names
    has_status = "status" in names
    by_frame = {frame.index: frame for frame in frames}
    types = staged.collect_schema()

    def by_row(column: str) -> bool:
        # replace_strict on Categorical goes through a text copy of every row (160 MB at 10M).
        return in_memory and types[column] != pl.Categorical

    # A short row first: its cells sit under the wrong names, so every other check would
    # misreport it.
    if _SHORT in names:
        short = (
            staged.filter(pl.col(_SHORT)).select(_FRAME, schema.LINE_COLUMN).collect(engine=engine)
        )
        for frame_index in short[_FRAME].unique().to_list():
            lines = short.filter(pl.col(_FRAME) == frame_index)[schema.LINE_COLUMN]
            _check_ragged(by_frame[frame_index].opened, lines)

    # The outcome vocabularies are checked on the distinct values, never row by row: one
    # query of the distinct (passed, status) pairs, a handful for any file that loads.
    wanted = [c for c in ("passed", "status") if c in names]
    pairs = staged.select(wanted).unique().collect(engine=engine) if wanted else pl.DataFrame()
    distinct = {c: pairs[c].unique().to_list() for c in wanted}
    words: list[pl.Expr] = []
    if has_passed:
        table = {raw: _read_passed(raw) for raw in distinct["passed"] if raw is not None}
        _reject_unknown(staged, by_frame, "passed", table, engine)
        known = {raw: value for raw, value in table.items() if value != "unknown"}
        passed = _replaced(pl.col("passed"), known, None, pl.Boolean, by_row=by_row("passed"))
        words.append(passed.alias("passed"))
    if has_status:
        table = {raw: _read_status(raw) for raw in distinct["status"] if raw is not None}
        _reject_unknown(staged, by_frame, "status", table, engine)
        status = _replaced(
            pl.col("status"), table, "ungraded", schema.OUTCOME_DTYPE, by_row=by_row("status")
        )
        words.append(status.fill_null("ungraded").alias(_STATUS_WORD))
    outcome, contradicting = _outcome(
        pl.col("passed") if has_passed else None, pl.col(_STATUS_WORD) if has_status else None
    )
    staged = staged.with_columns(words).with_columns(
        outcome.cast(schema.OUTCOME_DTYPE).alias("outcome"),
        contradicting.alias(_CONTRADICTING),
    )
    if in_memory and not all(frame.typed for frame in frames):
        staged = staged.collect().lazy()

    # Everything else in one pass: the first bad cell of each kind, and every warning.
    names = staged.collect_schema().names()
    checks = [c for c in ("workflow", *schema.INTEGER_COLUMNS) if _WHY + c in names]
    aggregates: list[pl.Expr] = [pl.len().alias("rows")]
    if in_memory:
        aggregates.append(pl.col(_FRAME).unique().implode().alias("frames"))
    else:
        aggregates += [(pl.col(_FRAME) == f.index).any().alias(f"has_{f.index}") for f in frames]
    # name -> (a row's fields, which rows, how many): the first rows where something holds.
    # (Fields, not a struct: a struct over every row would be built before its filter.)
    wanted_rows: dict[str, tuple[list[pl.Expr], pl.Expr, int]] = {}
    for column in checks:
        fields = [
            pl.col(_FRAME),
            pl.col(schema.SOURCE_COLUMN),
            pl.col(schema.LINE_COLUMN),
            pl.col(_WHY + column).alias("why"),
            (pl.col(_BAD + column) if _BAD + column in names else pl.lit(None, pl.String)).alias(
                "bad"
            ),
        ]
        wanted_rows[f"first_{column}"] = (fields, pl.col(_WHY + column).is_not_null(), 1)
    flags = {
        "contradicting_status": pl.col(_CONTRADICTING).fill_null(False),
        "bucket_mismatch": pl.col(_MISMATCH).fill_null(False) if _MISMATCH in names else None,
        "suspect_zero": pl.col(_ZERO).fill_null(False),
        "missing_usage": pl.col("tokens").is_null(),
        "ungraded": pl.col("outcome") == "ungraded",
        "lossy_decode": pl.col(_LOSSY).fill_null(False) if _LOSSY in names else None,
    }
    example = [pl.col(schema.SOURCE_COLUMN), pl.col(schema.LINE_COLUMN)]
    for kind, flag in flags.items():
        if flag is None:
            continue
        aggregates.append(flag.sum().alias(f"count_{kind}"))
        wanted_rows[f"examples_{kind}"] = (example, flag, _EXAMPLES)
    unterminated = [frame.index for frame in frames if frame.opened.unterminated]
    for frame_index in unterminated:
        in_frame = pl.col(_FRAME) == frame_index
        line = pl.col(schema.LINE_COLUMN)
        # Lines only grow within a file: the last is the largest (a plain reduction, streamed).
        last = line.filter(in_frame).last() if in_memory else pl.when(in_frame).then(line).max()
        aggregates.append(last.alias(f"last_line_{frame_index}"))
    if _LOSSY in names:
        wanted_rows["first_lossy_workflow"] = (
            [pl.col(_FRAME), pl.col(schema.SOURCE_COLUMN), pl.col(schema.LINE_COLUMN)],
            pl.col(_LOSSY).fill_null(False)
            & pl.col("workflow").str.contains(_REPLACEMENT, literal=True),
            1,
        )
    if in_memory:
        for name, (fields, condition, count) in wanted_rows.items():
            matching = pl.struct([field.filter(condition).head(count) for field in fields])
            aggregates.append((matching.first() if count == 1 else matching.implode()).alias(name))
    else:
        # A filtered reduction makes polars split the stream in two (a multiplexer, which
        # buffers), so streamed, each is a plain count here and its rows come from a
        # filter().head() query of its own, run only when there are some, stopping once found.
        aggregates += [
            condition.any().alias(f"any_{name}") for name, (_, condition, _) in wanted_rows.items()
        ]
    summary = staged.select(aggregates).collect(engine=engine).row(0, named=True)
    if not in_memory:
        summary["frames"] = [f.index for f in frames if summary[f"has_{f.index}"]]
        present = [name for name in wanted_rows if summary[f"any_{name}"]]
        queries = [
            staged.filter(wanted_rows[name][1])
            .select(pl.struct(wanted_rows[name][0]).alias("row"))
            .head(wanted_rows[name][2])
            for name in present
        ]
        # One after another: run together, each would hold its own stream's buffers.
        results = {
            name: query.collect(engine=engine) for name, query in zip(present, queries, strict=True)
        }
        for name, (_, _, count) in wanted_rows.items():
            found_rows = results[name]["row"].to_list() if name in results else []
            summary[name] = (found_rows[0] if found_rows else None) if count == 1 else found_rows

    for prepared in frames:
        if prepared.index not in summary["frames"]:
            display = prepared.opened.item.display
            raise LoadError(
                f"{display}: no attempts in it (a header, or blank rows, and nothing else); "
                "check it is the right file.",
                source=display,
            )

    for column in checks:
        first = summary[f"first_{column}"]
        if first is not None:
            raise _cell_error(by_frame[first[_FRAME]], column, first)
    lossy_workflow = summary.get("first_lossy_workflow")
    if lossy_workflow is not None:
        prepared = by_frame[lossy_workflow[_FRAME]]
        where = _where(
            prepared,
            lossy_workflow[schema.SOURCE_COLUMN],
            lossy_workflow[schema.LINE_COLUMN],
            "workflow",
        )
        raise LoadError(
            f"{where}: the workflow name has bytes that are not UTF-8, so two names could "
            "merge; re-encode the file as UTF-8 (for example iconv -f cp1252 -t utf-8).",
            source=lossy_workflow[schema.SOURCE_COLUMN],
            line=lossy_workflow[schema.LINE_COLUMN],
            column=prepared.mapping["workflow"],
        )

    findings = []
    for kind, flag in flags.items():
        if flag is None or not summary[f"count_{kind}"]:
            continue
        examples = tuple(
            (example[schema.SOURCE_COLUMN], example[schema.LINE_COLUMN])
            for example in summary[f"examples_{kind}"]
        )
        findings.append(_Finding(kind, summary[f"count_{kind}"], examples))
    for frame_index in unterminated:
        last_line = summary[f"last_line_{frame_index}"]
        if last_line is not None:
            display = by_frame[frame_index].opened.item.display
            findings.append(_Finding("unterminated_last_line", 1, ((display, last_line),)))

    derived: list[tuple[str, str]] = []
    for prepared in frames:
        display = prepared.opened.item.display
        derived += [(sentence, display) for sentence in prepared.derived]
        derived.append((_outcome_sentence(prepared.mapping), display))
    units: dict[str, str] = {}
    for prepared in frames:
        opened = prepared.opened
        if not opened.has_source:
            units[opened.item.display] = opened.unit
            continue
        # Importers name a source per row; their frames are small.
        found = staged.filter(pl.col(_FRAME) == prepared.index).select(
            pl.col(schema.SOURCE_COLUMN).unique()
        )
        sources = found.collect(engine=engine).to_series().to_list()
        units.update(dict.fromkeys(sources, opened.unit))
    result = staged.select(_column_order(names))
    return result, findings, derived, units, summary["rows"]


def _replaced(
    column: pl.Expr,
    table: Mapping[str, object],
    default: Any,
    dtype: pl.DataType | type[pl.DataType],
    *,
    by_row: bool,
) -> pl.Expr:
    """Each raw word's value from `table` (`default` for anything else, nulls included).

    `by_row`: `replace_strict` (one hash lookup per row), for text in memory. Streamed, polars
    runs `replace_strict` beside the stream and zips it back (buffering rows), and on
    Categorical it looks up a text copy of every row, so there it is the same lookup written
    per value: one `is_in` per distinct value, a handful at most.
    """
    if by_row:
        return column.replace_strict(dict(table), default=default, return_dtype=dtype)
    by_value: dict[object, list[str]] = {}
    for raw, value in table.items():
        by_value.setdefault(value, []).append(raw)
    result: pl.Expr = pl.lit(default, dtype=dtype)
    for value, raws in by_value.items():
        result = pl.when(column.is_in(raws)).then(pl.lit(value, dtype=dtype)).otherwise(result)
    return result


def _read_passed(raw: str) -> bool | str | None:
    word = raw.strip().lower()
    if word in schema.TRUE_WORDS:
        return True
    if word in schema.FALSE_WORDS:
        return False
    if word in schema.MISSING_WORDS:
        return None
    return "unknown"


def _read_status(raw: str) -> str:
    if raw.strip().lower() in schema.MISSING_WORDS:
        return "ungraded"
    return schema.STATUS_WORDS.get(schema.normalise_word(raw), "unknown")


def _reject_unknown(
    staged: pl.LazyFrame,
    by_frame: dict[int, _Prepared],
    column: str,
    table: Mapping[str, object],
    engine: _Engine,
) -> None:
    unknown = [raw for raw, value in table.items() if value == "unknown"]
    if not unknown:
        return
    first = (
        staged.filter(pl.col(column).is_in(unknown))
        .select(_FRAME, schema.SOURCE_COLUMN, schema.LINE_COLUMN, column)
        .head(1)
        .collect(engine=engine)
        .row(0, named=True)
    )
    prepared = by_frame[first[_FRAME]]
    where = _where(prepared, first[schema.SOURCE_COLUMN], first[schema.LINE_COLUMN], column)
    value = _shown(first[column])
    if column == "passed":
        what = f"{value} is not a pass/fail value; accepted: {_passed_vocabulary()}"
    else:
        what = f"{value} is not an outcome; accepted: {_status_vocabulary()}"
    raise LoadError(
        f"{where}: {what}. Fix the cell, or map another column with --col {column}=COLUMN.",
        source=first[schema.SOURCE_COLUMN],
        line=first[schema.LINE_COLUMN],
        column=prepared.mapping[column],
    )


def _passed_vocabulary() -> str:
    true = ", ".join(sorted(schema.TRUE_WORDS))
    false = ", ".join(sorted(schema.FALSE_WORDS))
    return f"true = {true}; false = {false} (any case); empty or NA = ungraded"


def _status_vocabulary() -> str:
    by_outcome: dict[str, list[str]] = {}
    for word, outcome in schema.STATUS_WORDS.items():
        by_outcome.setdefault(outcome, []).append(word or "empty")
    return (
        "; ".join(f"{outcome} = {', '.join(words)}" for outcome, words in by_outcome.items())
        + " (any case; spaces and dashes read as _)"
    )


def _outcome(passed: pl.Expr | None, status: pl.Expr | None) -> tuple[pl.Expr, pl.Expr]:
    """SPEC section 1: the outcome from `passed`, `status` (an outcome already), or both; and
    which rows' status contradicts their `passed`. Everything stays in the outcome Enum."""

    def word(name: str) -> pl.Expr:
        return pl.lit(name, dtype=schema.OUTCOME_DTYPE)

    if passed is not None and status is not None:
        outcome = (
            pl.when(passed)
            .then(word("passed"))
            .when(~passed)
            .then(
                pl.when(status.is_in(["timeout", "error"])).then(status).otherwise(word("failed"))
            )
            .otherwise(status)
        )
        contradicting = (passed & status.is_in(["failed", "timeout", "error"])) | (
            ~passed & (status == "passed")
        )
        return outcome, contradicting.fill_null(False)
    if passed is not None:
        outcome = (
            pl.when(passed)
            .then(word("passed"))
            .when(~passed)
            .then(word("failed"))
            .otherwise(word("ungraded"))
        )
        return outcome, pl.lit(False)
    assert status is not None
    return status, pl.lit(False)


def _outcome_sentence(mapping: Mapping[str, str]) -> str:
    if "passed" in mapping and "status" in mapping:
        return (
            "outcome from passed and status (passed decides; a false passed takes timeout "
            "or error from the status)"
        )
    if "passed" in mapping:
        return "outcome from passed (true = passed, false = failed, empty = ungraded)"
    return "outcome from status"


def _column_order(names: Sequence[str]) -> list[str]:
    canonical = [name for name in schema.CANONICAL_ORDER if name in names]
    internal = {schema.SOURCE_COLUMN, schema.LINE_COLUMN, *schema.CANONICAL_ORDER}
    others = [name for name in names if name not in internal and not name.startswith("__ledger_")]
    return [*canonical, *others, schema.SOURCE_COLUMN, schema.LINE_COLUMN]


# --- ragged rows --------------------------------------------------------------------------


def _check_ragged(opened: _Opened, suspects: pl.Series) -> None:
    """Raise for a CSV row with fewer fields than the header, naming its line.

    polars fills a short row's missing cells with nulls, exactly as it reads empty cells, so
    `suspects` are the lines whose last cell is empty. polars counts their fields first; only
    where one looks short does Python's csv reader count exactly.
    """
    expected = len(opened.columns)
    if _screen_ragged(opened.item, expected, suspects):
        found = _first_ragged_record(opened.item, expected)
        if found is not None:
            raise _ragged(opened.item, found)


def _file_text(item: _Input) -> str:
    raw = _read_bytes(item.path, _head_bytes(item.path, 2) == b"\x1f\x8b")
    return raw.decode("utf-8", errors="replace")


def _screen_ragged(item: _Input, expected: int, suspects: pl.Series) -> bool:
    """Whether any of the `suspects` lines may have a field count other than `expected`.

    Counts separators outside quotes. Where every line holds an even number of quotes, records
    are lines, and only the suspects are looked at; otherwise a line that starts inside a
    quoted cell is read as if it began with the quote, and the lines of each record are added
    up. A quote inside an unquoted cell (`12" screen`) can fool it into a suspect, never into
    an error: `_first_ragged_record` has the last word.
    """
    separator = "\t" if item.fmt == "tsv" else ","
    text = pl.col("text")
    quotes = text.str.count_matches('"', literal=True)
    unquoted = text.str.replace_all(r'"[^"]*"', "")
    odd = (quotes % 2 == 1).any()
    try:
        # Streamed: a file whose last column is often empty has many suspects, and the file
        # may be larger than memory (`scan`).
        scanned = pl.scan_lines(item.path, name="text", glob=False)
        any_odd = scanned.select(odd).collect(engine="streaming").item()
    except pl.exceptions.PolarsError:  # not UTF-8: decode it lossily here
        scanned = pl.LazyFrame({"text": _file_text(item).split("\n")})
        any_odd = scanned.select(odd).collect().item()
    if not any_odd:
        fields = unquoted.str.count_matches(separator, literal=True) + 1
        numbered = scanned.with_row_index("__number", offset=1)
        found = (
            numbered.filter(
                pl.col("__number").cast(pl.Int64).is_in(suspects.cast(pl.Int64).implode())
            )
            .select((fields != expected).any())
            .collect(engine="streaming")
        )
        return bool(found.item())
    # Quotes hold line ends somewhere: the records are counted over the whole text, in memory.
    lines = scanned.collect()
    # Only lines holding or inside quotes need the regular expressions; every other line's
    # text stays out of them (null), so a file with few quotes costs one separator count.
    per_line = lines.with_columns(quotes.alias("quotes")).with_columns(
        ((pl.col("quotes").cum_sum() - pl.col("quotes")) % 2 == 1).alias("inside")
    )
    holding = pl.when(pl.col("inside") | (pl.col("quotes") > 0)).then(text)
    # A line that starts inside a quoted cell reads as if it began with the quote.
    quoted = pl.when(pl.col("inside")).then(pl.concat_str(pl.lit('"'), holding)).otherwise(holding)
    bare = quoted.str.replace_all(r'"[^"]*"', "").str.replace(r'"[^"]*$', "")
    separators = pl.coalesce(
        bare.str.count_matches(separator, literal=True),
        text.str.count_matches(separator, literal=True),
    )
    per_line = per_line.select(
        "inside",
        separators.alias("separators"),
        (text.str.strip_chars_end("\r") == "").alias("blank"),
    ).slice(1)  # the header
    # A record's separators: the running total at the next record's start minus at its own.
    total = per_line["separators"].sum()
    before = pl.col("separators").cum_sum() - pl.col("separators")
    records = (
        per_line.with_columns(before.alias("before"))
        .filter(~pl.col("inside"))
        .with_columns(
            (pl.col("before").shift(-1, fill_value=total) - pl.col("before")).alias("separators")
        )
    )
    return records.filter(~pl.col("blank") & (pl.col("separators") + 1 != expected)).height > 0


def _first_ragged_record(item: _Input, expected: int | None) -> tuple[int, int, int] | None:
    """(line, fields, header fields) of the first record whose field count is not the header's.

    Python's csv reader, which quotes as polars does, row by row: it only runs once polars or
    the screen has found a suspect, so a clean file never pays for it.
    """
    separator = "\t" if item.fmt == "tsv" else ","
    reader = csv.reader(io.StringIO(_file_text(item), newline=""), delimiter=separator)
    header = next(reader, None)
    if header is None:
        return None
    wanted = expected if expected is not None else len(header)
    line = reader.line_num + 1
    for row in reader:
        if row and len(row) != wanted:
            return line, len(row), wanted
        line = reader.line_num + 1
    return None


def _ragged(item: _Input, found: tuple[int, int, int] | None) -> LoadError:
    if found is None:
        return LoadError(
            f"{item.display}: a row has more fields than the header; check for an unquoted "
            "separator inside a cell.",
            source=item.display,
        )
    line, fields, header = found
    more = "more" if fields > header else "fewer"
    return LoadError(
        f"{item.display} line {line}: {fields} fields where the header has {header} "
        f"({more} than the header); fix the row, or quote a cell that holds the separator.",
        source=item.display,
        line=line,
    )


# --- messages ----------------------------------------------------------------------------


def _cell_error(prepared: _Prepared, column: str, first: Mapping[str, object]) -> LoadError:
    source = str(first[schema.SOURCE_COLUMN])
    line = first[schema.LINE_COLUMN]
    assert isinstance(line, int)
    why = str(first["why"])
    if column == "workflow":
        where = _where(prepared, source, line, column)
        return LoadError(
            f"{where}: the workflow is empty; every attempt needs one: fill it in or delete "
            "the row.",
            source=source,
            line=line,
            column=prepared.mapping["workflow"],
        )
    if column == "tokens" and "tokens" not in prepared.mapping:
        buckets = " + ".join(b for b in schema.BUCKETS if b in prepared.mapping)
        where = f"{source} {prepared.opened.unit} {line}"
        return LoadError(
            f"{where}: {buckets} adds up to {first['bad']}, more than the biggest count stored "
            "exactly (9,223,372,036,854,775,807); check the bucket columns hold token counts.",
            source=source,
            line=line,
        )
    where = _where(prepared, source, line, column)
    return LoadError(
        f"{where}: {_shown(first['bad'])} {_COUNT_PROBLEMS[why]}; fix the cell, or leave it "
        "empty (or write NA) if the usage is unknown.",
        source=source,
        line=line,
        column=prepared.mapping[column],
    )


def _where(prepared: _Prepared, source: str, line: int, column: str) -> str:
    return f"{source} {prepared.opened.unit} {line}, column {prepared.mapping[column]!r}"


def _shown(value: object) -> str:
    text = str(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return repr(text)


def _empty(item: _Input) -> LoadError:
    return LoadError(
        f"{item.display}: the file is empty (no attempts); check it is the right file.",
        source=item.display,
    )


def _is_utf8_error(error: Exception) -> bool:
    text = str(error).lower()
    return "utf-8" in text or "utf8" in text


def _read_error(item: _Input, error: Exception) -> LoadError:
    if isinstance(error, PermissionError):
        return LoadError(
            f"{item.display}: cannot be read (permission denied); check its permissions.",
            source=item.display,
        )
    if isinstance(error, LoadError):
        return error
    if item.fmt in ("csv", "tsv") and "malformed" not in str(error):
        unclosed = _unclosed_quote(item)
        if unclosed is not None:
            return unclosed
    if "more fields" in str(error):
        return _ragged(item, _first_ragged_record(item, None))
    if item.fmt in ("csv", "tsv") and "malformed" in str(error):
        return _stray_quote(item)
    label = {"csv": "CSV", "tsv": "TSV", "parquet": "Parquet", "json": "JSON"}.get(
        item.fmt or "", "NDJSON"
    )
    return LoadError(
        f"{item.display}: cannot be read as {label} ({first_line(error)}); check the file "
        "is complete and in that format.",
        source=item.display,
    )


def _unclosed_quote(item: _Input) -> LoadError | None:
    """A quoted cell that never closes (often a file cut off mid-row), named by its line."""
    opened_at: int | None = None
    inside = False
    for number, text in enumerate(_file_text(item).split("\n"), start=1):
        if text.count('"') % 2:
            inside = not inside
            opened_at = number if inside else opened_at
    if not inside or opened_at is None:
        return None
    return LoadError(
        f"{item.display} line {opened_at}: a quoted cell starts here and never ends; the file "
        "may be cut off (export it again), or a closing quote is missing.",
        source=item.display,
        line=opened_at,
    )


def _stray_quote(item: _Input) -> LoadError:
    """polars refuses a quote inside an unquoted cell; name the first line that has one."""
    separator = "\t" if item.fmt == "tsv" else ","
    cell = re.escape(separator)
    lines = pl.DataFrame({"text": _file_text(item).split("\n")}).with_row_index("line", offset=1)
    stray = lines.filter(pl.col("text").str.contains(f'(^|{cell})[^"{cell}]+"'))
    where = f"{item.display} line {stray['line'][0]}" if stray.height else item.display
    return LoadError(
        f"{where}: a quote inside a cell that is not quoted; quote the cell and double the "
        'quote (12" wide -> "12"" wide"), or export the file again.',
        source=item.display,
        line=int(stray["line"][0]) if stray.height else None,
    )


def _json_error(item: _Input, raw: bytes, error: Exception) -> LoadError:
    """Name the line (or record) of JSON polars refused; the locating runs only after polars
    has failed. Valid JSON that polars still refuses is named by what is wrong with it."""
    text = raw.decode("utf-8", errors="replace")
    if "can only deserialize json objects" in str(error):
        return LoadError(
            f"{item.display}: the JSON holds values that are not records; write an array of "
            "objects, one per attempt.",
            source=item.display,
        )
    label = "NDJSON" if item.fmt == "ndjson" else "JSON"
    line: int | None = None
    place = ""
    detail = first_line(error)
    if item.fmt == "ndjson":
        for number, row in enumerate(text.split("\n"), start=1):
            if not row.strip():
                continue
            try:
                value = json.loads(row)
            except json.JSONDecodeError as decode_error:
                line, place = number, f", column {decode_error.colno}"
                detail = decode_error.msg.removesuffix(" starting at")
                break
            except ValueError:
                line = number
                break
            if not isinstance(value, dict):
                return _not_a_record(item, f"line {number}", value, number)
    else:
        try:
            document = json.loads(text)
        except json.JSONDecodeError as decode_error:
            line, place = decode_error.lineno, f", column {decode_error.colno}"
            detail = decode_error.msg.removesuffix(" starting at")
        except ValueError:
            pass
        else:
            if isinstance(document, list):
                for number, value in enumerate(document, start=1):
                    if not isinstance(value, dict):
                        return _not_a_record(item, f"record {number}", value, None)
    if line is None:
        # Valid for Python, refused by polars (say, 1e400): polars names the byte.
        found = re.search(r"at character (\d+)", str(error))
        if found is not None:
            line = raw[: int(found.group(1))].count(b"\n") + 1
    where = f"{item.display} line {line}{place}" if line is not None else item.display
    return LoadError(
        f"{where}: not valid {label} ({detail}); fix the file (cut off?), or export it again.",
        source=item.display,
        line=line,
    )


def _not_a_record(item: _Input, where: str, value: object, line: int | None) -> LoadError:
    kind = {
        list: "a list",
        str: "a string",
        bool: "true or false",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), "not an object")
    return LoadError(
        f"{item.display} {where}: {kind}, not a record; every attempt is an object with named "
        "fields, one per line (NDJSON) or in one array (JSON).",
        source=item.display,
        line=line,
    )


# NaN and Infinity are not JSON, but Python's json module writes them for float('nan') and
# float('inf'). A string is matched whole first, so a NaN inside one is left alone.
_JSON_CONSTANTS = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity)\b|\bNaN\b')


def _json_without_nan(item: _Input, raw: bytes) -> bytes | None:
    """The JSON text with every bare NaN written as null (missing), or None when there is none.

    A bare Infinity is refused, naming its line: no count is infinite, and guessing a value
    for it would be inventing data.
    """
    text = raw.decode("utf-8", errors="replace")
    if "NaN" not in text and "Infinity" not in text:
        return None
    replaced = 0

    def swap(match: re.Match[str]) -> str:
        nonlocal replaced
        if match.group(0).startswith('"'):
            return match.group(0)
        if match.group(1) is not None:
            line = text.count("\n", 0, match.start()) + 1
            raise LoadError(
                f"{item.display} line {line}: {match.group(1)} is not a number JSON can hold, "
                "and no count is infinite; write null where the value is unknown.",
                source=item.display,
                line=line,
            )
        replaced += 1
        return "null"

    rewritten = _JSON_CONSTANTS.sub(swap, text)
    return rewritten.encode("utf-8") if replaced else None


# --- the report ---------------------------------------------------------------------------


_WARNING_TEXT: dict[str, str] = {
    "contradicting_status": (
        "{n} with a status that contradicts passed; passed decided the outcome"
    ),
    "bucket_mismatch": ("{n} whose token buckets do not add up to tokens; tokens was used"),
    "suspect_zero": (
        "{n} reporting exactly 0 tokens, which harnesses often write when usage was not "
        "recorded; kept as 0 (--zero-usage-is-missing reads them as missing)"
    ),
    "missing_usage": (
        "{n} with missing usage (unknown, never counted as 0); tokens per accepted result "
        "is a lower bound for their groups"
    ),
    "ungraded": "{n} with no verdict, counted as ungraded (not accepted)",
    "unterminated_last_line": (
        "{n} on a last line with no line end after it; if the file was cut off while "
        "being written, that attempt may be incomplete: check it, or export the file again"
    ),
    "lossy_decode": (
        "{n} with bytes that are not UTF-8, read with \ufffd in their place; re-encode the "
        "file as UTF-8 to keep the text"
    ),
}


def _report(
    inputs: list[_Input],
    frames: list[_Prepared],
    findings: list[_Finding],
    derived: list[tuple[str, str]],
    units: dict[str, str],
    rows: int,
) -> LoadReport:
    files = [
        item.display if item.importer is None else f"{item.display} ({item.importer.name})"
        for item in inputs
    ]
    mapping: dict[str, list[str]] = {}
    for prepared in frames:
        for canonical, name in prepared.mapping.items():
            shown = prepared.opened.duplicates.get(name, name)
            if shown not in mapping.setdefault(canonical, []):
                mapping[canonical].append(shown)
    ordered = {
        canonical: " / ".join(mapping[canonical])
        for canonical in schema.CANONICAL_ORDER
        if canonical in mapping
    }
    sentences: dict[str, list[str]] = {}
    for sentence, display in derived:
        if display not in sentences.setdefault(sentence, []):
            sentences[sentence].append(display)
    everyone = len(inputs)
    said = [
        sentence if len(where) == everyone else f"{sentence} (in {listing(where, limit=3)})"
        for sentence, where in sentences.items()
    ]
    merged: dict[str, tuple[int, list[tuple[str, int]]]] = {}
    for finding in findings:
        count, examples = merged.get(finding.kind, (0, []))
        merged[finding.kind] = (count + finding.count, examples + list(finding.examples))
    warnings = []
    for kind in _WARNING_TEXT:
        if kind not in merged:
            continue
        count, examples = merged[kind]
        examples = examples[:_EXAMPLES]
        noun = "row" if kind == "lossy_decode" else "attempt"
        message = _WARNING_TEXT[kind].format(n=plural(count, noun)) + "."
        warnings.append(
            LoadWarning(
                kind=kind,
                message=message[0].upper() + message[1:],
                count=count,
                lines=tuple(line for _, line in examples),
                sources=tuple(source for source, _ in examples),
            )
        )
    return LoadReport(
        files=files, rows=rows, mapping=ordered, derived=said, warnings=warnings, units=units
    )
