"""SWE-bench runs: mini-swe-agent `*.traj.json` or SWE-agent `*.traj` trajectories, one attempt
each, joined by instance id with the SWE-bench harness report that says which were resolved.

Layouts: `<run>/<instance_id>/<instance_id>.traj.json` (mini-swe-agent),
`<run>/<instance_id>/<instance_id>.traj` (SWE-agent), `<submission>/trajs/<instance_id>.traj`
and `<submission>/trajs/<id>/<id>.traj.json` (a published submission: one workflow, named after
it). A folder of several runs is read run by run. An instance the run records only in its
`preds.json` or its reports is an attempt too, counted once (swebench_records.py).

The report: a run report `<model>.<run_id>.json` (`resolved_ids`, `unresolved_ids`,
`empty_patch_ids`, `error_ids`) or per-instance `report.json` files (`{"<id>": {"resolved": ...}}`,
or the same object unwrapped), found anywhere below the run folder (`sb-cli-reports/`,
`logs/<id>/`, `logs/run_evaluation/...`), or named with `ImportOptions.report`. A trajectory
with no report entry is ungraded, and the read warns how many.

Decisions (docs/IMPORTERS.md has the full table):
- workflow = `<mini-swe-agent|swe-agent>__<model>`; task = the instance id; run = the run folder.
- mini-swe-agent: cost = `info.model_stats.instance_cost` (0.0 with API calls made = unknown, as
  litellm writes 0 for an unpriced model), usage = the sum over `messages[].extra.response.usage`
  (litellm's `prompt_tokens` includes cache reads and writes: input_tokens = prompt - reads -
  writes); a run whose messages carry usage for fewer calls than `api_calls` has missing usage.
- SWE-agent: `info.model_stats.{tokens_sent, tokens_received, instance_cost, api_calls}`; the
  harness does not split the cache out of tokens_sent, so no cache bucket is invented.
"""

from __future__ import annotations

import json
import os
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
    json_object,
    load_json,
    peek_text,
    real_number,
    text_or_none,
    whole_number,
)
from tui_ledger.importers._template import detect, input_files, walk_files
from tui_ledger.importers.recorded import only_at_run_level, priced
from tui_ledger.importers.swebench_records import (
    PREDICTIONS_FILE,
    Recorded,
    looks_like_run_report,
    predictions,
    report_ids,
)

MINI_SUFFIX = ".traj.json"
SWE_AGENT_SUFFIX = ".traj"
REPORT_FILE = "report.json"
TRAJS = "trajs"

# Detection: <submissions>/<submission>/trajs/<id>/<id>.traj.json is 3 folders below a folder
# of submissions (<runs>/<run>/<id>/<id>.traj.json 2).
_DETECT_DEPTH = 3
_RUN_REPORT_KEYS = ("resolved_ids", "unresolved_ids", "empty_patch_ids", "error_ids")
# Report list -> (passed, status, verdict). An empty patch is the agent's failure to produce
# one; an evaluation error is the harness's, so no verdict.
REPORT_OUTCOMES: dict[str, tuple[bool | None, str, str]] = {
    "resolved_ids": (True, "passed", "resolved"),
    "unresolved_ids": (False, "failed", "unresolved"),
    "empty_patch_ids": (False, "failed", "empty_patch"),
    "error_ids": (None, "error", "error"),
}
# Exit statuses that mean the agent ran out of wall time (mini-swe-agent, SWE-agent).
TIMEOUT_EXITS = frozenset({"TimeExceeded", "exit_total_execution_time"})

CONVENTIONS_MINI = (
    "mini-swe-agent usage is summed over messages[].extra.response.usage; litellm's "
    "prompt_tokens includes cache reads (prompt_tokens_details.cached_tokens) and, for "
    "Anthropic, cache writes (cache_creation_input_tokens): input_tokens = prompt_tokens - "
    "reads - writes, tokens = prompt_tokens + completion_tokens",
    "mini-swe-agent instance_cost 0.0 after API calls is litellm's 'no price known': cost missing",
)
CONVENTIONS_SWE_AGENT = (
    "SWE-agent tokens_sent is litellm's prompt_tokens summed (cache included, not split): "
    "kept as input_tokens, no cache bucket; tokens = tokens_sent + tokens_received",
)

