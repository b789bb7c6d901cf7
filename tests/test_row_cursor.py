"""The Line-API tables (attempts, groups, an attempt's steps) share one cursor: moves, paging,
top and bottom, the cursor kept on a row that exists and its row kept in view are
`RowCursorView`'s, said once; each table keeps only what is its own."""

from __future__ import annotations

import pytest

from tui_ledger.tui.widgets.attempts_table import AttemptsTable
from tui_ledger.tui.widgets.groups_table import GroupsTable
from tui_ledger.tui.widgets.row_cursor import RowCursorView
from tui_ledger.tui.widgets.steps_table import StepsTable

SHARED = (
    "action_cursor_up",
    "action_cursor_down",
    "action_page_up",
    "action_page_down",
    "action_scroll_home",
    "action_scroll_end",
    "validate_cursor_row",
    "_refresh_row",
    "_cursor_top",
    "_scroll_to_cursor_row",
)


@pytest.mark.parametrize("table", [AttemptsTable, GroupsTable, StepsTable])
def test_each_table_takes_the_cursor_from_the_one_row_cursor(table: type[RowCursorView]) -> None:
    assert issubclass(table, RowCursorView)
    own = [name for name in SHARED if name in vars(table)]
    assert own == [], f"{table.__name__} defines the shared cursor's {own} again"
