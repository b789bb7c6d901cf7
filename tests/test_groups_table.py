"""The summary's groups table draws whole in the frame that fills it: no refresh later to size
its columns, so no frame shows half-laid-out figures (`lean-loo  ≥ 49,49  30/`)."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult

from tui_ledger.tui.widgets.groups_table import GroupsTable

COLUMNS = [
    ("workflow", Text("workflow", style="bold"), "left"),
    ("per accepted", Text("per accepted", style="bold"), "right"),
    ("acc", Text("acc", style="bold"), "right"),
]


def rows(*figures: tuple[str, str, str]) -> list[list[Text]]:
    return [[Text(cell) for cell in row] for row in figures]


class OneTable(App[None]):
    def compose(self) -> ComposeResult:
        yield GroupsTable(id="groups")


async def test_a_fill_is_drawn_whole_before_any_idle_refresh() -> None:
    app = OneTable()
    async with app.run_test(size=(80, 20)) as pilot:
        table = app.query_one(GroupsTable)
        table.fill(COLUMNS, rows(("lean", "3,000", "1/3")), 0)
        await pilot.pause()
        # Wider figures arrive; the very next line drawn already holds them whole.
        table.fill(COLUMNS, rows(("lean-loop", "≥ 49,497", "30/90"), ("steady", "1,600", "3/3")), 1)
        lines = [table.render_line(y).text for y in range(3)]
        assert lines[0] == " workflow   per accepted    acc "[: len(lines[0])].ljust(len(lines[0]))
        assert "lean-loop" in lines[1] and "≥ 49,497" in lines[1] and "30/90" in lines[1]
        assert lines[2].split() == ["steady", "1,600", "3/3"]
        assert table.cursor_row == 1
        assert table.column_keys == ["workflow", "per accepted", "acc"]


async def test_numbers_line_up_on_the_right_and_the_cursor_moves_by_key() -> None:
    app = OneTable()
    async with app.run_test(size=(80, 20)) as pilot:
        table = app.query_one(GroupsTable)
        table.fill(COLUMNS, rows(("a", "3,000", "1/3"), ("b", "15", "3/3")), 0)
        table.focus()
        await pilot.pause()
        first, second = table.render_line(1).text, table.render_line(2).text
        assert first.index("3,000") + len("3,000") == second.index("15") + len("15")
        await pilot.press("down")
        assert table.cursor_row == 1
        await pilot.press("down")  # stays on the last row
        assert table.cursor_row == 1
        await pilot.press("home")
        assert table.cursor_row == 0
