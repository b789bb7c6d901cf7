"""An attempt read to the end, as `ledger-tui trace` prints it: JSON, text or markdown.

Three renderings of one document (`trace_document`): the attempt's row in the ledger, the
files read, the task's instruction, the grader's evidence, every step with its own tokens,
and whether the steps add up to the attempt's tokens in the ledger.

Decisions:

- Every rendering is safe to print. The text shows a log's text line by line through
  `safe_text` (an ESC byte reads `\\x1b`, a bidi override `<U+202E>`), a tab as spaces. The
  markdown does the same, and puts a log's text in fenced blocks whose fence is longer than
  any run of backticks inside, so nothing in a log is read as markdown or HTML; short values
  (names, the verdict's tests) are escaped where markdown would act on them. The JSON keeps
  the exact strings with every character that could act on a terminal written as `\\uXXXX`
  (`report.json_text`).
- Figures read as everywhere else (`numbers`): `12,345`, `$0.043`, `—` for unknown, and a
  bucket the log does not record is never shown as 0.

This module is part of the core: no textual.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from tui_ledger.reports.report import json_text
from tui_ledger.text.numbers import MISSING, NOT_RECORDED, format_count, format_money
from tui_ledger.text.textsafe import safe_cell, safe_label, safe_text
from tui_ledger.trajectory.model import (
    BUCKETS,
    DIFFERS,
    EQUAL,
    Step,
    Test,
    Trajectory,
    steps_tokens,
    tokens_match,
)

TRACE_FORMATS: tuple[str, ...] = ("text", "json", "md")

ATTEMPT_FIELDS: tuple[str, ...] = (
    "workflow",
    "task",
    "outcome",
    "tokens",
    *BUCKETS,
    "cost",
    "model",
    "run",
    "duration_s",
    "timestamp",
    "source",
    "line",
)
"""The row's fields the trace shows first (each where the ledger has the column)."""

BUCKET_LABELS = {
    "input_tokens": "input",
    "cached_input_tokens": "cached input",
    "cache_write_tokens": "cache write",
    "output_tokens": "output",
}

OTHER_FIELD_WIDTH = 300
"""Terminal cells a row's other field takes at most where a trace shows it."""

_FAILED_WORDS = frozenset(("failed", "fail", "failure", "error", "errored", "false"))
_LABELLED = frozenset(("workflow", "task", "model", "run"))


# --------------------------------------------------------------------------- the document


def trace_document(
    row: Mapping[str, Any], row_number: int, trajectory: Trajectory
) -> dict[str, Any]:
    """The attempt as data: what `trace --format json` prints (README: "Inside an attempt").

    `row` is the attempt's fields in the ledger; `row_number` its 1-based position there.
    """
    attempt = attempt_json(row, row_number)
    match, difference = tokens_match(trajectory.steps, _int_or_none(row.get("tokens")))
    return {
        "attempt": attempt,
        "log": list(trajectory.files),
        "instruction": trajectory.instruction,
        "verdict": {
            "tests": [
                {"name": test.name, "result": test.result} for test in trajectory.verdict.tests
            ],
            "output": trajectory.verdict.output,
        },
        "steps": [_step_json(step) for step in trajectory.steps],
        "steps_tokens": steps_tokens(trajectory.steps),
        "tokens_match": match,
        "tokens_difference": difference,
        "looked_for": list(trajectory.looked_for),
        "notes": list(trajectory.notes),
    }


def attempt_json(row: Mapping[str, Any], row_number: int) -> dict[str, Any]:
    """The attempt's row as `trace --format json` names it ("attempt"; `grader` too)."""
    attempt: dict[str, Any] = {"row": row_number}
    attempt.update({name: _json_value(row[name]) for name in ATTEMPT_FIELDS if name in row})
    return attempt


