"""Inside Claude Code sessions and Codex rollouts: steps whose tokens add up to the ledger's.

Every fixture is written by the test, each reproducing a trap FORMATS.md records from real
files: a response streamed as one line per content block with cumulative usage, sub-agent
transcripts, `<synthetic>` messages and API errors, Codex's token_count events written twice,
last_token_usage against the running total, and a line cut off. The property tests load
random sessions with `tui_ledger.load.load` and check the steps add up to the row's tokens.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_ledger.load import load
from tui_ledger.trajectory import (
    EQUAL,
    NOT_RECORDED,
    Opened,
    Step,
    TrajectoryError,
    open_attempt,
    read_attempt,
    steps_tokens,
    tokens_match,
)

SID = "11111111-1111-4111-8111-111111111111"
OTHER = "22222222-2222-4222-8222-222222222222"
MODEL = "claude-sonnet-4-5-20250929"


# -- Claude Code builders ----------------------------------------------------------------


def at(second: int) -> str:
    return f"2025-10-01T10:{second // 60:02d}:{second % 60:02d}.000Z"


def cc_line(kind: str, second: int, session: str = SID, **fields: Any) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/repo",
        "sessionId": session,
        "version": "2.0.31",
        "type": kind,
        "timestamp": at(second),
        **fields,
    }


def usage(inputs: int, read: int, write: int, output: int) -> dict[str, Any]:
    return {
        "input_tokens": inputs,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "output_tokens": output,
        "service_tier": "standard",
    }


def assistant(
    second: int,
    message_id: str | None,
    request_id: str | None,
    block: dict[str, Any],
    counts: dict[str, Any] | None,
    *,
    model: str = MODEL,
    session: str = SID,
    **fields: Any,
) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "message", "role": "assistant", "model": model}
    message["content"] = [block]
    if message_id is not None:
        message["id"] = message_id
    if counts is not None:
        message["usage"] = counts
    line = cc_line("assistant", second, session, message=message, **fields)
    if request_id is not None:
        line["requestId"] = request_id
    return line


def prompt(second: int, text: str, session: str = SID, **fields: Any) -> dict[str, Any]:
    return cc_line("user", second, session, message={"role": "user", "content": text}, **fields)


def result(second: int, call_id: str, text: str, *, error: bool = False, **fields: Any) -> Any:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": error}
    return cc_line("user", second, message={"role": "user", "content": [block]}, **fields)


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def project(tmp_path: Path) -> Path:
    return tmp_path / "projects" / "-work-repo"


def session_file(tmp_path: Path, lines: list[Any], session: str = SID) -> Path:
    return write_lines(project(tmp_path) / f"{session}.jsonl", lines)


def ledger_rows(path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    """The ledger's rows for `path`, loaded from its folder so `source` opens as it is."""
    monkeypatch.chdir(path.parent if path.is_file() else path)
    attempts = load([Path(path.name if path.is_file() else ".")]).attempts
    rows = [attempts.row(i, named=True) for i in range(attempts.height)]
    return {str(row["session_id"]): row for row in rows}


def streamed(second: int = 1) -> list[dict[str, Any]]:
    """Response A as three lines: text, thinking, a tool call; output 1 -> 8 -> 150."""
    ids = ("msg_A", "req_A")
    text = {"type": "text", "text": "Let me look."}
    thinking = {"type": "thinking", "thinking": "The test fails on an import.", "signature": "x"}
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    return [
        assistant(second, *ids, text, usage(3, 0, 2000, 1)),
        assistant(second, *ids, thinking, usage(3, 0, 2000, 8)),
        assistant(second + 1, *ids, call, usage(3, 0, 2000, 150)),
    ]


