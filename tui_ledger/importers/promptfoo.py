"""promptfoo result files: `promptfoo eval -o results.json` (or `.jsonl`), one attempt per result.

Layouts read: the output file (`{"evalId", "results": {"version": 2|3, "results": [...]}}`), the
export file (`{"version": 3|4, "createdAt", "results": {"results": [...]}}`), a bare summary
(`{"version", "results": [...], "stats"}`) and JSONL (one result per line).

Decisions (docs/IMPORTERS.md has the full table):
- workflow = the provider's label (else its id); when the file holds several prompts,
  ` [<prompt label>]` is added, since each provider x prompt pair is its own configuration.
- task = the test's description (else its vars as `k=v; ...`); a description shared by tests
  with different vars gets ` #<vars hash>`. run = the repeat number (1, 2, ...) of that
  workflow on that task, in test order.
- passed = success; status: an error -> "error" ("Evaluation timed out" -> "timeout"),
  failureReason 1 -> "failed", 2 -> "error". A test with no assertions is ungraded.
- tokens = tokenUsage.total. `prompt` counts ALL input (promptfoo's providers add cache reads
  and writes into it), so input_tokens = prompt - cache reads - cache writes, where the reads
  are completionDetails.cacheReadInputTokens, else `cached` when it is a part of `prompt`.
  A result replayed from promptfoo's own response cache (`cached` == total, no prompt or
  completion) keeps its total, with null buckets and response_cached = true: never counted
  twice. Grading (model-graded assertion) tokens are kept apart in grading_tokens.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
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
    load_json,
    parse_json,
    parse_timestamp,
    peek_text,
    real_number,
    whole_number,
)
from tui_ledger.importers._template import detect_in
from tui_ledger.importers.recorded import only_at_run_level

# ResultFailureReason in promptfoo's types.
FAILURE_REASON_STATUS: dict[int, str] = {0: "passed", 1: "failed", 2: "error"}
TIMEOUT_PREFIX = "Evaluation timed out"
NO_ASSERTIONS = "No assertions"

_BROKEN = frozenset({"error", "timeout"})
_HINT = re.compile(r'"(evalId|testIdx|promptIdx)"\s*:')
_LABEL_LIMIT = 40

_SCHEMA: dict[str, pl.DataType] = {
    **HARNESS_SCHEMA,
    "grading_reason": pl.String(),
    "score": pl.Float64(),
    "response_cached": pl.Boolean(),
    "grading_tokens": pl.Int64(),
    "reasoning_tokens": pl.Int64(),
    "prompt_label": pl.String(),
    "test_vars": pl.String(),
    "test_idx": pl.Int64(),
    "prompt_idx": pl.Int64(),
    "result_id": pl.String(),
    "eval_id": pl.String(),
    "source": pl.String(),
    "line": pl.Int64(),
}


CONVENTIONS = (
    "promptfoo tokenUsage.prompt counts all input (cache reads and writes included): "
    "input_tokens = prompt - cache reads - cache writes; tokens = tokenUsage.total",
    "a response replayed from promptfoo's own cache keeps its total with no bucket split",
)


@dataclass(frozen=True)
class PromptfooImporter(ImporterBase):
    """promptfoo eval results (`-o results.json` / `.jsonl`, or `promptfoo export`)."""

    name: str = "promptfoo"

    def matches(self, path: Path) -> bool:
        """A JSON file whose first few KB carry promptfoo's evalId / testIdx / promptIdx."""
        return detect_in(path, _looks_like_results)

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported:
        """One row per promptfoo result."""
        if not path.is_file():
            raise ImporterError.at(path, "does not exist")
        results, meta = _read_jsonl(path) if path.suffix == ".jsonl" else _read_json(path)
        if not results:
            raise ImporterError.at(path, "holds no promptfoo results")
        unit = "line" if path.suffix == ".jsonl" else "result"
        frame, notes = _counted_only(_frame(path, results, meta, unit), results, meta, path)
        return Imported(frame, CONVENTIONS, notes)


def _looks_like_results(path: Path) -> bool:
    if path.suffix not in (".json", ".jsonl"):
        return False
    head = peek_text(path)
    if path.suffix == ".jsonl":
        return head.lstrip().startswith("{") and _HINT.search(head.split("\n", 1)[0]) is not None
    return head.lstrip().startswith("{") and _HINT.search(head) is not None


@dataclass(frozen=True)
class _Meta:
    eval_id: str | None
    timestamp: datetime | None
    stats: Any = None


