"""The Pareto chart of pass rate against spend (`c`): `pareto.pareto_points` drawn on a canvas of
braille dots and marker characters. Textual has no chart widget, so `BrailleCanvas` is a small
one (the budget sweep, `cap_chart.py`, draws on it too). Every figure comes from the core; the
screen only lays it out, and every string from a file goes through `safe_text`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import polars as pl
from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Label, Static

from tui_ledger.accounting.ledger import (
    VIEW_TITLES,
    Comparison,
    ParetoMetric,
)
from tui_ledger.accounting.pareto import pareto_points
from tui_ledger.exports.pareto_svg import log_axis_bounds, nice_step, not_recorded_groups
from tui_ledger.text.labels import fit_labels
from tui_ledger.text.numbers import (
    MISSING,
    format_compact,
    format_count,
    format_money,
    format_rate,
    format_tokens,
)
from tui_ledger.text.textsafe import safe_text
from tui_ledger.tui.screens.audit_screens import NOT_RECORDED_TEXT
from tui_ledger.tui.screens.screens import _Dialog
from tui_ledger.tui.theme import DROP, FRONTIER_STYLE, KEEP, KEY_STYLE, MUTED, SERIES

LOWER_BOUND_ARROW = "→"
"""Beside a point whose figure is a lower bound: the true one lies toward more spend."""
POINT_LABEL = 18
"""Cells of a group's name beside its point (names cut together, `labels.fit_labels`)."""
LEGEND_LABEL = 28
"""Cells of a group's name in the chart's legend."""

# --------------------------------------------------------------------------- the chart

_BRAILLE_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))  # [row][column]


