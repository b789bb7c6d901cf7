"""One test per key of docs UX.md's key table, each asserting what the user sees change."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from textual import events
from textual.command import CommandPalette
from textual.widgets import Input, SelectionList

from tests.pilot_helpers import press, screen_text, settle, wait_until
from tui_ledger.accounting import rows as rows_module
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.screens.detail_screen import DetailScreen
from tui_ledger.tui.screens.screens import (
    ConfirmScreen,
    ExportScreen,
    GroupByScreen,
    HelpScreen,
    WarningsScreen,
)
from tui_ledger.tui.widgets.header import ViewBadge
from tui_ledger.tui.widgets.summary_pane import SummaryPane

REPO = Path(__file__).resolve().parent.parent
RUNS = REPO / "sample_data" / "runs.csv"
SIZE = (160, 45)

# Ten attempts with a task, varied tokens, one zero-usage row (a load warning) and a long note.
TASKS_CSV = """workflow,task,tokens,passed,note
lean,t1,1000,true,
lean,t2,1200,false,
lean,t3,0,false,zero usage here
steady,t1,1600,true,
steady,t2,1500,true,
steady,t3,1700,true,
lean,t4,900,true,
steady,t4,1650,false,
lean,t5,1100,false,"a long note that wraps across the detail panel because it keeps going and going"
steady,t5,1550,true,
"""


def tasks_file(tmp_path: Path, rows: int = 0) -> Path:
    """The ten-attempt file, or `rows` generated attempts (for paging)."""
    path = tmp_path / "tasks.csv"
    if rows:
        lines = [
            f"{'lean' if i % 2 else 'steady'},t{i},{1000 + i},{'true' if i % 3 else 'false'},"
            for i in range(rows)
        ]
        path.write_text("workflow,task,tokens,passed,note\n" + "\n".join(lines) + "\n")
    else:
        path.write_text(TASKS_CSV)
    return path


def summary_title(app: LedgerApp) -> str:
    """The summary pane's top border line, as on screen."""
    pane = app.query_one(SummaryPane)
    lines = screen_text(app).splitlines()
    return lines[pane.region.y][pane.region.x : pane.region.right]


# --------------------------------------------------------------------------- t


async def test_t_toggles_keep_and_drop_failures() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "KEEP FAILURES" in screen_text(app)
        await press(pilot, "t")
        assert app.query_one(ViewBadge).view == "drop"
        text = screen_text(app)
        assert "DROP FAILURES" in text and "the trap" in text
        assert app.table.row_count == 4
        # The filter line counts what the table shows, and says what the view hides.
        assert "4 of 6 attempts · 2 hidden by DROP FAILURES" in text
        await press(pilot, "t")
        assert app.query_one(ViewBadge).view == "keep"
        assert app.table.row_count == 6
        assert "6 of 6 attempts" in screen_text(app)
        assert "hidden by DROP FAILURES" not in screen_text(app)


