"""The cursor keys the Line-API tables share (attempts, groups, an attempt's steps): a row up or
down, a screen up or down, the first and last row, and the row a click lands on.

Each table keeps its own `cursor_row` (a reactive whose watcher repaints and scrolls), its
bindings and their words; this class moves the cursor, keeps it on a row that exists
(`validate_cursor_row`), repaints a row (`_refresh_row`) and keeps the cursor's row in view
(`_scroll_to_cursor_row`, `_cursor_top` for a table that also scrolls sideways). `row_count`
is how many rows the table holds; `PAGE_SCROLLS` whether a page key also scrolls by a screen,
so the cursor keeps its place on the screen (the attempts and steps tables), or only moves the
cursor a screen's worth and lets the table follow it (the groups table, whose rows are few).
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.geometry import Region, clamp
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

    def validate_cursor_row(self, value: int) -> int:
        """Keep the cursor on a row that exists."""
        return clamp(value, 0, max(self.row_count - 1, 0))

    def _refresh_row(self, row: int) -> None:
        """Repaint one row if it is on screen."""
        line = row - self.scroll_offset.y + 1
        if 1 <= line <= self._body_height():
            self.refresh(Region(0, line, self.size.width, 1))

    def _cursor_top(self, body: int) -> int:
        """The scroll's top row that shows the cursor's row, moved the least distance from now
        (`body`: rows on screen)."""
        top = self.scroll_offset.y
        row = self.cursor_row
        if row < top:
            return row
        if row >= top + body:
            return row - body + 1
        return top

    def _scroll_to_cursor_row(self) -> bool:
        """Scroll the least distance that shows the cursor's row (False: not laid out yet)."""
        body = self._body_height()
        if body <= 0:
            return False
        top = self._cursor_top(body)
        if top != self.scroll_offset.y:
            self.scroll_to(y=top, animate=False, force=True)
        return True

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