@dataclass
class BrailleCanvas:
    """A grid of terminal cells where lines are drawn in braille dots (2x4 per cell) and
    characters (markers, labels) can be put on top; each cell keeps one style."""

    width: int
    height: int
    dots: list[list[int]] = field(init=False)
    chars: list[list[str | None]] = field(init=False)
    styles: list[list[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.dots = [[0] * self.width for _ in range(self.height)]
        self.chars = [[None] * self.width for _ in range(self.height)]
        self.styles = [[""] * self.width for _ in range(self.height)]

    def dot(self, x: int, y: int, style: str) -> None:
        """Set one dot; (x, y) in dots, y down."""
        column, row = x // 2, y // 4
        if 0 <= column < self.width and 0 <= row < self.height and x >= 0 and y >= 0:
            self.dots[row][column] |= _BRAILLE_BITS[y % 4][x % 2]
            if self.chars[row][column] is None:
                self.styles[row][column] = style

    def line(
        self, start: tuple[float, float], end: tuple[float, float], style: str, every: int = 1
    ) -> None:
        """A straight line of dots between two points in dots; `every` > 1 dots it."""
        x0, y0 = start
        x1, y1 = end
        steps = max(1, int(max(abs(x1 - x0), abs(y1 - y0))))
        for step in range(0, steps + 1, every):
            share = step / steps
            self.dot(round(x0 + (x1 - x0) * share), round(y0 + (y1 - y0) * share), style)

    def free(self, column: int, row: int, length: int) -> bool:
        """Whether `length` cells from (column, row) hold no character yet."""
        if row < 0 or row >= self.height or column < 0 or column + length > self.width:
            return False
        return all(self.chars[row][c] is None for c in range(column, column + length))

    def put(self, column: int, row: int, text: str, style: str) -> None:
        """Characters on top of the dots, cut at the right edge."""
        for offset, char in enumerate(text):
            c = column + offset
            if 0 <= c < self.width and 0 <= row < self.height:
                self.chars[row][c] = char
                self.styles[row][c] = style

    def lines(self) -> list[Text]:
        """The canvas as one `Text` per row."""
        out = []
        for row in range(self.height):
            text = Text(no_wrap=True)
            for column in range(self.width):
                char = self.chars[row][column]
                if char is None:
                    mask = self.dots[row][column]
                    char = chr(0x2800 + mask) if mask else " "
                text.append(char, style=self.styles[row][column] or None)
            out.append(text)
        return out


SERIES_INDEX = "__series"
"""A chart point's column: its group's place among the comparison's labels."""


def extremes(values: pl.Series) -> list[float]:
    """The least positive value and the greatest value: all `log_axis_bounds` and `XAxis` read
    of the values (200,000 groups: not a list of every one)."""
    positive = values.filter(values > 0)
    found = [positive.min(), values.max()] if len(positive) else [values.max()]
    return [float(value) for value in found if isinstance(value, int | float)]


class XAxis:
    """Spend per accepted result -> a share of the width: linear from 0, or log10 when the values
    span more than 20x (as the SVG chart does)."""

    def __init__(self, values: Sequence[float]) -> None:
        bounds = log_axis_bounds(values)
        self.log = bounds is not None
        if bounds is not None:
            self.low, self.high = bounds
        else:
            self.low = 0.0
            top = max(values) if values else 1.0
            # A little room past the last point; ticks stop at the last round value inside.
            self.high = top * 1.06 if top > 0 else 1.0

    def share(self, value: float) -> float:
        """Where a value falls, 0 (left) to 1 (right)."""
        if self.log:
            value = max(value, self.low)
            return (math.log10(value) - math.log10(self.low)) / (
                math.log10(self.high) - math.log10(self.low)
            )
        return (value - self.low) / (self.high - self.low) if self.high > self.low else 0.0

    def ticks(self, count: int) -> list[float]:
        """About `count` tick values."""
        if self.log:
            ticks, power = [], self.low
            while power <= self.high * 1.0001:
                ticks.append(power)
                power *= 10
            return ticks
        step = nice_step(self.high - self.low, count)
        return [self.low + i * step for i in range(math.floor((self.high - self.low) / step) + 1)]


MANY_POINTS = 500
"""Past this many groups the chart draws the first ones, the frontier and one point per cell."""


class ParetoChart(Widget):
    """Pass rate (y) against spend per accepted result (x): keep view as solid points, drop view
    as ghosts joined to them, the keep-view frontier as a line."""

    DEFAULT_CSS = """
    ParetoChart { height: 1fr; min-height: 6; }
    """

    Y_LABEL_WIDTH = 6  # "100% ┤"

    def __init__(self, points: pl.DataFrame, labels: list[str], metric: str) -> None:
        super().__init__()
        # Each point carries its group's place among the labels (`pareto_points` lists every
        # group in label order, view by view): its colour, without a map of every group.
        self.points = points.with_columns(
            pl.int_range(pl.len(), dtype=pl.Int64).over("view").alias(SERIES_INDEX)
        )
        self.labels = labels
        self.metric = metric

    @staticmethod
    def colour(index: int) -> str:
        """The colour of the group at `index` among the labels."""
        return SERIES[index % len(SERIES)]

    def fmt(self, value: float | None) -> str:
        """An x value as it reads on the axis."""
        return format_money(value) if self.metric == "cost" else format_compact(value)

    def exact(self, value: float | None) -> str:
        """An x value in full, for the legend."""
        return format_money(value) if self.metric == "cost" else format_tokens(value)

    def _thinned(
        self, plotted: pl.DataFrame, axis: XAxis, dots_x: int, dots_y: int
    ) -> pl.DataFrame:
        """The points worth drawing when there are more than the canvas can tell apart: the
        first `MANY_POINTS` groups (the summary's order), the frontier, and one point per
        canvas cell and view (a marker drawn over another is not seen). 200,000 groups drew
        in 12 s; now in what a few thousand points take."""
        value = pl.col("per_accepted")
        if axis.log:
            low, high = math.log10(axis.low), math.log10(axis.high)
            share = (value.clip(lower_bound=axis.low).log10() - low) / (high - low)
        elif axis.high > axis.low:
            share = (value - axis.low) / (axis.high - axis.low)
        else:
            share = pl.lit(0.0)
        first = (
            pl.col("group")
            .cast(pl.String)
            .is_in(pl.Series(self.labels[:MANY_POINTS], dtype=pl.String).implode())
        )
        cells = plotted.with_columns(
            (share * dots_x / 2).floor().alias("__column"),
            ((1 - pl.col("pass_rate")) * dots_y / 4).floor().alias("__row"),
            pl.int_range(pl.len()).alias("__order"),
        )
        seen = cells.unique(["view", "__column", "__row"], keep="first", maintain_order=True)
        kept = pl.concat([cells.filter(first | pl.col("frontier")), seen])
        return (
            kept.unique("__order", maintain_order=True)
            .sort("__order")
            .drop("__column", "__row", "__order")
        )

    def render(self) -> Text:
        """The chart at the widget's current size."""
        width, height = self.size.width or 100, self.size.height or 24
        plot_width = max(10, width - self.Y_LABEL_WIDTH - 2)
        plot_height = max(4, height - 3)  # the axis line, its ticks and its caption below
        canvas = BrailleCanvas(plot_width, plot_height)
        plotted = self.points.filter(
            pl.col("per_accepted").is_not_null() & pl.col("per_accepted").is_finite()
        )
        axis = XAxis(extremes(plotted["per_accepted"]))
        dots_x, dots_y = plot_width * 2 - 1, plot_height * 4 - 1
        if plotted.height > 2 * MANY_POINTS:
            plotted = self._thinned(plotted, axis, dots_x, dots_y)

        def at(row: dict[str, Any]) -> tuple[float, float]:
            return axis.share(row["per_accepted"]) * dots_x, (1 - row["pass_rate"]) * dots_y

        by_view: dict[str, dict[str, dict[str, Any]]] = {"keep": {}, "drop": {}}
        for row in plotted.iter_rows(named=True):
            by_view[row["view"]][row["group"]] = row
        # Ghost -> real, dotted, in the group's colour; then the frontier, solid. The keep
        # points are in label order: only the groups drawn are visited, not every group.
        for label, real in by_view["keep"].items():
            ghost = by_view["drop"].get(label)
            if ghost is not None:
                canvas.line(at(ghost), at(real), self.colour(real[SERIES_INDEX]), every=3)
        frontier = sorted(
            (row for row in by_view["keep"].values() if row["frontier"]),
            key=lambda row: row["per_accepted"],
        )
        for first, second in itertools.pairwise(frontier):
            canvas.line(at(first), at(second), FRONTIER_STYLE)
        # Markers: ghosts first, real points on top, then labels where they fit. A lower
        # bound's point has an arrow toward more spend: the true figure is at or right of it.
        for view, marker in (("drop", "○"), ("keep", "●")):
            for row in by_view[view].values():
                x, y = at(row)
                style = self.colour(row[SERIES_INDEX]) + (" bold" if view == "keep" else "")
                canvas.put(int(x // 2), int(y // 4), marker, style)
                if view == "keep" and row["lower_bound"]:
                    canvas.put(int(x // 2) + 1, int(y // 4), LOWER_BOUND_ARROW, style)
        placed = list(by_view["keep"])
        names = dict(zip(placed, fit_labels(placed, POINT_LABEL), strict=True))
        for label, row in by_view["keep"].items():
            x, y = at(row)
            column, line = int(x // 2), int(y // 4)
            name = names[label] + ("★" if row["frontier"] else "")
            after = column + (3 if row["lower_bound"] else 2)
            for place_column, place_line in (
                (after, line),
                (column - cell_len(name) - 1, line),
                (column + 2, line - 1),
                (column + 2, line + 1),
            ):
                if canvas.free(place_column - 1, place_line, cell_len(name) + 2):
                    canvas.put(place_column, place_line, name, self.colour(row[SERIES_INDEX]))
                    break
        return self._framed(canvas, axis, plot_width)

    def _framed(self, canvas: BrailleCanvas, axis: XAxis, plot_width: int) -> Text:
        """The canvas with the pass-rate axis on the left and the spend axis below."""
        rows = canvas.lines()
        out = Text(no_wrap=True)
        ticks = {round((1 - rate) * (len(rows) - 1)): rate for rate in (1.0, 0.75, 0.5, 0.25, 0.0)}
        for index, row in enumerate(rows):
            rate = ticks.get(index)
            label = f"{rate * 100:.0f}%".rjust(4) + " ┤" if rate is not None else "     │"
            out.append(label, style=MUTED)
            out.append_text(row)
            out.append("\n")
        out.append("     └" + "─" * plot_width, style=MUTED)
        out.append("\n")
        axis_line = [" "] * (plot_width + 6)
        tick_count = max(2, min(6, plot_width // 14))
        for value in axis.ticks(tick_count):
            position = 6 + round(axis.share(value) * (plot_width * 2 - 1) / 2)
            text = self.fmt(value)
            start = max(0, min(position - len(text) // 2, len(axis_line) - len(text)))
            if all(char == " " for char in axis_line[max(0, start - 1) : start + len(text) + 1]):
                axis_line[start : start + len(text)] = list(text)
        out.append("".join(axis_line), style=MUTED)
        unit = "cost" if self.metric == "cost" else "tokens"
        # Spend grows to the right: the arrow points to the cheaper side, under the axis' start.
        better = "← lower is better"
        caption = f"{unit} per accepted result{' (log scale)' if axis.log else ''}"
        gap = plot_width - len(better) - len(caption)
        line = f"{better}{' ' * gap}{caption}" if gap >= 2 else f"{caption} · {better}"
        out.append("\n      " + line, style=f"italic {MUTED}")
        return out


class ParetoScreen(_Dialog):
    """The chart, a legend with every group's figures in both views, and `s` to save an SVG."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,c", "close", "back", show=False),
        Binding("s", "save", "save SVG", show=False),
        Binding("dollar_sign", "toggle_metric", "tokens ⇄ cost", show=False),
        Binding("B", "app.cap_sweep", "cap sweep", show=False),
    ]
    LEGEND_LIMIT = 24

    def __init__(
        self,
        comparison: Comparison,
        metric: ParetoMetric = "tokens",
        *,
        save: Callable[[Comparison, ParetoMetric], None] | None = None,
    ) -> None:
        super().__init__()
        self._comparison = comparison
        self._metric: ParetoMetric = metric
        self._save = save

    @property
    def metric(self) -> ParetoMetric:
        """What the x axis shows: "tokens" or "cost" per accepted result."""
        return self._metric

    def compose(self) -> ComposeResult:
        """Chart on top, legend below, keys at the bottom."""
        with Vertical(id="pareto-dialog", classes="dialog"):
            yield from self._parts()

    def _parts(self) -> list[Widget]:
        points = pareto_points(self._comparison, self._metric)
        labels = self._comparison.labels
        chart = ParetoChart(points, labels, self._metric)
        empty = self._empty_words(points)
        hints = [] if empty else [("s", " save as SVG · "), ("B", " cap sweep · ")]
        if self._comparison.has_cost and not empty:
            hints.append(("$", " tokens ⇄ cost · "))
        hints.append(("Esc", " back"))
        hint = Text()
        for key, words in hints:
            hint.append(key, style=KEY_STYLE)
            hint.append(words, style=MUTED)
        if empty:  # no axes of nothing: the words, and the way back
            said = Static(Text(empty, style=f"italic {MUTED}"), id="pareto-empty")
            return [said, Label(hint, classes="dialog-hint")]
        return [
            Static(self._legend_heading(), id="pareto-heading"),
            chart,
            Static(self._legend(points, chart), id="pareto-legend"),
            Label(hint, classes="dialog-hint"),
        ]

    def _empty_words(self, points: pl.DataFrame | None = None) -> str | None:
        """Why there is nothing to chart, if so (no attempt selected, no figure to plot)."""
        if not self._comparison.keep.height:
            return (
                "Nothing to chart: no attempt is selected (the filter, or matched tasks only, "
                "keeps none). Esc, then widen the filter."
            )
        points = pareto_points(self._comparison, self._metric) if points is None else points
        if points.filter(pl.col("per_accepted").is_finite()).height:  # (nulls are not finite)
            return None
        spend = "cost" if self._metric == "cost" else "tokens"
        return (
            f"Nothing to chart: no group has a {spend} figure per accepted result (no accepted "
            "attempt, or no usage recorded) in either view."
        )

    def on_mount(self) -> None:
        """Title the frame."""
        self._title()

    def _title(self) -> None:
        unit = "cost" if self._metric == "cost" else "tokens"
        self.query_one(
            "#pareto-dialog"
        ).border_title = f"Pareto · pass rate vs {unit} per accepted result"

    def _legend_heading(self) -> Text:
        text = Text()
        text.append("● ", style="bold")
        text.append(f"{VIEW_TITLES['keep']} (honest)", style=f"bold {KEEP}")
        text.append("   ○ ", style="bold")
        text.append(f"{VIEW_TITLES['drop']} (the trap)", style=f"bold {DROP}")
        text.append("   ⠒⠒ ghost → real   ", style=MUTED)
        text.append("⠤⠔⠊ frontier ★", style="bold")
        text.append(f"   ●{LOWER_BOUND_ARROW} lower bound", style=MUTED)
        text.append("   up and left is better", style=MUTED)
        return text

    def _legend(self, points: pl.DataFrame, chart: ParetoChart) -> Group:
        table = Table.grid(padding=(0, 2))
        for justify in ("left", "right", "right", "right", "right", "left"):
            table.add_column(justify=justify, no_wrap=True)
        table.add_row(
            Text("group", style="bold"),
            Text("keep pass", style=f"bold {KEEP}"),
            Text("keep /acc", style=f"bold {KEEP}"),
            Text("drop pass", style=f"bold {DROP}"),
            Text("drop /acc", style=f"bold {DROP}"),
            Text(""),
        )
        labels = self._comparison.labels
        not_recorded = set(not_recorded_groups(self._comparison, self._metric))
        # Rows for the groups the legend lists only (200,000 groups: 1.8 s for every row).
        listed = pl.Series(labels[: self.LEGEND_LIMIT], dtype=pl.String)
        legend = points.filter(pl.col("group").cast(pl.String).is_in(listed.implode()))
        rows = {(row["group"], row["view"]): row for row in legend.iter_rows(named=True)}
        # In label order: the groups with no keep point that are not the unrecorded ones.
        unplotted = (
            points.filter(
                (pl.col("view") == "keep")
                & pl.col("per_accepted").is_null()
                & ~pl.col("group").is_in(pl.Series(list(not_recorded), dtype=pl.String).implode())
            )
            .get_column("group")
            .cast(pl.String)
            .to_list()
        )
        shown_labels = labels[: self.LEGEND_LIMIT]
        names = fit_labels(shown_labels, LEGEND_LABEL)
        for index, (label, name) in enumerate(zip(shown_labels, names, strict=True)):
            keep, drop = rows.get((label, "keep")), rows.get((label, "drop"))

            def figure(row: dict[str, Any] | None, unrecorded: bool = label in not_recorded) -> str:
                if unrecorded:
                    return NOT_RECORDED_TEXT
                if row is None or row["per_accepted"] is None:
                    return MISSING
                shown = chart.exact(row["per_accepted"])
                return f"≥ {shown}" if row["lower_bound"] else shown

            frontier = keep is not None and keep["frontier"]
            table.add_row(
                Text("● " + name, style=chart.colour(index)),
                Text(format_rate(keep["pass_rate"]) if keep else MISSING),
                Text(figure(keep)),
                Text(format_rate(drop["pass_rate"]) if drop else MISSING, style=MUTED),
                Text(figure(drop), style=MUTED),
                Text("★ frontier" if frontier else "", style="bold"),
            )
        parts: list[Any] = [table]
        if len(labels) > self.LEGEND_LIMIT:
            parts.append(
                Text(f"… {format_count(len(labels) - self.LEGEND_LIMIT)} more groups", style=MUTED)
            )
        if not_recorded:
            unit = "cost" if self._metric == "cost" else "usage"
            parts.append(
                Text(
                    f"not plotted, {unit} not recorded (every attempt reads 0 or nothing): "
                    + ", ".join(safe_text(label) for label in labels if label in not_recorded),
                    style=f"italic {MUTED}",
                )
            )
        if unplotted:
            shown = ", ".join(safe_text(label) for label in unplotted[:12])
            more = f" and {len(unplotted) - 12:,} more" if len(unplotted) > 12 else ""
            parts.append(
                Text(
                    "not plotted with failures kept (no accepted attempt"
                    + (" or no known cost" if self._metric == "cost" else "")
                    + f"): {shown}{more}",
                    style=f"italic {MUTED}",
                )
            )
        return Group(*parts)

    def action_save(self) -> None:
        """s: save the chart as SVG (the app asks for the file name)."""
        if self._save is not None and self._empty_words() is None:
            self._save(self._comparison, self._metric)

    async def action_toggle_metric(self) -> None:
        """$: redraw against the other metric (when there are cost figures)."""
        if not self._comparison.has_cost:
            return
        self._metric = "tokens" if self._metric == "cost" else "cost"
        dialog = self.query_one("#pareto-dialog")
        await dialog.remove_children()
        await dialog.mount_all(self._parts())
        self._title()
