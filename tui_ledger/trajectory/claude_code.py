"""Inside a Claude Code session: one step per API response, per prompt, per tool result.

The row is what `importers.claude_code` made of the session: its `source` (the file the
session's first line is in), `session_id`, `responses` and `subagent_files`. The reader
reads that file's lines of the session, and its sub-agents' transcripts
(`<session id>/subagents/*.jsonl` beside it) when the ledger counted them into the session
(`subagent_files` > 0), so the steps' tokens are the ones the loader added up:

- An assistant response is ONE agent step, however many lines its stream wrote (one per
  content block, all with the same `message.id` + `requestId` and the usage so far): its
  text, its thinking, its tool calls, and the tool results the following user lines answer
  them with (matched by `tool_use_id`; `is_error` marks the step failed). Its tokens are the
  largest usage of its lines, exactly as the loader counts it: input_tokens,
  cache_read_input_tokens -> cached_input_tokens, cache_creation_input_tokens ->
  cache_write_tokens, output_tokens; tokens = the buckets summed.
- A response already seen (a repeat later in the log, or in another file read) is not a new
  step; a line with no ids to recognise it by is a step of its own, counted as it stands.
- `<synthetic>` messages (Claude Code's own, never billed) are steps of kind `synthetic`
  without tokens; `isApiErrorMessage` ones are kind `api_error`, failed. System lines that
  say something (an API error and its retry, a compaction) are system steps.
- A user prompt is a user step; sub-agents' steps carry their agent (`agentId`, or the
  sidechain they ran in) and are placed among the session's steps by time.

Streaming: the log is read a line at a time; a step is handed on once its response and its
tool results are written, so the first steps come at once and memory stays at the steps
read. What the reader learns by the end (responses whose final count was never written,
a response count that differs from the ledger's) is appended to `Opened.notes` as the last
step is read.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_ledger.importers.claude_code import USAGE_BUCKETS
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

SYNTHETIC_MODEL = "<synthetic>"
# A response whose output count stays below a tenth of its written characters never got
# its final count: Claude Code wrote only the stream's placeholder (1, 8, 9 ...).
CHARS_PER_TOKEN_CEILING = 10
PLACEHOLDER_MIN_CHARS = 200
_NOTED_STEPS = 5


def open(row: Mapping[str, Any]) -> Opened:
    """The session's logs, opened: its files found, its first prompt read, its steps to read."""
    source = source_file(row, "Claude Code session")
    session_id = text_or_none(row.get("session_id"))
    files = [source]
    counted_subagents = row.get("subagent_files")
    beside = _subagent_files(source, session_id)
    notes: list[str] = []
    if counted_subagents is None or counted_subagents > 0:
        files += beside
    elif beside:
        were = "was" if len(beside) == 1 else "were"
        notes.append(
            f"{counted(len(beside), 'sub-agent transcript')} beside the session {were} not "
            "loaded into the ledger (the session file was opened alone): not read"
        )
    expected = row.get("responses")
    if not isinstance(expected, int):
        expected = None
    reader = _SessionReader(files, session_id, notes, expected)
    return Opened(
        files=[str(file) for file in files],
        instruction=_first_prompt(source, session_id),
        verdict=Verdict(),
        steps=reader.steps(),
        notes=notes,
    )


def _subagent_files(source: Path, session_id: str | None) -> list[Path]:
    folders = {source.parent / source.stem}
    if session_id:
        folders.add(source.parent / session_id)
    found: set[Path] = set()
    for folder in folders:
        subagents = folder / "subagents"
        if subagents.is_dir():
            found.update(path for path in subagents.glob("*.jsonl") if path.is_file())
    found.discard(source)
    return sorted(found)


def _first_prompt(source: Path, session_id: str | None) -> str | None:
    """The session's first prompt, from the head of its file (None if the head has none)."""
    for line in head_records(source):
        if not isinstance(line, dict) or line.get("type") != "user":
            continue
        if session_id is not None and line.get("sessionId") != session_id:
            continue
        if line.get("isMeta") or line.get("isSidechain") or line.get("isCompactSummary"):
            continue
        message = line.get("message")
        if not isinstance(message, dict):
            continue
        text = _prompt_text(message.get("content"))
        if text:
            return text
    return None


