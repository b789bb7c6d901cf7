"""Harbor: every trial a job recorded counts once (issue 52), whether or not it wrote its
result.json, and whether or not its folder was kept; a cost of 0 beside tokens is missing.

The cases are generated as Harbor lays them out: a finished trial (`result.json`, `config.json`),
an unfinished one (`config.json`, `trial.log`, maybe `agent/trajectory.json`), and the job's own
`result.json` listing its trials by name in `stats.evals`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_importers import write_json
from tests.trajectory_fixtures_atif import sample_steps, write_atif, write_harbor_trial
from tui_ledger.accounting.ledger import compare
from tui_ledger.cli import main
from tui_ledger.importers import HarborImporter, find_importer
from tui_ledger.load import load

WORKFLOW = "terminus-2__openai/gpt-5"
USAGE = {"n_input_tokens": 1000, "n_cache_tokens": 400, "n_output_tokens": 100, "cost_usd": 0.01}
# sample_steps(): final_metrics 2200 prompt (1600 cached) + 130 out.
TRAJECTORY_TOKENS = 2200 + 130


def unfinished(job: Path, trial: str, task: str, *, trajectory: bool = True) -> Path:
    """A trial folder Harbor started and never finished: config.json, trial.log, trajectory."""
    folder = job / trial
    config = {
        "task": {"path": f"tasks/{task}", "git_url": None, "name": None},
        "trial_name": trial,
        "trials_dir": f"jobs/{job.name}",
        "agent": {"name": "terminus-2", "model_name": "openai/gpt-5"},
    }
    write_json(folder / "config.json", config)
    (folder / "trial.log").write_text("starting trial\n", encoding="utf-8")
    if trajectory:
        write_atif(folder / "agent" / "trajectory.json", sample_steps())
    return folder


def job_result(job: Path, rewards: dict[str, list[str]], *, total: int) -> Path:
    """The job's own result.json, listing its trials by reward as Harbor's JobStats does."""
    document = {
        "id": "job-1",
        "n_total_trials": total,
        "stats": {
            "n_completed_trials": total,
            "evals": {
                "terminus-2__gpt-5__terminal-bench@2.0": {
                    "n_trials": total,
                    "reward_stats": {"reward": rewards},
                    "exception_stats": {},
                }
            },
        },
    }
    return write_json(job / "result.json", document)


def test_a_trial_that_never_wrote_its_result_is_an_error_attempt(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "job-a"
    write_harbor_trial(job, "fix-git__AAAAAAA", "fix-git", agent_result=USAGE)
    unfinished(job, "hello-world__BBBBBBB", "hello-world")
    crashed = unfinished(job, "fix-git__CCCCCCC", "fix-git", trajectory=False)
    (crashed / "exception.txt").write_text(
        "Traceback (most recent call last):\n  ...\nRuntimeError: sandbox lost\n",
        encoding="utf-8",
    )

    imported = HarborImporter().read_imported(tmp_path / "jobs")
    rows = {row["trial_label"]: row for row in imported.frame.iter_rows(named=True)}
    assert len(rows) == 3
    started = rows["hello-world__BBBBBBB"]
    assert (started["workflow"], started["task"], started["run"]) == (
        WORKFLOW,
        "hello-world",
        "job-a",
    )
    assert (started["passed"], started["status"], started["stop_reason"]) == (
        None,
        "error",
        "unfinished",
    )
    assert started["tokens"] == TRAJECTORY_TOKENS  # from agent/trajectory.json final_metrics
    bare = rows["fix-git__CCCCCCC"]
    assert (bare["status"], bare["tokens"], bare["cost"]) == ("error", None, None)
    assert bare["error_message"] == "RuntimeError: sandbox lost"
    assert started["error_message"] == "the trial never wrote its result.json"
    [warning] = [text for text in imported.warnings if "never wrote" in text]
    assert warning.startswith("2 trials never wrote a result.json (job-a/fix-git__CCCCCCC, ")
    assert not any("took their usage" in text for text in imported.warnings)

    keep = compare(load([tmp_path / "jobs"]).attempts).keep.row(0, named=True)
    assert (keep["attempts"], keep["accepted"], keep["missing_usage"]) == (3, 1, 1)
    assert keep["total_tokens"] == 1100 + TRAJECTORY_TOKENS


def test_check_names_the_trials_that_never_wrote_a_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "job-b"
    unfinished(job, "hello-world__BBBBBBB", "hello-world")
    assert find_importer(job) is not None  # a job of unfinished trials is still Harbor's
    assert main(["check", str(job)]) in (0, 1)
    out = capsys.readouterr().out
    assert "1 trial never wrote a result.json (hello-world__BBBBBBB)" in out


def test_a_trial_known_only_from_the_job_result_is_counted_once(tmp_path: Path) -> None:
    """The job lists three trials; one folder was never kept, one never wrote its result."""
    job = tmp_path / "job-c"
    write_harbor_trial(job, "fix-git__AAAAAAA", "fix-git", agent_result=USAGE, reward=1.0)
    unfinished(job, "hello-world__BBBBBBB", "hello-world")
    job_result(job, {"1.0": ["fix-git__AAAAAAA", "hello-world__DDDDDDD"]}, total=3)

    imported = HarborImporter().read_imported(job)
    rows = {row["trial_label"]: row for row in imported.frame.iter_rows(named=True)}
    assert sorted(rows) == ["fix-git__AAAAAAA", "hello-world__BBBBBBB", "hello-world__DDDDDDD"]
    gone = rows["hello-world__DDDDDDD"]
    assert (gone["workflow"], gone["model"], gone["task"]) == (
        WORKFLOW,
        "openai/gpt-5",
        "hello-world",
    )
    assert (gone["passed"], gone["status"], gone["reward"]) == (True, "passed", 1.0)
    assert (gone["tokens"], gone["input_tokens"], gone["cost"]) == (None, None, None)
    assert gone["source"] == str(job / "result.json")
    assert any(
        text.startswith(
            "1 attempt recorded only at run level, in result.json (hello-world__DDDDDDD)"
        )
        for text in imported.warnings
    )

    keep = compare(load([job]).attempts).keep.row(0, named=True)
    assert (keep["attempts"], keep["accepted"], keep["missing_usage"]) == (3, 2, 1)


def test_a_job_result_listing_fewer_trials_than_its_folder_warns(tmp_path: Path) -> None:
    job = tmp_path / "job-d"
    for letter in "ABC":
        write_harbor_trial(job, f"t__{letter * 7}", "t", agent_result=USAGE)
    job_result(job, {"1.0": ["t__AAAAAAA"]}, total=1)
    imported = HarborImporter().read_imported(job)
    assert imported.frame.height == 3
    assert (
        "2 trial folders beside result.json not counted in it (it lists 1, the folder holds 3): "
        "every trial folder counted once"
    ) in imported.warnings


def test_a_cost_of_zero_beside_tokens_is_missing(tmp_path: Path) -> None:
    job = tmp_path / "job-e"
    write_harbor_trial(job, "a__AAAAAAA", "a", agent_result=USAGE | {"cost_usd": 0.0})
    nothing = {"n_input_tokens": 0, "n_cache_tokens": 0, "n_output_tokens": 0, "cost_usd": 0.0}
    write_harbor_trial(job, "b__BBBBBBB", "b", agent_result=nothing)
    rows = {row["task"]: row for row in HarborImporter().read(job).iter_rows(named=True)}
    assert (rows["a"]["tokens"], rows["a"]["cost"]) == (1100, None)
    assert (rows["b"]["tokens"], rows["b"]["cost"]) == (0, 0.0)  # nothing spent: 0 stays 0


def test_a_config_json_of_another_kind_is_no_trial(tmp_path: Path) -> None:
    job = tmp_path / "job-f"
    write_harbor_trial(job, "a__AAAAAAA", "a", agent_result=USAGE)
    write_json(job / "notes" / "config.json", {"theme": "dark"})
    (job / "config.json").write_text(json.dumps({"job_name": "job-f", "n_attempts": 1}))
    assert HarborImporter().read(job).height == 1


def test_an_unfinished_trial_opens_inside_from_its_config(tmp_path: Path) -> None:
    """The attempt screen and `trace` open an unfinished trial's trajectory by its source."""
    from tui_ledger.trajectory import read_attempt

    job = tmp_path / "job-g"
    write_harbor_trial(job, "fix-git__AAAAAAA", "fix-git", agent_result=USAGE)
    folder = unfinished(job, "hello-world__BBBBBBB", "hello-world")
    config = folder / "config.json"
    importer = find_importer(config)
    assert importer is not None and importer.name == "harbor"
    assert find_importer(job / "fix-git__AAAAAAA" / "config.json") is None  # it has a result
    [row] = HarborImporter().read(config).iter_rows(named=True)
    assert (row["task"], row["status"], row["tokens"]) == (
        "hello-world",
        "error",
        TRAJECTORY_TOKENS,
    )
    trajectory = read_attempt(row)
    assert len(trajectory.steps) == len(sample_steps())


def test_a_job_result_of_another_shape_never_stops_the_load(tmp_path: Path) -> None:
    job = tmp_path / "job-h"
    write_harbor_trial(job, "a__AAAAAAA", "a", agent_result=USAGE)
    job_result(job, {"1.0": ["a__AAAAAAA"]}, total=1)
    document = json.loads((job / "result.json").read_text())
    evals = document["stats"]["evals"]["terminus-2__gpt-5__terminal-bench@2.0"]
    evals["reward_stats"] = {"reward": {"1.0": "a__AAAAAAA"}}  # not a list of names
    write_json(job / "result.json", document)
    imported = HarborImporter().read_imported(job)
    assert imported.frame.height == 1
    [warning] = [text for text in imported.warnings if "could not be read" in text]
    assert warning.startswith("1 job result.json whose trial list could not be read (first: ")
