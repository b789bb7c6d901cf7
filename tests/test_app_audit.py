"""The audit side of the app: prices and cost, intervals, checks, matched tasks, per task, Pareto.

Each test opens the real app headless (Textual's Pilot) and reads what a person would see.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import Footer, Input

from tests.pilot_helpers import press, screen_text, settle, wait_until
from tui_ledger.accounting.prices import PriceTable, load_prices
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.screens.audit_screens import PerTaskScreen
from tui_ledger.tui.screens.detail_screen import DetailScreen
from tui_ledger.tui.screens.pareto_screen import ParetoChart, ParetoScreen
from tui_ledger.tui.screens.screens import (
    ConfirmScreen,
    HelpScreen,
    SaveScreen,
    WarningsScreen,
)
from tui_ledger.tui.widgets.summary_pane import SummaryPane

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "sample_data" / "demo.csv"
PRICES = REPO / "sample_data" / "prices.toml"
RUNS = REPO / "sample_data" / "runs.csv"
SIZE = (220, 50)  # every summary column fits: these tests read values, not the layout

# Two workflows on two models; `steady` never attempted t3, and `lean` never passed t2.
UNEVEN_CSV = """workflow,task,model,tokens,passed
lean,t1,model-a,1000,true
lean,t1,model-a,1100,false
lean,t2,model-a,1200,false
lean,t2,model-a,1300,false
lean,t3,model-a,900,true
steady,t1,model-x,1600,true
steady,t2,model-x,1500,true
steady,t2,model-x,1700,false
"""


def summary_cells(app: LedgerApp) -> dict[str, list[str]]:
    """The summary table as {group label: [cell text, ...]}, the full headings under ""
    (a narrow pane shows shorter ones)."""
    table = app.query_one(SummaryPane).groups_table
    rows = {"": table.column_keys}
    for index in range(table.row_count):
        cells = [cell.plain for cell in table.row_cells(index)]
        rows[cells[0]] = cells
    return rows


def cell(app: LedgerApp, group: str, heading: str) -> str:
    """One cell of the summary table."""
    cells = summary_cells(app)
    return cells[group][cells[""].index(heading)]


def focus_text(app: LedgerApp) -> str:
    """The focused group's block, both views side by side."""
    return str(app.query_one("#focus").render())


def demo_app() -> LedgerApp:
    """The bundled demo, priced by the bundled example table."""
    return LedgerApp([str(DEMO)], prices=load_prices(PRICES))


def uneven_app(tmp_path: Path, prices: PriceTable | None = None) -> LedgerApp:
    path = tmp_path / "uneven.csv"
    path.write_text(UNEVEN_CSV)
    return LedgerApp([str(path)], prices=prices)


def model_a_prices(tmp_path: Path) -> PriceTable:
    """A table that prices model-a at a flat $2 per million tokens and knows no model-x."""
    path = tmp_path / "prices.toml"
    path.write_text('[models."model-a"]\nflat = 2.0\nsource = "test"\ndate = "2026-11-29"\n')
    return load_prices(path)


# --------------------------------------------------------------------------- prices and cost


async def test_demo_with_prices_shows_cost_per_attempt_and_per_accepted_result() -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.has_cost
        columns = app.table.column_names
        assert columns.index("cost") == columns.index("tokens") + 1  # beside the tokens
        # Tokens stay the headline; cost per accepted result sits beside them.
        assert cell(app, "careful-reviewer", "per accepted") == "61,517"
        assert cell(app, "careful-reviewer", "$/acc") == "$0.070"
        assert cell(app, "lean-loop", "$/acc") == "$0.047"
        assert cell(app, "retry-storm", "$/acc") == "≥ $0.073"  # some usage, so some cost, missing
        assert cell(app, "careful-reviewer", "total $") == "$4.29"
        focus = focus_text(app)
        assert "total cost" in focus and "cost / accepted" in focus
        assert "$0.015" in focus  # lean-loop's drop-view cost per accepted result, side by side
        await press(pilot, "i")  # the attempt's every field: its cost in dollars
        assert isinstance(app.screen, DetailScreen)
        assert "USD)" in screen_text(app)