def test_a_streamed_response_is_one_step_at_its_largest_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = {"type": "text", "text": "Fixed."}
    lines = [
        prompt(0, "fix the failing test"),
        *streamed(1),
        result(3, "toolu_1", "tests/ src/"),
        assistant(4, "msg_B", "req_B", answer, usage(5, 2000, 100, 2)),
        assistant(4, "msg_B", "req_B", answer, usage(5, 2000, 100, 320)),
    ]
    file = session_file(tmp_path, lines)
    row = ledger_rows(file, monkeypatch)[SID]
    opened = open_attempt(row)
    assert opened.instruction == "fix the failing test"
    steps = list(opened.steps)
    assert [step.source for step in steps] == ["user", "agent", "agent"]
    first = steps[1]
    assert first.text == "Let me look.\n\n(thinking) The test fails on an import."
    assert [(call.name, json.loads(call.arguments), call.id) for call in first.tool_calls] == [
        ("Bash", {"command": "ls"}, "toolu_1")
    ]
    assert first.observation == "tests/ src/"
    assert (
        first.input_tokens,
        first.cached_input_tokens,
        first.cache_write_tokens,
        first.output_tokens,
        first.tokens,
    ) == (3, 0, 2000, 150, 2153)
    assert steps[2].tokens == 5 + 2000 + 100 + 320
    assert steps[0].tokens is None and steps[0].timestamp == at(0)
    assert tokens_match(steps, row["tokens"]) == (EQUAL, 0)
    assert any("3 streamed lines repeated" in note for note in opened.notes)


def test_a_failed_tool_result_marks_its_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [prompt(0, "run it"), *streamed(1), result(3, "toolu_1", "no such file", error=True)]
    row = ledger_rows(session_file(tmp_path, lines), monkeypatch)[SID]
    agent = read_attempt(row).steps[1]
    assert agent.error and agent.observation == "no such file"


