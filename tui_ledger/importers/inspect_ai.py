"""Inspect AI eval logs: the `.eval` archive and the `.json` log that `inspect eval` writes.

One attempt per sample and epoch. Read with the standard library only: a `.eval` log is a zip of
JSON files (`header.json`, `summaries.json` or `_journal/...`, `samples/<id>_epoch_<n>.json`);
the per-sample summaries carry everything the ledger needs, so the (large) sample transcripts
are opened only when a log has no summaries.

Decisions (docs/IMPORTERS.md has the full table):
- workflow = `<model> [<solver>]`: the evaluated model and the solver/agent chain of the plan.
- task = `<eval task>/<sample id>` (sample ids repeat across tasks); run = the epoch (as text).
- passed from one scorer's value (the first scorer unless `scorer=` names another): "C" and
  true are 1, "P" is 0.5, "I", "N" and false are 0, numbers as they are; accepted when the
  value >= `score_threshold` (default 1.0). No score -> null (ungraded).
- status is a word of the loader's vocabulary, stop_reason the raw reason: an error ->
  "error"; a time or working limit -> "timeout"; an operator stop -> "error"; any other limit
  (token, message, context, turn, cost, custom) -> the verdict of the score, "failed" if none.
- usage sums `model_usage` over every model the sample called (model-graded scorers included):
  input_tokens excludes cache reads and writes, as Inspect documents since 0.3.184; older logs
  whose input_tokens included them (total = input + output) are split the same way.
"""

from __future__ import annotations

import math
import os
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
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
    parse_timestamp,
    peek_text,
    real_number,
    whole_number,
)
from tui_ledger.importers._template import detect_in, input_files
from tui_ledger.importers.inspect_log import read_eval_archive, read_json_log

# Limits that end a sample for lack of time are timeouts; an operator stop is not the agent's
# doing; every other limit (token, message, context, turn, cost, custom) is the agent's failure.
TIME_LIMITS = frozenset({"time", "working"})
ERROR_LIMITS = frozenset({"operator"})

# Inspect's own score words (inspect_ai.scorer: CORRECT, PARTIAL, INCORRECT, NOANSWER).
SCORE_WORDS: dict[str, float] = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_TRUE_WORDS = frozenset({"yes", "true"})
_FALSE_WORDS = frozenset({"no", "false"})