def _step_json(step: Step) -> dict[str, Any]:
    record: dict[str, Any] = {
        "index": step.index,
        "source": step.source,
        "text": step.text,
        "tool_calls": [
            {"name": call.name, "arguments": call.arguments} for call in step.tool_calls
        ],
        "observation": step.observation,
        "input_tokens": step.input_tokens,
        "cached_input_tokens": step.cached_input_tokens,
        "cache_write_tokens": step.cache_write_tokens,
        "output_tokens": step.output_tokens,
        "tokens": step.tokens,
        "timestamp": step.timestamp,
        "error": step.error,
    }
    if step.agent is not None:
        record["agent"] = step.agent
    if step.kind is not None:
        record["kind"] = step.kind
    return record


def _json_value(value: Any) -> Any:
    """A row's cell as JSON: dates and times as ISO text, a duration in seconds, NaN as null."""
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="backslashreplace")
    if value is None or isinstance(value, (str, int, float, bool, Decimal)):
        return value
    return str(value)


def _int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, Decimal)) and not isinstance(value, bool) else None


def render_trace(
    row: Mapping[str, Any], row_number: int, trajectory: Trajectory, fmt: str = "text"
) -> str:
    """The trace in one of TRACE_FORMATS, ready to print (safe on a terminal)."""
    if fmt == "json":
        return json_text(trace_document(row, row_number, trajectory))
    if fmt == "text":
        return trace_text(row, row_number, trajectory)
    if fmt == "md":
        return trace_markdown(row, row_number, trajectory)
    raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(TRACE_FORMATS)}")


# --------------------------------------------------------------------------- shared wording


def field_text(name: str, value: Any) -> str:
    """A row's field as people read it (not yet made safe): figures by `numbers`."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NOT_RECORDED if name == "tokens" or name in BUCKETS else MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    if name == "tokens" or name in BUCKETS or name == "line":
        return format_count(value)
    if name == "cost" and isinstance(value, (int, float, Decimal)):
        return format_money(float(value))
    if name == "duration_s" and isinstance(value, (int, float, Decimal)):
        return f"{float(value):,.1f} s"
    if isinstance(value, dt.timedelta):
        return f"{value.total_seconds():,.1f} s"
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def _tokens_with_buckets(row: Mapping[str, Any]) -> str:
    total = field_text("tokens", row.get("tokens"))
    buckets = [
        f"{BUCKET_LABELS[name]} {field_text(name, row[name])}"
        for name in BUCKETS
        if name in row and row[name] is not None
    ]
    return f"{total} ({' · '.join(buckets)})" if buckets else total


def _header_fields(row: Mapping[str, Any], trajectory: Trajectory) -> list[tuple[str, str]]:
    """(label, text) for the header: the attempt's fields, then the log files read."""
    fields: list[tuple[str, str]] = []
    for name in ATTEMPT_FIELDS:
        if name not in row or name in BUCKETS or name in ("source", "line"):
            continue
        value = row[name]
        if name == "tokens":
            text = _tokens_with_buckets(row)
        elif name in _LABELLED and value is not None:
            text = safe_label(field_text(name, value))
        else:
            text = field_text(name, value)
        label = "duration" if name == "duration_s" else name
        fields.append((label, text))
    if "source" in row:
        where = field_text("source", row["source"])
        if row.get("line") is not None:
            where += f", line {format_count(row['line'])}"
        fields.append(("source", where))
    fields.append(("log", ", ".join(trajectory.files) if trajectory.files else "none found"))
    return fields


