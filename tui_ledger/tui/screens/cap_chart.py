"""The cap sweep drawn in the terminal (`B` on the Pareto chart's screen): tokens per accepted
result against the token cap, one braille line per group, each group's best cap marked `●`,
and a legend with the best cap, its figure and the accepted results it keeps and loses
(`cap_sweep.Sweep`: the same figures as `summary --cap-sweep`)."""

from __future__ import annotations

import itertools
from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Label, Static

from tui_ledger.accounting.cap_sweep import Sweep
from tui_ledger.accounting.comparison import group_labels
from tui_ledger.text.labels import fit_labels
from tui_ledger.text.numbers import MISSING, format_compact, format_count, format_tokens
from tui_ledger.tui.screens.pareto_screen import BrailleCanvas, XAxis
from tui_ledger.tui.screens.screens import _Dialog
from tui_ledger.tui.theme import KEY_STYLE, MUTED, SERIES

LEGEND_LIMIT = 6
"""Groups the legend lists (the chart draws every group; 80x24 holds this many rows)."""
LEGEND_NAME = 24


class CapSweepChart(Widget):
    """The curves and best caps, with the figure's range on the left and the caps below."""

    DEFAULT_CSS = """
    CapSweepChart { height: 1fr; min-height: 6; }
    """

    def __init__(self, sweep: Sweep) -> None:
        super().__init__()
        self.sweep = sweep
        self.labels = group_labels(sweep.best, list(sweep.by))
        self.curves: dict[str, list[tuple[float, float]]] = {label: [] for label in self.labels}
        curve_labels = group_labels(sweep.curve, list(sweep.by))
        for label, row in zip(curve_labels, sweep.curve.iter_rows(named=True), strict=True):
            if row["tokens_per_accepted_result"] is not None:
                self.curves[label].append((row["cap"], row["tokens_per_accepted_result"]))

    def render(self) -> Text:
        """The chart at the widget's size."""
        width, height = self.size.width or 80, self.size.height or 12
        left = 8  # "  1.2M ┤"
        plot_width, plot_height = max(10, width - left - 1), max(3, height - 2)
        canvas = BrailleCanvas(plot_width, plot_height)
        figures = [value for points in self.curves.values() for _, value in points] or [1.0]
        x = XAxis([float(cap) for cap in self.sweep.caps] or [1.0])
        y = XAxis(figures)
        dots_x, dots_y = plot_width * 2 - 1, plot_height * 4 - 1

        def at(cap: float, value: float) -> tuple[float, float]:
            return x.share(cap) * dots_x, (1 - y.share(value)) * dots_y

        for index, label in enumerate(self.labels):
            points = self.curves[label]
            for first, second in itertools.pairwise(points):
                canvas.line(at(*first), at(*second), SERIES[index % len(SERIES)])
        for index, row in enumerate(self.sweep.best.iter_rows(named=True)):
            if row["cap"] is not None:
                dot_x, dot_y = at(row["cap"], row["tokens_per_accepted_result"])
                style = f"bold {SERIES[index % len(SERIES)]}"
                canvas.put(int(dot_x // 2), int(dot_y // 4), "●", style)
        out = Text(no_wrap=True)
        rows = canvas.lines()
        top, bottom = format_compact(y.high), format_compact(y.low)
        for index, drawn in enumerate(rows):
            tick = top if index == 0 else bottom if index == len(rows) - 1 else ""
            out.append(f"{tick:>6} {'┤' if tick else '│'}", style=MUTED)
            out.append_text(drawn)
            out.append("\n")
        out.append(" " * 7 + "└" + "─" * plot_width + "\n", style=MUTED)
        low, high = format_compact(x.low), format_compact(x.high)
        caption = f"token cap{' (log)' if x.log else ''} →"
        gap = max(1, plot_width - len(low) - len(high) - len(caption) - 2)
        axis = f"{low} {caption.center(gap)} {high}"
        out.append(" " * 8 + axis, style=MUTED)
        return out


class CapSweepScreen(_Dialog):
    """The sweep chart and its legend; Esc (or B) goes back to the Pareto chart."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,B", "close", "back", show=False),
    ]

    def __init__(self, sweep: Sweep) -> None:
        super().__init__()
        self._sweep = sweep

    def compose(self) -> ComposeResult:
        """Heading, chart, legend, keys."""
        with Vertical(id="cap-sweep-dialog", classes="dialog"):
            yield Static(
                Text(
                    "tokens per accepted result (up) against a hard token cap per attempt; "
                    "● each group's best cap",
                    style=MUTED,
                ),
                id="cap-sweep-heading",
            )
            yield CapSweepChart(self._sweep)
            yield Static(self._legend(), id="cap-sweep-legend")
            hint = Text.assemble(("Esc", KEY_STYLE), (" back", MUTED))
            yield Label(hint, classes="dialog-hint")

    def on_mount(self) -> None:
        """Title the frame."""
        self.query_one("#cap-sweep-dialog").border_title = "Cap sweep · best token cap per group"

    def _legend(self) -> Group:
        table = Table.grid(padding=(0, 2))
        for justify in ("left", "right", "right", "right", "right"):
            table.add_column(justify=justify, no_wrap=True)
        table.add_row(
            *(Text(h, style="bold") for h in ("group", "best cap", "per acc", "kept", "lost"))
        )
        labels = group_labels(self._sweep.best, list(self._sweep.by))
        names = fit_labels(labels[:LEGEND_LIMIT], LEGEND_NAME)
        rows = self._sweep.best.head(LEGEND_LIMIT).iter_rows(named=True)
        for index, (name, row) in enumerate(zip(names, rows, strict=True)):
            best = row["cap"] is not None
            table.add_row(
                Text("● " + name, style=SERIES[index % len(SERIES)]),
                Text(format_count(row["cap"]) if best else MISSING),
                Text(format_tokens(row["tokens_per_accepted_result"]) if best else MISSING),
                Text(format_count(row["accepted"]) if best else MISSING),
                Text(format_count(row["accepted_lost"]) if best else MISSING),
            )
        parts: list[Table | Text] = [table]
        if len(labels) > LEGEND_LIMIT:
            more = len(labels) - LEGEND_LIMIT
            parts.append(
                Text(f"… {format_count(more)} more groups (summary --cap-sweep lists all)")
            )
        return Group(*parts)
