"""Harbor job folders (the Terminal-Bench 2.0 harness): one attempt per trial, each counted once.

Layout: `jobs/<job>/<trial>/result.json`, where `<trial>` is `<task[:32]>__<7 random>`; the
job folder has a `result.json` of its own (a JobResult: `n_total_trials`, `stats`) that is NOT a
trial. A folder of jobs, one job, one trial folder, or one trial `result.json` are read alike; a
trial folder's own logs (`agent/`, `verifier/`, `steps/`) are not walked.

The attempts: every trial `result.json`; every trial folder that never wrote one (its
`config.json`: an unfinished attempt, outcome error, usage from its trajectory); every trial the
job's `result.json` names whose folder is gone (harbor_job.py reads those two records).

Decisions (docs/IMPORTERS.md has the full table):
- workflow = `<agent_info.name>__<provider>/<model>` (Harbor's own grouping key, less the
  dataset); task = `task_name`; run = the job folder holding the trial folder.
- usage from `agent_result`, or, for a multi-step trial, summed over `step_results[].agent_result`
  (Harbor's `compute_token_cost_totals`). `n_input_tokens` includes cache reads, so
  input_tokens = n_input - n_cache and cached_input_tokens = n_cache; tokens = n_input + n_output.
  Harbor has no cache-write field: writes stay inside input_tokens where an agent counts them.
- outcome from `verifier_result.rewards` (the `reward` key, or the only key) and the exception
  types, classified as Harbor's `error_policy.py` does: see `_outcome`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
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
    json_object,
    load_json,
    parse_timestamp,
    peek_text,
    real_number,
    seconds_between,
    text_or_none,
    whole_number,
)
from tui_ledger.importers._template import detect
from tui_ledger.importers.atif_usage import AtifError
from tui_ledger.importers.atif_usage import usage as trajectory_usage
from tui_ledger.importers.harbor_job import (
    CONFIG_FILE,
    TASK_PREFIX,
    JobListing,
    Unfinished,
    job_listing,
    looks_like_trial_config,
    same_model,
    task_of,
    unfinished,
)
from tui_ledger.importers.harbor_verdict import (
    EXCEPTION_POLICY,
    exceptions_of,
    outcome,
    reward_of,
    valid_flag,
)
from tui_ledger.importers.recorded import listed, only_at_run_level, priced

RESULT_FILE = "result.json"
TRAJECTORY_FILE = Path("agent") / "trajectory.json"

# Detection: jobs/<job>/<trial>/result.json is at most 2 levels below a folder of jobs.
_DETECT_DEPTH = 2
_TRIAL_HINT = re.compile(r'"trial_name"\s*:')
_TASK_HINT = re.compile(r'"task_name"\s*:')
_JOB_HINT = re.compile(r'"n_total_trials"\s*:')

CONVENTIONS = (
    "Harbor n_input_tokens includes cache reads (AgentContext: 'including cache'): "
    "input_tokens = n_input_tokens - n_cache_tokens, cached_input_tokens = n_cache_tokens, "
    "tokens = n_input_tokens + n_output_tokens",
    "Harbor records no cache-write count: writes stay inside input_tokens where an agent counts "
    "them (Harbor's Claude Code agent does)",
    "a multi-step trial's usage and cost are summed over its steps (compute_token_cost_totals)",
    "a trial whose result.json records no usage (or only zeros) takes it from its "
    "agent/trajectory.json (ATIF: final_metrics, else its steps' metrics): input = prompt - "
    "cached tokens, cache writes from metrics.extra.cache_creation_input_tokens",
)

_SCHEMA: dict[str, pl.DataType] = {
    **HARNESS_SCHEMA,
    "reward": pl.Float64(),
    "reward_valid": pl.Boolean(),
    "exception_type": pl.String(),
    "agent_name": pl.String(),
    "agent_version": pl.String(),
    "models_used": pl.String(),
    "dataset": pl.String(),
    "trial_label": pl.String(),
    "trial_uuid": pl.String(),
    "task_checksum": pl.String(),
    "steps": pl.Int64(),
    "source": pl.String(),
    "line": pl.Int64(),
}
_USAGE = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "tokens",
    "cost",
    "models_used",
)
_OPTIONAL = ("cache_write_tokens", "models_used", "dataset", "steps", "error_message")


@dataclass(frozen=True)
class HarborImporter(ImporterBase):
    """Harbor trials: a folder of jobs, a job folder, a trial folder or a trial `result.json`."""

    name: str = "harbor"

    def matches(self, path: Path) -> bool:
        """A trial `result.json`, or a folder with one (or a job's) within two levels."""
        return detect(path, _looks_like_trial_file, _result_here, _DETECT_DEPTH)

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported:
        """Every trial below `path` (or the one trial it is), one row each."""
        rows = _Rows((options or ImportOptions()).threshold(), path)
        if path.is_dir():
            jobs: list[JobListing] = []
            for kind, file, document in _walk_trials(path):
                if kind == "trial":
                    rows.add(document, file)
                elif kind == "unfinished":
                    rows.add_unfinished(unfinished(file))
                else:
                    try:
                        jobs.append(job_listing(document, file))
                    except ImporterError as error:  # a secondary record: never stops the load
                        rows.unread_jobs.append(str(error))
            for job in jobs:
                rows.add_listed(job)
            if not rows.count:
                raise ImporterError.at(path, "holds no Harbor trial result.json")
            rows.resolve_workflows()
        elif path.is_file() and _unfinished_config(path):
            rows.add_unfinished(unfinished(path))
            rows.resolve_workflows()
        elif path.is_file():
            document = load_json(path)
            if _is_job(document):
                raise ImporterError.at(
                    path, "is a Harbor job result.json, not a trial; open the job folder"
                )
            if not _is_trial(document):
                raise ImporterError.at(path, "is not a Harbor trial result.json (no trial_name)")
            rows.add(document, path)
        else:
            raise ImporterError.at(path, "does not exist")
        return Imported(
            build_frame(rows.columns, _SCHEMA, drop_if_all_null=_OPTIONAL),
            CONVENTIONS,
            rows.warnings(),
        )


def _looks_like_trial(path: Path) -> bool:
    head = peek_text(path)
    return (
        head.lstrip().startswith("{")
        and _TRIAL_HINT.search(head) is not None
        and _TASK_HINT.search(head) is not None
    )


def _unfinished_config(path: Path) -> bool:
    """A trial's config.json with no result.json beside it (the trial never finished)."""
    return (
        path.name == CONFIG_FILE
        and looks_like_trial_config(path)
        and not (path.parent / RESULT_FILE).exists()
    )


def _looks_like_job(path: Path) -> bool:
    head = peek_text(path)
    return head.lstrip().startswith("{") and _JOB_HINT.search(head) is not None


def _looks_like_trial_file(path: Path) -> bool:
    if path.name == CONFIG_FILE:  # a trial that never wrote its result.json
        return _unfinished_config(path)
    return path.name == RESULT_FILE and _looks_like_trial(path)


def _result_here(folder: Path, names: list[str]) -> bool | None:
    """A trial (or job) result.json decides; a trial's config.json alone is a trial."""
    if RESULT_FILE in names:
        candidate = folder / RESULT_FILE
        return _looks_like_trial(candidate) or _looks_like_job(candidate)
    if CONFIG_FILE in names and looks_like_trial_config(folder / CONFIG_FILE):
        return True
    return None


def _is_trial(document: Any) -> bool:
    return isinstance(document, dict) and "trial_name" in document and "task_name" in document


def _is_job(document: Any) -> bool:
    return isinstance(document, dict) and ("n_total_trials" in document or "stats" in document)


def _walk_trials(root: Path) -> Iterator[tuple[str, Path, dict[str, Any]]]:
    """(kind, file, document) below `root`, in path order: every trial result.json ("trial"),
    every job result.json ("job"), and the config.json of every trial folder that never wrote
    a result.json ("unfinished", its document {} : `harbor_job.unfinished` reads it).

    A trial folder's logs are not walked.
    """
    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        subfolders[:] = [name for name in subfolders if not name.startswith(".")]
        if RESULT_FILE not in files:
            config = Path(folder) / CONFIG_FILE
            if CONFIG_FILE in files and looks_like_trial_config(config):
                subfolders[:] = []
                yield "unfinished", config, {}
            continue
        file = Path(folder) / RESULT_FILE
        document = load_json(file)
        if _is_trial(document):
            subfolders[:] = []
            yield "trial", file, document
        elif _is_job(document):
            yield "job", file, document
        else:
            raise ImporterError.at(file, "is not a Harbor trial or job result.json (no trial_name)")


class _Rows:
    """Column lists being filled, one trial at a time, and the counts behind the warnings."""

    def __init__(self, threshold: float, root: Path) -> None:
        self.threshold = threshold
        self.root = root
        # The trial folders read, by job folder; the unfinished trials and those known only
        # from a job's result.json; jobs whose result.json lists fewer trials than they hold.
        self.folders: dict[Path, set[str]] = {}
        self.unfinished: list[str] = []
        self.listed_only: list[tuple[str, list[str]]] = []
        self.unlisted: list[tuple[str, int, int]] = []
        self.pending: list[tuple[int, str, str | None]] = []
        self.unread_jobs: list[str] = []
        self.columns: dict[str, list[Any]] = {name: [] for name in _SCHEMA}
        self.count = 0
        self.fractional = 0
        self.cache_above_input = 0
        self.never_graded = 0
        self.from_trajectory = 0
        self.trajectory_unread: list[str] = []

    def add(self, trial: Mapping[str, Any], file: Path) -> None:
        task = trial.get("task_name")
        if not isinstance(task, str) or not task:
            raise ImporterError.at(file, f"task_name is {task!r}, not a task name")
        agent = json_object(trial, "agent_info", path=file)
        agent_name = text_or_none(agent.get("name")) or "unknown agent"
        model = _model(json_object(agent, "model_info", path=file, field="agent_info.model_info"))
        steps = trial.get("step_results")
        if steps is not None and not isinstance(steps, list):
            raise ImporterError.at(file, "step_results is not a list")
        usage = self._usage(trial, steps or [], file)
        if not steps and _usage_lost(usage):
            usage = self._trajectory_usage(usage, file)
        reward = reward_of(trial.get("verifier_result"), file)
        exceptions = exceptions_of(trial, steps or [], file)
        passed, status, graded = outcome(reward, exceptions, self.threshold)
        if reward is not None and 0 < reward < 1 and self.threshold >= 1:
            self.fractional += 1
        if not graded:
            self.never_graded += 1
        started = parse_timestamp(
            trial.get("started_at"), path=file, record=None, field="started_at"
        )
        finished = parse_timestamp(
            trial.get("finished_at"), path=file, record=None, field="finished_at"
        )
        first = exceptions[0] if exceptions else None
        values: dict[str, Any] = {
            "workflow": f"{agent_name}__{model}" if model else agent_name,
            "task": task,
            "passed": passed,
            "status": status,
            **usage,
            "model": model,
            "run": file.parent.parent.name or None,
            "timestamp": started,
            "duration_s": seconds_between(started, finished),
            "stop_reason": first["exception_type"] if first else None,
            "error_message": first_line(first.get("exception_message")) if first else None,
            "reward": reward,
            "reward_valid": valid_flag(trial.get("reward_valid"), file),
            "exception_type": ", ".join(item["exception_type"] for item in exceptions) or None,
            "agent_name": agent_name,
            "agent_version": text_or_none(agent.get("version")),
            "dataset": text_or_none(trial.get("source")),
            "trial_label": text_or_none(trial.get("trial_name")),
            "trial_uuid": text_or_none(trial.get("id")),
            "task_checksum": text_or_none(trial.get("task_checksum")),
            "steps": len(steps) if steps else None,
            "source": str(file),
            "line": 1,
        }
        self._append(values)
        self.folders.setdefault(file.parent.parent, set()).add(file.parent.name)

    def _append(self, values: Mapping[str, Any]) -> None:
        for name, column in self.columns.items():
            column.append(values.get(name))
        self.count += 1

    def _shown(self, path: Path) -> str:
        """`path` below the folder read (as the load report names sources)."""
        try:
            return path.relative_to(self.root).as_posix() or path.name
        except ValueError:
            return str(path)

    def add_unfinished(self, trial: Unfinished) -> None:
        """A trial folder that never wrote result.json: an attempt that did not finish."""
        usage = self._trajectory_usage(dict.fromkeys(_USAGE), trial.file, lost=False)
        self.unfinished.append(self._shown(trial.folder))
        self.pending.append((self.count, trial.agent_name, trial.model))
        self._append(
            {
                "workflow": f"{trial.agent_name}__{trial.model}" if trial.model else None,
                "task": trial.task,
                "status": "error",
                **usage,
                "model": trial.model,
                "run": trial.folder.parent.name or None,
                "stop_reason": "unfinished",
                "error_message": trial.exception or "the trial never wrote its result.json",
                "agent_name": trial.agent_name,
                "trial_label": trial.trial_name,
                "source": str(trial.file),
                "line": 1,
            }
        )
        self.folders.setdefault(trial.folder.parent, set()).add(trial.folder.name)

    def add_listed(self, job: JobListing) -> None:
        """The trials `job` lists whose folder is gone; a warning if it lists fewer than held."""
        held = self.folders.get(job.file.parent, set())
        if len(held) > job.counted:
            self.unlisted.append((self._shown(job.file), job.counted, len(held)))
        missing = [name for name in job.trials if name not in held]
        if not missing:
            return
        self.listed_only.append((self._shown(job.file), missing))
        tasks = {value for value in self.columns["task"] if isinstance(value, str)}
        for name in missing:
            trial = job.trials[name]
            exceptions = [
                {
                    "exception_type": kind,
                    "has_valid_reward": EXCEPTION_POLICY.get(kind, (True, True))[1],
                }
                for kind in trial.exceptions
            ]
            passed, status, graded = outcome(trial.reward, exceptions, self.threshold)
            if not graded:
                self.never_graded += 1
            if trial.reward is not None and 0 < trial.reward < 1 and self.threshold >= 1:
                self.fractional += 1
            task = task_of(name)
            if len(task) == TASK_PREFIX:
                whole = {known for known in tasks if known.startswith(task)}
                task = whole.pop() if len(whole) == 1 else task
            self.pending.append((self.count, trial.agent_name, trial.model))
            self._append(
                {
                    "workflow": None,
                    "task": task,
                    "passed": passed,
                    "status": status,
                    "model": trial.model,
                    "run": job.file.parent.name or None,
                    "stop_reason": trial.exceptions[0] if trial.exceptions else None,
                    "reward": trial.reward,
                    "exception_type": ", ".join(trial.exceptions) or None,
                    "agent_name": trial.agent_name,
                    "trial_label": name,
                    "source": str(job.file),
                    "line": 1,
                }
            )

    def resolve_workflows(self) -> None:
        """Name the workflow of a trial read from a config or a job listing as its finished
        siblings' (`agent__provider/model`), where one finished trial shares its agent and model."""
        pending = {index for index, _, _ in self.pending}
        known = {
            (agent, model): workflow
            for index, (agent, model, workflow) in enumerate(
                zip(
                    self.columns["agent_name"],
                    self.columns["model"],
                    self.columns["workflow"],
                    strict=True,
                )
            )
            if index not in pending
        }
        for index, agent, model in self.pending:
            matches = {
                (workflow, recorded)
                for (name, recorded), workflow in known.items()
                if name == agent and same_model(recorded, model)
            }
            if len(matches) == 1:
                workflow, model = matches.pop()
            else:
                workflow = f"{agent}__{model}" if model else agent
            self.columns["workflow"][index] = workflow
            self.columns["model"][index] = model

    def _usage(self, trial: Mapping[str, Any], steps: list[Any], file: Path) -> dict[str, Any]:
        """Token buckets and cost as `TrialResult.compute_token_cost_totals` sums them."""
        contexts: list[tuple[Mapping[str, Any], str]] = []
        if trial.get("agent_result") is not None:
            contexts.append((json_object(trial, "agent_result", path=file), "agent_result"))
        else:
            for index, step in enumerate(steps):
                where = f"step_results[{index}]"
                if not isinstance(step, dict):
                    raise ImporterError.at(file, f"{where} is not an object")
                if step.get("agent_result") is not None:
                    where += ".agent_result"
                    contexts.append(
                        (json_object(step, "agent_result", path=file, field=where), where)
                    )
        totals: dict[str, int | None] = dict.fromkeys(("input", "cache", "output"))
        cost: float | None = None
        models: set[str] = set()
        for context, where in contexts:
            for key, field in (
                ("input", "n_input_tokens"),
                ("cache", "n_cache_tokens"),
                ("output", "n_output_tokens"),
            ):
                count = whole_number(
                    context.get(field), path=file, record=None, field=f"{where}.{field}"
                )
                if count is not None:
                    totals[key] = (totals[key] or 0) + count
            spent = real_number(
                context.get("cost_usd"), path=file, record=None, field=f"{where}.cost_usd"
            )
            if spent is not None:
                cost = (cost or 0.0) + spent
            if isinstance(context.get("model_usage"), dict):
                models.update(context["model_usage"])
        n_input, n_cache, n_output = totals["input"], totals["cache"], totals["output"]
        uncached = n_input
        if n_input is not None and n_cache is not None:
            if n_cache <= n_input:
                uncached = n_input - n_cache
            else:
                # More cache reads than input: this agent left the cache out of its input.
                self.cache_above_input += 1
        total = None
        if uncached is not None and n_output is not None:
            total = uncached + (n_cache or 0) + n_output
        return {
            "input_tokens": uncached,
            "cached_input_tokens": n_cache,
            "cache_write_tokens": None,
            "output_tokens": n_output,
            "tokens": total,
            "cost": priced(cost, None if n_input is None else n_input + (n_output or 0)),
            "models_used": ", ".join(sorted(models)) or None,
        }

    def _trajectory_usage(
        self, usage: dict[str, Any], file: Path, *, lost: bool = True
    ) -> dict[str, Any]:
        """The usage of the trial's agent/trajectory.json where result.json lost it (`lost`)
        or was never written."""
        path = file.parent / TRAJECTORY_FILE
        if not path.is_file():
            return usage
        try:
            counts, cost = trajectory_usage(path)
        except AtifError as error:
            self.trajectory_unread.append(str(error))
            return usage
        if not counts.recorded or not counts.tokens:
            return usage  # the trajectory knows no more than result.json: nothing taken
        self.from_trajectory += lost
        complete = counts.input_tokens is not None and counts.output_tokens is not None
        return {
            **usage,
            "input_tokens": counts.input_tokens,
            "cached_input_tokens": counts.cached_input_tokens,
            "cache_write_tokens": counts.cache_write_tokens,
            "output_tokens": counts.output_tokens,
            "tokens": counts.tokens if complete else None,
            "cost": usage["cost"] or priced(cost, counts.tokens),
        }

    def warnings(self) -> tuple[str, ...]:
        found = []
        if self.unfinished:
            found.append(
                f"{counted(len(self.unfinished), 'trial')} never wrote a result.json "
                f"({listed(self.unfinished)}): each an attempt that did not finish, "
                "outcome error, usage from agent/trajectory.json where it has one"
            )
        for record, names in self.listed_only:
            found.append(only_at_run_level(len(names), record, names))
        if self.unread_jobs:
            found.append(
                f"{counted(len(self.unread_jobs), 'job result.json', 'job result.json files')} "
                f"whose trial list could not be read (first: {self.unread_jobs[0]}): their "
                "trials are counted from their folders alone"
            )
        for record, lists, holds in self.unlisted:
            found.append(
                f"{counted(holds - lists, 'trial folder')} beside {record} not counted in it "
                f"(it lists {lists}, the folder holds {holds}): every trial folder counted once"
            )
        if self.from_trajectory:
            found.append(
                f"{counted(self.from_trajectory, 'trial')} took their usage from "
                "agent/trajectory.json: their result.json recorded none, or only zeros"
            )
        if self.trajectory_unread:
            found.append(
                f"{counted(len(self.trajectory_unread), 'trial')} without usage in result.json "
                "kept none: their agent/trajectory.json could not be read (first: "
                f"{self.trajectory_unread[0]})"
            )
        if self.fractional:
            found.append(
                f"{counted(self.fractional, 'trial')} with a fractional reward (between 0 and "
                f"1) not accepted: below the pass threshold {self.threshold:g}; set a pass "
                "threshold to accept partial credit"
            )
        if self.cache_above_input:
            found.append(
                f"{counted(self.cache_above_input, 'trial')} with more cache tokens than input "
                "tokens: their input was read as excluding the cache"
            )
        if self.never_graded:
            found.append(
                f"{counted(self.never_graded, 'trial')} ended on an infrastructure, API or "
                "verifier error, with no valid reward: outcome error"
            )
        return tuple(found)


def _usage_lost(usage: Mapping[str, Any]) -> bool:
    """result.json records no token count, or only zeros (Harbor writes `or 0` when its agent
    could not count)."""
    counts = [usage[name] for name in ("input_tokens", "cached_input_tokens", "output_tokens")]
    return all(value is None or value == 0 for value in counts)


def _model(info: Mapping[str, Any]) -> str | None:
    """`provider/name`, or the name alone (already qualified, or no provider recorded)."""
    name = text_or_none(info.get("name"))
    provider = text_or_none(info.get("provider"))
    if not name:
        return None
    if provider and not name.startswith(f"{provider}/"):
        return f"{provider}/{name}"
    return name


__all__ = ["EXCEPTION_POLICY", "HarborImporter"]
