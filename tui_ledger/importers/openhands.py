"""OpenHands evaluation output: `output.jsonl`, one attempt per line (legacy and new harness).

Layout: `evaluation_outputs/outputs/<dataset>/<AgentClass>/<model>_maxiter_<N>_N_<v>-run_<k>/`
with `output.jsonl` (plus `output_errors.jsonl` in the new harness). With the new harness's
critic loop, every try is in `output.critic_attempt_<n>.jsonl` and `output.jsonl` repeats one of
them per instance, so the attempt files are read INSTEAD of `output.jsonl` (as OpenHands' own
`report_costs.py` counts real spend), and an instance's tries are ONE attempt: the critic's
retries are the workflow's repair work, so their usage and cost are summed and the outcome is
that of the last try (the one the evaluation graded). A folder of runs is read run by run;
run = its folder.

Decisions (docs/IMPORTERS.md has the full table):
- workflow = `<metadata.agent_class>__<model>` (the new harness has no agent class: `openhands`);
  model = `metadata.llm_config.model` (legacy) or `metadata.llm.model` (new); task = instance_id.
- outcome from the evaluation report of the line (`report`, else `test_result.report`), else from
  a SWE-bench run report beside the output (`output.report.json`, `report.json`); none: ungraded.
  A top-level `error` (the agent crashed or gave up) makes the attempt an `error`, unless the
  report resolved it anyway.
- usage from `metrics.accumulated_token_usage`: OpenHands copies litellm's `prompt_tokens`, which
  includes cache reads and (Anthropic) writes, so input_tokens = prompt - reads - writes. Lines
  without it (versions before token accounting) have missing usage. `accumulated_cost` 0.0 with
  tokens spent is an unpriced model: cost missing, not $0.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Mapping
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
    build_frame,
    counted,
    first_line,
    json_lines,
    json_object,
    peek_text,
    real_number,
    text_or_none,
    whole_number,
)
from tui_ledger.importers._template import detect, input_files
from tui_ledger.importers.recorded import only_at_run_level, priced
from tui_ledger.importers.swebench import Verdict, read_reports
from tui_ledger.importers.swebench_records import Recorded as _Recorded
from tui_ledger.importers.swebench_records import report_ids

OUTPUT_FILE = "output.jsonl"
ERRORS_FILE = "output_errors.jsonl"
RUN_REPORTS = ("output.report.json", "report.json")
_CRITIC_FILE = re.compile(r"^output\.critic_attempt_(\d+)\.jsonl$")
_HINT = re.compile(r'"instance_id"\s*:')
_RESULT_HINT = re.compile(r'"(test_result|metrics|metadata)"\s*:')
_DETECT_DEPTH = 3

CONVENTIONS = (
    "OpenHands metrics.accumulated_token_usage.prompt_tokens is litellm's prompt_tokens summed "
    "(cache reads and Anthropic cache writes included): input_tokens = prompt_tokens - "
    "cache_read_tokens - cache_write_tokens, tokens = prompt_tokens + completion_tokens",
    "OpenHands accumulated_cost 0.0 with tokens spent is an unpriced model: cost missing",
)

_SCHEMA: dict[str, pl.DataType] = {
    **HARNESS_SCHEMA,
    "report_verdict": pl.String(),
    "reasoning_tokens": pl.Int64(),
    "attempt": pl.Int64(),
    "critic_tries": pl.Int64(),
    "agent_class": pl.String(),
    "source": pl.String(),
    "line": pl.Int64(),
}
_OPTIONAL = (
    "critic_tries",
    "reasoning_tokens",
    "timestamp",
    "duration_s",
    "error_message",
    "cache_write_tokens",
)


@dataclass(frozen=True)
class OpenHandsImporter(ImporterBase):
    """OpenHands `output.jsonl` files, or folders of evaluation runs holding them."""

    name: str = "openhands"

    def matches(self, path: Path) -> bool:
        """An OpenHands output JSONL, or a folder with one at most three levels down."""
        return detect(path, _looks_like_output, _output_here, _DETECT_DEPTH)

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported:
        """Every line of the run's output files, one attempt each."""
        rows = _Rows()
        files = input_files(path, _run_files, "holds no OpenHands output.jsonl")
        for folder, run in itertools.groupby(files, key=lambda file: file.parent):
            rows.add_run(folder, list(run))
        frame = build_frame(rows.columns, _SCHEMA, drop_if_all_null=_OPTIONAL)
        return Imported(frame, CONVENTIONS, tuple(rows.notes()))


