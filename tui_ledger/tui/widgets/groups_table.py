"""The summary's per-group table, drawn with the Line API like the attempts table.

A `DataTable` measures its columns when the app is next idle, a refresh after it is filled, so
every recompute showed one frame with the old widths (`lean-loo  ≥ 49,49  30/`) before the right
one. This table takes its headings and cells already fitted (`summary_text.fit_columns`),
measures them in `fill`, and draws every line from that: the frame that shows new figures
shows them whole. It holds at most a few hundred groups (`MAX_TABLE_GROUPS`), so each line is
built when drawn and kept until the next fill.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from tui_ledger.tui.widgets.row_cursor import RowCursorView

__all__ = ["GroupsTable"]

CELL_PADDING = 1
"""Blank cells either side of every value, as in the attempts table."""

Justify = Literal["left", "right"]


class GroupsTable(RowCursorView, can_focus=True, inherit_bindings=False):
    """Per-group rows under a fixed header, with a row cursor; at most `max-height` lines."""

    ALLOW_SELECT = False

    PAGE_SCROLLS = False  # a page key moves the cursor a screen; the table follows it
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "scroll_home", "First group", show=False),
        Binding("end", "scroll_end", "Last group", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "groups-table--header",
        "groups-table--cursor",
    }

    DEFAULT_CSS = """
    GroupsTable {
        height: auto;
        max-height: 18;
        background: $background;
        color: $foreground;

        & > .groups-table--header {
            background: $background;
            color: $text-muted;
            text-style: bold;
        }
        & > .groups-table--cursor {
            background: $panel;
        }
        &:focus > .groups-table--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """

    cursor_row: reactive[int] = reactive(0, repaint=False, init=False)
    """The row (group) under the cursor."""

    class CursorMoved(Message):
        """The cursor is on another row (moved by a key, a click, or the app)."""

        def __init__(self, table: GroupsTable, row: int) -> None:
            self.table = table
            self.row = row
            """Index of the row under the cursor."""
            super().__init__()

        @property
        def control(self) -> GroupsTable:
            """The table that posted the message."""
            return self.table

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._keys: list[str] = []
        self._headings: list[Text] = []
        self._justify: list[Justify] = []
        self._rows: list[list[Text]] = []
        self._widths: list[int] = []
        self._lines: dict[tuple[int, bool, bool], Strip] = {}

    # ------------------------------------------------------------------ data

    @property
    def row_count(self) -> int:
        """Rows (groups) in the table."""
        return len(self._rows)

    @property
    def column_keys(self) -> list[str]:
        """Each column's full heading, in order (the shown heading may be shorter)."""
        return list(self._keys)

    def row_cells(self, row: int) -> list[Text]:
        """The cells of one row, as drawn."""
        return list(self._rows[row])

    def fill(
        self,
        columns: Sequence[tuple[str, Text, Justify]],
        rows: Sequence[Sequence[Text]],
        cursor_row: int,
    ) -> None:
        """Show these columns (key, heading, justification) and rows, the cursor on a row.

        Widths and the scrollable size are set here, so the next frame draws the table whole.
        """
        self._keys = [key for key, _, _ in columns]
        self._headings = [heading for _, heading, _ in columns]
        self._justify = [justify for _, _, justify in columns]
        self._rows = [list(row) for row in rows]
        self._widths = [
            max([heading.cell_len, *(row[index].cell_len for row in self._rows)])
            for index, heading in enumerate(self._headings)
        ]
        self._lines.clear()
        width = sum(self._widths) + 2 * CELL_PADDING * len(self._widths)
        self.virtual_size = Size(width, len(self._rows) + 1)
        self.set_reactive(GroupsTable.cursor_row, self.validate_cursor_row(cursor_row))
        self._scroll_to_cursor_row()
        self.refresh()

    # ------------------------------------------------------------------ drawing

    def notify_style_update(self) -> None:
        """The theme or CSS changed: styles baked into kept lines are stale."""
        super().notify_style_update()
        self._lines.clear()

    def _body_height(self) -> int:
        """Rows visible under the header, once the table has the height of its rows: right
        after a fill, before the layout catches up (`height: auto`, at most `max-height`)."""
        styles = self.styles
        if styles.height is not None and styles.height.is_auto:
            max_height = styles.max_height
            limit = max_height.cells if max_height is not None else None
            lines = len(self._rows) + 1 if limit is None else min(len(self._rows) + 1, limit)
            return max(lines - 1, 0)
        return max(self.scrollable_content_region.height - 1, 0)

    def render_line(self, y: int) -> Strip:
        """Line `y`: the header at 0, then the rows from the scroll offset."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            row = -1
        else:
            row = scroll_y + y - 1
            if row >= len(self._rows):
                return Strip.blank(width, base)
        is_cursor = row == self.cursor_row and row >= 0
        key = (row, is_cursor, self.has_focus)
        strip = self._lines.get(key)
        if strip is None:
            strip = self._lines[key] = self._line(row, is_cursor, base)
        fill = base + self._background(row, is_cursor)
        return strip.crop_extend(scroll_x, scroll_x + width, fill)

    def _background(self, row: int, is_cursor: bool) -> Style:
        """The component style a line sits on: the header's, the cursor's, or none."""
        if row < 0:
            return self.get_component_rich_style("groups-table--header")
        if is_cursor:
            return self.get_component_rich_style("groups-table--cursor")
        return Style()

    def _line(self, row: int, is_cursor: bool, base: Style) -> Strip:
        """One whole line (uncropped): the padded cells of a row, or the headings."""
        cells = self._headings if row < 0 else self._rows[row]
        line = Text(no_wrap=True, end="")
        pad = " " * CELL_PADDING
        for cell, width, justify in zip(cells, self._widths, self._justify, strict=True):
            gap = " " * (width - cell.cell_len)
            line.append(pad)
            if justify == "right":
                line.append(gap)
                line.append_text(cell)
            else:
                line.append_text(cell)
                line.append(gap)
            line.append(pad)
        segments = list(line.render(self.app.console))
        style = base + self._background(row, is_cursor)
        return Strip(Segment.apply_style(segments, style)).simplify()

    def on_focus(self) -> None:
        """The cursor row changes colour with focus."""
        self._refresh_row(self.cursor_row)

    def on_blur(self) -> None:
        """The cursor row changes colour with focus."""
        self._refresh_row(self.cursor_row)

    # ------------------------------------------------------------------ cursor

    def watch_cursor_row(self, old_row: int, new_row: int) -> None:
        """Repaint the two rows, follow the cursor, tell the pane."""
        self._refresh_row(old_row)
        self._refresh_row(new_row)
        self._scroll_to_cursor_row()
        self.post_message(self.CursorMoved(self, new_row))

    def move_cursor(self, row: int) -> None:
        """Put the cursor on a row (clamped to the table)."""
        self.cursor_row = row

    def on_click(self, event: events.Click) -> None:
        """A click on a row puts the cursor (and so the focus block) on its group."""
        row = self.clicked_row(event)
        if row is not None:
            self.cursor_row = row