_SCHEMA: dict[str, pl.DataType] = {
    **HARNESS_SCHEMA,
    "report_verdict": pl.String(),
    "api_calls": pl.Int64(),
    "calls_with_usage": pl.Int64(),
    "reasoning_tokens": pl.Int64(),
    "submitted": pl.Boolean(),
    "harness": pl.String(),
    "agent_version": pl.String(),
    "report_file": pl.String(),
    "source": pl.String(),
    "line": pl.Int64(),
}
_OPTIONAL = (
    "cached_input_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "calls_with_usage",
    "agent_version",
    "error_message",
    "timestamp",
    "duration_s",
)


@dataclass(frozen=True)
class SWEBenchImporter(ImporterBase):
    """SWE-bench run folders (mini-swe-agent or SWE-agent) and their harness report."""

    name: str = "swe-bench"

    def matches(self, path: Path) -> bool:
        """A trajectory file, or a folder with one at most two levels down."""
        return detect(path, _looks_like_trajectory, _trajectory_here, _DETECT_DEPTH)

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported:
        """Every trajectory below `path` (or the one it is), each with its report verdict."""
        options = options or ImportOptions()
        files = input_files(
            path, _walk_trajectories, "holds no SWE-bench trajectory (*.traj.json, *.traj)"
        )
        given = read_reports([options.report]) if options.report is not None else None
        rows = _Rows()
        by_run: dict[Path, list[Path]] = {}
        for file in files:
            by_run.setdefault(_run_folder(file), []).append(file)
        for run, trajectories in by_run.items():
            own = _reports_in(run) if given is None else []
            verdicts = given if given is not None else read_reports(own)
            # A submission (`<submission>/trajs/...`) is one workflow, named after its folder.
            named = (
                run.name
                if any(
                    file.parent.name == TRAJS or file.parent.parent.name == TRAJS
                    for file in trajectories
                )
                else None
            )
            ungraded = 0
            for file in trajectories:
                if not rows.add(file, run, verdicts, named):
                    ungraded += 1
            if ungraded:
                rows.notes.append(_ungraded_note(ungraded, len(trajectories), run, verdicts, given))
            if path.is_dir():
                rows.add_recorded(run, own, verdicts if given is None else {})
        conventions: tuple[str, ...] = ()
        if "mini-swe-agent" in rows.kinds:
            conventions += CONVENTIONS_MINI
        if "swe-agent" in rows.kinds:
            conventions += CONVENTIONS_SWE_AGENT
        if rows.short_usage:
            rows.notes.append(
                f"{counted(rows.short_usage, 'trajectory', 'trajectories')} with usage for fewer "
                "calls than api_calls: usage missing"
            )
        frame = build_frame(rows.columns, _SCHEMA, drop_if_all_null=_OPTIONAL)
        return Imported(frame, conventions, tuple(rows.notes))


# --- finding the files ----------------------------------------------------------------------


def _is_trajectory_name(name: str) -> bool:
    return name.endswith((MINI_SUFFIX, SWE_AGENT_SUFFIX)) and not name.startswith(".")


def _instance_of_name(name: str) -> str:
    for suffix in (MINI_SUFFIX, SWE_AGENT_SUFFIX):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _looks_like_trajectory(path: Path) -> bool:
    return _is_trajectory_name(path.name) and peek_text(path, 64).lstrip()[:1] == "{"


def _trajectory_here(folder: Path, names: list[str]) -> bool | None:
    return True if any(_is_trajectory_name(name) for name in names) else None


def _walk_trajectories(root: Path) -> list[Path]:
    return sorted(walk_files(root, _is_trajectory_name))


def _run_folder(file: Path) -> Path:
    """The run a trajectory belongs to: above `<id>/<id>.traj*` or above a `trajs/` folder
    (a submission: `<submission>/trajs/<id>.traj`, `<submission>/trajs/<id>/<id>.traj.json`)."""
    parent = file.parent
    if parent.name == _instance_of_name(file.name) or parent.name == TRAJS:
        parent = parent.parent
        if parent.name == TRAJS:
            parent = parent.parent
        return parent
    return parent


def _reports_in(run: Path) -> list[Path]:
    """The report files anywhere below a run: run reports (a JSON file that starts like one:
    `<model>.<run_id>.json`, `sb-cli-reports/*.json`) and per-instance `report.json`
    (`logs/<id>/`, `logs/run_evaluation/...`)."""
    found: list[Path] = []
    for folder, subfolders, files in os.walk(run):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        for name in sorted(files):
            file = Path(folder) / name
            if name == REPORT_FILE or (
                name.endswith(".json")
                and not _is_trajectory_name(name)
                and name != PREDICTIONS_FILE
                and looks_like_run_report(file)
            ):
                found.append(file)
    return found