# Files a folder walk would read as data, and Inspect's own index files that are not logs.
_DATA_SUFFIXES = (".eval", ".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".parquet", ".gz")
_SIDE_FILES = frozenset({"logs.json", "eval-set.json"})

_JSON_LOG_HINT = re.compile(r'"eval"\s*:\s*\{')
_JSON_VERSION_HINT = re.compile(r'"version"\s*:\s*\d')

_SCHEMA: dict[str, pl.DataType] = {
    **HARNESS_SCHEMA,
    "scorer": pl.String(),
    "score": pl.Float64(),
    "reasoning_tokens": pl.Int64(),
    "working_time_s": pl.Float64(),
    "models_used": pl.String(),
    "eval_task": pl.String(),
    "sample": pl.String(),
    "sample_uuid": pl.String(),
    "eval_id": pl.String(),
    "inspect_run_id": pl.String(),
    "log_status": pl.String(),
    "inspect_version": pl.String(),
    "source": pl.String(),
    "line": pl.Int64(),
}


CONVENTIONS = (
    "Inspect ModelUsage.input_tokens excludes cache reads and writes (documented since 0.3.184); "
    "where a model's total_tokens = input + output shows the older convention (input included "
    "the cache), the cache counts are subtracted from input_tokens",
)


@dataclass(frozen=True)
class InspectImporter(ImporterBase):
    """Inspect AI logs (`.eval` or `.json`), or a folder of them (one level).

    `score_threshold`: a numeric score at or above it is accepted (default 1.0, so only a full
    score or "C" passes; 0.5 would accept "P"). `scorer`: which scorer decides acceptance when
    a log has several (default: the first the log lists).
    """

    name: str = "inspect"
    score_threshold: float = 1.0
    scorer: str | None = None

    def matches(self, path: Path) -> bool:
        """An Inspect log file, or a log folder: Inspect logs and nothing else to read in it.

        A folder that also holds other data files or subfolders is left to the loader's own
        walk, which asks again about each file, so nothing in it goes unread.
        """
        return detect_in(path, _is_log_file, _log_folder)

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported:
        """Every sample of a log (or of every log in a folder) as one attempt per epoch.

        `options.pass_threshold`, when set, is the score threshold of this read.
        """
        if options is not None and options.pass_threshold is not None:
            return replace(self, score_threshold=options.pass_threshold).read_imported(path)
        files = input_files(path, _log_files, "holds no Inspect AI log (.eval or .json)")
        frames, logs = [], _Logs()
        for file in files:
            frame = self._read_log(file, logs)
            if frame is not None:
                frames.append(frame)
        if not frames:
            raise ImporterError.at(
                path,
                f"holds no samples: {logs.without_samples[0][1]}; was it written with "
                "--no-log-samples? Run the eval again with its samples logged",
            )
        frame, repeated = _once_each(pl.concat(frames, how="vertical"))
        return Imported(frame, CONVENTIONS, logs.warnings(repeated))

    def _read_log(self, path: Path, logs: _Logs) -> pl.DataFrame | None:
        """The log's samples, one row each; None (noted in `logs`) when it kept none."""
        if path.suffix == ".eval":
            header, samples = read_eval_archive(path)
        else:
            header, samples = read_json_log(path)
        if not isinstance(header.get("eval"), dict):
            raise ImporterError.at(path, "is not an Inspect AI log (no eval header)")
        if not logs.note(path, header, len(samples)):
            return None
        rows = _Rows(path, header, score_threshold=self.score_threshold, scorer=self.scorer)
        scorers_in_log: set[str] = set()
        for line, sample in enumerate(samples, start=1):
            rows.add(sample, line)
            if isinstance(sample.get("scores"), dict):
                scorers_in_log.update(sample["scores"])
        rows.check_scorer(scorers_in_log)
        return build_frame(rows.columns, _SCHEMA)


class _Logs:
    """What the logs read say of the samples they ran and kept, for the warnings."""

    def __init__(self) -> None:
        self.without_samples: list[tuple[str, str]] = []
        self.stopped: list[str] = []

    def note(self, path: Path, header: Mapping[str, Any], kept: int) -> bool:
        """Note a log that kept no samples or stopped early; False when it kept no samples."""
        ran, planned = _samples_ran(header)
        status = _text(header.get("status")) or "unknown"
        if not kept:
            what = f"ran {counted(ran, 'sample')}" if ran is not None else "ran no sample it kept"
            self.without_samples.append((path.name, f"{path.name} {what}, recorded only as totals"))
            return False
        ran = max(ran or 0, kept)
        if status != "success" and planned is not None and ran < planned:
            self.stopped.append(
                f"{path.name} ran {ran} of its {counted(planned, 'sample')} ({status})"
            )
        return True

    def warnings(self, repeated: int = 0) -> tuple[str, ...]:
        found = []
        if repeated:
            found.append(
                f"{counted(repeated, 'sample')} appeared in more than one log (a retry keeps "
                "the samples the failed log completed): each counted once, from the later log"
            )
        if self.without_samples:
            found.append(
                f"{counted(len(self.without_samples), 'log')} kept no samples (written with "
                f"--no-log-samples): {'; '.join(text for _, text in self.without_samples)}; "
                "its samples are not attempts here"
            )
        if self.stopped:
            found.append(
                f"{counted(len(self.stopped), 'log')} stopped before every sample ran: "
                f"{'; '.join(self.stopped)}; the samples that never ran are not attempts"
            )
        return tuple(found)


def _once_each(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Each sample (by its `uuid`) once: a retried log (`inspect eval-retry`, an eval set)
    repeats the samples its failed log completed; the later log's copy is kept. The number of
    copies dropped."""
    known = frame.filter(pl.col("sample_uuid").is_not_null())
    if known.height == known["sample_uuid"].n_unique():
        return frame, 0
    order = pl.int_range(pl.len()).alias("_order")
    indexed = frame.with_columns(order)
    kept = pl.concat(
        [
            indexed.filter(pl.col("sample_uuid").is_null()),
            indexed.filter(pl.col("sample_uuid").is_not_null()).unique(
                subset="sample_uuid", keep="last"
            ),
        ]
    ).sort("_order")
    return kept.drop("_order"), frame.height - kept.height


def _samples_ran(header: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """(samples the log says ran, samples it planned): `results.completed_samples` and
    `results.total_samples`, else the dataset's size (or the samples `--limit` or
    `--sample-id` chose) times the epochs."""
    results = header.get("results")
    results = results if isinstance(results, dict) else {}
    ran = results.get("completed_samples")
    planned = results.get("total_samples")
    spec = header.get("eval")
    if not isinstance(planned, int) and isinstance(spec, dict):
        dataset, config = spec.get("dataset"), spec.get("config")
        size = dataset.get("samples") if isinstance(dataset, dict) else None
        epochs = config.get("epochs") if isinstance(config, dict) else None
        chosen = _chosen(config, size) if isinstance(config, dict) else size
        if isinstance(chosen, int) and not isinstance(chosen, bool):
            planned = chosen * (epochs if isinstance(epochs, int) and epochs > 0 else 1)
    return (
        ran if isinstance(ran, int) and not isinstance(ran, bool) else None,
        planned if isinstance(planned, int) and not isinstance(planned, bool) else None,
    )


def _chosen(config: Mapping[str, Any], size: Any) -> Any:
    """How many of the dataset's `size` samples the eval's `limit` / `sample_id` chose."""
    sample_ids, limit = config.get("sample_id"), config.get("limit")
    if isinstance(sample_ids, list):
        return len(sample_ids)
    if isinstance(limit, int) and not isinstance(limit, bool):
        return min(limit, size) if isinstance(size, int) else limit
    if isinstance(limit, list) and len(limit) == 2 and all(isinstance(n, int) for n in limit):
        return limit[1] - limit[0]
    return size


def _log_folder(folder: Path) -> bool:
    """A folder of Inspect logs and nothing else to read."""
    files, has_subfolders = _folder_contents(folder)
    return bool(files) and not has_subfolders and all(map(_is_log_file, files))


def _log_files(folder: Path) -> list[Path]:
    """The data files at the top of `folder`, each an Inspect log or an `ImporterError`."""
    files, _ = _folder_contents(folder)
    for file in files:
        if not _is_log_file(file):
            raise ImporterError.at(file, "is not an Inspect AI log (.eval or .json)")
    return files


def _folder_contents(folder: Path) -> tuple[list[Path], bool]:
    """(data files at the top of `folder`, sorted; whether it has visible subfolders).

    Inspect's own index files (logs.json, eval-set.json) are not data and are left out.
    """
    files, has_subfolders = [], False
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                has_subfolders = True
            elif entry.name.lower().endswith(_DATA_SUFFIXES) and entry.name not in _SIDE_FILES:
                files.append(folder / entry.name)
    return sorted(files), has_subfolders


def _is_log_file(path: Path) -> bool:
    if path.suffix == ".eval":
        if not zipfile.is_zipfile(path):
            return False
        try:
            with zipfile.ZipFile(path) as archive:
                names = set(archive.namelist())
        except zipfile.BadZipFile:
            return False
        return "header.json" in names or "_journal/start.json" in names
    if path.suffix == ".json":
        head = peek_text(path)
        return (
            head.lstrip().startswith("{")
            and _JSON_LOG_HINT.search(head) is not None
            and _JSON_VERSION_HINT.search(head) is not None
        )
    return False


class _Rows:
    """Column lists being filled, one sample at a time."""

    def __init__(
        self,
        path: Path,
        header: Mapping[str, Any],
        *,
        score_threshold: float,
        scorer: str | None,
    ) -> None:
        self.path = path
        self.columns: dict[str, list[Any]] = {name: [] for name in _SCHEMA}
        spec = header["eval"]
        self.model = _text(spec.get("model"))
        self.eval_task = _text(spec.get("task")) or "task"
        self.workflow = _workflow(self.model, spec, header.get("plan"))
        self.created = parse_timestamp(
            spec.get("created"), path=path, record="eval header", field="created"
        )
        self.eval_id = _text(spec.get("eval_id"))
        self.run_id = _text(spec.get("run_id"))
        packages = spec.get("packages")
        self.version = _text(packages.get("inspect_ai")) if isinstance(packages, dict) else None
        self.log_status = _text(header.get("status"))
        self.threshold = score_threshold
        self.chosen_scorer = scorer
        self.default_scorer = _first_scorer(spec)
        self.scorers_seen: set[str] = set()

    def add(self, sample: Any, line: int) -> None:
        path = self.path
        if not isinstance(sample, dict) or "id" not in sample:
            raise ImporterError.at(path, "is not an Inspect sample (no id)", record=f"#{line}")
        sample_id = str(sample["id"])
        epoch = sample.get("epoch", 1)
        where = f"sample {sample_id} epoch {epoch}"

        scorer, score = self._score(sample, where)
        passed = None if score is None else score >= self.threshold
        error = _error_message(sample.get("error"))
        limit = _limit_type(sample.get("limit"))
        usage = split_usage(sample.get("model_usage"), path, where)
        started = parse_timestamp(
            sample.get("started_at"), path=path, record=where, field="started_at"
        )

        values: dict[str, Any] = {
            "workflow": self.workflow,
            "task": f"{self.eval_task}/{sample_id}",
            "passed": passed,
            "status": _status(error, limit, passed),
            **usage,
            "model": self.model,
            "run": str(epoch),
            "timestamp": started or self.created,
            "duration_s": real_number(
                sample.get("total_time"), path=path, record=where, field="total_time"
            ),
            "stop_reason": "error" if error is not None else _limit_reason(limit),
            "error_message": first_line(error),
            "scorer": scorer,
            "score": score,
            "working_time_s": real_number(
                sample.get("working_time"), path=path, record=where, field="working_time"
            ),
            "eval_task": self.eval_task,
            "sample": sample_id,
            "sample_uuid": _text(sample.get("uuid")),
            "eval_id": self.eval_id,
            "inspect_run_id": self.run_id,
            "log_status": self.log_status,
            "inspect_version": self.version,
            "source": str(path),
            "line": line,
        }
        for name, value in values.items():
            self.columns[name].append(value)

    def _score(self, sample: Mapping[str, Any], where: str) -> tuple[str | None, float | None]:
        """(scorer used, its value as a number); the number is None when the sample is unscored."""
        scores = sample.get("scores")
        if scores is None and isinstance(sample.get("score"), dict):
            scores = {self.default_scorer or "score": sample["score"]}  # log format version 1
        if not isinstance(scores, dict) or not scores:
            return self.chosen_scorer, None
        name = self._pick(scores)
        if name is None:
            return self.chosen_scorer, None
        self.scorers_seen.add(name)
        score = scores[name]
        value = score.get("value") if isinstance(score, dict) else score
        return name, score_value(value, path=self.path, record=where, scorer=name)

    def _pick(self, scores: Mapping[str, Any]) -> str | None:
        """The scorer that decides acceptance in this sample's scores, if it scored it."""
        if self.chosen_scorer is not None:
            return self.chosen_scorer if self.chosen_scorer in scores else None
        if self.default_scorer is not None:
            for name in (self.default_scorer, self.default_scorer.rsplit("/", 1)[-1]):
                if name in scores:
                    return name
        return next(iter(scores))

    def check_scorer(self, scorers_in_log: set[str]) -> None:
        """An explicitly chosen scorer that scored nothing here is a mistake worth naming."""
        if self.chosen_scorer is None or self.chosen_scorer in self.scorers_seen:
            return
        if scorers_in_log:
            known = ", ".join(sorted(scorers_in_log))
            raise ImporterError.at(
                self.path, f"no sample has a score from {self.chosen_scorer!r}; scorers: {known}"
            )


def score_value(value: Any, *, path: Path | str, record: str, scorer: str) -> float | None:
    """An Inspect score value as a number, the way Inspect's `value_to_float` reads it.

    None and NaN are "not scored" (None). A word or a structure it cannot read is an error:
    acceptance is never guessed.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, str):
        if value in SCORE_WORDS:
            return SCORE_WORDS[value]
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return 1.0
        if word in _FALSE_WORDS:
            return 0.0
        try:
            number = float(word)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            return number
        problem = f"score {scorer!r} is {value!r}; expected C, I, P, N, yes/no or a number"
        raise ImporterError.at(path, problem, record=record)
    kind = "a dict" if isinstance(value, dict) else type(value).__name__
    raise ImporterError.at(
        path,
        f"score {scorer!r} is {kind}, not one value; choose a scorer with a single value",
        record=record,
    )


def split_usage(model_usage: Any, path: Path, where: str) -> dict[str, Any]:
    """Token buckets summed over models; all null when the sample recorded no usage."""
    names = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")
    empty: dict[str, Any] = dict.fromkeys((*names, "tokens", "reasoning_tokens", "cost"))
    empty["models_used"] = None
    if not isinstance(model_usage, dict) or not model_usage:
        return empty
    totals = dict.fromkeys((*names, "tokens"), 0)
    reasoning: int | None = None
    cost: float | None = 0.0
    for model, usage in model_usage.items():
        if not isinstance(usage, dict):
            raise ImporterError.at(path, f"model_usage[{model!r}] is not an object", record=where)

        def count(field: str, usage: Mapping[str, Any] = usage, model: str = model) -> int | None:
            return whole_number(usage.get(field), path=path, record=where, field=f"{model} {field}")

        uncached = count("input_tokens") or 0
        output = count("output_tokens") or 0
        total = count("total_tokens") or 0
        # Inspect documents a missing cache count as none (input + read + write = all input).
        read = count("input_tokens_cache_read") or 0
        write = count("input_tokens_cache_write") or 0
        if read + write and total == uncached + output and uncached >= read + write:
            # Before 0.3.184 some providers' input_tokens included the cache; the total shows it.
            uncached -= read + write
        totals["input_tokens"] += uncached
        totals["cached_input_tokens"] += read
        totals["cache_write_tokens"] += write
        totals["output_tokens"] += output
        totals["tokens"] += total
        thinking = count("reasoning_tokens")
        if thinking is not None:
            reasoning = (reasoning or 0) + thinking
        spent = real_number(usage.get("total_cost"), path=path, record=where, field="total_cost")
        cost = None if cost is None or spent is None else cost + spent
    return {
        **totals,
        "reasoning_tokens": reasoning,
        "cost": cost,
        "models_used": ", ".join(sorted(model_usage)),
    }


def _status(error: str | None, limit: str | None, passed: bool | None) -> str:
    if error is not None:
        return "error"
    if limit in TIME_LIMITS:
        return "timeout"
    if limit in ERROR_LIMITS:
        return "error"
    if passed is not None:
        return "passed" if passed else "failed"
    return "failed" if limit is not None else "unset"


def _limit_reason(limit: str | None) -> str | None:
    return None if limit is None else f"{limit}_limit"


def _error_message(error: Any) -> str | None:
    """The error of a full sample ({message, traceback}) or of a summary (a string)."""
    if error is None:
        return None
    if isinstance(error, dict):
        return str(error.get("message") or "error")
    return str(error) or "error"


def _limit_type(limit: Any) -> str | None:
    """The limit of a full sample ({type, limit}) or of a summary (its type)."""
    if limit is None:
        return None
    if isinstance(limit, dict):
        return _text(limit.get("type")) or "unknown"
    return str(limit)


def _workflow(model: str | None, spec: Mapping[str, Any], plan: Any) -> str:
    """`<model> [<solver chain>]`, or the model alone when the log names no solver."""
    solver = _text(spec.get("solver"))
    if not solver and isinstance(plan, dict) and isinstance(plan.get("steps"), list):
        steps = [step.get("solver") for step in plan["steps"] if isinstance(step, dict)]
        solver = "+".join(str(step) for step in steps if step)
    base = model or "unknown model"
    return f"{base} [{solver}]" if solver else base


def _first_scorer(spec: Mapping[str, Any]) -> str | None:
    scorers = spec.get("scorers")
    if isinstance(scorers, Sequence) and scorers and isinstance(scorers[0], dict):
        return _text(scorers[0].get("name"))
    return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


__all__ = ["InspectImporter", "score_value"]