# promptfoo's stats counts -> the outcome of a result it counts.
_STATS_OUTCOMES: dict[str, tuple[bool, str]] = {
    "successes": (True, "passed"),
    "failures": (False, "failed"),
    "errors": (False, "error"),
}


def _counted_only(
    frame: pl.DataFrame, results: list[tuple[int, Any]], meta: _Meta, path: Path
) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """The results the file's `stats` counts (successes, failures, errors) beyond those its
    results list holds: attempts recorded only as counts, each counted once, in the file's
    one workflow (only warned about when the file holds several: no count says whose)."""
    stats = meta.stats
    if not isinstance(stats, dict):
        return frame, ()
    held = dict.fromkeys(_STATS_OUTCOMES, 0)
    for _, result in results:
        _, status, _ = result_verdict(result)
        kind = (
            "errors" if status in _BROKEN else "successes" if result.get("success") else "failures"
        )
        held[kind] += 1
    short = {
        kind: stats[kind] - held[kind]
        for kind in _STATS_OUTCOMES
        if isinstance(stats.get(kind), int)
        and not isinstance(stats.get(kind), bool)
        and stats[kind] > held[kind]
    }
    if not short:
        return frame, ()
    total = sum(short.values())
    which = ", ".join(f"{kind}: {count}" for kind, count in short.items())
    record = f"{path.name}'s stats ({which})"
    workflows = frame["workflow"].unique().to_list()
    if len(workflows) != 1:
        return frame, (
            f"{counted(total, 'result')} counted in {record} are not in its results list and "
            "no count says whose: not attempts here",
        )
    columns: dict[str, list[Any]] = {name: [None] * total for name in _SCHEMA}
    kinds = [kind for kind, count in short.items() for _ in range(count)]
    columns["workflow"] = workflows * total
    columns["passed"] = [_STATS_OUTCOMES[kind][0] for kind in kinds]
    columns["status"] = [_STATS_OUTCOMES[kind][1] for kind in kinds]
    columns["model"] = [frame["model"][0]] * total
    columns["eval_id"] = [meta.eval_id] * total
    columns["timestamp"] = [meta.timestamp] * total
    columns["source"] = [str(path)] * total
    extra = build_frame(columns, _SCHEMA)
    return pl.concat([frame, extra], how="vertical"), (only_at_run_level(total, record),)


def _read_json(path: Path) -> tuple[list[tuple[int, Any]], _Meta]:
    document = load_json(path)
    if not isinstance(document, dict):
        raise ImporterError.at(path, "is not a promptfoo results file (not a JSON object)")
    summary = document.get("results")
    if isinstance(summary, dict) and isinstance(summary.get("results"), list):
        results = summary["results"]  # output file (v2/v3) or export file (v3/v4)
        moment = summary.get("timestamp") or document.get("createdAt")
    elif isinstance(summary, list):
        results = summary  # a bare EvaluateSummary
        moment = document.get("timestamp")
    else:
        raise ImporterError.at(path, "is not a promptfoo results file (no results list)")
    meta = _Meta(
        eval_id=_text(document.get("evalId") or document.get("id")),
        timestamp=parse_timestamp(moment, path=path, record=None, field="timestamp"),
        stats=summary.get("stats") if isinstance(summary, dict) else document.get("stats"),
    )
    return list(enumerate(results, start=1)), meta


def _read_jsonl(path: Path) -> tuple[list[tuple[int, Any]], _Meta]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImporterError.at(path, f"cannot be read ({exc})") from None
    results = [
        (number, parse_json(line, path, record=f"line {number}"))
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]
    return results, _Meta(eval_id=None, timestamp=None)


