"""Harbor's records of an attempt beside a trial's `result.json` (the `harbor` importer reads them).

- A trial folder that never wrote its `result.json` (the job was stopped, the machine died) still
  holds the `config.json` Harbor wrote before starting it (a TrialConfig: `trial_name`, `task`,
  `agent.{name, model_name}`), often `trial.log` and `agent/trajectory.json`: it is an attempt
  that did not finish.
- A job's own `result.json` (a JobResult) lists its trials by name in
  `stats.evals.<agent>__<model>__<dataset>.{reward_stats.<key>.<reward>, exception_stats.<type>}`
  and counts them in `n_total_trials`: a trial listed there whose folder is gone is an attempt
  known only from the job's record.

Nothing here imports the Harbor importer; it reads these two records into plain values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from tui_ledger.importers._base import (
    ImporterError,
    json_object,
    load_json,
    peek_text,
    text_or_none,
    whole_number,
)

CONFIG_FILE = "config.json"
EXCEPTION_FILE = "exception.txt"
# Harbor names a trial `<task_name[:32]>__<7 random>` (TrialConfig.generate_trial_name).
TASK_PREFIX = 32
_TRIAL_CONFIG_HINTS = (re.compile(r'"trial_name"\s*:'), re.compile(r'"trials_dir"\s*:'))


def looks_like_trial_config(path: Path) -> bool:
    """Whether `path` is a Harbor TrialConfig (`trial_name` and `trials_dir`), from a peek."""
    head = peek_text(path)
    return head.lstrip().startswith("{") and all(hint.search(head) for hint in _TRIAL_CONFIG_HINTS)


@dataclass(frozen=True)
class Unfinished:
    """A trial folder without `result.json`, as its `config.json` names it."""

    folder: Path
    file: Path
    trial_name: str
    task: str
    agent_name: str
    model: str | None
    exception: str | None = None
    """The last line of the trial's `exception.txt`, where Harbor wrote one."""


def unfinished(file: Path) -> Unfinished:
    """The trial whose `config.json` is `file` (its folder never wrote a result)."""
    document = load_json(file)
    if not isinstance(document, dict):
        raise ImporterError.at(file, "is not a Harbor trial config.json (not an object)")
    name = text_or_none(document.get("trial_name")) or file.parent.name
    task_config = json_object(document, "task", path=file)
    agent = json_object(document, "agent", path=file)
    return Unfinished(
        folder=file.parent,
        file=file,
        trial_name=file.parent.name or name,
        task=_task_name(task_config) or task_of(name),
        agent_name=text_or_none(agent.get("name"))
        or _last_part(text_or_none(agent.get("import_path")))
        or "unknown agent",
        model=text_or_none(agent.get("model_name")),
        exception=_last_line(file.parent / EXCEPTION_FILE),
    )


def _last_line(path: Path) -> str | None:
    """The last non-blank line of a traceback file (the exception itself), if it is there."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else None


def _task_name(task: Mapping[str, Any]) -> str | None:
    """Harbor's task name for a TaskConfig: its `name`, else its path's last part."""
    named = text_or_none(task.get("name"))
    if named:
        return named
    path = text_or_none(task.get("path"))
    return PurePosixPath(path).name or None if path else None


def _last_part(import_path: str | None) -> str | None:
    return import_path.rsplit(":", 1)[-1].rsplit(".", 1)[-1] if import_path else None


def task_of(trial_name: str) -> str:
    """The task part of a trial name (at most its first 32 characters, as Harbor cut it)."""
    return trial_name.rsplit("__", 1)[0] if "__" in trial_name else trial_name


@dataclass(frozen=True)
class Listed:
    """A trial as the job's result.json lists it."""

    agent_name: str
    model: str | None
    reward: float | None
    exceptions: tuple[str, ...]


@dataclass
class JobListing:
    """What a job's `result.json` records of its trials."""

    file: Path
    total: int | None
    trials: dict[str, Listed] = field(default_factory=dict)

    @property
    def counted(self) -> int:
        """How many trials the job says it holds (its total, or the trials it names)."""
        return max(self.total or 0, len(self.trials))


def job_listing(document: Mapping[str, Any], file: Path) -> JobListing:
    """The trials a JobResult names, each with its reward and exception types."""
    total = whole_number(
        document.get("n_total_trials"), path=file, record=None, field="n_total_trials"
    )
    listing = JobListing(file, total)
    stats = json_object(document, "stats", path=file)
    evals = json_object(stats, "evals", path=file, field="stats.evals")
    rewards: dict[str, float] = {}
    exceptions: dict[str, list[str]] = {}
    owners: dict[str, str] = {}
    for key, entry in evals.items():
        where = f"stats.evals.{key}"
        if not isinstance(entry, dict):
            raise ImporterError.at(file, f"{where} is not an object")
        by_key = json_object(entry, "reward_stats", path=file, field=f"{where}.reward_stats")
        for reward_key, values in by_key.items():
            if reward_key != "reward" and len(by_key) > 1:
                continue
            for value, names in _names_by(values, file, f"{where}.reward_stats.{reward_key}"):
                for name in names:
                    rewards[name] = _reward(value, file, where)
                    owners[name] = key
        by_type = json_object(entry, "exception_stats", path=file, field=f"{where}.exception_stats")
        for kind, names in _names_by(by_type, file, f"{where}.exception_stats"):
            for name in names:
                exceptions.setdefault(name, []).append(kind)
                owners[name] = key
    for name, key in owners.items():
        agent_name, model = _eval_key(key)
        listing.trials[name] = Listed(
            agent_name, model, rewards.get(name), tuple(exceptions.get(name, ()))
        )
    return listing


def _names_by(values: Any, file: Path, where: str) -> list[tuple[str, list[str]]]:
    if not isinstance(values, dict):
        raise ImporterError.at(file, f"{where} is not an object")
    found = []
    for key, names in values.items():
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise ImporterError.at(file, f"{where}.{key} is not a list of trial names")
        found.append((str(key), names))
    return found


def _reward(value: str, file: Path, where: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ImporterError.at(file, f"{where} lists a reward {value!r}, not a number") from None


def _eval_key(key: str) -> tuple[str, str | None]:
    """(agent, model) of Harbor's `<agent>__<model>__<dataset>` key (JobStats)."""
    parts = key.split("__")
    if len(parts) >= 3:
        return parts[0], "__".join(parts[1:-1]) or None
    return parts[0], None


def same_model(recorded: str | None, named: str | None) -> bool:
    """Whether two spellings name one model (`provider/name` against `name`)."""
    if recorded is None or named is None:
        return recorded == named
    return recorded == named or recorded.endswith(f"/{named}") or named.endswith(f"/{recorded}")


__all__ = [
    "CONFIG_FILE",
    "TASK_PREFIX",
    "JobListing",
    "Listed",
    "Unfinished",
    "job_listing",
    "looks_like_trial_config",
    "same_model",
    "task_of",
    "unfinished",
]
