"""Inside an Inspect AI attempt: the sample's events as steps, its scorers as the verdict.

Logs are generated here (the importer tests' synthetic header, `_synthetic_log`) with every trap:
usage split in both of Inspect's conventions, a reply replayed from Inspect's cache (in no
`model_usage`), messages pooled in `events_data` and texts kept as attachments, a sample with
messages only and one with no history at all; and the committed real logs. The steps' tokens
must add up to what the loader counts for the attempt wherever every call is recorded.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_importers import INSPECT, _synthetic_log, write_json
from tui_ledger.load import load
from tui_ledger.trajectory import (
    EQUAL,
    NOT_RECORDED,
    TrajectoryError,
    open_attempt,
    read_all,
    read_attempt,
    tokens_match,
)
from tui_ledger.trajectory import inspect_ai as reader
from tui_ledger.trajectory._json_text import Absent, value_at


def usage(
    uncached: int, output: int, read: int = 0, write: int = 0, *, old: bool = False
) -> dict[str, int]:
    """One call's ModelUsage: since 0.3.184 input excludes the cache; `old` includes it."""
    if old:
        return {
            "input_tokens": uncached + read + write,
            "output_tokens": output,
            "total_tokens": uncached + read + write + output,
            "input_tokens_cache_read": read,
            "input_tokens_cache_write": write,
        }
    return {
        "input_tokens": uncached,
        "output_tokens": output,
        "total_tokens": uncached + read + write + output,
        "input_tokens_cache_read": read,
        "input_tokens_cache_write": write,
    }


