"""OpenTelemetry GenAI spans as OTLP/JSON: one attempt per trace, or per `invoke_agent` span.

Files: the collector's file exporter (one `{"resourceSpans": [...]}` batch per line) or one OTLP
JSON document (`.json`); ids in hex (OTLP/JSON) or base64 (protobuf's own JSON mapping), int64
values as strings or numbers. Both are read.

Decisions (docs/IMPORTERS.md has the full table):
- attempt = a trace, or, when a trace holds several `invoke_agent` spans none inside another,
  each of those spans with its descendants.
- usage is summed over the spans that report it and have NO descendant reporting it: an agent
  span that repeats its model calls' total (or Logfire's aggregated usage) is not counted again,
  and an agent span with no reporting children still counts. Attributes read, newest first:
  `gen_ai.usage.input_tokens` / `output_tokens` / `cache_read.input_tokens` /
  `cache_creation.input_tokens`, the deprecated `gen_ai.usage.prompt_tokens` /
  `completion_tokens`, OpenLLMetry's `gen_ai.usage.cache_read_input_tokens` /
  `cache_creation_input_tokens` / `llm.usage.*`, OpenInference's `llm.token_count.*`.
  Input includes the cache (the convention says so): uncached = input - reads - writes.
- workflow = `<gen_ai.agent.name or service.name>__<model>`; model from the model-call spans.
- outcome: a `gen_ai.evaluation.result` event in the attempt (label pass/fail, else score >=
  the pass threshold), or the span attribute (or evaluation name) named by
  `ImportOptions.outcome_attribute`; none: ungraded. An error status or `error.type` on the
  attempt's root span without a passing verdict is an error.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import polars as pl

from tui_ledger.importers._base import (
    HARNESS_SCHEMA,
    Imported,
    ImporterBase,
    ImporterError,
    ImportOptions,
    counted,
    json_lines,
    load_json,
    peek_text,
    text_or_none,
)
from tui_ledger.importers._template import detect_in, rows_frame
from tui_ledger.schema import FALSE_WORDS, STATUS_WORDS, TRUE_WORDS, normalise_word

_HINT = re.compile(r'"resource_?[sS]pans"\s*:')
_SUFFIXES = (".json", ".jsonl", ".ndjson")

# Attribute names per bucket, newest convention first.
INPUT_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.usage.prompt_tokens",
              "llm.token_count.prompt")  # fmt: skip
OUTPUT_KEYS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
               "llm.usage.completion_tokens", "llm.token_count.completion")  # fmt: skip
CACHE_READ_KEYS = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
                   "llm.token_count.prompt_details.cache_read")  # fmt: skip
CACHE_WRITE_KEYS = ("gen_ai.usage.cache_creation.input_tokens",
                    "gen_ai.usage.cache_creation_input_tokens",
                    "llm.token_count.prompt_details.cache_write")  # fmt: skip
TOTAL_KEYS = ("gen_ai.usage.total_tokens", "llm.usage.total_tokens", "llm.token_count.total")
REASONING_KEYS = ("gen_ai.usage.reasoning.output_tokens",)
COST_KEYS = ("gen_ai.usage.cost", "operation.cost")
USAGE_KEYS = (*INPUT_KEYS, *OUTPUT_KEYS, *TOTAL_KEYS)
EVALUATION_EVENT = "gen_ai.evaluation.result"
_STATUS_ERROR = (2, "STATUS_CODE_ERROR")

CONVENTIONS = (
    "OpenTelemetry gen_ai.usage.input_tokens includes cache reads and writes (the semantic "
    "conventions say SHOULD): input_tokens = input - cache_read - cache_creation; deprecated "
    "(prompt/completion_tokens) and vendor (llm.usage.*, llm.token_count.*) names are read too",
    "usage is summed over the spans that report it with no descendant reporting it, so an agent "
    "span repeating its model calls' total is not counted twice",
)

_SCHEMA: dict[str, pl.DataType] = {
    **HARNESS_SCHEMA,
    "reasoning_tokens": pl.Int64(),
    "trace_id": pl.String(),
    "span_id": pl.String(),
    "agent_name": pl.String(),
    "service": pl.String(),
    "conversation_id": pl.String(),
    "evaluation": pl.String(),
    "score": pl.Float64(),
    "model_calls": pl.Int64(),
    "source": pl.String(),
    "line": pl.Int64(),
}
_OPTIONAL = ("reasoning_tokens", "cost", "evaluation", "score", "conversation_id", "error_message")


@dataclass(frozen=True)
class OtelImporter(ImporterBase):
    """OTLP/JSON trace files (collector file exporter or one document)."""

    name: str = "otel"

    def matches(self, path: Path) -> bool:
        """A `.json`/`.jsonl` file whose first bytes hold `resourceSpans`."""
        return detect_in(path, _looks_like_traces)

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported:
        """One attempt per trace (or per top-level invoke_agent span) in the file."""
        options = options or ImportOptions()
        if not path.is_file():
            raise ImporterError.at(path, "does not exist" if not path.exists() else "is a folder")
        spans: dict[tuple[str, str], Span] = {}
        for number, batch in _batches(path):
            for span in batch_spans(batch, path, number):
                spans.setdefault((span.trace_id, span.span_id), span)
        if not spans:
            raise ImporterError.at(path, "holds no spans (no resourceSpans)")
        reader = _Attempts(path, spans, options)
        frame = rows_frame(list(reader.rows()), _SCHEMA, _OPTIONAL)
        return Imported(frame, CONVENTIONS, tuple(reader.notes()))


def _looks_like_traces(path: Path) -> bool:
    if not path.name.lower().endswith(_SUFFIXES):
        return False
    head = peek_text(path, 2048)
    return head.lstrip().startswith("{") and _HINT.search(head) is not None


def _batches(path: Path) -> Iterator[tuple[int, Any]]:
    """(line, document): the whole file as one document, else one per line."""
    head = peek_text(path, 4096).lstrip()
    # A .json file is one document (pretty-printed or not) unless a second object starts a line.
    if path.suffix == ".json" and "\n{" not in head.rstrip():
        yield 1, load_json(path)
        return
    yield from json_lines(path)


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int | None
    end: int | None
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any], int | None]]
    error: bool
    service: str | None
    line: int
    children: list[Span] = field(default_factory=list)


def batch_spans(batch: Any, path: Path, number: int) -> Iterator[Span]:
    where = f"line {number}"
    if not isinstance(batch, dict):
        raise ImporterError.at(path, "is not an OTLP/JSON object", record=where)
    resources = batch.get("resourceSpans", batch.get("resource_spans"))
    if not isinstance(resources, list):
        raise ImporterError.at(path, "resourceSpans is not a list", record=where)
    for resource in resources:
        if not isinstance(resource, dict):
            raise ImporterError.at(path, "a resourceSpans entry is not an object", record=where)
        service = _attributes((resource.get("resource") or {}).get("attributes"), path, where).get(
            "service.name"
        )
        scopes = resource.get("scopeSpans", resource.get("instrumentationLibrarySpans")) or []
        if not isinstance(scopes, list):
            raise ImporterError.at(path, "scopeSpans is not a list", record=where)
        for scope in scopes:
            for span in (scope.get("spans") or []) if isinstance(scope, dict) else []:
                yield _span(span, path, where, number, None if service is None else str(service))


def _span(span: Any, path: Path, where: str, number: int, service: str | None) -> Span:
    if not isinstance(span, dict):
        raise ImporterError.at(path, "a span is not an object", record=where)
    trace_id, span_id = _id(span.get("traceId"), path, where), _id(span.get("spanId"), path, where)
    if trace_id is None or span_id is None:
        raise ImporterError.at(path, "a span has no traceId or spanId", record=where)
    status = span.get("status") or {}
    events = []
    for event in span.get("events") or []:
        if isinstance(event, dict):
            attributes = _attributes(event.get("attributes"), path, where)
            events.append((str(event.get("name")), attributes, _nanos(event.get("timeUnixNano"))))
    attributes = _attributes(span.get("attributes"), path, where)
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_id(span.get("parentSpanId"), path, where),
        name=str(span.get("name") or ""),
        start=_nanos(span.get("startTimeUnixNano")),
        end=_nanos(span.get("endTimeUnixNano")),
        attributes=attributes,
        events=events,
        error=isinstance(status, dict) and status.get("code") in _STATUS_ERROR,
        service=service,
        line=number,
    )


def _id(value: Any, path: Path, where: str) -> str | None:
    """A trace or span id as lower-case hex, from hex (OTLP/JSON) or base64 (protobuf JSON)."""
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise ImporterError.at(path, f"span id {value!r} is not a string", record=where)
    if re.fullmatch(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{32}", value):
        return value.lower()
    try:
        return base64.b64decode(value, validate=True).hex()
    except (binascii.Error, ValueError):
        problem = f"span id {value!r} is neither hex nor base64"
        raise ImporterError.at(path, problem, record=where) from None


def _nanos(value: Any) -> int | None:
    try:
        return None if value in (None, "", "0", 0) else int(value)
    except (TypeError, ValueError):
        return None


def _attributes(items: Any, path: Path, where: str) -> dict[str, Any]:
    """OTLP KeyValue list -> {key: value}; a plain {key: value} object is accepted too."""
    if items is None:
        return {}
    if isinstance(items, dict):
        return dict(items)
    if not isinstance(items, list):
        raise ImporterError.at(path, f"attributes are {items!r}, not a list", record=where)
    found = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            found[item["key"]] = _value(item.get("value"))
    return found


def _value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "intValue", "doubleValue"):
        if key in value:
            raw = value[key]
            if key == "intValue" and isinstance(raw, str):
                return int(raw) if re.fullmatch(r"-?\d+", raw) else raw
            return raw
    if "arrayValue" in value:
        return [_value(item) for item in (value["arrayValue"] or {}).get("values", [])]
    return None


def _count(attributes: Mapping[str, Any], keys: tuple[str, ...], path: Path, span: Span) -> Any:
    for key in keys:
        if key in attributes and attributes[key] is not None:
            value = attributes[key]
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ImporterError.at(
                    path,
                    f"span {span.name!r} attribute {key} is {value!r}, not a whole number",
                    record=f"line {span.line}",
                )
            return value
    return None


def reports(span: Span, keys: tuple[str, ...]) -> bool:
    return any(span.attributes.get(key) is not None for key in keys)


class _Attempts:
    """The spans of one file grouped into attempts, and each attempt's row."""

    def __init__(
        self, path: Path, spans: Mapping[tuple[str, str], Span], options: ImportOptions
    ) -> None:
        self.path = path
        self.options = options
        self.orphans = 0
        self.ungraded = 0
        self.by_trace: dict[str, list[Span]] = {}
        for span in spans.values():
            self.by_trace.setdefault(span.trace_id, []).append(span)
            parent = spans.get((span.trace_id, span.parent_id)) if span.parent_id else None
            if parent is not None:
                parent.children.append(span)

    def rows(self) -> Iterator[dict[str, Any]]:
        for trace_id, spans in self.by_trace.items():
            members = {span.span_id for span in spans}
            roots = [s for s in spans if s.parent_id is None or s.parent_id not in members]
            agents = top_agents(roots)
            if len(agents) > 1:
                covered = {id(span) for agent in agents for span in descendants(agent)}
                self.orphans += sum(
                    id(span) not in covered and reports(span, USAGE_KEYS) for span in spans
                )
                for agent in agents:
                    yield self.row(trace_id, agent, list(descendants(agent)))
            else:
                root = agents[0] if agents else min(roots, key=lambda s: s.start or 0)
                yield self.row(trace_id, root, spans)

    def row(self, trace_id: str, root: Span, spans: list[Span]) -> dict[str, Any]:
        path = self.path
        leaves = [
            span
            for span in spans
            if reports(span, USAGE_KEYS)
            and not any(reports(child, USAGE_KEYS) for child in descendants(span, self_=False))
        ]
        usage = sum_usage(leaves, path)
        cost_spans = [
            span
            for span in spans
            if reports(span, COST_KEYS)
            and not any(reports(child, COST_KEYS) for child in descendants(span, self_=False))
        ]
        costs = [_cost(span, path) for span in cost_spans]
        models = Counter(model for span in leaves if (model := _model(span)))
        model = models.most_common(1)[0][0] if models else None
        if model is None:
            model = root.attributes.get("gen_ai.request.model")
        agent = root.attributes.get("gen_ai.agent.name") or root.service or "otel"
        passed, evaluation, score = self._verdict(root, spans)
        error_type = text_or_none(root.attributes.get("error.type"))
        errored = root.error or error_type is not None
        status = _status(passed, errored, error_type)
        if status == "unset":
            self.ungraded += 1
        starts = [span.start for span in spans if span.start]
        ends = [span.end for span in spans if span.end]
        return {
            "workflow": f"{agent}__{model}" if model else str(agent),
            "task": None,
            "passed": passed,
            "status": status,
            **usage,
            "model": None if model is None else str(model),
            "run": None,
            "timestamp": _moment(min(starts)) if starts else None,
            "duration_s": (max(ends) - min(starts)) / 1e9 if starts and ends else None,
            "cost": sum(costs) if costs and None not in costs else None,
            "stop_reason": (error_type or "error") if errored else None,
            "trace_id": trace_id,
            "span_id": root.span_id,
            "agent_name": text_or_none(root.attributes.get("gen_ai.agent.name")),
            "service": root.service,
            "conversation_id": text_or_none(
                root.attributes.get("gen_ai.conversation.id") or root.attributes.get("session.id")
            ),
            "evaluation": evaluation,
            "score": score,
            "model_calls": len(leaves),
            "source": str(path),
            "line": root.line,
        }

    def _verdict(self, root: Span, spans: list[Span]) -> tuple[bool | None, str | None, Any]:
        """(passed, evaluation name, score) from the named attribute or evaluation events."""
        wanted = self.options.outcome_attribute
        threshold = self.options.threshold()
        if wanted is not None:
            for span in [root, *spans]:
                if wanted in span.attributes:
                    value = span.attributes[wanted]
                    return _judge(value, threshold, self.path, span, wanted), wanted, None
        results = []
        for span in spans:
            for name, attributes, moment in span.events:
                if name != EVALUATION_EVENT:
                    continue
                evaluation = text_or_none(attributes.get("gen_ai.evaluation.name")) or "evaluation"
                if wanted is not None and evaluation != wanted:
                    continue
                label = attributes.get("gen_ai.evaluation.score.label")
                score = attributes.get("gen_ai.evaluation.score.value")
                value = label if label is not None else score
                verdict = _judge(value, threshold, self.path, span, evaluation)
                results.append((moment or 0, verdict, evaluation, score))
        verdicts = {verdict for _, verdict, _, _ in results if verdict is not None}
        if len(verdicts) > 1:
            names = ", ".join(sorted({name for _, _, name, _ in results}))
            raise ImporterError.at(
                self.path,
                f"trace {root.trace_id} has evaluations that disagree ({names}); name the one "
                "to use as the outcome attribute",
            )
        if not results:
            return None, None, None
        _, verdict, evaluation, score = max(results, key=lambda result: result[0])
        return verdict, evaluation, None if score is None else float(score)

    def notes(self) -> list[str]:
        notes = []
        if self.ungraded:
            notes.append(
                f"{counted(self.ungraded, 'attempt')} with no evaluation result or outcome "
                "attribute: ungraded; join outcomes by trace_id"
            )
        if self.orphans:
            notes.append(
                f"{counted(self.orphans, 'span')} reporting usage outside the invoke_agent spans "
                "of a trace that holds several: not counted in any attempt"
            )
        return notes


