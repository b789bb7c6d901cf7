"""SWE-bench: a submission folder as mini-swe-agent publishes it (issue 52), and every instance a
run records anywhere counted once.

The generated submission, laid out as the SWE-bench experiments' bash-only submissions are:

    <submission>/trajs/<id>/<id>.traj.json      (mini-swe-agent's trajectories)
    <submission>/trajs/preds.json               (every instance submitted, with its model)
    <submission>/trajs/sb-cli-reports/<run>.json  (the sb-cli run report)
    <submission>/logs/<id>/report.json          (the harness's per-instance reports, unwrapped)

Instances: a (resolved) and b (unresolved) have trajectories, b re-run under the model string
`@anthropic/claude-sonnet-4-5-20250929`; c is resolved in the reports and d submitted in
preds.json only: neither kept a trajectory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.test_importers import write_json
from tui_ledger.accounting.ledger import compare
from tui_ledger.cli import main
from tui_ledger.importers import SWEBenchImporter, find_importer
from tui_ledger.load import load

MINI_RUN = Path(__file__).parent / "fixtures" / "importers" / "swebench" / "mini-run"
TEMPLATE = MINI_RUN / "astropy__astropy-12907" / "astropy__astropy-12907.traj.json"
MODEL = "anthropic/claude-sonnet-4-5-20250929"
# The template trajectory's usage: prompt 3000 + 2800, completion 100 + 50.
TOKENS = 3000 + 2800 + 100 + 50


def mini_trajectory(submission: Path, instance: str, model: str = MODEL) -> Path:
    document: dict[str, Any] = json.loads(TEMPLATE.read_text())
    document["instance_id"] = instance
    document["info"]["config"]["model"]["model_name"] = model
    return write_json(submission / "trajs" / instance / f"{instance}.traj.json", document)


def submission(root: Path) -> Path:
    folder = root / "20251001_mini-v1.0_sonnet"
    mini_trajectory(folder, "repo__a-1")
    mini_trajectory(folder, "repo__b-2", model=f"@{MODEL}")
    preds = {
        instance: {"instance_id": instance, "model_name_or_path": MODEL, "model_patch": "diff"}
        for instance in ("repo__a-1", "repo__b-2", "repo__c-3", "repo__d-4")
    }
    write_json(folder / "trajs" / "preds.json", preds)
    listed = ["repo__a-1", "repo__b-2", "repo__c-3"]
    write_json(
        folder / "trajs" / "sb-cli-reports" / "swe-bench_verified__test__sonnet.json",
        {
            "total_instances": 3,
            "resolved_instances": 2,
            "completed_ids": listed,
            "submitted_ids": listed,
            "resolved_ids": ["repo__a-1", "repo__c-3"],
            "unresolved_ids": ["repo__b-2"],
            "error_ids": [],
            # The harness lists the dataset's instances with no prediction here: no attempt.
            "incomplete_ids": ["repo__z-9"],
            "schema_version": 2,
        },
    )
    for instance, resolved in (("repo__a-1", True), ("repo__b-2", False), ("repo__c-3", True)):
        write_json(
            folder / "logs" / instance / "report.json",
            {"patch_is_None": False, "patch_exists": True, "resolved": resolved},
        )
    return folder


def test_a_submission_folder_is_graded_and_is_one_workflow(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    for path in (folder, folder / "trajs", tmp_path):
        importer = find_importer(path)
        assert importer is not None and importer.name == "swe-bench", path
    imported = SWEBenchImporter().read_imported(folder)
    rows = {row["task"]: row for row in imported.frame.iter_rows(named=True)}
    assert sorted(rows) == ["repo__a-1", "repo__b-2", "repo__c-3", "repo__d-4"]
    assert {row["workflow"] for row in rows.values()} == {folder.name}
    assert (rows["repo__a-1"]["status"], rows["repo__a-1"]["tokens"]) == ("passed", TOKENS)
    assert rows["repo__b-2"]["status"] == "failed"
    assert rows["repo__b-2"]["model"] == f"@{MODEL}"
    # Known only from the run-level records: counted from them, usage missing.
    only = rows["repo__c-3"]
    assert (only["status"], only["passed"], only["tokens"], only["model"]) == (
        "passed",
        True,
        None,
        MODEL,
    )
    assert only["source"] == str(folder / "trajs" / "preds.json")
    assert (rows["repo__d-4"]["status"], rows["repo__d-4"]["passed"]) == ("unset", None)
    assert any(
        text.startswith("2 attempts recorded only at run level, in ")
        and "(repo__c-3, repo__d-4)" in text
        for text in imported.warnings
    )
    assert not any("no SWE-bench report" in text for text in imported.warnings)


@pytest.mark.parametrize("named", ["submission", "trajs", "root"])
def test_a_submission_gives_the_same_figures_however_it_is_named(
    tmp_path: Path, named: str
) -> None:
    folder = submission(tmp_path)
    path = {"submission": folder, "trajs": folder / "trajs", "root": tmp_path}[named]
    keep = compare(load([path]).attempts).keep.row(0, named=True)
    assert keep["workflow"] == folder.name
    assert (keep["attempts"], keep["accepted"], keep["missing_usage"]) == (4, 2, 2)
    assert keep["total_tokens"] == 2 * TOKENS


def test_check_says_the_submission_holds_several_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = submission(tmp_path)
    main(["check", str(folder)])
    out = capsys.readouterr().out
    assert "More than one model inside a group: 20251001_mini-v1.0_sonnet" in out
    assert "2 attempts recorded only at run level, in" in out


def test_a_single_trajectory_file_is_one_attempt(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    frame = SWEBenchImporter().read(folder / "trajs" / "repo__a-1" / "repo__a-1.traj.json")
    assert frame["task"].to_list() == ["repo__a-1"]
    assert frame["status"].to_list() == ["passed"]


def test_reports_agreeing_in_other_words_and_a_broken_preds_never_stop_the_load(
    tmp_path: Path,
) -> None:
    folder = submission(tmp_path)
    # The harness wrote an empty patch for b, which sb-cli lists as unresolved: one outcome.
    write_json(
        folder / "logs" / "repo__b-2" / "report.json",
        {"patch_is_None": True, "patch_exists": False, "resolved": False},
    )
    (folder / "trajs" / "preds.json").write_text('["not a prediction"]')
    imported = SWEBenchImporter().read_imported(folder)
    rows = {row["task"]: row for row in imported.frame.iter_rows(named=True)}
    assert (rows["repo__b-2"]["status"], rows["repo__b-2"]["report_verdict"]) == (
        "failed",
        "empty_patch",
    )
    assert sorted(rows) == ["repo__a-1", "repo__b-2", "repo__c-3"]  # c from the reports
    assert any(text.startswith("1 preds.json could not be read") for text in imported.warnings)


def test_a_plain_run_gives_a_recorded_instance_its_models_workflow(tmp_path: Path) -> None:
    """A run folder (`<run>/<id>/<id>.traj.json`) keeps `<harness>__<model>` workflows; an
    instance only in its preds.json joins the workflow of the model preds.json names."""
    run = tmp_path / "mini-run"
    for instance, model in (("repo__a-1", MODEL), ("repo__b-2", "openai/gpt-5")):
        document: dict[str, Any] = json.loads(TEMPLATE.read_text())
        document["instance_id"] = instance
        document["info"]["config"]["model"]["model_name"] = model
        write_json(run / instance / f"{instance}.traj.json", document)
    preds = {"repo__c-3": {"instance_id": "repo__c-3", "model_name_or_path": "openai/gpt-5"}}
    write_json(run / "preds.json", preds)
    rows = {r["task"]: r for r in SWEBenchImporter().read(run).iter_rows(named=True)}
    assert rows["repo__a-1"]["workflow"] == f"mini-swe-agent__{MODEL}"
    assert rows["repo__c-3"]["workflow"] == "mini-swe-agent__openai/gpt-5"
    assert (rows["repo__c-3"]["status"], rows["repo__c-3"]["tokens"]) == ("unset", None)
