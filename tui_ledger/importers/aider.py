"""Aider benchmark runs: one attempt per exercise `.aider.results.json`.

Layout: `tmp.benchmarks/<YYYY-MM-DD-HH-MM-SS--name>/<language>/exercises/practice/<exercise>/
.aider.results.json` (older runs: `<run>/<exercise>/.aider.results.json`). A folder of runs, one
run, or one results file are read alike.

Decisions (docs/IMPORTERS.md has the full table):
- workflow = `aider__<model>__<edit_format>`; task = `<language>/<testcase>` (the language is the
  folder below the run, when the run has language folders); run = the run folder.
- passed = any try passed (`True in tests_outcomes`, as benchmark.py counts pass rates);
  `passed_first_try` keeps pass@1 (`tests_outcomes[0]`). No try recorded: ungraded.
- A crashed exercise (a file holding only `{"exception": ...}`) is an `error` attempt with
  unknown usage, in its run's workflow (the model and edit format of its sibling exercises).
- tokens = prompt_tokens + completion_tokens, as written (no cache split; files before
  2025-05-07 have none: usage missing). cost 0 is an unpriced model: missing (kept only when
  0 tokens were sent).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from tui_ledger.importers._base import (
    HARNESS_SCHEMA,
    Imported,
    ImporterBase,
    ImporterError,
    ImportOptions,
    counted,
    first_line,
    load_json,
    real_number,
    text_or_none,
    whole_number,
)
from tui_ledger.importers._template import detect, input_files, rows_frame
from tui_ledger.importers.recorded import listed, priced

RESULTS_FILE = ".aider.results.json"
HISTORY_FILE = ".aider.chat.history.md"
_RUN_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}--")
# Detection: <folder>/tmp.benchmarks/<run>/<lang>/exercises/practice/<exercise>/ is 6 down.
_DETECT_DEPTH = 6

CONVENTIONS = (
    "Aider prompt_tokens is all input sent, with no cache split (and, for Anthropic models with "
    "prompt caching, Aider adds the cache writes once more on top of litellm's prompt_tokens, "
    "which hold them already): kept as input_tokens as written; tokens = prompt_tokens + "
    "completion_tokens",
    "Aider thinking_tokens is the configured thinking budget, not usage: kept as "
    "thinking_budget, never added",
)

_SCHEMA: dict[str, pl.DataType] = {
    **HARNESS_SCHEMA,
    "passed_first_try": pl.Boolean(),
    "tries": pl.Int64(),
    "test_timeouts": pl.Int64(),
    "edit_format": pl.String(),
    "language": pl.String(),
    "reasoning_effort": pl.String(),
    "thinking_budget": pl.Int64(),
    "malformed_responses": pl.Int64(),
    "error_outputs": pl.Int64(),
    "exhausted_context_windows": pl.Int64(),
    "commit_hash": pl.String(),
    "source": pl.String(),
    "line": pl.Int64(),
}
_OPTIONAL = (
    "cached_input_tokens",
    "cache_write_tokens",
    "timestamp",
    "language",
    "reasoning_effort",
    "thinking_budget",
    "error_message",
)


@dataclass(frozen=True)
class AiderImporter(ImporterBase):
    """Aider benchmark run folders, or one exercise's `.aider.results.json`."""

    name: str = "aider"

    def matches(self, path: Path) -> bool:
        """A `.aider.results.json`, or a folder with one at most six levels down."""
        return detect(path, _is_results_file, _results_here, _DETECT_DEPTH)

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported:
        """Every exercise below `path` (or the one it is), one attempt each."""
        files = input_files(path, _walk_results, f"holds no Aider {RESULTS_FILE}")
        rows = [
            _unfinished(file) if file.name == HISTORY_FILE else _row(file, load_json(file))
            for file in files
        ]
        unfinished = [row["source"] for row in rows if row.get("stop_reason") == "unfinished"]
        crashed = _name_crashes(rows) - len(unfinished)
        notes = []
        if crashed:
            notes.append(
                f"{counted(crashed, 'exercise')} crashed (a results file holding only an "
                "exception): outcome error, usage unknown"
            )
        if unfinished:
            shown = [Path(source).parent.name for source in unfinished]
            notes.append(
                f"{counted(len(unfinished), 'exercise')} started and never wrote "
                f"{RESULTS_FILE} ({listed(shown)}: only its {HISTORY_FILE}): counted as "
                "attempts that did not finish, outcome error, usage unknown"
            )
        frame = rows_frame(rows, _SCHEMA, _OPTIONAL)
        return Imported(frame, CONVENTIONS, tuple(notes))


def _is_results_file(path: Path) -> bool:
    return path.name == RESULTS_FILE


def _results_here(folder: Path, names: list[str]) -> bool | None:
    return True if RESULTS_FILE in names else None