def _output_files(names: list[str]) -> list[str]:
    """The files of one run folder to read: the critic attempts if any, else the outputs."""
    critic = sorted(
        (int(match.group(1)), name) for name in names if (match := _CRITIC_FILE.match(name))
    )
    if critic:
        return [name for _, name in critic]
    return [name for name in (OUTPUT_FILE, ERRORS_FILE) if name in names]


def _looks_like_output(path: Path) -> bool:
    if path.suffix != ".jsonl" or not path.name.startswith("output"):
        return False
    head = peek_text(path)
    return (
        head.lstrip().startswith("{")
        and _HINT.search(head) is not None
        and _RESULT_HINT.search(head) is not None
    )


def _output_here(folder: Path, names: list[str]) -> bool | None:
    for name in _output_files(names):
        return _looks_like_output(folder / name)
    return None


def _run_files(root: Path) -> list[Path]:
    """The output files of every run folder below `root`, run by run."""
    found = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        chosen = _output_files(files)
        if chosen:
            found += [Path(folder) / name for name in chosen]
            subfolders[:] = [n for n in subfolders if n not in ("llm_completions", "infer_logs")]
    return found


class _Rows:
    """Column lists being filled, one output line at a time."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in _SCHEMA}
        self.ungraded: list[tuple[int, Path]] = []
        self.no_usage = 0
        self.report_only: list[tuple[str, list[str]]] = []

    def add_run(self, folder: Path, files: list[Path]) -> None:
        reports = [folder / name for name in RUN_REPORTS if (folder / name).is_file()]
        verdicts = read_reports(reports) if reports else {}
        rows = [
            self.row(document, file, number, folder, verdicts)
            for file in files
            for number, document in json_lines(file)
        ]
        if any(_CRITIC_FILE.match(file.name) for file in files):
            rows = _merge_tries(rows)
        for row in rows:
            if row["tokens"] is None:
                self.no_usage += 1
            for name in self.columns:
                self.columns[name].append(row.get(name))
        ungraded = sum(row["status"] == "unset" for row in rows)
        if ungraded:
            self.ungraded.append((ungraded, folder))
        self._report_only(folder, rows, reports, verdicts)

    def _report_only(
        self,
        folder: Path,
        rows: list[dict[str, Any]],
        reports: list[Path],
        verdicts: Mapping[str, Verdict],
    ) -> None:
        """The instances the run's evaluation report names with no output line, once each:
        their verdict from the report, their usage missing."""
        named = report_ids(reports)
        for instance, graded in verdicts.items():
            named.setdefault(instance, _Recorded(graded.file))
        seen = {row["task"] for row in rows}
        missing = sorted(set(named) - seen)
        if not missing:
            return
        workflows = {(row["workflow"], row["model"], row["agent_class"]) for row in rows}
        workflow, model, agent_class = (
            workflows.pop() if len(workflows) == 1 else (folder.name, None, None)
        )
        for instance in missing:
            verdict = verdicts.get(instance)
            row = {
                "workflow": workflow,
                "task": instance,
                "passed": None if verdict is None else verdict.passed,
                "status": "unset" if verdict is None else verdict.status,
                "model": model,
                "run": folder.name,
                "report_verdict": None if verdict is None else verdict.verdict,
                "agent_class": agent_class,
                "source": str(named[instance].file),
                "line": 1,
            }
            for name in self.columns:
                self.columns[name].append(row.get(name))
        files = sorted({str(named[instance].file) for instance in missing})
        self.report_only.append((files[0] if len(files) == 1 else str(folder), missing))

    def row(
        self,
        line: Any,
        file: Path,
        number: int,
        folder: Path,
        verdicts: Mapping[str, Verdict],
    ) -> dict[str, Any]:
        """The row of one output line."""
        where = f"line {number}"
        if not isinstance(line, dict):
            raise ImporterError.at(file, "is not an OpenHands output record", record=where)
        instance = line.get("instance_id")
        if not isinstance(instance, str) or not instance:
            raise ImporterError.at(file, f"instance_id is {instance!r}", record=where)
        metadata = json_object(line, "metadata", path=file, record=where)
        agent_class = text_or_none(metadata.get("agent_class"))
        llm = metadata.get("llm_config") or metadata.get("llm") or {}
        model = text_or_none(llm.get("model")) if isinstance(llm, dict) else None
        metrics = json_object(line, "metrics", path=file, record=where)
        usage = _usage(metrics, file, where)
        model = model or text_or_none(
            json_object(metrics, "accumulated_token_usage", path=file, record=where).get("model")
        )
        error = line.get("error")
        if error is not None and not isinstance(error, str):
            raise ImporterError.at(file, f"error is {error!r}, not a message", record=where)
        passed, status, verdict = _outcome(line, instance, verdicts, file, where)
        if error:
            status = "passed" if passed else "error"
        attempt = whole_number(line.get("attempt"), path=file, record=where, field="attempt")
        agent = agent_class or "openhands"
        return {
            "workflow": f"{agent}__{model}" if model else agent,
            "task": instance,
            "passed": passed,
            "status": status,
            **usage,
            "model": model,
            "run": folder.name,
            "stop_reason": "agent_error" if error else None,
            "error_message": first_line(error) if error else None,
            "report_verdict": verdict,
            "attempt": attempt,
            "agent_class": agent_class,
            "source": str(file),
            "line": number,
        }

    def notes(self) -> list[str]:
        notes = [
            f"{counted(count, 'attempt')} in {folder} with no evaluation report: ungraded; "
            "run the SWE-bench evaluation or join outcomes with --outcomes"
            for count, folder in self.ungraded
        ]
        notes += [only_at_run_level(len(names), where, names) for where, names in self.report_only]
        if self.no_usage:
            notes.append(
                f"{counted(self.no_usage, 'attempt')} with no token usage in metrics "
                "(older OpenHands versions): usage missing"
            )
        return notes


_SUMMED = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "tokens",
    "reasoning_tokens",
    "cost",
)


def _merge_tries(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per instance from its critic tries: sums of usage (unknown if any try's is),
    the last try's outcome, source, line and attempt number; `critic_tries` counts them."""
    by_instance: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_instance.setdefault(row["task"], []).append(row)
    merged = []
    for tries in by_instance.values():
        tries.sort(key=lambda row: row["attempt"] or 0)
        row = dict(tries[-1])
        for name in _SUMMED:
            values = [attempt[name] for attempt in tries]
            row[name] = None if any(value is None for value in values) else sum(values)
        row["critic_tries"] = len(tries)
        merged.append(row)
    return merged


