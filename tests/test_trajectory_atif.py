"""The ATIF reader: steps, their tokens by bucket, continuations, and every broken file named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.trajectory_fixtures_atif import (
    INSTRUCTION,
    SAMPLE_TOKENS,
    atif_step,
    sample_steps,
    write_atif,
)
from tui_ledger.load import load
from tui_ledger.trajectory import (
    EQUAL,
    TrajectoryError,
    open_attempt,
    read_all,
    read_attempt,
    tokens_match,
)
from tui_ledger.trajectory.atif import open_files


def read(path: Path):  # type: ignore[no-untyped-def]
    return read_all(open_files([path]))


def test_steps_text_tools_observation_and_buckets(tmp_path: Path) -> None:
    trajectory = read(write_atif(tmp_path / "t.json", sample_steps()))
    user, call, answer = trajectory.steps
    assert (user.index, user.source, user.text) == (1, "user", INSTRUCTION)
    assert user.tokens is None and user.input_tokens is None
    assert user.timestamp == "2025-11-02T10:00:00Z"
    assert call.source == "agent"
    assert call.text == "I will run the tests.\n\nReasoning: The test output will show what fails."
    assert [(c.name, json.loads(c.arguments), c.id) for c in call.tool_calls] == [
        ("bash", {"command": "pytest -q"}, "call_1")
    ]
    assert call.observation == "1 failed, 3 passed"
    # prompt_tokens includes the cache hits: 1000 - 600 uncached.
    assert (call.input_tokens, call.cached_input_tokens, call.cache_write_tokens) == (
        400,
        600,
        None,
    )
    assert (call.output_tokens, call.tokens) == (50, 1050)
    assert (answer.input_tokens, answer.cached_input_tokens, answer.tokens) == (200, 1000, 1280)
    assert trajectory.steps_tokens == SAMPLE_TOKENS
    assert tokens_match(trajectory.steps, SAMPLE_TOKENS) == (EQUAL, 0)
    assert trajectory.notes == ()
    assert trajectory.files == (str(tmp_path / "t.json"),)


def test_cache_writes_inside_and_outside_the_prompt(tmp_path: Path) -> None:
    # As the RFC says (Harbor's Claude Code since late 2025): writes inside prompt_tokens.
    inside = [
        atif_step(1, "agent", "a", prompt=1000, cached=600, completion=10, cache_write=300),
        atif_step(2, "agent", "b", prompt=700, cached=600, completion=10, cache_write=20),
    ]
    first, second = read(write_atif(tmp_path / "in.json", inside)).steps
    assert (first.input_tokens, first.cached_input_tokens, first.cache_write_tokens) == (
        100,
        600,
        300,
    )
    assert (first.tokens, second.input_tokens, second.tokens) == (1010, 80, 710)
    # Older Harbor Claude Code: prompt = input + cache reads, the writes left out. One step
    # that shows it (5 uncached, 300 written) tells how the whole file counts.
    outside = [
        atif_step(1, "agent", "a", prompt=1000, cached=600, completion=10, cache_write=300),
        atif_step(2, "agent", "b", prompt=605, cached=600, completion=10, cache_write=300),
    ]
    trajectory = read(write_atif(tmp_path / "out.json", outside))
    first, second = trajectory.steps
    assert (first.input_tokens, first.cache_write_tokens, first.tokens) == (400, 300, 1310)
    assert (second.input_tokens, second.cache_write_tokens, second.tokens) == (5, 300, 915)
    assert any("read as left out of prompt_tokens" in note for note in trajectory.notes)
    # final_metrics (the steps added up) is read the same way: no note of a difference.
    assert not any("final_metrics records" in note for note in trajectory.notes)


def test_final_metrics_that_differ_from_the_steps_are_noted(tmp_path: Path) -> None:
    steps = sample_steps()
    final = {"total_prompt_tokens": 5000, "total_completion_tokens": 200, "total_cached_tokens": 0}
    trajectory = read(write_atif(tmp_path / "t.json", steps, final=final))
    assert trajectory.steps_tokens == SAMPLE_TOKENS
    assert any("final_metrics records 5,200" in note for note in trajectory.notes)
    no_metrics = [atif_step(1, "user", "hi"), atif_step(2, "agent", "done")]
    trajectory = read(write_atif(tmp_path / "u.json", no_metrics, final=final))
    assert tokens_match(trajectory.steps, 5200) == ("not recorded per step", None)
    assert trajectory.notes == (
        "no step records its tokens; the file's final_metrics records 5,200 in all",
    )


def test_multimodal_message_errors_sub_agents_and_epoch_times(tmp_path: Path) -> None:
    parts = [
        {"type": "text", "text": "Look at this"},
        {"type": "image", "source": {"media_type": "image/png", "path": "images/s1.png"}},
    ]
    steps = [
        atif_step(1, "user", parts),
        atif_step(
            2,
            "agent",
            "",
            calls=[("c1", "Bash", {"command": "false"})],
            results=["[error] tool reported failure"],
            extra={"tool_result_is_error": True, "is_sidechain": True, "agent_id": "a7"},
        ),
        {"step_id": 3, "source": "system", "message": "reset", "timestamp": 1762077600},
    ]
    first, failed, system = read(write_atif(tmp_path / "t.json", steps, final=False)).steps
    assert first.text == "Look at this\n[image: images/s1.png]"
    assert (
        failed.error and failed.agent == "a7" and failed.summary() == 'Bash({"command": "false"})'
    )
    assert system.source == "system" and system.timestamp == "2025-11-02T10:00:00+00:00"


def test_a_continuation_is_read_on_without_its_copied_steps(tmp_path: Path) -> None:
    first = sample_steps()
    write_atif(tmp_path / "trajectory.json", first, continued="trajectory.cont-1.json")
    copied = [{**step, "is_copied_context": True} for step in first]
    for step in copied:
        step.pop("metrics", None)
    more = atif_step(4, "agent", "Tests pass now.", prompt=300, cached=0, completion=20)
    write_atif(tmp_path / "trajectory.cont-1.json", [*copied, more])
    trajectory = read(tmp_path / "trajectory.json")
    assert [step.index for step in trajectory.steps] == [1, 2, 3, 4]
    assert trajectory.steps[-1].text == "Tests pass now."
    assert trajectory.steps_tokens == SAMPLE_TOKENS + 320
    assert len(trajectory.files) == 2
    assert any("3 steps of a continuation repeat earlier steps" in n for n in trajectory.notes)


def test_a_plain_ledger_names_each_file_in_its_trace_column(tmp_path: Path) -> None:
    write_atif(tmp_path / "traces" / "a1.json", sample_steps())
    ledger = tmp_path / "runs.csv"
    ledger.write_text(
        f"workflow,task,passed,tokens,trace\nw,t,true,{SAMPLE_TOKENS},traces/a1.json\n"
        "w,u,false,10,traces/missing.json\n",
        encoding="utf-8",
    )
    attempts = load([ledger]).attempts
    row = attempts.row(0, named=True)
    trajectory = read_attempt(row)
    assert len(trajectory.steps) == 3
    assert trajectory.files == (str(Path("traces") / "a1.json"),)
    assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)
    with pytest.raises(TrajectoryError, match=r"missing\.json: no such file"):
        open_attempt(attempts.row(1, named=True))


def test_steps_are_made_as_they_are_asked_for(tmp_path: Path) -> None:
    steps = [*sample_steps(), {"step_id": 4, "source": "robot", "message": "?"}]
    opened = open_files([write_atif(tmp_path / "t.json", steps)])
    assert next(opened.steps).text == INSTRUCTION  # the broken step is not reached yet
    with pytest.raises(TrajectoryError, match=r"t\.json: step 4\.source is \"robot\""):
        list(opened.steps)


def _broken(tmp_path: Path, name: str, content: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


GOOD = json.dumps({"schema_version": "ATIF-v1.4", "steps": sample_steps()})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (GOOD[: len(GOOD) // 2], "is cut off mid-record"),
        (GOOD[:40], "is cut off mid-record"),
        ("", "is empty"),
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "is JSON list, not an ATIF trajectory"),
        (json.dumps({"steps": []}), "has no schema_version"),
        (json.dumps({"schema_version": "ATIF-v2.0", "steps": []}), "this reader reads ATIF-v1.x"),
        (json.dumps({"schema_version": 1.4, "steps": []}), "schema_version is 1.4, not text"),
        (json.dumps({"schema_version": "ATIF-v1.6", "steps": {}}), "steps is {}, not a list"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "holds binary bytes"),
        (b"\xff\xfe{\x00", "holds binary bytes"),
        (b'{"a": "\xe9"}', "not UTF-8 text"),
    ],
)
def test_a_file_that_is_not_atif_is_named_with_what_is_wrong(
    tmp_path: Path, content: bytes | str, message: str
) -> None:
    path = _broken(tmp_path, "trajectory.json", content)
    with pytest.raises(TrajectoryError) as raised:
        open_files([path])
    text = str(raised.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ("not a step", "step 1 is text, not an object"),
        ({"source": "agent", "message": 3}, "step 1.message is a number"),
        ({"source": "agent", "message": "", "metrics": {"prompt_tokens": "12"}}, "prompt_tokens"),
        ({"source": "agent", "message": "", "metrics": {"completion_tokens": -1}}, "negative"),
        ({"source": "agent", "message": "", "tool_calls": {"a": 1}}, "tool_calls is an object"),
        ({"source": "agent", "message": "", "tool_calls": [{"arguments": {}}]}, "function_name"),
        ({"source": "agent", "message": "", "observation": {"results": "x"}}, "results is text"),
        ({"source": "agent", "message": "", "timestamp": True}, "timestamp is true"),
        ({"source": "agent", "message": "", "reasoning_content": ["x"]}, "reasoning_content"),
    ],
)
def test_a_step_of_the_wrong_type_is_named(tmp_path: Path, step: object, message: str) -> None:
    path = _broken(tmp_path, "t.json", json.dumps({"schema_version": "ATIF-v1.2", "steps": [step]}))
    with pytest.raises(TrajectoryError) as raised:
        read_all(open_files([path]))
    assert str(raised.value).startswith(f"{path}: ") and message in str(raised.value)


def test_a_missing_file_and_a_folder_are_named(tmp_path: Path) -> None:
    with pytest.raises(TrajectoryError, match=r"nowhere\.json: no such file"):
        open_files([tmp_path / "nowhere.json"])
    with pytest.raises(TrajectoryError, match="is a folder"):
        open_files([tmp_path])


def test_the_first_user_message_is_the_instruction(tmp_path: Path) -> None:
    """ATIF keeps no instruction field: the prompt the run started from stands for it, and a
    trajectory that opens with the agent has none."""
    from tests.trajectory_fixtures_atif import atif_step, write_atif
    from tui_ledger.trajectory import atif

    given = write_atif(
        tmp_path / "a.json",
        [atif_step(1, "system", "You are careful."), atif_step(2, "user", "Fix the bug.")],
    )
    assert atif.open_files([given]).instruction == "Fix the bug."
    agent_first = write_atif(tmp_path / "b.json", [atif_step(1, "agent", "Looking around.")])
    assert atif.open_files([agent_first]).instruction is None
