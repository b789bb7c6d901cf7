"""A folder named on the command line is one workflow, whatever its run folders are called
(issue 40), decided from what the folder holds, never from its name.

The public Terminal-Bench leaderboard holds submissions laid out nine ways (tests/tb_layouts.py:
renamed run folders, timestamp run ids, job names, a re-run nested in a run, run files saved
under their run ids with no trial folders, run folders with only their run file, flat trials).
Named one by one, each submission is one workflow; the folder above them (a leaderboard root)
gives one workflow per submission; a run folder, or a trial folder, named alone is one workflow
named after it. Every figure is checked against a plain count of the files (`plain_count`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import tb_layouts
from tests.tb_layouts import RUNS, SUBMISSIONS, plain_count, write_board
from tests.test_importers_wiring import run
from tui_ledger.importers import find_importer
from tui_ledger.load import load

CURSOR = "20250811_cursor-cli_claude-4-sonnet"
NESTED = "20250825_swe-agent-mini_claude-4-sonnet"
GOOSE = "20250829_goose_claude-4-opus"
OB1 = "ob1-09-10-25"
MIXED = "20250801_mixed_claude-4-sonnet"
ORCHESTRATOR = "20250902_orchestrator_claude-4-sonnet"


@pytest.fixture
def board(tmp_path: Path) -> Path:
    return write_board(tmp_path / "terminal-bench-core@0.1.1")


def summary(
    paths: list[Path], capsys: pytest.CaptureFixture[str], *options: str
) -> dict[str, tuple[int, int]]:
    """`ledger-tui summary PATHS --format json`: (attempts, accepted) per group."""
    argv = ["summary", *map(str, paths), "--view", "keep", "--format", "json"]
    code, out, err = run([*argv, "--intervals", "none", *options], capsys)
    assert code == 0, err
    return {name: (row["attempts"], row["accepted"]) for name, row in json.loads(out).items()}


def test_the_fixture_holds_every_layout_with_its_figures(board: Path) -> None:
    """The plain count itself, on the layouts' known contents (so it cannot agree by accident)."""
    assert len(SUBMISSIONS) == 9
    # 3 runs x 3 trial files, and 3 errored trials recorded only in their run's results.json
    assert plain_count(board / CURSOR) == (12, 3)
    assert plain_count(board / NESTED) == (7, 3)  # the copied fix-git trial counted once
    assert plain_count(board / GOOSE) == (9, 4)  # three run files of three trials
    assert plain_count(board / OB1) == (6, 2)


