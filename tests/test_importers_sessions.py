"""Claude Code transcripts and Codex rollouts: usage per session, streaming duplicates removed.

The fixture (make_fixture.py) holds the traps FORMATS.md records from real files:
- Claude Code session 1111...: response A streamed as three lines (output 1 -> 8 -> 150, input
  3, cache write 2000), B as two (2 -> 320; input 5, read 2000, write 100), a `<synthetic>`
  error line, and a sub-agent file with response C (input 10, read 500, output 40). Session
  2222... replays B (resumed) and adds D (input 4, read 2100, write 50, output 200, costUSD 0.02).
- Codex: every token_count event written twice; final total_token_usage input 12000 (8000
  cached), output 900 (300 reasoning). An older rollout has no token_count.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.test_importers import rows_by
from tui_ledger.accounting.ledger import compare
from tui_ledger.importers import (
    ClaudeCodeImporter,
    CodexImporter,
    ImporterError,
    find_importer,
    get_importer,
)
from tui_ledger.load import load

SESSIONS = Path(__file__).parent / "fixtures" / "importers" / "sessions"
CLAUDE = SESSIONS / "claude"
PROJECT = CLAUDE / "projects" / "-work-repo-a"
S1 = "11111111-1111-4111-8111-111111111111"
S2 = "22222222-2222-4222-8222-222222222222"
CODEX = SESSIONS / "codex"
DAY = CODEX / "sessions" / "2025" / "10" / "01"
ROLLOUT = DAY / "rollout-2025-10-01T11-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
OLD_ROLLOUT = DAY / "rollout-2025-10-01T09-00-00-0199a1b2-0000-7000-8000-000000000001.jsonl"


def final_counters(files: list[Path]) -> dict[str, int]:
    """The oracle: each (message.id, requestId) once, at its largest usage, first owner wins."""
    best: dict[tuple[str, str], tuple[str, int]] = {}
    for file in files:
        for text in file.read_text().splitlines():
            line = json.loads(text)
            message = line.get("message") or {}
            usage = message.get("usage")
            if line.get("type") != "assistant" or not usage or message["model"] == "<synthetic>":
                continue
            total = sum(
                usage[key]
                for key in (
                    "input_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                    "output_tokens",
                )
            )
            key = (message["id"], line["requestId"])
            owner = best.get(key, (line["sessionId"], 0))[0]
            best[key] = (owner, max(total, best.get(key, ("", 0))[1]))
    totals: dict[str, int] = {}
    for owner, total in best.values():
        totals[owner] = totals.get(owner, 0) + total
    return totals


def test_sessions_are_found_by_name_alias_and_content() -> None:
    for path in (CLAUDE, CLAUDE / "projects", PROJECT, PROJECT / f"{S1}.jsonl"):
        importer = find_importer(path)
        assert importer is not None and importer.name == "claude-code", path
    for path in (CODEX, CODEX / "sessions", DAY, ROLLOUT):
        importer = find_importer(path)
        assert importer is not None and importer.name == "codex", path
    assert isinstance(get_importer("ccusage"), ClaudeCodeImporter)
    assert isinstance(get_importer("codex-cli"), CodexImporter)


def test_claude_code_session_totals_equal_its_final_counters() -> None:
    imported = ClaudeCodeImporter().read_imported(CLAUDE)
    rows = rows_by(imported.frame, "session_id")
    first = rows[S1]
    # A counted once at output 150, B once at 320, C from the sub-agent file; nothing twice.
    assert (
        first["input_tokens"],
        first["cached_input_tokens"],
        first["cache_write_tokens"],
        first["output_tokens"],
        first["tokens"],
    ) == (18, 2500, 2100, 510, 5128)
    assert first["tokens"] == final_counters(sorted(PROJECT.rglob("*.jsonl")))[S1]
    assert (first["responses"], first["subagent_files"]) == (3, 1)
    assert first["workflow"] == "claude-code__claude-sonnet-4-5-20250929"
    assert (first["passed"], first["status"], first["task"]) == (None, "unset", None)
    assert first["cost"] is None  # no costUSD in current versions: price it from the tokens
    assert (first["run"], first["git_branch"], first["client_version"]) == (
        "-work-repo-a",
        "main",
        "2.0.31",
    )
    assert first["duration_s"] == 420.0
    assert first["source"] == str(PROJECT / f"{S1}.jsonl")
    resumed = rows[S2]
    # The replayed response B belongs to the session that made it; D alone is new here.
    assert (resumed["tokens"], resumed["responses"], resumed["cost"]) == (2354, 1, 0.02)
    assert resumed["tokens"] == final_counters(sorted(PROJECT.rglob("*.jsonl")))[S2]
    assert resumed["workflow"] == "claude-code__claude-opus-4-1-20250805"
    assert imported.warnings == (
        "4 streamed lines repeating a response already counted (same message.id and "
        "requestId): counted once",
    )
    assert "counted once" in imported.conventions[1]


def test_claude_code_one_session_file_alone() -> None:
    frame = ClaudeCodeImporter().read(PROJECT / f"{S1}.jsonl")
    row = frame.row(0, named=True)
    assert (row["tokens"], row["responses"]) == (2153 + 2425, 2)  # without the sub-agent file


def test_codex_session_takes_the_last_cumulative_total() -> None:
    imported = CodexImporter().read_imported(CODEX)
    rows = rows_by(imported.frame, "model")
    codex = rows["gpt-5-codex"]
    # Summing last_token_usage would give input 2 x (5000 + 7000) = 24000: the duplicates.
    assert (
        codex["input_tokens"],
        codex["cached_input_tokens"],
        codex["output_tokens"],
        codex["tokens"],
        codex["reasoning_tokens"],
    ) == (4000, 8000, 900, 12900, 300)
    final = json.loads(ROLLOUT.read_text().splitlines()[-2])["payload"]["info"]
    assert codex["tokens"] == final["total_token_usage"]["total_tokens"]
    assert codex["session_id"] == "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert (codex["workflow"], codex["run"], codex["git_branch"]) == (
        "codex__gpt-5-codex",
        "repo-a",
        "main",
    )
    assert (codex["token_events"], codex["duration_s"], codex["status"]) == (4, 360.0, "unset")
    old = rows["o4-mini"]
    assert (old["tokens"], old["input_tokens"]) == (None, None)
    assert imported.warnings == (
        "1 rollout with no token_count event (Codex before 2025-09, or a session that made no "
        "call): usage missing",
    )


def test_sessions_through_the_loader() -> None:
    keep = rows_by(compare(load([SESSIONS / "claude", CODEX]).attempts).keep, "workflow")
    assert keep["claude-code__claude-sonnet-4-5-20250929"]["total_tokens"] == 5128
    assert keep["codex__gpt-5-codex"]["total_tokens"] == 12900
    assert keep["codex__gpt-5-codex"]["ungraded"] == 1
    assert keep["codex__gpt-5-codex"]["tokens_per_accepted_result"] is None


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"sessionId": 5}, "sessionId is 5"),
        ({"message": "hi"}, "message is 'hi', not an object"),
        ({"timestamp": "noon"}, "timestamp 'noon' is not an ISO 8601 time"),
    ],
)
def test_claude_code_a_key_of_the_wrong_type(
    tmp_path: Path, change: dict[str, Any], problem: str
) -> None:
    lines = (PROJECT / f"{S1}.jsonl").read_text().splitlines()
    broken = json.loads(lines[2]) | change
    file = tmp_path / "p" / "s.jsonl"
    file.parent.mkdir()
    file.write_text("\n".join([lines[1], json.dumps(broken)]) + "\n")
    with pytest.raises(ImporterError) as caught:
        ClaudeCodeImporter().read(tmp_path / "p")
    message = str(caught.value)
    assert message.startswith(f"{file}: line 2: ") and problem in message


def test_claude_code_usage_of_the_wrong_type(tmp_path: Path) -> None:
    lines = (PROJECT / f"{S1}.jsonl").read_text().splitlines()
    broken = json.loads(lines[2])
    broken["message"]["usage"]["output_tokens"] = "8"
    file = tmp_path / "p" / "s.jsonl"
    file.parent.mkdir()
    file.write_text(json.dumps(broken) + "\n")
    with pytest.raises(ImporterError, match=r"line 1: message\.usage\.output_tokens is '8'"):
        ClaudeCodeImporter().read(file)


@pytest.mark.parametrize(
    ("total", "problem"),
    [
        ("lots", "total_token_usage is 'lots', not an object"),
        ({"input_tokens": 1.5}, "total_token_usage.input_tokens is 1.5"),
        ({"input_tokens": 10, "cached_input_tokens": 20}, "cached_input_tokens 20 exceeds"),
    ],
)
def test_codex_a_key_of_the_wrong_type(tmp_path: Path, total: Any, problem: str) -> None:
    file = tmp_path / ROLLOUT.name
    shutil.copy(ROLLOUT, file)
    with file.open("a") as handle:
        event = {"type": "token_count", "info": {"total_token_usage": total}}
        handle.write(json.dumps({"type": "event_msg", "payload": event}) + "\n")
    with pytest.raises(ImporterError) as caught:
        CodexImporter().read(file)
    assert str(caught.value).startswith(f"{file}: line 11: ") and problem in str(caught.value)


def test_broken_and_empty(tmp_path: Path) -> None:
    cut = tmp_path / "c" / ROLLOUT.name
    cut.parent.mkdir()
    cut.write_text(ROLLOUT.read_text()[:-40])
    with pytest.raises(ImporterError, match=r"line 10: is not valid JSON"):
        CodexImporter().read(tmp_path / "c")
    session = tmp_path / "p" / f"{S1}.jsonl"
    session.parent.mkdir()
    session.write_text((PROJECT / f"{S1}.jsonl").read_text()[:-30])
    with pytest.raises(ImporterError, match=r"line 9: is not valid JSON"):
        ClaudeCodeImporter().read(tmp_path / "p")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImporterError, match=r"empty: holds no Claude Code session"):
        ClaudeCodeImporter().read(tmp_path / "empty")
    with pytest.raises(ImporterError, match=r"empty: holds no Codex rollout"):
        CodexImporter().read(tmp_path / "empty")
