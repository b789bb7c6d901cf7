"""Join a file of outcomes onto attempts by a key column (`--outcomes FILE [--outcomes-key COL]`).

Session logs (Claude Code, Codex), spans and runs graded elsewhere carry no verdict; a grading
file supplies one: a CSV, TSV, JSON array of objects or JSONL with a key column (`session_id`,
`trace_id`, `instance_id`, ... or any column named with `key`) and `passed` and/or `status`
(any of their aliases), optionally `task`.

```python
from tui_ledger.outcomes_join import join_outcomes

joined = join_outcomes(raw_attempts, "grades.csv", key="session_id")
joined.attempts  # passed / status / task replaced where a grade matched; outcomes_line added
joined.warnings  # e.g. "3 attempts have no outcome in grades.csv: ungraded"
```

It works on a RAW attempts frame (canonical column names, as an importer returns, before the
loader derives `outcome`), so the loader then validates and counts the joined verdicts like any
other. A matched attempt takes the file's `passed` and `status` as they are (a column the file
lacks becomes empty for it): the grading file is the verdict. Values are checked here, so a bad
one is named by its place in the outcomes file, not in the attempts.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from tui_ledger.importers._base import counted
from tui_ledger.schema import (
    FALSE_WORDS,
    MISSING_WORDS,
    STATUS_WORDS,
    TRUE_WORDS,
    canonical_for,
    normalise_name,
    normalise_word,
)

# Tried in this order when no key is named: the ids session logs, spans and runs carry.
DEFAULT_KEYS: tuple[str, ...] = (
    "session_id",
    "trace_id",
    "conversation_id",
    "span_id",
    "trial_uuid",
    "task",
)
LINE_COLUMN = "outcomes_line"
_SHOWN = 40


class OutcomesError(ValueError):
    """An outcomes file that cannot be joined; `str()` is one line naming the file."""


@dataclass(frozen=True)
class OutcomesJoin:
    """The attempts with the joined outcomes, and what the join found."""

    attempts: pl.DataFrame
    key: str  # the attempts' column joined on
    matched: int  # attempts that got an outcome
    without_outcome: int  # attempts left as they were (no row in the file)
    unmatched_outcomes: int  # rows of the file that matched no attempt
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class _Grade:
    passed: bool | None
    status: str | None
    task: str | None
    line: int


def join_outcomes(
    attempts: pl.DataFrame,
    outcomes: Path | str,
    *,
    key: str | None = None,
    require_match: bool = True,
) -> OutcomesJoin:
    """`attempts` with `passed`, `status` (and `task`, when the file has one) taken from the
    outcomes file for every attempt whose `key` value it lists.

    Raises `OutcomesError` (one line: the file, the key, what to do) when the file cannot be
    read, has no usable key or verdict column, repeats a key, holds a value neither vocabulary
    knows, or when none of its keys matches an attempt. A caller joining one file onto several
    inputs in turn passes `require_match=False` and checks the sum of `matched` itself.
    """
    path = Path(outcomes)
    records = _read_records(path)
    if not records:
        raise OutcomesError(f"{path}: holds no outcomes; give one row per attempt.")
    names = list(records[0][1])
    file_key, attempt_key = _pick_key(path, names, attempts.columns, key)
    columns = {canonical_for(name): name for name in names if name != file_key}
    if "passed" not in columns and "status" not in columns:
        raise OutcomesError(
            f"{path}: no passed or status column (columns: {', '.join(names)}); add one, "
            "e.g. passed = true/false."
        )
    grades = _grades(path, records, file_key, columns)
    keys = attempts[attempt_key].cast(pl.String).str.strip_chars()
    present = set(keys.drop_nulls().to_list())
    unmatched = [value for value in grades if value not in present]
    if require_match and len(unmatched) == len(grades):
        example = next(iter(present), None)
        seen = (
            f"; the attempts' {attempt_key} values look like {_shown(example)}" if example else ""
        )
        raise OutcomesError(
            f"{path}: none of its {len(grades)} {file_key} values matches an attempt's "
            f"{attempt_key} (e.g. {_shown(unmatched[0])}){seen}; check the file, or name the "
            "key column with --outcomes-key."
        )
    found = [grades.get(value) if value is not None else None for value in keys.to_list()]
    joined = _apply(attempts, found, has_task="task" in columns and attempt_key != "task")
    matched = sum(grade is not None for grade in found)
    without = attempts.height - matched
    warnings = []
    if without:
        warnings.append(
            f"{counted(without, 'attempt')} without an outcome in {path} (no {file_key} row): "
            "left as they were"
        )
    if unmatched:
        warnings.append(
            f"{counted(len(unmatched), 'outcome row')} in {path} matching no attempt's "
            f"{attempt_key} (e.g. {_shown(unmatched[0])})"
        )
    return OutcomesJoin(joined, attempt_key, matched, without, len(unmatched), tuple(warnings))


def _read_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line, record) pairs of a CSV, TSV, JSON array or JSONL file."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise OutcomesError(f"{path}: no such file; check the --outcomes path.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OutcomesError(
            f"{path}: cannot be read ({exc}); give a UTF-8 CSV or JSON file."
        ) from None
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                records.append(
                    (number, _object(_parse(line, path, f"line {number}"), path, number))
                )
        return records
    if suffix == ".json":
        document = _parse(text, path, None)
        if not isinstance(document, list):
            raise OutcomesError(
                f"{path}: is not a JSON array of objects; give one object per attempt."
            )
        return [(index, _object(item, path, index)) for index, item in enumerate(document, start=1)]
    delimiter = "\t" if suffix == ".tsv" else ","
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    if reader.fieldnames is None:
        return []
    records = []
    for row in reader:
        if None in row:
            raise OutcomesError(
                f"{path} line {reader.line_num}: more cells than the header; quote cells that "
                "hold the separator."
            )
        records.append((reader.line_num, dict(row)))
    return records


def _parse(text: str, path: Path, where: str | None) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        place = f" {where}" if where else ""
        raise OutcomesError(
            f"{path}{place}: is not valid JSON ({exc.msg} at line {exc.lineno}, column "
            f"{exc.colno}); fix the file."
        ) from None


def _object(value: Any, path: Path, number: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise OutcomesError(f"{path} record {number}: is not an object of columns.")
    return value


def _pick_key(
    path: Path, names: Sequence[str], attempt_columns: Sequence[str], key: str | None
) -> tuple[str, str]:
    """(the file's key column, the attempts' column it matches)."""

    def attempts_column(name: str) -> str | None:
        """The attempts' column `name` means: itself, its normalised spelling, its canonical."""
        wanted = normalise_name(name)
        for column in attempt_columns:
            if column == name or normalise_name(column) == wanted:
                return column
        canonical = canonical_for(name)
        return canonical if canonical in attempt_columns else None

    if key is not None:
        wanted = normalise_name(key)
        file_key = next((name for name in names if normalise_name(name) == wanted), None)
        if file_key is None:
            raise OutcomesError(
                f"{path}: no {key!r} column to join on (columns: {', '.join(names)}); name "
                "the key column with --outcomes-key."
            )
        target = attempts_column(key) or attempts_column(file_key)
        if target is None:
            raise OutcomesError(
                f"{path}: the attempts have no {key!r} column to join on; pick a column they "
                "share with --outcomes-key."
            )
        return file_key, target
    for candidate in DEFAULT_KEYS:
        for name in names:
            if normalise_name(name) == candidate or canonical_for(name) == candidate:
                target = attempts_column(name)
                if target is not None:
                    return name, target
    raise OutcomesError(
        f"{path}: no column it shares with the attempts to join on (tried "
        f"{', '.join(DEFAULT_KEYS)}); name one with --outcomes-key."
    )


