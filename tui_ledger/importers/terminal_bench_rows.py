"""Terminal-Bench trial records as rows: one record (a trial's results.json, or one entry of
a run file's `results`) becomes one attempt. importers/terminal_bench.py finds and reads the files.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from tui_ledger.importers._base import (
    TIMESTAMP_DTYPE,
    ImporterError,
    build_frame,
    counted,
    load_json,
    parse_timestamp,
    seconds_between,
    whole_number,
)
from tui_ledger.importers.recorded import recorded_only_at_run_level
from tui_ledger.schema import STATUS_WORDS, normalise_word

RESULTS_FILE = "results.json"
RUN_METADATA_FILE = "run_metadata.json"

# Terminal-Bench FailureMode values outside the loader's status vocabulary, and the word kept for
# them. The raw value always stays in `stop_reason`.
FAILURE_MODE_STATUS: dict[str, str] = {
    "none": "unset",  # no failure recorded: the verdict is is_resolved alone
    "unknown": "error",
    "fatal_llm_parse_error": "parse_error",
    "context_length_exceeded": "failed",  # the agent ran out of context: its own failure
}

_TRIAL_KEYS = ("task_id", "trial_name")

_SCHEMA: dict[str, pl.DataType] = {
    "workflow": pl.String(),
    "task": pl.String(),
    "passed": pl.Boolean(),
    "status": pl.String(),
    "input_tokens": pl.Int64(),
    "output_tokens": pl.Int64(),
    "tokens": pl.Int64(),
    "model": pl.String(),
    "run": pl.String(),
    "timestamp": TIMESTAMP_DTYPE,
    "duration_s": pl.Float64(),
    "stop_reason": pl.String(),
    "trial_label": pl.String(),
    "trial_uuid": pl.String(),
    "tests_passed": pl.Int64(),
    "tests_total": pl.Int64(),
    "agent_name": pl.String(),
    "agent_duration_s": pl.Float64(),
    "test_duration_s": pl.Float64(),
    "trial_ended_at": TIMESTAMP_DTYPE,
    "agent_started_at": TIMESTAMP_DTYPE,
    "agent_ended_at": TIMESTAMP_DTYPE,
    "test_started_at": TIMESTAMP_DTYPE,
    "test_ended_at": TIMESTAMP_DTYPE,
    "recording_path": pl.String(),
    "source": pl.String(),
    "line": pl.Int64(),
}
# Fields only some runs carry (run_metadata.json): no column at all when none does.
_OPTIONAL = ("model", "agent_name")


def is_trial(document: Any) -> bool:
    return isinstance(document, dict) and any(key in document for key in _TRIAL_KEYS)


class TrialRows:
    """Column lists being filled, one trial record at a time."""

    def __init__(self, workflow: str) -> None:
        self.workflow = workflow
        self.columns: dict[str, list[Any]] = {name: [] for name in _SCHEMA}
        self.count = 0
        self.repeated = 0  # trial records read a second time (the same trial), left out
        self.per_workflow: dict[str, int] = {}  # workflow -> its attempts
        self.run_only: dict[str, int] = {}  # workflow -> attempts known only from run files
        self.run_only_names: list[str] = []  # the first few of them, by trial name
        self._seen: set[tuple[str, str, str]] = set()
        self._metadata: dict[Path, Mapping[str, Any]] = {}

    def add_run_file(
        self,
        document: Mapping[str, Any],
        *,
        source: Path,
        run_folder: Path,
        run_is_folder: bool = True,
        run: str | None = None,
        workflow: str | None = None,
        unkeyed: bool = True,
        look_beside: bool = False,
    ) -> None:
        """Every trial of a run file that no trial file read before holds; `run` names the run
        (default: the folder holding it, or the run recorded when `run_is_folder` is False, as
        for the trial files beside it). A record without `id` or `trial_name` cannot be matched
        to its trial file: read only when `unkeyed` (no trial file below holds its run).

        `look_beside`: the run file is read alone, its trial files not; a trial whose trial
        file sits in its run folder (`<task>/<trial_name>/results.json`) is not said to be
        recorded only at run level."""
        for index, record in enumerate(document["results"], start=1):
            if not is_trial(record):
                raise ImporterError.at(
                    source, "is not a Terminal-Bench trial (no task_id)", record=f"record {index}"
                )
            if not unkeyed and _trial_key(record) is None:
                continue
            kept = look_beside and _trial_file_beside(run_folder, record).is_file()
            self.add(
                record,
                source=source,
                line=index,
                run_folder=run_folder,
                run_is_folder=run_is_folder,
                run=run,
                where=f"record {index}",
                workflow=workflow,
                from_run_file=True,
                only_here=not kept,
            )

    def add(
        self,
        record: Mapping[str, Any],
        *,
        source: Path,
        line: int,
        run_folder: Path,
        run_is_folder: bool = True,
        run: str | None = None,
        where: str | None = None,
        workflow: str | None = None,
        from_run_file: bool = False,
        only_here: bool = True,
    ) -> None:
        """One trial record; `where` names it inside a many-trial file.

        `run_is_folder` is False when no run folder sits between the root and the task folders
        (submissions often flatten them): the run id recorded in `recording_path` names the run
        (else the `run_id` in the folder's `run_metadata.json`).
        `run`, when given, names it whatever the record says (a run file saved under its id).
        A trial read a second time (the same `id` and `trial_name` in the same workflow) is left
        out: from a run file (`from_run_file`, which repeats its trials) silently, from a trial
        file (a copy of a run folder kept inside another) counted in `repeated`. A trial first
        read from a run file is counted in `run_only` (unless not `only_here`): its trial
        folder was never written.
        """
        task = record.get("task_id")
        if not isinstance(task, str) or not task:
            raise ImporterError.at(source, "has no task_id", record=where)
        name = self.workflow if workflow is None else workflow
        trial = _trial_key(record)
        if trial is not None:
            key = (name, *trial)
            if key in self._seen:
                self.repeated += not from_run_file
                return
            self._seen.add(key)
        passed = record.get("is_resolved")
        if passed is not None and not isinstance(passed, bool):
            raise ImporterError.at(
                source, f"is_resolved is {passed!r}, not true, false or null", record=where
            )
        failure_mode = record.get("failure_mode", "unset")
        if failure_mode is not None and not isinstance(failure_mode, str):
            raise ImporterError.at(source, f"failure_mode is {failure_mode!r}", record=where)

        def count(field: str) -> int | None:
            return whole_number(record.get(field), path=source, record=where, field=field)

        def moment(field: str) -> Any:
            return parse_timestamp(record.get(field), path=source, record=where, field=field)

        input_tokens = count("total_input_tokens")
        output_tokens = count("total_output_tokens")
        started, ended = moment("trial_started_at"), moment("trial_ended_at")
        agent_started, agent_ended = moment("agent_started_at"), moment("agent_ended_at")
        test_started, test_ended = moment("test_started_at"), moment("test_ended_at")
        tests = record.get("parser_results")
        metadata = self._run_metadata(run_folder)

        values: dict[str, Any] = {
            "workflow": name,
            "task": task,
            "passed": passed,
            "status": _status(failure_mode),
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "tokens": None
            if input_tokens is None or output_tokens is None
            else input_tokens + output_tokens,
            "model": _text(metadata.get("model_name")),
            "run": run
            or (None if run_is_folder else _flat_run(record, task, metadata))
            or run_folder.name,
            "timestamp": started,
            "duration_s": seconds_between(started, ended),
            "stop_reason": failure_mode,
            "trial_label": _text(record.get("trial_name")),
            "trial_uuid": _text(record.get("id", record.get("uuid"))),
            "tests_passed": sum(value == "passed" for value in tests.values())
            if isinstance(tests, dict)
            else None,
            "tests_total": len(tests) if isinstance(tests, dict) else None,
            "agent_name": _text(metadata.get("agent_name")),
            "agent_duration_s": seconds_between(agent_started, agent_ended),
            "test_duration_s": seconds_between(test_started, test_ended),
            "trial_ended_at": ended,
            "agent_started_at": agent_started,
            "agent_ended_at": agent_ended,
            "test_started_at": test_started,
            "test_ended_at": test_ended,
            "recording_path": _text(record.get("recording_path")),
            "source": str(source),
            "line": line,
        }
        for column, value in values.items():
            self.columns[column].append(value)
        self.count += 1
        self.per_workflow[name] = self.per_workflow.get(name, 0) + 1
        if from_run_file and only_here:
            self.run_only[name] = self.run_only.get(name, 0) + 1
            if len(self.run_only_names) < 3:
                self.run_only_names.append(str(record.get("trial_name") or task))

    def _run_metadata(self, run_folder: Path) -> Mapping[str, Any]:
        """The run's run_metadata.json (model and agent names), read once per run folder."""
        if run_folder not in self._metadata:
            file = run_folder / RUN_METADATA_FILE
            metadata = load_json(file) if file.is_file() else {}
            self._metadata[run_folder] = metadata if isinstance(metadata, dict) else {}
        return self._metadata[run_folder]

    def frame(self) -> pl.DataFrame:
        return build_frame(self.columns, _SCHEMA, drop_if_all_null=_OPTIONAL)

    def warnings(self) -> tuple[str, ...]:
        said = recorded_only_at_run_level(
            self.run_only, self.per_workflow, examples=self.run_only_names
        )
        if not self.repeated:
            return said
        return (
            *said,
            f"{counted(self.repeated, 'Terminal-Bench trial')} found a second time (the same "
            "id and trial_name in another results file, as in a copy of a run folder kept "
            "inside another): each trial counted once",
        )


def _status(failure_mode: str | None) -> str | None:
    """failure_mode as the status column: kept when the loader knows it, else its mapped word.

    A value neither knows passes through unchanged, so the loader names it in its error.
    """
    if failure_mode is None:
        return None
    if normalise_word(failure_mode) in STATUS_WORDS:
        return failure_mode
    return FAILURE_MODE_STATUS.get(normalise_word(failure_mode), failure_mode)


def _trial_file_beside(run_folder: Path, record: Mapping[str, Any]) -> Path:
    """Where `tb run` writes a trial's own file in its run folder."""
    return run_folder / str(record.get("task_id")) / str(record.get("trial_name")) / RESULTS_FILE


def _trial_key(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """A trial's identity, its `id` (`uuid` in some submissions) and `trial_name`, if it has
    both."""
    trial_id, trial_name = record.get("id", record.get("uuid")), record.get("trial_name")
    if isinstance(trial_id, str) and trial_id and isinstance(trial_name, str):
        return trial_id, trial_name
    return None


def _flat_run(record: Mapping[str, Any], task: str, metadata: Mapping[str, Any]) -> str | None:
    """The run of a trial with no run folder of its own: the run id its `recording_path`
    records, else (an errored trial recorded none) the `run_id` of the run's metadata."""
    return recorded_run(record, task) or _text(metadata.get("run_id"))


def recorded_run(record: Mapping[str, Any], task: str) -> str | None:
    """The run id in `recording_path` ("<run>/<task>/<trial>/sessions/agent.cast"), if any."""
    recording = record.get("recording_path")
    if not isinstance(recording, str):
        return None
    parts = recording.replace("\\", "/").split("/")
    if len(parts) >= 3 and parts[1] == task and parts[0] not in ("", ".", ".."):
        return parts[0]
    return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
