"""The grader's audit in the app: audited once per load in a worker, `v` (accepted as graded or
as vouched: every figure follows, the header says VOUCHED, the callout says whether the ranking
changes), `a` (the audit screen), the mark in the attempts table, the signals on the attempt
screen and `s` to their step (issue 54, item 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from textual.pilot import Pilot

from tests.grader_fixtures import write_job
from tests.pilot_helpers import press, record_toasts, screen_text, settle, wait_until
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.screens.attempt_signals import SignalsAttemptScreen
from tui_ledger.tui.screens.grader_screen import GraderScreen
from tui_ledger.tui.vouching import VouchedPipeline
from tui_ledger.tui.widgets.attempts_table import FLAG_MARK

QUICK = "quick__openai/gpt-5"
CAREFUL = "careful__openai/gpt-5"


@pytest.fixture
def job(tmp_path: Path) -> Path:
    return write_job(tmp_path)


def _accepted(app: LedgerApp) -> dict[str, int]:
    comparison = app.comparison
    assert comparison is not None
    return dict(comparison.keep.select("workflow", "accepted").iter_rows())


def _ranks(app: LedgerApp) -> dict[str, int]:
    comparison = app.comparison
    assert comparison is not None
    return dict(comparison.keep.select("workflow", "rank").iter_rows())


def _header(app: LedgerApp) -> str:
    return str(app.query_one("#counts").render())


def _pipeline(app: LedgerApp) -> VouchedPipeline:
    pipeline = app.pipeline
    assert isinstance(pipeline, VouchedPipeline)
    return pipeline


async def test_v_recomputes_every_figure_as_vouched_and_back(job: Path) -> None:
    app = LedgerApp([str(job)])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        assert _pipeline(app).audit is not None  # the audit is in once the app settles
        assert _accepted(app) == {CAREFUL: 2, QUICK: 6}
        assert _ranks(app) == {CAREFUL: 2, QUICK: 1}
        assert "VOUCHED" not in _header(app)
        callout = str(app.query_one("#callout").render())
        assert "the ranking changes" in callout
        await press(pilot, "v")
        assert _accepted(app) == {CAREFUL: 2, QUICK: 1}
        assert _ranks(app) == {CAREFUL: 1, QUICK: 2}
        assert _header(app).startswith("VOUCHED")
        # the unvouched acceptances are failures; their tokens stay in the total
        comparison = app.comparison
        assert comparison is not None
        totals = dict(comparison.keep.select("workflow", "total_tokens").iter_rows())
        assert totals[QUICK] == 6 * 1100  # as graded: the same 6 attempts
        assert app.checks is not None  # the checks follow the vouched figures too
        await press(pilot, "v")
        assert _accepted(app) == {CAREFUL: 2, QUICK: 6}
        assert "VOUCHED" not in _header(app)


async def test_vouched_from_the_start_says_graded_until_the_audit_is_in(
    job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    release = threading.Event()
    original = VouchedPipeline._audit_worker

    def held(self: VouchedPipeline, *args: object) -> None:
        release.wait(30)
        original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(VouchedPipeline, "_audit_worker", held)
    app = LedgerApp([str(job)], accepted="vouched")
    async with app.run_test(size=(160, 45)) as pilot:
        # (not `wait_until`: it waits for every worker, the held audit's too)
        while app.comparison is None or app.unsettled != ("audit",):
            await pilot.pause()
        assert "audit" in app.unsettled
        assert _accepted(app) == {CAREFUL: 2, QUICK: 6}  # as graded meanwhile
        assert "VOUCHED: auditing…, figures as graded" in _header(app)
        said = record_toasts(app)
        await pilot.press("a")  # (not `press`: it waits for every worker)
        while not said:
            await pilot.pause()
        assert said == ["The grader's audit is not in yet: it is still reading the attempts' logs."]
        assert not isinstance(app.screen, GraderScreen)
        release.set()
        await settle(pilot)
        assert _accepted(app) == {CAREFUL: 2, QUICK: 1}
        assert _header(app).startswith("VOUCHED ·")


async def test_flagged_attempts_carry_a_mark(job: Path) -> None:
    app = LedgerApp([str(job)])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        table = app.table
        sources = table.frame.get_column("source").to_list()
        marked = {
            sources[row].split("/")[0] for row in range(table.row_count) if table.flagged_row(row)
        }
        assert marked == {
            "tamper-sed",
            "tamper-reward",
            "lookup",
            "contradiction",
            "never-acted",
            "infra",
        }
        lines = screen_text(app).splitlines()
        assert sum(FLAG_MARK in line for line in lines) == 6
        # DROP FAILURES, sorted by tokens: the marks follow their attempts
        await press(pilot, "t")
        table.move_cursor(column=table.column_names.index("source"))
        await press(pilot, "right_square_bracket")
        sources = table.frame.get_column("source").to_list()
        marked = {
            sources[row].split("/")[0] for row in range(table.row_count) if table.flagged_row(row)
        }
        assert marked == {"tamper-sed", "tamper-reward", "lookup", "contradiction", "never-acted"}


async def test_a_lists_the_flagged_attempts_and_enter_opens_one_at_its_step(job: Path) -> None:
    app = LedgerApp([str(job)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "a")
        screen = app.screen
        assert isinstance(screen, GraderScreen)
        kinds = [cells[3] for _, _, cells in screen.rows]
        assert sorted(kinds) == sorted(
            [
                "touched_grader",
                "touched_grader",
                "answer_lookup",
                "verdict_contradiction",
                "verdict_contradiction",
                "infrastructure_error",
            ]
        )
        text = screen_text(app)
        assert "flagged" in text and "the grader's audit" in text
        # the row of the answer lookup: Enter opens that attempt at step 2
        kinds_by_row = [cells[3] for _, _, cells in screen.rows]
        number = kinds_by_row.index("answer_lookup")
        screen.table.move_cursor(row=number)
        await press(pilot, "enter")
        attempt = app.screen
        assert isinstance(attempt, SignalsAttemptScreen)
        await wait_until(pilot, lambda: attempt.ended, "the attempt's steps read")
        steps = attempt.steps
        await wait_until(
            pilot,
            lambda: steps.row_count and steps.step_at(steps.cursor_row).index == 2,
            "the cursor on the signal's step",
        )
        assert "answer_lookup" in screen_text(app)
        await press(pilot, "escape")
        assert isinstance(app.screen, GraderScreen)
        await press(pilot, "escape")
        assert not isinstance(app.screen, GraderScreen)


async def test_the_attempt_screen_shows_the_signal_and_s_goes_to_its_step(job: Path) -> None:
    app = LedgerApp([str(job)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.table
        sources = table.frame.get_column("source").to_list()
        table.move_cursor(row=sources.index("tamper-sed/result.json"))
        await press(pilot, "enter")
        attempt = app.screen
        assert isinstance(attempt, SignalsAttemptScreen)
        await wait_until(pilot, lambda: attempt.ended, "the attempt's steps read")
        assert [signal.kind for signal in attempt.signals] == ["touched_grader"]
        assert "touched_grader · step 3" in screen_text(app)
        assert attempt.steps.step_at(attempt.steps.cursor_row).index != 3
        await press(pilot, "s")
        assert attempt.steps.step_at(attempt.steps.cursor_row).index == 3
        # `[` walks to the previous attempt of the view: its own signal
        await press(pilot, "left_square_bracket")
        await wait_until(pilot, lambda: attempt.ended, "the previous attempt read")
        assert attempt.row["source"] == "tamper-reward/result.json"
        [signal] = attempt.signals
        assert "reward.txt" in signal.evidence and "reward.txt" in screen_text(app)
        await press(pilot, "left_square_bracket")  # never-acted: a signal from the verdict
        await wait_until(pilot, lambda: attempt.ended, "the previous attempt read")
        assert [signal.step for signal in attempt.signals] == [None]
        assert "the verdict" in screen_text(app)


async def test_a_ledger_without_signals_keeps_its_frame(tmp_path: Path) -> None:
    ledger = tmp_path / "runs.csv"
    ledger.write_text("workflow,task,passed,tokens\na,t1,true,10\na,t2,false,20\nb,t1,true,30\n")
    app = LedgerApp([str(ledger)])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        loaded = app.pipeline.ledger
        assert loaded is not None
        frame = loaded.attempts
        await press(pilot, "v")
        assert app.pipeline.ledger is not None and app.pipeline.ledger.attempts is frame
        assert _header(app).startswith("VOUCHED")
        await press(pilot, "a")
        assert isinstance(app.screen, GraderScreen)
        assert "No attempt is flagged" in screen_text(app)
        assert "no trajectories: signals from verdicts only" in screen_text(app)


def test_the_frame_keeps_its_rows_and_order(job: Path) -> None:
    """What `v` swaps is the same rows: only outcome (and known zeros) differ."""
    from tui_ledger.grader import audit_ledger
    from tui_ledger.load import load

    ledger = load([str(job)])
    audit = audit_ledger(ledger, [str(job)])
    vouched = audit.apply(ledger.attempts, "vouched")
    assert vouched.select(pl.exclude("outcome", "agent_never_acted", "tokens")).equals(
        ledger.attempts.select(pl.exclude("outcome", "tokens"))
    )


def test_grader_screen_snapshot(snap_compare: object, job: Path) -> None:
    """The grader's audit at 80x24: what it found, the flagged attempts, the health below."""
    app = LedgerApp([str(job)])

    async def audited(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await press(pilot, "a")

    assert snap_compare(app, terminal_size=(80, 24), run_before=audited)  # type: ignore[operator]


async def test_the_presenter_tells_the_vouched_story(job: Path) -> None:
    from tui_ledger.tui.presenter import PresenterScreen, PresentingApp
    from tui_ledger.tui.screens.present_steps import STEPS

    app = PresentingApp([str(job)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        presenter = app.screen
        assert isinstance(presenter, PresenterScreen)
        await press(pilot, *["right"] * STEPS.index("vouched"))
        assert presenter.step == "vouched"
        text = " ".join(screen_text(app).split())
        assert "5 accepted attempts the grader cannot vouch for" in text
        assert "6 → 1" in text and "1,100 → 6,600" in text and "1 → 2" in text
        assert "the ranking changes" in text


async def test_the_presenter_says_so_when_no_acceptance_is_flagged(tmp_path: Path) -> None:
    from tui_ledger.tui.presenter import PresenterScreen, PresentingApp
    from tui_ledger.tui.screens.present_steps import STEPS

    ledger = tmp_path / "runs.csv"
    ledger.write_text("workflow,task,passed,tokens\na,t1,true,10\na,t2,false,20\nb,t1,true,30\n")
    app = PresentingApp([str(ledger)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        presenter = app.screen
        assert isinstance(presenter, PresenterScreen)
        await press(pilot, *["right"] * STEPS.index("vouched"))
        text = " ".join(screen_text(app).split())
        assert "flags no accepted attempt in this ledger" in text
        assert "no trajectories: signals from verdicts only" in text


def test_an_export_says_which_acceptances_it_counts() -> None:
    """The summary an export writes is tagged `accepted` as the figures were computed (the
    Comparison's field; a comparison without one is left as it is)."""
    import dataclasses

    from tui_ledger.tui.host import Inputs
    from tui_ledger.tui.snapshot import Timings
    from tui_ledger.tui.vouching import tagged

    @dataclasses.dataclass(frozen=True)
    class Figures:
        accepted: str = "graded"

    class Audited:
        signals = pl.DataFrame()

    inputs = Inputs((), {}, None, False, Timings(), lambda: None)  # type: ignore[arg-type,return-value]
    pipeline = VouchedPipeline(None, inputs, accepted="vouched")  # type: ignore[arg-type]
    assert tagged(Figures(), pipeline).accepted == "graded"  # the audit is not in yet
    pipeline.audit = Audited()  # type: ignore[assignment]
    assert tagged(Figures(), pipeline).accepted == "vouched"
    pipeline.accepted = "graded"
    assert tagged(Figures(), pipeline).accepted == "graded"
    untagged = object()
    assert tagged(untagged, pipeline) is untagged


async def test_a_reload_is_audited_again(job: Path) -> None:
    import shutil

    app = LedgerApp([str(job)], accepted="vouched")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert _accepted(app) == {CAREFUL: 2, QUICK: 1}
        first = _pipeline(app).audit
        shutil.rmtree(job / "tamper-sed")  # one tampering trial fewer
        await press(pilot, "r")
        audit = _pipeline(app).audit
        assert audit is not None and audit is not first and audit.rows == 9
        assert len(audit.unvouched) == 4
        assert _accepted(app) == {CAREFUL: 2, QUICK: 1}  # still vouched, of the new ledger
        assert _header(app).startswith("VOUCHED ·")


async def test_a_watched_job_that_gains_a_tampering_trial_is_audited_again(job: Path) -> None:
    import json
    import shutil

    from tests.test_watch import wait_for

    app = LedgerApp([str(job)], accepted="vouched", watch_files=True)
    async with app.run_test(size=(120, 40)) as pilot:
        pipeline = _pipeline(app)
        await wait_for(pilot, lambda: pipeline.audit is not None and not app.unsettled)
        assert _accepted(app) == {CAREFUL: 2, QUICK: 1}
        again = job / "tamper-again"
        shutil.copytree(job / "tamper-sed", again)
        record = json.loads((again / "result.json").read_text())
        record["trial_name"] = again.name
        record["id"] = record.get("id", "tamper") + "-again"
        (again / "result.json").write_text(json.dumps(record))
        await wait_for(
            pilot,
            lambda: pipeline.audit is not None and pipeline.audit.rows == 11 and not app.unsettled,
        )
        assert len(pipeline.audit.unvouched) == 6
        assert _accepted(app) == {CAREFUL: 2, QUICK: 1}  # the new tampering counts as a failure
        comparison = app.comparison
        assert comparison is not None
        assert dict(comparison.keep.select("workflow", "attempts").iter_rows())[QUICK] == 7


async def test_the_audit_starts_once_the_first_figures_are_drawn(
    job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started_after: list[bool] = []
    original = VouchedPipeline._audit_worker

    def noting(self: VouchedPipeline, *args: object) -> None:
        started_after.append(self._first_screen_done)
        original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(VouchedPipeline, "_audit_worker", noting)
    app = LedgerApp([str(job)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert started_after == [True]


async def test_a_reload_whose_figures_fail_is_audited_all_the_same(
    job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import polars.exceptions

    from tests.pilot_helpers import failing_when_on

    switch = failing_when_on(
        monkeypatch,
        __import__("tui_ledger.tui.pipeline", fromlist=["pipeline"]),
        "compute_snapshot",
        polars.exceptions.ComputeError("cannot run here"),
    )
    app = LedgerApp([str(job)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        first = _pipeline(app).audit
        switch["on"] = True
        await press(pilot, "r")  # the reload's figures fail: no frame is drawn for them
        audit = _pipeline(app).audit
        assert audit is not None and audit is not first
        assert "audit" not in app.unsettled
