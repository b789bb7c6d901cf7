"""The attempts table's columns: what kind each is, how its cells read, and how they fit the
pane (docs/LAYOUT.md): the pure half of `attempts_table`, which draws them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import polars as pl
from rich.cells import cell_len, set_cell_size

from tui_ledger.accounting.rows import Rows
from tui_ledger.schema import OUTCOME_SYMBOLS
from tui_ledger.text.labels import fit_labels
from tui_ledger.text.numbers import MISSING, format_count, format_money
from tui_ledger.text.textsafe import safe_cell

MAX_COLUMN_WIDTH = 40
"""No column is wider than this many cells; longer values end in an ellipsis."""

SAMPLE_ROWS = 200
"""Rows read from each end of the frame to size the text columns (never every row)."""

CELL_PADDING = 1
"""Blank cells either side of every value."""

ELLIPSIS = "…"
SORT_ASCENDING = "▲"
SORT_DESCENDING = "▼"
ColumnKind = Literal["outcome", "integer", "float", "decimal", "money", "boolean", "text"]
Cell = tuple[str, str | None]
"""A formatted value (already safe for the terminal) and the name of its style, if any."""

_RIGHT_ALIGNED: frozenset[ColumnKind] = frozenset({"integer", "float", "decimal", "money"})
MONEY_COLUMNS: frozenset[str] = frozenset({"cost", "table_cost"})
"""Columns of US dollars, drawn as `$0.012` (`prices.COST_COLUMN`, `prices.TABLE_COST_COLUMN`;
not imported from there, so the table does not load the price module before the first frame)."""


@dataclass(frozen=True)
class Column:
    """How one frame column is drawn: its header, its formatter and its place on the line."""

    name: str
    label: str
    kind: ColumnKind
    width: int
    offset: int
    natural: int = 0
    """The width its values ask for (`width` is less where the table is fitted to the pane)."""
    least: int = 0
    """The width its heading and values need with no room kept for a sort arrow (0: `natural`)."""

    @property
    def right(self) -> bool:
        """Numbers line up on the right."""
        return self.kind in _RIGHT_ALIGNED

    @property
    def span(self) -> int:
        """Cells the column takes on a line, padding included."""
        return self.width + 2 * CELL_PADDING


@dataclass
class Window:
    """The formatted rows around the viewport: the only rows turned into Python objects."""

    start: int
    cells: list[list[Cell]]  # per column, per row in the window
    struck: list[bool] | None
    cuts: dict[tuple[int, int], dict[str, str]] = field(default_factory=dict)
    """Per (column, width): each text value of the window as `cut` shows it."""

    @property
    def stop(self) -> int:
        """One past the last row in the window."""
        return self.start + (len(self.cells[0]) if self.cells else 0)

    def cut(self, column: int, width: int, text: str) -> str:
        """A text value of `column` in `width` cells, cut so that values that differ read
        differently in this window (a screen and a page either side; `labels.fit_labels`:
        `20250923_droid_claude-4-opus` and `…-4-1-opus` never both read `20250…-opus`)."""
        key = (column, width)
        shown = self.cuts.get(key)
        if shown is None:
            values = list(dict.fromkeys(text for text, style in self.cells[column] if not style))
            shown = self.cuts[key] = dict(zip(values, fit_labels(values, width), strict=True))
        return shown.get(text) or cut_middle(text, width)


def column_kind(name: str, dtype: pl.DataType) -> ColumnKind:
    """Which formatter draws a column, from its name and dtype."""
    if name == "outcome" and (isinstance(dtype, (pl.Enum, pl.Categorical)) or dtype == pl.String):
        return "outcome"
    if dtype == pl.Boolean:
        return "boolean"
    if name in MONEY_COLUMNS and (dtype.is_numeric() or isinstance(dtype, pl.Decimal)):
        return "money"
    if dtype.is_integer():
        return "integer"
    if dtype.is_float():
        return "float"
    if isinstance(dtype, pl.Decimal):
        return "decimal"
    return "text"


def format_float(value: float) -> str:
    """A float with four significant digits and thousands separators; no exponent unless extreme.

    `0.01234` -> `0.01234`, `123.456` -> `123.5`, `1.5` -> `1.5`, `12345.6` -> `12,346`.
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e15 or magnitude < 1e-4:
        return f"{value:.3e}"
    digits_before_point = math.floor(math.log10(magnitude)) + 1
    decimals = max(0, 4 - digits_before_point)
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_cells(
    kind: ColumnKind, values: Sequence[object], width: int = MAX_COLUMN_WIDTH
) -> list[Cell]:
    """Format a run of raw values of one column for the screen.

    Nulls read `—` (styled "null"); outcomes as symbol + word (styled by outcome); integers with
    thousands separators; everything else passes through `textsafe.safe_cell`, so no markup is
    parsed, no control byte survives, and a huge cell costs what `width` cells cost.
    """
    cells: list[Cell] = []
    append = cells.append
    for value in values:
        if value is None:
            append((MISSING, "null"))
        elif kind == "outcome":
            word = str(value)
            symbol = OUTCOME_SYMBOLS.get(word)
            if symbol is None:
                append((safe_cell(word, width), None))
            else:
                append((f"{symbol} {word}", word))
        elif kind == "integer":
            append((format_count(value), None))  # type: ignore[arg-type]
        elif kind == "float":
            append((format_float(value), None))  # type: ignore[arg-type]
        elif kind == "money":
            append((format_money(float(value)), None))  # type: ignore[arg-type]
        elif kind == "boolean":
            append(("true" if value else "false", None))
        else:
            append((safe_cell(value, width), None))
    return cells


