"""The keep-vs-drop bars under the summary: spend per accepted result per group, both views."""

from __future__ import annotations

import math
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from tui_ledger.accounting.ledger import Comparison
from tui_ledger.text.labels import fit_labels
from tui_ledger.text.numbers import MISSING, NOT_RECORDED, format_count
from tui_ledger.text.textsafe import safe_text
from tui_ledger.tui.theme import DROP_STYLE, KEEP_STYLE, LABEL_STYLE, MISSING_STYLE, VIEW_STYLES
from tui_ledger.tui.widgets.summary_text import (
    TOKENS,
    MetricColumns,
    exact_figure,
    metric_columns,
)

MAX_BAR_GROUPS = 12
MIN_LABEL = 12
"""Cells a label keeps however narrow the bars (they take at most a third of the width)."""


class Bars(Widget):
    """Keep vs drop spend per accepted result per group, as unicode block bars sized to fit."""

    DEFAULT_CSS = """
    Bars { height: auto; }
    """

    _EIGHTHS = " ▏▎▍▌▋▊▉█"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # Per group: its label, then per view the figure (for the bar) and its text (or,
        # without a figure, why: `MetricColumns.missing_reason`).
        self._rows: list[tuple[str, float | None, str, float | None, str]] = []
        self._more = 0
        self._metric: MetricColumns = TOKENS

    def show(self, comparison: Comparison, labels: list[str], metric: str = "tokens") -> None:
        """Take the figures to draw from a comparison (the first groups, in summary order).

        `labels` name the groups as the summary table does; they are cut further, together
        (`labels.fit_labels`), only where the bars are narrower than the table.
        """
        columns = metric_columns(comparison, metric)
        self._metric = columns
        shown = labels[:MAX_BAR_GROUPS]
        keep = comparison.keep.head(len(shown)).iter_rows(named=True)
        drop = comparison.drop.head(len(shown)).iter_rows(named=True)
        self._rows = [
            (
                label,
                keep_row[columns.value],
                self._text(keep_row),
                drop_row[columns.value],
                self._text(drop_row),
            )
            for label, keep_row, drop_row in zip(shown, keep, drop, strict=True)
        ]
        self._more = max(0, len(labels) - MAX_BAR_GROUPS)
        # Its height as a style, not only `get_content_height`: a refresh(layout=True) asked
        # while the pane handles a Resize (the first fit, in a real terminal) can be lost.
        self.styles.height = 1 + 2 * len(self._rows) + (1 if self._more else 0)
        self.refresh(layout=True)

    def _text(self, row: dict[str, Any]) -> str:
        if row[self._metric.value] is None:
            return self._metric.missing_reason(row)
        return self._metric.fmt(
            exact_figure(self._metric, row), bool(row[self._metric.lower_bound])
        )

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        """Two lines per group, a heading, and a line for groups left out."""
        return 1 + 2 * len(self._rows) + (1 if self._more else 0)

    def _bar(self, value: float | None, scale: float, width: int) -> str:
        if value is None or scale <= 0 or width <= 0:
            return ""
        eighths = round(value / scale * width * 8)
        if value > 0:
            eighths = max(eighths, 1)  # a real, tiny figure still shows
        full, part = divmod(eighths, 8)
        return "█" * full + (self._EIGHTHS[part] if part else "")

    def render(self) -> Text:
        """The chart at the widget's current width."""
        metric = self._metric
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{metric.name} per accepted result  ", style="bold")
        text.append("█ keep", style=KEEP_STYLE)
        text.append("  ")
        text.append("█ drop", style=DROP_STYLE)
        if not self._rows:
            return text
        width = self.size.width or 60
        label_width = min(
            max(cell_len(safe_text(row[0])) for row in self._rows), max(MIN_LABEL, width // 3)
        )
        names = fit_labels([row[0] for row in self._rows], label_width)
        values = [
            v
            for _, keep, _, drop, _ in self._rows
            for v in (keep, drop)
            if v is not None and math.isfinite(v)
        ]
        scale = max(values, default=0.0)
        value_width = max(
            (
                cell_len(figure)
                for _, keep, k, drop, d in self._rows
                for value, figure in ((keep, k), (drop, d))
                if value is not None
            ),
            default=1,
        )
        bar_width = max(4, width - label_width - 6 - value_width - 2)
        for label, (_, keep, keep_text, drop, drop_text) in zip(names, self._rows, strict=True):
            for view, value, figure in (("keep", keep, keep_text), ("drop", drop, drop_text)):
                text.append("\n")
                name = label if view == "keep" else ""
                text.append(name + " " * (label_width - cell_len(name)))
                text.append(f" {view} ", style=LABEL_STYLE)
                bar = self._bar(value, scale, bar_width)
                text.append(bar, style=VIEW_STYLES[view].replace("bold ", ""))
                if value is None:
                    # `not recorded` reads alone; a missing figure's other reasons follow `—`.
                    shown = figure if figure == NOT_RECORDED else f"{MISSING} {figure}"
                    text.append(f" {shown}", style=MISSING_STYLE)
                else:
                    text.append(" " + figure)
        if self._more:
            text.append(f"\n… {format_count(self._more)} more groups", style=LABEL_STYLE)
        return text
