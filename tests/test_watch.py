"""`--watch`: a run appends attempts, the ledger follows; rewrites reload; bad rows are named.

Each watcher test writes a small file, loads it, changes it as a harness would, and checks what
one or two polls return against a fresh full load of the same file: appended rows must come out
exactly as the loader reads them, line numbers included.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.pilot_helpers import SETTLE_SECONDS
from tui_ledger.load import Ledger, LoadError, load
from tui_ledger.watching.watch import Change, Watcher

REPO = Path(__file__).resolve().parent.parent
RUNS = REPO / "sample_data" / "runs.csv"
TERMINAL_BENCH = REPO / "tests" / "fixtures" / "importers" / "terminal_bench" / "agent-a"
ARTICLE = RUNS.read_text()  # lean 1000 x3 (1 passed), steady 1600 x3 (all passed)


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as stream:
        stream.write(text)


def poll_until(watcher: Watcher, tries: int = 4) -> Change | None:
    """Poll like the loop does; a full reload shows on the second poll (it waits for quiet)."""
    for _ in range(tries):
        change = watcher.poll()
        if change is not None:
            return change
    return None


def same_as_full_load(ledger: Ledger, paths: list[str]) -> None:
    fresh = load(paths)
    assert ledger.attempts.equals(fresh.attempts)
    assert ledger.report == fresh.report


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = Path("runs.csv")
    path.write_text(ARTICLE)
    return path


# --------------------------------------------------------------------------- appended rows


def test_appended_csv_rows_arrive_with_their_real_line_numbers(live: Path) -> None:
    watcher = Watcher([str(live)])
    assert watcher.load().attempts.height == 6
    append(live, "steady,1600,false\nlean,1000,true\n")
    change = watcher.poll()
    assert change is not None and change.ledger is not None
    assert change.added == 2 and not change.reloaded and change.error is None
    new = change.ledger.attempts.tail(2)
    assert new["line"].to_list() == [8, 9]
    assert new["source"].to_list() == ["runs.csv", "runs.csv"]
    assert new["outcome"].to_list() == ["failed", "passed"]
    same_as_full_load(change.ledger, [str(live)])
    assert change.describe() == "+2 attempts"
    assert watcher.poll() is None  # nothing more


def test_a_half_written_line_waits_for_its_end(live: Path) -> None:
    watcher = Watcher([str(live)])
    watcher.load()
    append(live, "steady,16")
    assert watcher.poll() is None
    assert watcher.poll() is None
    append(live, "00,true\n")
    change = watcher.poll()
    assert change is not None and change.ledger is not None
    assert change.ledger.attempts.tail(1)["tokens"].to_list() == [1600]
    same_as_full_load(change.ledger, [str(live)])


def test_a_quoted_cell_still_open_waits_and_rows_keep_the_line_they_start_on(
    live: Path,
) -> None:
    live.write_text('workflow,tokens,passed,note\nlean,1000,true,"two\nlines"\n')
    watcher = Watcher([str(live)])
    watcher.load()
    append(live, 'steady,1600,true,"still\n')  # the newline is inside the quotes
    assert watcher.poll() is None
    append(live, 'open"\nsteady,1600,false,x\n')
    change = watcher.poll()
    assert change is not None and change.ledger is not None
    assert change.ledger.attempts["line"].to_list() == [2, 4, 6]  # as an editor counts
    same_as_full_load(change.ledger, [str(live)])


def test_jsonl_appends_count_records_as_the_loader_does(live: Path) -> None:
    path = Path("runs.jsonl")
    rows = [{"workflow": "lean", "tokens": 1000, "passed": True}] * 2
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n")  # a blank line
    watcher = Watcher([str(path)])
    watcher.load()
    append(path, json.dumps({"workflow": "steady", "tokens": None, "passed": False}) + "\n")
    change = watcher.poll()
    assert change is not None and change.ledger is not None
    assert change.ledger.attempts["line"].to_list() == [1, 2, 3]
    # The new row's missing usage is counted in the report as a full load counts it.
    same_as_full_load(change.ledger, [str(path)])


def test_warnings_of_appended_rows_add_up_as_in_a_full_load(live: Path) -> None:
    append(live, "lean,,false\n")  # missing usage, already in the first load
    watcher = Watcher([str(live)])
    watcher.load()
    append(live, "steady,,true\nsteady,0,true\n")
    change = watcher.poll()
    assert change is not None and change.ledger is not None
    same_as_full_load(change.ledger, [str(live)])
    kinds = {warning.kind: warning.count for warning in change.ledger.report.warnings}
    assert kinds["missing_usage"] == 2 and kinds["suspect_zero"] == 1


def test_rows_appended_to_the_first_of_two_files_stay_with_that_file(live: Path) -> None:
    other = Path("more.csv")
    other.write_text("workflow,tokens,passed\nbrisk,500,true\n")
    watcher = Watcher([str(live), str(other)])
    watcher.load()
    append(live, "lean,1000,true\n")
    change = watcher.poll()
    assert change is not None and change.ledger is not None
    same_as_full_load(change.ledger, [str(live), str(other)])


def test_a_column_whose_type_would_change_is_read_again_whole(live: Path) -> None:
    live.write_text("workflow,tokens,passed,attempt_no\nlean,1000,true,1\n")
    watcher = Watcher([str(live)])
    watcher.load()
    append(live, "lean,1000,false,second\n")  # attempt_no becomes text for every row
    change = poll_until(watcher)
    assert change is not None and change.ledger is not None and change.reloaded
    assert change.ledger.attempts["attempt_no"].dtype == pl.String
    same_as_full_load(change.ledger, [str(live)])


# --------------------------------------------------------------------------- full reloads


def test_a_truncated_file_reloads_fully(live: Path) -> None:
    watcher = Watcher([str(live)])
    watcher.load()
    live.write_text("workflow,tokens,passed\nbrisk,500,true\n")
    assert watcher.poll() is None  # waits one poll for the file to stand still
    change = watcher.poll()
    assert change is not None and change.ledger is not None and change.reloaded
    assert change.ledger.attempts["workflow"].to_list() == ["brisk"]
    assert change.describe() == "reloaded: 1 attempt"


def test_a_rewrite_of_the_same_size_reloads_fully(live: Path) -> None:
    watcher = Watcher([str(live)])
    watcher.load()
    live.write_text(ARTICLE.replace("lean", "thin"))
    change = poll_until(watcher)
    assert change is not None and change.ledger is not None and change.reloaded
    assert "thin" in change.ledger.attempts["workflow"].to_list()


def test_a_replaced_file_reloads_fully(live: Path) -> None:
    watcher = Watcher([str(live)])
    watcher.load()
    Path("new.csv").write_text(ARTICLE + "steady,1600,true\n")
    os.replace("new.csv", live)  # new inode, same head: an atomic rewrite, not an append
    change = poll_until(watcher)
    assert change is not None and change.ledger is not None and change.reloaded
    same_as_full_load(change.ledger, [str(live)])


def test_touching_a_file_changes_nothing(live: Path) -> None:
    watcher = Watcher([str(live)])
    watcher.load()
    os.utime(live, ns=(time.time_ns(), time.time_ns() + 1_000_000_000))
    assert poll_until(watcher) is None


def test_a_terminal_bench_folder_that_gains_a_trial_reloads(tmp_path: Path) -> None:
    run = tmp_path / "agent-a"
    shutil.copytree(TERMINAL_BENCH, run)
    watcher = Watcher([str(run)])
    before = watcher.load().attempts.height
    # A trial's logs change all the time; they hold no attempts and must not cause reloads.
    (next(run.rglob("sessions")) / "agent.log").write_text("still thinking\n")
    assert poll_until(watcher) is None
    trial = next(run.glob("*/fix-bug/fix-bug.1-of-2*"))
    new_trial = trial.parent / "fix-bug.3-of-3.2025-01-01__10-00-00"
    new_trial.mkdir()
    record = json.loads((trial / "results.json").read_text())
    record.update(trial_name=new_trial.name, is_resolved=True, failure_mode="unset")
    (new_trial / "results.json").write_text(json.dumps(record))
    change = poll_until(watcher)
    assert change is not None and change.ledger is not None and change.reloaded
    assert change.ledger.attempts.height == before + 1


# --------------------------------------------------------------------------- errors


def test_a_bad_appended_row_is_named_and_the_last_good_attempts_stay(live: Path) -> None:
    watcher = Watcher([str(live)])
    good = watcher.load()
    append(live, "steady,1600,true\nsteady,lots,true\n")
    change = watcher.poll()
    assert change is not None and change.ledger is None
    assert change.error is not None and "\n" not in change.error
    assert change.error.startswith("runs.csv line 9, column 'tokens': 'lots' is not a number")
    assert watcher.ledger is good  # nothing half-added
    assert watcher.poll() is None  # said once; not again until the file changes
    # Fixing the file (a rewrite) reads it again, and the error is gone.
    live.write_text(ARTICLE + "steady,1600,true\nsteady,1700,true\n")
    change = poll_until(watcher)
    assert change is not None and change.ledger is not None and change.error is None
    assert change.ledger.attempts.height == 8


def test_a_failed_first_load_waits_for_the_file_to_change(live: Path) -> None:
    live.write_text("workflow,tokens,passed\n")  # a run that has not finished an attempt yet
    watcher = Watcher([str(live)])
    with pytest.raises(LoadError):
        watcher.load()
    assert poll_until(watcher) is None
    append(live, "lean,1000,true\n")
    change = poll_until(watcher)
    assert change is not None and change.ledger is not None
    assert change.ledger.attempts.height == 1


def test_options_load_does_not_take_are_ignored(live: Path) -> None:
    watcher = Watcher.from_load_options([str(live)], {"prices": object(), "fmt": None})
    assert watcher.load().attempts.height == 6


# --------------------------------------------------------------------------- the CLI


class _Lines:
    """The lines a child process has printed so far, read by a thread as they arrive."""

    def __init__(self, stream: Any) -> None:
        self.seen: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        for line in iter(stream.readline, ""):
            self.seen.append(line)

    def done(self) -> None:
        self._thread.join(timeout=30)


def _wait_for_line(lines: _Lines, needle: str, what: str, seconds: float = 60.0) -> None:
    """Wait until a printed line holds `needle`; fail naming `what` never came."""
    deadline = time.monotonic() + seconds
    while not any(needle in line for line in lines.seen):
        assert time.monotonic() < deadline, f"never printed: {what}\n{''.join(lines.seen)}"
        time.sleep(0.02)


def test_summary_watch_reprints_on_change_says_errors_and_stops_quietly_on_ctrl_c(
    live: Path,
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "tui_ledger.cli", "summary", str(live), "--watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    out_lines = _Lines(process.stdout)
    err_lines = _Lines(process.stderr)
    try:
        # Each step waits for what the command prints, never for a fixed time.
        _wait_for_line(out_lines, "KEEP FAILURES", "the first summary")
        append(live, "steady,1600,true\n")
        _wait_for_line(out_lines, "6,400", "the summary after the append")
        append(live, "steady,many,true\n")
        _wait_for_line(err_lines, "is not a number", "the error for the bad row")
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    out_lines.done()
    err_lines.done()
    out, err = "".join(out_lines.seen), "".join(err_lines.seen)
    assert process.returncode == 0, err
    assert out.count("KEEP FAILURES") == 2  # printed again after the append
    assert "4,800" in out and "6,400" in out  # steady's total before and after
    assert "runs.csv line 9, column 'tokens': 'many' is not a number" in err
    assert "interrupted" not in err and "Traceback" not in err


# --------------------------------------------------------------------------- the app


def watching_app(paths: list[str]) -> Any:
    """The app with --watch."""
    from tui_ledger.tui.app import LedgerApp

    return LedgerApp(paths, watch_files=True)


async def wait_for(pilot: Any, condition: Any, seconds: float = SETTLE_SECONDS) -> None:
    """Let the app run until `condition()` holds, with the shared generous deadline (a
    watching app's workers never all end, so `pilot_helpers.wait_until` cannot be used). It
    was 5 s: under tests/stress.sh at load 13 a recompute of six rows took longer."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            what = inspect.getsource(condition).strip()
            raise AssertionError(f"after {seconds:.0f} s, still not: {what}")
        await pilot.pause(0.02)


def screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def busy(app: Any) -> bool:
    return any(worker.group != "watch" and not worker.is_finished for worker in app.workers)


async def test_the_app_shows_appended_attempts_keeping_filter_and_cursor(live: Path) -> None:
    app = watching_app([str(live)])
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: app.loaded and not busy(app))
        app.filter_input.value = "steady"
        await wait_for(pilot, lambda: app.table.frame.height == 3 and not busy(app))
        app.table.focus()
        await pilot.press("down")
        assert app.table.cursor_row == 1
        append(live, "steady,1600,false\n")
        await wait_for(pilot, lambda: app.table.frame.height == 4 and not busy(app))
        await pilot.pause()
        assert app.ledger.attempts.height == 7
        assert app.filter_text == "steady"
        assert app.table.cursor_row == 1
        assert "7 attempts" in screen_text(app)

        append(live, "steady,heaps,true\n")
        await wait_for(pilot, lambda: "reload failed" in screen_text(app))
        assert app.ledger.attempts.height == 7  # the last good attempts stay
        append(live, "")  # the error stays until the file changes for the better
        live.write_text(ARTICLE)
        await wait_for(pilot, lambda: app.ledger.attempts.height == 6 and not busy(app))
        await pilot.pause()
        assert "reload failed" not in screen_text(app)