ESSENTIAL_COLUMNS: tuple[str, ...] = ("outcome", "tokens", "cost")
"""Columns the table keeps on screen, whatever the pane's width (UX.md, Layout)."""


def column_extremes(source: pl.DataFrame) -> dict[str, list[object]]:
    """The minimum and maximum of each numeric column of the frame rows are over (one
    vectorised pass per frame), so no value a filter or a sort keeps is wider."""
    kinds = {name: column_kind(name, dtype) for name, dtype in source.schema.items()}
    numeric = [name for name, kind in kinds.items() if kind in ("integer", "float", "money")]
    extremes: dict[str, list[object]] = {name: [] for name in numeric}
    if numeric and source.height:
        bounds = source.select(
            *(pl.col(name).min().alias(f"min{i}") for i, name in enumerate(numeric)),
            *(pl.col(name).max().alias(f"max{i}") for i, name in enumerate(numeric)),
        ).row(0)
        for i, name in enumerate(numeric):
            extremes[name] = [bounds[i], bounds[len(numeric) + i]]
    return extremes


def measure_columns(
    frame: Rows, previous: list[Column], extremes: dict[str, list[object]]
) -> list[Column]:
    """Column kinds and widths from the header and a sample of values, never every row.

    Text columns are sized from the first and last `SAMPLE_ROWS` rows (the first twice as
    many, of rows not all picked yet: `Rows.resolved`); numeric columns also
    from the minimum and maximum of the frame the rows are over (`column_extremes`). When the frame
    has the same columns as before, no column narrows, so a filter or the view toggle does
    not shift the table.
    """
    kinds = {name: column_kind(name, dtype) for name, dtype in frame.schema.items()}
    previous_widths = {column.name: column.natural or column.width for column in previous}
    previous_least = {column.name: column.least for column in previous}
    same_columns = list(previous_widths) == frame.columns
    # The same columns again (a filter, the toggle, a sort): the widths only grow, so a
    # smaller sample suffices, and formatting it costs a quarter (about 10 -> 3 ms).
    rows = SAMPLE_ROWS // 4 if same_columns else SAMPLE_ROWS
    if frame.height > 2 * rows and frame.resolved < frame.height:
        # Rows still being picked (the DROP FAILURES rows, `PickedRows`): their last rows
        # would cost picking every one, so the first ones size the columns.
        sample = frame.head(2 * rows)
    elif frame.height > 2 * rows:
        sample = pl.concat([frame.head(rows), frame.tail(rows)])
    else:
        sample = frame.head(frame.height)

    columns: list[Column] = []
    offset = 0
    for name, kind in kinds.items():
        label = safe_cell(name, MAX_COLUMN_WIDTH)
        values = [*sample.get_column(name).to_list(), *extremes.get(name, [])]
        widest = max((cell_len(text) for text, _ in format_cells(kind, values)), default=1)
        # Two cells for the sort arrow, so sorting never resizes a column.
        width = min(max(cell_len(label) + 2, widest, 1), MAX_COLUMN_WIDTH)
        least = min(max(cell_len(label), widest, 1), width)
        if same_columns:
            width = max(width, previous_widths[name])
            least = max(least, previous_least[name])
        columns.append(Column(name, label, kind, width, offset, width, least))
        offset += width + 2 * CELL_PADDING
    return columns