async def test_dollar_switches_the_headline_between_tokens_and_cost() -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "dollar_sign")
        assert app.metric == "cost"
        header = summary_cells(app)[""]
        assert header[1] == "$ per accepted"
        assert cell(app, "careful-reviewer", "$ per accepted") == "$0.070"
        assert cell(app, "careful-reviewer", "tokens/acc") == "61,517"
        assert "cost per accepted result" in screen_text(app)  # the bars and the title follow
        assert "of spend" in str(app.query_one("#callout").render())
        # The view toggle keeps the metric; the drop view's cost figure shows.
        await press(pilot, "t")
        assert cell(app, "lean-loop", "$ per accepted") == "$0.015"
        await press(pilot, "dollar_sign")
        assert app.metric == "tokens"
        assert summary_cells(app)[""][1] == "per accepted"


async def test_dollar_without_prices_says_how_to_get_costs() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.check_action("toggle_metric", ()) is None  # greyed out: nothing to switch to
        app.action_toggle_metric()
        await pilot.pause()
        assert app.metric == "tokens"


async def test_an_unpriced_model_shows_a_dash_never_zero_and_a_warning(tmp_path: Path) -> None:
    app = uneven_app(tmp_path, model_a_prices(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.ledger is not None
        costs = app.ledger.attempts.filter(app.ledger.attempts["model"] == "model-x")["cost"]
        assert costs.null_count() == costs.len()  # missing, never $0
        assert cell(app, "steady", "$/acc") == "— unpriced"
        assert cell(app, "steady", "total $") == "—"
        assert cell(app, "lean", "$/acc") == "$0.0055"  # 5,500 tokens x $2/M = $0.011, 2 accepted
        assert "unpriced" in screen_text(app)
        kinds = [getattr(item, "kind", None) for item in app.collect_warnings()]
        assert "unpriced_model" in kinds
        await press(pilot, "dollar_sign")
        assert cell(app, "steady", "$ per accepted") == "— unpriced"
        await press(pilot, "w")
        assert isinstance(app.screen, WarningsScreen)
        assert "unpriced model" in screen_text(app)
        assert "model-x" in screen_text(app)


async def test_a_flat_price_prices_every_attempt_by_its_tokens(tmp_path: Path) -> None:
    app = uneven_app(tmp_path, PriceTable().with_flat(1.0))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert cell(app, "steady", "total $") == "$0.0048"  # 4,800 tokens at $1 per million


def test_run_app_hands_the_price_table_to_the_app_not_to_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tui_ledger import cli

    seen: dict[str, object] = {}

    def fake_run(self: LedgerApp, *args: object, **kwargs: object) -> None:
        seen["prices"] = self.prices
        seen["options"] = dict(self.load_options)

    monkeypatch.setattr(LedgerApp, "run", fake_run)
    assert cli.main([str(DEMO), "--prices", str(PRICES), "--flat-price", "3"]) == 0
    prices = seen["prices"]
    assert isinstance(prices, PriceTable) and prices.flat == 3.0
    assert "prices" not in seen["options"]  # type: ignore[operator]


# --------------------------------------------------------------------------- intervals


async def test_the_focused_group_shows_its_intervals_and_a_small_sample_note() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        focus = focus_text(app)
        assert "33% [6–79%]" in focus  # Wilson on 1 of 3
        line = next(row for row in focus.splitlines() if row.strip().startswith("95%"))
        assert "1.0k–∞" in line and "(bootstrap)" in line
        assert "† keep: small sample: upper bound unbounded" in focus
        assert cell(app, "lean", "per accepted") == "3,000†"
        assert "[" not in cell(app, "lean", "per accepted")  # the table stays uncluttered


# --------------------------------------------------------------------------- checks


async def test_w_lists_every_fair_comparison_check_with_severity(tmp_path: Path) -> None:
    app = uneven_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.checks is not None
        kinds = {check.kind for check in app.checks}
        assert {"unmatched_tasks", "unequal_attempts", "small_sample"} <= kinds
        count = app.warning_count()
        assert f"⚠ {count} warnings" in screen_text(app)
        await press(pilot, "w")
        text = screen_text(app)
        assert "WARNING  unmatched tasks" in text
        assert "steady" in text and "t3" in text
        await press(pilot, "escape")


async def test_checks_follow_the_group_by(tmp_path: Path) -> None:
    app = uneven_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.checks is not None
        assert "unmatched_tasks" in {check.kind for check in app.checks}
        app.group_by(["task"])
        await settle(pilot)
        assert app.checks is not None
        # Grouped by task there is no task set to match.
        assert "unmatched_tasks" not in {check.kind for check in app.checks}


async def test_m_compares_matched_tasks_only_and_says_so(tmp_path: Path) -> None:
    app = uneven_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.table.row_count == 8
        await press(pilot, "m")
        assert app.matched_only
        assert app.table.row_count == 7  # lean's t3 attempt is left out
        assert set(app.table.frame["task"]) == {"t1", "t2"}
        text = screen_text(app)
        assert "matched tasks only" in text
        assert "1 left out" in text
        notes = [item for item in app.collect_warnings() if item.kind == "matched_tasks"]
        assert notes and notes[0].severity == "info"
        assert cell(app, "lean", "att") == "4"
        await press(pilot, "m")
        assert not app.matched_only
        assert app.table.row_count == 8
        assert "matched tasks only" not in screen_text(app)


# --------------------------------------------------------------------------- per task


async def test_p_lists_the_focused_group_task_by_task_with_never_passed_spend(
    tmp_path: Path,
) -> None:
    app = uneven_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "p")
        screen = app.screen
        assert isinstance(screen, PerTaskScreen)
        text = screen_text(app)
        assert "per task · lean" in text
        assert "✘ t2" in text  # never passed, highlighted
        assert "never passed: 1 task · 2 attempts · 2,500 tokens" in text
        assert screen.frame["task"].to_list() == ["t2", "t1", "t3"]  # most tokens first
        # [ and ] sort by the column under the cursor (the task names here).
        await press(pilot, "left_square_bracket")
        assert screen.frame["task"].to_list() == ["t1", "t2", "t3"]
        await press(pilot, "right_square_bracket")
        assert screen.frame["task"].to_list() == ["t3", "t2", "t1"]
        # Enter on t2 filters the main table to lean's attempts at t2.
        await press(pilot, "j", "enter")
        assert not isinstance(app.screen, PerTaskScreen)
        assert app.filter_text == "workflow=lean task=t2"
        assert app.table.row_count == 2


async def test_p_needs_a_task_column() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.check_action("per_task", ()) is None
        assert app.check_action("toggle_matched", ()) is None


# --------------------------------------------------------------------------- Pareto


async def test_c_draws_the_pareto_chart_and_s_saves_it_as_svg(tmp_path: Path) -> None:
    target = tmp_path / "chart.svg"
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "c")
        assert isinstance(app.screen, ParetoScreen)
        assert app.screen.metric == "tokens"
        text = screen_text(app)
        assert "pass rate vs tokens per accepted result" in text
        assert "●" in text and "○" in text  # real points and the trap's ghosts
        assert "★ frontier" in text
        assert "steady-planner" in text
        assert any("⠀" < char <= "⣿" for char in text)  # braille lines: ghosts, frontier
        chart = app.screen.query_one(ParetoChart)
        assert chart.size.height >= 12

        async def save() -> None:
            await press(pilot, "s")
            assert isinstance(app.screen, SaveScreen)
            app.screen.query_one("#save-path", Input).value = str(target)
            await press(pilot, "enter")

        await save()
        assert isinstance(app.screen, ParetoScreen)  # back on the chart
        assert target.read_text().startswith("<?xml")
        assert "Pass rate vs tokens per accepted result" in target.read_text()

        target.write_text("mine")
        await save()
        assert isinstance(app.screen, ConfirmScreen)  # never replaced unasked
        await press(pilot, "n")
        assert target.read_text() == "mine"
        assert isinstance(app.screen, SaveScreen)  # back in the dialog, the name as typed
        assert app.screen.query_one("#save-path", Input).value == str(target)
        await press(pilot, "escape")

        await press(pilot, "dollar_sign")  # the chart in money
        assert app.screen.metric == "cost"
        assert "pass rate vs cost per accepted result" in screen_text(app)
        await press(pilot, "escape")
        assert not isinstance(app.screen, ParetoScreen)


