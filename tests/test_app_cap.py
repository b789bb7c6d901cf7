"""The budget key `B`: a cap typed in a dialog, every figure following it, the header saying it,
the focus block saying what it saved and lost; at 80x24."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from tests.pilot_helpers import press, screen_text, settle
from tui_ledger.accounting.cap import Cap, capped
from tui_ledger.accounting.ledger import compare
from tui_ledger.load import load
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.screens.cap_screen import CapScreen
from tui_ledger.tui.screens.screens import HelpScreen

SIZE = (80, 24)
DEMO = Path(__file__).resolve().parent.parent / "sample_data" / "demo.csv"

# lean is dear with its failures kept (two long failures); a cap of 1,500 cuts them short.
CSV = """workflow,task,tokens,passed
lean,t1,1000,true
lean,t2,9000,false
lean,t3,9000,false
lean,t4,2000,true
steady,t1,1400,true
steady,t2,1400,true
steady,t3,1400,false
steady,t4,1400,false
"""


def ledger_app(tmp_path: Path) -> tuple[LedgerApp, Path]:
    path = tmp_path / "ledger.csv"
    path.write_text(CSV)
    return LedgerApp([str(path)]), path


def header_text(app: LedgerApp) -> str:
    return screen_text(app).splitlines()[1]


async def type_cap(pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    await press(pilot, "B")
    assert isinstance(pilot.app.screen, CapScreen)
    box = pilot.app.screen.query_one("#cap-input", Input)
    box.value = ""
    if text:
        await pilot.press(*text)
    await press(pilot, "enter")


async def test_b_caps_every_figure_and_the_header_says_so(tmp_path: Path) -> None:
    app, path = ledger_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "CAP" not in header_text(app)
        uncapped = app.comparison
        assert uncapped is not None
        await type_cap(pilot, "1.5k")
        assert not isinstance(app.screen, CapScreen)
        assert header_text(app).lstrip().startswith("CAP 1,500 · 8 attempts")
        expected = compare(capped(load([str(path)]).attempts, Cap(1500)))
        got = app.comparison
        assert got is not None
        for view in ("keep", "drop"):
            for name in ("accepted", "total_tokens", "tokens_per_accepted_result", "rank"):
                assert got.view(view)[name].to_list() == expected.view(view)[name].to_list()
        # lean: 1,000 + 1,500 * 3 = 5,500 tokens for 1 accepted (its 2,000 one is lost).
        assert got.keep["tokens_per_accepted_result"].to_list()[0] == 5500.0
        assert got.keep["rank"].to_list() == [2, 1]
        focus = str(app.query_one("#focus", Static).render())
        assert "cap saves" in focus and "accepted lost" in focus
        # The DROP FAILURES table lists the accepted attempts the cap leaves.
        await press(pilot, "t")
        assert app.table.row_count == 3


async def test_an_empty_box_clears_the_cap_and_esc_keeps_it(tmp_path: Path) -> None:
    app, _ = ledger_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = app.comparison
        assert before is not None
        await type_cap(pilot, "1500")
        await press(pilot, "B", "escape")
        assert "CAP 1,500" in header_text(app)
        await type_cap(pilot, "")
        assert "CAP" not in header_text(app)
        after = app.comparison
        assert after is not None
        assert after.keep.equals(before.keep)


async def test_a_bad_cap_says_why_and_stays_open(tmp_path: Path) -> None:
    app, _ = ledger_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for typed, says in (("0", "more than 0"), ("lots", "not a number"), ("$1", "cost")):
            await type_cap(pilot, typed)
            assert isinstance(app.screen, CapScreen)
            assert says in str(app.screen.query_one("#cap-error", Static).render())
            await press(pilot, "escape")
        assert "CAP" not in header_text(app)


async def test_help_lists_the_budget_key(tmp_path: Path) -> None:
    app, _ = ledger_app(tmp_path)
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert "budget" in screen_text(app)


async def test_the_chart_screen_draws_the_cap_sweep(tmp_path: Path) -> None:
    from tui_ledger.tui.screens.cap_chart import CapSweepChart, CapSweepScreen
    from tui_ledger.tui.screens.pareto_screen import ParetoScreen

    app, _ = ledger_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "c")
        assert isinstance(app.screen, ParetoScreen)
        assert "B cap sweep" in screen_text(app)
        await press(pilot, "B")
        assert isinstance(app.screen, CapSweepScreen)
        best = {row["workflow"]: row for row in app.screen._sweep.best.to_dicts()}
        # lean: a cap of 2,000 keeps both successes: 7,000 / 2 (1,000 would give 4,000 / 1).
        assert (best["lean"]["cap"], best["lean"]["tokens_per_accepted_result"]) == (2000, 3500.0)
        assert (best["steady"]["cap"], best["steady"]["accepted_lost"]) == (1400, 0)
        text = screen_text(app)
        assert "best cap" in text and "2,000" in text and "1,400" in text
        chart = app.screen.query_one(CapSweepChart).render().plain
        assert chart.count("●") == 2
        await press(pilot, "escape")
        assert isinstance(app.screen, ParetoScreen)


async def test_the_attempt_screen_marks_the_step_the_cap_stops() -> None:
    from tests.pilot_helpers import wait_until
    from tui_ledger.tui.screens.attempt_screen import AttemptScreen

    app = LedgerApp([str(DEMO)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_cap(pilot, "5k")
        await press(pilot, "enter")
        screen = app.screen
        assert isinstance(screen, AttemptScreen)
        await wait_until(pilot, lambda: screen.ended, "the log read to its end")
        steps = screen.steps.steps
        running, stop = 0, None
        for position, step in enumerate(steps):  # plainly: the first step past 5,000
            running += step.tokens or 0
            if running > 5000:
                stop = position
                break
        assert stop is not None and any(step.tokens for step in steps)
        assert screen.steps.stop_position() == stop
        status = str(screen.query_one("#attempt-status", Static).render())
        assert f"✂ the cap of 5,000 stops it at step {steps[stop].index}" in status
        assert screen.steps._line(stop, 80)[0][0] == "✂"
        assert screen.steps._line(max(stop - 1, 0), 80)[0][0] != "✂" or stop == 0


async def test_the_summary_export_is_the_capped_one_with_the_cap_said(tmp_path: Path) -> None:
    import json

    from tui_ledger.tui.screens.screens import ExportScreen

    app, _ = ledger_app(tmp_path)
    out = tmp_path / "summary.json"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_cap(pilot, "1.5k")
        await press(pilot, "e")
        assert isinstance(app.screen, ExportScreen)
        app.screen.query_one("#summary-path", Input).value = str(out)
        app.screen.query_one("#attempts-path", Input).value = ""
        await press(pilot, "enter", "enter")
        document = json.loads(out.read_text())
        assert document["cap"]["words"] == "1,500"
        lean = document["views"]["keep"]["lean"]
        assert lean["tokens_per_accepted_result"] == 5500
        assert lean["cap"] == {
            "tokens": 5500,
            "attempts_cut": 3,
            "accepted_lost": 1,
            "tokens_saved": 15500,  # 7,500 + 7,500 + 500
            "accepted_unknown": 0,
        }


async def test_a_dollar_budget_with_prices(tmp_path: Path) -> None:
    from tui_ledger.accounting.prices import parse_prices

    path = tmp_path / "ledger.csv"
    path.write_text(CSV)
    # $1 per million tokens: $0.0015 is 1,500 tokens, the token test's cap.
    app = LedgerApp([str(path)], prices=parse_prices("flat = 1"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_cap(pilot, "$0.0015")
        assert "CAP $0.0015" in header_text(app)
        got = app.comparison
        assert got is not None
        assert got.keep["tokens_per_accepted_result"].to_list()[0] == 5500.0
        assert got.keep["cost_per_accepted_result"].to_list()[0] == pytest.approx(0.0055)
