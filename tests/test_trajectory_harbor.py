"""Harbor trials opened: steps from agent/trajectory.json, the task's instruction, the verifier's
evidence; and the usage a result.json lost, read from the trajectory when the job loads."""

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
    write_harbor_trial,
)
from tui_ledger.cli import main
from tui_ledger.load import load
from tui_ledger.trajectory import EQUAL, TrajectoryError, read_all, tokens_match
from tui_ledger.trajectory import harbor as harbor_reader

USAGE = {"n_input_tokens": 2200, "n_cache_tokens": 1600, "n_output_tokens": 130, "cost_usd": 0.01}


def test_a_trial_with_its_steps_instruction_and_tests(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "2025-11-02__10-00-00"
    result = write_harbor_trial(
        job,
        "fix-git__Abc0dEf",
        "fix-git",
        agent_result=USAGE,
        steps=sample_steps(),
        ctrf=[("test_a", "passed"), ("test_b", "failed")],
        stdout="2 tests, 1 failed\n",
        instruction=INSTRUCTION,
        reward=0.0,
    )
    row = load([result]).attempts.row(0, named=True)
    assert row["tokens"] == SAMPLE_TOKENS  # 2200 - 1600 + 1600 + 130
    trajectory = read_all(harbor_reader.open(row))
    assert [step.source for step in trajectory.steps] == ["user", "agent", "agent"]
    assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)
    assert trajectory.instruction == INSTRUCTION
    assert [(test.name, test.passed) for test in trajectory.verdict.tests] == [
        ("test_a", True),
        ("test_b", False),
    ]
    assert trajectory.verdict.output == "reward.txt: 0\n\ntest-stdout.txt:\n2 tests, 1 failed"
    assert trajectory.files[0].endswith("agent/trajectory.json")
    assert any(name.endswith("verifier/ctrf.json") for name in trajectory.files)


def test_a_trial_without_a_trajectory_says_where_it_looked(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "job"
    result = write_harbor_trial(job, "hello__1234567", "hello", agent_result=USAGE, stdout="ok\n")
    opened = harbor_reader.open({"source": str(result)})
    assert list(opened.steps) == []
    assert opened.looked_for[0] == f"an ATIF trajectory (agent/trajectory.json) in {result.parent}"
    assert opened.instruction is None  # the task folder is not on this machine
    assert (
        opened.verdict.tests == ()
        and opened.verdict.output == "reward.txt: 1\n\ntest-stdout.txt:\nok"
    )


def test_a_broken_verifier_report_and_a_missing_trial_are_named(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "job"
    result = write_harbor_trial(job, "t__1", "t", agent_result=USAGE, steps=sample_steps())
    (result.parent / "verifier" / "ctrf.json").write_text('{"results": {}}', encoding="utf-8")
    with pytest.raises(TrajectoryError, match=r"ctrf\.json: has no results\.tests list"):
        harbor_reader.open({"source": str(result)})
    with pytest.raises(TrajectoryError, match="trial folder is not there"):
        harbor_reader.open({"source": str(tmp_path / "gone" / "result.json")})


def test_usage_lost_by_result_json_is_read_from_the_trajectory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "jobs" / "2025-11-02__10-00-00"
    writes = [
        *sample_steps(),
        atif_step(4, "agent", "done", prompt=500, cached=100, completion=5, cache_write=300),
    ]
    write_harbor_trial(job, "a__1", "fix-git", agent_result=None, steps=writes)
    zeros = {"n_input_tokens": 0, "n_cache_tokens": 0, "n_output_tokens": 0, "cost_usd": 0.0}
    write_harbor_trial(job, "b__2", "fix-git", agent_result=zeros, steps=sample_steps())
    write_harbor_trial(job, "c__3", "hello", agent_result=USAGE, steps=sample_steps())
    write_harbor_trial(job, "d__4", "hello", agent_result=None, steps=None)  # nothing to read

    ledger = load([tmp_path / "jobs"])
    rows = {row["trial_label"]: row for row in ledger.attempts.iter_rows(named=True)}
    lost = rows["a__1"]
    # The steps: 400+600 / 50, 200+1000 / 80, and 500 prompt = 100 cached + 300 written + 100.
    assert (lost["input_tokens"], lost["cached_input_tokens"], lost["output_tokens"]) == (
        700,
        1700,
        135,
    )
    assert lost["cache_write_tokens"] == 300
    assert lost["tokens"] == SAMPLE_TOKENS + 505
    assert rows["b__2"]["tokens"] == SAMPLE_TOKENS
    assert rows["c__3"]["tokens"] == SAMPLE_TOKENS
    assert rows["d__4"]["tokens"] is None
    steps = read_all(harbor_reader.open({"source": str(job / "a__1" / "result.json")})).steps
    assert tokens_match(steps, lost["tokens"]) == (EQUAL, 0)
    warnings = [warning.message for warning in ledger.report.warnings]
    assert any(message.startswith("2 trials took their usage from") for message in warnings)

    main(["summary", str(tmp_path / "jobs"), "--format", "json"])
    summary = json.loads(capsys.readouterr().out)
    group = summary["views"]["keep"]["terminus-2__openai/gpt-5"]
    assert group["total_tokens"] == 3 * SAMPLE_TOKENS + 505
    assert group["missing_usage"] == 1

    main(["check", str(tmp_path / "jobs")])
    said = capsys.readouterr().out
    assert "2 trials took their usage from agent/trajectory.json" in said


def test_an_unreadable_trajectory_keeps_the_usage_unrecorded_and_says_so(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "job"
    result = write_harbor_trial(job, "a__1", "t", agent_result=None, steps=sample_steps())
    trajectory = result.parent / "agent" / "trajectory.json"
    trajectory.write_text(trajectory.read_text()[:40], encoding="utf-8")
    ledger = load([tmp_path / "jobs"])
    assert ledger.attempts["tokens"].to_list() == [None]
    warnings = [warning.message for warning in ledger.report.warnings]
    assert any("could not be read" in message and "cut off" in message for message in warnings)


def test_multi_step_trials_and_where_the_instruction_is_looked_for(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "job"
    result = write_harbor_trial(job, "m__1", "multi", agent_result=USAGE, steps=None)
    for step_name, message in (("1-setup", "first part"), ("2-fix", "second part")):
        write_atif(
            result.parent / "steps" / step_name / "agent" / "trajectory.json",
            [atif_step(1, "user", message), atif_step(2, "agent", "ok", prompt=10, completion=1)],
        )
    task = tmp_path / "elsewhere" / "multi"
    task.mkdir(parents=True)
    (task / "instruction.md").write_text("Do both parts.", encoding="utf-8")
    config = result.parent / "config.json"
    config.write_text(json.dumps({"task": {"path": str(task)}}), encoding="utf-8")
    trajectory = read_all(harbor_reader.open({"source": str(result)}))
    assert [step.text for step in trajectory.steps] == ["first part", "ok", "second part", "ok"]
    assert [step.index for step in trajectory.steps] == [1, 2, 3, 4]
    assert trajectory.steps_tokens == 22
    assert trajectory.instruction == "Do both parts."
    # A task Harbor fetched from git sits in its cache under a hashed name: no instruction.md;
    # the trajectory's first user message (the prompt the run started from) stands in.
    git = {"task": {"path": str(task), "git_url": "https://example.com/tasks.git"}}
    config.write_text(json.dumps(git), encoding="utf-8")
    assert harbor_reader.open({"source": str(result)}).instruction == "first part"