def test_a_tool_runs_while_its_response_still_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Claude Code runs the first call before the second block (and the final count) arrive.
    first = {"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {"file": "a"}}
    second = {"type": "tool_use", "id": "toolu_b", "name": "Read", "input": {"file": "b"}}
    lines = [
        prompt(0, "read both"),
        assistant(1, "msg_A", "req_A", first, usage(3, 0, 10, 1)),
        result(2, "toolu_a", "A"),
        assistant(3, "msg_A", "req_A", second, usage(3, 0, 10, 90)),
        result(4, "toolu_b", "B"),
    ]
    row = ledger_rows(session_file(tmp_path, lines), monkeypatch)[SID]
    trajectory = read_attempt(row)
    assert len(trajectory.steps) == 2
    agent = trajectory.steps[1]
    assert [call.id for call in agent.tool_calls] == ["toolu_a", "toolu_b"]
    assert agent.observation == "[Read]\nA\n\n[Read]\nB"
    assert agent.tokens == 103 == row["tokens"]


def test_sub_agents_steps_are_inside_the_attempt_marked_with_their_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = {"type": "tool_use", "id": "toolu_t", "name": "Task", "input": {"prompt": "look"}}
    session_file(
        tmp_path,
        [
            prompt(0, "explore"),
            assistant(1, "msg_A", "req_A", task, usage(3, 0, 100, 40)),
            result(30, "toolu_t", "found it"),
            assistant(31, "msg_B", "req_B", {"type": "text", "text": "done"}, usage(1, 1, 1, 1)),
        ],
    )
    sub = project(tmp_path) / SID / "subagents" / "agent-a1b2c3.jsonl"
    side = {"isSidechain": True, "agentId": "a1b2c3"}
    write_lines(
        sub,
        [
            prompt(2, "look", **side),
            assistant(
                3, "msg_S", "req_S", {"type": "text", "text": "x"}, usage(10, 500, 0, 1), **side
            ),
            assistant(
                3, "msg_S", "req_S", {"type": "text", "text": "y"}, usage(10, 500, 0, 40), **side
            ),
        ],
    )
    row = ledger_rows(project(tmp_path), monkeypatch)[SID]
    assert row["subagent_files"] == 1
    opened = open_attempt(row)
    assert opened.files == [f"{SID}.jsonl", f"{SID}/subagents/agent-a1b2c3.jsonl"]
    steps = list(opened.steps)
    assert [(step.source, step.agent) for step in steps] == [
        ("user", None),
        ("agent", None),
        ("user", "a1b2c3"),
        ("agent", "a1b2c3"),
        ("agent", None),
    ]
    assert steps[3].tokens == 550 and steps[3].text == "x\n\ny"
    assert [step.index for step in steps] == [1, 2, 3, 4, 5]
    assert tokens_match(steps, row["tokens"]) == (EQUAL, 0)


def test_a_session_file_opened_alone_leaves_its_sub_agents_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = session_file(tmp_path, [prompt(0, "go"), *streamed(1)])
    side = {"isSidechain": True, "agentId": "z"}
    line = assistant(5, "msg_S", "req_S", {"type": "text", "text": "x"}, usage(1, 0, 0, 1), **side)
    write_lines(project(tmp_path) / SID / "subagents" / "agent-z.jsonl", [line])
    row = ledger_rows(file, monkeypatch)[SID]
    trajectory = read_attempt(row)
    assert trajectory.files == (f"{SID}.jsonl",)
    assert trajectory.steps_tokens == row["tokens"] == 2153
    assert any("1 sub-agent transcript beside the session was not" in n for n in trajectory.notes)


def test_sidechain_lines_in_the_session_file_are_a_sub_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    side = {"isSidechain": True}
    lines = [
        prompt(0, "go"),
        assistant(1, "msg_S", "req_S", {"type": "text", "text": "x"}, usage(1, 0, 0, 9), **side),
        *streamed(2),
    ]
    row = ledger_rows(session_file(tmp_path, lines), monkeypatch)[SID]
    steps = read_attempt(row).steps
    assert [step.agent for step in steps] == [None, "sidechain", None]
    assert steps_tokens(steps) == row["tokens"] == 10 + 2153


def test_synthetic_messages_and_api_errors_are_marked_and_never_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    error_text = {"type": "text", "text": "API Error: 529 Overloaded"}
    lines = [
        prompt(0, "go"),
        assistant(
            1,
            "m1",
            None,
            {"type": "text", "text": "No response requested."},
            usage(0, 0, 0, 0),
            model="<synthetic>",
        ),
        assistant(
            2,
            "m2",
            None,
            error_text,
            usage(0, 0, 0, 0),
            model="<synthetic>",
            isApiErrorMessage=True,
        ),
        cc_line(
            "system",
            3,
            subtype="api_error",
            level="error",
            error={"status": 529},
            retryAttempt=1,
            maxRetries=10,
        ),
        cc_line("system", 4, subtype="turn_duration", durationMs=5),
        *streamed(5),
    ]
    row = ledger_rows(session_file(tmp_path, lines), monkeypatch)[SID]
    steps = read_attempt(row).steps
    assert [(step.source, step.kind, step.error) for step in steps] == [
        ("user", None, False),
        ("agent", "synthetic", False),
        ("agent", "api_error", True),
        ("system", "api_error", True),
        ("agent", None, False),
    ]
    assert [step.tokens for step in steps] == [None, None, None, None, 2153]
    assert steps[3].text == '{"status": 529}\n(retry 1 of 10)'
    assert row["tokens"] == 2153 and row["responses"] == 1


def test_a_response_left_at_its_placeholder_count_is_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long_text = {"type": "text", "text": "word " * 200}
    lines = [prompt(0, "go"), assistant(1, "msg_A", "req_A", long_text, usage(3, 0, 10, 1))]
    row = ledger_rows(session_file(tmp_path, lines), monkeypatch)[SID]
    trajectory = read_attempt(row)
    assert trajectory.steps_tokens == row["tokens"] == 14
    assert any(note.startswith("1 response (steps 2) never got") for note in trajectory.notes)


def test_a_resumed_session_replaying_responses_says_why_it_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_file(tmp_path, [prompt(0, "go"), *streamed(1)])
    replay = [
        prompt(10, "go on", session=OTHER),
        *[{**line, "sessionId": OTHER} for line in streamed(11)],
        assistant(
            20, "msg_D", "req_D", {"type": "text", "text": "ok"}, usage(4, 0, 0, 6), session=OTHER
        ),
    ]
    session_file(tmp_path, replay, session=OTHER)
    row = ledger_rows(project(tmp_path), monkeypatch)[OTHER]
    trajectory = read_attempt(row)
    assert row["tokens"] == 10
    assert trajectory.steps_tokens == 10 + 2153
    assert any("the ledger counted 1 response for this session" in n for n in trajectory.notes)


def test_lines_of_other_sessions_in_the_file_are_not_this_attempts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [prompt(0, "go"), *streamed(1), prompt(5, "other", session=OTHER)]
    row = ledger_rows(session_file(tmp_path, lines), monkeypatch)[SID]
    assert [step.text for step in read_attempt(row).steps if step.source == "user"] == ["go"]


# -- bad inputs ----------------------------------------------------------------------------


def first_then_error(opened: Opened) -> tuple[list[Step], str]:
    read: list[Step] = []
    with pytest.raises(TrajectoryError) as caught:
        for step in opened.steps:
            read.append(step)
    return read, str(caught.value)


def test_a_line_cut_off_mid_file_ends_the_steps_with_one_line(tmp_path: Path) -> None:
    file = session_file(tmp_path, [prompt(0, "go"), *streamed(1), prompt(9, "next")])
    text = file.read_text().splitlines()
    text[3] = text[3][: len(text[3]) // 2]
    file.write_text("\n".join(text) + "\n")
    read, message = first_then_error(open_attempt({"source": str(file), "session_id": SID}))
    assert [step.source for step in read] == ["user"]
    assert message == f"{file}: line 4: is cut off mid-record (the JSON ends early)"
    file.write_text("\n".join(text[:4]))
    _, message = first_then_error(open_attempt({"source": str(file), "session_id": SID}))
    assert message == f"{file}: line 4: is cut off mid-record (the file ends mid-line)"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"not json at all\n", "line 2: is not valid JSON (Expecting value at line 1, column 1)"),
        (b'{"a": 1}\x00\x01\n', "line 2: holds binary bytes (NUL), not text"),
        (b'{"a": "\xff\xfe"}\n', "line 2: holds bytes that are not UTF-8 text (at byte 7)"),
        (b"[1, 2]\n", "line 2 is not a Claude Code transcript line (an object)"),
    ],
)
def test_claude_code_bad_lines(tmp_path: Path, content: bytes, problem: str) -> None:
    file = project(tmp_path) / f"{SID}.jsonl"
    file.parent.mkdir(parents=True)
    file.write_bytes(json.dumps(prompt(0, "go")).encode() + b"\n" + content)
    read, message = first_then_error(open_attempt({"source": str(file), "session_id": SID}))
    assert len(read) == 1 and message == f"{file}: {problem}"
    assert "\n" not in message


