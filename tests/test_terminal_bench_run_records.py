"""Every trial a Terminal-Bench run recorded is an attempt, whether or not its trial folder was
kept (issue 52): the attempts are the union of the trial files and the run files' `results`
lists, each trial once. A trial known only from its run's record is counted from it (outcome,
tokens, null usage stays missing), its `source` names the run file, and a warning and `check`
say how many per workflow, in the wording every importer shares
(`_base.recorded_only_at_run_level`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import tb_layouts
from tests.pilot_helpers import settle
from tests.test_app_terminal_bench import on_screen
from tests.test_importers_wiring import run
from tui_ledger.importers.recorded import recorded_only_at_run_level
from tui_ledger.importers.terminal_bench import TerminalBenchImporter
from tui_ledger.load import load
from tui_ledger.tui.app import LedgerApp

RUN = "2025-08-10__05-27-18"


def submission(tmp_path: Path) -> Path:
    """One run of four trials: two with trial folders, two (one errored, one that passed) kept
    only in the run-level `results.json`."""
    folder = tmp_path / "cursor-cli"
    outcome = {"fix-git": True, "hello-world": False, "csv-to-parquet": True, "errored": None}
    tb_layouts.write_run(
        folder / f"run1_{RUN}", RUN, outcome, 700, missing=("csv-to-parquet", "errored")
    )
    return folder


def test_trials_only_in_the_run_file_are_counted_from_it(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    attempts = load(folder).attempts.sort("task")
    assert attempts["task"].to_list() == ["csv-to-parquet", "errored", "fix-git", "hello-world"]
    assert attempts["passed"].to_list() == [True, None, True, False]
    assert attempts["outcome"].to_list() == ["passed", "error", "passed", "failed"]
    assert attempts["tokens"].to_list() == [710, 710, 710, 710]
    run_file = f"run1_{RUN}/results.json"  # the loader names sources below the folder opened
    sources = dict(zip(attempts["task"], attempts["source"], strict=True))
    assert sources["csv-to-parquet"] == sources["errored"] == run_file
    assert sources["fix-git"].endswith(f"fix-git.1-of-1.{RUN}/results.json")
    # the same run as the trials its folder kept
    assert set(attempts["run"]) == {f"run1_{RUN}"}


def test_a_trial_in_both_sources_is_counted_once_without_a_word(tmp_path: Path) -> None:
    """The run file repeats every trial: those with a trial file are read from it, once, and
    that is no duplicate worth a warning."""
    folder = tmp_path / "droid"
    tb_layouts.droid(folder)
    imported = TerminalBenchImporter().read_imported(folder)
    assert imported.frame.height == tb_layouts.plain_count(folder)[0] == 9
    assert all(source.endswith("results.json") for source in imported.frame["source"])
    assert all("-of-1." in source for source in imported.frame["source"])  # trial files
    assert imported.warnings == ()


def test_usage_missing_from_the_run_record_stays_missing(tmp_path: Path) -> None:
    folder = submission(tmp_path)
    run_file = folder / f"run1_{RUN}" / "results.json"
    document = json.loads(run_file.read_text())
    for record in document["results"]:
        if record["task_id"] == "errored":
            record["total_input_tokens"] = record["total_output_tokens"] = None
    run_file.write_text(json.dumps(document))
    ledger = load(folder)
    errored = ledger.attempts.filter(ledger.attempts["task"] == "errored")
    assert errored["tokens"].to_list() == [None]
    missing = [w for w in ledger.report.warnings if w.kind == "missing_usage"]
    assert [w.count for w in missing] == [1]


def test_a_flat_run_names_the_run_of_a_trial_that_recorded_none(tmp_path: Path) -> None:
    """orchestrator's flat layout: an errored trial with no `recording_path`, only in the run
    file, belongs to the run its `run_metadata.json` names, like its recorded siblings."""
    folder = tmp_path / "orchestrator"
    tb_layouts.orchestrator(folder)
    document = json.loads((folder / "results.json").read_text())
    errored = tb_layouts.trial("2025-09-01__11-19-06", "errored", None, 0)
    errored["recording_path"] = None
    document["results"].append(errored)
    tb_layouts.write_json(folder / "results.json", document)
    tb_layouts.write_json(folder / "run_metadata.json", {"run_id": "2025-09-01__11-19-06"})
    attempts = load(folder).attempts
    assert attempts.height == tb_layouts.plain_count(folder)[0] == 7
    assert set(attempts["run"]) == {"2025-09-01__11-19-06"}


def test_the_warning_says_how_many_per_workflow(tmp_path: Path) -> None:
    root = tb_layouts.write_board(tmp_path / "board")
    warnings = TerminalBenchImporter().read_imported(root).warnings
    said = [w for w in warnings if "recorded only at run level" in w]
    assert said == [
        "27 attempts recorded only at run level (no trial folder): "
        "20250811_cursor-cli_claude-4-sonnet 3 of 12, 20250829_goose_claude-4-opus 9 of 9, "
        "20250829_goose_claude-4-sonnet 9 of 9, ob1-09-10-25 6 of 6; "
        "each counted from its run's record, e.g. errored-task.1-of-1.2025-08-11__05-27-18, "
        "errored-task.1-of-1.2025-08-12__05-27-18, errored-task.1-of-1.2025-08-13__05-27-18"
    ]


SAID = (
    "2 attempts recorded only at run level (no trial folder): cursor-cli 2 of 4; "
    f"each counted from its run's record, e.g. csv-to-parquet.1-of-1.{RUN}, errored.1-of-1.{RUN}."
)


def test_check_names_the_attempts_counted_from_run_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["check", str(submission(tmp_path))], capsys)
    assert code == 0, err
    assert f"WARNING (terminal_bench_import, 2): {SAID}" in out.splitlines()


async def test_the_app_shows_the_same_figures_and_warning(tmp_path: Path) -> None:
    folder = str(submission(tmp_path))
    assert await on_screen([folder]) == {"cursor-cli": (4, 2)}
    app = LedgerApp([folder])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert SAID in [item.message for item in app.collect_warnings()]


def test_the_shared_sentence_is_generic() -> None:
    """Other importers say it with their own missing record; none at all says nothing."""
    assert recorded_only_at_run_level({"a": 0}, {"a": 5}) == ()
    assert recorded_only_at_run_level(
        {"b": 1, "a": 1200}, {"a": 2000, "b": 1}, missing="no trajectory", counted_from="the report"
    ) == (
        "1,201 attempts recorded only at run level (no trajectory): a 1,200 of 2,000, b 1 of 1; "
        "each counted from the report",
    )
    assert recorded_only_at_run_level({"a": 5}, {"a": 5}, examples=["v", "w", "x", "y"]) == (
        "5 attempts recorded only at run level (no trial folder): a 5 of 5; "
        "each counted from its run's record, e.g. v, w, x",
    )


def test_a_run_file_named_alone_says_only_the_trials_without_a_folder(tmp_path: Path) -> None:
    """Named alone, the run file is every attempt; those whose trial folder sits beside it
    are not said to be recorded only at run level."""
    run_file = submission(tmp_path) / f"run1_{RUN}" / "results.json"
    imported = TerminalBenchImporter().read_imported(run_file)
    assert imported.frame.height == 4
    assert imported.warnings == (
        f"2 attempts recorded only at run level (no trial folder): run1_{RUN} 2 of 4; "
        f"each counted from its run's record, e.g. csv-to-parquet.1-of-1.{RUN}, "
        f"errored.1-of-1.{RUN}",
    )
