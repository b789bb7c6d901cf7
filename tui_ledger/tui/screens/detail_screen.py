"""An attempt's every field (`i`, on the ledger or the attempt screen): `DetailScreen`, a
dialog over `FieldList`, a Line-API list of name and value (a long value folded to
`DETAIL_VALUE_LINES`), each value shown as literal, terminal-safe text (`display_value`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import polars as pl
from rich.cells import cell_len
from rich.segment import Segment
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Label

from tui_ledger.accounting.prices import COST_COLUMN, TABLE_COST_COLUMN
from tui_ledger.schema import INTEGER_COLUMNS, LINE_COLUMN, OUTCOME_SYMBOLS, SOURCE_COLUMN
from tui_ledger.text.numbers import MISSING, format_count, format_money, format_tokens
from tui_ledger.text.textsafe import safe_cell, safe_text
from tui_ledger.tui.screens.screens import _Dialog
from tui_ledger.tui.theme import (
    MUTED,
)


def display_value(column: str, value: object, dtype: pl.DataType | None = None) -> Text:
    """One field as the detail panel shows it: literal, `—` when missing, tokens grouped."""
    if value is None:
        if column == COST_COLUMN:
            return Text(f"{MISSING} unpriced or usage unknown", style=f"italic {MUTED}")
        return Text(MISSING, style=f"italic {MUTED}")
    if column in (COST_COLUMN, TABLE_COST_COLUMN) and isinstance(value, float):
        return Text(f"{format_money(value)}  ({value:.6g} USD)")
    if column in INTEGER_COLUMNS and isinstance(value, int):
        return Text(format_tokens(value))
    if column == "outcome":
        word = str(value)
        return Text(f"{OUTCOME_SYMBOLS.get(word, '')} {word}".strip())
    if isinstance(value, bool):
        return Text("true" if value else "false")
    if isinstance(value, int) and not isinstance(value, bool):
        return Text(format_count(value))
    return Text(safe_text(value))


DETAIL_VALUE_LINES = 200
"""A value longer than this many lines of the panel is cut there (with …): a 5 MB cell costs
what a long paragraph costs."""


class FieldList(ScrollView, can_focus=True):
    """Every field of one attempt, its name on the left and its value wrapped on the right,
    drawn with the Line API: only the fields on screen are rendered (`built`), so a file with
    2,000 columns opens as fast as one with 10.

    Each field's height is measured once per width (one line when the value fits, which a
    length check tells, else the wrap of the value); its lines are made when first shown.
    """

    DEFAULT_CSS = """
    FieldList {
        height: auto;
        max-height: 80vh;
        overflow-x: hidden;
    }
    """

    def __init__(self, row: Mapping[str, object], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._fields = list(row.items())
        names = (cell_len(safe_cell(name, 26)) for name in row)
        self._name_width = min(24, max(names, default=8)) + 2
        self._width = 0  # the value column's width the layout was made for
        self._starts: list[int] = []  # each field's first line
        self._total = 0
        self._layouts: dict[int, tuple[list[int], int]] = {}  # by value width
        self.built: dict[int, list[Strip]] = {}
        """The fields rendered so far, by index (a test reads it: only visible ones)."""

    def _value(self, index: int) -> Text:
        column, value = self._fields[index]
        if isinstance(value, str) and len(value) > DETAIL_VALUE_LINES * max(self._width, 8):
            value = safe_cell(value, DETAIL_VALUE_LINES * max(self._width, 8))
        return display_value(column, value)

    def _lines(self, index: int) -> list[Text]:
        text = self._value(index)
        if cell_len(text.plain) <= self._width:
            return [text]
        lines = list(text.wrap(self.app.console, self._width, overflow="fold"))
        return lines or [Text("")]

    def _height(self, index: int) -> int:
        """Lines field `index` takes: one when its value surely fits (no text to make)."""
        value = self._fields[index][1]
        if value is None or isinstance(value, (bool, int, float)):
            return 1  # a number or — is a few cells, well inside the narrowest value column
        if isinstance(value, str) and 2 * len(value) <= self._width and value.isprintable():
            return 1  # at most two cells a character
        return len(self._lines(index))

    def _lay_out(self, width: int) -> int:
        """Measure every field for a panel `width` cells wide; the number of lines. Measured
        once per width (Textual asks for the height, then the region, at two widths)."""
        value_width = max(8, width - self._name_width)
        if value_width != self._width:
            self._width = value_width
            self.built.clear()
            measured = self._layouts.get(value_width)
            if measured is None:
                starts: list[int] = []
                total = 0
                for index in range(len(self._fields)):
                    starts.append(total)
                    total += self._height(index)
                measured = self._layouts[value_width] = (starts, total)
            self._starts, self._total = measured
        return self._total

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """As tall as its fields (the dialog's max-height then scrolls it)."""
        return self._lay_out(width)

    def on_resize(self) -> None:
        """Measure again for the new width (inside the scrollbar); never wider than it."""
        width = self.scrollable_content_region.width
        self.virtual_size = Size(width, self._lay_out(width))
        self.refresh()

    def _strips(self, index: int) -> list[Strip]:
        found = self.built.get(index)
        if found is not None:
            return found
        console = self.app.console
        column, _ = self._fields[index]
        name = Text(safe_cell(column, self._name_width - 2), style=MUTED)
        name.pad_right(self._name_width - name.cell_len)
        blank = " " * self._name_width
        strips = []
        for number, line in enumerate(self._lines(index)):
            head = list(name.render(console)) if number == 0 else [Segment(blank)]
            strip = Strip([*head, *line.render(console)])
            strips.append(strip.extend_cell_length(self._name_width + self._width))
        self.built[index] = strips
        return strips

    def render_line(self, y: int) -> Strip:
        """Line `y` of the view: a line of the field under it, made when first shown."""
        line = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if not self._starts or line >= self._total:
            return Strip.blank(width, self.rich_style)
        index = bisect_right(self._starts, line) - 1
        strip = self._strips(index)[line - self._starts[index]]
        return strip.crop(self.scroll_offset.x, self.scroll_offset.x + width).apply_style(
            self.rich_style
        )


class DetailScreen(_Dialog):
    """Every field of one attempt; long values wrap; the body scrolls."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,enter", "close", "close", show=False)
    ]

    def __init__(self, row: Mapping[str, object], title: str = "attempt") -> None:
        super().__init__()
        self._row = dict(row)
        self._title = title

    @classmethod
    def of_attempt(cls, row: Mapping[str, object], position: int) -> DetailScreen:
        """The attempt `row` of the table (at `position`), titled by its file and line."""
        source, line = row.get(SOURCE_COLUMN), row.get(LINE_COLUMN)
        if source is not None and line is not None:
            return cls(row, f"{Path(str(source)).name}, line {line}")
        return cls(row, f"row {position + 1}")

    def compose(self) -> ComposeResult:
        """Name on the left, value on the right, one field per line (drawn lazily)."""
        with Vertical(id="detail-dialog", classes="dialog"):
            yield FieldList(self._row, id="detail-body")
            yield Label(Text("Esc or Enter closes · ↑↓ scroll", style=MUTED), classes="dialog-hint")

    def on_mount(self) -> None:
        """Title the frame with the attempt's place."""
        self.query_one("#detail-dialog").border_title = Text(safe_text(self._title))
        self.query_one("#detail-body").focus()