def test_a_missing_session_file(tmp_path: Path) -> None:
    from tui_ledger.trajectory import claude_code, codex

    gone = tmp_path / "gone.jsonl"
    with pytest.raises(TrajectoryError, match=r"gone\.jsonl: no such file"):
        claude_code.open({"source": str(gone), "session_id": SID})
    with pytest.raises(TrajectoryError, match=r"gone\.jsonl: no such file"):
        codex.open({"source": str(gone)})


def test_usage_of_the_wrong_type_names_the_line(tmp_path: Path) -> None:
    bad = assistant(1, "m", "r", {"type": "text", "text": "x"}, usage(1, 0, 0, 1))
    bad["message"]["usage"]["output_tokens"] = "8"
    file = session_file(tmp_path, [prompt(0, "go"), bad])
    _, message = first_then_error(open_attempt({"source": str(file), "session_id": SID}))
    problem = "message.usage.output_tokens is '8', not a whole number of tokens"
    assert message == f"{file}: line 2: {problem}"


# -- Codex builders ------------------------------------------------------------------------

ROLLOUT_ID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"


def cx(kind: str, second: int, **payload: Any) -> dict[str, Any]:
    return {"timestamp": at(second), "type": kind, "payload": payload}


def meta(second: int = 0) -> dict[str, Any]:
    return cx("session_meta", second, id=ROLLOUT_ID, cwd="/work/repo", cli_version="0.60.1")


