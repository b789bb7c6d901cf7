"""A SWE-bench run's records of its instances beside the trajectories (the `swe-bench` importer).

- `preds.json` (mini-swe-agent and SWE-agent write it beside their trajectories: an object of
  `{instance_id: {instance_id, model_name_or_path, model_patch}}`, or a list of those) names
  every instance the run submitted, with its model.
- A run report (the harness's `<model>.<run_id>.json`, an sb-cli report under
  `sb-cli-reports/`) names the instances it was handed and graded in its id lists
  (`SUBMITTED_LISTS`). Not `incomplete_ids`: the harness lists there the dataset's instances
  that have NO prediction (`make_run_report`), which were never attempted.

An instance one of these names whose trajectory is missing is still an attempt of the run.
Nothing here imports the SWE-bench importer.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_ledger.importers._base import ImporterError, load_json, peek_text, text_or_none

PREDICTIONS_FILE = "preds.json"
# The id lists of a run report that name instances a prediction was submitted for.
SUBMITTED_LISTS = (
    "submitted_ids",
    "completed_ids",
    "resolved_ids",
    "unresolved_ids",
    "empty_patch_ids",
    "error_ids",
    "pending_ids",
    "failed_ids",
)
# A run report's first 8 KB: its counts come first (sb-cli, the harness's make_run_report), its
# id lists may start far below them (500 `completed_ids` before `resolved_ids`).
_RUN_REPORT_HINT = re.compile(
    r'"(resolved_ids|unresolved_ids|empty_patch_ids|error_ids|resolved_instances'
    r'|submitted_instances|completed_ids|submitted_ids)"\s*:'
)


def looks_like_run_report(path: Path) -> bool:
    """Whether `path` (a JSON file) starts like a SWE-bench run report, from a peek."""
    head = peek_text(path)
    return head.lstrip().startswith("{") and _RUN_REPORT_HINT.search(head) is not None


@dataclass(frozen=True)
class Recorded:
    """An instance a run-level record names: the file, and the model where it says one."""

    file: Path
    model: str | None = None


def predictions(run: Path) -> dict[str, Recorded]:
    """Instance id -> record, from every `preds.json` below `run` (its top, or `trajs/`)."""
    found: dict[str, Recorded] = {}
    for folder, subfolders, files in os.walk(run):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        if PREDICTIONS_FILE in files:
            file = Path(folder) / PREDICTIONS_FILE
            for instance, model in _predicted(load_json(file), file):
                found.setdefault(instance, Recorded(file, model))
    return found


def _predicted(document: Any, file: Path) -> list[tuple[str, str | None]]:
    if isinstance(document, dict):
        entries = [
            (key, value if isinstance(value, dict) else {}) for key, value in document.items()
        ]
    elif isinstance(document, list) and all(isinstance(item, dict) for item in document):
        entries = [(item.get("instance_id"), item) for item in document]
    else:
        raise ImporterError.at(file, "is not SWE-bench predictions (an object or list of them)")
    found = []
    for instance, entry in entries:
        if not isinstance(instance, str) or not instance:
            raise ImporterError.at(file, f"holds a prediction whose instance_id is {instance!r}")
        found.append((instance, text_or_none(entry.get("model_name_or_path"))))
    return found


def report_ids(files: list[Path]) -> dict[str, Recorded]:
    """Instance id -> record, from the `SUBMITTED_LISTS` of the run reports among `files`."""
    found: dict[str, Recorded] = {}
    for file in files:
        if not looks_like_run_report(file):
            continue  # a per-instance report: its verdict names its instance
        document = load_json(file)
        if not isinstance(document, dict):
            continue
        for key in SUBMITTED_LISTS:
            ids = document.get(key)
            if isinstance(ids, list):
                for instance in ids:
                    if isinstance(instance, str):
                        found.setdefault(instance, Recorded(file))
    return found


__all__ = [
    "PREDICTIONS_FILE",
    "SUBMITTED_LISTS",
    "Recorded",
    "looks_like_run_report",
    "predictions",
    "report_ids",
]
