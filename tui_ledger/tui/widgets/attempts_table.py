"""The attempts table: a keyboard-driven view over a polars frame that renders only what is visible.

Built on Textual's Line API (`ScrollView` + `render_line`), like Toolong's log view: the widget
asks for the rows on screen (`Rows.slice`: a gather of their positions in the ledger's one frame,
which a filter or a sort never copies), formats those, and nothing else. A table of ten million
attempts costs what a table of fifty costs, and `set_frame` (a filter, a sort, the keep/drop
toggle) swaps the rows in one step without losing the attempt under the cursor.

Every string that came from a file is drawn as literal text: cells become `Segment`s, never
markup, and `textsafe.safe_cell` makes control bytes visible before they reach the terminal.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import ClassVar

import polars as pl
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size, clamp
from textual.message import Message
from textual.reactive import reactive, var
from textual.strip import Strip

from tui_ledger.accounting.rows import Rows
from tui_ledger.schema import LINE_COLUMN, SOURCE_COLUMN
from tui_ledger.tui.widgets.attempts_columns import (
    CELL_PADDING,
    SORT_ASCENDING,
    SORT_DESCENDING,
    Column,
    Window,
    column_extremes,
    fit_cell,
    fit_columns,
    format_cells,
    measure_columns,
)
from tui_ledger.tui.widgets.attempts_look import (
    ATTEMPTS_TABLE_COMPONENTS,
    ATTEMPTS_TABLE_CSS,
    FLAG_MARK,
    only_background,
    only_foreground,
)
from tui_ledger.tui.widgets.row_cursor import RowCursorView

__all__ = ["AttemptsTable"]

_LINE_CACHE_LIMIT = 4096


class AttemptsTable(RowCursorView, can_focus=True, inherit_bindings=False):
    """A table of attempts over a polars DataFrame, drawing only the visible lines.

    The app owns the data flow: it filters, sorts and chooses the view in polars, then calls
    `set_frame`. The table keeps a cursor (a highlighted row and cell), follows it with the
    scroll position, and posts `CursorMoved` and `RowActivated`.
    """

    ALLOW_SELECT = False

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("left", "cursor_left", "Left", show=False),
        Binding("right", "cursor_right", "Right", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "scroll_home", "First row", show=False),
        Binding("end", "scroll_end", "Last row", show=False),
        Binding("enter", "select_cursor", "Details", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = ATTEMPTS_TABLE_COMPONENTS
    DEFAULT_CSS = ATTEMPTS_TABLE_CSS

    cursor_row: reactive[int] = reactive(0, repaint=False, init=False)
    """Index of the row under the cursor (0-based, in the current frame)."""
    cursor_column: reactive[int] = reactive(0, repaint=False, init=False)
    """Index of the column under the cursor."""
    sort_column: reactive[str | None] = reactive(None)
    """The column the app sorted by; its header shows ▲ or ▼."""
    sort_descending: reactive[bool] = reactive(False)
    """Whether `sort_column` is sorted descending."""
    view: var[str] = var("keep")
    """The ledger's view ("keep" or "drop"), bound to the app's: the frame's colour follows it
    (`-drop`); the rows are the app's to give (`set_frame`)."""

    class CursorMoved(Message):
        """The cursor moved (or the attempt under it changed after `set_frame`)."""

        def __init__(self, table: AttemptsTable, row: int, column: str) -> None:
            self.table = table
            self.row = row
            """Index of the row under the cursor."""
            self.column = column
            """Name of the column under the cursor (`""` when the frame has no columns)."""
            super().__init__()

        @property
        def control(self) -> AttemptsTable:
            """The table that posted the message."""
            return self.table

    class RowActivated(Message):
        """Enter (or a double click) on a row: the app shows the attempt's every field."""

        def __init__(self, table: AttemptsTable, row: int) -> None:
            self.table = table
            self.row = row
            """Index of the activated row."""
            super().__init__()

        @property
        def control(self) -> AttemptsTable:
            """The table that posted the message."""
            return self.table

    def __init__(
        self,
        frame: pl.DataFrame | Rows | None = None,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        """Create the table, optionally with a first frame."""
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self._rows = Rows(pl.DataFrame())
        self._bounds: tuple[pl.DataFrame, dict[str, list[object]]] | None = None
        self._struck: pl.Series | None = None
        self._flagged: frozenset[int] = frozenset()  # rows (frame positions) the grader flags
        self._columns: list[Column] = []  # as laid out in the pane (`fit_columns`)
        self._measured: list[Column] = []  # in the frame's order, at their natural widths
        self._fitted_to = 0  # the width `_columns` were laid out for
        self._column_offsets: list[int] = []
        self._window: Window | None = None
        self._line_cache: dict[tuple[object, ...], Strip] = {}
        self._generation = 0
        self._palette: dict[str | None, Style] | None = None
        self._quiet = False  # set while set_frame moves the cursor: it posts one message itself
        # The attempt the user last put the cursor on, and its line on screen then: a frame
        # without it (a view that hides it, a filter) moves the cursor to a neighbour, and the
        # next frame that has it again puts the cursor and the scroll back (`t` `t`).
        self._anchor: tuple[tuple[object, object], int] | None = None
        if frame is not None:
            self.set_frame(frame, keep_cursor=False)

    # ------------------------------------------------------------------ data

    @property
    def rows(self) -> Rows:
        """The rows on screen, as positions over the ledger's frame (replace with `set_frame`)."""
        return self._rows

    @property
    def frame(self) -> pl.DataFrame:
        """The rows on screen as a frame of their own: a copy of them, gathered (for a test or an
        export; the table itself gathers only what it draws)."""
        return self._rows.frame()

    @property
    def row_count(self) -> int:
        """Number of rows in the frame."""
        return self._rows.height

    @property
    def column_names(self) -> list[str]:
        """The columns in display order."""
        return [column.name for column in self._columns]

    def set_frame(
        self,
        frame: pl.DataFrame | Rows,
        *,
        struck: pl.Series | None = None,
        keep_cursor: bool = True,
    ) -> None:
        """Show `frame`, keeping the cursor on the same attempt and column where possible.

        The attempt is matched on (`source`, `line`) when both frames have them, otherwise the row
        index is clamped; the column is matched by name. The cursor keeps its place on screen, so
        a filter or the keep/drop toggle changes the rows around it without a jump. Costs one
        vectorised pass over the frame at most (column widths from a sample, the cursor lookup);
        rows are formatted only when drawn. Posts one `CursorMoved`.

        Args:
            frame: The attempts to show, already filtered and sorted: a frame, or positions
                over one (`Rows`), of which only the rows drawn are gathered.
            struck: Optional Boolean series, one per row: rows to draw struck through and dimmed.
            keep_cursor: False puts the cursor on the first row and column.
        """
        if isinstance(frame, pl.DataFrame):
            frame = Rows(frame)
        if struck is not None:
            if struck.len() != frame.height:
                raise ValueError(
                    f"struck has {struck.len():,} values but the frame has {frame.height:,} rows"
                )
            struck = struck.cast(pl.Boolean).fill_null(False)

        old_frame = self._rows
        old_row = self.cursor_row
        old_column = self._columns[self.cursor_column].name if self._columns else None
        screen_line = old_row - self.scroll_offset.y
        old_key = self._attempt_key(old_frame, old_row) if keep_cursor else None

        self._rows = frame
        self._struck = struck
        self._measured = measure_columns(frame, self._measured, self._extremes(frame))
        self._fitted_to = self._fit_width()
        self._columns = fit_columns(self._measured, self._fitted_to)
        self._column_offsets = [column.offset for column in self._columns]
        self._invalidate()

        if keep_cursor:
            if self._anchor is None and old_key is not None:
                self._anchor = (old_key, screen_line)
            new_row = None
            if self._anchor is not None:
                new_row = self._find_attempt(frame, self._anchor[0])
                if new_row is not None:
                    screen_line = self._anchor[1]
            if new_row is None and old_key is not None:
                new_row = self._find_attempt(frame, old_key)
            if new_row is None:
                new_row = old_row
            names = self.column_names
            new_column = names.index(old_column) if old_column in names else self.cursor_column
        else:
            new_row, new_column, screen_line = 0, 0, 0
            self._anchor = None

        width = self._columns[-1].offset + self._columns[-1].span if self._columns else 0
        self.virtual_size = Size(width, frame.height + 1)
        self._quiet = True
        try:
            self.cursor_row = new_row
            self.cursor_column = new_column
        finally:
            self._quiet = False
        # Keep the cursor on the same screen line, so the rows change around it.
        self.scroll_to(y=max(0, self.cursor_row - max(screen_line, 0)), animate=False, force=True)
        self._scroll_cursor_into_view()
        self.refresh()
        self._post_cursor_moved()

    def set_flagged(self, positions: frozenset[int]) -> None:
        """Mark the attempts at these positions of the ledger's frame (`FLAG_MARK` before the
        first cell: the grader's audit flags them)."""
        if positions != self._flagged:
            self._flagged = positions
            self._invalidate()
            self.refresh()

    def flagged_row(self, row: int) -> bool:
        """Whether row `row` (as shown) carries the grader's mark."""
        return bool(self._flagged) and self._rows.position(row) in self._flagged

    def current_value(self) -> tuple[str, object] | None:
        """The column name and raw value under the cursor, or None for an empty table."""
        if not self._columns or self.row_count == 0:
            return None
        name = self._columns[self.cursor_column].name
        return name, self._rows.value(name, self.cursor_row)

    def current_row(self) -> dict[str, object] | None:
        """Every field of the attempt under the cursor, raw, or None for an empty table."""
        if self.row_count == 0:
            return None
        return self._rows.row(self.cursor_row)

    @staticmethod
    def _attempt_key(frame: Rows, row: int) -> tuple[object, object] | None:
        """The stable identity of an attempt: where it came from (file, line)."""
        if row >= frame.height or not {SOURCE_COLUMN, LINE_COLUMN} <= set(frame.columns):
            return None
        return frame.value(SOURCE_COLUMN, row), frame.value(LINE_COLUMN, row)

    @staticmethod
    def _find_attempt(frame: Rows, key: tuple[object, object]) -> int | None:
        """The row of the attempt with this (source, line), if the frame still has it."""
        if not {SOURCE_COLUMN, LINE_COLUMN} <= set(frame.columns):
            return None
        source, line = key
        match = pl.col(SOURCE_COLUMN).eq_missing(source) & pl.col(LINE_COLUMN).eq_missing(line)
        try:
            return frame.find(match)
        except pl.exceptions.PolarsError:
            return None  # the id columns changed type: fall back to clamping the index

    def _extremes(self, frame: Rows) -> dict[str, list[object]]:
        """`column_extremes` of the frame the rows are over, kept while the rows shown are over
        the same one: a filter or a sort never gathers a column to measure it."""
        source = frame.source
        if self._bounds is None or self._bounds[0] is not source:
            self._bounds = (source, column_extremes(source))
        return self._bounds[1]

    def _fit_width(self) -> int:
        """Cells a line has on screen, a vertical scrollbar's aside (0: not laid out yet)."""
        width = self.size.width
        return max(0, width - self.styles.scrollbar_size_vertical) if width else 0

    def _refit(self) -> None:
        """Lay the columns out again for a new width (`fit_columns`).

        Checked on every repaint: a table filled before its first layout is not always sent
        a `Resize` once it has a size.
        """
        width = self._fit_width()
        if width == self._fitted_to or not self._measured:
            return
        self._fitted_to = width
        columns = fit_columns(self._measured, width)
        if columns == self._columns:
            return
        # The cursor keeps its place (its index), not its column: following a column that
        # moved past the essential ones would scroll them out of sight.
        self._columns = columns
        self._column_offsets = [column.offset for column in columns]
        self._invalidate()
        self.virtual_size = Size(columns[-1].offset + columns[-1].span, self.row_count + 1)
        self._scroll_cursor_into_view()
        self._post_cursor_moved()
        self.refresh()

    # ------------------------------------------------------------------ rendering

    def _invalidate(self) -> None:
        """Forget every formatted row and line (new data or new styles)."""
        self._generation += 1
        self._window = None
        self._line_cache.clear()

    def notify_style_update(self) -> None:
        """The theme or CSS changed: styles baked into cached lines are stale."""
        super().notify_style_update()
        self._line_cache.clear()

    def _body_height(self) -> int:
        """Rows visible under the header."""
        return max(self.scrollable_content_region.height - 1, 0)

    def _window_for(self, row: int) -> Window:
        """The formatted window holding `row`, slicing the frame afresh only when it is outside.

        The window spans a page either side of the viewport, so scrolling a line at a time or
        moving the cursor reuses it; a page jump formats three screens of rows.
        """
        window = self._window
        if window is not None and window.start <= row < window.stop:
            return window
        page = max(self._body_height(), 20)
        start = max(0, row - page)
        chunk = self._rows.slice(start, 3 * page)
        cells = [
            format_cells(column.kind, chunk.get_column(column.name).to_list(), column.natural)
            for column in self._columns
        ]
        struck = None
        if self._struck is not None:
            struck = self._struck.slice(start, 3 * page).to_list()
        self._window = window = Window(start, cells, struck)
        return window

    def render_lines(self, crop: Region) -> list[Strip]:
        """Render a frame's worth of lines, reading the styles once for all of them."""
        self._refit()
        self._palette = None
        return super().render_lines(crop)

    def _style(self, component: str | None = None) -> Style:
        """The widget's style (no component) or a component's full style, cached per frame.

        `rich_style` walks the ancestors on every call, so it is read once per repaint, not once
        per line.
        """
        palette = self._palette
        if palette is None:
            palette = self._palette = {}
        style = palette.get(component)
        if style is None:
            if component is None:
                style = self.rich_style
            else:
                style = self.get_component_rich_style(component, default=Style())
            palette[component] = style
        return style

    def render_line(self, y: int) -> Strip:
        """Line `y` of the widget: the header at 0, then the rows from the scroll offset."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        if y == 0:
            strip, fill = self._header_strip()
        else:
            row = scroll_y + y - 1
            if row >= self.row_count or not self._columns:
                return Strip.blank(width, self._style())
            strip, fill = self._row_strip(row)
        return strip.crop_extend(scroll_x, scroll_x + width, fill)

    def _header_strip(self) -> tuple[Strip, Style]:
        """The whole header line (uncropped) and the style that fills past its end."""
        key = (
            "header",
            self._generation,
            self.sort_column,
            self.sort_descending,
            self.cursor_column,
        )
        cached = self._line_cache.get(key)
        base = self._style() + only_background(self._style("attempts-table--header"))
        if cached is not None:
            return cached, base
        header = self._style("attempts-table--header")
        header_cursor = self._style("attempts-table--header-cursor")
        pad = " " * CELL_PADDING
        segments: list[Segment] = []
        for index, column in enumerate(self._columns):
            label = column.label
            if column.name == self.sort_column:
                arrow = SORT_DESCENDING if self.sort_descending else SORT_ASCENDING
                if cell_len(label) > column.width - 2:
                    label = fit_cell(label, column.width - 2)
                label = f"{label} {arrow}"  # the arrow hugs the name, whatever the alignment
            text = fit_cell(label, column.width, right=column.right)
            style = header_cursor if index == self.cursor_column else header
            segments.append(Segment(pad + text + pad, self._style() + style))
        strip = Strip(segments).simplify()
        self._cache_line(key, strip)
        return strip, base

    def _row_strip(self, row: int) -> tuple[Strip, Style]:
        """The whole line of one row (uncropped) and the style that fills past its end."""
        is_cursor_row = row == self.cursor_row
        cursor_column = self.cursor_column if is_cursor_row else -1
        key = ("row", self._generation, row, cursor_column, self.has_focus)
        background = self._row_background(row, is_cursor_row)
        cached = self._line_cache.get(key)
        if cached is not None:
            return cached, background

        window = self._window_for(row)
        index = row - window.start
        struck = window.struck is not None and window.struck[index]
        line_style = background
        if struck:
            line_style += only_foreground(self._style("attempts-table--struck"))
        cursor = self._style("attempts-table--cursor")
        pad = " " * CELL_PADDING
        segments: list[Segment] = []
        for column_index, column in enumerate(self._columns):
            text, style_name = window.cells[column_index][index]
            style = line_style
            if style_name is not None:
                kind_style = self._style(f"attempts-table--{style_name}")
                style += only_foreground(kind_style)
            if column_index == cursor_column:
                style += cursor
            if column.width < column.natural:
                if column.kind == "text":
                    text = window.cut(column_index, column.width, text)
                elif column.kind == "outcome" and style_name is not None:
                    text = text.split(" ", 1)[0]  # the symbol; the colour says it too
            text = fit_cell(text, column.width, right=column.right)
            if column_index == 0 and self.flagged_row(row):  # the mark takes the left pad
                mark = line_style + only_foreground(self._style("attempts-table--error"))
                segments.append(Segment(FLAG_MARK, mark))
                segments.append(Segment(pad[1:] + text + pad, style))
                continue
            segments.append(Segment(pad + text + pad, style))
        strip = Strip(segments).simplify()
        self._cache_line(key, strip)
        return strip, background

    def _row_background(self, row: int, is_cursor_row: bool) -> Style:
        """The widget's style with the row's background: cursor row, zebra stripe or plain."""
        if is_cursor_row:
            component = "attempts-table--cursor-row"
        elif row % 2:
            component = "attempts-table--odd-row"
        else:
            return self._style()
        return self._style() + only_background(self._style(component))

    def _cache_line(self, key: tuple[object, ...], strip: Strip) -> None:
        """Remember a rendered line, forgetting everything when the cache grows too large."""
        if len(self._line_cache) >= _LINE_CACHE_LIMIT:
            self._line_cache.clear()
        self._line_cache[key] = strip

    def _refresh_header(self) -> None:
        """Repaint the header line."""
        self.refresh(Region(0, 0, self.size.width, 1))

    # ------------------------------------------------------------------ cursor

    def validate_cursor_column(self, value: int) -> int:
        """Keep the cursor on a column that exists."""
        return clamp(value, 0, max(len(self._columns) - 1, 0))

    def watch_view(self, view: str) -> None:
        """Take the view's colour."""
        self.set_class(view == "drop", "-drop")

    def watch_cursor_row(self, old_row: int, new_row: int) -> None:
        """Repaint the two rows, follow the cursor, tell the app."""
        if not self._quiet:
            self._anchor = None  # the user moved it: the attempt under it now is the one
        self._refresh_row(old_row)
        self._refresh_row(new_row)
        self._scroll_cursor_into_view()
        self._post_cursor_moved()

    def watch_cursor_column(self, old_column: int, new_column: int) -> None:
        """Repaint the cursor row and header, follow the cursor, tell the app."""
        self._refresh_row(self.cursor_row)
        self._refresh_header()
        self._scroll_cursor_into_view()
        self._post_cursor_moved()

    def _post_cursor_moved(self) -> None:
        """Post `CursorMoved`, unless `set_frame` is mid-way through moving the cursor."""
        if self._quiet:
            return
        column = self._columns[self.cursor_column].name if self._columns else ""
        self.post_message(self.CursorMoved(self, self.cursor_row, column))

    def _scroll_cursor_into_view(self) -> None:
        """Scroll the least distance that shows the cursor's row and cell."""
        region = self.scrollable_content_region
        if region.height <= 1 or region.width <= 0:
            return  # not laid out yet
        scroll_x, scroll_y = self.scroll_offset
        target_y = self._cursor_top(self._body_height())
        target_x = scroll_x
        if self._columns:
            column = self._columns[self.cursor_column]
            if column.offset + column.span > scroll_x + region.width:
                target_x = column.offset + column.span - region.width
            target_x = min(target_x, column.offset)
        if (target_x, target_y) != (scroll_x, scroll_y):
            self.scroll_to(x=target_x, y=target_y, animate=False, force=True)

    def move_cursor(self, row: int | None = None, column: int | None = None) -> None:
        """Put the cursor on a row and/or column (clamped to the frame)."""
        if row is not None:
            self.cursor_row = row
        if column is not None:
            self.cursor_column = column

    def action_cursor_left(self) -> None:
        """Move left one column."""
        self.cursor_column -= 1

    def action_cursor_right(self) -> None:
        """Move right one column."""
        self.cursor_column += 1

    def action_select_cursor(self) -> None:
        """Activate the row under the cursor (the app opens its details)."""
        if self.row_count:
            self.post_message(self.RowActivated(self, self.cursor_row))

    # ------------------------------------------------------------------ mouse

    def cell_at(self, x: int, y: int) -> tuple[int | None, int | None]:
        """The (row, column) under a point of the content area; row is None on the header."""
        scroll_x, scroll_y = self.scroll_offset
        column_index = bisect_right(self._column_offsets, x + scroll_x) - 1
        column = column_index if 0 <= column_index < len(self._columns) else None
        if y == 0:
            return None, column
        row = scroll_y + y - 1
        return (row if 0 <= row < self.row_count else None), column

    def on_click(self, event: events.Click) -> None:
        """A click puts the cursor on the cell; a double click activates the row."""
        offset = event.get_content_offset(self)
        if offset is None:
            return
        row, column = self.cell_at(offset.x, offset.y)
        if column is not None:
            self.cursor_column = column
        if row is not None:
            self.cursor_row = row
            if event.chain >= 2:
                self.action_select_cursor()
        self.focus()