def counts(inputs: int, cached: int, output: int, reasoning: int = 0) -> dict[str, int]:
    return {
        "input_tokens": inputs,
        "cached_input_tokens": cached,
        "output_tokens": output,
        "reasoning_output_tokens": reasoning,
        "total_tokens": inputs + output,
    }


def token_count(second: int, total: dict[str, int], last: dict[str, int] | None = None) -> Any:
    info = {"total_token_usage": total, "last_token_usage": last, "model_context_window": 1}
    return cx("event_msg", second, type="token_count", info=info, rate_limits=None)


def call(second: int, call_id: str, command: str) -> dict[str, Any]:
    arguments = json.dumps({"command": command})
    return cx(
        "response_item",
        second,
        type="function_call",
        name="shell",
        arguments=arguments,
        call_id=call_id,
    )


def output(second: int, call_id: str, text: str) -> dict[str, Any]:
    return cx("response_item", second, type="function_call_output", call_id=call_id, output=text)


def reasoning(second: int, text: str) -> dict[str, Any]:
    summary = [{"type": "summary_text", "text": text}]
    return cx("response_item", second, type="reasoning", summary=summary, content=None)


def said(second: int, text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text}]
    return cx("response_item", second, type="message", role="assistant", content=content)


def asked(second: int, text: str) -> list[dict[str, Any]]:
    content = [{"type": "input_text", "text": text}]
    return [
        cx("response_item", second, type="message", role="user", content=content),
        cx("event_msg", second, type="user_message", message=text, images=[]),
    ]


def rollout(tmp_path: Path, lines: list[Any]) -> Path:
    name = f"rollout-2025-10-01T10-00-00-{ROLLOUT_ID}.jsonl"
    return write_lines(tmp_path / "sessions" / "2025" / "10" / "01" / name, lines)