MIN_TEXT_WIDTH = 8
"""A text column before them shrinks to no fewer cells than this (`abc…wxyz`)."""

OUTCOME_SYMBOL_WIDTH = 3
"""The outcome column when it shows its symbol alone (`✔`; its heading `ou…`)."""

OUTCOME_GLYPH_WIDTH = 1
"""The outcome column at its very narrowest: the symbol and nothing else (heading `…`)."""


def fit_columns(columns: Sequence[Column], available: int) -> list[Column]:
    """The columns laid out for a pane `available` cells wide, so the outcome, the tokens
    and the cost (`ESSENTIAL_COLUMNS`, those present) are on screen.

    The text columns before the last of them give way, in turn, until the line fits: the
    widest shrinks, a cell at a time, down to `MIN_TEXT_WIDTH` (its values are then cut in
    the middle); the text columns after the first move, last first, to just after the
    essential ones (the first then grows into the room they left); the outcome shows its
    symbol alone (`✔`, `✘`, `⧗`, `⚠`, `?`, each in its colour); and last the first text
    column moves too, the outcome taking its words back if they fit. On a pane narrower
    still (80 columns with a priced ledger), the essential numbers give up the room kept for
    a sort arrow (`Column.least`), and then the outcome's heading its letters (`✔` alone).
    A column that moves keeps its whole width; every column is still there to scroll to.
    `available` 0 (not laid out yet) keeps every width.
    """
    names = [column.name for column in columns]
    essential = [index for index, name in enumerate(names) if name in ESSENTIAL_COLUMNS]
    widths = {column.name: column.natural or column.width for column in columns}
    order = list(columns)
    if available > 0 and essential:
        lead = order[: essential[-1] + 1]
        rest = order[essential[-1] + 1 :]

        def span() -> int:
            return sum(widths[column.name] + 2 * CELL_PADDING for column in lead)

        def move(column: Column) -> None:
            lead.remove(column)
            rest.insert(0, column)
            widths[column.name] = column.natural or column.width

        shrinking = [column for column in lead if column.kind == "text"]
        while span() > available and shrinking:
            widest = max(shrinking, key=lambda column: widths[column.name])
            if widths[widest.name] <= MIN_TEXT_WIDTH:
                break
            widths[widest.name] -= 1
        while span() > available and len(shrinking) > 1:
            move(shrinking.pop())
        outcome = next((column for column in lead if column.kind == "outcome"), None)
        if span() > available and outcome is not None:
            widths[outcome.name] = OUTCOME_SYMBOL_WIDTH
        if span() > available and shrinking:
            move(shrinking.pop())
            if outcome is not None:  # the room it left may hold the outcome's words again
                widths[outcome.name] = outcome.natural or outcome.width
                if span() > available:
                    widths[outcome.name] = OUTCOME_SYMBOL_WIDTH
        if span() > available:
            for column in lead:
                if column.name in ESSENTIAL_COLUMNS and column.kind != "outcome":
                    widths[column.name] = min(widths[column.name], column.least or column.width)
        if span() > available and outcome is not None:
            widths[outcome.name] = OUTCOME_GLYPH_WIDTH
        if shrinking and span() < available:
            # A text column that moved left room behind: the one still before grows into it.
            first = shrinking[0]
            widths[first.name] = min(
                first.natural or first.width, widths[first.name] + available - span()
            )
        order = lead + rest
    fitted: list[Column] = []
    offset = 0
    for column in order:
        natural = column.natural or column.width
        width = widths[column.name]
        fitted.append(
            Column(column.name, column.label, column.kind, width, offset, natural, column.least)
        )
        offset += width + 2 * CELL_PADDING
    return fitted


def cut_middle(text: str, width: int) -> str:
    """`text` in at most `width` cells, cut in the middle: its start, `…`, its end."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    tail_cells = (width - 1) // 2
    head = set_cell_size(text, width - 1 - tail_cells).rstrip(" ")
    tail = ""
    for character in reversed(text):
        if cell_len(tail) + cell_len(character) > tail_cells:
            break
        tail = character + tail
    return head + ELLIPSIS + tail


def fit_cell(text: str, width: int, *, right: bool = False) -> str:
    """Pad or cut `text` to exactly `width` terminal cells, ending a cut value in an ellipsis."""
    length = cell_len(text)
    if length > width:
        if width <= 0:
            return ""
        # set_cell_size pads with a space if a wide character straddles the cut.
        return set_cell_size(text, width - 1) + ELLIPSIS
    padding = " " * (width - length)
    return padding + text if right else text + padding