def _outcome(
    line: Mapping[str, Any],
    instance: str,
    verdicts: Mapping[str, Verdict],
    file: Path,
    where: str,
) -> tuple[bool | None, str, str | None]:
    """(passed, status, verdict word) from the line's report, else the run report beside it."""
    report = line.get("report")
    if report is None:
        test_result = line.get("test_result")
        report = test_result.get("report") if isinstance(test_result, dict) else None
    if report is not None:
        if not isinstance(report, dict):
            raise ImporterError.at(file, f"report is {report!r}, not an object", record=where)
        for key in ("resolved", "error_eval", "test_timeout", "empty_generation"):
            value = report.get(key)
            if value is not None and not isinstance(value, bool):
                raise ImporterError.at(
                    file, f"report.{key} is {value!r}, not true or false", record=where
                )
        if report.get("resolved"):
            return True, "passed", "resolved"
        if report.get("error_eval"):
            return None, "error", "error_eval"
        if report.get("test_timeout"):
            return False, "timeout", "test_timeout"
        if report.get("empty_generation"):
            return False, "failed", "empty_patch"
        if "resolved" in report:
            return False, "failed", "unresolved"
    verdict = verdicts.get(instance)
    if verdict is not None:
        return verdict.passed, verdict.status, verdict.verdict
    return None, "unset", None


def _usage(metrics: Mapping[str, Any], file: Path, where: str) -> dict[str, Any]:
    usage = json_object(metrics, "accumulated_token_usage", path=file, record=where)

    def count(field: str) -> int | None:
        return whole_number(
            usage.get(field), path=file, record=where, field=f"accumulated_token_usage.{field}"
        )

    prompt, completion = count("prompt_tokens"), count("completion_tokens")
    reads, writes = count("cache_read_tokens") or 0, count("cache_write_tokens") or 0
    cost = real_number(
        metrics.get("accumulated_cost"), path=file, record=where, field="accumulated_cost"
    )
    if prompt is None or completion is None:
        return {
            "input_tokens": None,
            "cached_input_tokens": None,
            "cache_write_tokens": None,
            "output_tokens": None,
            "tokens": None,
            "reasoning_tokens": None,
            "cost": priced(cost, None),
        }
    cost = priced(cost, prompt + completion)  # litellm had no price for the model
    # A prompt smaller than its cache counts left the cache out (not litellm's convention).
    uncached = prompt - reads - writes if prompt >= reads + writes else prompt
    return {
        "input_tokens": uncached,
        "cached_input_tokens": reads,
        "cache_write_tokens": writes,
        "output_tokens": completion,
        "tokens": uncached + reads + writes + completion,
        "reasoning_tokens": count("reasoning_tokens"),
        "cost": cost,
    }


__all__ = ["OpenHandsImporter"]