def codex_row(file: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    return next(iter(ledger_rows(file, monkeypatch).values()))


def test_codex_calls_take_their_own_count_written_twice_before_their_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Codex 0.60's order: the call's token_count, its items, its output, the count again.
    first, second = counts(3559, 3072, 31), counts(7207, 6144, 64, 10)
    lines = [
        meta(),
        *asked(1, "list the files"),
        cx("event_msg", 2, type="token_count", info=None, rate_limits={}),
        token_count(3, first, first),
        reasoning(3, "**Inspecting repository**"),
        call(3, "call_1", "ls"),
        output(3, "call_1", "Exit code: 0\nOutput:\na.py"),
        token_count(4, first, first),
        token_count(5, second, counts(3648, 3072, 33, 10)),
        said(5, "There is a.py."),
        token_count(6, second, counts(3648, 3072, 33, 10)),
        cx("event_msg", 6, type="task_complete", last_agent_message="There is a.py."),
    ]
    row = codex_row(rollout(tmp_path, lines), monkeypatch)
    opened = open_attempt(row)
    assert opened.instruction == "list the files"
    steps = list(opened.steps)
    assert [step.source for step in steps] == ["user", "agent", "agent"]
    shell = steps[1]
    assert shell.text == "(thinking) **Inspecting repository**"
    assert [(c.name, c.arguments, c.id) for c in shell.tool_calls] == [
        ("shell", '{"command": "ls"}', "call_1")
    ]
    assert shell.observation == "Exit code: 0\nOutput:\na.py" and not shell.error
    assert (shell.input_tokens, shell.cached_input_tokens, shell.output_tokens, shell.tokens) == (
        487,
        3072,
        31,
        3590,
    )
    assert shell.cache_write_tokens is None
    assert steps[2].text == "There is a.py." and steps[2].tokens == 3648 + 33
    assert tokens_match(steps, row["tokens"]) == (EQUAL, 0)
    assert "2 token_count events repeated the running total" in opened.notes[0]


def test_codex_counts_written_after_their_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = counts(1000, 0, 50), counts(2500, 900, 80)
    lines = [
        meta(),
        *asked(1, "go"),
        call(2, "call_1", "false"),
        token_count(3, first),
        token_count(3, first),
        output(4, "call_1", '{"output":"","metadata":{"exit_code":1}}'),
        said(5, "It failed."),
        token_count(6, second),
    ]
    row = codex_row(rollout(tmp_path, lines), monkeypatch)
    steps = read_attempt(row).steps
    assert [(step.source, step.tokens, step.error) for step in steps] == [
        ("user", None, False),
        ("agent", 1050, True),
        ("agent", 1500 + 30, False),
    ]
    assert (steps[2].input_tokens, steps[2].cached_input_tokens) == (600, 900)
    assert steps_tokens(steps) == row["tokens"] == 2580


def test_codex_last_token_usage_that_disagrees_with_the_total_is_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = counts(1000, 0, 50), counts(2500, 900, 80)
    lines = [
        meta(),
        *asked(1, "go"),
        token_count(2, first, first),
        said(2, "one"),
        *asked(3, "again"),
        token_count(4, second, counts(9999, 0, 1)),
        said(4, "two"),
    ]
    row = codex_row(rollout(tmp_path, lines), monkeypatch)
    trajectory = read_attempt(row)
    assert [step.tokens for step in trajectory.steps if step.source == "agent"] == [1050, 1530]
    assert trajectory.steps_tokens == row["tokens"]
    assert any(note.startswith("1 call' last_token_usage differ") for note in trajectory.notes)


def test_codex_user_messages_said_twice_are_one_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = [{"type": "input_text", "text": "<environment_context>\n</environment_context>"}]
    lines = [
        meta(),
        cx("response_item", 0, type="message", role="user", content=context),
        *asked(1, "hello"),
        said(2, "hi"),
    ]
    trajectory = read_attempt(codex_row(rollout(tmp_path, lines), monkeypatch))
    assert [(s.source, s.kind, s.text) for s in trajectory.steps] == [
        ("user", "context", "<environment_context>\n</environment_context>"),
        ("user", None, "hello"),
        ("agent", None, "hi"),
    ]
    assert trajectory.instruction == "hello"
    assert tokens_match(trajectory.steps, None) == (NOT_RECORDED, None)
    assert any("no token_count event with a total" in note for note in trajectory.notes)


def test_codex_a_count_no_items_go_with_and_a_web_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = counts(100, 0, 10), counts(300, 50, 30)
    search = {"type": "search", "query": "polars"}
    lines = [
        meta(),
        *asked(1, "find it"),
        token_count(2, first),  # this call's output is not in the rollout
        token_count(3, second),
        cx("response_item", 3, type="web_search_call", status="completed", action=search),
        said(3, "Found."),
        cx("compacted", 4, message="summary of the conversation"),
    ]
    row = codex_row(rollout(tmp_path, lines), monkeypatch)
    trajectory = read_attempt(row)
    assert [(s.source, s.kind, s.tokens) for s in trajectory.steps] == [
        ("user", None, None),
        ("agent", "model_call", 110),
        ("agent", None, 220),
        ("system", "compacted", None),
    ]
    assert trajectory.steps[2].tool_calls[0].name == "web_search"
    assert trajectory.steps[2].text == "Found."
    assert trajectory.steps_tokens == row["tokens"] == 330
    assert any(note.startswith("1 token count went with no item") for note in trajectory.notes)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"[1, 2]\n", "line 3 is not a Codex rollout line (an object)"),
        (b'{"type": "response_item", "payload": 5}\n', "line 3: payload is 5, not an object"),
        (b"\x89PNG\r\n", "line 3: holds bytes that are not UTF-8 text (at byte 0)"),
    ],
)
def test_codex_bad_lines(tmp_path: Path, line: bytes, problem: str) -> None:
    file = rollout(tmp_path, [meta(), *asked(1, "go")[:1]])
    file.write_bytes(file.read_bytes() + line)
    read, message = first_then_error(open_attempt({"source": str(file)}))
    assert [step.source for step in read] == ["user"] and message == f"{file}: {problem}"