def summed(calls: list[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for call in calls:
        for key, value in call.items():
            total[key] = total.get(key, 0) + value
    return total


def model_event(
    reply: str, call_usage: dict[str, int] | None, *, refs: list[list[int]], **more: Any
) -> dict[str, Any]:
    output: dict[str, Any] = {
        "model": "openai/gpt-4o",
        "choices": [{"message": {"id": f"m-{reply}", "role": "assistant", "content": reply}}],
    }
    if call_usage is not None:
        output["usage"] = call_usage
    output["choices"][0]["message"].update(more.pop("message", {}))
    return {
        "event": "model",
        "model": "openai/gpt-4o",
        "input": [],
        "input_refs": refs,
        "output": output,
        "timestamp": "2025-03-01T12:00:02+00:00",
        **more,
    }


def agent_sample() -> dict[str, Any]:
    """Three calls (old convention, a tool call between), one cache replay, a tool error."""
    first = usage(100, 20, read=400, write=50, old=True)
    second = usage(30, 10, read=500, old=True)
    messages = [
        {"id": "u1", "role": "user", "content": "attachment://task"},
        {"id": "m-ls", "role": "assistant", "content": "ls"},
        {"id": "t1", "role": "tool", "content": "a.py", "tool_call_id": "c1", "function": "bash"},
        {"id": "u2", "role": "user", "content": "please continue"},
    ]
    return {
        "id": "fix",
        "epoch": 1,
        "input": "attachment://task",
        "scores": {
            "verify": {"value": "C", "explanation": "tests pass"},
            "judge": {"value": 0.5, "explanation": "partly"},
        },
        "model_usage": {"openai/gpt-4o": summed([first, second])},
        "attachments": {"task": "Fix the failing test in a.py"},
        "events_data": {"messages": messages},
        "messages": [*messages, {"id": "m-done", "role": "assistant", "content": "done"}],
        "events": [
            {"event": "sample_init", "state": {"messages": messages[:1]}},
            model_event(
                "ls",
                first,
                refs=[[0, 1]],
                message={"tool_calls": [{"id": "c1", "function": "bash", "arguments": {"c": 1}}]},
            ),
            {
                "event": "tool",
                "id": "c1",
                "function": "bash",
                "arguments": {"cmd": "ls"},
                "result": "a.py",
            },
            {
                "event": "tool",
                "id": "c2",
                "function": "bash",
                "arguments": {"cmd": "rm /"},
                "result": "",
                "error": {"type": "permission", "message": "denied"},
            },
            model_event("done", second, refs=[[0, 4]]),
            model_event("done again", usage(999, 99), refs=[[0, 4]], cache="read"),
            {"event": "sample_limit", "type": "message", "message": "message limit reached"},
            {"event": "score", "scorer": "verify", "score": {"value": "C"}},
        ],
    }


def messages_only_sample() -> dict[str, Any]:
    return {
        "id": "chat",
        "epoch": 1,
        "input": [{"role": "user", "content": [{"type": "text", "text": "Say hi"}]}],
        "scores": {"verify": {"value": "I"}},
        "model_usage": {"openai/gpt-4o": usage(10, 2)},
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Say hi"},
            {"role": "assistant", "content": "hi"},
        ],
    }


def empty_sample() -> dict[str, Any]:
    return {"id": "none", "epoch": 2, "input": "Nothing kept", "scores": {"verify": {"value": 1}}}


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return write_json(
        tmp_path / "log.json",
        _synthetic_log([agent_sample(), messages_only_sample(), empty_sample()]),
    )


def rows_of(path: Path) -> dict[str, dict[str, Any]]:
    attempts = load([path]).attempts
    rows = [attempts.row(i, named=True) for i in range(attempts.height)]
    return {str(row["sample"]): row for row in rows}


def test_events_become_steps_with_each_calls_own_tokens(log: Path) -> None:
    row = rows_of(log)["fix"]
    trajectory = read_attempt(row)
    assert trajectory.instruction == "Fix the failing test in a.py"  # an attachment, resolved
    steps = trajectory.steps
    assert [(step.source, step.kind) for step in steps] == [
        ("user", None),
        ("agent", None),
        ("tool", None),
        ("tool", None),
        ("user", None),  # the new user message the second call was sent
        ("agent", None),
        ("agent", "cache_read"),
        ("system", "sample_limit"),
        ("system", "score"),
    ]
    first = steps[1]
    # The old convention (input included the cache) is split as the importer splits it.
    assert (first.input_tokens, first.cached_input_tokens, first.cache_write_tokens) == (
        100,
        400,
        50,
    )
    assert (first.output_tokens, first.tokens) == (20, 570)
    assert first.tool_calls[0].name == "bash" and json.loads(first.tool_calls[0].arguments) == {
        "c": 1
    }
    assert steps[2].observation == "a.py" and not steps[2].error
    assert steps[3].error and steps[3].observation == "denied"
    assert steps[4].text == "please continue"
    # A reply replayed from Inspect's cache never reached model_usage: no tokens here either.
    assert steps[6].tokens is None and steps[6].input_tokens is None
    assert any("replayed from Inspect's cache" in note for note in trajectory.notes)
    assert tokens_match(steps, row["tokens"]) == (EQUAL, 0)
    assert row["tokens"] == 570 + 540


def test_scorers_are_the_verdicts_tests(log: Path) -> None:
    rows = rows_of(log)
    verdict = read_attempt(rows["fix"]).verdict
    assert [(test.name, test.result, test.passed) for test in verdict.tests] == [
        ("verify", "passed", True),
        ("judge", "0.5", False),
    ]
    assert verdict.output == "verify: tests pass\njudge: partly"
    assert [test.result for test in read_attempt(rows["chat"]).verdict.tests] == ["failed"]
    assert [test.result for test in read_attempt(rows["none"]).verdict.tests] == ["passed"]


def test_messages_alone_are_steps_without_tokens(log: Path) -> None:
    row = rows_of(log)["chat"]
    trajectory = read_attempt(row)
    assert trajectory.instruction == "Say hi"
    assert [(step.source, step.text) for step in trajectory.steps] == [
        ("system", "Be brief."),
        ("user", "Say hi"),
        ("agent", "hi"),
    ]
    assert tokens_match(trajectory.steps, row["tokens"]) == (NOT_RECORDED, None)
    assert any("not per step" in note for note in trajectory.notes)


def test_a_sample_with_no_history_opens_to_no_steps_and_says_so(log: Path) -> None:
    trajectory = read_attempt(rows_of(log)["none"])
    assert trajectory.steps == ()
    assert trajectory.instruction == "Nothing kept"
    assert trajectory.notes == ()
    (looked,) = trajectory.looked_for
    assert looked.startswith("events and messages in ") and looked.endswith("(it records none)")


def eval_log(
    tmp_path: Path,
    samples: list[dict[str, Any]],
    summary_keys: tuple[str, ...] = ("id", "epoch", "scores", "model_usage"),
) -> Path:
    """A `.eval` zip as Inspect writes it: header, summaries, one member per sample."""
    log = _synthetic_log(samples)
    path = tmp_path / "run.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        header = {key: value for key, value in log.items() if key != "samples"}
        archive.writestr("header.json", json.dumps(header))
        summaries = [
            {key: sample[key] for key in summary_keys if key in sample} for sample in samples
        ]
        archive.writestr("summaries.json", json.dumps(summaries))
        for sample in samples:
            name = f"samples/{sample['id']}_epoch_{sample['epoch']}.json"
            archive.writestr(name, json.dumps(sample))
    return path


def test_an_eval_log_reads_only_the_samples_own_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = eval_log(tmp_path, [agent_sample(), messages_only_sample()])
    row = rows_of(path)["fix"]
    read: list[str] = []
    original = reader.member_bytes

    def spy(archive: zipfile.ZipFile, where: Path, name: str) -> bytes:
        read.append(name)
        return original(archive, where, name)

    monkeypatch.setattr(reader, "member_bytes", spy)
    trajectory = read_attempt(row)
    assert read == ["samples/fix_epoch_1.json"]
    assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)
    assert trajectory.files == (str(path),)


