"""Inside a promptfoo attempt: one result's prompt, the provider's answer and each assertion.

The row (from `importers.promptfoo`) names the results file (`source`) and the result in it
(`line`: its 1-based place in the results list, or its physical line in a `.jsonl` file), with
`result_id` to check it is still the same result. Only that result is decoded: the rest of a
`.json` file is walked over, and a `.jsonl` file is read up to that line.

Steps: the prompt as promptfoo rendered it (`prompt.raw`; a chat prompt written as a JSON list
of messages becomes one step per message), then the provider's output as the agent's step,
carrying the result's usage split exactly as the importer splits it (the row's tokens: a
response replayed from promptfoo's cache keeps its total with no buckets). The verdict: each
assertion (`gradingResult.componentResults`) as a test, passed or failed, and the grading
reason as the output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tui_ledger.importers import ImporterError
from tui_ledger.importers.promptfoo import result_usage, result_verdict
from tui_ledger.trajectory._json_text import Absent, value_at
from tui_ledger.trajectory.files import failure, importer_problem, lines, parse_line, read_text
from tui_ledger.trajectory.model import Opened, Step, Test, Verdict, Who
from tui_ledger.trajectory.text import as_json, make_step, role_source

_BROKEN = frozenset({"error", "timeout"})
_NAME_LIMIT = 60


def open(row: Mapping[str, Any]) -> Opened:
    """The result the row names, opened: its prompt, its answer and its assertions."""
    source = row.get("source")
    line = row.get("line")
    if not source or not isinstance(line, int) or line < 1:
        raise failure(source or "the row", None, "names no promptfoo result (no source or line)")
    path = Path(str(source))
    if path.suffix == ".jsonl":
        where = f"line {line}"
        result = _jsonl_result(path, line, where)
    else:
        where = f"result {line}"
        result = _json_result(path, line - 1, where)
    if not isinstance(result, dict) or "success" not in result:
        raise failure(path, where, "is not a promptfoo result (no success field)")
    expected = row.get("result_id")
    if expected is not None and result.get("id") is not None and str(result["id"]) != expected:
        raise failure(path, where, f"is result {result['id']}, not {expected} (the file changed?)")
    return _opened(path, result, where)


def _json_result(path: Path, index: int, where: str) -> Any:
    text = read_text(path)
    # The output and export files nest the list in `results.results`; a bare summary does not.
    for steps in (("results", "results", index), ("results", index)):
        try:
            return value_at(text, steps, path, where)
        except Absent:
            continue
    raise failure(path, where, "is not in the file (no such result in its results list)")


def _jsonl_result(path: Path, line: int, where: str) -> Any:
    for number, data in lines(path):
        if number == line:
            if data.isspace():
                break
            return parse_line(data, path, number)
    raise failure(path, where, "is not in the file (it has fewer lines)")


def _opened(path: Path, result: Mapping[str, Any], where: str) -> Opened:
    _, status, _ = result_verdict(result)
    try:
        usage = result_usage(result, path, where, broken=status in _BROKEN)
    except ImporterError as exc:
        raise failure(path, where, importer_problem(exc)) from None
    prompt = _prompt_text(result)
    notes = []
    response = result.get("response")
    response_usage = response.get("tokenUsage") if isinstance(response, dict) else None
    if usage.get("tokens") is None and status not in _BROKEN and isinstance(response_usage, dict):
        # An export file keeps usage on the response only: shown on the step, though the
        # ledger (reading the result's tokenUsage) does not count it.
        try:
            usage = result_usage(
                {**result, "tokenUsage": response_usage}, path, where, broken=False
            )
        except ImporterError as exc:
            raise failure(path, where, importer_problem(exc)) from None
        if usage.get("tokens") is not None:
            notes.append(
                "the result has no tokenUsage of its own, only its response does: the step "
                "shows the response's, which the ledger does not count for the attempt"
            )
    if usage.get("grading_tokens"):
        notes.append(
            f"model-graded assertions used {usage['grading_tokens']:,} tokens, which promptfoo "
            "reports apart: not in the attempt's tokens"
        )
    if usage.get("response_cached") and usage.get("input_tokens") is None:
        notes.append("the answer was replayed from promptfoo's cache: its total, with no split")
    return Opened(
        files=[str(path)],
        instruction=prompt,
        verdict=_tests(result),
        steps=_steps(result, prompt, usage, status),
        notes=notes,
    )


def _prompt_text(result: Mapping[str, Any]) -> str | None:
    prompt = result.get("prompt")
    if isinstance(prompt, dict):
        raw = prompt.get("raw") or prompt.get("label")
        return None if raw is None else str(raw)
    return None if prompt is None else str(prompt)


def _steps(
    result: Mapping[str, Any], prompt: str | None, usage: Mapping[str, Any], status: str
) -> Iterator[Step]:
    index = 0
    for who, text in _prompt_messages(prompt):
        index += 1
        yield make_step(index, who, text)
    response = result.get("response")
    response = response if isinstance(response, dict) else {}
    text = _output_text(response.get("output", result.get("output")))
    error = result.get("error") if status in _BROKEN else None
    if error:
        text = f"{text}\n{error}" if text else str(error)
    buckets = (
        usage.get("input_tokens"),
        usage.get("cached_input_tokens"),
        usage.get("cache_write_tokens"),
        usage.get("output_tokens"),
    )
    yield make_step(
        index + 1,
        "agent",
        text,
        buckets=buckets,
        # The row's own count where it keeps no buckets (a response replayed from the cache).
        tokens=usage.get("tokens"),
        error=status in _BROKEN,
        kind="response_cached" if usage.get("response_cached") else None,
    )


def _prompt_messages(prompt: str | None) -> Iterator[tuple[Who, str]]:
    """The prompt as (who, text): a chat prompt's messages, else the whole text from the user."""
    if prompt is None:
        return
    stripped = prompt.lstrip()
    if stripped.startswith("["):
        try:
            messages = json.loads(stripped)
        except ValueError:
            messages = None
        if (
            isinstance(messages, list)
            and messages
            and all(isinstance(message, dict) and "role" in message for message in messages)
        ):
            for message in messages:
                who = role_source(message.get("role"))
                yield who, _output_text(message.get("content"))
            return
    yield "user", prompt


