"""OpenHands, promptfoo and Aider: an attempt recorded only at run level counts once (issue 52).

Each case is generated from the importer's own fixture, changed as the harness leaves it:
- OpenHands: the evaluation report names an instance whose `output.jsonl` line is gone;
- promptfoo: the file's `stats` count an error its results list does not hold;
- Aider: an exercise aider started (its `.aider.chat.history.md`) that never wrote its
  `.aider.results.json`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.test_importers import write_json
from tui_ledger.accounting.ledger import compare
from tui_ledger.importers import AiderImporter, OpenHandsImporter, PromptfooImporter
from tui_ledger.load import load

FIXTURES = Path(__file__).parent / "fixtures" / "importers"
OLD_RUN = FIXTURES / "openhands" / "CodeActAgent" / "v0.25-run"
MAVERICK = "CodeActAgent__openai/openrouter-llama-4-maverick"
PROMPTFOO = FIXTURES / "promptfoo" / "results.json"
SONNET_RUN = FIXTURES / "aider" / "tmp.benchmarks" / "2025-06-01-10-00-00--sonnet-diff"
SONNET = "aider__anthropic/claude-sonnet-4-20250514__diff"


def test_openhands_an_instance_only_in_the_evaluation_report_counts_once(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(OLD_RUN, run)
    report = json.loads((run / "report.json").read_text())
    report["resolved_ids"].append("django__django-11099")
    # sympy: submitted, never graded, no output line: an ungraded attempt known from the report.
    report["submitted_ids"] = [
        "flask__flask-4045",
        "requests__requests-2317",
        "django__django-11099",
        "sympy__sympy-20590",
    ]
    write_json(run / "report.json", report)

    imported = OpenHandsImporter().read_imported(run)
    rows = {row["task"]: row for row in imported.frame.iter_rows(named=True)}
    assert sorted(rows) == [
        "django__django-11099",
        "flask__flask-4045",
        "requests__requests-2317",
        "sympy__sympy-20590",
    ]
    sympy = rows["sympy__sympy-20590"]
    assert (sympy["status"], sympy["passed"], sympy["workflow"]) == ("unset", None, MAVERICK)
    only = rows["django__django-11099"]
    assert (only["workflow"], only["passed"], only["status"]) == (MAVERICK, True, "passed")
    assert (only["tokens"], only["cost"], only["source"]) == (None, None, str(run / "report.json"))
    assert any(
        text.startswith("2 attempts recorded only at run level, in ")
        and "(django__django-11099, sympy__sympy-20590)" in text
        for text in imported.warnings
    )
    keep = compare(load([run]).attempts).keep.row(0, named=True)
    assert (keep["attempts"], keep["accepted"]) == (4, 2)


def test_openhands_a_report_naming_only_its_lines_adds_nothing() -> None:
    imported = OpenHandsImporter().read_imported(OLD_RUN)
    assert imported.frame.height == 2
    assert not any("recorded only" in text for text in imported.warnings)


def one_workflow(path: Path) -> Path:
    """The fixture's results of its first workflow alone, with stats that count them."""
    frame = PromptfooImporter().read(PROMPTFOO)
    first = frame["workflow"][0]
    keep = set(frame.filter(frame["workflow"] == first)["line"].to_list())
    document = json.loads(PROMPTFOO.read_text())
    results = [r for n, r in enumerate(document["results"]["results"], start=1) if n in keep]
    document["results"]["results"] = results
    stats = document["results"]["stats"]
    stats["successes"] = sum(r["success"] for r in results)
    stats["errors"] = sum(r.get("failureReason") == 2 for r in results)
    stats["failures"] = len(results) - stats["successes"] - stats["errors"]
    return write_json(path, document)


def test_promptfoo_an_error_only_in_the_stats_counts_once(tmp_path: Path) -> None:
    plain = one_workflow(tmp_path / "plain.json")
    document = json.loads(plain.read_text())
    document["results"]["stats"]["errors"] += 1
    file = write_json(tmp_path / "results.json", document)
    held = len(document["results"]["results"])
    imported = PromptfooImporter().read_imported(file)
    assert imported.frame.height == held + 1
    extra = imported.frame.filter(imported.frame["task"].is_null()).row(0, named=True)
    assert (extra["passed"], extra["status"], extra["tokens"]) == (False, "error", None)
    assert extra["workflow"] == imported.frame["workflow"][0]
    assert imported.warnings == (
        "1 attempt recorded only at run level, in results.json's stats (errors: 1), "
        "with no record of its own: counted once each from it (outcome as recorded, "
        "usage missing where it has none)",
    )
    assert PromptfooImporter().read_imported(plain).warnings == ()
    before = compare(load([plain]).attempts).keep.row(0, named=True)
    after = compare(load([file]).attempts).keep.row(0, named=True)
    assert (after["attempts"], after["accepted"]) == (before["attempts"] + 1, before["accepted"])
    assert after["missing_usage"] == before["missing_usage"] + 1


def test_promptfoo_stats_beyond_the_results_of_several_workflows_warn(tmp_path: Path) -> None:
    document = json.loads(PROMPTFOO.read_text())
    document["results"]["stats"]["errors"] += 2
    imported = PromptfooImporter().read_imported(write_json(tmp_path / "r.json", document))
    assert imported.frame.height == 24
    assert imported.warnings == (
        "2 results counted in r.json's stats (errors: 2) are not in its results list and no "
        "count says whose: not attempts here",
    )


def test_promptfoo_stats_that_match_the_results_add_nothing() -> None:
    imported = PromptfooImporter().read_imported(PROMPTFOO)
    assert imported.frame.height == 24 and imported.warnings == ()


def test_aider_an_exercise_started_and_never_finished_is_an_error(tmp_path: Path) -> None:
    run = tmp_path / "tmp.benchmarks" / SONNET_RUN.name
    shutil.copytree(SONNET_RUN, run)
    started = run / "python" / "exercises" / "practice" / "zipper"
    started.mkdir(parents=True)
    (started / ".aider.chat.history.md").write_text("# aider chat started\n", encoding="utf-8")
    (run / "python" / "exercises" / "practice" / "never-run").mkdir()  # copied, not started

    imported = AiderImporter().read_imported(run)
    rows = {row["task"]: row for row in imported.frame.iter_rows(named=True)}
    assert len(rows) == 5
    zipper = rows["python/zipper"]
    assert (zipper["workflow"], zipper["status"], zipper["stop_reason"]) == (
        SONNET,
        "error",
        "unfinished",
    )
    assert zipper["tokens"] is None
    assert any(
        text.startswith("1 exercise started and never wrote .aider.results.json (zipper:")
        for text in imported.warnings
    )
    assert any(text.startswith("1 exercise crashed") for text in imported.warnings)


def test_one_rule_for_a_recorded_cost_and_a_list_of_names() -> None:
    from tui_ledger.importers.recorded import listed, priced

    assert priced(0.0, 1200) is None  # an unpriced model beside tokens spent: missing
    assert priced(0.0, None) is None  # nothing counted shows nothing spent: missing too
    assert priced(0.0, 0) == 0.0  # nothing spent: $0 stays
    assert priced(0.25, 1200) == 0.25 and priced(None, 1200) is None
    names = [f"t{number}" for number in range(10)]
    assert listed(names) == "t0, t1, t2, t3, t4, t5, t6, t7 and 2 more"
    assert listed(names[:2]) == "t0, t1"
