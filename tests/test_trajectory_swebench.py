"""Inside SWE-bench attempts: mini-swe-agent and SWE-agent trajectories read step by step.

Built from the importer's committed fixtures (tests/fixtures/importers/swebench, written by
mini-swe-agent itself and by make_handwritten.py) copied into tmp_path and changed to reproduce
each trap: per-call usage present and absent, SWE-agent's totals only, a RetryAgent's attempts,
a trajectory with no history, the harness's FAIL_TO_PASS / PASS_TO_PASS lists. Figures by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_importers import write_json
from tui_ledger.load import load
from tui_ledger.trajectory import (
    DIFFERS,
    EQUAL,
    NOT_RECORDED,
    TrajectoryError,
    read_all,
    read_attempt,
    swebench,
    tokens_match,
)

SWE = Path(__file__).parent / "fixtures" / "importers" / "swebench"
MINI_RUN = SWE / "mini-run"
SWE_AGENT_RUN = SWE / "swe-agent-run"
ASTROPY = "astropy__astropy-12907"
MATPLOTLIB = "matplotlib__matplotlib-23314"


def rows(folder: Path) -> dict[str, dict[str, Any]]:
    """The loaded attempts by task, each `source` joined to the folder opened (as the app does)."""
    attempts = load([folder]).attempts
    found = {}
    for index in range(attempts.height):
        row = attempts.row(index, named=True)
        found[row["task"]] = {**row, "source": str(folder / row["source"])}
    return found


def traj(run: Path, instance: str) -> Path:
    suffix = ".traj" if (run / instance / f"{instance}.traj").exists() else ".traj.json"
    return run / instance / f"{instance}{suffix}"


def edit(file: Path, change: Any) -> None:
    document = json.loads(file.read_text())
    change(document)
    write_json(file, document)


def test_mini_swe_agent_steps_carry_each_calls_own_usage(tmp_path: Path) -> None:
    run = tmp_path / "mini-run"
    shutil.copytree(MINI_RUN, run)
    attempts = rows(run)
    for task, row in attempts.items():
        trajectory = read_attempt(row)
        assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0), task
    astropy = read_attempt(attempts[ASTROPY])
    assert [step.source for step in astropy.steps] == ["system", "user", "agent", "agent", "system"]
    first = astropy.steps[2]
    # prompt 3000 holds 0 read + 2000 written: 1000 uncached; completion 100.
    assert (
        first.input_tokens,
        first.cached_input_tokens,
        first.cache_write_tokens,
        first.output_tokens,
        first.tokens,
    ) == (1000, 0, 2000, 100, 3100)
    assert (astropy.steps[3].input_tokens, astropy.steps[3].cached_input_tokens) == (500, 2000)
    assert first.tool_calls[0].name == "bash" and '"ls"' in first.tool_calls[0].arguments
    assert first.observation is not None and first.observation.startswith("<returncode>0")
    assert first.timestamp is not None and first.timestamp.startswith("2026-")
    assert astropy.steps[4].kind == "exit" and not astropy.steps[4].error
    assert astropy.instruction is not None and ASTROPY in astropy.instruction
    # The run report says resolved but keeps no tests by name: said, not invented.
    assert astropy.verdict.tests == ()
    assert any("no per-instance report.json" in note for note in astropy.notes)


def test_mini_usage_missing_for_some_calls_or_all(tmp_path: Path) -> None:
    run = tmp_path / "mini-run"
    shutil.copytree(MINI_RUN, run)
    file = traj(run, ASTROPY)

    def drop_first(document: dict[str, Any]) -> None:
        for message in document["messages"]:
            if message.get("extra", {}).get("response"):
                del message["extra"]["response"]
                break

    edit(file, drop_first)
    row = rows(run)[ASTROPY]
    assert row["tokens"] is None  # the importer counts the attempt's usage as missing
    trajectory = read_attempt(row)
    assert [step.tokens for step in trajectory.steps] == [None, None, None, 2850, None]
    assert tokens_match(trajectory.steps, row["tokens"]) == (DIFFERS, None)
    assert any("usage recorded for 1 of 2 calls" in note for note in trajectory.notes)

    edit(file, drop_first)
    trajectory = read_attempt(rows(run)[ASTROPY])
    assert tokens_match(trajectory.steps, None) == (NOT_RECORDED, None)
    assert any("not recorded per step" in note for note in trajectory.notes)


def test_mini_v1_observations_are_the_next_user_message(tmp_path: Path) -> None:
    run = tmp_path / "run"
    usage = {"prompt_tokens": 500, "completion_tokens": 20, "total_tokens": 520}
    document = {
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "demo__demo-1",
        "info": {
            "model_stats": {"instance_cost": 0.01, "api_calls": 2},
            "exit_status": "Submitted",
        },
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Please solve this issue: demo"},
            {
                "role": "assistant",
                "content": "THOUGHT: look\n\n```bash\nls\n```",
                "extra": {"response": {"usage": usage}},
            },
            {
                "role": "user",
                "content": "<returncode>0</returncode>\n<output>\nsetup.py\n</output>",
            },
            {
                "role": "assistant",
                "content": "THOUGHT: run it\n\n```bash\npython x.py\n```",
                "extra": {"response": {"usage": usage}},
            },
            {"role": "user", "content": "<returncode>1</returncode>\n<output>\nboom\n</output>"},
        ],
    }
    write_json(run / "demo__demo-1" / "demo__demo-1.traj.json", document)
    row = rows(run)["demo__demo-1"]
    trajectory = read_attempt(row)
    assert [step.source for step in trajectory.steps] == ["system", "user", "agent", "agent"]
    first, second = trajectory.steps[2:]
    assert first.observation is not None and "setup.py" in first.observation
    # v1 keeps the command in the reply's bash block; a non-zero return code fails the step.
    calls = [call.arguments for call in first.tool_calls + second.tool_calls]
    assert calls == ["ls", "python x.py"]
    assert (first.error, second.error) == (False, True)
    assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)
    assert row["tokens"] == 1040


def test_swe_agent_steps_have_no_tokens_and_say_so(tmp_path: Path) -> None:
    run = tmp_path / "swe-agent-run"
    shutil.copytree(SWE_AGENT_RUN, run)
    row = rows(run)[MATPLOTLIB]
    trajectory = read_attempt(row)
    assert len(trajectory.steps) == 1
    step = trajectory.steps[0]
    assert (step.source, step.text, step.observation) == ("agent", "look", "setup.py")
    assert step.tool_calls[0].name == "ls" and step.tokens is None
    assert row["tokens"] == 42000
    assert tokens_match(trajectory.steps, row["tokens"]) == (NOT_RECORDED, None)
    assert "not recorded per step" in trajectory.notes[0]


def test_swe_agent_history_alone_gives_the_steps_after_the_task(tmp_path: Path) -> None:
    run = tmp_path / "swe-agent-run"
    shutil.copytree(SWE_AGENT_RUN, run)

    def history_only(document: dict[str, Any]) -> None:
        document["trajectory"] = []
        document["history"] = [
            {"role": "system", "content": "SETTING: ..."},
            {"role": "user", "content": "Here is a demonstration", "is_demo": True},
            {"role": "user", "content": "We're currently solving the following issue"},
            {"role": "assistant", "content": "Let me look", "action": "ls"},
            {"role": "user", "content": "setup.py"},
        ]

    edit(traj(run, MATPLOTLIB), history_only)
    trajectory = read_attempt(rows(run)[MATPLOTLIB])
    assert trajectory.instruction == "We're currently solving the following issue"
    assert [(step.source, step.text) for step in trajectory.steps] == [
        ("agent", "Let me look"),
        ("user", "setup.py"),
    ]


def test_retry_agent_attempts_are_all_read_and_marked(tmp_path: Path) -> None:
    run = tmp_path / "swe-agent-run"
    shutil.copytree(SWE_AGENT_RUN, run)

    def one(action: str) -> dict[str, Any]:
        return {"action": action, "observation": f"ran {action}", "thought": f"try {action}"}

    def retry(document: dict[str, Any]) -> None:
        attempts = [
            {"trajectory": [one("ls"), one("cat a.py")], "history": [], "info": {}},
            {"trajectory": [one("pytest")], "history": [], "info": {}},
        ]
        document["attempts"] = attempts
        document["trajectory"] = attempts[1]["trajectory"]  # the best attempt, merged on top
        document["info"]["best_attempt_idx"] = 1

    edit(traj(run, MATPLOTLIB), retry)
    trajectory = read_attempt(rows(run)[MATPLOTLIB])
    assert [(step.agent, step.tool_calls[0].arguments) for step in trajectory.steps] == [
        ("attempt 1", "ls"),
        ("attempt 1", "cat a.py"),
        ("attempt 2", "pytest"),
    ]
    assert [step.index for step in trajectory.steps] == [1, 2, 3]
    assert any("attempt 2 was chosen" in note for note in trajectory.notes)


def test_a_trajectory_with_no_history_opens_to_no_steps_and_says_so(tmp_path: Path) -> None:
    run = tmp_path / "swe-agent-run"
    shutil.copytree(SWE_AGENT_RUN, run)

    def empty(document: dict[str, Any]) -> None:
        document["trajectory"] = []
        document["history"] = []

    edit(traj(run, MATPLOTLIB), empty)
    trajectory = read_attempt(rows(run)[MATPLOTLIB])
    assert trajectory.steps == ()
    assert "records no steps" in trajectory.looked_for[0]

    mini = tmp_path / "mini-run"
    shutil.copytree(MINI_RUN, mini)
    edit(traj(mini, ASTROPY), lambda document: document.update(messages=[]))
    trajectory = read_attempt(rows(mini)[ASTROPY])
    assert trajectory.steps == () and "records none" in trajectory.looked_for[0]


def test_the_harness_tests_by_name_fail_to_pass_first(tmp_path: Path) -> None:
    run = tmp_path / "mini-run"
    shutil.copytree(MINI_RUN, run)
    folder = run / "logs" / "run_evaluation" / "mini-run" / "claude" / ASTROPY
    status = {
        "FAIL_TO_PASS": {"success": ["test_separable"], "failure": ["test_nested"]},
        "PASS_TO_PASS": {"success": ["test_a", "test_b"], "failure": []},
        "FAIL_TO_FAIL": {"success": [], "failure": ["test_never"]},
        "PASS_TO_FAIL": {"success": [], "failure": []},
    }
    write_json(folder / "report.json", {ASTROPY: {"resolved": True, "tests_status": status}})
    (folder / "test_output.txt").write_text("collected 4 items\n4 passed\n")
    trajectory = read_attempt(rows(run)[ASTROPY])
    assert [(test.name, test.result) for test in trajectory.verdict.tests] == [
        ("test_separable", "passed"),
        ("test_nested", "failed"),
        ("test_a", "passed"),
        ("test_b", "passed"),
    ]
    assert trajectory.verdict.output == "collected 4 items\n4 passed\n"
    assert str(folder / "report.json") in trajectory.files
    # The unwrapped shape (no outer instance id) reads the same.
    write_json(folder / "report.json", {"resolved": True, "tests_status": status})
    assert len(read_attempt(rows(run)[ASTROPY]).verdict.tests) == 4


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda text: text[: len(text) // 2], "is cut off mid-record"),
        (lambda text: "not json at all", "is not valid JSON"),
        (lambda text: "\x00\x01binary", "holds binary bytes"),
        (lambda text: "[1, 2]", "is not a SWE-bench trajectory"),
    ],
)
def test_a_broken_trajectory_is_one_line_naming_the_file(
    tmp_path: Path, damage: Any, problem: str
) -> None:
    run = tmp_path / "mini-run"
    shutil.copytree(MINI_RUN, run)
    row = rows(run)[ASTROPY]
    file = Path(row["source"])
    file.write_text(damage(file.read_text()))
    # The reader itself: a file damaged past recognition is no longer matched to it by content.
    with pytest.raises(TrajectoryError) as caught:
        read_all(swebench.open(row))
    message = str(caught.value)
    assert message.startswith(f"{file}: ") and problem in message and "\n" not in message


def test_a_trajectory_gone_since_the_load_is_one_line(tmp_path: Path) -> None:
    run = tmp_path / "mini-run"
    shutil.copytree(MINI_RUN, run)
    row = rows(run)[ASTROPY]
    Path(row["source"]).unlink()
    with pytest.raises(TrajectoryError, match=r"astropy__astropy-12907\.traj\.json: no such file"):
        read_all(swebench.open(row))


CALL = st.tuples(
    st.integers(0, 5000),  # uncached prompt
    st.integers(0, 5000),  # cache reads
    st.integers(0, 3000),  # cache writes
    st.integers(0, 2000),  # completion
)


@settings(max_examples=25)
@given(runs=st.lists(st.lists(CALL, min_size=1, max_size=6), min_size=1, max_size=3))
def test_steps_add_up_to_what_the_loader_counts(
    tmp_path_factory: pytest.TempPathFactory, runs: list[list[tuple[int, int, int, int]]]
) -> None:
    run = tmp_path_factory.mktemp("run")
    for number, calls in enumerate(runs):
        instance = f"repo__repo-{number}"
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "system"},
            {"role": "user", "content": f"Please solve {instance}"},
        ]
        for uncached, reads, writes, completion in calls:
            usage = {
                "prompt_tokens": uncached + reads + writes,
                "completion_tokens": completion,
                "prompt_tokens_details": {"cached_tokens": reads},
                "cache_creation_input_tokens": writes,
            }
            messages.append(
                {"role": "assistant", "content": "x", "extra": {"response": {"usage": usage}}}
            )
            messages.append({"role": "user", "content": "<returncode>0</returncode>"})
        document = {
            "trajectory_format": "mini-swe-agent-1",
            "instance_id": instance,
            "info": {"model_stats": {"instance_cost": 0.1, "api_calls": len(calls)}},
            "messages": messages,
        }
        write_json(run / instance / f"{instance}.traj.json", document)
    for task, row in rows(run).items():
        trajectory = read_attempt(row)
        assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0), task
        assert len([step for step in trajectory.steps if step.tokens is not None]) == len(
            runs[int(task.rsplit("-", 1)[1])]
        )