def test_nine_submissions_named_one_by_one_are_nine_workflows(
    board: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    submissions = sorted(board.iterdir())
    figures = summary(submissions, capsys)
    assert figures == {folder.name: plain_count(folder) for folder in submissions}
    assert len(figures) == 9


def test_a_leaderboard_root_gives_the_same_nine(
    board: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one_by_one = summary(sorted(board.iterdir()), capsys)
    assert summary([board], capsys) == one_by_one


def test_a_root_of_run_files_only_is_still_a_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Told from where the runs sit: goose's run files one folder down, ob1's run folders two."""
    root = tmp_path / "board"
    for name in (GOOSE, OB1):
        SUBMISSIONS[name](root / name)
    assert summary([root], capsys) == {GOOSE: (9, 4), OB1: (6, 2)}


@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_a_submission_alone_is_one_workflow_with_its_runs_apart(
    board: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = board / name
    assert summary([folder], capsys) == {name: plain_count(folder)}
    attempts = load(folder).attempts
    assert set(attempts["run"]) == RUNS[name]
    # `b` on run still splits them: one group per run, the attempts all counted
    by_run = summary([folder], capsys, "--by", "run")
    assert set(by_run) == RUNS[name]
    assert sum(attempts for attempts, _ in by_run.values()) == plain_count(folder)[0]


def test_a_submission_with_a_folder_of_its_own_beside_is_still_one(
    board: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Several submissions and a run folder of a third, each named: one workflow each."""
    run_folder = board / MIXED / "2025-07-02__10-00-00"
    named = [board / CURSOR, board / GOOSE, run_folder]
    assert summary(named, capsys) == {path.name: plain_count(path) for path in named}


@pytest.mark.parametrize(
    "relative",
    [
        f"{CURSOR}/run2_2025-08-12__05-27-18",
        f"{NESTED}/2025-08-15__19-28-24",  # a run holding another run's folder
        f"{NESTED}/2025-08-15__19-28-24/2025-08-15__16-23-45",
        f"{OB1}/ob1_agent_sdk_20250910-044031",  # only its run file
        f"{MIXED}/openhands-sonnet2",
    ],
)
def test_a_run_folder_alone_is_one_workflow_named_after_it(board: Path, relative: str) -> None:
    folder = board / relative
    attempts = load(folder).attempts
    assert set(attempts["workflow"]) == {folder.name}
    assert (attempts.height, int(attempts["passed"].sum())) == plain_count(folder)


@pytest.mark.parametrize(
    "relative",
    [
        f"{CURSOR}/run1_2025-08-11__05-27-18/fix-git/fix-git.1-of-1.2025-08-11__05-27-18",
        f"{ORCHESTRATOR}/fix-git/fix-git.2-of-5",
    ],
)
def test_one_trial_folder_alone_is_one_workflow_named_after_it(board: Path, relative: str) -> None:
    folder = board / relative
    attempts = load(folder).attempts
    assert attempts["workflow"].to_list() == [folder.name]
    assert attempts.height == plain_count(folder)[0] == 1


def test_a_run_file_saved_under_its_run_id_is_read_by_its_content(board: Path) -> None:
    """goose's `<run id>_results.json`: detected and read alone, the run named from the file."""
    file = board / GOOSE / "2025-08-22__22-13-13_results.json"
    assert find_importer(file) is not None and find_importer(board / GOOSE) is not None
    attempts = load(file).attempts
    assert set(attempts["workflow"]) == {GOOSE}
    assert set(attempts["run"]) == {"2025-08-22__22-13-13"}
    assert attempts.height == 3


def test_a_trial_found_twice_is_counted_once_and_said(board: Path) -> None:
    """swe-agent-mini's submission keeps a copy of a run's trial inside another run."""
    ledger = load(board / NESTED)
    assert ledger.attempts.height == plain_count(board / NESTED)[0]
    said = [warning.message for warning in ledger.report.warnings]
    assert any(message.startswith("1 Terminal-Bench trial found a second time") for message in said)


def test_a_run_file_beside_its_own_trial_files_is_not_read_twice(tmp_path: Path) -> None:
    """A run file saved under its run id, next to that run's folder of trials: trials once."""
    folder = tmp_path / "submission"
    tb_layouts.write_run(folder / "2025-01-01__00-00-00", "2025-01-01__00-00-00", {"a": True}, 5)
    records = json.loads((folder / "2025-01-01__00-00-00" / "results.json").read_text())
    (folder / "2025-01-01__00-00-00" / "results.json").unlink()
    tb_layouts.write_json(folder / "2025-01-01__00-00-00_results.json", records)
    # and another run kept only as its run file: read, as nothing else holds its trials
    other = {"results": [tb_layouts.trial("2025-01-02__00-00-00", "a", False, 5)]}
    tb_layouts.write_json(folder / "2025-01-02__00-00-00_results.json", other)
    attempts = load(folder).attempts
    assert sorted(attempts["run"]) == ["2025-01-01__00-00-00", "2025-01-02__00-00-00"]


def test_other_json_files_are_told_by_their_content(tmp_path: Path) -> None:
    """Only a `results` list of trial records makes a JSON file of another name a run file:
    another tool's `results`, trial records one per line, Harbor's `result.json` are not."""
    folder = tmp_path / "submission"
    tb_layouts.goose(folder)
    tb_layouts.write_json(folder / "notes.json", {"results": [{"score": 1}]})
    assert find_importer(folder / "notes.json") is None
    assert load(folder).attempts.height == plain_count(folder)[0] == 9

    lines = [tb_layouts.trial("r", task, True, 1) for task in tb_layouts.TASKS]
    ndjson = tmp_path / "export.json"
    ndjson.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert find_importer(ndjson) is None
    harbor = {"task_name": "a", "trial_name": "a__x", "results": [{"task_id": "a"}]}
    tb_layouts.write_json(tmp_path / "job" / "a__x" / "result.json", harbor)
    found = find_importer(tmp_path / "job" / "a__x" / "result.json")
    assert getattr(found, "name", None) != "terminal-bench"