def _prompt_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        blocks = [
            block
            for block in content
            if not (isinstance(block, dict) and block.get("type") == "tool_result")
        ]
        return content_text(blocks)
    return ""


@dataclass
class _Draft:
    """A step being read: what its lines said so far."""

    source: Who
    agent: str | None
    timestamp: str | None
    kind: str | None = None
    error: bool = False
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)
    observation: str | None = None
    usage: dict[str, int | None] | None = None
    key: tuple[str, str] | None = None
    closed: bool = False
    seen_blocks: set[str] = field(default_factory=set)
    index: int = 0

    @property
    def total(self) -> int:
        return sum(value or 0 for value in (self.usage or {}).values())

    def looks_unfinished(self) -> bool:
        """Its output count is the stream's placeholder: far below what it wrote."""
        if self.usage is None:
            return False
        written = sum(map(len, self.texts)) + sum(map(len, self.thinking))
        written += sum(len(call.arguments) for call in self.calls)
        output = self.usage.get("output_tokens") or 0
        return written >= PLACEHOLDER_MIN_CHARS and output * CHARS_PER_TOKEN_CEILING < written

    def step(self, index: int) -> Step:
        observation = self.observation
        if self.results:
            observation = call_results(self.calls, self.results) or ""
        usage = self.usage or {}
        buckets = (
            usage.get("input_tokens"),
            usage.get("cached_input_tokens"),
            usage.get("cache_write_tokens"),
            usage.get("output_tokens"),
        )
        return make_step(
            index,
            self.source,
            reply_text(self.texts, self.thinking),
            tool_calls=self.calls,
            observation=observation,
            buckets=buckets,
            # A usage recording no count at all is a response that spent none.
            tokens=None if self.usage is None else 0,
            timestamp=self.timestamp,
            error=self.error,
            agent=self.agent,
            kind=self.kind,
        )


@dataclass
class _Shared:
    """What the files of one session share: the responses counted, by their ids."""

    responses: dict[tuple[str, str], _Draft | int] = field(default_factory=dict)
    counted: int = 0
    repeats: int = 0
    late_larger: int = 0
    unfinished: list[_Draft] = field(default_factory=list)


class _SessionReader:
    def __init__(
        self, files: list[Path], session_id: str | None, notes: list[str], expected: int | None
    ) -> None:
        self.files = files
        self.session_id = session_id
        self.notes = notes
        self.expected = expected
        self.shared = _Shared()

    def steps(self) -> Iterator[Step]:
        """Every file's steps merged by time (a file's own order kept), numbered from 1."""
        merged = heapq.merge(
            *(self._keyed(file, position) for position, file in enumerate(self.files)),
            key=lambda item: item[0],
        )
        for index, (_, draft) in enumerate(merged, start=1):
            draft.index = index
            if draft.looks_unfinished():
                self.shared.unfinished.append(draft)
            yield draft.step(index)
        self._finish()

    def _keyed(self, file: Path, position: int) -> Iterator[tuple[tuple[str, int, int], _Draft]]:
        last = ""
        for sequence, draft in enumerate(self._drafts(file, _agent_of_file(file, position))):
            last = draft.timestamp or last
            yield (last, position, sequence), draft

    def _drafts(self, file: Path, file_agent: str | None) -> Iterator[_Draft]:
        """The steps of one file, finished, in the order the file began them."""
        reading = _FileReading(file, file_agent, self.session_id, self.shared)
        for number, line in json_lines(file):
            reading.take(number, line)
            yield from reading.finished()
        reading.close_all()
        yield from reading.finished()

    def _finish(self) -> None:
        shared = self.shared
        if shared.repeats:
            self.notes.append(
                f"{counted(shared.repeats, 'streamed line')} repeated a response already read "
                "(same message.id and requestId): each response is one step, at its largest "
                "usage, as the ledger counts it"
            )
        if shared.unfinished:
            shown = ", ".join(str(draft.index) for draft in shared.unfinished[:_NOTED_STEPS])
            more = " …" if len(shared.unfinished) > _NOTED_STEPS else ""
            self.notes.append(
                f"{counted(len(shared.unfinished), 'response')} (steps {shown}{more}) never got "
                "their final output count (a stream cut off: the log kept its placeholder, "
                "anthropics/claude-code#25941): their output tokens, and the ledger's, are "
                "below what was billed"
            )
        if shared.late_larger:
            self.notes.append(
                f"{counted(shared.late_larger, 'response')} came again later with a larger "
                "count after its step was shown: the ledger counts the larger one, so the "
                "steps' tokens differ"
            )
        if self.expected is not None and shared.counted != self.expected:
            self.notes.append(
                f"the ledger counted {counted(self.expected, 'response')} for this session and "
                f"its files hold {shared.counted}: a resumed session replays the responses of "
                "the one it resumed, which the ledger counts once, under the session read first"
            )