async def test_the_app_waits_for_a_file_that_cannot_be_read_yet(live: Path) -> None:
    live.write_text("workflow,tokens,passed\n")
    app = watching_app([str(live)])
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: "reload failed" in screen_text(app))
        assert app.return_code is None  # still open, watching
        append(live, "lean,1000,true\n")
        await wait_for(pilot, lambda: app.loaded and not busy(app))
        assert app.ledger.attempts.height == 1


# --------------------------------------------------------------------------- never silent


def test_a_stray_quote_row_is_the_loaders_error_within_two_polls(live: Path) -> None:
    watcher = Watcher([str(live)])
    good = watcher.load()
    # One stray quote opens a "cell" that never closes: every later row looks inside it.
    append(live, 'steady,"1600,true\nsteady,1700,true\n')
    change = poll_until(watcher, tries=3)
    assert change is not None and change.ledger is None
    assert change.error is not None and "\n" not in change.error
    expected = None
    try:
        load([str(live)])
    except LoadError as error:
        expected = str(error)
    assert expected is not None and change.error == expected  # the loader's own words
    assert "runs.csv" in change.error
    assert watcher.ledger is good
    # Fixed by a rewrite: read again.
    live.write_text(ARTICLE + "steady,1600,true\n")
    change = poll_until(watcher)
    assert change is not None and change.ledger is not None and change.error is None
    assert change.ledger.attempts.height == 7