# --- the report -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What the SWE-bench harness said of one instance, and in which file."""

    passed: bool | None
    status: str
    verdict: str
    file: Path


def read_reports(paths: list[Path]) -> dict[str, Verdict]:
    """Instance id -> verdict from every report given (files, or folders of them); two
    different outcomes for one id is an error naming both files (an unresolved instance that
    another report calls an empty patch is one outcome: the empty patch is kept)."""
    verdicts: dict[str, Verdict] = {}
    for path in paths:
        if not path.exists():
            raise ImporterError.at(path, "does not exist; check the --report path")
        files = _reports_in(path) if path.is_dir() else [path]
        if not files:
            raise ImporterError.at(path, "holds no SWE-bench report (*.json with resolved_ids)")
        for file in files:
            for instance, verdict in _report_entries(file):
                known = verdicts.get(instance)
                if known is not None and (known.passed, known.status) == (
                    verdict.passed,
                    verdict.status,
                ):
                    # One outcome in words of two reports (sb-cli's unresolved, the harness's
                    # empty patch): the more telling word is kept.
                    if known.verdict != "unresolved":
                        continue
                elif known is not None:
                    raise ImporterError.at(
                        file,
                        f"says {instance} is {verdict.verdict}, {known.file} says "
                        f"{known.verdict}; give one report per run",
                    )
                verdicts[instance] = verdict
    return verdicts


def _report_entries(file: Path) -> Iterator[tuple[str, Verdict]]:
    document = load_json(file)
    if not isinstance(document, dict):
        raise ImporterError.at(file, "is not a SWE-bench report (not a JSON object)")
    if any(key in document for key in _RUN_REPORT_KEYS):
        for key, (passed, status, verdict) in REPORT_OUTCOMES.items():
            ids = document.get(key, [])
            if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
                raise ImporterError.at(file, f"{key} is not a list of instance ids")
            for instance in ids:
                yield instance, Verdict(passed, status, verdict, file)
        return
    if "resolved" in document:  # a per-instance report, unwrapped: the id is its folder's name
        yield file.parent.name, _instance_verdict(document, file, file.parent.name)
        return
    entries = [(key, value) for key, value in document.items() if isinstance(value, dict)]
    if not entries or not all("resolved" in value for _, value in entries):
        raise ImporterError.at(
            file, "is not a SWE-bench report (no resolved_ids, no per-instance resolved)"
        )
    for instance, value in entries:
        yield instance, _instance_verdict(value, file, instance)


def _instance_verdict(report: Mapping[str, Any], file: Path, instance: str) -> Verdict:
    resolved = report.get("resolved")
    if not isinstance(resolved, bool):
        raise ImporterError.at(file, f"{instance}: resolved is {resolved!r}, not true or false")
    if resolved:
        return Verdict(True, "passed", "resolved", file)
    if report.get("patch_is_None") is True or report.get("patch_exists") is False:
        return Verdict(False, "failed", "empty_patch", file)
    return Verdict(False, "failed", "unresolved", file)


def _ungraded_note(
    count: int, total: int, run: Path, verdicts: Mapping[str, Verdict], given: Any
) -> str:
    if not verdicts and given is None:
        return (
            f"{counted(count, 'trajectory', 'trajectories')} in {run} with no SWE-bench report "
            "beside them: ungraded; name the report with --report FILE"
        )
    return (
        f"{count} of {counted(total, 'trajectory', 'trajectories')} in {run} have no entry in "
        "the SWE-bench report: ungraded"
    )


# --- the trajectories -----------------------------------------------------------------------