def _status(passed: bool | None, errored: bool, error_type: str | None) -> str:
    """A verdict of pass stands; else an errored root is an error (a timeout when its
    error.type says so); else the verdict, or unset when there is none."""
    if passed:
        return "passed"
    if errored:
        word = STATUS_WORDS.get(normalise_word(error_type or ""))
        return "timeout" if word == "timeout" else "error"
    return "unset" if passed is None else "failed"


def _model(span: Span) -> str | None:
    """The model a span called: the one that answered, else the one asked for."""
    attributes = span.attributes
    return text_or_none(
        attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
    )


def top_agents(roots: list[Span]) -> list[Span]:
    """The invoke_agent spans with no invoke_agent span above them, in start order."""
    found: list[Span] = []

    def walk(span: Span) -> None:
        if span.attributes.get("gen_ai.operation.name") == "invoke_agent":
            found.append(span)
            return
        for child in span.children:
            walk(child)

    for root in roots:
        walk(root)
    return sorted(found, key=lambda span: span.start or 0)


def descendants(span: Span, *, self_: bool = True) -> Iterator[Span]:
    if self_:
        yield span
    for child in span.children:
        yield from descendants(child)


def sum_usage(spans: list[Span], path: Path) -> dict[str, Any]:
    names = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")
    if not spans:
        return dict.fromkeys((*names, "tokens", "reasoning_tokens"))
    totals: dict[str, int | None] = dict.fromkeys((*names, "tokens", "reasoning_tokens"), 0)
    for span in spans:
        attributes = span.attributes
        inputs = _count(attributes, INPUT_KEYS, path, span)
        output = _count(attributes, OUTPUT_KEYS, path, span)
        reads = _count(attributes, CACHE_READ_KEYS, path, span) or 0
        writes = _count(attributes, CACHE_WRITE_KEYS, path, span) or 0
        total = _count(attributes, TOTAL_KEYS, path, span)
        reasoning = _count(attributes, REASONING_KEYS, path, span)
        if inputs is None or output is None:
            buckets = None  # a total alone: the split is unknown
            tokens = total
        else:
            # Input includes the cache by convention; a smaller input left it out.
            uncached = inputs - reads - writes if inputs >= reads + writes else inputs
            buckets = (uncached, reads, writes, output)
            tokens = uncached + reads + writes + output
        for name, value in zip(names, buckets or (None,) * 4, strict=True):
            totals[name] = None if totals[name] is None or value is None else totals[name] + value
        totals["tokens"] = (
            None if totals["tokens"] is None or tokens is None else totals["tokens"] + tokens
        )
        if reasoning is not None:
            totals["reasoning_tokens"] = (totals["reasoning_tokens"] or 0) + reasoning
    if totals["reasoning_tokens"] == 0 and not any(reports(s, REASONING_KEYS) for s in spans):
        totals["reasoning_tokens"] = None
    return totals


def _cost(span: Span, path: Path) -> float | None:
    for key in COST_KEYS:
        value = span.attributes.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                value = None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ImporterError.at(
                path,
                f"span {span.name!r} attribute {key} is not a number",
                record=f"line {span.line}",
            )
        return float(value)
    return None


def _judge(value: Any, threshold: float, path: Path, span: Span, name: str) -> bool | None:
    """A verdict from a boolean, a pass/fail word or a score (>= threshold passes)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return None if math.isnan(value) else value >= threshold
    word = str(value).strip().lower()
    if word in TRUE_WORDS or word in ("correct", "success", "resolved"):
        return True
    if word in FALSE_WORDS or word in ("incorrect", "failure", "unresolved"):
        return False
    try:
        return float(word) >= threshold
    except ValueError:
        raise ImporterError.at(
            path,
            f"span {span.name!r}: {name} is {value!r}; expected true/false, pass/fail or a score",
            record=f"line {span.line}",
        ) from None


def _moment(nanos: int) -> datetime:
    return datetime.fromtimestamp(nanos // 1_000_000_000, tz=timezone.utc).replace(
        microsecond=(nanos % 1_000_000_000) // 1000
    )


__all__ = ["OtelImporter"]
