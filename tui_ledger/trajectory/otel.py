"""Inside an OpenTelemetry GenAI attempt: its trace's spans, in time order, as steps.

The row (from `importers.otel`) names the file (`source`), the trace (`trace_id`) and the
attempt's root span (`span_id`). The file is read once: a collector file (one batch a line)
line by line, decoding only the lines that hold the trace's id; a single OTLP/JSON document
whole. Only the trace's spans are kept. Where the trace holds several `invoke_agent` spans
(one attempt each, as the importer reads it), only the row's agent span and its descendants.

Each span is a step: a model call (`chat`, `text_completion`, `generate_content`) or any span
whose own usage is counted is the agent's, `execute_tool` a tool's, anything else the system's.
Tokens follow the importer's rule exactly: a span carries tokens only when it reports
usage and none of its descendants does, split as the importer splits it (the input attribute
includes the cache: uncached = input - reads - writes), so the steps add up to the row. A span
repeating its children's usage (an agent span's roll-up) shows no tokens and a note says so.
A span's error status (or `error.type`) marks its step an error. The verdict: each
`gen_ai.evaluation.result` event as a test, its explanation as the output.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tui_ledger.importers import ImporterError
from tui_ledger.importers._base import peek_text
from tui_ledger.importers.otel import (
    EVALUATION_EVENT,
    USAGE_KEYS,
    Span,
    batch_spans,
    descendants,
    reports,
    sum_usage,
    top_agents,
)
from tui_ledger.trajectory._json_text import Absent, items_of
from tui_ledger.trajectory.files import (
    failure,
    importer_problem,
    lines,
    parse,
    parse_line,
    read_text,
)
from tui_ledger.trajectory.model import Opened, Step, Test, ToolCall, Verdict, Who
from tui_ledger.trajectory.text import (
    NO_BUCKETS,
    Buckets,
    arguments_text,
    make_step,
    nanos_iso,
    str_or_none,
)

_MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "embeddings"})
_TOOL_OPERATION = "execute_tool"


def open(row: Mapping[str, Any]) -> Opened:
    """The trace (or agent span) the row names, opened: its spans as steps, its evaluations."""
    source, trace_id = row.get("source"), row.get("trace_id")
    if not source or not trace_id:
        raise failure(source or "the row", None, "names no trace (no source or trace_id)")
    path = Path(str(source))
    trace_id = str(trace_id).lower()
    where = f"trace {trace_id}"
    spans = _trace_spans(path, trace_id)
    if not spans:
        raise failure(path, where, "holds no span of this trace (the file changed?)")
    members = _attempt_spans(spans, row.get("span_id"))
    members.sort(key=lambda span: (span.start or 0, span.line))
    counted = {
        id(span)
        for span in members
        if reports(span, USAGE_KEYS)
        and not any(reports(child, USAGE_KEYS) for child in descendants(span, self_=False))
    }
    notes = _rolled_up_notes(path, members, counted)
    return Opened(
        files=[str(path)],
        instruction=_instruction(members),
        verdict=_verdict(members),
        steps=_steps(path, members, counted),
        notes=notes,
    )


def _rolled_up_notes(path: Path, members: list[Span], counted: set[int]) -> list[str]:
    """What the spans repeating their descendants' usage mean for the steps' sum."""
    rolled_up = [span for span in members if reports(span, USAGE_KEYS) and id(span) not in counted]
    if not rolled_up:
        return []
    count = len(rolled_up)
    notes = [
        f"{count} span{'s' if count != 1 else ''} report{'s' if count == 1 else ''} the usage of "
        "the spans below too: shown without tokens, never counted twice"
    ]
    for span in rolled_up:
        own = _span_tokens(path, span)
        below = [
            _span_tokens(path, child)
            for child in descendants(span, self_=False)
            if id(child) in counted
        ]
        known = [tokens for tokens in below if tokens is not None]
        if own is None or len(known) != len(below) or own <= sum(known):
            continue
        notes.append(
            f"span {span.name!r} reports {own:,} tokens, the spans below it {sum(known):,}: "
            f"the other {own - sum(known):,} are in no span, and not counted"
        )
    return notes


def _span_tokens(path: Path, span: Span) -> int | None:
    try:
        tokens = sum_usage([span], path)["tokens"]
    except ImporterError as exc:
        raise failure(path, exc.record, importer_problem(exc)) from None
    return tokens


def _trace_spans(path: Path, trace_id: str) -> list[Span]:
    """The spans of one trace in the file, each once (the first copy, as the importer keeps)."""
    found: dict[str, Span] = {}
    try:
        for number, batch in _batches(path, trace_id):
            for span in batch_spans(batch, path, number):
                if span.trace_id == trace_id:
                    found.setdefault(span.span_id, span)
    except ImporterError as exc:
        raise failure(path, exc.record, importer_problem(exc)) from None
    for span in found.values():
        parent = found.get(span.parent_id) if span.parent_id else None
        if parent is not None:
            parent.children.append(span)
    return list(found.values())


def _batches(path: Path, trace_id: str) -> Iterator[tuple[int, Any]]:
    """(line, batch): the whole file when it is one document, else the lines naming the trace."""
    head = peek_text(path, 4096).lstrip()
    if path.suffix == ".json" and "\n{" not in head.rstrip():
        # One document: its text held once, its resource batches decoded one at a time.
        text = read_text(path)
        for key in ("resourceSpans", "resource_spans"):
            try:
                for resource in items_of(text, (key,), path):
                    yield 1, {key: [resource]}
                return
            except Absent:
                continue
        parse(text, path, None)  # not JSON at all: say where it breaks
        raise failure(path, None, "holds no resourceSpans")
    hex_id = trace_id.encode()
    try:
        base64_id = base64.b64encode(bytes.fromhex(trace_id))
    except ValueError:
        base64_id = hex_id
    for number, line in lines(path):
        if line.isspace():
            continue
        whole = line.rstrip().endswith(b"}")
        if whole and base64_id not in line and hex_id not in line.lower():
            continue  # another trace's batch: not decoded (a cut one might be this one's)
        yield number, parse_line(line, path, number)


def _attempt_spans(spans: list[Span], span_id: Any) -> list[Span]:
    """The row's spans: the whole trace, or its agent span's subtree when the trace has several."""
    members = {span.span_id for span in spans}
    roots = [span for span in spans if span.parent_id is None or span.parent_id not in members]
    agents = top_agents(roots)
    if len(agents) > 1:
        for agent in agents:
            if agent.span_id == str(span_id).lower():
                return list(descendants(agent))
    return list(spans)


def _who(span: Span, counted: bool) -> Who:
    operation = span.attributes.get("gen_ai.operation.name")
    if operation == _TOOL_OPERATION:
        return "tool"
    if operation in _MODEL_OPERATIONS or counted:
        return "agent"  # a model call, or an agent span whose own usage is the spend
    return "system"


def _steps(path: Path, spans: list[Span], counted: set[int]) -> Iterator[Step]:
    for index, span in enumerate(spans, start=1):
        attributes = span.attributes
        mine = id(span) in counted
        who = _who(span, mine)
        buckets: Buckets = NO_BUCKETS
        tokens = None
        if mine:
            try:
                usage = sum_usage([span], path)
            except ImporterError as exc:
                raise failure(path, exc.record, importer_problem(exc)) from None
            buckets = (
                usage["input_tokens"],
                usage["cached_input_tokens"],
                usage["cache_write_tokens"],
                usage["output_tokens"],
            )
            tokens = usage["tokens"]
        error_type = attributes.get("error.type")
        text, calls, observation = _content(span, who)
        if error_type is not None and who == "tool":
            observation = (
                f"{observation}\nerror: {error_type}" if observation else f"error: {error_type}"
            )
        elif error_type is not None:
            text = f"{text}\nerror: {error_type}" if text else f"error: {error_type}"
        yield make_step(
            index,
            who,
            text,
            tool_calls=calls,
            observation=observation,
            buckets=buckets,
            tokens=tokens,
            timestamp=nanos_iso(span.start),
            error=span.error or error_type is not None,
            kind=str_or_none(attributes.get("gen_ai.operation.name")),
        )


def _content(span: Span, who: Who) -> tuple[str, tuple[ToolCall, ...], str | None]:
    """(text, tool calls, observation) of one span."""
    attributes = span.attributes
    if who == "tool":
        call = ToolCall(
            name=str(attributes.get("gen_ai.tool.name") or span.name),
            arguments=arguments_text(attributes.get("gen_ai.tool.call.arguments")),
            id=str_or_none(attributes.get("gen_ai.tool.call.id")),
        )
        result = attributes.get("gen_ai.tool.call.result")
        return "", (call,), None if result is None else arguments_text(result)
    if who == "agent":
        messages = _messages(attributes.get("gen_ai.output.messages"))
        if messages:
            texts, calls = [], []
            for message in messages:
                text, found = _parts(message)
                texts.append(text)
                calls.extend(found)
            return "\n".join(text for text in texts if text), tuple(calls), None
        completion = attributes.get("gen_ai.completion.0.content")  # OpenLLMetry
        if completion is not None:
            return str(completion), (), None
        for name, event_attributes, _ in span.events:  # the older per-event convention
            if name == "gen_ai.choice":
                body = event_attributes.get("message") or event_attributes.get("body")
                if body is not None:
                    return arguments_text(body), (), None
    return span.name, (), None


def _messages(value: Any) -> list[dict[str, Any]]:
    """`gen_ai.input.messages` / `gen_ai.output.messages`: a JSON string (or a list) of them."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _parts(message: Mapping[str, Any]) -> tuple[str, list[ToolCall]]:
    """A convention message's text parts joined, and its tool calls."""
    parts = message.get("parts")
    if not isinstance(parts, list):
        content = message.get("content")
        return ("" if content is None else arguments_text(content)), []
    texts, calls = [], []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            texts.append(str(part.get("content") or ""))
        elif kind == "tool_call":
            calls.append(
                ToolCall(
                    name=str(part.get("name") or "tool"),
                    arguments=arguments_text(part.get("arguments")),
                    id=str_or_none(part.get("id")),
                )
            )
        elif kind == "tool_call_response":
            texts.append(arguments_text(part.get("response")))
    return "\n".join(text for text in texts if text), calls