def test_a_quoted_cell_being_written_is_not_an_error_while_it_grows(live: Path) -> None:
    live.write_text("workflow,tokens,passed,note\nlean,1000,true,ok\n")
    watcher = Watcher([str(live)])
    watcher.load()
    append(live, 'lean,1100,false,"first line\n')
    assert watcher.poll() is None  # open across lines: wait (it may still be written)
    append(live, 'second line"\n')
    change = poll_until(watcher)
    assert change is not None and change.ledger is not None and change.error is None
    assert change.ledger.attempts["note"].to_list() == ["ok", "first line\nsecond line"]


def test_a_row_rewritten_in_the_middle_of_a_long_file_reloads(live: Path) -> None:
    rows = [
        f"w{index % 7},{1000 + index},{'true' if index % 3 else 'false'}" for index in range(600)
    ]
    live.write_text("workflow,tokens,passed\n" + "\n".join(rows) + "\n")
    watcher = Watcher([str(live)])
    watcher.load()
    text = live.read_text()
    middle = rows[300]
    changed = middle.replace(str(1000 + 300), "9999")
    live.write_text(text.replace(middle + "\n", changed + "\n", 1))  # same size, mid-file
    change = poll_until(watcher)
    assert change is not None and change.ledger is not None and change.reloaded
    assert 9999 in change.ledger.attempts["tokens"].to_list()
    same_as_full_load(change.ledger, [str(live)])


