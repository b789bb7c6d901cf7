"""Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session uuid>.jsonl`.

One attempt per rollout file (one session). Lines are `{timestamp, type, payload}`:
`session_meta` (id, cwd, cli_version, git), `turn_context` (model), `response_item`, and
`event_msg` whose `token_count` payload carries `info.total_token_usage` (cumulative over the
session) and `info.last_token_usage` (the last call). The files hold no task and no verdict:
every session is ungraded until outcomes are joined (`tui_ledger.outcomes_join`, key
`session_id`).

Usage: Codex writes each token_count event more than once (the copies differ only in their
rate limits), so summing `last_token_usage` counts calls twice. The session's usage is its LAST
`total_token_usage`, never a sum. `input_tokens` includes `cached_input_tokens` and
`output_tokens` includes `reasoning_output_tokens`: input_tokens = input - cached, tokens =
input + output. No cache-write bucket, no cost in the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
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
    counted,
    json_lines,
    parse_timestamp,
    peek_text,
    seconds_between,
    text_or_none,
    whole_number,
)
from tui_ledger.importers._template import (
    detect,
    first_file_decides,
    input_files,
    rows_frame,
    walk_files,
)

_FILE_NAME = re.compile(r"^rollout-.*\.jsonl$")
_UUID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$")
_HINT = re.compile(r'"type"\s*:\s*"(session_meta|turn_context|event_msg|response_item)"')
# Detection: ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl is 4 folders below ~/.codex.
_DETECT_DEPTH = 4

CONVENTIONS = (
    "Codex token_count events carry the session's cumulative total_token_usage and are written "
    "more than once: the last total is the session's usage, never a sum",
    "Codex input_tokens includes cached_input_tokens and output_tokens includes "
    "reasoning_output_tokens: input_tokens = input - cached, tokens = input + output",
)

_SCHEMA: dict[str, pl.DataType] = {
    **HARNESS_SCHEMA,
    "reasoning_tokens": pl.Int64(),
    "session_id": pl.String(),
    "models_used": pl.String(),
    "project": pl.String(),
    "git_branch": pl.String(),
    "client_version": pl.String(),
    "token_events": pl.Int64(),
    "source": pl.String(),
    "line": pl.Int64(),
}
_OPTIONAL = ("cost", "cache_write_tokens", "git_branch", "stop_reason", "error_message")


@dataclass(frozen=True)
class CodexImporter(ImporterBase):
    """Codex CLI rollouts: a sessions folder (or any folder above them), or one rollout."""

    name: str = "codex"

    def matches(self, path: Path) -> bool:
        """A `rollout-*.jsonl` of Codex lines, or a folder with one at most four levels down."""
        return detect(path, _looks_like_rollout, _ROLLOUT_VERDICT, _DETECT_DEPTH)

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported:
        """One attempt per rollout below `path` (or the rollout `path` is)."""
        files = input_files(path, _walk_rollouts, "holds no Codex rollout (rollout-*.jsonl)")
        rows = [_read_rollout(file) for file in files]
        unmetered = sum(row["tokens"] is None for row in rows)
        notes = []
        if unmetered:
            notes.append(
                f"{counted(unmetered, 'rollout')} with no token_count event (Codex before "
                "2025-09, or a session that made no call): usage missing"
            )
        frame = rows_frame(rows, _SCHEMA, _OPTIONAL)
        return Imported(frame, CONVENTIONS, tuple(notes))


def _looks_like_rollout(path: Path) -> bool:
    if _FILE_NAME.match(path.name) is None:
        return False
    head = peek_text(path)
    return head.lstrip().startswith("{") and _HINT.search(head) is not None


def _is_rollout_name(name: str) -> bool:
    return _FILE_NAME.match(name) is not None


_ROLLOUT_VERDICT = first_file_decides(_is_rollout_name, _looks_like_rollout)


def _walk_rollouts(root: Path) -> list[Path]:
    return walk_files(root, _is_rollout_name)


def _read_rollout(file: Path) -> dict[str, Any]:
    meta: Mapping[str, Any] = {}
    models: list[str] = []
    total: tuple[Mapping[str, Any], int] | None = None
    events = 0
    first = last = None
    for number, line in json_lines(file):
        where = f"line {number}"
        if not isinstance(line, dict):
            raise ImporterError.at(file, "is not a Codex rollout line", record=where)
        moment = parse_timestamp(line.get("timestamp"), path=file, record=where, field="timestamp")
        if moment is not None:
            first = moment if first is None else min(first, moment)
            last = moment if last is None else max(last, moment)
        payload = line.get("payload")
        kind = line.get("type")
        if kind not in ("session_meta", "turn_context", "event_msg"):
            continue
        if not isinstance(payload, dict):
            raise ImporterError.at(file, f"payload is {payload!r}, not an object", record=where)
        if kind == "session_meta":
            meta = payload
        elif kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model and (not models or models[-1] != model):
                models.append(model)
        elif payload.get("type") == "token_count":
            info = payload.get("info")
            if not isinstance(info, dict) or info.get("total_token_usage") is None:
                continue  # a rate-limit update with no usage
            if not isinstance(info["total_token_usage"], dict):
                raise ImporterError.at(
                    file,
                    f"total_token_usage is {info['total_token_usage']!r}, not an object",
                    record=where,
                )
            total, events = (info["total_token_usage"], number), events + 1
    usage = _usage(total, file)
    model = models[-1] if models else None
    git = meta.get("git")
    cwd = meta.get("cwd")
    match = _UUID.search(file.name)
    return {
        "workflow": f"codex__{model}" if model else "codex",
        "task": None,
        "passed": None,
        "status": "unset",
        **usage,
        "model": model,
        "run": Path(cwd).name if isinstance(cwd, str) and cwd else None,
        "timestamp": first,
        "duration_s": seconds_between(first, last),
        "session_id": text_or_none(meta.get("id")) or (match.group(1) if match else file.stem),
        "models_used": ", ".join(sorted(set(models))) or None,
        "project": text_or_none(cwd),
        "git_branch": text_or_none(git.get("branch")) if isinstance(git, dict) else None,
        "client_version": text_or_none(meta.get("cli_version")),
        "token_events": events,
        "source": str(file),
        "line": 1,
    }


def _usage(total: tuple[Mapping[str, Any], int] | None, file: Path) -> dict[str, Any]:
    empty = dict.fromkeys(
        ("input_tokens", "cached_input_tokens", "output_tokens", "tokens", "reasoning_tokens")
    )
    if total is None:
        return empty
    counts, number = total
    where = f"line {number}"

    def count(key: str) -> int:
        value = whole_number(
            counts.get(key), path=file, record=where, field=f"total_token_usage.{key}"
        )
        return value or 0

    inputs, cached, output = (
        count("input_tokens"),
        count("cached_input_tokens"),
        count("output_tokens"),
    )
    if cached > inputs:
        raise ImporterError.at(
            file,
            f"total_token_usage.cached_input_tokens {cached} exceeds input_tokens {inputs}",
            record=where,
        )
    return {
        "input_tokens": inputs - cached,
        "cached_input_tokens": cached,
        "output_tokens": output,
        "tokens": inputs + output,
        "reasoning_tokens": count("reasoning_output_tokens"),
    }


__all__ = ["CodexImporter"]