def _instruction(spans: list[Span]) -> str | None:
    """The first user message sent to a model in the attempt, where the spans record it."""
    for span in spans:
        for message in _messages(span.attributes.get("gen_ai.input.messages")):
            if message.get("role") == "user":
                text, _ = _parts(message)
                if text:
                    return text
        prompt = span.attributes.get("gen_ai.prompt.0.content")  # OpenLLMetry
        if prompt is not None and span.attributes.get("gen_ai.prompt.0.role") in (None, "user"):
            return str(prompt)
        prompt = span.attributes.get("gen_ai.prompt")  # the older single-attribute convention
        if isinstance(prompt, str) and prompt:
            return prompt
    return None


def _verdict(spans: list[Span]) -> Verdict:
    tests, explanations = [], []
    for span in spans:
        for name, attributes, _ in span.events:
            if name != EVALUATION_EVENT:
                continue
            evaluation = str(attributes.get("gen_ai.evaluation.name") or "evaluation")
            label = attributes.get("gen_ai.evaluation.score.label")
            score = attributes.get("gen_ai.evaluation.score.value")
            tests.append(Test(name=evaluation, result=_result(label, score)))
            explanation = attributes.get("gen_ai.evaluation.explanation")
            if explanation:
                explanations.append(f"{evaluation}: {explanation}")
    return Verdict(tests=tuple(tests), output="\n".join(explanations) or None)


def _result(label: Any, score: Any) -> str:
    value = label if label is not None else score
    if isinstance(value, bool):
        return "passed" if value else "failed"
    if value is None:
        return "unknown"
    word = str(value)
    if label is None:
        return word
    return {"pass": "passed", "fail": "failed"}.get(word.strip().lower(), word)