class _Rows:
    """Column lists being filled, one trajectory at a time."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in _SCHEMA}
        self.notes: list[str] = []
        self.kinds: set[str] = set()
        self.short_usage = 0
        # run -> instance -> workflow, of the trajectories read
        self.seen: dict[Path, dict[str, str]] = {}

    def add(
        self, file: Path, run: Path, verdicts: Mapping[str, Verdict], named: str | None = None
    ) -> bool:
        """Add one trajectory (in workflow `named`, else `<harness>__<model>`); False when the
        report has no verdict for it."""
        document = load_json(file)
        if not isinstance(document, dict) or not isinstance(document.get("info"), dict):
            raise ImporterError.at(file, "is not a trajectory (no info object)")
        info = document["info"]
        if file.name.endswith(MINI_SUFFIX) or "messages" in document:
            values = self._mini(document, info, file)
        else:
            values = _swe_agent(document, info, file)
        self.kinds.add(values["harness"])
        instance = document.get("instance_id")
        if instance is not None and not isinstance(instance, str):
            raise ImporterError.at(file, f"instance_id is {instance!r}, not an instance id")
        instance = instance or _instance_of_name(file.name)
        exit_status = info.get("exit_status")
        if exit_status is not None and not isinstance(exit_status, str):
            raise ImporterError.at(file, f"info.exit_status is {exit_status!r}, not a word")
        verdict = verdicts.get(instance)
        if verdict is None:
            passed, status = None, "unset"
        else:
            passed, status = verdict.passed, verdict.status
            if passed is False and exit_status in TIMEOUT_EXITS:
                status = "timeout"
        model = values.pop("model")
        submission = info.get("submission")
        row = {
            "workflow": named or (f"{values['harness']}__{model}" if model else values["harness"]),
            "task": instance,
            "passed": passed,
            "status": status,
            "model": model,
            "run": run.name,
            "stop_reason": exit_status or None,
            "error_message": text_or_none(info.get("exception_str")),
            "report_verdict": None if verdict is None else verdict.verdict,
            "submitted": None if submission is None else bool(submission),
            "report_file": None if verdict is None else str(verdict.file),
            "source": str(file),
            "line": 1,
            **values,
        }
        for name in self.columns:
            self.columns[name].append(row.get(name))
        self.seen.setdefault(run, {})[instance] = row["workflow"]
        return verdict is not None

    def add_recorded(self, run: Path, reports: list[Path], verdicts: Mapping[str, Verdict]) -> None:
        """The instances `run` records (preds.json, its reports) with no trajectory, once each."""
        seen = self.seen.get(run, {})
        try:
            recorded = predictions(run)
        except ImporterError as error:  # a secondary record: never stops the load
            self.notes.append(
                f"1 preds.json could not be read ({error}): the run's instances are counted "
                "from its trajectories and reports alone"
            )
            recorded = {}
        for instance, entry in report_ids(reports).items():
            recorded.setdefault(instance, entry)
        for instance, graded in verdicts.items():
            recorded.setdefault(instance, Recorded(graded.file))
        missing = sorted(set(recorded) - set(seen))
        if not missing:
            return
        workflows = set(seen.values())
        for instance in missing:
            verdict = verdicts.get(instance)
            model = recorded[instance].model
            # The run's one workflow; of several, the one of this instance's model.
            named = [w for w in workflows if len(workflows) == 1 or w.endswith(f"__{model}")]
            row = {
                "workflow": named[0] if len(named) == 1 else run.name,
                "task": instance,
                "passed": None if verdict is None else verdict.passed,
                "status": "unset" if verdict is None else verdict.status,
                "model": model,
                "run": run.name,
                "report_verdict": None if verdict is None else verdict.verdict,
                "report_file": None if verdict is None else str(verdict.file),
                "source": str(recorded[instance].file),
                "line": 1,
            }
            for name in self.columns:
                self.columns[name].append(row.get(name))
        files = sorted({str(recorded[instance].file) for instance in missing})
        where = files[0] if len(files) == 1 else f"the run-level records of {run}"
        self.notes.append(only_at_run_level(len(missing), where, missing))

    def _mini(self, document: Mapping[str, Any], info: Mapping[str, Any], file: Path) -> dict:
        stats = json_object(info, "model_stats", path=file, field="info.model_stats")
        calls = whole_number(
            stats.get("api_calls"), path=file, record=None, field="info.model_stats.api_calls"
        )
        cost = real_number(
            stats.get("instance_cost"),
            path=file,
            record=None,
            field="info.model_stats.instance_cost",
        )
        cost = priced(cost, calls)  # litellm could not price the model (ignore_errors)
        messages = document.get("messages", [])
        if not isinstance(messages, list):
            raise ImporterError.at(file, "messages is not a list")
        usage = _message_usage(messages, file)
        if calls is not None and usage["calls_with_usage"] < calls:
            if usage["calls_with_usage"]:
                self.short_usage += 1
            usage = dict.fromkeys(usage) | {"calls_with_usage": usage["calls_with_usage"] or None}
        config = info.get("config")
        model_config = config.get("model") if isinstance(config, dict) else None
        model = model_config.get("model_name") if isinstance(model_config, dict) else None
        return {
            "harness": "mini-swe-agent",
            "model": text_or_none(model),
            "cost": cost,
            "api_calls": calls,
            "agent_version": text_or_none(info.get("mini_version")),
            **usage,
        }


def _message_usage(messages: list[Any], file: Path) -> dict[str, Any]:
    """Token buckets summed over the assistant messages' raw litellm responses."""
    totals = dict.fromkeys(("prompt", "completion", "reads", "writes", "reasoning"), 0)
    calls = 0
    for index, message in enumerate(messages):
        extra = message.get("extra") if isinstance(message, dict) else None
        response = extra.get("response") if isinstance(extra, dict) else None
        usage = response.get("usage") if isinstance(response, dict) else None
        if usage is None:
            continue
        where = f"messages[{index}].extra.response.usage"
        if not isinstance(usage, dict):
            raise ImporterError.at(file, f"{where} is not an object")

        def count(value: Any, field: str, where: str = where) -> int:
            return whole_number(value, path=file, record=None, field=f"{where}.{field}") or 0

        prompt_details = usage.get("prompt_tokens_details") or {}
        output_details = usage.get("completion_tokens_details") or {}
        reads = prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else None
        if reads is None:
            reads = usage.get("cache_read_input_tokens")
        totals["prompt"] += count(usage.get("prompt_tokens"), "prompt_tokens")
        totals["completion"] += count(usage.get("completion_tokens"), "completion_tokens")
        totals["reads"] += count(reads, "prompt_tokens_details.cached_tokens")
        totals["writes"] += count(
            usage.get("cache_creation_input_tokens"), "cache_creation_input_tokens"
        )
        if isinstance(output_details, dict):
            totals["reasoning"] += count(
                output_details.get("reasoning_tokens"), "completion_tokens_details.reasoning_tokens"
            )
        calls += 1
    if not calls:
        return {
            **dict.fromkeys(
                (
                    "input_tokens",
                    "cached_input_tokens",
                    "cache_write_tokens",
                    "output_tokens",
                    "tokens",
                    "reasoning_tokens",
                )
            ),
            "calls_with_usage": 0,
        }
    cache = totals["reads"] + totals["writes"]
    # A prompt smaller than its cache counts left the cache out (not litellm's convention).
    uncached = totals["prompt"] - cache if totals["prompt"] >= cache else totals["prompt"]
    return {
        "input_tokens": uncached,
        "cached_input_tokens": totals["reads"],
        "cache_write_tokens": totals["writes"],
        "output_tokens": totals["completion"],
        "tokens": uncached + cache + totals["completion"],
        "reasoning_tokens": totals["reasoning"] or None,
        "calls_with_usage": calls,
    }