def test_codex_total_of_the_wrong_type(tmp_path: Path) -> None:
    file = rollout(tmp_path, [meta(), token_count(1, counts(1, 0, 1) | {"output_tokens": 1.5})])
    _, message = first_then_error(open_attempt({"source": str(file)}))
    problem = "total_token_usage.output_tokens is 1.5, not a whole number of tokens"
    assert message == f"{file}: line 2: {problem}"


def test_codex_a_call_whose_count_was_never_written_is_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = counts(100, 0, 10)
    lines = [meta(), *asked(1, "go"), said(2, "one"), token_count(2, first), call(3, "c", "ls")]
    row = codex_row(rollout(tmp_path, lines), monkeypatch)
    trajectory = read_attempt(row)
    assert [step.tokens for step in trajectory.steps] == [None, 110, None]
    assert trajectory.steps_tokens == row["tokens"]
    assert any(note.startswith("1 model call got no token_count") for note in trajectory.notes)


def test_codex_a_line_cut_off_mid_file(tmp_path: Path) -> None:
    file = rollout(tmp_path, [meta(), *asked(1, "go"), said(2, "ok"), said(3, "more")])
    text = file.read_text().splitlines()
    file.write_text("\n".join([*text[:4], text[4][:20]]))
    read, message = first_then_error(open_attempt({"source": str(file)}))
    assert [step.source for step in read] == ["user"]
    assert message == f"{file}: line 5: is cut off mid-record (the file ends mid-line)"


# -- property: the steps add up to what the loader counts ----------------------------------