def _walk_results(root: Path) -> list[Path]:
    """Every exercise's results file below `root`; for an exercise that started (its chat
    history is written as aider starts on it) and never wrote one, its chat history."""
    found = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        for name in (RESULTS_FILE, HISTORY_FILE):
            if name in files:
                found.append(Path(folder) / name)
                subfolders[:] = []  # an exercise folder holds only that exercise
                break
    return found


def _unfinished(history: Path) -> dict[str, Any]:
    """An exercise aider started (its chat history) that never wrote its results file."""
    run, language = _run_and_language(history.parent)
    return {
        "run": run.name,
        "language": language,
        "source": str(history),
        "line": 1,
        "task": _task(language, history.parent.name),
        "status": "error",
        "stop_reason": "unfinished",
        "error_message": f"the exercise never wrote {RESULTS_FILE}",
    }


def _run_and_language(exercise: Path) -> tuple[Path, str | None]:
    """The run folder of an exercise folder, and the language folder below it if any."""
    parts = exercise.parts
    for index in range(len(parts) - 1, -1, -1):
        if _RUN_NAME.match(parts[index]):
            below = parts[index + 1 : -1]
            language = below[0] if below and "exercises" in below else None
            return Path(*parts[: index + 1]), language
    if exercise.parent.parent.name == "exercises" or exercise.parent.name == "practice":
        # <lang>/exercises/practice/<exercise> under a run folder with another name.
        language_folder = exercise.parents[2]
        return language_folder.parent, language_folder.name
    return exercise.parent, None


def _row(file: Path, document: Any) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise ImporterError.at(file, "is not an Aider results object")
    run, language = _run_and_language(file.parent)
    base = {"run": run.name, "language": language, "source": str(file), "line": 1}
    if set(document) == {"exception"}:
        return {
            **base,
            "task": _task(language, file.parent.name),
            "status": "error",
            "stop_reason": "exception",
            "error_message": _last_line(document["exception"]),
        }
    testcase = document.get("testcase")
    if not isinstance(testcase, str) or not testcase:
        raise ImporterError.at(file, f"testcase is {testcase!r}, not an exercise name")
    outcomes = document.get("tests_outcomes")
    if not isinstance(outcomes, list) or not all(isinstance(item, bool) for item in outcomes):
        raise ImporterError.at(file, f"tests_outcomes is {outcomes!r}, not a list of true/false")

    def count(field: str) -> int | None:
        return whole_number(document.get(field), path=file, record=None, field=field)

    prompt, completion = count("prompt_tokens"), count("completion_tokens")
    tokens = None if prompt is None or completion is None else prompt + completion
    cost = real_number(document.get("cost"), path=file, record=None, field="cost")
    cost = priced(cost, tokens)  # no price known for the model: unknown, never $0
    model, edit_format = (
        text_or_none(document.get("model")),
        text_or_none(document.get("edit_format")),
    )
    passed = (True in outcomes) if outcomes else None
    return {
        **base,
        "workflow": _workflow(model, edit_format),
        "task": _task(language, testcase),
        "passed": passed,
        "status": "unset" if passed is None else "passed" if passed else "failed",
        "input_tokens": prompt,
        "output_tokens": completion,
        "tokens": tokens,
        "model": model,
        "duration_s": real_number(
            document.get("duration"), path=file, record=None, field="duration"
        ),
        "cost": cost,
        "passed_first_try": outcomes[0] if outcomes else None,
        "tries": len(outcomes),
        "test_timeouts": count("test_timeouts"),
        "edit_format": edit_format,
        "reasoning_effort": text_or_none(document.get("reasoning_effort")),
        "thinking_budget": count("thinking_tokens"),
        "malformed_responses": count("num_malformed_responses"),
        "error_outputs": count("num_error_outputs"),
        "exhausted_context_windows": count("num_exhausted_context_windows"),
        "commit_hash": text_or_none(document.get("commit_hash")),
    }


def _name_crashes(rows: list[dict[str, Any]]) -> int:
    """Give each crashed exercise its run's workflow and model; the number of crashes."""
    by_run: dict[str, Counter[tuple[str, str | None]]] = {}
    for row in rows:
        if row.get("workflow"):
            by_run.setdefault(row["run"], Counter())[(row["workflow"], row.get("model"))] += 1
    crashed = 0
    for row in rows:
        if row.get("workflow"):
            continue
        crashed += 1
        seen = by_run.get(row["run"])
        if seen and len(seen) == 1:
            row["workflow"], row["model"] = next(iter(seen))
        else:  # no sibling, or several configurations in one run: the run names it
            row["workflow"] = f"aider__{row['run']}"
    return crashed


def _workflow(model: str | None, edit_format: str | None) -> str:
    return "__".join(part for part in ("aider", model or "unknown model", edit_format) if part)


def _task(language: str | None, testcase: str) -> str:
    return f"{language}/{testcase}" if language else testcase


def _last_line(text: Any) -> str | None:
    """A traceback's last line (the exception itself) for a table cell."""
    lines = [line for line in str(text).strip().splitlines() if line.strip()]
    return first_line(lines[-1]) if lines else None


__all__ = ["AiderImporter"]
