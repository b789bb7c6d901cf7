"""The attempts table: the article's six rows, the cursor, paging, a million rows, hostile text."""

from __future__ import annotations

import polars as pl
import pytest
from textual.app import App, ComposeResult

from tui_ledger.schema import OUTCOME_DTYPE
from tui_ledger.tui.widgets.attempts_columns import fit_cell, format_float
from tui_ledger.tui.widgets.attempts_table import AttemptsTable

HOSTILE = [
    "[bold]lean[/bold]",
    "[/]",
    "a[b]c",
    "\x1b[31mred",
    "\x1b]52;c;aGk=\x07",
    "bidi\u202eevil",
]


def article_rows() -> pl.DataFrame:
    """The article's six attempts: lean is cheap per attempt, steady per accepted result."""
    return pl.DataFrame(
        {
            "workflow": ["lean", "lean", "lean", "steady", "steady", "steady"],
            "task": ["t1", "t2", "t3", "t1", "t2", "t3"],
            "outcome": pl.Series(
                ["passed", "failed", "failed", "passed", "passed", "passed"], dtype=OUTCOME_DTYPE
            ),
            "tokens": [1000, 1000, 1000, 1600, 1600, 1600],
            "passed": [True, False, False, True, True, True],
            "source": ["runs.csv"] * 6,
            "line": [2, 3, 4, 5, 6, 7],
        }
    )