def _agent_of_file(file: Path, position: int) -> str | None:
    if position == 0:
        return None
    name = file.stem
    return name.removeprefix("agent-") or name


class _FileReading:
    """One file's lines folded into steps, finished in the order they began."""

    def __init__(
        self, file: Path, file_agent: str | None, session_id: str | None, shared: _Shared
    ) -> None:
        self.file = file
        self.file_agent = file_agent
        self.session_id = session_id
        self.shared = shared
        self.queue: deque[_Draft] = deque()
        self.open_response: dict[str | None, _Draft] = {}
        self.by_call: dict[str, _Draft] = {}

    def finished(self) -> Iterator[_Draft]:
        while self.queue and self.queue[0].closed:
            draft = self.queue.popleft()
            for call in draft.calls:
                if call.id is not None and self.by_call.get(call.id) is draft:
                    del self.by_call[call.id]
            if draft.key is not None and self.shared.responses.get(draft.key) is draft:
                self.shared.responses[draft.key] = draft.total
            if self.open_response.get(draft.agent) is draft:
                del self.open_response[draft.agent]
            yield draft

    def close_all(self) -> None:
        for draft in self.queue:
            draft.closed = True

    def take(self, number: int, line: Any) -> None:
        where = f"{self.file}: line {number}"
        if not isinstance(line, dict):
            raise TrajectoryError(f"{where} is not a Claude Code transcript line (an object)")
        session = line.get("sessionId")
        if session is None or (self.session_id is not None and session != self.session_id):
            return
        kind = line.get("type")
        if kind not in ("assistant", "user", "system"):
            return
        agent = self._agent(line)
        timestamp = iso_time(line.get("timestamp"))
        if kind == "system":
            self._system(line, agent, timestamp)
            return
        message = line.get("message")
        if kind == "user":
            if isinstance(message, dict):  # the loader reads no user line: nor does it fail one
                self._user(line, message, agent, timestamp)
            return
        if not isinstance(message, dict):
            raise TrajectoryError(f"{where}: message is {message!r}, not an object")
        self._assistant(line, message, agent, timestamp, where)

    def _agent(self, line: Mapping[str, Any]) -> str | None:
        if self.file_agent is not None:
            return text_or_none(line.get("agentId")) or self.file_agent
        if line.get("isSidechain"):
            return text_or_none(line.get("agentId")) or "sidechain"
        return None

    def _close_open(self, agent: str | None) -> None:
        draft = self.open_response.pop(agent, None)
        if draft is not None:
            draft.closed = True

    def _assistant(
        self,
        line: Mapping[str, Any],
        message: Mapping[str, Any],
        agent: str | None,
        timestamp: str | None,
        where: str,
    ) -> None:
        model = text_or_none(message.get("model"))
        usage = message.get("usage")
        counted = usage is not None and model != SYNTHETIC_MODEL
        counts = _usage(usage, where) if counted else None
        message_id, request_id = message.get("id"), line.get("requestId")
        key = None
        if counted and isinstance(message_id, str) and isinstance(request_id, str):
            key = (message_id, request_id)
        if key is not None:
            known = self.shared.responses.get(key)
            if known is not None:
                self.shared.repeats += 1
                assert counts is not None
                if isinstance(known, int):
                    if sum(value or 0 for value in counts.values()) > known:
                        self.shared.late_larger += 1
                    return
                if sum(value or 0 for value in counts.values()) > known.total:
                    known.usage = counts
                self._blocks(known, message.get("content"))
                return
        self._close_open(agent)
        draft = _Draft("agent", agent, timestamp, key=key, usage=counts)
        if model == SYNTHETIC_MODEL:
            draft.kind = "synthetic"
        if line.get("isApiErrorMessage"):
            draft.kind, draft.error = "api_error", True
        self._blocks(draft, message.get("content"))
        if counted:
            self.shared.counted += 1
        if key is not None:
            self.shared.responses[key] = draft
        self.queue.append(draft)
        if key is None:
            draft.closed = not draft.calls
            if draft.calls:
                self.open_response[agent] = draft
        else:
            self.open_response[agent] = draft

    def _blocks(self, draft: _Draft, content: Any) -> None:
        blocks = content if isinstance(content, list) else [content]
        for block in blocks:
            if block is None:
                continue
            seen = as_json(block)
            if seen in draft.seen_blocks:
                continue
            draft.seen_blocks.add(seen)
            if isinstance(block, str):
                draft.texts.append(block)
                continue
            if not isinstance(block, dict):
                draft.texts.append(seen)
                continue
            kind = block.get("type")
            if kind == "text":
                draft.texts.append(str(block.get("text") or ""))
            elif kind == "thinking":
                draft.thinking.append(str(block.get("thinking") or ""))
            elif kind == "redacted_thinking":
                draft.thinking.append("[redacted]")
            elif kind in ("tool_use", "server_tool_use"):
                call_id = text_or_none(block.get("id"))
                name = text_or_none(block.get("name")) or "tool"
                draft.calls.append(ToolCall(name, as_json(block.get("input")), call_id))
                if call_id is not None:
                    self.by_call[call_id] = draft
            else:
                draft.texts.append(content_text([block]))

    def _user(
        self,
        line: Mapping[str, Any],
        message: Mapping[str, Any],
        agent: str | None,
        timestamp: str | None,
    ) -> None:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        prompt: list[Any] = []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self._result(block, agent, timestamp)
            elif block is not None:
                prompt.append(block)
        text = content_text(prompt)
        if not text.strip():
            return
        self._close_open(agent)
        kind = None
        if line.get("isCompactSummary"):
            kind = "compact_summary"
        elif line.get("isMeta"):
            kind = "meta"
        self.queue.append(_Draft("user", agent, timestamp, kind=kind, texts=[text], closed=True))

    def _result(self, block: Mapping[str, Any], agent: str | None, timestamp: str | None) -> None:
        call_id = text_or_none(block.get("tool_use_id"))
        text = content_text(block.get("content"))
        draft = self.by_call.get(call_id) if call_id is not None else None
        if draft is None or call_id is None:
            orphan = _Draft("tool", agent, timestamp, observation=text, closed=True)
            orphan.error = bool(block.get("is_error"))
            self.queue.append(orphan)
            return
        # The response stays open when every call is answered: Claude Code runs a tool while
        # the response still streams, so more of its blocks (and its final count) can follow.
        draft.results[call_id] = text
        if block.get("is_error"):
            draft.error = True

    def _system(self, line: Mapping[str, Any], agent: str | None, timestamp: str | None) -> None:
        subtype = text_or_none(line.get("subtype")) or "system"
        text = content_text(line.get("content"))
        error = line.get("error")
        failed = subtype == "api_error" or line.get("level") == "error"
        if error is not None:
            detail = error if isinstance(error, str) else as_json(error)
            text = f"{text}\n{detail}".strip()
        if subtype == "api_error":
            retry = line.get("retryAttempt")
            if isinstance(retry, int):
                text = f"{text}\n(retry {retry} of {line.get('maxRetries', '?')})".strip()
        if not text.strip():
            return
        draft = _Draft("system", agent, timestamp, kind=subtype, error=failed, texts=[text])
        draft.closed = True
        self.queue.append(draft)


def _usage(usage: Any, where: str) -> dict[str, int | None]:
    if not isinstance(usage, dict):
        raise TrajectoryError(f"{where}: message.usage is {usage!r}, not an object")
    return {
        name: token_count(usage.get(key), f"{where}: message.usage.{key}")
        for name, key in USAGE_BUCKETS
    }