def test_a_json_log_decodes_only_the_sample_asked_for() -> None:
    # The third sample is cut off: the first two still decode, each alone.
    text = '{"version": 2, "samples": [{"id": "a"}, {"id": "b", "x": [1, {"y": 2}]}, {"id": "c'
    assert value_at(text, ("samples", 1), "log.json", "#2") == {"id": "b", "x": [1, {"y": 2}]}
    assert value_at(text, ("samples", 0, "id"), "log.json", "#1") == "a"
    with pytest.raises(Absent):
        value_at('{"samples": []}', ("samples", 0), "log.json", "#1")
    with pytest.raises(TrajectoryError, match=r"log\.json: #3: is cut off"):
        value_at(text, ("samples", 2), "log.json", "#3")


def test_the_real_logs_add_up_to_their_rows() -> None:
    for name in ("ledger_fixture_deflate.eval", "ledger_fixture.json"):
        attempts = load([INSPECT / name]).attempts
        for index in range(attempts.height):
            row = attempts.row(index, named=True)
            trajectory = read_attempt(row)
            assert trajectory.steps, (name, row["sample"])
            if row["tokens"] is not None:
                assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)
            else:  # "boom" raised before any usage: its one call is an error step
                assert any(step.error for step in trajectory.steps)


def test_broken_logs_are_one_line_errors(tmp_path: Path) -> None:
    # The reader itself: once a file no longer looks like a log, `open_attempt` finds no reader.
    log = write_json(tmp_path / "log.json", _synthetic_log([agent_sample(), empty_sample()]))
    row = rows_of(log)["none"]
    text = log.read_text()

    log.write_text(text[: text.index('"id": "none"') + 5])  # cut off inside the sample
    with pytest.raises(TrajectoryError, match=r"log\.json: sample none epoch 2: is cut off"):
        read_all(reader.open(row))
    log.write_bytes(b"\x00\x01binary" * 10)
    with pytest.raises(TrajectoryError, match=r"log\.json: holds binary bytes"):
        read_all(reader.open(row))
    log.write_text('{"samples": [nope]}')
    with pytest.raises(TrajectoryError, match=r"log\.json: sample none epoch 2: is not valid JSON"):
        read_all(reader.open(row))
    log.write_text(json.dumps(_synthetic_log([empty_sample(), agent_sample()])))
    with pytest.raises(TrajectoryError, match=r"sample #2 is sample fix epoch 1 \(the log changed"):
        read_all(reader.open(row))
    log.unlink()
    with pytest.raises(TrajectoryError, match=r"log\.json: no such file"):
        read_all(reader.open(row))

    path = eval_log(tmp_path, [agent_sample()])
    row = rows_of(path)["fix"]
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", "{}")
    with pytest.raises(
        TrajectoryError, match=r"run\.eval: sample fix epoch 1: has no member samples/fix_epoch_1"
    ):
        read_all(reader.open(row))
    path.write_bytes(b"PK not a zip")
    with pytest.raises(TrajectoryError, match=r"run\.eval: is not a readable \.eval archive"):
        read_all(reader.open(row))
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("samples/fix_epoch_1.json", '{"id": "fix", "events": [')
    with pytest.raises(TrajectoryError, match=r"samples/fix_epoch_1\.json\): is cut off"):
        read_all(reader.open(row))


def test_the_reader_is_chosen_from_the_rows_source(log: Path) -> None:
    row = rows_of(log)["chat"]
    opened = open_attempt(row)
    assert opened.files == [str(log)]
    assert [step.source for step in opened.steps] == ["system", "user", "agent"]