@st.composite
def claude_sessions(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A random session and sub-agent: streamed responses, repeats, synthetic lines, tools."""
    main: list[dict[str, Any]] = [prompt(0, "go")]
    sub: list[dict[str, Any]] = []
    second = 1
    for number in range(draw(st.integers(0, 6))):
        to_sub = draw(st.booleans())
        fields = {"isSidechain": True, "agentId": "s"} if to_sub else {}
        target = sub if to_sub else main
        kind = draw(st.sampled_from(["streamed", "streamed", "no ids", "synthetic", "no usage"]))
        base = [draw(st.integers(0, 5000)) for _ in range(4)]
        ids: tuple[str | None, str | None] = (f"msg_{number}", f"req_{number}")
        if kind == "no ids":
            ids = (None, None)
        model = "<synthetic>" if kind == "synthetic" else MODEL
        growth = draw(st.lists(st.integers(0, 400), min_size=1, max_size=4))
        output = base[3]
        call_id = f"toolu_{number}"
        for part, extra in enumerate(growth):
            output += extra
            counted = None if kind == "no usage" else usage(base[0], base[1], base[2], output)
            if part == len(growth) - 1 and draw(st.booleans()):
                block = {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"n": number}}
            else:
                block = {"type": "text", "text": f"part {part}"}
            target.append(assistant(second, *ids, block, counted, model=model, **fields))
            second += 1
        if draw(st.booleans()):
            target.append(result(second, call_id, "ok", error=draw(st.booleans()), **fields))
            second += 1
    return main, sub


@settings(max_examples=40)
@given(session=claude_sessions())
def test_claude_code_steps_add_up_to_the_loaders_count(
    tmp_path_factory: pytest.TempPathFactory,
    session: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    main, sub = session
    root = tmp_path_factory.mktemp("claude")
    session_file(root, main)
    if sub:
        write_lines(
            project(root) / SID / "subagents" / "agent-s.jsonl",
            [prompt(0, "sub", isSidechain=True, agentId="s"), *sub],
        )
    with pytest.MonkeyPatch.context() as patch:
        row = ledger_rows(project(root), patch)[SID]
        trajectory = read_attempt(row)
    assert trajectory.steps_tokens == row["tokens"]
    if row["tokens"] is not None:
        assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)
    assert [step.index for step in trajectory.steps] == list(range(1, len(trajectory.steps) + 1))


@st.composite
def codex_rollouts(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[int] | None]:
    """A random rollout: calls with counts before or after their items, written 0-2 times.

    With it, each call's own tokens in order when every call's count is written (else None).
    """
    before = draw(st.booleans())
    lines: list[dict[str, Any]] = [meta(), *asked(1, "go")]
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    own_tokens: list[int] = []
    every_call_counted = True
    second = 2
    for number in range(draw(st.integers(0, 6))):
        cached = draw(st.integers(0, 3000))
        step = {
            "input_tokens": cached + draw(st.integers(0, 3000)),
            "cached_input_tokens": cached,
            "output_tokens": draw(st.integers(1, 900)),
        }
        total = {key: total[key] + step[key] for key in total}
        snapshot = counts(
            total["input_tokens"], total["cached_input_tokens"], total["output_tokens"]
        )
        own = counts(step["input_tokens"], step["cached_input_tokens"], step["output_tokens"])
        written = [token_count(second, snapshot, own)] * draw(st.integers(0, 2))
        every_call_counted = every_call_counted and bool(written)
        own_tokens.append(own["total_tokens"])
        items = (
            [call(second, f"call_{number}", "ls")] if draw(st.booleans()) else [said(second, "ok")]
        )
        lines += [*written, *items] if before else [*items, *written]
        if draw(st.booleans()):
            lines.append(output(second, f"call_{number}", "done"))
        if draw(st.integers(0, 4)) == 0:
            lines += asked(second, f"more {number}")
        second += 1
    return lines, own_tokens if every_call_counted else None


@settings(max_examples=40)
@given(rollout_and_calls=codex_rollouts())
def test_codex_steps_add_up_to_the_loaders_count(
    tmp_path_factory: pytest.TempPathFactory,
    rollout_and_calls: tuple[list[dict[str, Any]], list[int] | None],
) -> None:
    lines, own_tokens = rollout_and_calls
    file = rollout(tmp_path_factory.mktemp("codex"), lines)
    with pytest.MonkeyPatch.context() as patch:
        row = codex_row(file, patch)
        trajectory = read_attempt(row)
    if own_tokens is not None:  # every call its own count: each step holds its call's
        agents = [step for step in trajectory.steps if step.source == "agent"]
        assert [step.tokens for step in agents] == own_tokens
    assert trajectory.steps_tokens == row["tokens"]
    for step in trajectory.steps:
        if step.tokens is not None:
            assert step.tokens == (step.input_tokens or 0) + (step.cached_input_tokens or 0) + (
                step.output_tokens or 0
            )


def steps_lazily(opened: Opened) -> Iterator[Step]:
    return opened.steps


def test_the_first_steps_come_before_the_rest_is_read(tmp_path: Path) -> None:
    # The log's last line is broken: the first step is handed on before the reader meets it.
    lines = [prompt(0, "go"), *streamed(1)] + [prompt(10 + n, f"p{n}") for n in range(50)]
    file = session_file(tmp_path, lines)
    with file.open("a") as handle:
        handle.write("{broken\n")
    steps = steps_lazily(open_attempt({"source": str(file), "session_id": SID}))
    assert next(steps).text == "go"
    with pytest.raises(TrajectoryError, match="line 55: is not valid JSON"):
        list(steps)
