"""The right-hand pane: per-group figures, the focused group in both views, the callout, the bars.

Everything here is drawn from one `Comparison` (computed once per filter or group-by change) and
the current view; a toggle only re-draws. Every string that came from a file (group names, column
names) reaches the screen as `rich.text.Text` through `safe_text`, never as markup.
"""

from __future__ import annotations

import math
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static

from tui_ledger.ledger import VIEW_TITLES, Comparison, View
from tui_ledger.numbers import MISSING, format_count, format_factor, format_rate, format_tokens
from tui_ledger.report import callout
from tui_ledger.textsafe import safe_cell, safe_text

NO_ACCEPTED = "no accepted attempt"
MAX_TABLE_GROUPS = 300  # a table, not a database: keeps a toggle instant when grouping by an id
MAX_BAR_GROUPS = 12

# Styles shared with the stylesheet's palette (see ledger.tcss): keep is teal, drop is coral.
KEEP_STYLE = "bold #2ec4b6"
DROP_STYLE = "bold #ff6b57"
VIEW_STYLES: dict[str, str] = {"keep": KEEP_STYLE, "drop": DROP_STYLE}
LABEL_STYLE = "#8b949e"
MISSING_STYLE = "italic #8b949e"


def per_accepted_text(value: float | None, lower_bound: bool) -> str:
    """Tokens per accepted result as it reads: `3,000`, `≥ 3,000`, or `—`."""
    return format_tokens(value, lower_bound=bool(lower_bound))


def accepted_text(row: dict[str, Any]) -> str:
    """Accepted out of attempts: `1/3`, `63,193/125,041`."""
    return f"{format_count(row['accepted'])}/{format_count(row['attempts'])}"


def _rank_text(row: dict[str, Any]) -> str:
    """A rank, or `—` for a group with no figure to rank."""
    if row["tokens_per_accepted_result"] is None:
        return MISSING
    return format_count(row["rank"])


def _cell(text: str, *, style: str = "", justify: str = "right") -> Text:
    return Text(text, style=style, justify=justify)  # type: ignore[arg-type]


class GroupsTable(DataTable[Text]):
    """The per-group table of the current view; a selected row puts that group under focus."""

    DEFAULT_CSS = """
    GroupsTable { height: auto; max-height: 18; }
    """


class Bars(Widget):
    """Keep vs drop tokens per accepted result per group, as unicode block bars sized to fit."""

    DEFAULT_CSS = """
    Bars { height: auto; }
    """

    _EIGHTHS = " ▏▎▍▌▋▊▉█"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: list[tuple[str, float | None, bool, float | None, bool]] = []
        self._more = 0

    def show(self, comparison: Comparison, labels: list[str]) -> None:
        """Take the figures to draw from a comparison (the first groups, in summary order)."""
        keep, drop = comparison.keep, comparison.drop
        self._rows = [
            (
                label,
                keep["tokens_per_accepted_result"][index],
                bool(keep["lower_bound"][index]),
                drop["tokens_per_accepted_result"][index],
                bool(drop["lower_bound"][index]),
            )
            for index, label in enumerate(labels[:MAX_BAR_GROUPS])
        ]
        self._more = max(0, len(labels) - MAX_BAR_GROUPS)
        self.refresh(layout=True)

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
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("tokens per accepted result  ", style="bold")
        text.append("█ keep", style=KEEP_STYLE)
        text.append("  ")
        text.append("█ drop", style=DROP_STYLE)
        if not self._rows:
            return text
        width = self.size.width or 60
        label_width = min(16, max(cell_len(safe_text(row[0])) for row in self._rows))
        values = [
            v
            for _, keep, _, drop, _ in self._rows
            for v in (keep, drop)
            if v is not None and math.isfinite(v)
        ]
        scale = max(values, default=0.0)
        value_width = max(
            (
                cell_len(per_accepted_text(v, lb))
                for _, k, klb, d, dlb in self._rows
                for v, lb in ((k, klb), (d, dlb))
            ),
            default=1,
        )
        bar_width = max(4, width - label_width - 6 - value_width - 2)
        for label, keep, keep_lb, drop, drop_lb in self._rows:
            for view, value, lower in (("keep", keep, keep_lb), ("drop", drop, drop_lb)):
                text.append("\n")
                name = safe_cell(label, label_width) if view == "keep" else ""
                text.append(name + " " * (label_width - cell_len(name)))
                text.append(f" {view} ", style=LABEL_STYLE)
                bar = self._bar(value, scale, bar_width)
                text.append(bar, style=VIEW_STYLES[view].replace("bold ", ""))
                if value is None:
                    text.append(f" {MISSING} {NO_ACCEPTED}", style=MISSING_STYLE)
                else:
                    text.append(" " + per_accepted_text(value, lower))
        if self._more:
            text.append(f"\n… {format_count(self._more)} more groups", style=LABEL_STYLE)
        return text