# --------------------------------------------------------------------------- registry


async def test_help_and_palette_offer_the_audit_commands_and_the_footer_stays_short() -> None:
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        footer = "\n".join(
            strip.text for strip in app.screen._compositor.render_strips() if strip is not None
        ).splitlines()[-1]
        assert "per task" not in footer and "chart" not in footer
        assert app.query_one(Footer) is not None
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        assert "Audit" in text
        for needle in ("tokens ⇄ cost", "every group attempted", "never-passed", "saves SVG"):
            assert needle in text
        await press(pilot, "escape")
        await press(pilot, "ctrl+p", *"chart")
        assert isinstance(app.screen, CommandPalette)
        await wait_until(
            pilot,
            lambda: "Chart: pass rate vs spend per accepted result" in screen_text(app),
            "the palette offering the chart",
        )


async def test_summary_table_fits_its_pane_at_160_and_120_columns() -> None:
    for size in ((160, 50), (120, 40)):
        app = demo_app()
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            table = app.query_one(SummaryPane).groups_table
            keys = table.column_keys
            # What the trap is about stays (the headline, the rank, accepted, the pass rate);
            # median and total leave first; nothing scrolls sideways.
            assert {"per accepted", "#", "acc", "pass"} <= set(keys), size
            assert table.virtual_size.width <= table.scrollable_content_region.width, size
            assert "not shown (narrow pane):" in screen_text(app), size
            assert "median" not in keys, size


