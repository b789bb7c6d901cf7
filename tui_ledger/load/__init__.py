"""Files of attempts -> one validated attempts frame and a plain-words load report.

The loader is the only place where a file's own words meet the accounting contract
(SPEC.md section 1). It reads CSV, TSV, gzip CSV/TSV, Parquet, JSON (an array of records, or
one record) and NDJSON/JSONL, or whatever a harness importer (`tui_ledger.importers`) turns a
path into; maps the file's column names onto the canonical ones; and validates every cell the
accounting depends on. Whatever it cannot read unambiguously stops the load with a
`LoadError` whose text is one line naming the file, the line and the column; whatever it can
read but looks wrong is kept and counted in a `LoadWarning`. Nothing is guessed silently.

Decisions the spec leaves open (all of them written down in docs, too):

- Line numbers (`read_csv`, `read_json`, `readers`). CSV/TSV: the header is line 1; a row's
  number is the line it starts on, as an editor counts, also after a quoted cell holding a line
  end. NDJSON: record index + 1 (equal to the line unless the file has blank lines). JSON:
  record index + 1, and errors say "record". Parquet: row index + 1, and errors say "row".
  Importers: their own `line` column if they give one, else record index + 1.
- Blank lines (and rows whose every cell is empty) are skipped (`prepare`); they still count in
  line numbers.
- Encoding (`opened`, `read_csv`, `read_json`, `validate`): a file that is not valid UTF-8 is
  read anyway, with U+FFFD in place of the bad bytes, and a "lossy_decode" warning lists the
  rows affected (the accounting columns are validated after decoding, so a damaged number still
  stops the load). A damaged *workflow* name is an error instead, since two names that differ
  only in their bad bytes would merge. UTF-16/32 text (a byte-order mark) and binary files under
  a text extension (NUL bytes beside a header that is not text) are errors that say so.
- Missing words (`counts`, `outcomes`; `schema.MISSING_WORDS`, any case) mean "unknown" in
  `tokens`, the buckets, `passed` and `status`. That list includes `nan`, so a pandas NaN is
  missing usage; `inf` is an error. JSON's non-standard bare `NaN` (Python's json module writes
  it) reads as null the same way, in any column; a bare `Infinity` is an error naming its line.
- Numbers (`counts`; JSON: `read_json`): whole numbers in plain, decimal (`1000.0`) or
  scientific (`1e3`) notation are accepted when they are exactly whole; everything is checked on
  the text, never via a float, so nothing is rounded; more than 9,223,372,036,854,775,807 is an
  error, never wrapped. (JSON: where polars would read a validated column through a float, the
  numbers under that key are read as their text instead, at any depth, and the file is read
  eagerly.)
- A CSV/TSV whose last line has no line end loads (`read_csv`, `warning_rules`), with an
  "unterminated_last_line" warning: a file cut off inside its last cell looks complete
  otherwise. A quoted cell that never closes is an error naming the line it opens on.
- Only regular files and folders are read (`inputs`). A pipe, device or socket, a link to
  nothing or a link loop is refused at once by name, without opening it (a FIFO would block, and
  can be read only once); inside a folder too, when its name has a supported extension. Links to
  folders are followed, each real folder once.
- Memory (`memory`): before an eager read (`load`, and `scan` of what it cannot stream), a lower
  bound of the memory needed (3x the CSV size, 1.5x JSON, 8 bytes per Parquet cell) is compared
  with what is free (MemAvailable, or the cgroup's limit); a load that cannot fit is refused
  with a message pointing at the streaming `ledger-tui summary`, instead of being killed
  halfway.
- Ctrl+C during a load (here, `_one_interrupt`) leaves as exactly one KeyboardInterrupt (polars
  raises one and leaves the signal pending; a second would fire inside the caller's handler).
- Messages are for terminals (`load_report`): `LoadError` text and `LoadReport.lines()` show
  control, bidi and invisible characters from file names, column names and cells as visible
  escapes.
- Buckets (`counts`) are compared with `tokens` only where the file has both `input_tokens` and
  `output_tokens` (one bucket alone is a part, not a total).
- A `passed` of false beside a status of passed (`outcomes`) is counted as a contradicting
  status too.
- `workflow` and `task` values are trimmed (`counts`) of surrounding white space; every other
  text cell is kept exactly as read.
- Types (`read_csv`, `prepare`). A CSV/TSV is read with its counts as Int64 and its keys and
  outcome words (workflow, task, model, run, passed, status) as Categorical, by the CSV parser
  itself; a count cell that is not a plain integer sends the counts back to being read as text,
  where the exact parser validates them. The file's name in `source` is Categorical too. `scan`
  keeps text.
- CSV/TSV columns that are not validated (`columns.infer_types`) get the types polars' CSV
  reader would infer (integer, float, boolean, else text), decided on every row, never a sample.
- A file column (`prepare`) that is not mapped but whose name the attempts frame uses (say a
  `tokens` column next to `--col tokens=usage_total`, or a column called `line`) is kept as
  `<name>_in_file`.
- A `.json` file (`inputs`, `formats`) holding one object per line is read as NDJSON; `fmt` may
  also name an importer (e.g. "terminal-bench") to read every path with it.
- A column whose type differs between files (other than one number type against another) is
  kept as text, nested values as their JSON (`validate.concat`).
- A path given twice is read once (`inputs`). Hidden files and folders (`.name`) inside a folder
  are skipped, as are files whose extension is not supported; an explicitly named file of
  unknown extension is sniffed.

The package, one module per job (each imports only those above it in this list, at run time):

- `helper_columns`: the helper columns that live only inside the loader;
- `warning_rules`: every warning as a named row flag beside its sentence (`checks` and `watch`
  use the same table);
- `load_report`: `LoadError`, `LoadWarning`, `LoadReport`, `Ledger`, and building the report;
- `formats`: suffixes and formats; a file's `Head` (its size, gzip or not, first bytes and the
  format they say), read once per file; gzip, a file's bytes and text;
- `inputs`: paths -> inputs (folders, links, pipes, permissions, importers), each table file
  with its `Head`: the memory check and the readers use it, none opens the file's start again;
- `memory`: whether an eager read fits in the memory left;
- `opened`: the checks every table file shares, made once before its reader (`checked`: empty,
  UTF-16/32, binary), and what opening one input gives the rest of the loader;
- `columns`: a file's columns onto the canonical ones (`--col`, the aliases);
- `csv_errors`, `read_csv`, `read_json`, `readers`: opening one input, each reader only its own
  format (`readers.open_input` makes the shared checks, then hands the input on); a reader
  that maps the columns to type them as it reads hands that mapping on (`Opened.mapping`);
- `joined`: `--outcomes`, a grading file joined onto one opened input (any format);
- `counts`, `prepare`: one file's counts parsed, its columns selected;
- `outcomes`: the outcome vocabularies;
- `validate`: across files, the checks that stop a load, the warnings, the column order;
- here: `load` and `scan`, which run those steps in order;
- `early`: `load` in a thread, started by `ledger-tui FILE` before the app is imported.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from tui_ledger.load.formats import SUPPORTED_SUFFIXES, is_utf8_error
from tui_ledger.load.inputs import Input, check_path_kind, expand, files_below
from tui_ledger.load.joined import join_all
from tui_ledger.load.load_report import (
    Counted,
    Ledger,
    LoadError,
    LoadReport,
    LoadWarning,
    build_report,
)
from tui_ledger.load.memory import check_memory, read_whole, too_large_to_load
from tui_ledger.load.opened import Opened
from tui_ledger.load.prepare import Prepared, prepare
from tui_ledger.load.read_csv import csv_head
from tui_ledger.load.readers import open_input, read_error
from tui_ledger.load.validate import column_order, concat, finish
from tui_ledger.text.wording import first_line, listing

if TYPE_CHECKING:
    from tui_ledger.importers import ImportOptions

__all__ = [
    "SUPPORTED_SUFFIXES",
    "Ledger",
    "LoadError",
    "LoadReport",
    "LoadWarning",
    "check_path_kind",
    "expand",
    "files_below",
    "load",
    "load_head",
    "scan",
    "too_large_to_load",
]


def load(
    paths: Sequence[str | Path] | str | Path,
    *,
    columns: Mapping[str, str] | None = None,
    zero_usage_is_missing: bool = False,
    fmt: str | None = None,
    imports: ImportOptions | None = None,
) -> Ledger:
    """Read, map and validate files of attempts into one attempts frame.

    `paths` are files or folders (a folder means every supported file below it, sorted);
    a harness importer is asked first about each path. `columns` maps canonical names to the
    file's column names and beats the aliases. `zero_usage_is_missing` reads a usage of exactly
    0 as missing. `fmt` forces a format (csv, tsv, parquet, json, ndjson) or an importer (by
    its name, e.g. "terminal-bench") for every path. `imports` is what the user told the
    importers (`--pass-threshold`, `--report`, `--outcome-attribute`) and the grading file
    joined onto every input (`--outcomes`, `--outcomes-key`). Raises `LoadError` for anything
    that cannot be read unambiguously; the files are only ever opened for reading.
    """
    with _one_interrupt():
        return _load(paths, columns, zero_usage_is_missing, fmt, imports)


def _opened(
    inputs: list[Input],
    columns: Mapping[str, str] | None,
    imports: ImportOptions | None,
    *,
    lazy: bool,
    head: bytes | None = None,
) -> list[Opened]:
    """Every input opened (importers told `imports`), the outcomes file joined if given;
    `head`: read instead of the one CSV/TSV input (`load_head`)."""
    several = len(inputs) > 1
    opened = [
        open_input(item, lazy=lazy, columns=columns, imports=imports, several=several, head=head)
        for item in inputs
    ]
    if imports is not None and imports.outcomes is not None:
        opened = join_all(opened, imports.outcomes, imports.outcomes_key, columns)
    return opened


def _load(
    paths: Sequence[str | Path] | str | Path,
    columns: Mapping[str, str] | None,
    zero_usage_is_missing: bool,
    fmt: str | None,
    imports: ImportOptions | None,
) -> Ledger:
    inputs = expand(paths, fmt)
    check_memory(inputs)
    return _load_inputs(inputs, columns, zero_usage_is_missing, imports)


def load_head(
    paths: Sequence[str | Path] | str | Path,
    size: int,
    *,
    columns: Mapping[str, str] | None = None,
    zero_usage_is_missing: bool = False,
    fmt: str | None = None,
    imports: ImportOptions | None = None,
) -> Ledger | None:
    """The first whole records of one uncompressed CSV/TSV file, at most `size` bytes of it,
    read and validated as `load` reads the file: what the app shows while `load` reads the
    rest. Its report describes those records only. None when the paths are not one such file,
    when the head cannot be cut at a record's end (`read_csv.csv_head`), or when reading it
    fails (`load` of the whole file then says why)."""
    with _one_interrupt():
        try:
            inputs = expand(paths, fmt)
        except LoadError:
            return None
        if (
            len(inputs) != 1
            or inputs[0].importer is not None
            or inputs[0].fmt not in ("csv", "tsv")
            or (imports is not None and imports.outcomes is not None)
        ):
            return None
        try:
            head = csv_head(inputs[0].path, size)
            if head is None:
                return None
            return _load_inputs(inputs, columns, zero_usage_is_missing, imports, head=head)
        except (LoadError, OSError):
            return None


def _load_inputs(
    inputs: list[Input],
    columns: Mapping[str, str] | None,
    zero_usage_is_missing: bool,
    imports: ImportOptions | None,
    *,
    head: bytes | None = None,
) -> Ledger:
    opened = _opened(inputs, columns, imports, lazy=False, head=head)
    try:
        frames = [
            prepare(item, index, columns, zero_usage_is_missing)
            for index, item in enumerate(opened)
        ]
        staged = concat([frame.lazy for frame in frames])
        if not all(frame.typed for frame in frames):
            # Parsing counts from text is the costly part: once, shared by every check.
            staged = staged.collect().lazy()
        validated = finish(staged, frames, in_memory=True)
        attempts = validated.frame.collect()
    except pl.exceptions.PolarsError as error:
        # Anything polars refuses past opening is still the input's fault, said in one line.
        if len(inputs) == 1:
            raise read_error(inputs[0], error) from None
        raise LoadError(
            f"{listing([item.display for item in inputs], limit=3)}: cannot be read together "
            f"({first_line(error)}); load them one at a time to find the file at fault."
        ) from None
    report = build_report(
        inputs, frames, validated.counted, validated.derived, validated.units, validated.rows
    )
    return Ledger(attempts=attempts, report=report)


def scan(
    paths: Sequence[str | Path] | str | Path,
    *,
    columns: Mapping[str, str] | None = None,
    zero_usage_is_missing: bool = False,
    fmt: str | None = None,
    imports: ImportOptions | None = None,
) -> tuple[pl.LazyFrame, LoadReport]:
    """Like `load`, but return a LazyFrame that reads CSV, TSV, Parquet and NDJSON on demand.

    The files are validated here with lazy queries (so a bad cell still raises `LoadError`
    now, not later), each file on its own, which reads each file a few times but never holds
    it in memory whole. JSON arrays, compressed NDJSON and importer output are read eagerly,
    as is every input an outcomes file is joined onto.
    """
    with _one_interrupt():
        return _scan(paths, columns, zero_usage_is_missing, fmt, imports)


def _scan(
    paths: Sequence[str | Path] | str | Path,
    columns: Mapping[str, str] | None,
    zero_usage_is_missing: bool,
    fmt: str | None,
    imports: ImportOptions | None,
) -> tuple[pl.LazyFrame, LoadReport]:
    inputs = expand(paths, fmt)
    check_memory([item for item in inputs if read_whole(item)], streaming=True)
    joined = imports is not None and imports.outcomes is not None
    # The join needs every input first (a key may match in any of them).
    ready = _opened(inputs, columns, imports, lazy=True) if joined else None
    results: list[pl.LazyFrame] = []
    frames: list[Prepared] = []
    counted: list[Counted] = []
    derived: list[tuple[str, str]] = []
    units: dict[str, str] = {}
    rows = 0
    several = len(inputs) > 1
    for index, item in enumerate(inputs):
        opened = (
            ready[index]
            if ready is not None
            else open_input(item, lazy=True, imports=imports, several=several)
        )
        try:
            prepared = prepare(opened, index, columns, zero_usage_is_missing)
            validated = finish(prepared.lazy, [prepared], in_memory=False)
        except pl.exceptions.PolarsError as error:
            lossy_again = opened.fmt in ("csv", "tsv") and not opened.lossy and not joined
            if lossy_again and is_utf8_error(error):
                opened = open_input(item, lazy=True, lossy=True)
                prepared = prepare(opened, index, columns, zero_usage_is_missing)
                try:
                    validated = finish(prepared.lazy, [prepared], in_memory=False)
                except pl.exceptions.PolarsError as again:
                    raise read_error(opened.item, again) from None
            else:
                raise read_error(opened.item, error) from None
        results.append(validated.frame)
        frames.append(prepared)
        counted.extend(validated.counted)
        derived.extend(validated.derived)
        units.update(validated.units)
        rows += validated.rows
    lazy = concat(results) if len(results) > 1 else results[0]
    order = column_order(lazy.collect_schema().names())
    return lazy.select(order), build_report(inputs, frames, counted, derived, units, rows)


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
