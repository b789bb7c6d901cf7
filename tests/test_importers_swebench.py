"""SWE-bench runs: mini-swe-agent trajectories written by mini-swe-agent itself (make_fixture.py),
SWE-agent trajectories and reports written by hand (make_handwritten.py), figures by hand.

- mini-run (claude-sonnet-4-5, priced; a run report beside it): astropy resolved
  (prompt 3000 + 2800, reads 0 + 2000, writes 2000 + 300, completion 100 + 50), django
  unresolved (2300 + 2100, 0 + 1500, 1500 + 200, 80 + 40), sympy an empty patch after a step
  limit (1900, 0, 1000, 60), pytest submitted but absent from the report (1900 + 1600,
  0 + 1200, 1200 + 100, 70 + 30).
- mini-local (an unpriced local model: instance_cost 0.0; per-instance report.json, both
  shapes): requests resolved, flask unresolved; 2 calls of 1000 + 100 tokens each.
- swe-agent-run (gpt-4o; the report in reports/, not beside the run): matplotlib resolved
  (40000 + 2000), sphinx unresolved after its wall-time limit (10000 + 500, cost 0.0),
  scikit-learn an evaluation error (5000 + 300).
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
    ImporterError,
    ImportOptions,
    SWEBenchImporter,
    find_importer,
    get_importer,
)
from tui_ledger.load import load

SWE = Path(__file__).parent / "fixtures" / "importers" / "swebench"
MINI_RUN = SWE / "mini-run"
SWE_AGENT_RUN = SWE / "swe-agent-run"
REPORT = SWE / "reports" / "gpt-4o.swe-agent-run.json"
SONNET = "mini-swe-agent__anthropic/claude-sonnet-4-5-20250929"
LOCAL = "mini-swe-agent__openai/local-model"
GPT = "swe-agent__gpt-4o"


def trajectory(run: Path, instance: str) -> Path:
    suffix = ".traj" if run.name.startswith("swe-agent") else ".traj.json"
    return run / instance / f"{instance}{suffix}"


def test_swebench_is_found_by_name_alias_and_content() -> None:
    for path in (SWE, MINI_RUN, SWE_AGENT_RUN, trajectory(MINI_RUN, "django__django-11099")):
        importer = find_importer(path)
        assert importer is not None and importer.name == "swe-bench", path
    assert find_importer(trajectory(SWE_AGENT_RUN, "sphinx-doc__sphinx-8721")) is not None
    for alias in ("swebench", "mini-swe-agent", "SWE_agent"):
        assert isinstance(get_importer(alias), SWEBenchImporter)
    assert find_importer(MINI_RUN / "preds.json") is None
    assert find_importer(REPORT) is None


def test_mini_swe_agent_run_with_its_report_beside_it() -> None:
    imported = SWEBenchImporter().read_imported(MINI_RUN)
    rows = rows_by(imported.frame, "task")
    assert set(imported.frame["workflow"]) == {SONNET}
    assert set(imported.frame["run"]) == {"mini-run"}

    astropy = rows["astropy__astropy-12907"]
    assert (astropy["passed"], astropy["status"], astropy["report_verdict"]) == (
        True,
        "passed",
        "resolved",
    )
    # litellm's prompt_tokens includes reads and writes: 5800 - 2000 - 2300 uncached.
    assert (
        astropy["input_tokens"],
        astropy["cached_input_tokens"],
        astropy["cache_write_tokens"],
        astropy["output_tokens"],
        astropy["tokens"],
    ) == (1500, 2000, 2300, 150, 5950)
    assert astropy["cost"] == pytest.approx(0.015975)  # litellm's price, as mini wrote it
    assert (astropy["api_calls"], astropy["calls_with_usage"]) == (2, 2)
    assert astropy["stop_reason"] == "Submitted" and astropy["submitted"] is True
    assert astropy["model"] == "anthropic/claude-sonnet-4-5-20250929"
    assert astropy["agent_version"] == "2.4.6"
    assert astropy["source"] == str(trajectory(MINI_RUN, "astropy__astropy-12907"))
    assert astropy["report_file"].endswith("anthropic__claude-sonnet-4-5-20250929.mini-run.json")

    django = rows["django__django-11099"]
    assert (django["passed"], django["status"], django["tokens"]) == (False, "failed", 4520)
    sympy = rows["sympy__sympy-20590"]
    assert (sympy["passed"], sympy["status"], sympy["report_verdict"]) == (
        False,
        "failed",
        "empty_patch",
    )
    assert (sympy["stop_reason"], sympy["submitted"], sympy["tokens"]) == (
        "LimitsExceeded",
        False,
        1960,
    )
    pytest_row = rows["pytest-dev__pytest-5227"]
    assert (pytest_row["passed"], pytest_row["status"], pytest_row["tokens"]) == (
        None,
        "unset",
        3600,
    )
    assert imported.warnings == (
        f"1 of 4 trajectories in {MINI_RUN} have no entry in the SWE-bench report: ungraded",
    )
    assert imported.conventions[0].startswith("mini-swe-agent usage is summed")


def test_unpriced_model_and_both_per_instance_report_shapes() -> None:
    frame = SWEBenchImporter().read(SWE / "mini-local")
    rows = rows_by(frame, "task")
    assert (rows["requests__requests-2317"]["passed"], rows["flask__flask-4045"]["passed"]) == (
        True,  # {"requests__requests-2317": {"resolved": true, ...}}
        False,  # {"resolved": false, ...} with no outer key: the id is its folder's name
    )
    for row in rows.values():
        assert row["workflow"] == LOCAL
        assert row["cost"] is None  # instance_cost 0.0 after 2 calls: no price, not $0
        assert (row["input_tokens"], row["output_tokens"], row["tokens"]) == (2000, 200, 2200)


def test_swe_agent_report_named_explicitly() -> None:
    alone = SWEBenchImporter().read_imported(SWE_AGENT_RUN)
    assert set(alone.frame["status"]) == {"unset"}
    assert alone.warnings == (
        f"3 trajectories in {SWE_AGENT_RUN} with no SWE-bench report beside them: ungraded; "
        "name the report with --report FILE",
    )
    imported = SWEBenchImporter().read_imported(SWE_AGENT_RUN, ImportOptions(report=REPORT))
    assert imported.warnings == ()
    rows = rows_by(imported.frame, "task")
    matplotlib = rows["matplotlib__matplotlib-23314"]
    assert matplotlib["workflow"] == GPT
    assert (matplotlib["passed"], matplotlib["status"], matplotlib["tokens"]) == (
        True,
        "passed",
        42000,
    )
    assert (matplotlib["input_tokens"], matplotlib["output_tokens"], matplotlib["cost"]) == (
        40000,
        2000,
        0.5,
    )
    assert "cached_input_tokens" not in imported.frame.columns  # SWE-agent does not split
    sphinx = rows["sphinx-doc__sphinx-8721"]
    # Unresolved after the wall-time limit: a timeout; its 0.0 cost after 4 calls is unknown.
    assert (sphinx["passed"], sphinx["status"], sphinx["cost"]) == (False, "timeout", None)
    sklearn = rows["scikit-learn__scikit-learn-13142"]
    assert (sklearn["passed"], sklearn["status"], sklearn["report_verdict"]) == (
        None,
        "error",
        "error",
    )
    # A folder of reports works as well as the file.
    by_folder = SWEBenchImporter().read(SWE_AGENT_RUN, ImportOptions(report=REPORT.parent))
    assert by_folder.drop("report_file").equals(imported.frame.drop("report_file"))


def test_swebench_through_the_loader_gives_the_figures() -> None:
    keep = rows_by(compare(load([SWE]).attempts).keep, "workflow")
    # mini-run: 5950 + 4520 + 1960 + 3600 over 4 attempts, 1 resolved.
    assert (keep[SONNET]["attempts"], keep[SONNET]["accepted"]) == (4, 1)
    assert keep[SONNET]["total_tokens"] == 16030
    assert keep[SONNET]["tokens_per_accepted_result"] == 16030.0
    assert keep[SONNET]["ungraded"] == 1
    assert (keep[LOCAL]["total_tokens"], keep[LOCAL]["tokens_per_accepted_result"]) == (
        4400,
        4400.0,
    )
    # swe-agent-run has no report beside it: every attempt ungraded, none accepted.
    assert (keep[GPT]["attempts"], keep[GPT]["accepted"], keep[GPT]["ungraded"]) == (3, 0, 3)
    assert keep[GPT]["total_tokens"] == 57800
    assert keep[GPT]["tokens_per_accepted_result"] is None


def test_usage_on_fewer_calls_than_api_calls_is_missing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(MINI_RUN, run)
    file = trajectory(run, "astropy__astropy-12907")
    document = json.loads(file.read_text())
    for message in document["messages"]:
        if message.get("extra", {}).get("response"):
            del message["extra"]["response"]  # the first call lost its raw response
            break
    write_json(file, document)
    imported = SWEBenchImporter().read_imported(run)
    row = rows_by(imported.frame, "task")["astropy__astropy-12907"]
    assert (row["tokens"], row["input_tokens"], row["calls_with_usage"]) == (None, None, 1)
    assert "1 trajectory with usage for fewer calls than api_calls" in imported.warnings[-1]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"info": {"model_stats": {"api_calls": "2"}}}, "info.model_stats.api_calls is '2'"),
        ({"info": {"model_stats": [1]}}, "info.model_stats is [1], not an object"),
        ({"info": {"exit_status": 3}}, "info.exit_status is 3"),
        ({"instance_id": 7}, "instance_id is 7"),
        ({"info": "x"}, "is not a trajectory (no info object)"),
        (
            {"messages": [{"extra": {"response": {"usage": {"prompt_tokens": 1.5}}}}]},
            "messages[0].extra.response.usage.prompt_tokens is 1.5",
        ),
    ],
)
def test_a_key_of_the_wrong_type_names_file_and_key(
    tmp_path: Path, change: dict[str, Any], problem: str
) -> None:
    document = json.loads(trajectory(MINI_RUN, "django__django-11099").read_text())
    for key, value in change.items():
        if isinstance(value, dict) and isinstance(document.get(key), dict):
            document[key] = document[key] | value
        else:
            document[key] = value
    file = write_json(trajectory(tmp_path / "run", "django__django-11099"), document)
    with pytest.raises(ImporterError) as caught:
        SWEBenchImporter().read(tmp_path / "run")
    message = str(caught.value)
    assert message.startswith(f"{file}: ") and problem in message
    assert "\n" not in message


def test_broken_files_and_reports(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(MINI_RUN, run)
    file = trajectory(run, "django__django-11099")
    file.write_text(file.read_text()[:500])
    with pytest.raises(ImporterError, match=r"django__django-11099\.traj\.json: is not valid JSON"):
        SWEBenchImporter().read(run)
    shutil.rmtree(file.parent)

    report = run / "anthropic__claude-sonnet-4-5-20250929.mini-run.json"
    write_json(report, {"resolved_ids": "astropy__astropy-12907"})
    with pytest.raises(ImporterError, match="resolved_ids is not a list of instance ids"):
        SWEBenchImporter().read(run)
    write_json(report, {"resolved_ids": ["astropy__astropy-12907"]})
    write_json(run / "logs" / "astropy__astropy-12907" / "report.json", {"resolved": False})
    with pytest.raises(ImporterError, match="says astropy__astropy-12907 is unresolved"):
        SWEBenchImporter().read(run)
    write_json(run / "logs" / "astropy__astropy-12907" / "report.json", {"resolved": "yes"})
    with pytest.raises(ImporterError, match="resolved is 'yes', not true or false"):
        SWEBenchImporter().read(run)

    with pytest.raises(ImporterError, match="does not exist; check the --report path"):
        SWEBenchImporter().read(MINI_RUN, ImportOptions(report=tmp_path / "nope.json"))
    with pytest.raises(ImporterError, match="is not a SWE-bench report"):
        SWEBenchImporter().read(MINI_RUN, ImportOptions(report=MINI_RUN / "preds.json"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImporterError, match="empty: holds no SWE-bench trajectory"):
        SWEBenchImporter().read(tmp_path / "empty")
