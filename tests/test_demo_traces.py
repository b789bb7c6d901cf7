"""The bundled demo's trajectories: one synthetic ATIF file per attempt, read through the same
reader as any ledger's, whose steps' tokens add up exactly to the attempt's row."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.test_demo import generator
from tui_ledger.cli_options import demo_path
from tui_ledger.load import load
from tui_ledger.trajectory import EQUAL, NOT_RECORDED, read_attempt, tokens_match


@pytest.fixture(scope="module")
def demo_rows() -> list[dict[str, object]]:
    ledger = load([str(demo_path())])
    return list(ledger.attempts.iter_rows(named=True))


def test_every_demo_attempt_opens_and_its_steps_add_up_to_its_row(
    demo_rows: list[dict[str, object]],
) -> None:
    assert len(demo_rows) == 360
    for row in demo_rows:
        trajectory = read_attempt(row)
        assert trajectory.files == (row["trace"],)
        agent = [step for step in trajectory.steps if step.source == "agent"]
        assert trajectory.steps[0].source == "user" and agent, row["trace"]
        match, difference = tokens_match(trajectory.steps, row["tokens"])  # type: ignore[arg-type]
        if row["tokens"] is None:  # usage the harness lost: the log records none either
            assert match == NOT_RECORDED, row["trace"]
            continue
        assert (match, difference) == (EQUAL, 0), row["trace"]
        for bucket in ("input_tokens", "cached_input_tokens", "output_tokens"):
            assert sum(getattr(step, bucket) or 0 for step in agent) == row[bucket], bucket
        assert trajectory.notes == ()


def test_lean_loops_failures_run_the_same_failing_command_again_and_again(
    demo_rows: list[dict[str, object]],
) -> None:
    failures = [r for r in demo_rows if r["workflow"] == "lean-loop" and r["outcome"] == "failed"]
    assert len(failures) > 10
    for row in failures:
        steps = read_attempt(row).steps
        failing = Counter(
            (step.tool_calls[0].name, step.tool_calls[0].arguments, step.observation)
            for step in steps
            if step.error and step.tool_calls
        )
        (call, runs), *_ = failing.most_common(1)
        assert runs >= 3, row["trace"]
        assert "pytest" in call[1] and "FAILED" in str(call[2])


def test_steady_planner_reads_plans_edits_and_tests(demo_rows: list[dict[str, object]]) -> None:
    row = next(r for r in demo_rows if r["workflow"] == "steady-planner")
    said = [step.summary() for step in read_attempt(row).steps]
    assert said[1].startswith("Reading") and said[2].startswith("Plan:")
    assert said[3].startswith("Editing") and said[4].startswith("Running the tests")


def test_every_file_says_it_is_synthetic() -> None:
    folder = demo_path().parent / "demo_traces"
    files = sorted(folder.glob("*.json"))
    assert len(files) == 360
    for path in files:
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["agent"]["extra"]["synthetic"] is True
        assert document["notes"].startswith("synthetic")
    assert sum(path.stat().st_size for path in files) < 800_000  # small, in the wheel too


def test_the_generator_writes_the_same_bytes_again(tmp_path: Path) -> None:
    make_demo = generator()
    output = tmp_path / "demo.csv"
    assert make_demo.main(["-o", str(output)]) == 0
    assert output.read_bytes() == demo_path().read_bytes()
    made = sorted((tmp_path / "demo_traces").iterdir())
    assert [path.name for path in made] == sorted(
        path.name for path in (demo_path().parent / "demo_traces").iterdir()
    )
    for path in made:
        assert path.read_bytes() == (demo_path().parent / "demo_traces" / path.name).read_bytes()
    # And --check notices a file that differs.
    made[0].write_text("{}", encoding="utf-8")
    assert make_demo.main(["--check", "-o", str(output)]) == 1