def _frame(path: Path, results: list[tuple[int, Any]], meta: _Meta, unit: str) -> pl.DataFrame:
    """The frame of numbered results; `unit` names a record in messages ("result" or "line")."""
    for line, result in results:
        if not isinstance(result, dict) or "success" not in result:
            raise ImporterError.at(
                path, "is not a promptfoo result (no success field)", record=f"{unit} {line}"
            )
    several_prompts = len({_prompt_key(result) for _, result in results}) > 1
    vars_by_description: dict[str, set[str]] = {}
    for _, result in results:
        description = _description(result)
        if description is not None:
            vars_by_description.setdefault(description, set()).add(_vars_text(result))

    columns: dict[str, list[Any]] = {name: [] for name in _SCHEMA}
    repeats: Counter[tuple[str, str]] = Counter()
    order = sorted(results, key=lambda item: (_int_or(item[1].get("testIdx"), 0), item[0]))
    run_of: dict[int, int] = {}
    for line, result in order:
        key = (_workflow(result, several_prompts), _task(result, vars_by_description))
        repeats[key] += 1
        run_of[line] = repeats[key]

    for line, result in results:
        where = f"{unit} {line}"
        workflow = _workflow(result, several_prompts)
        passed, status, reason = result_verdict(result)
        usage = result_usage(result, path, where, broken=status in _BROKEN)
        values: dict[str, Any] = {
            "workflow": workflow,
            "task": _task(result, vars_by_description),
            "passed": passed,
            "status": status,
            **usage,
            "model": _provider_id(result),
            "run": str(run_of[line]),
            "timestamp": meta.timestamp,
            "duration_s": _seconds(result.get("latencyMs"), path, where),
            "cost": real_number(result.get("cost"), path=path, record=where, field="cost"),
            "stop_reason": reason,
            "error_message": first_line(result.get("error")) if status in _BROKEN else None,
            "grading_reason": first_line(_grading_reason(result)),
            "score": real_number(result.get("score"), path=path, record=where, field="score"),
            "prompt_label": _prompt_label(result),
            "test_vars": _vars_text(result),
            "test_idx": _int_or(result.get("testIdx"), None),
            "prompt_idx": _int_or(result.get("promptIdx"), None),
            "result_id": _text(result.get("id")),
            "eval_id": meta.eval_id or _text(result.get("evalId")),
            "source": str(path),
            "line": line,
        }
        for name, value in values.items():
            columns[name].append(value)
    return build_frame(columns, _SCHEMA)


def result_verdict(result: Mapping[str, Any]) -> tuple[bool | None, str, str | None]:
    """(passed, status word, raw reason) of one result.

    failureReason decides where it is written (1 = an assertion failed, 2 = an error); the
    `error` field alone cannot, since promptfoo also puts a failed assertion's reason there.
    """
    error = result.get("error")
    code = result.get("failureReason")
    grading = result.get("gradingResult")
    graded_fail = isinstance(grading, dict) and grading.get("pass") is False
    if code == 2 or (code != 1 and not result.get("success") and error and not graded_fail):
        if str(error or "").startswith(TIMEOUT_PREFIX):
            return False, "timeout", "timeout"
        return False, "error", "error"
    if code == 1 or not result.get("success"):
        return False, "failed", "assertion_failed" if code == 1 or graded_fail else None
    if _ungraded(result):
        return None, "unset", "no_assertions"
    return True, "passed", None


def _grading_reason(result: Mapping[str, Any]) -> Any:
    grading = result.get("gradingResult")
    return grading.get("reason") if isinstance(grading, dict) else None


def _ungraded(result: Mapping[str, Any]) -> bool:
    """promptfoo passes a test without assertions; the ledger calls that ungraded."""
    grading = result.get("gradingResult")
    if isinstance(grading, dict):
        return grading.get("reason") == NO_ASSERTIONS and not grading.get("componentResults")
    test = result.get("testCase")
    return grading is None and isinstance(test, dict) and not test.get("assert")


