"""The importers as the command line reaches them: detected or forced, their options, the
conventions and warnings in the load report, `--outcomes` on any input, `convert` round trips,
trials named by their path, and broken files refused in one line with nothing written."""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tui_ledger.cli import main
from tui_ledger.cli_options import UsageError, add_load_options, app_argv, load_options
from tui_ledger.importers import ImportOptions
from tui_ledger.load import load

FIXTURES = Path(__file__).parent / "fixtures" / "importers"

# (importer, fixture): every importer's own fixture, read by detection.
CASES: list[tuple[str, Path]] = [
    ("harbor", FIXTURES / "harbor" / "jobs"),
    ("swe-bench", FIXTURES / "swebench" / "mini-run"),
    ("swe-bench", FIXTURES / "swebench" / "swe-agent-run"),
    ("openhands", FIXTURES / "openhands" / "CodeActAgent" / "claude-run"),
    ("openhands", FIXTURES / "openhands" / "sdk-run"),
    ("aider", FIXTURES / "aider" / "tmp.benchmarks"),
    ("claude-code", FIXTURES / "sessions" / "claude" / "projects"),
    ("codex", FIXTURES / "sessions" / "codex" / "sessions"),
    ("otel", FIXTURES / "otel" / "traces.json"),
    ("otel", FIXTURES / "otel" / "traces.jsonl"),
    ("terminal-bench", FIXTURES / "terminal_bench"),
    ("inspect", FIXTURES / "inspect" / "ledger_fixture.json"),
    ("promptfoo", FIXTURES / "promptfoo" / "results.json"),
]
IDS = [f"{name}:{path.name}" for name, path in CASES]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`ledger-tui ARGV`: its exit code, stdout and stderr."""
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def figures(path: Path | str, capsys: pytest.CaptureFixture[str], *options: str) -> dict[str, Any]:
    """Every figure `summary --format json` gives, without the warnings and checks (which name
    the files read, and so differ between a harness's files and their conversion)."""
    code, out, err = run(
        ["summary", str(path), "--format", "json", "--intervals", "none", *options], capsys
    )
    assert code == 0, err
    document = json.loads(out)
    return {key: value for key, value in document.items() if key not in ("warnings", "checks")}


# --- detection, forcing, the report ------------------------------------------------------------


@pytest.mark.parametrize(("name", "path"), CASES, ids=IDS)
def test_check_names_the_importer_and_the_convention_it_read(
    name: str, path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["check", str(path)], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"Read {path} ({name})."
    conventions = [line for line in lines if line.startswith("Convention: ")]
    assert conventions, out
    assert all(line.startswith(f"Convention: {name}: ") for line in conventions)


@pytest.mark.parametrize(("name", "path"), CASES, ids=IDS)
def test_forcing_the_importer_reads_the_same(
    name: str, path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert figures(path, capsys, "--input-format", name) == figures(path, capsys)


def test_forcing_the_wrong_importer_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        ["summary", str(FIXTURES / "harbor" / "jobs"), "--input-format", "aider"], capsys
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "jobs" in err and "aider" in err


def test_importer_warnings_are_load_warnings_with_their_count() -> None:
    ledger = load(FIXTURES / "harbor" / "jobs")
    mine = [w for w in ledger.report.warnings if w.kind == "harbor_import"]
    assert [(w.count, w.message.split(" with ")[0]) for w in mine][:1] == [(1, "1 trial")]
    assert any(w.count == 2 and "infrastructure" in w.message for w in mine)
    assert all(w.message.endswith(".") and not w.lines for w in mine)


# --- importer options -------------------------------------------------------------------------


def test_pass_threshold_accepts_partial_credit(capsys: pytest.CaptureFixture[str]) -> None:
    jobs = FIXTURES / "harbor" / "jobs"

    def accepted(*options: str) -> int:
        views = figures(jobs, capsys, *options)["views"]
        return sum(group["accepted"] for group in views["keep"].values())

    assert accepted("--pass-threshold", "0.5") == accepted() + 1


@pytest.mark.parametrize("value", ["0", "1.5", "-1"])
def test_a_pass_threshold_outside_0_to_1_is_refused(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        ["summary", str(FIXTURES / "harbor" / "jobs"), "--pass-threshold", value], capsys
    )
    assert code == 2 and err.startswith("ledger-tui: error: --pass-threshold")
    assert err.count("\n") == 1


def test_report_names_the_swebench_report_when_it_is_elsewhere(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_folder = FIXTURES / "swebench" / "swe-agent-run"
    report = FIXTURES / "swebench" / "reports" / "gpt-4o.swe-agent-run.json"
    [without] = figures(run_folder, capsys)["views"]["keep"].values()
    [joined] = figures(run_folder, capsys, "--report", str(report))["views"]["keep"].values()
    assert without["outcomes"]["ungraded"] == 3
    assert joined["outcomes"]["ungraded"] < 3


def test_outcome_attribute_reaches_the_otel_importer(capsys: pytest.CaptureFixture[str]) -> None:
    traces = FIXTURES / "otel" / "traces.jsonl"

    def batch_eval(*options: str) -> dict[str, Any]:
        keep = figures(traces, capsys, *options)["views"]["keep"]
        return next(group for name, group in keep.items() if name.startswith("batch-eval"))

    assert (batch_eval()["outcomes"]["ungraded"], batch_eval()["accepted"]) == (1, 0)
    chosen = batch_eval("--outcome-attribute", "eval.passed")
    assert (chosen["outcomes"]["ungraded"], chosen["accepted"]) == (0, 1)


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="*")
    parser.add_argument("--watch", action="store_true")
    parser.add_argument("--prices")
    parser.add_argument("--flat-price", type=float)
    add_load_options(parser)
    return parser.parse_args(list(argv))


def test_the_new_options_survive_the_round_trip_to_the_apps_command_line(tmp_path: Path) -> None:
    grades = tmp_path / "grades.csv"
    grades.write_text("session_id,passed\nx,true\n")
    argv = [
        "run",
        "--pass-threshold",
        "0.5",
        "--report",
        str(tmp_path),
        "--outcome-attribute",
        "verdict",
        "--outcomes",
        str(grades),
        "--outcomes-key",
        "session_id",
    ]
    args = parsed(*argv)
    again = parsed(*app_argv(args))
    assert load_options(again) == load_options(args)
    assert load_options(args)["imports"] == ImportOptions(
        pass_threshold=0.5,
        report=tmp_path,
        outcome_attribute="verdict",
        outcomes=grades,
        outcomes_key="session_id",
    )
    assert "imports" not in load_options(parsed("run"))


def test_outcomes_key_needs_the_outcomes_file() -> None:
    with pytest.raises(UsageError, match="--outcomes-key"):
        load_options(parsed("run", "--outcomes-key", "task"))


# --- --outcomes on every input ----------------------------------------------------------------

SESSIONS = FIXTURES / "sessions" / "claude" / "projects"
S1 = "11111111-1111-4111-8111-111111111111"


def test_outcomes_join_a_grading_csv_onto_sessions(tmp_path: Path) -> None:
    grades = tmp_path / "grades.csv"
    grades.write_text(f"session_id,passed,task\n{S1},true,fix-login\n")
    ledger = load(SESSIONS, imports=ImportOptions(outcomes=grades))
    rows = {row["session_id"]: row for row in ledger.attempts.iter_rows(named=True)}
    assert (rows[S1]["outcome"], rows[S1]["task"]) == ("passed", "fix-login")
    assert [row["outcome"] for key, row in rows.items() if key != S1] == ["ungraded"]
    joined = [w for w in ledger.report.warnings if w.kind == "outcomes_join"]
    assert [w.count for w in joined] == [1]
    assert "without an outcome" in joined[0].message
    said = f"Derived: the verdict of 1 attempt (of 2) from {grades}, joined by session_id."
    assert said in ledger.report.lines()


def test_outcomes_join_onto_a_plain_table_by_a_named_key(tmp_path: Path) -> None:
    table = tmp_path / "runs.csv"
    table.write_text(
        "Agent,run_key,result,tokens\nalpha,k1,,100\nalpha,k2,,200\nbeta,k3,fail,300\n"
    )
    grades = tmp_path / "grades.jsonl"
    grades.write_text('{"run_key": "k1", "passed": true}\n{"run_key": "k3", "passed": true}\n')
    ledger = load(table, imports=ImportOptions(outcomes=grades, outcomes_key="run_key"))
    assert ledger.attempts["outcome"].cast(str).to_list() == ["passed", "ungraded", "passed"]
    assert ledger.attempts["tokens"].to_list() == [100, 200, 300]


def test_outcomes_that_match_nothing_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grades = tmp_path / "grades.csv"
    grades.write_text("session_id,passed\nnope,true\n")
    out_file = tmp_path / "out.csv"
    code, out, err = run(
        ["convert", str(SESSIONS), "-o", str(out_file), "--outcomes", str(grades)], capsys
    )
    assert code == 2 and out == "" and not out_file.exists()
    assert err.count("\n") == 1
    assert "grades.csv" in err and "session_id" in err and "'nope'" in err


def test_outcomes_over_several_inputs_need_a_match_in_one_of_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    codex = FIXTURES / "sessions" / "codex" / "sessions"
    grades = tmp_path / "grades.csv"
    grades.write_text(f"session_id,passed\n{S1},false\n")
    ledger = load([SESSIONS, codex], imports=ImportOptions(outcomes=grades))
    assert (ledger.attempts["outcome"] == "failed").sum() == 1
    [joined] = [w for w in ledger.report.warnings if w.kind == "outcomes_join"]
    assert joined.count == ledger.attempts.height - 1
    grades.write_text("session_id,passed\nnope,false\n")
    code, _, err = run(["summary", str(SESSIONS), str(codex), "--outcomes", str(grades)], capsys)
    assert code == 2 and "none of its keys matches" in err and err.count("\n") == 1


# --- convert round trips ----------------------------------------------------------------------


@pytest.mark.parametrize(("name", "path"), CASES, ids=IDS)
def test_convert_loads_back_to_the_same_figures(
    name: str, path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "attempts.csv"
    code, _, err = run(["convert", str(path), "-o", str(out_file)], capsys)
    assert code == 0, err
    assert figures(out_file, capsys) == figures(path, capsys)


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_convert_round_trips_in_every_attempt_format(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jobs = FIXTURES / "harbor" / "jobs"
    out_file = tmp_path / f"attempts{suffix}"
    assert run(["convert", str(jobs), "-o", str(out_file)], capsys)[0] == 0
    assert figures(out_file, capsys) == figures(jobs, capsys)


def test_convert_keeps_the_joined_outcomes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grades = tmp_path / "grades.csv"
    grades.write_text(f"session_id,passed\n{S1},true\n")
    out_file = tmp_path / "attempts.csv"
    assert (
        run(["convert", str(SESSIONS), "-o", str(out_file), "--outcomes", str(grades)], capsys)[0]
        == 0
    )
    assert figures(out_file, capsys) == figures(SESSIONS, capsys, "--outcomes", str(grades))


# --- trials named by their path; a leaderboard root --------------------------------------------


def trial(
    root: Path,
    where: str,
    task: str,
    trial_name: str,
    *,
    run_id: str,
    resolved: bool | None,
    tokens: int | None,
) -> Path:
    """A Terminal-Bench trial results.json at `root/where/<task>/<trial>/results.json`."""
    file = root / where / task / trial_name / "results.json"
    file.parent.mkdir(parents=True)
    record = {
        "id": f"{where}-{trial_name}",
        "trial_name": trial_name,
        "task_id": task,
        "is_resolved": resolved,
        "failure_mode": "unset",
        "total_input_tokens": tokens,
        "total_output_tokens": None if tokens is None else 10,
        "recording_path": f"{run_id}/{task}/{trial_name}/sessions/agent.cast",
    }
    file.write_text(json.dumps(record))
    return file


@pytest.fixture
def board(tmp_path: Path) -> Path:
    """A leaderboard root: one submission with run folders, one without."""
    root = tmp_path / "leaderboard"
    for run_id in ("run-1", "run-2"):
        trial(
            root,
            f"sub-a/{run_id}",
            "fix-git",
            f"fix-git.1-of-1.{run_id}",
            run_id=run_id,
            resolved=True,
            tokens=100,
        )
    for k, tokens in ((1, None), (2, 50)):
        trial(
            root,
            "sub-b",
            "fix-git",
            f"fix-git.{k}-of-2",
            run_id="2025-09-01__11-51-46",
            resolved=k == 2,
            tokens=tokens,
        )
    return root


def test_a_leaderboard_root_gives_one_workflow_per_submission(board: Path) -> None:
    ledger = load(board)
    assert sorted(set(ledger.attempts["workflow"].to_list())) == ["sub-a", "sub-b"]
    runs = ledger.attempts.group_by("workflow").agg("run").sort("workflow")["run"].to_list()
    assert [sorted(set(found)) for found in runs] == [["run-1", "run-2"], ["2025-09-01__11-51-46"]]
    # A submission opened alone stays one workflow, runs and all.
    assert set(load(board / "sub-a").attempts["workflow"]) == {"sub-a"}
    assert set(load(board / "sub-b").attempts["workflow"]) == {"sub-b"}
    assert set(load(board / "sub-a" / "run-1").attempts["workflow"]) == {"run-1"}


def test_rows_name_their_trial_by_its_path_below_the_folder_opened(
    board: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = load(board)
    assert sorted(ledger.attempts["source"].to_list()) == [
        "sub-a/run-1/fix-git/fix-git.1-of-1.run-1/results.json",
        "sub-a/run-2/fix-git/fix-git.1-of-1.run-2/results.json",
        "sub-b/fix-git/fix-git.1-of-2/results.json",
        "sub-b/fix-git/fix-git.2-of-2/results.json",
    ]
    missing = next(line for line in ledger.report.lines() if "(missing_usage" in line)
    assert missing.endswith("(e.g. sub-b/fix-git/fix-git.1-of-2/results.json)")
    code, out, _ = run(["check", str(board)], capsys)
    assert code == 0
    example = next(line for line in out.splitlines() if "e.g." in line and "fix-git.1-of-2" in line)
    assert "results.json:" not in example and "line" not in example
    # Two folders opened: each trial named with the folder it came from.
    both = load([board / "sub-a", board / "sub-b"])
    assert f"{board / 'sub-b'}/fix-git/fix-git.1-of-2/results.json" in both.attempts["source"]


def test_a_line_number_stays_where_it_means_something() -> None:
    ledger = load(FIXTURES / "openhands" / "CodeActAgent" / "claude-run")
    assert ledger.report.units["output.jsonl"] == "line"


# --- broken files: one line naming the file and the key, exit 2, nothing written ---------------


def _first(root: Path, pattern: str) -> Path:
    return sorted(path for path in root.rglob(pattern) if path.is_file())[0]


def _edit_json(file: Path, change: Callable[[Any], None]) -> None:
    document = json.loads(file.read_text())
    change(document)
    file.write_text(json.dumps(document))


def _edit_line(file: Path, number: int, change: Callable[[Any], None]) -> None:
    lines = file.read_text().splitlines()
    document = json.loads(lines[number - 1])
    change(document)
    lines[number - 1] = json.dumps(document)
    file.write_text("\n".join(lines) + "\n")


def _otel_tokens(document: Any) -> None:
    """The first gen_ai.usage.input_tokens attribute made a word."""
    stack = [document]
    while stack:
        item = stack.pop(0)
        if isinstance(item, dict):
            if item.get("key") == "gen_ai.usage.input_tokens":
                item["value"] = {"stringValue": "many"}
                return
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


# importer, fixture, the file to break (a glob), the wrong-typed key and how to write it
BROKEN: list[tuple[str, Path, str, str, Callable[[Path], None]]] = [
    (
        "harbor",
        FIXTURES / "harbor" / "jobs",
        "fix-git__Abc0dEf/result.json",
        "task_name",
        lambda f: _edit_json(f, lambda d: d.update(task_name=3)),
    ),
    (
        "swe-bench",
        FIXTURES / "swebench" / "mini-run",
        "*.traj.json",
        "instance_id",
        lambda f: _edit_json(f, lambda d: d.update(instance_id=7)),
    ),
    (
        "openhands",
        FIXTURES / "openhands" / "CodeActAgent" / "claude-run",
        "output.jsonl",
        "error",
        lambda f: _edit_line(f, 1, lambda d: d.update(error=3)),
    ),
    (
        "aider",
        FIXTURES / "aider" / "tmp.benchmarks",
        "clock/.aider.results.json",
        "cost",
        lambda f: _edit_json(f, lambda d: d.update(cost="free")),
    ),
    (
        "claude-code",
        FIXTURES / "sessions" / "claude" / "projects",
        "11111111-*.jsonl",
        "sessionId",
        lambda f: _edit_line(f, 2, lambda d: d.update(sessionId=5)),
    ),
    (
        "codex",
        FIXTURES / "sessions" / "codex" / "sessions",
        "rollout-*.jsonl",
        "total_token_usage",
        lambda f: f.write_text(
            f.read_text()
            + json.dumps(
                {
                    "type": "event_msg",
                    "payload": {"type": "token_count", "info": {"total_token_usage": "lots"}},
                }
            )
            + "\n"
        ),
    ),
    (
        "otel",
        FIXTURES / "otel" / "traces.json",
        "traces.json",
        "gen_ai.usage.input_tokens",
        lambda f: _edit_json(f, _otel_tokens),
    ),
    (
        "terminal-bench",
        FIXTURES / "terminal_bench" / "agent-b",
        "results.json",
        "total_input_tokens",
        lambda f: _edit_json(f, lambda d: d.update(total_input_tokens="12")),
    ),
]


def _inspect_usage(document: Any) -> None:
    document["samples"][0]["model_usage"] = {"m": {"input_tokens": "lots"}}


def _promptfoo_usage(document: Any) -> None:
    document["results"]["results"][0]["tokenUsage"] = {"total": "many"}


BROKEN += [
    (
        "inspect",
        FIXTURES / "inspect" / "ledger_fixture.json",
        "ledger_fixture.json",
        "input_tokens",
        lambda f: _edit_json(f, _inspect_usage),
    ),
    (
        "promptfoo",
        FIXTURES / "promptfoo" / "results.json",
        "results.json",
        "tokenUsage.total",
        lambda f: _edit_json(f, _promptfoo_usage),
    ),
]
BROKEN_IDS = [name for name, *_ in BROKEN]


def _copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / "in" / source.name
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        target.parent.mkdir()
        shutil.copy(source, target)
    return target


def _refused(argv: list[str], out_file: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = run(argv, capsys)
    assert code == 2, err
    assert out == "" and not out_file.exists()
    assert err.startswith("ledger-tui: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(("name", "fixture", "pattern", "key", "_"), BROKEN, ids=BROKEN_IDS)
def test_a_truncated_file_is_refused_by_name(
    name: str,
    fixture: Path,
    pattern: str,
    key: str,
    _: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    copy = _copy(fixture, tmp_path)
    broken = _first(copy.parent, pattern)
    text = broken.read_text()
    broken.write_text(text[: len(text) // 2] if text.count("\n") < 3 else text[:-30])
    before = broken.read_bytes()
    out_file = tmp_path / "out.csv"
    err = _refused(["convert", str(copy), "-o", str(out_file)], out_file, capsys)
    assert str(broken) in err and "JSON" in err
    assert broken.read_bytes() == before  # input files are never modified


@pytest.mark.parametrize(("name", "fixture", "pattern", "key", "change"), BROKEN, ids=BROKEN_IDS)
def test_a_key_of_the_wrong_type_is_refused_naming_file_and_key(
    name: str,
    fixture: Path,
    pattern: str,
    key: str,
    change: Callable[[Path], None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    copy = _copy(fixture, tmp_path)
    broken = _first(copy.parent, pattern)
    change(broken)
    out_file = tmp_path / "out.csv"
    err = _refused(["convert", str(copy), "-o", str(out_file)], out_file, capsys)
    assert str(broken) in err and key in err


@pytest.mark.parametrize(
    "name",
    [
        "harbor",
        "swe-bench",
        "openhands",
        "aider",
        "claude-code",
        "codex",
        "otel",
        "terminal-bench",
        "inspect",
        "promptfoo",
    ],
)
def test_an_empty_folder_is_refused_by_every_importer(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out_file = tmp_path / "out.csv"
    err = _refused(
        ["convert", str(empty), "-o", str(out_file), "--input-format", name], out_file, capsys
    )
    assert str(empty) in err


async def test_the_apps_warnings_name_trials_by_their_path(board: Path) -> None:
    from tests.pilot_helpers import press, screen_text, settle
    from tui_ledger.tui.app import LedgerApp
    from tui_ledger.tui.screens.screens import WarningsScreen

    app = LedgerApp([str(board)])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await press(pilot, "w")
        assert isinstance(app.screen, WarningsScreen)
        text = screen_text(app)
        assert "e.g. sub-b/fix-git/fix-git.1-of-2/results.json" in text
        assert "results.json:1" not in text


def test_scan_joins_the_outcomes_as_load_does(tmp_path: Path) -> None:
    from tui_ledger.load import scan

    grades = tmp_path / "grades.csv"
    grades.write_text(f"session_id,passed\n{S1},true\n")
    imports = ImportOptions(outcomes=grades)
    lazy, report = scan(SESSIONS, imports=imports)
    loaded = load(SESSIONS, imports=imports)
    assert lazy.collect().equals(loaded.attempts)
    assert [w.kind for w in report.warnings] == [w.kind for w in loaded.report.warnings]
    assert "outcomes_join" in [w.kind for w in report.warnings]


def test_watch_reads_with_the_importer_options(tmp_path: Path) -> None:
    from tui_ledger.watching.watch import Watcher

    grades = tmp_path / "grades.csv"
    grades.write_text(f"session_id,passed\n{S1},true\n")
    watcher = Watcher.from_load_options(
        [str(SESSIONS)], {"imports": ImportOptions(outcomes=grades), "columns": {}}
    )
    ledger = watcher.load()
    assert (ledger.attempts["outcome"] == "passed").sum() == 1
