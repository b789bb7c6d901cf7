"""OpenHands output.jsonl: legacy and new-harness lines written by make_fixture.py, figures by hand.

- CodeActAgent/claude-run: django resolved (prompt 12000 = 4000 + 6000 read + 2000 written,
  completion 800, $0.12), astropy unresolved (9000 = 5000 + 3000 + 1000, 500, $0.08), sympy an
  agent error with no report (20000 = 7000 + 10000 + 3000, 1500, $0.20).
- CodeActAgent/v0.25-run: no token usage in metrics, accumulated_cost 0.0 for an unpriced model;
  flask resolved, requests unresolved by the run report beside it.
- sdk-run: critic tries: pylint tried twice (30000 + 25000 prompt, 38000 read, 9000 written,
  3000 completion, $0.50; resolved), xarray once (10000, 6000, 2000, 700, $0.10; unresolved).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.test_importers import rows_by
from tui_ledger.accounting.ledger import compare
from tui_ledger.importers import ImporterError, OpenHandsImporter, find_importer, get_importer
from tui_ledger.load import load

OPENHANDS = Path(__file__).parent / "fixtures" / "importers" / "openhands"
CLAUDE_RUN = OPENHANDS / "CodeActAgent" / "claude-run"
OLD_RUN = OPENHANDS / "CodeActAgent" / "v0.25-run"
SDK_RUN = OPENHANDS / "sdk-run"
CLAUDE = "CodeActAgent__anthropic/claude-3-5-sonnet-20241022"
MAVERICK = "CodeActAgent__openai/openrouter-llama-4-maverick"
SDK = "openhands__litellm_proxy/claude-sonnet-4-5-20250929"


def test_openhands_is_found_by_name_alias_and_content() -> None:
    for path in (OPENHANDS, CLAUDE_RUN, SDK_RUN, CLAUDE_RUN / "output.jsonl"):
        importer = find_importer(path)
        assert importer is not None and importer.name == "openhands", path
    assert isinstance(get_importer("open_hands"), OpenHandsImporter)
    assert find_importer(OLD_RUN / "report.json") is None


def test_legacy_run_every_field() -> None:
    imported = OpenHandsImporter().read_imported(CLAUDE_RUN)
    rows = rows_by(imported.frame, "task")
    django = rows["django__django-11099"]
    assert (django["workflow"], django["model"], django["run"]) == (
        CLAUDE,
        "anthropic/claude-3-5-sonnet-20241022",
        "claude-run",
    )
    assert (django["passed"], django["status"], django["report_verdict"]) == (
        True,
        "passed",
        "resolved",
    )
    assert (
        django["input_tokens"],
        django["cached_input_tokens"],
        django["cache_write_tokens"],
        django["output_tokens"],
        django["tokens"],
        django["cost"],
    ) == (4000, 6000, 2000, 800, 12800, 0.12)
    assert django["agent_class"] == "CodeActAgent"
    assert (django["source"], django["line"]) == (str(CLAUDE_RUN / "output.jsonl"), 1)
    astropy = rows["astropy__astropy-12907"]  # the top-level `report` of update_output_with_eval
    assert (astropy["passed"], astropy["status"], astropy["tokens"]) == (False, "failed", 9500)
    sympy = rows["sympy__sympy-20590"]
    assert (sympy["passed"], sympy["status"], sympy["stop_reason"]) == (
        None,
        "error",
        "agent_error",
    )
    assert sympy["error_message"] == (
        "RuntimeError: Agent reached maximum iteration in headless mode."
    )
    assert sympy["tokens"] == 21500
    assert imported.warnings == ()
    assert imported.conventions[0].startswith("OpenHands metrics.accumulated_token_usage")


def test_old_version_has_missing_usage_and_missing_cost() -> None:
    imported = OpenHandsImporter().read_imported(OLD_RUN)
    rows = rows_by(imported.frame, "task")
    for row in rows.values():
        assert row["workflow"] == MAVERICK
        assert (row["tokens"], row["input_tokens"], row["cost"]) == (None, None, None)
    assert (rows["flask__flask-4045"]["passed"], rows["requests__requests-2317"]["passed"]) == (
        True,
        False,
    )
    assert imported.warnings == (
        "2 attempts with no token usage in metrics (older OpenHands versions): usage missing",
    )


def test_critic_tries_are_one_attempt_each() -> None:
    rows = rows_by(OpenHandsImporter().read(SDK_RUN), "task")
    assert len(rows) == 2  # output.jsonl repeats the kept tries: not read
    pylint = rows["pylint-dev__pylint-7080"]
    assert (pylint["workflow"], pylint["passed"], pylint["status"]) == (SDK, True, "passed")
    assert (
        pylint["input_tokens"],
        pylint["cached_input_tokens"],
        pylint["cache_write_tokens"],
        pylint["output_tokens"],
        pylint["tokens"],
    ) == (8000, 38000, 9000, 3000, 58000)
    assert pylint["cost"] == pytest.approx(0.5)
    assert (pylint["attempt"], pylint["critic_tries"]) == (2, 2)
    assert pylint["source"] == str(SDK_RUN / "output.critic_attempt_2.jsonl")
    xarray = rows["pydata__xarray-4094"]
    assert (xarray["passed"], xarray["tokens"], xarray["critic_tries"]) == (False, 10700, 1)


def test_openhands_through_the_loader_gives_the_figures() -> None:
    keep = rows_by(compare(load([OPENHANDS]).attempts).keep, "workflow")
    assert (keep[CLAUDE]["attempts"], keep[CLAUDE]["accepted"]) == (3, 1)
    assert keep[CLAUDE]["total_tokens"] == 43800  # 12800 + 9500 + 21500
    assert keep[CLAUDE]["tokens_per_accepted_result"] == 43800.0
    assert keep[CLAUDE]["error"] == 1
    # Usage not recorded at all: unknown, never 0, and no per-accepted figure.
    assert (keep[MAVERICK]["attempts"], keep[MAVERICK]["accepted"]) == (2, 1)
    assert keep[MAVERICK]["total_tokens"] is None
    assert keep[MAVERICK]["tokens_per_accepted_result"] is None
    assert (keep[SDK]["total_tokens"], keep[SDK]["tokens_per_accepted_result"]) == (68700, 68700.0)


def test_a_line_without_a_report_is_ungraded_and_counted(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(OLD_RUN, run)
    (run / "report.json").unlink()
    imported = OpenHandsImporter().read_imported(run)
    assert set(imported.frame["status"]) == {"unset"}
    assert imported.warnings[0].startswith(f"2 attempts in {run} with no evaluation report")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"metrics": {"accumulated_token_usage": {"prompt_tokens": "9"}}}, "prompt_tokens is '9'"),
        ({"metrics": [1]}, "metrics is [1], not an object"),
        ({"report": {"resolved": "yes"}}, "report.resolved is 'yes', not true or false"),
        ({"error": 3}, "error is 3, not a message"),
        ({"instance_id": None}, "instance_id is None"),
    ],
)
def test_a_key_of_the_wrong_type_names_file_line_and_key(
    tmp_path: Path, change: dict[str, Any], problem: str
) -> None:
    lines = (CLAUDE_RUN / "output.jsonl").read_text().splitlines()
    document = json.loads(lines[1]) | change
    file = tmp_path / "run" / "output.jsonl"
    file.parent.mkdir()
    file.write_text(lines[0] + "\n" + json.dumps(document) + "\n")
    with pytest.raises(ImporterError) as caught:
        OpenHandsImporter().read(tmp_path / "run")
    message = str(caught.value)
    assert message.startswith(f"{file}: line 2: ") and problem in message
    assert "\n" not in message


def test_broken_files(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(CLAUDE_RUN, run)
    file = run / "output.jsonl"
    file.write_text(file.read_text()[:-200])  # the last line cut mid-write
    with pytest.raises(ImporterError, match=r"output\.jsonl: line 3: is not valid JSON"):
        OpenHandsImporter().read(run)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImporterError, match=r"empty: holds no OpenHands output\.jsonl"):
        OpenHandsImporter().read(tmp_path / "empty")
