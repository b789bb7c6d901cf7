"""Inside a Codex rollout: one step per model call, per user message, per event worth seeing.

The row is what `importers.codex` made of one rollout file (its `source`): the session's
usage is the file's LAST `total_token_usage`, so a step's tokens are the difference of the
running total at its call's token_count event from the one before, and the steps add up to
exactly the ledger's count. A token_count event written again with the same total (Codex
writes each twice) counts once; where a call's `last_token_usage` disagrees with the
difference of totals, the difference is kept (it is what adds up) and a note says so.
Codex's `input_tokens` includes `cached_input_tokens`: input = input - cached, cached apart,
output as written (reasoning inside it); tokens = input + output, as the loader reads them.

A model call is a run of the items it wrote (`reasoning`, an assistant `message`,
`function_call` / `custom_tool_call` / `local_shell_call`), ended by what is not the model's
(a tool's output, a user message). Its calls' outputs (`function_call_output` by `call_id`)
are its observation; a non-zero exit code or `success: false` marks it failed. Rollouts write
a call's token_count before its items (Codex 0.5x-0.6x) or after them: the first pairing in
the file tells which, and each call takes its own count. A count no items go with (a call
whose output the rollout does not keep) is a step of its own, so nothing is lost.

Streaming: read a line at a time; a step is handed on once its call, its count and its
outputs are written.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tui_ledger.trajectory.files import head_records, json_lines, source_file
from tui_ledger.trajectory.model import (
    Opened,
    Step,
    ToolCall,
    TrajectoryError,
    Verdict,
    Who,
)
from tui_ledger.trajectory.text import (
    NO_BUCKETS,
    as_json,
    call_results,
    content_text,
    counted,
    iso_time,
    make_step,
    reply_text,
    text_or_none,
    token_count,
)

_MODEL_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
    }
)
_CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
_CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions")
_EXIT_CODE = re.compile(r"^Exit code: (-?\d+)", re.MULTILINE)
_USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens")

Order = Literal["unknown", "before", "after"]


def open(row: Mapping[str, Any]) -> Opened:
    """The rollout, opened: its first prompt read, its steps still to read."""
    source = source_file(row, "Codex rollout")
    notes: list[str] = []
    return Opened(
        files=[str(source)],
        instruction=_first_prompt(source),
        verdict=Verdict(),
        steps=_RolloutReading(source, notes).steps(),
        notes=notes,
    )


def _first_prompt(source: Path) -> str | None:
    for line in head_records(source):
        if not isinstance(line, dict) or not isinstance(line.get("payload"), dict):
            continue
        payload = line["payload"]
        if line.get("type") == "event_msg" and payload.get("type") == "user_message":
            text = content_text(payload.get("message"))
            if text.strip():
                return text
        if (
            line.get("type") == "response_item"
            and payload.get("type") == "message"
            and payload.get("role") == "user"
        ):
            text = content_text(payload.get("content"))
            if text.strip() and not text.lstrip().startswith(_CONTEXT_PREFIXES):
                return text
    return None


@dataclass
class _Usage:
    """One model call's own tokens: the running total's step."""

    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    timestamp: str | None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class _Draft:
    source: Who
    timestamp: str | None
    kind: str | None = None
    error: bool = False
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)
    usage: _Usage | None = None
    observation: str | None = None
    # A model call: ended (no more items), its count settled (given, or none will come).
    run: bool = False
    ended: bool = True
    settled: bool = True
    answered: bool = True

    def ready(self) -> bool:
        return self.ended and self.settled and self.answered

    def step(self, index: int) -> Step:
        observation = call_results(self.calls, self.results, self.observation)
        usage = self.usage
        buckets = NO_BUCKETS
        if usage is not None:
            uncached = usage.input_tokens - usage.cached_input_tokens
            buckets = (uncached, usage.cached_input_tokens, None, usage.output_tokens)
        return make_step(
            index,
            self.source,
            reply_text(self.texts, self.thinking),
            tool_calls=self.calls,
            observation=observation,
            buckets=buckets,
            timestamp=self.timestamp,
            error=self.error,
            kind=self.kind,
        )


class _RolloutReading:
    def __init__(self, file: Path, notes: list[str]) -> None:
        self.file = file
        self.notes = notes
        self.queue: deque[_Draft] = deque()
        self.run: _Draft | None = None
        self.waiting_run: _Draft | None = None  # "after": the last call, its count to come
        self.waiting_usage: _Usage | None = None  # "before": a count, its call to come
        self.by_call: dict[str, _Draft] = {}
        self.order: Order = "unknown"
        self.previous: dict[str, int] | None = None
        self.last_user_text: str | None = None
        self.repeats = 0
        self.disagree = 0
        self.negative = 0
        self.lone_counts = 0
        self.uncounted = 0

    def steps(self) -> Iterator[Step]:
        index = 0
        for number, line in json_lines(self.file):
            self._take(number, line)
            while self.queue and self.queue[0].ready():
                index += 1
                yield self._pop().step(index)
        self._end_turn()
        while self.queue:
            index += 1
            yield self._pop().step(index)
        self._finish()

    def _pop(self) -> _Draft:
        draft = self.queue.popleft()
        if draft.run and draft.usage is None:
            self.uncounted += 1
        for call in draft.calls:
            if call.id is not None and self.by_call.get(call.id) is draft:
                del self.by_call[call.id]
        return draft

    def _take(self, number: int, line: Any) -> None:
        where = f"{self.file}: line {number}"
        if not isinstance(line, dict):
            raise TrajectoryError(f"{where} is not a Codex rollout line (an object)")
        kind = line.get("type")
        payload = line.get("payload")
        if kind not in ("response_item", "event_msg", "compacted"):
            return
        if not isinstance(payload, dict):
            raise TrajectoryError(f"{where}: payload is {payload!r}, not an object")
        timestamp = iso_time(line.get("timestamp"))
        if kind == "compacted":
            self._end_turn()
            text = content_text(payload.get("message")) or "the conversation was compacted"
            self._system("compacted", text, timestamp)
        elif kind == "response_item":
            self._item(payload, timestamp)
        else:
            self._event(payload, timestamp, where)

    # -- response items ------------------------------------------------------------------

    def _item(self, item: Mapping[str, Any], timestamp: str | None) -> None:
        kind = item.get("type")
        role = item.get("role")
        if kind in _MODEL_ITEMS and (kind != "message" or role == "assistant"):
            self._model_item(item, kind, timestamp)
        elif kind in _OUTPUT_ITEMS:
            self._end_run()
            self._output(item, timestamp)
        elif kind == "message" and role == "user":
            self._end_run()
            text = content_text(item.get("content"))
            if not text.strip():
                return
            self.last_user_text = text
            context = text.lstrip().startswith(_CONTEXT_PREFIXES)
            if not context:
                self._end_turn()
            self.queue.append(
                _Draft("user", timestamp, kind="context" if context else None, texts=[text])
            )

    def _model_item(self, item: Mapping[str, Any], kind: Any, timestamp: str | None) -> None:
        run = self.run
        if run is None:
            run = self._start_run(timestamp)
        if kind == "message":
            run.texts.append(content_text(item.get("content")))
        elif kind == "reasoning":
            summary = content_text(item.get("summary"))
            content = content_text(item.get("content"))
            run.thinking.append("\n".join(part for part in (summary, content) if part))
        elif kind == "web_search_call":  # searched by the API itself: no output item follows
            run.calls.append(ToolCall("web_search", as_json(item.get("action")), None))
        else:
            call_id = text_or_none(item.get("call_id")) or text_or_none(item.get("id"))
            if kind == "local_shell_call":
                name, arguments = "local_shell", as_json(item.get("action"))
            else:
                name = text_or_none(item.get("name")) or "tool"
                raw = item.get("arguments") if kind == "function_call" else item.get("input")
                arguments = raw if isinstance(raw, str) else as_json(raw)
            run.calls.append(ToolCall(name, arguments, call_id))
            run.answered = False
            if call_id is not None:
                self.by_call[call_id] = run

    def _start_run(self, timestamp: str | None) -> _Draft:
        # A call still waiting for its count gets none now: its count came before this one.
        self._settle_waiting_run()
        for draft in self.queue:  # the calls before it were answered before it was sampled
            draft.answered = True
        run = _Draft("agent", timestamp, run=True, ended=False, settled=False)
        if self.waiting_usage is not None:
            run.usage, run.settled = self.waiting_usage, True
            self.waiting_usage = None
        elif self.order == "before":
            run.settled = True  # its count came before it, and none did
        else:
            self.waiting_run = run
        self.run = run
        self.queue.append(run)
        return run

    def _end_run(self) -> None:
        if self.run is not None:
            self.run.ended = True
            self.run = None

    def _settle_waiting_run(self) -> None:
        if self.waiting_run is not None:
            self.waiting_run.settled = True
            self.waiting_run = None

    def _end_turn(self) -> None:
        """A user message, compaction or the end: every call read so far is complete."""
        self._end_run()
        self._settle_waiting_run()
        self._lone_count()
        for draft in self.queue:
            draft.answered = True

    def _lone_count(self) -> None:
        if self.waiting_usage is None:
            return
        usage, self.waiting_usage = self.waiting_usage, None
        self.lone_counts += 1
        draft = _Draft("agent", usage.timestamp, kind="model_call", usage=usage)
        draft.texts.append("(a model call whose output the rollout does not keep)")
        self.queue.append(draft)

    def _output(self, item: Mapping[str, Any], timestamp: str | None) -> None:
        call_id = text_or_none(item.get("call_id"))
        text, failed = _output_text(item.get("output"))
        draft = self.by_call.get(call_id) if call_id is not None else None
        if draft is None or call_id is None:
            self.queue.append(_Draft("tool", timestamp, error=failed, observation=text))
            return
        draft.results[call_id] = text
        draft.error = draft.error or failed
        if all(call.id in draft.results for call in draft.calls):
            draft.answered = True

    # -- events --------------------------------------------------------------------------

    def _event(self, event: Mapping[str, Any], timestamp: str | None, where: str) -> None:
        kind = event.get("type")
        if kind == "token_count":
            self._token_count(event, timestamp, where)
        elif kind == "user_message":
            self._end_run()
            text = content_text(event.get("message"))
            if text == self.last_user_text:
                self.last_user_text = None
                return  # the response item said it already
            self._end_turn()
            if text.strip():
                self.queue.append(_Draft("user", timestamp, texts=[text]))
        elif kind == "turn_aborted":
            self._end_turn()
            reason = text_or_none(event.get("reason")) or "aborted"
            self._system("turn_aborted", f"turn aborted ({reason})", timestamp)
        elif kind in ("error", "stream_error"):
            message = content_text(event.get("message")) or as_json(event)
            self._system(kind, message, timestamp, error=True)
        elif kind == "task_complete":
            self._end_turn()

    def _system(self, kind: str, text: str, timestamp: str | None, *, error: bool = False) -> None:
        self.queue.append(_Draft("system", timestamp, kind=kind, error=error, texts=[text]))

    def _token_count(self, event: Mapping[str, Any], timestamp: str | None, where: str) -> None:
        info = event.get("info")
        if not isinstance(info, dict) or info.get("total_token_usage") is None:
            return  # a rate-limit update: no usage (as the loader reads it)
        total = info["total_token_usage"]
        if not isinstance(total, dict):
            raise TrajectoryError(f"{where}: total_token_usage is {total!r}, not an object")
        counts = {
            key: token_count(total.get(key), f"{where}: total_token_usage.{key}") or 0
            for key in _USAGE_KEYS
        }
        if counts == self.previous:
            self.repeats += 1
            return
        before = self.previous or dict.fromkeys(_USAGE_KEYS, 0)
        self.previous = counts
        usage = _Usage(
            input_tokens=counts["input_tokens"] - before["input_tokens"],
            cached_input_tokens=counts["cached_input_tokens"] - before["cached_input_tokens"],
            output_tokens=counts["output_tokens"] - before["output_tokens"],
            timestamp=timestamp,
        )
        if min(usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) < 0:
            self.negative += 1
        last = info.get("last_token_usage")
        if isinstance(last, dict) and any(
            (token_count(last.get(key), f"{where}: last_token_usage.{key}") or 0)
            != getattr(usage, key)
            for key in _USAGE_KEYS
        ):
            self.disagree += 1
        self._pair(usage)

    def _pair(self, usage: _Usage) -> None:
        # A new count ends the items being read: they are its call's (counts written after
        # their items) or the call before's (counts written before them).
        self._end_run()
        if self.order == "unknown":
            self.order = "after" if self.waiting_run is not None else "before"
        if self.order == "after" and self.waiting_run is not None:
            self.waiting_run.usage = usage
            self._settle_waiting_run()
            return
        self._lone_count()  # a count already waiting never met its call
        self.waiting_usage = usage
        if self.order == "after":
            self._lone_count()

    def _finish(self) -> None:
        if self.repeats:
            self.notes.append(
                f"{counted(self.repeats, 'token_count event')} repeated the running total "
                "before it (Codex writes each twice): counted once"
            )
        if self.disagree:
            self.notes.append(
                f"{counted(self.disagree, 'call')}' last_token_usage differ from the step of "
                "the running total: each step shows the step of the total, which adds up to "
                "the session's total as the ledger counts it"
            )
        if self.negative:
            self.notes.append(
                f"the running total went down {counted(self.negative, 'time')} (a resumed or "
                "forked session starting its count again): those steps are negative, and the "
                "steps still add up to the last total, as the ledger counts it"
            )
        if self.lone_counts:
            self.notes.append(
                f"{counted(self.lone_counts, 'token count')} went with no item the rollout "
                "keeps: each is a step of its own"
            )
        if self.uncounted and self.previous is not None:
            self.notes.append(
                f"{counted(self.uncounted, 'model call')} got no token_count of its own (a "
                "call cut off, or a count the rollout never wrote): those steps record no tokens"
            )
        if self.previous is None:
            self.notes.append(
                "the rollout has no token_count event with a total (Codex before 2025-09): "
                "no step records tokens"
            )


def _output_text(output: Any) -> tuple[str, bool]:
    """A tool output's text and whether it failed (a non-zero exit code, success false)."""
    failed = False
    if isinstance(output, dict):
        failed = output.get("success") is False
        text = content_text(output.get("content", output))
    else:
        text = content_text(output)
    exit_code = _exit_code(text)
    if exit_code is not None and exit_code != 0:
        failed = True
    return text, failed


def _exit_code(text: str) -> int | None:
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("metadata"), dict):
            code = parsed["metadata"].get("exit_code")
            return code if isinstance(code, int) and not isinstance(code, bool) else None
    match = _EXIT_CODE.search(text[:200])
    return int(match.group(1)) if match else None