async def test_t_on_a_filtered_ledger_shows_the_accepted_rows_picked_as_far_as_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 43: the DROP FAILURES rows of a filter are picked only as far as the screen
    reads them (a few hundred rows looked at, of 3,000), and the table shows what picking
    every one showed: the same count, rows and cursor attempt."""
    monkeypatch.setattr(rows_module, "PICK_CHUNKS", (64, 256))
    path = tasks_file(tmp_path, rows=3_000)
    attempts = pl.read_csv(path)
    kept = attempts.filter(pl.col("tokens") > 1500)
    accepted = kept.filter(pl.col("passed"))
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"tokens>1500", "enter")
        assert app.table.row_count == kept.height
        await press(pilot, *["down"] * 4)  # row 4: an accepted attempt
        assert app.table.current_row()["task"] == kept["task"][4] == accepted["task"][2]

        await press(pilot, "t")
        table = app.table
        assert table.row_count == accepted.height
        assert table.rows.resolved < table.row_count  # only the first rows were picked
        assert table.current_row()["task"] == accepted["task"][2]  # the same attempt
        shown = table.rows.head(table.size.height)
        assert shown["task"].to_list() == accepted["task"].head(shown.height).to_list()
        text = screen_text(app)
        hidden = kept.height - accepted.height
        assert f"{accepted.height:,} of " in text and f"{hidden:,} hidden by DROP FAILURES" in text
        assert table.frame["task"].to_list() == accepted["task"].to_list()  # every one alike

        await press(pilot, "t")
        assert app.table.row_count == kept.height
        assert app.table.current_row()["task"] == kept["task"][4]


# --------------------------------------------------------------------------- /


async def test_slash_filters_as_you_type_and_enter_returns_to_the_table() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        assert app.focused is app.filter_input
        await press(pilot, *"steady")
        assert app.table.row_count == 3
        assert "3 of 6 attempts" in screen_text(app)
        await press(pilot, "enter")
        assert app.focused is app.table
        assert app.filter_input.value == "steady"


async def test_slash_typed_fast_puts_what_follows_in_the_box() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # A burst, as from a fast typist or a paste: no pause for the focus to move.
        for character in "/lean":
            app.post_message(events.Key("slash" if character == "/" else character, character))
        await settle(pilot)
        assert app.filter_input.value == "lean"
        assert app.table.row_count == 3
        # In the box, `/` is a character of the filter.
        await press(pilot, "slash")
        assert app.filter_input.value == "lean/"


async def test_keys_typed_fast_after_enter_are_commands_not_filter_text() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash")
        # One burst: Textual queues every key on the box before Enter has moved focus.
        for key, character in [*((c, c) for c in "steady"), ("enter", "\r"), ("t", "t")]:
            app.post_message(events.Key(key, character))
        await settle(pilot)
        assert app.filter_input.value == "steady"
        assert app.focused is app.table
        assert app.view == "drop"  # the `t` after Enter toggled the view


async def test_slash_then_escape_clears_the_filter() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"lean")
        assert app.table.row_count == 3
        await press(pilot, "escape")
        assert app.filter_input.value == ""
        assert app.table.row_count == 6
        assert app.focused is app.table


async def test_a_filter_that_does_not_parse_keeps_the_table_and_says_why() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"lean")
        assert app.table.row_count == 3
        app.filter_input.insert_text_at_cursor(" wrkflow:x")  # as if pasted
        await settle(pilot)
        assert app.table.row_count == 3  # unchanged
        status = str(app.query_one("#filter-status").render())
        assert status.startswith("✘")
        assert "wrkflow" in status
        assert "at 6" in status  # the position of the bad term, counted from 1


# --------------------------------------------------------------------------- f / F


async def test_f_filters_to_the_value_under_the_cursor() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "f")
        assert app.filter_input.value == "workflow=lean"
        assert app.table.row_count == 3
        assert set(app.table.frame["workflow"]) == {"lean"}


async def test_shift_f_excludes_the_value_under_the_cursor() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "F")
        assert app.filter_input.value == "-workflow=lean"
        assert set(app.table.frame["workflow"]) == {"steady"}


async def test_f_quotes_values_the_filter_language_would_misread(tmp_path: Path) -> None:
    path = tmp_path / "quoted.csv"
    path.write_text('workflow,tokens,passed\n"fix login",10,true\nother,20,false\n')
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "f")
        assert app.filter_input.value == 'workflow="fix login"'
        assert app.table.row_count == 1


# --------------------------------------------------------------------------- b


async def test_b_groups_the_summary_by_the_chosen_columns(tmp_path: Path) -> None:
    app = LedgerApp([str(tasks_file(tmp_path))])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Summary by workflow" in summary_title(app)
        await press(pilot, "b")
        assert isinstance(app.screen, GroupByScreen)
        choices = app.screen.query_one(SelectionList)
        names = [choices.get_option_at_index(i).value for i in range(choices.option_count)]
        await press(pilot, *["down"] * names.index("task"), "space")
        await press(pilot, "enter")
        assert not isinstance(app.screen, GroupByScreen)
        assert app.by == ("workflow", "task")
        assert "Summary by workflow · task" in summary_title(app)
        table = app.query_one(SummaryPane).groups_table
        assert table.row_count == 10  # every (workflow, task) pair


# --------------------------------------------------------------------------- [ ]


async def test_brackets_sort_by_the_current_column(tmp_path: Path) -> None:
    app = LedgerApp([str(tasks_file(tmp_path))])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tokens = app.table.column_names.index("tokens")
        await press(pilot, *["l"] * tokens)
        assert app.column_under_cursor() == "tokens"
        await press(pilot, "right_square_bracket")
        assert app.table.frame["tokens"].to_list()[:2] == [1700, 1650]
        assert app.table.sort_column == "tokens" and app.table.sort_descending
        assert "sorted by tokens ▼" in screen_text(app)
        await press(pilot, "left_square_bracket")
        assert app.table.frame["tokens"].to_list()[:2] == [0, 900]
        assert "sorted by tokens ▲" in screen_text(app)


# --------------------------------------------------------------------------- movement


async def test_arrows_and_hjkl_move_the_cursor() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.table
        for down, up in (("j", "k"), ("down", "up")):
            await press(pilot, down, down)
            assert table.cursor_row == 2
            await press(pilot, up)
            assert table.cursor_row == 1
            await press(pilot, up)
        for right, left in (("l", "h"), ("right", "left")):
            await press(pilot, right)
            assert table.cursor_column == 1
            await press(pilot, left)
            assert table.cursor_column == 0


async def test_move_keys_leave_the_hidden_table_alone_behind_every_dialog(
    tmp_path: Path,
) -> None:
    app = LedgerApp([str(tasks_file(tmp_path))])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "j", "l")
        table = app.table
        where = (table.cursor_row, table.cursor_column)
        for opener in ("question_mark", "w", "enter", "i", "b", "e", "c", "p"):
            await press(pilot, opener)
            assert not app.on_main_screen, opener
            await press(pilot, "j", "j", "k", "l", "l", "h", "G", "g", "g", "end", "home")
            assert (table.cursor_row, table.cursor_column) == where, opener
            while not app.on_main_screen:
                await press(pilot, "escape")


async def test_page_down_and_page_up_move_a_screen(tmp_path: Path) -> None:
    app = LedgerApp([str(tasks_file(tmp_path, rows=300))])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "pagedown")
        page = app.table.cursor_row
        assert page >= 20
        await press(pilot, "pagedown")
        assert app.table.cursor_row == 2 * page
        await press(pilot, "pageup")
        assert app.table.cursor_row == page


async def test_gg_and_home_go_to_the_first_row_g_and_end_to_the_last(tmp_path: Path) -> None:
    app = LedgerApp([str(tasks_file(tmp_path, rows=300))])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "G")
        assert app.table.cursor_row == 299
        await press(pilot, "g", "g")
        assert app.table.cursor_row == 0
        await press(pilot, "end")
        assert app.table.cursor_row == 299
        await press(pilot, "home")
        assert app.table.cursor_row == 0
        # A lone g does nothing.
        await press(pilot, "j", "g")
        assert app.table.cursor_row == 1


# --------------------------------------------------------------------------- i


async def test_i_shows_every_field_of_the_attempt(tmp_path: Path) -> None:
    app = LedgerApp([str(tasks_file(tmp_path))])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "G", "i")
        assert isinstance(app.screen, DetailScreen)
        text = screen_text(app)
        for column in app.table.column_names:
            assert column in text
        assert "1,550" in text and "steady" in text and "t5" in text
        await press(pilot, "escape")
        await press(pilot, "k", "i")
        text = screen_text(app)
        assert "a long note that wraps across the detail panel" in text
        assert "keeps going and going" in text  # wrapped, not cut


# --------------------------------------------------------------------------- w


async def test_w_lists_the_warnings(tmp_path: Path) -> None:
    app = LedgerApp([str(tasks_file(tmp_path))])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        count = len(app.collect_warnings())
        assert count >= 1  # the zero-usage row
        assert f"⚠ {count} warning" in screen_text(app)
        await press(pilot, "w")
        assert isinstance(app.screen, WarningsScreen)
        text = screen_text(app)
        assert "0 tokens" in text
        assert "line 4" in text
        await press(pilot, "escape")
        assert not isinstance(app.screen, WarningsScreen)


# --------------------------------------------------------------------------- e


async def test_e_exports_the_summary_and_attempts_and_asks_before_replacing(
    tmp_path: Path, monkeypatch: object
) -> None:
    summary = tmp_path / "out.md"
    attempts = tmp_path / "out.csv"
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"lean", "enter")

        async def fill_and_submit() -> None:
            await press(pilot, "e")
            assert isinstance(app.screen, ExportScreen)
            app.screen.query_one("#summary-path", Input).value = str(summary)
            app.screen.query_one("#attempts-path", Input).value = str(attempts)
            await press(pilot, "enter", "enter")

        await fill_and_submit()
        assert "KEEP FAILURES" in summary.read_text()
        assert "DROP FAILURES" in summary.read_text()
        written = pl.read_csv(attempts)
        assert written.height == 3 and set(written["workflow"]) == {"lean"}

        summary.write_text("mine")
        await fill_and_submit()
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "n")
        assert summary.read_text() == "mine"  # nothing replaced unasked
        assert isinstance(app.screen, ExportScreen)  # back in the dialog (issue 53)
        await press(pilot, "escape")

        await fill_and_submit()
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "y")
        assert "KEEP FAILURES" in summary.read_text()


# --------------------------------------------------------------------------- r


async def test_r_reloads_keeping_filter_view_and_cursor(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(RUNS.read_text())
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"steady", "enter", "t", "j")
        assert app.table.cursor_row == 1
        with path.open("a") as handle:
            handle.write("steady,1400,true\n")
        await press(pilot, "r")
        await settle(pilot)
        assert app.ledger is not None and app.ledger.attempts.height == 7
        assert "7 attempts" in screen_text(app)
        assert app.filter_input.value == "steady"
        assert app.view == "drop"
        assert app.table.row_count == 4
        assert app.table.cursor_row == 1


# --------------------------------------------------------------------------- ? / F1


async def test_question_mark_and_f1_show_help_with_every_key_and_both_views() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key in ("question_mark", "f1"):
            await press(pilot, key)
            assert isinstance(app.screen, HelpScreen)
            body = screen_text(app)
            views = body
            for needle in ("t ", "/", "f ", "F ", "b ", "[", "]", "Enter", "w ", "e ", "r "):
                assert needle in body
            for needle in ("↓  j", "PgUp", "PgDn", "gg  Home", "G  End", "?  F1", "Ctrl+P", "q "):
                assert needle in body
            assert "KEEP FAILURES" in views and "counts every attempt" in views
            assert "DROP FAILURES" in views and "only accepted attempts" in views
            await press(pilot, "escape")
            assert not isinstance(app.screen, HelpScreen)


# --------------------------------------------------------------------------- ctrl+p


async def test_ctrl_p_offers_what_makes_sense_now_and_runs_it() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await press(pilot, *"drop")
        await wait_until(
            pilot,
            lambda: "Show DROP FAILURES (the trap)" in screen_text(app),
            "the palette offering DROP FAILURES",
        )
        await press(pilot, "enter")
        await settle(pilot)
        assert app.view == "drop"
        await press(pilot, "ctrl+p", *"filter")
        await wait_until(
            pilot,
            lambda: "Filter to workflow = lean" in screen_text(app),
            "the palette offering a filter to the cell",
        )
        assert "Clear filter" not in screen_text(app)  # no filter to clear yet


# --------------------------------------------------------------------------- q


async def test_q_quits() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running or app._exit
    assert app.return_code == 0


# --------------------------------------------------------------------------- Tab


async def test_tab_moves_to_the_summary_where_a_chosen_row_is_under_focus() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        focus = app.query_one("#focus")
        assert str(focus.render()).startswith("▸ lean")
        await press(pilot, "tab")
        groups = app.query_one(SummaryPane).groups_table
        assert app.focused is groups
        await press(pilot, "j")
        assert groups.cursor_row == 1
        assert str(focus.render()).startswith("▸ steady")
        assert app.table.cursor_row == 0  # the attempts table stays where it was