def _grades(
    path: Path,
    records: list[tuple[int, dict[str, Any]]],
    file_key: str,
    columns: dict[str | None, str],
) -> dict[str, _Grade]:
    grades: dict[str, _Grade] = {}
    for line, record in records:
        value = _text(record.get(file_key))
        if value is None:
            raise OutcomesError(f"{path} line {line}: the {file_key} key is empty; fill it in.")
        if value in grades:
            raise OutcomesError(
                f"{path}: {file_key} {_shown(value)} appears on lines {grades[value].line} and "
                f"{line}; give one outcome per attempt."
            )
        passed = _passed(record.get(columns.get("passed", "")), path, line, columns)
        status = _status(record.get(columns.get("status", "")), path, line, columns)
        task = _text(record.get(columns["task"])) if "task" in columns else None
        grades[value] = _Grade(passed, status, task, line)
    return grades


def _passed(value: Any, path: Path, line: int, columns: dict[str | None, str]) -> bool | None:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    word = str(value).strip().lower()
    if word in MISSING_WORDS:
        return None
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise OutcomesError(
        f"{path} line {line}, column {columns['passed']!r}: {_shown(value)} is not true or false "
        "(true/false, yes/no, 1/0, pass/fail, passed/failed, accepted/rejected)."
    )


def _status(value: Any, path: Path, line: int, columns: dict[str | None, str]) -> str | None:
    if value is None:
        return None
    word = normalise_word(str(value))
    if word in MISSING_WORDS:
        return None
    if word not in STATUS_WORDS:
        known = ", ".join(sorted({w for w in STATUS_WORDS if w}))
        raise OutcomesError(
            f"{path} line {line}, column {columns['status']!r}: {_shown(value)} is not a status "
            f"word ({known})."
        )
    return STATUS_WORDS[word]


def _apply(attempts: pl.DataFrame, found: list[_Grade | None], *, has_task: bool) -> pl.DataFrame:
    """The attempts with the grades written over `passed`, `status` (and `task`)."""
    matched = pl.Series([grade is not None for grade in found], dtype=pl.Boolean)
    textual = "passed" in attempts.columns and attempts.schema["passed"] == pl.String
    passed_values: list[Any] = [grade.passed if grade else None for grade in found]
    if textual:  # a raw table's text column: written as text, the loader reads the words
        passed_values = [None if value is None else str(value).lower() for value in passed_values]
    updates = {
        "passed": pl.Series(passed_values, dtype=pl.String if textual else pl.Boolean),
        "status": pl.Series([grade.status if grade else None for grade in found], dtype=pl.String),
        LINE_COLUMN: pl.Series([grade.line if grade else None for grade in found], dtype=pl.Int64),
    }
    if has_task:
        updates["task"] = pl.Series(
            [grade.task if grade else None for grade in found], dtype=pl.String
        )
    expressions = []
    for name, series in updates.items():
        new = pl.lit(series)
        if name in attempts.columns and name != LINE_COLUMN:
            current = pl.col(name).cast(series.dtype)
            # The task of a grade replaces the attempt's only when the grade names one.
            keep = ~pl.lit(matched) | (new.is_null() if name == "task" else pl.lit(False))
            expressions.append(pl.when(keep).then(current).otherwise(new).alias(name))
        else:
            expressions.append(new.alias(name))
    joined = attempts.with_columns(expressions)
    # `source` and `line` stay last, where the importers put them.
    tail: list[str] = [name for name in ("source", "line") if name in joined.columns]
    return joined.select([name for name in joined.columns if name not in tail] + tail)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _shown(value: Any) -> str:
    text = str(value)
    return repr(text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…")


__all__ = ["DEFAULT_KEYS", "OutcomesError", "OutcomesJoin", "join_outcomes"]
