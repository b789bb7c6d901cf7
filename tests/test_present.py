"""Presenter mode (`--present`): six steps over the app, from the app's own comparison and,
for the failure step, one failed attempt read through the trajectory reader."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.pilot_helpers import screen_text, settle
from tui_ledger.accounting.ledger import compare
from tui_ledger.cli import main
from tui_ledger.load import load
from tui_ledger.trajectory import Step, ToolCall
from tui_ledger.trajectory.failure_walk import failure_walk, retries
from tui_ledger.tui.presenter import PresenterScreen, PresentingApp
from tui_ledger.tui.screens.present_steps import (
    STEPS,
    FailureStep,
    failure_group,
    failure_step,
    presentation,
)

REPO = Path(__file__).resolve().parent.parent
ARTICLE = str(REPO / "sample_data" / "runs.csv")


def _csv(tmp_path: Path, text: str) -> str:
    path = tmp_path / "runs.csv"
    path.write_text(text)
    return str(path)


def test_the_flip_on_the_article_fixture_names_both_and_their_figures() -> None:
    flip = presentation(compare(load([ARTICLE]).attempts)).flip
    assert flip.verdict == "flip"
    assert flip.sentence == (
        "lean 3,000 vs steady 1,600 per accepted result, and lean 1,000 when failures are dropped."
    )
    assert [(f.name, f.view, f.text) for f in flip.figures] == [
        ("lean", "keep", "3,000"),
        ("steady", "keep", "1,600"),
        ("lean", "drop", "1,000"),
    ]


def test_no_flip_says_so_with_the_reason(tmp_path: Path) -> None:
    path = _csv(
        tmp_path, "workflow,tokens,passed\na,100,true\na,100,false\nb,900,true\nb,900,false\n"
    )
    flip = presentation(compare(load([path]).attempts)).flip
    assert flip.verdict == "no_flip"
    assert flip.sentence.startswith("no flip: the ranking is the same in both views; a is cheapest")


def test_every_attempt_accepted_is_no_flip(tmp_path: Path) -> None:
    path = _csv(tmp_path, "workflow,tokens,passed\na,100,true\nb,900,true\n")
    flip = presentation(compare(load([path]).attempts)).flip
    assert flip.sentence.startswith("no flip: every attempt here was accepted")


def test_undecided_names_the_lower_bounds(tmp_path: Path) -> None:
    # lean's failures have no usage: it may or may not be dearer than steady when kept.
    path = _csv(
        tmp_path,
        "workflow,tokens,passed\nlean,1000,true\nlean,,false\nlean,,false\n"
        "steady,1600,true\nsteady,1600,true\n",
    )
    comparison = compare(load([path]).attempts)
    assert comparison.flip_undecided()
    flip = presentation(comparison).flip
    assert flip.verdict == "undecided"
    assert flip.sentence.startswith("undecided: the figure of lean (2 of 3 attempts without usage)")


def test_the_noise_line_is_fed_from_the_comparison() -> None:
    comparison = compare(load([ARTICLE]).attempts)
    flip = presentation(comparison, noise=lambda c: f"{c.keep.height} groups compared").flip
    assert flip.noise == "2 groups compared"


def test_figures_are_the_comparisons_own() -> None:
    # A median of an even count (mean of the two middle values) and a per-accepted ratio that
    # is not a whole number: only the real compare gives these, and the steps show them.
    frame = pl.DataFrame(
        {
            "workflow": ["w"] * 4,
            "tokens": [10, 20, 30, 41],
            "outcome": ["passed", "passed", "passed", "failed"],
        }
    ).with_columns(
        pl.col("outcome").cast(pl.Enum(["passed", "failed", "timeout", "error", "ungraded"]))
    )
    comparison = compare(frame)
    (group,) = presentation(comparison).keep
    assert group.per_attempt == "25"
    assert group.per_accepted == "34"  # 101 / 3 = 33.67, read as the summary reads it
    assert group.value == pytest.approx(101 / 3)


async def test_keys_walk_the_steps_and_enter_opens_the_app() -> None:
    app = PresentingApp([ARTICLE])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        presenter = app.screen
        assert isinstance(presenter, PresenterScreen)
        assert presenter.step == "keep"
        assert "KEEP FAILURES" in screen_text(app)
        await pilot.press("space")
        assert presenter.step == "drop"
        assert "DROP FAILURES" in screen_text(app)
        await pilot.press("right")
        assert presenter.step == "flip"
        text = " ".join(screen_text(app).split())  # the sentence wraps at 80 columns
        assert "lean 3,000 vs steady 1,600 per accepted result" in text
        assert "lean 1,000 when failures are dropped" in text
        await pilot.press("left")
        assert presenter.step == "drop"
        await pilot.press("left", "left")
        assert presenter.step == "keep"
        await pilot.press(*["right"] * 6)
        assert presenter.step == STEPS[-1]
        assert "Enter" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, PresenterScreen)
        assert app.on_main_screen
        assert "Summary" in screen_text(app)


async def test_space_on_the_last_step_opens_the_app_too() -> None:
    app = PresentingApp([ARTICLE])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*["space"] * len(STEPS))
        await settle(pilot)
        assert app.on_main_screen


async def test_q_quits_at_any_step() -> None:
    app = PresentingApp([ARTICLE])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("space", "space", "q")
        await pilot.pause()
    assert app.return_code == 0


async def test_question_mark_shows_the_keys() -> None:
    app = PresentingApp([ARTICLE])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert "Presenter keys" in screen_text(app)
        await pilot.press("x")
        assert isinstance(app.screen, PresenterScreen)


async def test_names_from_files_are_text_not_markup(tmp_path: Path) -> None:
    path = _csv(
        tmp_path, "workflow,tokens,passed\n[bold]x,100,true\n[bold]x,100,false\ny,50,true\n"
    )
    app = PresentingApp([path])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "[bold]x" in screen_text(app)


def test_present_with_a_bad_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["--present", str(tmp_path / "missing.csv")])
    assert raised.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ledger-tui: error:") and "missing.csv" in err
    assert len(err.splitlines()) == 1


DEMO = str(REPO / "sample_data" / "demo.csv")


def test_the_failure_step_walks_one_of_lean_loops_failures_from_its_log() -> None:
    ledger = load([DEMO])
    comparison = compare(ledger.attempts)
    group = failure_group(comparison)
    assert group == "lean-loop"  # the group dropping failures flatters
    walk = failure_walk(ledger.attempts, comparison.by, group, [DEMO])
    assert walk is not None and walk.retries is not None
    row = walk.row
    assert (row["workflow"], row["outcome"]) == ("lean-loop", "failed")
    # Read the file by hand (not through the reader): ATIF's prompt_tokens holds the cache hits.
    raw = json.loads((REPO / "sample_data" / str(row["trace"])).read_text(encoding="utf-8"))
    spent = {
        step["step_id"]: step["metrics"]["prompt_tokens"] + step["metrics"]["completion_tokens"]
        for step in raw["steps"]
        if "metrics" in step
    }
    assert sum(spent.values()) == row["tokens"]
    failing = [s["step_id"] for s in raw["steps"] if s.get("extra", {}).get("is_error")]
    assert walk.retries.runs == tuple(failing) and len(failing) >= 3
    reruns = sum(spent[index] for index in failing[1:])

    step = failure_step(walk, group)
    assert step.headline.startswith(f"lean-loop · {row['task']} · failed · {row['tokens']:,} ")
    assert [r.index for r in step.rows if r.rerun] == failing[1:]
    assert sum(r.tokens or 0 for r in step.rows) == row["tokens"]
    first = next(s for s in raw["steps"] if s["step_id"] == failing[0])
    assert step.command == f"bash {first['tool_calls'][0]['arguments']['command']}"
    assert step.command.startswith("bash pytest -q tests/")
    assert step.error is not None and step.error.startswith("FAILED")
    share = f"{reruns / row['tokens']:.0%}"
    assert step.spent == (
        f"It ran the same failing command {len(failing)} times: the {len(failing) - 1} reruns "
        f"spent {reruns:,} of its {row['tokens']:,} tokens ({share})."
    )
    assert step.adds_up.startswith("The steps add up")


def test_without_trajectories_the_failure_step_says_so_in_a_line() -> None:
    ledger = load([ARTICLE])
    comparison = compare(ledger.attempts)
    group = failure_group(comparison)
    assert group == "lean"
    assert failure_walk(ledger.attempts, comparison.by, group, [ARTICLE]) is None
    step = failure_step(None, group)
    assert step.rows == () and "\n" not in step.headline
    assert step.headline.startswith("No trajectory to open for lean's failures")


def test_a_rerun_is_the_same_call_failing_again_not_another_call() -> None:
    run = ToolCall("bash", '{"command": "pytest -q"}')
    other = ToolCall("bash", '{"command": "pytest -q -x"}')
    steps = [
        Step(1, "agent", "", (run,), "1 failed", tokens=10, error=True),
        Step(2, "agent", "", (other,), "1 failed", tokens=20, error=True),
        Step(3, "agent", "", (run,), "1 failed", tokens=30, error=True),
        Step(4, "agent", "", (run,), "passed", tokens=40),
    ]
    found = retries(steps)
    assert found is not None
    assert (found.runs, found.reruns, found.tokens, found.error) == ((1, 3), (3,), 30, "1 failed")
    assert retries(steps[:2]) is None


async def test_the_demo_talk_shows_the_failure_step_by_step() -> None:
    app = PresentingApp([DEMO])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        presenter = app.screen
        assert isinstance(presenter, PresenterScreen)
        await pilot.press(*["right"] * STEPS.index("failure"))
        for _ in range(200):  # read in a worker: wait for it, not a clock
            if isinstance(presenter.failure, FailureStep):
                break
            await pilot.pause(0.05)
        await settle(pilot)
        text = " ".join(screen_text(app).split())
        assert "lean-loop · fix-login-redirect · failed" in text
        assert "the 2 reruns spent" in text and "↻" in text
        await pilot.press("right")
        assert presenter.step == "open"


async def test_a_reader_that_breaks_leaves_the_step_saying_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_args: object) -> None:
        raise RuntimeError("the log went away")

    monkeypatch.setattr("tui_ledger.tui.presenter.failure_walk", broken)
    app = PresentingApp([DEMO])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        presenter = app.screen
        assert isinstance(presenter, PresenterScreen)
        await pilot.press(*["right"] * STEPS.index("failure"))
        for _ in range(200):  # read in a worker: wait for it, not a clock
            if str(presenter.failure).startswith("Could not"):
                break
            await pilot.pause(0.05)
        await settle(pilot)
        assert "Could not read the failed attempt: the log went away" in screen_text(app)
        await pilot.press("right")
        assert presenter.step == "open"


def test_the_failure_step_prefers_an_attempt_whose_usage_is_recorded() -> None:
    """Issue 53 item 11: "where its tokens went" picked a failure with no recorded usage when
    one with usage existed."""
    ledger = load([DEMO])
    comparison = compare(ledger.attempts)
    group = failure_group(comparison)
    assert group is not None
    picked = failure_walk(ledger.attempts, comparison.by, group, [DEMO])
    assert picked is not None
    unrecorded = ledger.attempts.with_columns(
        pl.when(pl.int_range(pl.len()) == picked.position)
        .then(None)
        .otherwise(pl.col("tokens"))
        .alias("tokens")
    )
    walk = failure_walk(unrecorded, comparison.by, group, [DEMO])
    assert walk is not None and walk.position != picked.position
    assert walk.row["tokens"] is not None and walk.row["outcome"] == "failed"