def test_fit_columns_shortens_headings_then_drops_the_least_needed() -> None:
    from rich.text import Text

    from tui_ledger.tui.widgets.summary_text import fit_columns

    headings = ["workflow", "per accepted", "att", "acc", "median", "total"]
    rows = [[Text(text) for text in ("lean", "3,000", "3", "1/3", "1,000", "3,000")]]
    kept, fitted, left_out = fit_columns(headings, rows, 200)
    assert [shown for shown, _ in kept] == headings and left_out == []
    kept, fitted, left_out = fit_columns(headings, rows, 40)
    assert [shown for shown, _ in kept] == ["workflow", "per acc", "att", "acc", "total"]
    assert left_out == ["median"] and [cell.plain for cell in fitted[0]][-1] == "3,000"


def test_fit_columns_keeps_the_rank_and_lets_empty_columns_go_first() -> None:
    from rich.text import Text

    from tui_ledger.tui.widgets.summary_text import fit_columns

    headings = ["workflow", "per accepted", "trap", "#", "att", "acc", "pass", "median", "total"]
    cells = [
        ("lean", "3,000", "—", "2", "3", "1/3", "33%", "1,000", "3,000"),
        ("steady", "1,600", "—", "1", "3", "3/3", "100%", "1,600", "4,800"),
    ]
    rows = [[Text(text) for text in row] for row in cells]
    # The all-`—` trap column leaves first, then median, then total, then att.
    assert fit_columns(headings, rows, 48)[2] == ["trap", "median"]
    assert fit_columns(headings, rows, 40)[2] == ["trap", "median", "total"]
    assert fit_columns(headings, rows, 34)[2] == ["trap", "att", "median", "total"]
    # However narrow, the rank, accepted and the pass rate never leave.
    kept = fit_columns(headings, rows, 10)[0]
    assert [name for _, name in kept] == ["workflow", "per accepted", "#", "acc", "pass"]