def _other_fields(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The row's fields the header does not show, where the row has a value (safe, and cut
    to `OTHER_FIELD_WIDTH` cells: a cell can hold a whole log)."""
    return [
        (safe_label(name), safe_cell(field_text(name, value), OTHER_FIELD_WIDTH))
        for name, value in row.items()
        if name not in ATTEMPT_FIELDS and value is not None
    ]


def _test_mark(test: Test) -> str:
    if test.passed:
        return "✔"
    return "✘" if test.result.lower() in _FAILED_WORDS else "○"


def _test_line(test: Test) -> str:
    word = test.result.lower()
    result = "" if test.passed or word in ("failed", "fail") else f" ({test.result})"
    return f"{_test_mark(test)} {test.name}{result}"


def _verdict_heading(tests: tuple[Test, ...]) -> str:
    if not tests:
        return "no tests recorded"
    passed = sum(test.passed for test in tests)
    noun = "test" if len(tests) == 1 else "tests"
    return f"{passed:,} of {len(tests):,} {noun} passed"


def _step_heading(step: Step, running: int | None) -> str:
    """`Step 3 · agent · 1,234 tokens (input 1,000 · output 234) · total 5,678 · time`."""
    who = step.source if step.agent is None else f"{step.source} ({step.agent})"
    parts = [f"Step {step.index:,}", who]
    if step.kind:
        parts.append(step.kind)
    if step.tokens is None:
        parts.append("tokens not recorded")
    else:
        buckets = [
            f"{BUCKET_LABELS[name]} {format_count(value)}"
            for name in BUCKETS
            if (value := getattr(step, name)) is not None
        ]
        spent = f"{format_count(step.tokens)} tokens"
        parts.append(f"{spent} ({' · '.join(buckets)})" if buckets else spent)
    if running is not None:
        parts.append(f"total {format_count(running)}")
    if step.timestamp:
        parts.append(step.timestamp)
    if step.error:
        parts.append("✘ error")
    return " · ".join(parts)


def _running_totals(steps: Iterable[Step]) -> list[int | None]:
    """Each step's running total of the steps' tokens so far (None before any is recorded)."""
    totals: list[int | None] = []
    running: int | None = None
    for step in steps:
        if step.tokens is not None:
            running = (running or 0) + step.tokens
        totals.append(running)
    return totals


def tokens_sentence(row: Mapping[str, Any], trajectory: Trajectory) -> str:
    """Whether the steps add up to the attempt's tokens in the ledger, in one sentence."""
    attempt_tokens = _int_or_none(row.get("tokens"))
    match, difference = tokens_match(trajectory.steps, attempt_tokens)
    total = steps_tokens(trajectory.steps)
    ledger = NOT_RECORDED if attempt_tokens is None else format_count(attempt_tokens)
    if match == EQUAL:
        return f"steps add up to the attempt's {ledger} tokens"
    if match == DIFFERS:
        steps = format_count(total)
        if difference is None:
            return f"steps: {steps}, the ledger: {ledger}"
        return f"steps: {steps}, the ledger: {ledger} (differs by {difference:+,})"
    return f"not recorded per step (the ledger: {ledger})"


def _lines(text: str) -> list[str]:
    """A log's text as safe lines: split at line ends, tabs as spaces, the rest escaped."""
    normalised = text.replace("\r\n", "\n")
    return [safe_text(line.expandtabs(4)) for line in normalised.split("\n")]


# --------------------------------------------------------------------------- text


def trace_text(row: Mapping[str, Any], row_number: int, trajectory: Trajectory) -> str:
    """The trace for a person on a terminal (every log text made safe, line by line)."""
    out: list[str] = [f"Attempt {row_number:,} in the ledger"]
    fields = _header_fields(row, trajectory)
    width = max(len(label) for label, _ in fields)
    out.extend(f"  {label:<{width}}  {safe_text(text)}" for label, text in fields)

    verdict = trajectory.verdict
    out += ["", f"Verdict: {_verdict_heading(verdict.tests)}"]
    out.extend(f"  {safe_text(_test_line(test))}" for test in verdict.tests)
    if verdict.output is not None:
        out.append("  Grader's output:")
        out.extend(f"    {line}" for line in _lines(verdict.output))

    out.append("")
    if trajectory.instruction is None:
        out.append("Instruction: not found")
    else:
        out.append("Instruction:")
        out.extend(f"  {line}" for line in _lines(trajectory.instruction))

    out.append("")
    steps = trajectory.steps
    if not steps:
        if trajectory.looked_for:
            looked = "; ".join(trajectory.looked_for)
            out.append(safe_text(f"No steps: looked for {looked}"))
            others = _other_fields(row)
            if others:
                out.append("The row's other fields:")
                width = max(len(name) for name, _ in others)
                out.extend(
                    f"  {safe_text(name):<{width}}  {safe_text(text)}" for name, text in others
                )
        else:
            out.append("No steps in the log")
    else:
        out.append(f"Steps: {len(steps):,}")
    for step, running in zip(steps, _running_totals(steps), strict=True):
        out += ["", safe_text(_step_heading(step, running))]
        if step.text:
            out.extend(f"    {line}" for line in _lines(step.text))
        for call in step.tool_calls:
            first, *rest = _lines(call.arguments) if call.arguments else [""]
            out.append(f"    → {safe_text(call.name)} {first}".rstrip())
            out.extend(f"        {line}" for line in rest)
        if step.observation is not None:
            first, *rest = _lines(step.observation)
            out.append(f"    ← {first}".rstrip())
            out.extend(f"        {line}" for line in rest)

    out += ["", safe_text(f"Tokens: {tokens_sentence(row, trajectory)}")]
    out.extend(safe_text(f"Note: {note}") for note in trajectory.notes)
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- markdown

