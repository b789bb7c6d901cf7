"""The cursor keys the Line-API tables share (attempts, groups, an attempt's steps): a row up or
down, a screen up or down, the first and last row, and the row a click lands on.

Each table keeps its own `cursor_row` (a reactive whose validator clamps it to the rows it
holds, and whose watcher repaints and scrolls), its bindings and their words; this class only
moves the cursor. `row_count` is how many rows the table holds; `PAGE_SCROLLS` whether a page
key also scrolls by a screen, so the cursor keeps its place on the screen (the attempts and
steps tables), or only moves the cursor a screen's worth and lets the table follow it (the
groups table, whose rows are few).
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.scroll_view import ScrollView


class RowCursorView(ScrollView):
    """A ScrollView of rows under a header line, with a row cursor moved by keys and clicks."""

    PAGE_SCROLLS: ClassVar[bool] = True
    cursor_row: int

    @property
    def row_count(self) -> int:
        """How many rows the table holds."""
        raise NotImplementedError

    def _body_height(self) -> int:
        """Rows of the table on screen (below its header line)."""
        raise NotImplementedError

    def action_cursor_up(self) -> None:
        """One row up."""
        self.cursor_row -= 1

    def action_cursor_down(self) -> None:
        """One row down."""
        self.cursor_row += 1

    def action_page_up(self) -> None:
        """A screen up."""
        self._page(-1)

    def action_page_down(self) -> None:
        """A screen down."""
        self._page(1)

    def _page(self, sign: int) -> None:
        page = max(self._body_height(), 1)
        if self.PAGE_SCROLLS:
            self.scroll_to(y=self.scroll_offset.y + sign * page, animate=False, force=True)
        self.cursor_row += sign * page

    def action_scroll_home(self) -> None:
        """The first row."""
        self.cursor_row = 0

    def action_scroll_end(self) -> None:
        """The last row."""
        self.cursor_row = self.row_count - 1

    def clicked_row(self, event: events.Click) -> int | None:
        """Focus the table; the row a click landed on (None: the header, or below the rows)."""
        offset = event.get_content_offset(self)
        self.focus()
        if offset is None or offset.y == 0:
            return None
        row = self.scroll_offset.y + offset.y - 1
        return row if 0 <= row < self.row_count else None