def _swe_agent(document: Mapping[str, Any], info: Mapping[str, Any], file: Path) -> dict:
    stats = json_object(info, "model_stats", path=file, field="info.model_stats")

    def count(field: str) -> int | None:
        return whole_number(
            stats.get(field), path=file, record=None, field=f"info.model_stats.{field}"
        )

    sent, received, calls = count("tokens_sent"), count("tokens_received"), count("api_calls")
    cost = real_number(
        stats.get("instance_cost"), path=file, record=None, field="info.model_stats.instance_cost"
    )
    cost = priced(cost, calls)  # SWE-agent writes 0 when litellm has no price for the model
    return {
        "harness": "swe-agent",
        "model": _swe_agent_model(document.get("replay_config"), file),
        "cost": cost,
        "api_calls": calls,
        "input_tokens": sent,
        "output_tokens": received,
        "tokens": None if sent is None or received is None else sent + received,
    }


def _swe_agent_model(replay: Any, file: Path) -> str | None:
    """The model name inside `replay_config` (a JSON string in 1.x, an object in some 0.x)."""
    if isinstance(replay, str):
        try:
            replay = json.loads(replay)
        except json.JSONDecodeError:
            raise ImporterError.at(file, "replay_config is not valid JSON") from None
    if not isinstance(replay, dict):
        return None
    agent = replay.get("agent")
    model = agent.get("model") if isinstance(agent, dict) else replay.get("model")
    if isinstance(model, dict):
        return text_or_none(model.get("name") or model.get("model_name"))
    return None


__all__ = ["REPORT_OUTCOMES", "SWEBenchImporter", "Verdict", "read_reports"]
