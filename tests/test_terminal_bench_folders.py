"""A folder named on the command line is one workflow, whatever its run folders are called.

The public Terminal-Bench leaderboard holds submissions whose run folders were renamed
(`20250811_cursor-cli_claude-4-sonnet/run1_2025-08-10__05-27-18/`, its trials recording the
run as `2025-08-10__05-27-18`) and one with a re-run nested inside a run. Named one by one,
each submission is one workflow; the folder above them (a leaderboard root) still gives one
workflow per submission. The figures are checked against a plain count of the trial files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_importers_wiring import run
from tui_ledger.load import load

CURSOR = "20250811_cursor-cli_claude-4-sonnet"
PLAIN = "20250923_droid_claude-4-sonnet"
NESTED = "20250825_swe-agent-mini_claude-4-sonnet"
TASKS = ("fix-git", "hello-world", "csv-to-parquet")


def write_run(
    run_folder: Path, recorded_run: str, resolved: dict[str, bool], tokens: int
) -> list[dict[str, object]]:
    """One `tb run` output: a trial `results.json` per task, and the run-level `results.json`
    repeating them (as `tb run` writes it). `recorded_run` is the run id the harness recorded,
    which need not be the folder's name. Returns the trial records."""
    records = []
    for task, passed in resolved.items():
        name = f"{task}.1-of-1.{recorded_run}"
        record: dict[str, object] = {
            "id": f"{run_folder.name}-{name}",
            "trial_name": name,
            "task_id": task,
            "is_resolved": passed,
            "failure_mode": "unset",
            "total_input_tokens": tokens,
            "total_output_tokens": 10,
            "recording_path": f"{recorded_run}/{task}/{name}/sessions/agent.cast",
        }
        folder = run_folder / task / name
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps(record))
        records.append(record)
    run_file = {"id": run_folder.name, "results": records, "n_resolved": sum(resolved.values())}
    (run_folder / "results.json").write_text(json.dumps(run_file))
    return records


@pytest.fixture
def board(tmp_path: Path) -> Path:
    """A leaderboard root with three submissions of five, five and two runs:

    - cursor-cli's layout: run folders named `run<k>_<run id>`, not as their trials record;
    - a plain one: run folders named as their trials record them;
    - swe-agent-mini's: a run whose folder also holds a re-run of some tasks.
    """
    root = tmp_path / "terminal-bench-core@0.1.1"
    for k in range(1, 6):
        stamp = f"2025-08-1{k}__05-27-18"
        passes = {task: (i + k) % 3 == 0 for i, task in enumerate(TASKS)}
        write_run(root / CURSOR / f"run{k}_{stamp}", stamp, passes, 1000 * k)
        passes = {task: (i + k) % 2 == 0 for i, task in enumerate(TASKS)}
        write_run(root / PLAIN / f"tb_rc2_sonnet_{k}", f"tb_rc2_sonnet_{k}", passes, 500)
    first, rerun = "2025-08-15__19-28-24", "2025-08-15__16-23-45"
    write_run(root / NESTED / first, first, {"fix-git": True, "hello-world": False}, 700)
    write_run(root / NESTED / first / rerun, rerun, {"fix-git": False, "csv-to-parquet": True}, 90)
    return root


def plain_count(submission: Path) -> tuple[int, int]:
    """(attempts, accepted) read the plain way: every trial `results.json` below the folder
    (a record with a `task_id`; run-level files repeat them) and its `is_resolved`."""
    trials = [json.loads(file.read_text()) for file in submission.rglob("results.json")]
    trials = [record for record in trials if "task_id" in record]
    return len(trials), sum(record["is_resolved"] is True for record in trials)


def summary(paths: list[Path], capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[int, int]]:
    """`ledger-tui summary PATHS --view keep --format json`: (attempts, accepted) per workflow."""
    argv = ["summary", *map(str, paths), "--view", "keep", "--format", "json"]
    code, out, err = run([*argv, "--intervals", "none"], capsys)
    assert code == 0, err
    return {name: (row["attempts"], row["accepted"]) for name, row in json.loads(out).items()}


def test_submissions_named_one_by_one_are_one_workflow_each(
    board: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    submissions = sorted(board.iterdir())
    figures = summary(submissions, capsys)
    assert figures == {folder.name: plain_count(folder) for folder in submissions}
    assert figures[CURSOR] == (15, 5)  # five runs of three tasks
    assert figures[NESTED] == (4, 2)  # the nested re-run belongs to its submission


def test_a_leaderboard_root_still_gives_one_workflow_per_submission(
    board: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one_by_one = summary(sorted(board.iterdir()), capsys)
    assert summary([board], capsys) == one_by_one


@pytest.mark.parametrize("name", [CURSOR, PLAIN, NESTED])
def test_a_submission_alone_is_one_workflow_with_its_runs_apart(board: Path, name: str) -> None:
    attempts = load(board / name).attempts
    assert set(attempts["workflow"]) == {name}
    assert attempts.height == plain_count(board / name)[0]
    runs = {folder.name for folder in (board / name).iterdir()}
    assert set(attempts["run"]) >= runs  # each run folder stays a run of its own


def test_a_run_folder_alone_is_one_workflow_named_after_it(board: Path) -> None:
    folder = board / CURSOR / "run3_2025-08-13__05-27-18"
    attempts = load(folder).attempts
    assert set(attempts["workflow"]) == {folder.name}
    assert attempts.height == len(TASKS)