def numbered_rows(rows: int) -> pl.DataFrame:
    """`rows` attempts whose line number tells which row they are."""
    return pl.DataFrame(
        {
            "workflow": pl.Series(["lean", "steady"] * (rows // 2) + ["lean"] * (rows % 2)),
            "tokens": pl.int_range(rows, dtype=pl.Int64, eager=True) * 10,
            "source": pl.repeat("runs.csv", rows, eager=True),
            "line": pl.int_range(2, rows + 2, dtype=pl.Int64, eager=True),
        }
    )


class Host(App[None]):
    """A screen with only the table, recording what it posts."""

    def __init__(self, frame: pl.DataFrame | None = None) -> None:
        super().__init__()
        self.frame = frame
        self.moves: list[tuple[int, str]] = []
        self.activated: list[int] = []

    def compose(self) -> ComposeResult:
        yield AttemptsTable()

    def on_mount(self) -> None:
        table = self.query_one(AttemptsTable)
        if self.frame is not None:
            table.set_frame(self.frame)
        table.focus()

    def on_attempts_table_cursor_moved(self, message: AttemptsTable.CursorMoved) -> None:
        self.moves.append((message.row, message.column))

    def on_attempts_table_row_activated(self, message: AttemptsTable.RowActivated) -> None:
        self.activated.append(message.row)


def screen_lines(table: AttemptsTable) -> list[str]:
    """The table's visible lines as plain text."""
    return [table.render_line(y).text for y in range(table.size.height)]


# --- what the six rows look like ----------------------------------------------------------------


async def test_six_rows_render_with_symbols_separators_and_booleans() -> None:
    app = Host(article_rows())
    async with app.run_test(size=(100, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(AttemptsTable)
        lines = screen_lines(table)
        header = ["workflow", "task", "outcome", "tokens", "passed", "source", "line"]
        assert lines[0].split() == header
        assert lines[1].split() == ["lean", "t1", "✔", "passed", "1,000", "true", "runs.csv", "2"]
        assert lines[2].split() == ["lean", "t2", "✘", "failed", "1,000", "false", "runs.csv", "3"]
        assert lines[6].split()[:5] == ["steady", "t3", "✔", "passed", "1,600"]
        assert lines[7].strip() == ""
        # Numbers are right-aligned: the tokens end in the same column on every row.
        ends = {line.index("1,") + len("1,000") for line in lines[1:7]}
        assert len(ends) == 1
        assert "steady" in app.export_screenshot()


async def test_outcome_colour_nulls_floats_and_struck_rows() -> None:
    frame = pl.DataFrame(
        {
            "outcome": pl.Series(
                ["passed", "failed", "timeout", "error", "ungraded"], dtype=OUTCOME_DTYPE
            ),
            "tokens": [1_234_567, None, 3, 4, 5],
            "score": [0.01234, 123.456, None, 1.5, 12345.6],
        }
    )
    app = Host()
    async with app.run_test(size=(80, 10)) as pilot:
        table = app.query_one(AttemptsTable)
        table.set_frame(frame, struck=pl.Series([False, True, False, False, False]))
        await pilot.pause()
        lines = screen_lines(table)
        assert lines[1].split() == ["✔", "passed", "1,234,567", "0.01234"]
        assert lines[2].split() == ["✘", "failed", "—", "123.5"]
        assert lines[3].split() == ["⧗", "timeout", "3", "—"]
        assert lines[4].split() == ["⚠", "error", "4", "1.5"]
        assert lines[5].split() == ["?", "ungraded", "5", "12,346"]

        failed_colour = table.get_component_rich_style("attempts-table--failed").color
        timeout = next(s for s in table.render_line(3) if "timeout" in s.text)
        assert timeout.style is not None
        assert (
            timeout.style.color == table.get_component_rich_style("attempts-table--timeout").color
        )
        # The struck row is struck through, and keeps its outcome colour.
        struck = list(table.render_line(2))
        assert all(seg.style is not None and seg.style.strike for seg in struck if seg.text.strip())
        failed = next(s for s in struck if "failed" in s.text)
        assert failed.style is not None and failed.style.color == failed_colour
        assert not any(seg.style is not None and seg.style.strike for seg in table.render_line(3))


async def test_sorted_column_shows_its_direction() -> None:
    app = Host(article_rows())
    async with app.run_test(size=(100, 12)) as pilot:
        table = app.query_one(AttemptsTable)
        table.sort_column = "tokens"
        await pilot.pause()
        assert "tokens ▲" in table.render_line(0).text
        table.sort_descending = True
        await pilot.pause()
        assert "tokens ▼" in table.render_line(0).text
        table.sort_column = None
        await pilot.pause()
        assert "▲" not in table.render_line(0).text and "▼" not in table.render_line(0).text


async def test_long_values_end_in_an_ellipsis() -> None:
    frame = pl.DataFrame({"task": ["x" * 500, "short"], "tokens": [1, 2]})
    app = Host(frame)
    async with app.run_test(size=(100, 8)) as pilot:
        await pilot.pause()
        table = app.query_one(AttemptsTable)
        first = table.render_line(1).text
        assert "x" * 39 + "…" in first
        assert "x" * 40 not in first


# --- the cursor ---------------------------------------------------------------------------------


async def test_cursor_moves_and_clamps_at_the_edges() -> None:
    app = Host(article_rows())
    async with app.run_test(size=(100, 12)) as pilot:
        table = app.query_one(AttemptsTable)
        await pilot.pause()
        await pilot.press("up", "left")
        assert (table.cursor_row, table.cursor_column) == (0, 0)
        await pilot.press("down", "down", "right", "right")
        assert (table.cursor_row, table.cursor_column) == (2, 2)
        assert table.current_value() == ("outcome", "failed")
        row = table.current_row()
        assert row is not None and row["task"] == "t3" and row["line"] == 4
        for _ in range(10):
            await pilot.press("down", "right")
        assert (table.cursor_row, table.cursor_column) == (5, 6)
        assert table.current_value() == ("line", 7)
        await pilot.pause()
        assert app.moves[-1] == (5, "line")
        assert (2, "outcome") in app.moves
        await pilot.press("enter")
        await pilot.pause()
        assert app.activated == [5]


async def test_cursor_cell_and_row_are_highlighted() -> None:
    app = Host(article_rows())
    async with app.run_test(size=(100, 12)) as pilot:
        table = app.query_one(AttemptsTable)
        await pilot.press("down", "right")
        await pilot.pause()
        cursor_style = table.get_component_rich_style("attempts-table--cursor")
        cell = next(s for s in table.render_line(2) if s.text.strip() == "t2")
        assert cell.style is not None and cell.style.bgcolor == cursor_style.bgcolor
        row_bg = table.get_component_rich_style("attempts-table--cursor-row").bgcolor
        workflow = next(s for s in table.render_line(2) if s.text.strip() == "lean")
        assert workflow.style is not None and workflow.style.bgcolor == row_bg


async def test_click_selects_a_cell() -> None:
    app = Host(article_rows())
    async with app.run_test(size=(100, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(AttemptsTable)
        task_x = table.render_line(0).text.index("task")
        await pilot.click(AttemptsTable, offset=(task_x, 4))
        assert (table.cursor_row, table.cursor_column) == (3, 1)
        assert table.current_value() == ("task", "t1")


async def test_paging_home_and_end() -> None:
    app = Host(numbered_rows(1_000))
    async with app.run_test(size=(60, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(AttemptsTable)
        page = table.size.height - 1  # rows under the header
        await pilot.press("pagedown")
        assert table.cursor_row == page
        assert table.scroll_offset.y == page  # the cursor keeps its place on screen
        await pilot.press("pagedown", "down", "pageup")
        assert table.cursor_row == page + 1
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == 999
        lines = screen_lines(table)
        assert lines[-1].split()[-1] == "1,001"  # the last attempt's line, on the last line
        assert lines[0].split()[0] == "workflow"  # the header stays put
        await pilot.press("pagedown")
        assert table.cursor_row == 999
        await pilot.press("home")
        await pilot.pause()
        assert (table.cursor_row, table.scroll_offset.y) == (0, 0)
        assert screen_lines(table)[1].split()[-1] == "2"
        await pilot.press("pageup")
        assert table.cursor_row == 0


async def test_horizontal_scroll_follows_the_cursor_column() -> None:
    frame = pl.DataFrame({f"column_{i}": [i] for i in range(30)})
    app = Host(frame)
    async with app.run_test(size=(40, 6)) as pilot:
        await pilot.pause()
        table = app.query_one(AttemptsTable)
        for _ in range(29):
            await pilot.press("right")
        await pilot.pause()
        assert table.scroll_offset.x > 0
        assert table.render_line(0).text.rstrip().endswith("column_29")
        assert table.render_line(1).text.rstrip().endswith("29")
        await pilot.press("home")
        assert table.scroll_offset.x > 0  # home is the first row, not the first column
        for _ in range(29):
            await pilot.press("left")
        await pilot.pause()
        assert table.scroll_offset.x == 0
        assert table.render_line(0).text.split()[0] == "column_0"


# --- replacing the frame ------------------------------------------------------------------------


async def test_set_frame_keeps_the_cursor_on_the_same_attempt() -> None:
    frame = article_rows()
    app = Host(frame)
    async with app.run_test(size=(100, 12)) as pilot:
        table = app.query_one(AttemptsTable)
        await pilot.press("down", "down", "down", "right")  # steady t1, column task
        assert table.current_row() is not None
        assert table.current_row()["line"] == 5  # type: ignore[index]

        # Drop view: the failed rows leave; the cursor stays on steady t1.
        table.set_frame(frame.filter(pl.col("outcome") != "failed"))
        await pilot.pause()
        assert table.cursor_row == 1
        assert table.current_value() == ("task", "t1")
        assert table.current_row()["line"] == 5  # type: ignore[index]
        assert app.moves[-1] == (1, "task")

        # Sorted differently and columns reordered: same attempt, same column.
        newest_first = frame.sort("line", descending=True)
        table.set_frame(newest_first.select("task", "workflow", "source", "line"))
        await pilot.pause()
        assert table.current_row()["line"] == 5  # type: ignore[index]
        assert table.cursor_row == 2
        assert table.current_value() == ("task", "t1")

        # The attempt is gone: the index is clamped.
        table.set_frame(frame.filter(pl.col("line") != 5).head(2))
        assert table.cursor_row == 1

        # keep_cursor=False starts over.
        table.set_frame(frame, keep_cursor=False)
        assert (table.cursor_row, table.cursor_column) == (0, 0)


async def test_set_frame_without_ids_clamps_the_index() -> None:
    frame = article_rows().drop("source", "line")
    app = Host(frame)
    async with app.run_test(size=(100, 12)) as pilot:
        table = app.query_one(AttemptsTable)
        await pilot.press("end", "right", "right")
        table.set_frame(frame.head(3))
        assert (table.cursor_row, table.cursor_column) == (2, 2)
        table.set_frame(frame.select("workflow"))
        assert table.cursor_column == 0
        table.set_frame(frame.clear())
        await pilot.pause()
        assert table.current_row() is None and table.current_value() is None
        assert screen_lines(table)[1].strip() == ""
        await pilot.press("down", "pagedown", "end", "enter")
        assert app.activated == []


async def test_set_frame_keeps_the_cursor_on_its_screen_line() -> None:
    frame = numbered_rows(1_000)
    app = Host(frame)
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(AttemptsTable)
        await pilot.press("pagedown", "pagedown", "down", "down")
        screen_line = table.cursor_row - table.scroll_offset.y
        line = table.current_row()["line"]  # type: ignore[index]
        table.set_frame(frame.filter(pl.col("line") % 3 != 0))
        await pilot.pause()
        assert table.current_row()["line"] == line  # type: ignore[index]
        assert table.cursor_row - table.scroll_offset.y == screen_line


def test_struck_must_match_the_frame() -> None:
    table = AttemptsTable()
    with pytest.raises(ValueError, match="struck"):
        table.set_frame(article_rows(), struck=pl.Series([True]))


# --- scale --------------------------------------------------------------------------------------


async def test_a_million_rows_render_their_first_screen_and_last_row() -> None:
    frame = numbered_rows(1_000_000)
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.query_one(AttemptsTable)
        table.set_frame(frame)
        await pilot.pause()
        lines = screen_lines(table)
        assert lines[1].split() == ["lean", "0", "runs.csv", "2"]
        assert lines[-1].split()[-1] == f"{table.size.height:,}"
        await pilot.press("pagedown", "end")
        await pilot.pause()
        assert table.render_line(table.size.height - 1).text.split() == [
            "steady",
            "9,999,990",
            "runs.csv",
            "1,000,001",
        ]
        assert "1,000,001" in app.export_screenshot()


# --- hostile text -------------------------------------------------------------------------------


async def test_hostile_strings_show_literally_and_cannot_reach_the_terminal() -> None:
    frame = pl.DataFrame(
        {
            "workflow": HOSTILE,
            "\x1b[2Jtask[/]": HOSTILE[::-1],
            "tokens": list(range(len(HOSTILE))),
        }
    )
    app = Host(frame)
    async with app.run_test(size=(120, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(AttemptsTable)
        lines = screen_lines(table)
        text = "\n".join(lines)
        assert "[bold]lean[/bold]" in lines[1]
        assert "[/]" in lines[2]
        assert "a[b]c" in lines[3]
        assert "\\x1b[31mred" in lines[4]
        assert "\\x1b]52;c;aGk=\\x07" in lines[5]
        assert "bidi<U+202E>evil" in lines[6]
        assert "\\x1b[2Jtask[/]" in lines[0]
        for unsafe in ("\x1b", "\x07", "\u202e"):
            assert unsafe not in text
        for y in range(table.size.height):
            for segment in table.render_line(y):
                assert segment.text.isprintable()
        # The cursor on the hostile cells, the detail values raw, and a full paint: no crash.
        await pilot.press("down", "right")
        assert table.current_value() == ("\x1b[2Jtask[/]", HOSTILE[-2])
        screenshot = app.export_screenshot()
        assert "a[b]c" in screenshot
        assert "\x1b" not in screenshot


# --- formatting helpers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.01234, "0.01234"),
        (123.456, "123.5"),
        (1.5, "1.5"),
        (2.0, "2"),
        (12345.6, "12,346"),
        (-0.5, "-0.5"),
        (0.0, "0"),
        (1e20, "1.000e+20"),
        (float("nan"), "NaN"),
        (float("-inf"), "-∞"),
    ],
)
def test_floats_read_sensibly(value: float, text: str) -> None:
    assert format_float(value) == text


def test_fit_cell_pads_aligns_and_cuts_wide_characters() -> None:
    assert fit_cell("ab", 4) == "ab  "
    assert fit_cell("ab", 4, right=True) == "  ab"
    assert fit_cell("abcdef", 4) == "abc…"
    assert fit_cell("日本語", 4) == "日 …"  # a wide character never straddles the cut


def test_cost_columns_read_as_dollars() -> None:
    from tui_ledger.accounting.prices import COST_COLUMN, TABLE_COST_COLUMN
    from tui_ledger.text.numbers import format_money
    from tui_ledger.tui.widgets.attempts_columns import MONEY_COLUMNS, column_kind, format_cells

    assert {COST_COLUMN, TABLE_COST_COLUMN} == MONEY_COLUMNS
    assert column_kind("cost", pl.Float64()) == "money"
    assert column_kind("duration_s", pl.Float64()) == "float"
    cells = format_cells("money", [0.01234, 12.5, None])
    assert [text for text, _ in cells] == [format_money(0.01234), "$12.50", "—"]
    assert cells[0][0].startswith("$0.01")