call_usage = st.tuples(
    st.integers(0, 5000), st.integers(0, 500), st.integers(0, 5000), st.integers(0, 500)
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    calls=st.lists(
        st.tuples(st.sampled_from(["a/m1", "b/m2"]), call_usage, st.booleans()), max_size=6
    ),
    old=st.booleans(),
)
def test_the_steps_add_up_to_what_the_loader_counts(
    tmp_path_factory: pytest.TempPathFactory,
    calls: list[tuple[str, tuple[int, int, int, int], bool]],
    old: bool,
) -> None:
    events: list[dict[str, Any]] = []
    per_model: dict[str, list[dict[str, int]]] = {}
    for number, (model, (uncached, output, read, write), replayed) in enumerate(calls):
        one = usage(uncached, output, read, write, old=old)
        event = model_event(f"r{number}", one, refs=[], model=model)
        if replayed:
            event["cache"] = "read"  # not in model_usage
        else:
            per_model.setdefault(model, []).append(one)
        events.append(event)
    sample = {
        "id": "p",
        "epoch": 1,
        "scores": {"verify": {"value": 1}},
        "model_usage": {model: summed(found) for model, found in per_model.items()},
        "events": events,
    }
    folder = tmp_path_factory.mktemp("prop")
    row = rows_of(write_json(folder / "log.json", _synthetic_log([sample])))["p"]
    trajectory = read_attempt(row)
    assert len(trajectory.steps) == len(calls)
    if per_model:
        assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)
    else:
        assert row["tokens"] is None and trajectory.steps_tokens is None


def test_a_chunked_sample_reads_like_the_single_member_one(tmp_path: Path) -> None:
    """Inspect's chunked layout: a shell, events and the message pool in chunks, attachments."""
    sample = json.loads(json.dumps(agent_sample()).replace("attachment://task", "attachment://0"))
    sample["attachments"] = {"0": "Fix the failing test in a.py"}  # by index, as chunked keeps it
    path = eval_log(tmp_path, [sample])
    whole = read_attempt(rows_of(path)["fix"])
    prefix = "samples/fix_epoch_1/"
    events, pool = sample.pop("events"), sample.pop("events_data")["messages"]
    final = sample.pop("messages")
    del sample["attachments"]
    shell = {**sample, "message_refs": [[0, 4]]}
    rewritten = tmp_path / "chunked" / "run.eval"
    rewritten.parent.mkdir()
    with zipfile.ZipFile(path) as old, zipfile.ZipFile(rewritten, "w") as new:
        for name in ("header.json", "summaries.json"):
            new.writestr(name, old.read(name))
        new.writestr(prefix + "sample.json", json.dumps(shell))
        new.writestr(prefix + "events/0.json", json.dumps(events[:3]))
        new.writestr(prefix + "events/3.json", json.dumps(events[3:]))
        new.writestr(prefix + "messages/0.json", json.dumps(pool + final[4:]))
        new.writestr(prefix + "attachments/0.json", json.dumps(["Fix the failing test in a.py"]))
    row = rows_of(rewritten)["fix"]
    chunked = read_attempt(row)
    assert chunked.steps == whole.steps
    assert chunked.instruction == whole.instruction == "Fix the failing test in a.py"
    assert chunked.verdict == whole.verdict
    assert tokens_match(chunked.steps, row["tokens"]) == (EQUAL, 0)


def test_summaries_without_usage_leave_the_row_none_and_the_steps_say_what_was_spent(
    tmp_path: Path,
) -> None:
    # Older and unfinished logs' summaries keep no model_usage (Inspect's own popularity logs).
    path = eval_log(tmp_path, [agent_sample()], summary_keys=("id", "epoch", "scores"))
    row = rows_of(path)["fix"]
    trajectory = read_attempt(row)
    assert row["tokens"] is None and trajectory.steps_tokens == 1110
    assert tokens_match(trajectory.steps, row["tokens"]) == ("differs", None)
    assert any("the log's summaries keep none" in note for note in trajectory.notes)


def test_an_error_stays_on_one_line_whatever_the_names_hold(tmp_path: Path) -> None:
    row = {"source": str(tmp_path / "gone\nlog.json"), "sample": "a\nb", "run": "1", "line": 1}
    with pytest.raises(TrajectoryError) as caught:
        reader.open(row)
    assert "\n" not in str(caught.value) and "no such file" in str(caught.value)


def test_a_tool_message_carries_the_call_it_answers(tmp_path: Path) -> None:
    sample = {
        "id": "tools",
        "epoch": 1,
        "input": "List files",
        "messages": [
            {"role": "user", "content": "List files"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c9", "function": "bash", "arguments": {"cmd": "ls"}}],
            },
            {
                "role": "tool",
                "content": "",
                "tool_call_id": "c9",
                "function": "bash",
                "error": {"type": "timeout", "message": "timed out"},
            },
        ],
    }
    row = rows_of(write_json(tmp_path / "log.json", _synthetic_log([sample])))["tools"]
    tool = read_attempt(row).steps[2]
    assert tool.summary() == 'bash({"cmd": "ls"})'
    assert tool.error and tool.observation == "timed out"