def test_an_aider_folder_gains_an_exercise_its_dotfile_counts(tmp_path: Path) -> None:
    fixture = REPO / "tests" / "fixtures" / "importers" / "aider" / "tmp.benchmarks"
    run = tmp_path / "benchmarks"
    shutil.copytree(fixture, run)
    watcher = Watcher([str(run)])
    before = watcher.load().attempts.height
    example = next(
        path
        for path in sorted(run.rglob(".aider.results.json"))
        if isinstance(json.loads(path.read_text()).get("tests_outcomes"), list)
    )
    exercise = example.parent.parent / "new-exercise"
    exercise.mkdir()
    record = json.loads(example.read_text())
    record["testcase"] = "new-exercise"
    (exercise / ".aider.results.json").write_text(json.dumps(record))
    change = poll_until(watcher)
    assert change is not None and change.ledger is not None and change.reloaded
    assert change.ledger.attempts.height == before + 1
    # A file the importer does not read (a chat log) does not reload.
    (exercise / ".aider.chat.history.md").write_text("thinking\n")
    assert poll_until(watcher) is None


def test_a_harbor_job_gains_a_trial_and_logs_do_not_reload(tmp_path: Path) -> None:
    fixture = REPO / "tests" / "fixtures" / "importers" / "harbor" / "jobs"
    job = tmp_path / "jobs"
    shutil.copytree(fixture, job)
    watcher = Watcher([str(job)])
    before = watcher.load().attempts.height
    trial = next(
        path.parent for path in job.rglob("config.json") if (path.parent / "result.json").exists()
    )
    (trial / "agent" / "trajectory.log").write_text("step 1\n")
    assert poll_until(watcher) is None
    new_trial = trial.parent / (trial.name + "-again")
    shutil.copytree(trial, new_trial)
    record = json.loads((new_trial / "result.json").read_text())
    record["trial_name"] = new_trial.name
    if "id" in record:
        record["id"] = record["id"] + "-again"
    (new_trial / "result.json").write_text(json.dumps(record))
    change = poll_until(watcher)
    assert change is not None and change.ledger is not None and change.reloaded
    assert change.ledger.attempts.height == before + 1


async def test_the_app_shows_a_stray_quote_as_the_loaders_error(live: Path) -> None:
    app = watching_app([str(live)])
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: app.loaded and not busy(app))
        append(live, 'steady,"1600,true\n')
        await wait_for(pilot, lambda: "reload failed" in screen_text(app))
        assert app.ledger.attempts.height == 6