def result_usage(
    result: Mapping[str, Any], path: Path, where: str, *, broken: bool
) -> dict[str, Any]:
    """Token buckets of one result, split so that no token is counted twice.

    `broken`: the result is an error or a timeout, whose zero usage is promptfoo's placeholder.
    """

    def count(usage: Mapping[str, Any], field: str) -> int | None:
        return whole_number(usage.get(field), path=path, record=where, field=f"tokenUsage.{field}")

    out: dict[str, Any] = dict.fromkeys(
        (
            "input_tokens",
            "cached_input_tokens",
            "cache_write_tokens",
            "output_tokens",
            "tokens",
            "response_cached",
            "grading_tokens",
            "reasoning_tokens",
        )
    )
    usage = result.get("tokenUsage")
    response = result.get("response")
    # promptfoo fills tokenUsage with zeros before the provider answers; a provider that
    # reported nothing (an error, a timeout, a crash) left usage unknown, not zero.
    reported = isinstance(response, dict) and isinstance(response.get("tokenUsage"), dict)
    nonzero = isinstance(usage, dict) and any(usage.get(key) for key in ("total", "prompt"))
    if not reported and not nonzero and (isinstance(response, dict) or broken):
        usage = None
    if isinstance(response, dict) and isinstance(response.get("cached"), bool):
        out["response_cached"] = response["cached"]
    if not isinstance(usage, dict):
        return out

    prompt, completion = count(usage, "prompt"), count(usage, "completion")
    cached, total = count(usage, "cached"), count(usage, "total")
    details = usage.get("completionDetails")
    details = details if isinstance(details, dict) else {}
    reads = whole_number(
        details.get("cacheReadInputTokens"), path=path, record=where, field="cacheReadInputTokens"
    )
    writes = whole_number(
        details.get("cacheCreationInputTokens"),
        path=path,
        record=where,
        field="cacheCreationInputTokens",
    )
    out["reasoning_tokens"] = whole_number(
        details.get("reasoning"), path=path, record=where, field="completionDetails.reasoning"
    )
    assertions = usage.get("assertions")
    if isinstance(assertions, dict):
        out["grading_tokens"] = count(assertions, "total")

    if bool(cached) and cached == total and not prompt and not completion:
        # Replayed from promptfoo's response cache: the total is what producing it took; how it
        # split into input and output is not in the file.
        out["response_cached"] = True
        out["tokens"] = total
        return out

    if reads is None and cached and prompt is not None and cached <= prompt:
        reads = cached  # providers that report prompt-cache hits in `cached`, inside `prompt`
    out["cached_input_tokens"] = reads
    out["cache_write_tokens"] = writes
    out["output_tokens"] = completion
    if prompt is not None:
        inside = (reads or 0) + (writes or 0)
        if total is not None and completion is not None and total == prompt + completion + inside:
            inside = 0  # this provider's prompt already left the cache out
        out["input_tokens"] = prompt - inside if prompt >= inside else prompt
    if total is None and prompt is not None and completion is not None:
        total = prompt + completion
    out["tokens"] = total
    return out


def _workflow(result: Mapping[str, Any], several_prompts: bool) -> str:
    provider = _provider_label(result)
    return f"{provider} [{_prompt_label(result)}]" if several_prompts else provider


def _provider_label(result: Mapping[str, Any]) -> str:
    provider = result.get("provider")
    if isinstance(provider, dict):
        return str(provider.get("label") or provider.get("id") or "provider")
    return str(provider or "provider")


def _provider_id(result: Mapping[str, Any]) -> str | None:
    provider = result.get("provider")
    if isinstance(provider, dict):
        return _text(provider.get("id") or provider.get("label"))
    return _text(provider)


def _prompt_key(result: Mapping[str, Any]) -> str:
    prompt = result.get("prompt")
    label = prompt.get("label") if isinstance(prompt, dict) else None
    return str(result.get("promptId") or label or result.get("promptIdx"))


def _prompt_label(result: Mapping[str, Any]) -> str:
    """The prompt's label, shortened (with its id) when it is the whole prompt text."""
    prompt = result.get("prompt")
    label = str(prompt.get("label") or "") if isinstance(prompt, dict) else ""
    label = " ".join(label.split()) or f"prompt {result.get('promptIdx', '?')}"
    if len(label) <= _LABEL_LIMIT:
        return label
    return f"{label[: _LABEL_LIMIT - 10]}… #{_prompt_key(result)[:6]}"


def _description(result: Mapping[str, Any]) -> str | None:
    test = result.get("testCase")
    text = test.get("description") if isinstance(test, dict) else None
    text = text or result.get("description")
    return str(text) if text else None


def _vars(result: Mapping[str, Any]) -> Mapping[str, Any]:
    variables = result.get("vars")
    if not isinstance(variables, dict):
        test = result.get("testCase")
        variables = test.get("vars") if isinstance(test, dict) else None
    return variables if isinstance(variables, dict) else {}


def _vars_text(result: Mapping[str, Any]) -> str:
    return json.dumps(_vars(result), sort_keys=True, ensure_ascii=False, default=str)


def _task(result: Mapping[str, Any], vars_by_description: Mapping[str, set[str]]) -> str:
    description = _description(result)
    variables = _vars_text(result)
    digest = hashlib.sha1(variables.encode()).hexdigest()[:8]
    if description is not None:
        if len(vars_by_description.get(description, ())) > 1:
            return f"{description} #{digest}"
        return description
    shown = "; ".join(f"{key}={value}" for key, value in sorted(_vars(result).items()))
    shown = " ".join(shown.split())
    if not shown:
        return f"test {result.get('testIdx', '?')}"
    return shown if len(shown) <= 80 else f"{shown[:70]}… #{digest}"


def _seconds(latency_ms: Any, path: Path, where: str) -> float | None:
    value = real_number(latency_ms, path=path, record=where, field="latencyMs")
    return None if value is None else value / 1000


def _int_or(value: Any, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
