"""What every harness importer shares: the protocol, the error, and the small readers.

An importer turns a harness's own files into a RAW attempts frame: canonical column names where
they map (see `schema.ALIASES`), the harness's other useful fields under their own names, and
`source` / `line`. The loader then validates it like any file, so importers report what the
harness wrote and nothing more: unknown stays null, a reported 0 stays 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import polars as pl

from tui_ledger.schema import LINE_COLUMN, SOURCE_COLUMN, canonical_for

# Detection reads at most this much of a file.
PEEK_BYTES = 8192

TIMESTAMP_DTYPE = pl.Datetime("us", "UTC")

# The canonical columns (and the raw reasons beside them) that the harness-log importers write
# first, in this order, so frames from different harnesses concatenate.
HARNESS_SCHEMA: dict[str, pl.DataType] = {
    "workflow": pl.String(),
    "task": pl.String(),
    "passed": pl.Boolean(),
    "status": pl.String(),
    "input_tokens": pl.Int64(),
    "cached_input_tokens": pl.Int64(),
    "cache_write_tokens": pl.Int64(),
    "output_tokens": pl.Int64(),
    "tokens": pl.Int64(),
    "model": pl.String(),
    "run": pl.String(),
    "timestamp": TIMESTAMP_DTYPE,
    "duration_s": pl.Float64(),
    "cost": pl.Float64(),
    "stop_reason": pl.String(),
    "error_message": pl.String(),
}


class ImporterError(ValueError):
    """A harness file that cannot be imported.

    `str()` is one line for people: the file, the record where there is one, and what is wrong.
    """

    def __init__(self, message: str, *, path: Path | str | None = None, record: str | None = None):
        super().__init__(message)
        self.path = None if path is None else Path(path)
        self.record = record

    @classmethod
    def at(cls, path: Path | str, problem: str, *, record: str | None = None) -> ImporterError:
        """An error located in `path` (and `record` inside it, e.g. "sample 3 epoch 1")."""
        where = f"{path}: {record}" if record else f"{path}"
        return cls(f"{where}: {problem}", path=path, record=record)


@dataclass(frozen=True)
class ImportOptions:
    """What a user may tell an importer beyond the path; every field has a safe default.

    - `pass_threshold`: a fractional reward or score at or above it is accepted (None: the
      importer's own default, 1.0 everywhere: only a full reward passes).
    - `report`: the SWE-bench harness report (a run report `<model>.<run_id>.json`, a
      per-instance `report.json`, or a folder of them) when it is not beside the run.
    - `outcome_attribute`: an OpenTelemetry span attribute that holds the verdict (a boolean,
      a pass/fail word, or a score read against `pass_threshold`).
    - `outcomes`, `outcomes_key`: a grading file joined onto EVERY input's attempts by the
      loader (`outcomes_join.join_outcomes`), importer or plain table; the importers ignore it.
    """

    pass_threshold: float | None = None
    report: Path | None = None
    outcome_attribute: str | None = None
    outcomes: Path | None = None
    outcomes_key: str | None = None

    def threshold(self) -> float:
        """The pass threshold in force (1.0 unless the user set one)."""
        return 1.0 if self.pass_threshold is None else self.pass_threshold


DEFAULT_OPTIONS = ImportOptions()


@dataclass(frozen=True)
class Imported:
    """What an importer read, with what a load report should say about it.

    - `frame`: the raw attempts frame (what `read` returns).
    - `conventions`: one-line sentences, which token-bucket convention the files use and why the
      importer read them so ("Harbor n_input_tokens includes cache reads: input_tokens =
      n_input_tokens - n_cache_tokens"). Always the same for one format and options.
    - `warnings`: one-line sentences about this read ("3 trajectories have no entry in the
      SWE-bench report: ungraded"), each counting what it is about.
    """

    frame: pl.DataFrame
    conventions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@runtime_checkable
class Importer(Protocol):
    """Reads one harness's files into a raw attempts frame."""

    @property
    def name(self) -> str:
        """The name `get_importer` and a `--importer` option know it by."""
        ...

    def matches(self, path: Path) -> bool:
        """True when `path` looks like this harness's output (cheap: a peek, never a full read)."""
        ...

    def read(self, path: Path, options: ImportOptions | None = None) -> pl.DataFrame:
        """The raw attempts frame; raises `ImporterError` for a file this importer cannot read."""
        ...

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported:
        """The raw attempts frame with the conventions read and the warnings of this read."""
        ...


class ImporterBase:
    """`read` in terms of `read_imported`, so a new importer writes only the latter."""

    def read(self, path: Path, options: ImportOptions | None = None) -> pl.DataFrame:
        """The raw attempts frame; raises `ImporterError` for a file this importer cannot read."""
        return self.read_imported(path, options).frame

    def read_imported(
        self, path: Path, options: ImportOptions | None = None
    ) -> Imported:  # pragma: no cover - every importer defines it
        raise NotImplementedError


def peek_text(path: Path, size: int = PEEK_BYTES) -> str:
    """The first `size` bytes of a file as text ("" when it cannot be read)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(size)
    except OSError:
        return ""
    return head.decode("utf-8", errors="replace").lstrip("\ufeff")


def load_json(path: Path) -> Any:
    """A whole JSON document, or an `ImporterError` naming the file and where the JSON breaks."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImporterError.at(path, f"cannot be read ({exc.strerror or exc})") from None
    return parse_json(data, path)


def parse_json(data: bytes | str, path: Path | str, *, record: str | None = None) -> Any:
    """`data` parsed as JSON, or an `ImporterError` naming `path` (and `record`)."""
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        problem = f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        raise ImporterError.at(path, problem, record=record) from None
    except UnicodeDecodeError:
        raise ImporterError.at(path, "is not UTF-8 text", record=record) from None


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) of every non-blank line of a JSONL file, read as it goes.

    A line that is not JSON (a file cut mid-write) is an `ImporterError` naming `line N`.
    """
    try:
        with path.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, parse_json(line, path, record=f"line {number}")
    except OSError as exc:
        raise ImporterError.at(path, f"cannot be read ({exc.strerror or exc})") from None


def whole_number(value: Any, *, path: Path | str, record: str | None, field: str) -> int | None:
    """A token count as an int (None stays None); anything but a whole number is an error.

    Negative numbers pass through: the loader reports them with their row and column.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ImporterError.at(path, f"{field} is {value!r}, not a number of tokens", record=record)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ImporterError.at(path, f"{field} is {value!r}, not a whole number", record=record)


def real_number(value: Any, *, path: Path | str, record: str | None, field: str) -> float | None:
    """A float (None stays None); anything else but a number is an error."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ImporterError.at(path, f"{field} is {value!r}, not a number", record=record)
    return float(value)


_FRACTION = re.compile(r"(\.\d+)")


def parse_timestamp(
    value: Any, *, path: Path | str, record: str | None, field: str
) -> datetime | None:
    """An ISO 8601 time as an aware UTC datetime (None stays None; no zone means UTC)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ImporterError.at(path, f"{field} is {value!r}, not an ISO 8601 time", record=record)
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # Python 3.10 reads only 3 or 6 fractional digits; harnesses write 1 to 9.
    text = _FRACTION.sub(lambda match: (match.group(1) + "000000")[:7], text, count=1)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ImporterError.at(
            path, f"{field} {value!r} is not an ISO 8601 time", record=record
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def seconds_between(start: datetime | None, end: datetime | None) -> float | None:
    """`end - start` in seconds, or None when either is unknown."""
    if start is None or end is None:
        return None
    return (end - start) / timedelta(seconds=1)


def text_or_none(value: Any) -> str | None:
    """A value as text; None and "" are both "not recorded" (None)."""
    return None if value is None or value == "" else str(value)


def json_object(
    document: Mapping[str, Any],
    key: str,
    *,
    path: Path | str,
    record: str | None = None,
    field: str | None = None,
) -> Mapping[str, Any]:
    """`document[key]` as an object: {} when absent or null, an `ImporterError` naming `field`
    (default `key`) when it is anything else."""
    value = document.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ImporterError.at(path, f"{field or key} is {value!r}, not an object", record=record)
    return value


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and its noun, singular or plural ("1 trial", "3 trials")."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def first_line(text: Any, limit: int = 300) -> str | None:
    """The first line of a message, shortened for a table cell (None stays None)."""
    if text is None:
        return None
    line = str(text).strip().splitlines()[0] if str(text).strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def build_frame(
    columns: Mapping[str, Sequence[Any]],
    schema: Mapping[str, pl.DataType],
    *,
    drop_if_all_null: Sequence[str] = (),
) -> pl.DataFrame:
    """A frame with `schema`'s dtypes and order, `source` and `line` last.

    Columns named in `drop_if_all_null` are left out when no row has a value: a harness that
    never reports a field should not grow an empty column of it.
    """
    series = []
    for name, dtype in schema.items():
        values = columns[name]
        if name in drop_if_all_null and all(value is None for value in values):
            continue
        series.append(pl.Series(name, values, dtype=dtype, strict=True))
    frame = pl.DataFrame(series)
    _check_names(frame.columns)
    return frame


def _check_names(names: Sequence[str]) -> None:
    """Every extra column must stay clear of the aliases, or the loader would see two of one."""
    for name in names:
        canonical = canonical_for(name)
        if name in (SOURCE_COLUMN, LINE_COLUMN) or canonical is None:
            continue
        if canonical != name:  # pragma: no cover - a programming error, caught by the tests
            raise AssertionError(f"importer column {name!r} is an alias of {canonical!r}")