def _output_text(output: Any) -> str:
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    if isinstance(output, list) and all(isinstance(part, dict) for part in output):
        texts = [str(part.get("text")) for part in output if part.get("text") is not None]
        if texts:
            return "\n".join(texts)
    return as_json(output)


def _tests(result: Mapping[str, Any]) -> Verdict:
    grading = result.get("gradingResult")
    if not isinstance(grading, dict):
        return Verdict()
    components = grading.get("componentResults")
    tests = []
    if isinstance(components, list) and components:
        for number, component in enumerate(components, start=1):
            if isinstance(component, dict):
                tests.append(Test(name=_assertion_name(component, number), result=_word(component)))
    elif grading.get("reason") != "No assertions":
        tests.append(Test(name="grading", result=_word(grading)))
    reason = grading.get("reason")
    return Verdict(tests=tuple(tests), output=None if reason in (None, "") else str(reason))


def _assertion_name(component: Mapping[str, Any], number: int) -> str:
    """An assertion's metric or type, with its expected value when short."""
    assertion = component.get("assertion")
    if not isinstance(assertion, dict):
        return f"assertion {number}"
    name = str(assertion.get("metric") or assertion.get("type") or f"assertion {number}")
    value = assertion.get("value")
    if value is None and assertion.get("threshold") is not None:
        value = f"threshold {assertion['threshold']}"  # cost, latency, similar, ...
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        shown = " ".join(str(value).split())
        if shown and len(name) + len(shown) + 3 <= _NAME_LIMIT:
            name = f"{name}: {shown}"
    return name


def _word(grading: Mapping[str, Any]) -> str:
    passed = grading.get("pass")
    if isinstance(passed, bool):
        return "passed" if passed else "failed"
    return "unknown" if passed is None else str(passed)
