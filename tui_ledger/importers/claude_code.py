"""Claude Code session transcripts: `~/.claude/projects/<cwd slug>/<session id>.jsonl`.

One attempt per session. Sub-agent transcripts (`<session id>/subagents/agent-*.jsonl`) carry
their parent's `sessionId` and are rolled up into it: a sub-agent's work is part of the session.
The files hold no task and no verdict: every session is ungraded until outcomes are joined
(`tui_ledger.outcomes_join`, key `session_id`).

Usage, as ccusage reads it:
- only `type: "assistant"` lines carry `message.usage`, in the Anthropic API's buckets:
  `input_tokens` excludes the cache; `cache_read_input_tokens`, `cache_creation_input_tokens`
  and `output_tokens` are apart. tokens = the four summed.
- **Streaming duplicates**: one API response is written as one line per content block, each
  with the same `message.id` and `requestId` and the usage so far (an early line may hold a
  placeholder output count). A response is counted ONCE, with the largest of its entries,
  wherever it appears (a resumed session replays earlier responses into its new file).
- `<synthetic>` model lines are Claude Code's own error messages, never billed: skipped.
- cost = the sum of `costUSD` (older Claude Code versions) when every counted response has one;
  otherwise unknown (price it from the tokens).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
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
    json_lines,
    parse_timestamp,
    peek_text,
    real_number,
    seconds_between,
    text_or_none,
    whole_number,
)
from tui_ledger.importers._template import detect, first_file_decides, input_files, walk_files

SYNTHETIC_MODEL = "<synthetic>"
_HINT = re.compile(r'"sessionId"\s*:')
_SHAPE_HINT = re.compile(r'"(parentUuid|isSidechain|userType)"\s*:')
# Detection: ~/.claude/projects/<slug>/<session>.jsonl is 2 folders below ~/.claude.
_DETECT_DEPTH = 2
# The ledger's bucket -> message.usage's key (the trajectory reader counts steps by it too).
USAGE_BUCKETS = (
    ("input_tokens", "input_tokens"),
    ("cached_input_tokens", "cache_read_input_tokens"),
    ("cache_write_tokens", "cache_creation_input_tokens"),
    ("output_tokens", "output_tokens"),
)

CONVENTIONS = (
    "Claude Code message.usage follows the Anthropic API: input_tokens excludes cache reads "
    "(cache_read_input_tokens) and writes (cache_creation_input_tokens); tokens = the four "
    "buckets summed",
    "Claude Code writes a streamed response once per content block with one message.id and "
    "requestId: each response is counted once, with its largest usage (as ccusage does)",
)

_SCHEMA: dict[str, pl.DataType] = {
    **HARNESS_SCHEMA,
    "session_id": pl.String(),
    "responses": pl.Int64(),
    "models_used": pl.String(),
    "project": pl.String(),
    "git_branch": pl.String(),
    "client_version": pl.String(),
    "subagent_files": pl.Int64(),
    "source": pl.String(),
    "line": pl.Int64(),
}
_OPTIONAL = ("cost", "git_branch", "client_version", "stop_reason", "error_message")


@dataclass(frozen=True)
class ClaudeCodeImporter(ImporterBase):
    """Claude Code session transcripts: a projects folder, a project folder, or one session."""

    name: str = "claude-code"

    def matches(self, path: Path) -> bool:
        """A Claude Code transcript, or a folder with one at most two levels down."""
        return detect(path, _looks_like_session, _SESSION_VERDICT, _DETECT_DEPTH)

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported:
        """One attempt per session below `path` (or the session `path` is)."""
        files = input_files(path, _walk_sessions, "holds no Claude Code session (*.jsonl)")
        sessions: dict[str, _Session] = {}
        responses: dict[tuple[str, str], _Response] = {}
        duplicates = 0
        for file in files:
            for number, line in json_lines(file):
                duplicates += _read_line(line, file, number, sessions, responses)
        for response in responses.values():
            response.session.add(response)
        if not sessions:
            raise ImporterError.at(path, "holds no Claude Code session lines")
        columns: dict[str, list[Any]] = {name: [] for name in _SCHEMA}
        for session in sessions.values():
            row = session.row()
            for name in columns:
                columns[name].append(row.get(name))
        notes = []
        if duplicates:
            notes.append(
                f"{counted(duplicates, 'streamed line')} repeating a response already counted "
                "(same message.id and requestId): counted once"
            )
        frame = build_frame(columns, _SCHEMA, drop_if_all_null=_OPTIONAL)
        return Imported(frame, CONVENTIONS, tuple(notes))


def _looks_like_session(path: Path) -> bool:
    if path.suffix != ".jsonl":
        return False
    head = peek_text(path)
    return (
        head.lstrip().startswith("{")
        and _HINT.search(head) is not None
        and _SHAPE_HINT.search(head) is not None
    )


def _is_jsonl(name: str) -> bool:
    return name.endswith(".jsonl")


_SESSION_VERDICT = first_file_decides(_is_jsonl, _looks_like_session)


def _walk_sessions(root: Path) -> list[Path]:
    return walk_files(root, _is_jsonl)


@dataclass
class _Response:
    """One API response: its largest usage entry, and the session it was first seen in."""

    session: _Session
    usage: dict[str, int]
    model: str | None
    cost: float | None

    @property
    def total(self) -> int:
        return sum(self.usage.values())


@dataclass
class _Session:
    session_id: str
    file: Path
    line: int
    first: datetime | None = None
    last: datetime | None = None
    files: set[Path] = field(default_factory=set)
    project: str | None = None
    git_branch: str | None = None
    version: str | None = None
    totals: dict[str, int] = field(default_factory=dict)
    models: Counter[str] = field(default_factory=Counter)
    responses: int = 0
    cost: float | None = 0.0

    def see(self, moment: datetime | None, file: Path) -> None:
        self.files.add(file)
        if moment is not None:
            self.first = moment if self.first is None else min(self.first, moment)
            self.last = moment if self.last is None else max(self.last, moment)

    def add(self, response: _Response) -> None:
        for name, value in response.usage.items():
            self.totals[name] = self.totals.get(name, 0) + value
        if response.model:
            self.models[response.model] += 1
        self.responses += 1
        self.cost = (
            None if self.cost is None or response.cost is None else self.cost + response.cost
        )

    def row(self) -> dict[str, Any]:
        model = self.models.most_common(1)[0][0] if self.models else None
        buckets = {name: self.totals.get(name, 0) for name, _ in USAGE_BUCKETS}
        recorded = self.responses > 0
        return {
            "workflow": f"claude-code__{model}" if model else "claude-code",
            "task": None,
            "passed": None,
            "status": "unset",
            **(buckets if recorded else dict.fromkeys(buckets)),
            "tokens": sum(buckets.values()) if recorded else None,
            "model": model,
            "run": self.project,
            "timestamp": self.first,
            "duration_s": seconds_between(self.first, self.last),
            "cost": self.cost if recorded and self.cost is not None else None,
            "session_id": self.session_id,
            "responses": self.responses,
            "models_used": ", ".join(sorted(self.models)) or None,
            "project": self.project,
            "git_branch": self.git_branch,
            "client_version": self.version,
            "subagent_files": sum("subagents" in file.parts for file in self.files),
            "source": str(self.file),
            "line": self.line,
        }


def _read_line(
    line: Any,
    file: Path,
    number: int,
    sessions: dict[str, _Session],
    responses: dict[tuple[str, str], _Response],
) -> int:
    """Fold one transcript line into its session; 1 when it repeats a counted response."""
    where = f"line {number}"
    if not isinstance(line, dict):
        raise ImporterError.at(file, "is not a Claude Code transcript line", record=where)
    session_id = line.get("sessionId")
    if session_id is None:
        return 0  # summaries and file snapshots belong to no turn
    if not isinstance(session_id, str):
        raise ImporterError.at(file, f"sessionId is {session_id!r}", record=where)
    session = sessions.get(session_id)
    if session is None:
        session = sessions[session_id] = _Session(session_id, file, number)
        # The project folder is the cwd slug: <projects>/<slug>/<session>.jsonl.
        session.project = (file.parents[2] if "subagents" in file.parts else file.parent).name
    moment = parse_timestamp(line.get("timestamp"), path=file, record=where, field="timestamp")
    session.see(moment, file)
    session.git_branch = text_or_none(line.get("gitBranch")) or session.git_branch
    session.version = text_or_none(line.get("version")) or session.version
    if line.get("type") != "assistant":
        return 0
    message = line.get("message")
    if not isinstance(message, dict):
        raise ImporterError.at(file, f"message is {message!r}, not an object", record=where)
    usage = message.get("usage")
    model = text_or_none(message.get("model"))
    if usage is None or model == SYNTHETIC_MODEL:
        return 0
    if not isinstance(usage, dict):
        raise ImporterError.at(file, f"message.usage is {usage!r}, not an object", record=where)
    counts = {
        name: whole_number(usage.get(key), path=file, record=where, field=f"message.usage.{key}")
        or 0
        for name, key in USAGE_BUCKETS
    }
    cost = real_number(line.get("costUSD"), path=file, record=where, field="costUSD")
    entry = _Response(session, counts, model, cost)
    message_id, request_id = message.get("id"), line.get("requestId")
    if not isinstance(message_id, str) or not isinstance(request_id, str):
        session.add(entry)  # nothing to recognise a repeat by: counted as it stands
        return 0
    key = (message_id, request_id)
    known = responses.get(key)
    if known is None:
        responses[key] = entry
        return 0
    if entry.total > known.total:  # a later line of the stream: the fuller count
        known.usage, known.cost = entry.usage, entry.cost if entry.cost is not None else known.cost
    return 1


__all__ = ["ClaudeCodeImporter"]
