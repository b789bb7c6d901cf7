"""Issue 53, the app's half: what a new user's hour found, each with the test that fails without
its fix (a theme from the palette, a failed recompute, the view's round trip, filter messages,
the chart of nothing, cut labels, the export dialog)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from textual.widgets import Checkbox, Input

from tests.pilot_helpers import press, record_toasts, screen_text, settle
from tui_ledger.tui import app as app_module
from tui_ledger.tui import snapshot as snapshot_module
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.screens.screens import ConfirmScreen, ExportScreen
from tui_ledger.tui.widgets.summary_pane import SummaryPane

REPO = Path(__file__).resolve().parent.parent
RUNS = REPO / "sample_data" / "runs.csv"
DEMO = str(resources.files("tui_ledger.sample_data").joinpath("demo.csv"))


def words(app: LedgerApp) -> str:
    """The screen's words, its borders and line breaks as single spaces (a wrapped sentence
    reads whole)."""
    return " ".join(screen_text(app).replace("│", " ").split())


def demo_app() -> LedgerApp:
    return LedgerApp([DEMO], demo=True)


# --------------------------------------------------------------------------- 1: every theme


async def test_every_theme_of_the_palette_draws_the_app_with_keep_and_drop_apart() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        themes = sorted(app.available_themes)
        assert len(themes) > 10  # the palette offers Textual's themes, not only ours
        for name in themes:
            app.theme = name
            await pilot.pause()
            assert app.theme == name and app.return_code is None, name
            variables = app.get_css_variables()
            assert variables["keep"] != variables["drop"], name
            assert "KEEP FAILURES" in screen_text(app), name
        await press(pilot, "t")
        assert "DROP FAILURES" in screen_text(app)


# --------------------------------------------------------------------------- 2: a failed request


def failing_grouping(
    monkeypatch: pytest.MonkeyPatch, by: tuple[str, ...], error: Exception
) -> None:
    """The accounting raises `error` whenever it is asked to group by `by`."""
    original = snapshot_module.compare

    def compare(frame: Any, grouping: Any, *args: Any, **kwargs: Any) -> Any:
        if tuple(grouping) == by:
            raise error
        return original(frame, grouping, *args, **kwargs)

    monkeypatch.setattr(snapshot_module, "compare", compare)


def pane_title(app: LedgerApp) -> str:
    pane = app.query_one(SummaryPane)
    lines = screen_text(app).splitlines()
    return lines[pane.region.y][pane.region.x : pane.region.right]


@pytest.mark.parametrize(
    "error", [pl.exceptions.ComputeError("no such grouping"), RuntimeError("a fault of ours")]
)
@pytest.mark.parametrize("inline", [True, False])
async def test_a_grouping_that_fails_says_so_and_the_next_keystroke_filters(
    monkeypatch: pytest.MonkeyPatch, error: Exception, inline: bool
) -> None:
    """Issue 53 item 2: the filter line says the error, the header and the pane agree on the
    grouping (the one on screen), and the next filter keystroke recomputes."""
    monkeypatch.setattr(app_module, "INLINE_RECOMPUTE_SECONDS", 1e9 if inline else -1.0)
    failing_grouping(monkeypatch, ("task",), error)
    app = demo_app()
    said = record_toasts(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.group_by(["task"])  # what the `b` dialog does when task is chosen
        await settle(pilot)
        assert app.return_code is None
        assert any("could not group by task" in line for line in said)  # whole, in a toast
        text = screen_text(app)
        assert "could not group by task" in text and "still grouped by workflow" in text
        assert "grouped by task" not in text  # the header
        assert "Summary by workflow" in pane_title(app)
        await press(pilot, "slash", *"lean")
        assert "90 of 360 attempts" in screen_text(app)
        assert {row["workflow"] for row in app.table.rows.head(5).iter_rows(named=True)} == {
            "lean-loop"
        }


# --------------------------------------------------------------------------- 8: filter messages


async def test_a_filter_that_stops_parsing_shows_the_whole_terms_before_it() -> None:
    """Issue 53 item 8: while `agnt:lean` is typed, the half-typed word `agnt` (which matches
    nothing) is not what the table shows beside the error: the table and the line agree."""
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"agnt")
        assert app.table.row_count == 0
        await press(pilot, "colon")
        text = screen_text(app)
        assert "unknown column 'agnt'" in text and "table unfiltered" in text
        assert app.table.row_count == 6
        await press(pilot, *"lean")
        assert "table unfiltered" in screen_text(app) and app.table.row_count == 6
        await press(pilot, "ctrl+u", *"lean agnt:")
        text = screen_text(app)
        assert 'table filtered by "lean"' in text and app.table.row_count == 3
        await press(pilot, "backspace", *" steady")  # `lean agnt steady`: parses again
        assert "0 of 6 attempts" in screen_text(app) and app.table.row_count == 0


async def test_m_with_no_task_every_group_attempted_says_so(tmp_path: Path) -> None:
    """Issue 53 item 8: `m` when no task was attempted by every group: the pane says that,
    not "No attempts match the filter" (there is no filter)."""
    path = tmp_path / "apart.csv"
    path.write_text("workflow,task,tokens,passed\na,t1,100,true\na,t2,200,false\nb,t3,300,true\n")
    app = LedgerApp([str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "m")
        text = words(app)
        assert "No task was attempted by every group, so matched tasks only" in text
        assert "No attempts match the filter" not in text
        await press(pilot, "m", "slash", *"zzzz")
        assert "No attempts match the filter" in words(app)


# --------------------------------------------------------------------------- 9, 11: the chart


async def test_the_chart_at_80x24_shows_its_keys_and_points_lower_to_the_left() -> None:
    """Issue 53 item 11: the key hints are not cut at 80x24; the caption's arrow points to
    the cheaper side (the left, where spend per accepted result is lower)."""
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "c")
        text = screen_text(app)
        assert "100% ┤" in text and "s save as SVG · B cap sweep · Esc back" in text
        assert "← lower is better" in text and "lower is better →" not in text


async def test_the_chart_of_an_empty_selection_says_so_in_words() -> None:
    """Issue 53 item 9: `c` with nothing selected: a sentence, not axes of nothing."""
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"zzzz", "enter")
        await press(pilot, "c")
        text = words(app)
        assert "Nothing to chart: no attempt is selected" in text
        assert "┤" not in text and "lower is better" not in text and "Esc back" in text
        # Only failures: attempts, but no group has a figure per accepted result to plot.
        await press(pilot, "escape", "slash", "ctrl+u", *"failed", "enter")
        await press(pilot, "c")
        text = words(app)
        assert "Nothing to chart: no group has a tokens figure per accepted result" in text
        assert "┤" not in text


# --------------------------------------------------------------------------- 7: t t


async def test_t_t_puts_the_cursor_and_the_scroll_back() -> None:
    """Issue 53 item 7: the demo at 120x40, `t` `t`: the first row (a failure, which DROP
    FAILURES hides) is in sight again, the cursor on it; from a row further down, the same."""
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.table
        first = table.current_row()
        assert first is not None and first["outcome"] == "failed"
        await press(pilot, "t")
        assert table.current_row() != first  # hidden: the cursor is on a neighbour
        await press(pilot, "t")
        assert table.current_row() == first
        assert (table.cursor_row, table.scroll_offset.y) == (0, 0)
        assert "✘ failed      12,499" in screen_text(app)
        await press(pilot, "down", "down", "down", "down")
        place = (table.current_row(), table.cursor_row - table.scroll_offset.y)
        await press(pilot, "t", "t")
        assert (table.current_row(), table.cursor_row - table.scroll_offset.y) == place


# --------------------------------------------------------------------------- 10: cut labels


async def test_f_on_a_task_leaves_its_cut_name_marked_and_its_filter_whole() -> None:
    """Issue 53 item 10: `f` on a cut task name filters by the whole name; the rows then read
    its start and an ellipsis (they read `login-redirect`, a name the ledger does not have)."""
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "right")  # the task column
        await press(pilot, "f")
        assert app.filter_input.value == "task=fix-login-redirect"
        text = screen_text(app)
        assert "lean-loop        fix-login-redir…" in text  # its start, marked as cut
        assert " login-redirect" not in text


# --------------------------------------------------------------------------- 11: the export dialog


async def test_no_to_replacing_returns_to_the_export_dialog_as_typed(tmp_path: Path) -> None:
    """Issue 53 item 11: "No" on the overwrite question goes back to the dialog with both
    paths (and the raw CSV box) as typed; at 80x24 the dialog fits the screen."""
    summary, attempts = tmp_path / "mine.md", tmp_path / "mine.csv"
    summary.write_text("mine")
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await press(pilot, "e")
        dialog = app.screen
        assert isinstance(dialog, ExportScreen)
        frame = dialog.query_one("#export-dialog")
        assert frame.region.right <= 80 and frame.region.x >= 0
        dialog.query_one("#summary-path", Input).value = str(summary)
        dialog.query_one("#attempts-path", Input).value = str(attempts)
        dialog.query_one("#export-raw", Checkbox).value = True
        await press(pilot, "enter", "enter")
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "n")
        again = app.screen
        assert isinstance(again, ExportScreen)
        assert again.query_one("#summary-path", Input).value == str(summary)
        assert again.query_one("#attempts-path", Input).value == str(attempts)
        assert again.query_one("#export-raw", Checkbox).value is True
        assert summary.read_text() == "mine" and not attempts.exists()


async def test_a_filter_typed_from_a_cut_label_names_the_full_name(tmp_path: Path) -> None:
    """Issue 53 item 10: `/workflow=<what the list shows>` matched nothing and said nothing;
    the summary now names the full name (and `f` filters by it)."""
    path = tmp_path / "tb.csv"
    path.write_text(
        "workflow,task,tokens,passed\n"
        "20250902_orchestrator_qwen-3-coder-480B,t1,100,true\n"
        "20250711_openhands_claude-4-sonnet,t1,200,false\n"
    )
    app = LedgerApp([str(path)])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"workflow=orchestrator_qwen-3-coder-480B")
        text = words(app)
        assert "0 of 2 attempts" in text
        assert "no workflow is named 'orchestrator_qwen-3-coder-480B'" in text
        assert "the full name: 20250902_orchestrator_qwen-3-coder-480B" in text
        app.filter_input.value = "workflow=…qwen…480B"  # pasted from the list
        await settle(pilot)
        assert "the full name: 20250902_orchestrator_qwen-3-coder-480B" in words(app)
        await press(pilot, "ctrl+u", *"workflow=nobody")
        assert "No attempts match the filter." in words(app)


async def test_a_workflow_named_like_markup_reads_as_typed_after_f(tmp_path: Path) -> None:
    """Issue 53 item 10: a workflow named `[bold red]lean[/]` read `red]lean[/]` once `f` left
    it alone in its column (its first word dropped, unmarked); it reads from its start."""
    demo = Path(DEMO).read_text(encoding="utf-8")
    path = tmp_path / "markup.csv"
    path.write_text(demo.replace("\nlean-loop,", '\n"[bold red]lean[/]",'), encoding="utf-8")
    app = LedgerApp([str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "[bold red]lean[/]" in screen_text(app)  # the summary: whole, as typed
        await press(pilot, "f")
        assert app.filter_input.value == 'workflow="[bold red]lean[/]"'
        text = screen_text(app)
        assert "│ [bold red]lean" in text and "│ red]lean[/]" not in text


async def test_per_task_totals_read_as_sentences(tmp_path: Path) -> None:
    """The walk: `p` on a group whose usage is not recorded read "not recorded tokens", and
    one never-passed attempt read "1 attempts"."""
    path = tmp_path / "unmetered.csv"
    path.write_text("workflow,task,tokens,passed\na,t1,,true\na,t2,,false\nb,t1,100,true\n")
    app = LedgerApp([str(path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await press(pilot, "p")
        text = words(app)
        assert "2 tasks · 2 attempts · 1 accepted · tokens not recorded" in text
        assert "never passed: 1 task · 1 attempt · tokens not recorded" in text


async def test_the_dialogs_fit_80_columns() -> None:
    """The walk: at 80x24 the warnings panel ran past the right edge (as the export dialog
    did); every dialog of the main screen's keys fits."""
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key, dialog in (("w", "#warnings-dialog"), ("e", "#export-dialog"), ("b", None)):
            await press(pilot, key)
            frame = app.screen.query_one(dialog) if dialog else app.screen.query_one(".dialog")
            assert frame.region.x >= 0 and frame.region.right <= 80, (key, frame.region)
            await press(pilot, "escape")