class SummaryPane(VerticalScroll, can_focus=False):
    """Per-group summary of the current view, the focused group in both views, callout, bars."""

    class GroupSelected(Message):
        """The user moved the summary's cursor to a group."""

        def __init__(self, label: str) -> None:
            super().__init__()
            self.label = label

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._comparison: Comparison | None = None
        self._view: View = "keep"
        self._labels: list[str] = []  # the rows of the groups table (at most MAX_TABLE_GROUPS)
        self._all_labels: list[str] = []  # every group of the comparison, in summary order
        self._index: dict[str, int] = {}

    def compose(self) -> ComposeResult:
        """The pieces, top to bottom."""
        table = GroupsTable(id="groups", cursor_type="row", zebra_stripes=False)
        table.can_focus = True
        yield table
        yield Static(id="missing-note")
        yield Static(id="focus")
        yield Static(id="callout")
        yield Bars(id="bars")
        yield Static(id="warnings-line")

    @property
    def groups_table(self) -> GroupsTable:
        """The per-group table."""
        return self.query_one(GroupsTable)

    @property
    def selected_label(self) -> str | None:
        """The group the summary's cursor is on."""
        row = self.groups_table.cursor_row
        return self._labels[row] if 0 <= row < len(self._labels) else None

    def show(
        self,
        comparison: Comparison,
        view: View,
        focus_label: str | None,
        warning_count: int,
        note_count: int = 0,
    ) -> None:
        """Draw a comparison in a view; `focus_label` is the group under focus."""
        self._comparison = comparison
        self._view = view
        # `Comparison.labels` is computed on each access: read it once per comparison.
        self._all_labels = comparison.labels
        self._index = {label: index for index, label in enumerate(self._all_labels)}
        self._labels = self._all_labels[:MAX_TABLE_GROUPS]
        self.border_title = Text.assemble(
            ("Summary by ", "bold"),
            (safe_text(" · ".join(comparison.by)), "bold"),
            ("  ", ""),
            (VIEW_TITLES[view], VIEW_STYLES[view]),
        )
        self._fill_table(comparison, view, focus_label)
        self.query_one(Bars).show(comparison, self._all_labels)
        self.query_one("#callout", Static).update(self._callout_text(comparison))
        self.show_warnings(warning_count, note_count)
        self.focus_group(focus_label)

    def show_warnings(self, count: int, notes: int = 0) -> None:
        """The `⚠ N warnings (w)` line (and informational notes, if any)."""
        line = self.query_one("#warnings-line", Static)
        text = Text()
        if count:
            noun = "warning" if count == 1 else "warnings"
            text.append(f"⚠ {format_count(count)} {noun}", style="bold #e3b341")
        else:
            text.append("✓ no warnings", style=LABEL_STYLE)
        if notes:
            text.append(f" · {format_count(notes)} note{'s' if notes != 1 else ''}", LABEL_STYLE)
        if count or notes:
            text.append(" (w)", style=LABEL_STYLE)
        line.update(text)

    def focus_group(self, label: str | None) -> None:
        """Show a group's figures in both views side by side, and put the summary cursor on it."""
        focus = self.query_one("#focus", Static)
        comparison = self._comparison
        if comparison is None or label is None or label not in self._index:
            focus.update("")
            return
        index = self._index[label]
        focus.update(self._focus_text(comparison, index))
        table = self.groups_table
        if index < table.row_count and table.cursor_row != index and not table.has_focus:
            table.move_cursor(row=index, animate=False)

    # ------------------------------------------------------------------ drawing

    def _fill_table(self, comparison: Comparison, view: View, focus_label: str | None) -> None:
        table = self.groups_table
        frame = comparison.view(view)
        trap = comparison.trap
        show_missing = bool(frame["missing_usage"].sum())
        title = safe_text(" · ".join(comparison.by))
        # The figure that matters first, with its trap factor and rank; the inputs after it
        # (on a narrow pane or with huge counts, those are what scroll out of sight).
        columns: list[tuple[str, str]] = [
            (title, "left"),
            ("per accepted", "right"),
            ("trap", "right"),
            ("#", "right"),
            ("att", "right"),
            ("acc", "right"),
            ("pass", "right"),
        ]
        if show_missing:
            columns.append(("no usage", "right"))
        columns += [("median", "right"), ("total", "right")]
        previous = table.cursor_row
        table.clear(columns=True)
        for heading, justify in columns:
            table.add_column(_cell(heading, style="bold", justify=justify), key=heading)
        rows: list[list[Text]] = []
        view_style = VIEW_STYLES[view]
        any_null = False
        for label, row, trap_row in zip(
            self._labels,
            frame.head(MAX_TABLE_GROUPS).iter_rows(named=True),
            trap.head(MAX_TABLE_GROUPS).iter_rows(named=True),
            strict=False,
        ):
            per_accepted = row["tokens_per_accepted_result"]
            any_null = any_null or per_accepted is None
            factor = trap_row["trap_factor"]
            cells = [
                _cell(safe_cell(label, 24), justify="left"),
                _cell(
                    per_accepted_text(per_accepted, row["lower_bound"]),
                    style=view_style if per_accepted is not None else MISSING_STYLE,
                ),
                _cell(
                    "" if factor is not None and factor == 1.0 else format_factor(factor),
                    style=DROP_STYLE.replace("bold ", "") if factor and factor > 1.0 else "",
                ),
                _cell(_rank_text(row)),
                _cell(format_count(row["attempts"])),
                _cell(accepted_text(row)),
                _cell(format_rate(row["pass_rate"])),
            ]
            if show_missing:
                missing = row["missing_usage"]
                cells.append(_cell(format_count(missing), style="#e3b341" if missing else ""))
            cells += [
                _cell(format_tokens(row["median_tokens_per_attempt"])),
                _cell(format_tokens(row["total_tokens"])),
            ]
            rows.append(cells)
        table.add_rows(rows)
        note = self.query_one("#missing-note", Static)
        extra: list[str] = []
        if any_null:
            extra.append(f"{MISSING} per accepted: {NO_ACCEPTED}")
        if bool(frame["lower_bound"].any()):
            extra.append("≥ lower bound: some usage is missing")
        if len(self._all_labels) > MAX_TABLE_GROUPS:
            extra.append(
                f"first {format_count(MAX_TABLE_GROUPS)} of "
                f"{format_count(len(self._all_labels))} groups (filter to narrow; exports hold all)"
            )
        note.update(Text("  ·  ".join(extra), style=MISSING_STYLE))
        note.display = bool(extra)
        target = self._index.get(focus_label, previous) if focus_label else previous
        target = target if target < len(self._labels) else previous
        if rows:
            table.move_cursor(row=min(max(target, 0), len(rows) - 1), animate=False)

    def _focus_text(self, comparison: Comparison, index: int) -> Text:
        keep = comparison.keep.row(index, named=True)
        drop = comparison.drop.row(index, named=True)
        trap = comparison.trap.row(index, named=True)
        label = self._all_labels[index]
        lines: list[tuple[str, str, str]] = [
            ("attempts", format_count(keep["attempts"]), format_count(drop["attempts"])),
            ("accepted", accepted_text(keep), accepted_text(drop)),
            (
                "median / attempt",
                format_tokens(keep["median_tokens_per_attempt"]),
                format_tokens(drop["median_tokens_per_attempt"]),
            ),
            (
                "total tokens",
                format_tokens(keep["total_tokens"]),
                format_tokens(drop["total_tokens"]),
            ),
            (
                "per accepted result",
                per_accepted_text(keep["tokens_per_accepted_result"], keep["lower_bound"]),
                per_accepted_text(drop["tokens_per_accepted_result"], drop["lower_bound"]),
            ),
            (
                "rank",
                format_count(keep["rank"])
                if keep["tokens_per_accepted_result"] is not None
                else MISSING,
                format_count(drop["rank"])
                if drop["tokens_per_accepted_result"] is not None
                else MISSING,
            ),
        ]
        # Each view's column is as wide as its widest figure (a heading at the least).
        widest = max(
            cell_len(value)
            for _, keep_value, drop_value in lines
            for value in (keep_value, drop_value)
        )
        width = max(len(VIEW_TITLES["keep"]) + 3, widest + 2)
        label_width = 20
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("▸ ", style="bold")
        name = safe_cell(label, label_width)
        text.append(name, style="bold")
        text.append(" " * max(1, label_width - cell_len(name)))
        for view in ("keep", "drop"):
            style = VIEW_STYLES[view] + (" reverse" if view == self._view else "")
            text.append(" " * (width - len(VIEW_TITLES[view]) - 2))
            text.append(f" {VIEW_TITLES[view]} ", style=style)
        for name, keep_value, drop_value in lines:
            emphasis = "bold" if name == "per accepted result" else ""
            text.append("\n  ")
            text.append(name.ljust(label_width), style=LABEL_STYLE)
            text.append(keep_value.rjust(width - 1) + " ", style=emphasis)
            text.append(drop_value.rjust(width - 1) + " ", style=emphasis)
        if keep["tokens_per_accepted_result"] is None:
            text.append(f"\n  {MISSING} {NO_ACCEPTED}: nothing to divide by", style=MISSING_STYLE)
        factor = trap["trap_factor"]
        text.append("\n  ")
        text.append("trap factor".ljust(label_width), style=LABEL_STYLE)
        text.append(
            format_factor(factor).rjust(width - 1),
            style=DROP_STYLE if factor is not None and factor > 1.0 else "bold",
        )
        hidden_attempts = trap["hidden_attempts"]
        if hidden_attempts:
            text.append("\n  ")
            text.append("hidden when dropped".ljust(label_width), style=LABEL_STYLE)
            text.append(
                f"{format_count(hidden_attempts)} attempt{'s' if hidden_attempts != 1 else ''}"
                f" · {format_tokens(trap['hidden_tokens'])} tokens",
                style=DROP_STYLE.replace("bold ", ""),
            )
        return text

    def _callout_text(self, comparison: Comparison) -> Text:
        if comparison.keep.height == 0:
            return Text("No attempts match the filter.", style=MISSING_STYLE)
        sentence = safe_text(callout(comparison))
        style = "bold #ff9e64" if comparison.flips else ""
        return Text.assemble(("» ", "bold #ff9e64"), (sentence, style))

    # ------------------------------------------------------------------ events

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """A row chosen in the summary puts its group under focus."""
        event.stop()
        if not self.groups_table.has_focus:
            return  # the app moved it to follow the attempts table's cursor
        if 0 <= event.cursor_row < len(self._labels):
            self.post_message(self.GroupSelected(self._labels[event.cursor_row]))
