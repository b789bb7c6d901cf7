"""Harbor job folders: trials written by Harbor's own models (make_fixture.py), figures by hand.

The fixture job (tests/fixtures/importers/harbor/jobs/2025-11-02__10-00-00) holds eight trials of
two agents and the job's own result.json:

| trial | agent | reward | exception | n_input / n_cache / n_output | cost |
|---|---|---|---|---|---|
| fix-git A | claude-code | 1.0 | | 10000 / 6000 / 500 | 0.05 |
| fix-git B | claude-code | 1.0 | AgentTimeoutError | 20000 / 15000 / 1000 | 0.10 |
| hello-world C | claude-code | 0.0 | | 3000 / 1000 / 200 | 0.01 |
| hello-world D | claude-code | none | EnvironmentStartTimeoutError | no agent_result | |
| fix-git E | terminus-2 | 0.0 | AgentTimeoutError | 8000 / null / 400 | null |
| hello-world F | terminus-2 | 0.5 | | 5000 / 0 / 100 | 0.02 |
| fix-git G | terminus-2 | 1.0 | (two steps) | 1000+2000 / 200+500 / 50+70 | 0.003 |
| hello-world H | terminus-2 | 1.0 | ApiRateLimitError | 100 / 0 / 10 | 0.0005 |
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.test_importers import rows_by, write_json
from tui_ledger.accounting.ledger import compare
from tui_ledger.importers import (
    HarborImporter,
    ImporterError,
    ImportOptions,
    find_importer,
    get_importer,
)
from tui_ledger.load import load

HARBOR = Path(__file__).parent / "fixtures" / "importers" / "harbor"
JOBS = HARBOR / "jobs"
JOB = JOBS / "2025-11-02__10-00-00"
CLAUDE = "claude-code__anthropic/claude-sonnet-4-5"
TERMINUS = "terminus-2__openai/gpt-5"


def trial_file(label: str) -> Path:
    return JOB / label / "result.json"


def test_harbor_is_found_by_name_alias_and_content() -> None:
    for path in (JOBS, JOB, JOB / "fix-git__Abc0dEf", trial_file("fix-git__Abc0dEf"), HARBOR):
        importer = find_importer(path)
        assert importer is not None and importer.name == "harbor", path
    assert isinstance(get_importer("tb2"), HarborImporter)
    assert isinstance(get_importer("Terminal_Bench-2"), HarborImporter)
    assert find_importer(JOB / "fix-git__Abc0dEf" / "config.json") is None
    assert find_importer(JOB / "fix-git__Abc0dEf" / "agent" / "result.json") is None


def test_harbor_job_every_field() -> None:
    imported = HarborImporter().read_imported(JOBS)
    frame = imported.frame
    assert frame.height == 8  # the job's result.json is no attempt
    rows = rows_by(frame, "trial_label")

    first = rows["fix-git__Abc0dEf"]
    assert (first["workflow"], first["task"], first["model"]) == (
        CLAUDE,
        "fix-git",
        "anthropic/claude-sonnet-4-5",
    )
    assert (first["passed"], first["status"], first["reward"]) == (True, "passed", 1.0)
    # n_input_tokens includes the cache reads: 10000 - 6000 uncached.
    assert (
        first["input_tokens"],
        first["cached_input_tokens"],
        first["output_tokens"],
        first["tokens"],
    ) == (4000, 6000, 500, 10500)
    assert first["cost"] == 0.05
    assert first["run"] == "2025-11-02__10-00-00"
    assert first["duration_s"] == 330.0
    assert first["agent_name"] == "claude-code" and first["agent_version"] == "2.0.31"
    assert first["dataset"] == "terminal-bench@2.0"
    assert first["trial_uuid"] == "00000000-0000-0000-0000-000000000001"
    assert first["reward_valid"] is True
    # The source names the trial by its folders, not a bare result.json.
    assert first["source"] == str(trial_file("fix-git__Abc0dEf"))
    assert first["line"] == 1
    assert "cache_write_tokens" not in frame.columns  # Harbor has no cache-write count

    assert imported.conventions[0].startswith("Harbor n_input_tokens includes cache reads")


def test_harbor_timeout_that_passed_keeps_its_reward() -> None:
    rows = rows_by(HarborImporter().read(JOBS), "trial_label")
    late = rows["fix-git__Bbc1dEf"]
    assert (late["passed"], late["status"], late["stop_reason"]) == (
        True,
        "passed",
        "AgentTimeoutError",
    )
    assert late["error_message"] == "Agent execution timed out after 900 seconds"
    assert late["tokens"] == 21000
    failed_timeout = rows["fix-git__Ebc4dEf"]
    assert (failed_timeout["passed"], failed_timeout["status"]) == (False, "timeout")
    # No cache count: the input stays whole, the cache bucket unknown, the total known.
    assert (
        failed_timeout["input_tokens"],
        failed_timeout["cached_input_tokens"],
        failed_timeout["tokens"],
        failed_timeout["cost"],
    ) == (8000, None, 8400, None)


def test_harbor_errors_are_errors_with_no_verdict() -> None:
    rows = rows_by(HarborImporter().read(JOBS), "trial_label")
    infrastructure = rows["hello-world__Dbc3dEf"]
    assert (infrastructure["passed"], infrastructure["status"]) == (None, "error")
    assert infrastructure["stop_reason"] == "EnvironmentStartTimeoutError"
    assert infrastructure["tokens"] is None  # no agent_result: unknown, never 0
    rate_limited = rows["hello-world__Hbc7dEf"]
    # A reward of 1.0 after an API error is not valid (Harbor's error policy): no verdict.
    assert (rate_limited["passed"], rate_limited["status"], rate_limited["reward"]) == (
        None,
        "error",
        1.0,
    )
    assert rate_limited["reward_valid"] is False


def test_harbor_multi_step_trial_sums_its_steps() -> None:
    step = rows_by(HarborImporter().read(JOBS), "trial_label")["fix-git__Gbc6dEf"]
    assert (
        step["input_tokens"],
        step["cached_input_tokens"],
        step["output_tokens"],
        step["tokens"],
    ) == (2300, 700, 120, 3120)
    assert step["cost"] == pytest.approx(0.003)
    assert step["steps"] == 2
    assert (step["passed"], step["status"]) == (True, "passed")


def test_harbor_fractional_reward_and_pass_threshold() -> None:
    plain = HarborImporter().read_imported(JOBS)
    half = rows_by(plain.frame, "trial_label")["hello-world__Fbc5dEf"]
    assert (half["passed"], half["status"], half["reward"]) == (False, "failed", 0.5)
    assert any("1 trial with a fractional reward" in warning for warning in plain.warnings)
    assert any("2 trials ended on an infrastructure" in warning for warning in plain.warnings)
    lenient = HarborImporter().read_imported(JOBS, ImportOptions(pass_threshold=0.5))
    assert rows_by(lenient.frame, "trial_label")["hello-world__Fbc5dEf"]["passed"] is True
    assert not any("fractional" in warning for warning in lenient.warnings)


def test_harbor_legacy_trial_and_single_file() -> None:
    legacy = HarborImporter().read(HARBOR / "legacy")
    row = legacy.row(0, named=True)
    assert row["workflow"] == "claude-code__anthropic/claude-opus-4-1"
    assert row["timestamp"].isoformat() == "2025-08-01T09:00:00.123456+00:00"  # no zone: UTC
    assert (row["tokens"], row["input_tokens"], row["cost"]) == (None, None, None)
    assert row["reward_valid"] is None
    single = HarborImporter().read(trial_file("fix-git__Abc0dEf"))
    assert single.height == 1 and single["tokens"].to_list() == [10500]
    assert single["run"].to_list() == ["2025-11-02__10-00-00"]


def test_harbor_through_the_loader_gives_the_figures() -> None:
    ledger = load([JOBS])
    keep = rows_by(compare(ledger.attempts).keep, "workflow")
    # claude-code: 10500 + 21000 + 3200 known, one trial's usage unknown; 2 accepted.
    assert (keep[CLAUDE]["attempts"], keep[CLAUDE]["accepted"]) == (4, 2)
    assert keep[CLAUDE]["total_tokens"] == 34700
    assert keep[CLAUDE]["missing_usage"] == 1
    assert keep[CLAUDE]["tokens_per_accepted_result"] == 17350.0
    assert keep[CLAUDE]["lower_bound"] is True
    # terminus-2: 8400 + 5100 + 3120 + 110; only the multi-step trial accepted.
    assert (keep[TERMINUS]["attempts"], keep[TERMINUS]["accepted"]) == (4, 1)
    assert keep[TERMINUS]["total_tokens"] == 16730
    assert keep[TERMINUS]["tokens_per_accepted_result"] == 16730.0
    assert (keep[TERMINUS]["timeout"], keep[TERMINUS]["error"], keep[TERMINUS]["failed"]) == (
        1,
        1,
        1,
    )


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"agent_result": {"n_input_tokens": "12"}}, "agent_result.n_input_tokens is '12'"),
        ({"agent_result": [1]}, "agent_result is [1], not an object"),
        ({"verifier_result": {"rewards": {"reward": "yes"}}}, "rewards.reward is 'yes'"),
        (
            {"verifier_result": {"rewards": {"a": 1, "b": 0}}},
            "rewards has a, b but no 'reward'",
        ),
        ({"task_name": 3}, "task_name is 3, not a task name"),
        ({"exception_info": {"exception_type": None}}, "exception_info.exception_type is None"),
        ({"started_at": "yesterday"}, "started_at 'yesterday' is not an ISO 8601 time"),
    ],
)
def test_harbor_a_key_of_the_wrong_type_names_file_and_key(
    tmp_path: Path, change: dict[str, Any], problem: str
) -> None:
    document = json.loads(trial_file("fix-git__Abc0dEf").read_text()) | change
    file = write_json(tmp_path / "job" / "fix-git__X" / "result.json", document)
    with pytest.raises(ImporterError) as caught:
        HarborImporter().read(tmp_path / "job")
    message = str(caught.value)
    assert message.startswith(f"{file}: ") and problem in message
    assert "\n" not in message


def test_harbor_broken_files(tmp_path: Path) -> None:
    job = tmp_path / "job"
    shutil.copytree(JOB, job)
    broken = job / "fix-git__Abc0dEf" / "result.json"
    broken.write_text(broken.read_text()[:200])  # cut mid-write
    with pytest.raises(ImporterError, match=r"fix-git__Abc0dEf/result\.json: is not valid JSON"):
        HarborImporter().read(job)
    write_json(broken, {"something": "else"})
    with pytest.raises(ImporterError, match=r"is not a Harbor trial or job result\.json"):
        HarborImporter().read(job)
    with pytest.raises(ImporterError, match=r"is a Harbor job result\.json, not a trial"):
        HarborImporter().read(job / "result.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImporterError, match=r"empty: holds no Harbor trial result\.json"):
        HarborImporter().read(tmp_path / "empty")
    with pytest.raises(ImporterError, match="does not exist"):
        HarborImporter().read(tmp_path / "missing")


def test_harbor_cache_larger_than_input_is_read_as_excluded(tmp_path: Path) -> None:
    document = json.loads(trial_file("fix-git__Abc0dEf").read_text())
    document["agent_result"] |= {"n_input_tokens": 100, "n_cache_tokens": 5000}
    write_json(tmp_path / "job" / "fix-git__X" / "result.json", document)
    imported = HarborImporter().read_imported(tmp_path / "job")
    row = imported.frame.row(0, named=True)
    assert (row["input_tokens"], row["cached_input_tokens"], row["tokens"]) == (100, 5000, 5600)
    assert any("more cache tokens than input" in warning for warning in imported.warnings)


def test_harbor_folders_never_split_a_workflow_by_their_names(tmp_path: Path) -> None:
    """Issue 40's rule for Harbor: jobs of any name, named together or through their parent,
    give the same attempts under one workflow (Harbor's agent/model key); `run` keeps the job."""
    from tests.trajectory_fixtures_atif import write_harbor_trial

    usage = {"n_input_tokens": 100, "n_cache_tokens": 0, "n_output_tokens": 10}
    jobs = tmp_path / "jobs"
    names = ["2025-11-02__10-00-00", "run1_2025-11-03__09-00-00", "nightly"]
    for number, job in enumerate(names):
        write_harbor_trial(jobs / job, f"t{number}__abc1234", f"t{number}", agent_result=usage)

    def figures(paths: list[Path]) -> tuple[list[str], list[str], int]:
        attempts = load([str(path) for path in paths]).attempts
        return (
            sorted(attempts["workflow"].cast(str).unique().to_list()),
            sorted(attempts["run"].cast(str).unique().to_list()),
            attempts.height,
        )

    expected = (["terminus-2__openai/gpt-5"], sorted(names), 3)
    assert figures([jobs]) == expected
    assert figures([jobs / name for name in names]) == expected
    for name in names:
        assert figures([jobs / name]) == (["terminus-2__openai/gpt-5"], [name], 1)