# What markdown would act on inside a line: emphasis, code, links, raw HTML, entities, table
# cells, strikethrough, a heading's closing hashes, and the backslash itself.
_MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]<>|&~#])")


def markdown_inline(value: object) -> str:
    """`value` as markdown text that shows exactly itself on one line (terminal-safe too)."""
    return _MARKDOWN_INLINE.sub(r"\\\1", safe_text(value))


def _fenced(text: str) -> list[str]:
    """A log's text as a fenced block no line inside can close (its fence is longer than any
    run of backticks in the text), each line made safe."""
    lines = _lines(text)
    longest = max((len(run) for run in re.findall(r"`+", "\n".join(lines))), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *lines, fence]


def trace_markdown(row: Mapping[str, Any], row_number: int, trajectory: Trajectory) -> str:
    """The trace as markdown: a table of the row, then the verdict, instruction and steps."""
    title = " · ".join(
        markdown_inline(safe_label(row[name]))
        for name in ("workflow", "task")
        if row.get(name) is not None
    )
    out: list[str] = [f"## Attempt {row_number:,}" + (f": {title}" if title else ""), ""]
    out += ["| field | value |", "|---|---|"]
    out.extend(
        f"| {markdown_inline(label)} | {markdown_inline(text)} |"
        for label, text in _header_fields(row, trajectory)
    )

    verdict = trajectory.verdict
    out += ["", "### Verdict", "", markdown_inline(_verdict_heading(verdict.tests)), ""]
    if verdict.tests:
        out.extend(f"- {markdown_inline(_test_line(test))}" for test in verdict.tests)
        out.append("")
    if verdict.output is not None:
        out += ["**Grader's output**", "", *_fenced(verdict.output), ""]

    out += ["### Instruction", ""]
    if trajectory.instruction is None:
        out += ["Not found.", ""]
    else:
        out += [*_fenced(trajectory.instruction), ""]

    out += ["### Steps", ""]
    steps = trajectory.steps
    if not steps:
        if trajectory.looked_for:
            looked = "; ".join(trajectory.looked_for)
            out += [markdown_inline(f"No steps: looked for {looked}"), ""]
            others = _other_fields(row)
            if others:
                out += ["| the row's other fields | value |", "|---|---|"]
                out.extend(
                    f"| {markdown_inline(name)} | {markdown_inline(text)} |"
                    for name, text in others
                )
                out.append("")
        else:
            out += ["No steps in the log.", ""]
    for step, running in zip(steps, _running_totals(steps), strict=True):
        out += [f"#### {markdown_inline(_step_heading(step, running))}", ""]
        if step.text:
            out += [*_fenced(step.text), ""]
        for call in step.tool_calls:
            out += [f"**→ {markdown_inline(call.name)}**", ""]
            if call.arguments:
                out += [*_fenced(call.arguments), ""]
        if step.observation is not None:
            out += ["**← observation**", "", *_fenced(step.observation), ""]

    out += ["### Tokens", "", markdown_inline(tokens_sentence(row, trajectory)), ""]
    if trajectory.notes:
        out.extend(f"- {markdown_inline(note)}" for note in trajectory.notes)
        out.append("")
    return "\n".join(out)
