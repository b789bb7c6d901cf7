"""The right-hand pane: per-group figures, the focused group in both views, the callout, the bars.

Everything here is drawn from one `Comparison` (computed once per filter or group-by change), the
current view and the headline metric (tokens or cost per accepted result); a toggle of either
only re-draws. Intervals stay out of the groups table (a `†` marks a figure whose interval says
little); the focused group's block shows them. Every string that came from a file (group names,
column names) reaches the screen as `rich.text.Text` through `safe_text`, never as markup.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from tui_ledger.ledger import VIEW_TITLES, Comparison, View
from tui_ledger.numbers import (
    MISSING,
    NOTE_MARK,
    exact_per_accepted,
    format_compact,
    format_count,
    format_factor,
    format_interval,
    format_money,
    format_rate,
    format_tokens,
)
from tui_ledger.textsafe import safe_cell, safe_text
from tui_ledger.tui.groups_table import GroupsTable
from tui_ledger.tui.theme import (
    ATTENTION_STYLE,
    CALLOUT_STYLE,
    DROP_STYLE,
    KEEP_STYLE,
    KEY_STYLE,
    LABEL_STYLE,
    MISSING_STYLE,
    VIEW_STYLES,
)
from tui_ledger.wording import plural

NO_ACCEPTED = "no accepted attempt"
UNPRICED = "unpriced"
MAX_TABLE_GROUPS = 300  # a table, not a database: keeps a toggle instant when grouping by an id
MAX_BAR_GROUPS = 12


Metric = Literal["tokens", "cost"]


def per_accepted_text(value: float | None, lower_bound: bool) -> str:
    """Tokens per accepted result as it reads: `3,000`, `≥ 3,000`, or `—`."""
    return format_tokens(value, lower_bound=bool(lower_bound))


def _money(value: float | None, lower_bound: bool = False) -> str:
    return format_money(value, lower_bound=bool(lower_bound))


def _tokens(value: float | None, lower_bound: bool = False) -> str:
    return format_tokens(value, lower_bound=bool(lower_bound))


@dataclass(frozen=True)
class MetricColumns:
    """Where one headline metric lives in the comparison's frames, and how its figures read."""

    name: Metric
    value: str
    lower_bound: str
    rank: str
    total: str
    missing: str
    trap_factor: str
    hidden: str
    heading: str
    """The groups table's heading for the figure."""
    short: str
    """A short name for the secondary column and the bars."""
    fmt: Callable[[float | None, bool], str]
    interval_kind: str

    def missing_reason(self, row: dict[str, Any]) -> str:
        """Why a group has no figure: nothing accepted, or (cost) no known cost at all."""
        if not row["accepted"]:
            return NO_ACCEPTED
        return UNPRICED if self.name == "cost" else "no usage known"

    def compact_interval(self, low: float | None, high: float | None) -> str:
        """The interval without brackets, short: `31k–38k`, `$0.055–$0.066`, `1.0k–∞`."""
        if low is None and high is None:
            return MISSING
        if self.name == "cost":
            low_text, high_text = format_money(low), format_money(high)
            if low_text == high_text and low is not None and high is not None and low != high:
                # A tight interval on a big group: more digits, until the two ends differ.
                for decimals in range(3, 8):
                    low_text, high_text = f"${low:,.{decimals}f}", f"${high:,.{decimals}f}"
                    if low_text != high_text:
                        break
            return f"{low_text}–{high_text}"
        low_text, high_text = format_compact(low), format_compact(high)
        if low_text == high_text and low is not None and high is not None and low != high:
            low_text, high_text = format_count(round(low)), format_count(round(high))
        return f"{low_text}–{high_text}"


TOKENS = MetricColumns(
    name="tokens",
    value="tokens_per_accepted_result",
    lower_bound="lower_bound",
    rank="rank",
    total="total_tokens",
    missing="missing_usage",
    trap_factor="trap_factor",
    hidden="hidden_tokens",
    heading="per accepted",
    short="tokens/acc",
    fmt=_tokens,
    interval_kind="count",
)
COST = MetricColumns(
    name="cost",
    value="cost_per_accepted_result",
    lower_bound="cost_lower_bound",
    rank="cost_rank",
    total="total_cost",
    missing="missing_cost",
    trap_factor="cost_trap_factor",
    hidden="hidden_cost",
    heading="$ per accepted",
    short="$/acc",
    fmt=_money,
    interval_kind="money",
)
METRICS: dict[str, MetricColumns] = {"tokens": TOKENS, "cost": COST}


def metric_columns(comparison: Comparison, metric: str) -> MetricColumns:
    """The metric asked for, or tokens when the comparison has no cost figures."""
    return COST if metric == "cost" and comparison.has_cost else TOKENS


def figure_text(metric: MetricColumns, row: dict[str, Any]) -> str:
    """A group's headline figure: `3,000`, `≥ $0.043`, or `— unpriced` / `—`."""
    value = row[metric.value]
    if value is None:
        reason = metric.missing_reason(row)
        return f"{MISSING} {UNPRICED}" if reason == UNPRICED else MISSING
    return metric.fmt(_exact(metric, row), bool(row[metric.lower_bound]))


def _exact(metric: MetricColumns, row: dict[str, Any]) -> Any:
    """A group's headline figure to print: for tokens, the exact division, since past 2**53
    the Float64 ratio rounds its last digits."""
    if metric is not TOKENS or row[metric.value] is None:
        return row[metric.value]
    return exact_per_accepted(row)


def accepted_text(row: dict[str, Any]) -> str:
    """Accepted out of attempts: `1/3`, `63,193/125,041`."""
    return f"{format_count(row['accepted'])}/{format_count(row['attempts'])}"


def _rank_text(row: dict[str, Any], metric: MetricColumns = TOKENS) -> str:
    """A rank, or `—` for a group with no figure to rank."""
    if row[metric.value] is None:
        return MISSING
    return format_count(row[metric.rank])


def _cell(text: str, *, style: str = "", justify: str = "right") -> Text:
    return Text(text, style=style, justify=justify)  # type: ignore[arg-type]


def cost_callout(comparison: Comparison) -> str:
    """The callout in money: what dropping failures hides in USD, and the cost ranking's moves."""
    hidden_attempts = comparison.hidden_attempts
    if hidden_attempts == 0:
        return "Every attempt here was accepted, so dropping failures changes nothing."
    hidden = comparison.hidden_cost
    hides = (
        f"Dropping failures hides {format_money(hidden)} of spend"
        if hidden is not None
        else "Dropping failures hides an unknown amount of spend"
    )
    hides += f" in {format_count(hidden_attempts)} attempts"
    if comparison.keep["cost_per_accepted_result"].null_count() == comparison.keep.height:
        return f"{hides}; no group has a known cost to rank (unpriced: see w)."
    labels = comparison.labels
    trap = comparison.trap
    keep, drop = comparison.keep, comparison.drop
    moves = [
        (label, int(k), int(d))
        for label, k, d in zip(labels, trap["keep_cost_rank"], trap["drop_cost_rank"], strict=True)
        if k != d
    ]
    if not moves:
        return f"{hides}; the cost ranking does not change."

    def best(frame: Any) -> int | None:
        for index, (rank, value) in enumerate(
            zip(frame["cost_rank"], frame["cost_per_accepted_result"], strict=True)
        ):
            if rank == 1 and value is not None:
                return index
        return None

    keep_best, drop_best = best(keep), best(drop)
    if keep_best is not None and drop_best is not None and keep_best != drop_best:
        return (
            f"{hides} and flips the cost ranking: {labels[drop_best]} looks cheapest "
            f"({format_money(drop['cost_per_accepted_result'][drop_best])} per accepted result) "
            f"but {labels[keep_best]} is cheaper "
            f"({format_money(keep['cost_per_accepted_result'][keep_best])} vs "
            f"{format_money(keep['cost_per_accepted_result'][drop_best])} when failures are kept)."
        )
    moved = ", ".join(f"{label} #{k}→#{d}" for label, k, d in moves)
    return f"{hides} and reorders the cost ranking ({moved})."


# When the groups table is wider than its pane, headings shorten first, then the columns least
# needed to read the comparison leave, in this order (the label and headline never do).
SHORT_HEADINGS: dict[str, str] = {
    "per accepted": "per acc",
    "$ per accepted": "$/acc",
    "no usage": "no use",
    "median": "med",
}
LEAVE_FIRST: tuple[str, ...] = (
    "att",  # acc reads "61/90": the attempts are its denominator
    "no cost",
    "no usage",
    "median",
    "#",
    "total $",
    "pass",  # acc reads "61/90": the rate is its quotient
    "tokens/acc",  # the other metric's headline stays longer than the rate
    "$/acc",
    "total",
    "trap",
)
CELL_PADDING = 2  # the groups table's padding, one cell on each side


def fit_columns(
    headings: list[str], rows: list[list[Text]], width: int
) -> tuple[list[tuple[str, str]], list[list[Text]], list[str]]:
    """Fit a table into `width` cells: shorter headings, then columns leave in `LEAVE_FIRST`
    order. Returns (shown heading, original heading) per kept column, the rows with those
    columns, and the headings left out. `width` 0 (not laid out yet) keeps everything."""
    values = [
        max((cell_len(row[i].plain) for row in rows), default=0) for i in range(len(headings))
    ]

    def total(names: list[str], keep: list[int]) -> int:
        return sum(max(cell_len(names[i]), values[i]) + CELL_PADDING for i in keep)

    shown = list(headings)
    keep = list(range(len(headings)))
    if width > 0 and total(shown, keep) > width:
        shown = [SHORT_HEADINGS.get(name, name) for name in headings]
        left: list[int] = []
        for name in LEAVE_FIRST:
            if total(shown, keep) <= width:
                break
            left += [i for i in keep if i >= 2 and headings[i] == name]
            keep = [i for i in keep if i not in left]
        for index in reversed(left):  # a narrow column that left early may fit again
            if total(shown, sorted([*keep, index])) <= width:
                keep = sorted([*keep, index])
    left_out = [headings[i] for i in range(len(headings)) if i not in keep]
    return (
        [(shown[i], headings[i]) for i in keep],
        [[row[i] for i in keep] for row in rows],
        left_out,
    )


class Bars(Widget):
    """Keep vs drop spend per accepted result per group, as unicode block bars sized to fit."""

    DEFAULT_CSS = """
    Bars { height: auto; }
    """

    _EIGHTHS = " ▏▎▍▌▋▊▉█"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # Per group: its label, then per view the figure (for the bar) and its text.
        self._rows: list[tuple[str, float | None, str, float | None, str]] = []
        self._more = 0
        self._metric: MetricColumns = TOKENS

    def show(self, comparison: Comparison, labels: list[str], metric: str = "tokens") -> None:
        """Take the figures to draw from a comparison (the first groups, in summary order)."""
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
        self.refresh(layout=True)

    def _text(self, row: dict[str, Any]) -> str:
        if row[self._metric.value] is None:
            return ""
        return self._metric.fmt(_exact(self._metric, row), bool(row[self._metric.lower_bound]))

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
        label_width = min(16, max(cell_len(safe_text(row[0])) for row in self._rows))
        values = [
            v
            for _, keep, _, drop, _ in self._rows
            for v in (keep, drop)
            if v is not None and math.isfinite(v)
        ]
        scale = max(values, default=0.0)
        value_width = max(
            (cell_len(figure) for _, _, k, _, d in self._rows for figure in (k, d)),
            default=1,
        )
        bar_width = max(4, width - label_width - 6 - value_width - 2)
        for label, keep, keep_text, drop, drop_text in self._rows:
            for view, value, figure in (("keep", keep, keep_text), ("drop", drop, drop_text)):
                text.append("\n")
                name = safe_cell(label, label_width) if view == "keep" else ""
                text.append(name + " " * (label_width - cell_len(name)))
                text.append(f" {view} ", style=LABEL_STYLE)
                bar = self._bar(value, scale, bar_width)
                text.append(bar, style=VIEW_STYLES[view].replace("bold ", ""))
                if value is None:
                    reason = UNPRICED if metric.name == "cost" and keep is not None else ""
                    text.append(f" {MISSING} {reason or NO_ACCEPTED}", style=MISSING_STYLE)
                else:
                    text.append(" " + figure)
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
        self._metric: MetricColumns = TOKENS
        self._labels: list[str] = []  # the rows of the groups table (at most MAX_TABLE_GROUPS)
        self._all_labels: list[str] = []  # every group of the comparison, in summary order
        self._index: dict[str, int] = {}
        # Shown before the first layout: the table waits for a width (`on_resize`), and this
        # is the group to put its cursor on then.
        self._unfitted = False
        self._unfitted_focus: str | None = None

    def compose(self) -> ComposeResult:
        """The pieces, top to bottom."""
        yield GroupsTable(id="groups")
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
    def metric(self) -> Metric:
        """The headline metric drawn now."""
        return self._metric.name

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
        *,
        metric: str = "tokens",
        hint: str = "",
    ) -> None:
        """Draw a comparison in a view; `focus_label` is the group under focus.

        `metric` is the headline ("tokens" or "cost"; cost needs cost figures); `hint` is a short
        line of keys shown after the warnings count.
        """
        self._comparison = comparison
        self._view = view
        self._metric = metric_columns(comparison, metric)
        # `Comparison.labels` is computed on each access: read it once per comparison.
        self._all_labels = comparison.labels
        self._index = {label: index for index, label in enumerate(self._all_labels)}
        self._labels = self._all_labels[:MAX_TABLE_GROUPS]
        title = Text.assemble(
            ("Summary by ", "bold"),
            (safe_text(" · ".join(comparison.by)), "bold"),
            ("  ", ""),
            (VIEW_TITLES[view], VIEW_STYLES[view]),
        )
        if comparison.has_cost:
            title.append(f"  {self._metric.name} per accepted result", style=LABEL_STYLE)
        self.border_title = title
        self._fill_table(comparison, view, focus_label)
        self.query_one(Bars).show(comparison, self._all_labels, self._metric.name)
        self.query_one("#callout", Static).update(self._callout_text(comparison))
        self.show_warnings(warning_count, note_count, hint)
        self.focus_group(focus_label)

    def show_warnings(self, count: int, notes: int = 0, hint: str = "") -> None:
        """The `⚠ N warnings (w)` line (and informational notes, and a hint of keys, if any)."""
        line = self.query_one("#warnings-line", Static)
        text = Text()
        if count:
            noun = "warning" if count == 1 else "warnings"
            text.append(f"⚠ {format_count(count)} {noun}", style=KEY_STYLE)
        else:
            text.append("✓ no warnings", style=LABEL_STYLE)
        if notes:
            text.append(f" · {plural(notes, 'note')}", LABEL_STYLE)
        if count or notes:
            text.append(" (w)", style=LABEL_STYLE)
        if hint:
            text.append(f"   {hint}", style=LABEL_STYLE)
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
            table.move_cursor(index)

    # ------------------------------------------------------------------ drawing

    def _table_width(self) -> int:
        """Cells the groups table can use without scrolling sideways (0: not laid out yet)."""
        return max(0, self.content_size.width - 1)  # the vertical scrollbar's column

    def on_resize(self) -> None:
        """Fit the groups table to the new width (the first time, when shown before layout)."""
        if self._comparison is not None:
            label = self._unfitted_focus if self._unfitted else self.selected_label
            self._fill_table(self._comparison, self._view, label)

    def _fill_table(self, comparison: Comparison, view: View, focus_label: str | None) -> None:
        if self._table_width() == 0:
            # Not laid out yet (the app shows a small file before its first frame): with every
            # column, the table would scroll sideways and keep that scrollbar's line once fitted.
            self._unfitted, self._unfitted_focus = True, focus_label
            return
        self._unfitted = False
        table = self.groups_table
        frame = comparison.view(view)
        trap = comparison.trap
        metric = self._metric
        with_cost = comparison.has_cost
        other = (COST if metric is TOKENS else TOKENS) if with_cost else None
        show_missing = bool(frame["missing_usage"].sum())
        # Missing cost is mostly missing usage (an unpriced bucket): a column only when it differs.
        show_missing_cost = with_cost and not frame["missing_cost"].equals(frame["missing_usage"])
        title = safe_text(" · ".join(comparison.by))
        # The figure that matters first, with its trap factor and rank; the inputs after it
        # (on a narrow pane or with huge counts, those are what scroll out of sight).
        columns: list[tuple[str, str]] = [
            (title, "left"),
            (metric.heading, "right"),
            ("trap", "right"),
            ("#", "right"),
            ("att", "right"),
            ("acc", "right"),
            ("pass", "right"),
        ]
        if show_missing:
            columns.append(("no usage", "right"))
        if show_missing_cost:
            columns.append(("no cost", "right"))
        if other is not None:
            columns.append((other.short, "right"))
        if with_cost:
            columns.append(("total $", "right"))
        columns += [("median", "right"), ("total", "right")]
        previous = table.cursor_row
        rows: list[list[Text]] = []
        view_style = VIEW_STYLES[view]
        any_null = any_unpriced = any_note = False
        for label, row, trap_row in zip(
            self._labels,
            frame.head(MAX_TABLE_GROUPS).iter_rows(named=True),
            trap.head(MAX_TABLE_GROUPS).iter_rows(named=True),
            strict=False,
        ):
            value = row[metric.value]
            if value is None:
                if metric.missing_reason(row) == UNPRICED:
                    any_unpriced = True
                else:
                    any_null = True
            note = NOTE_MARK if value is not None and row["ci_note"] else ""
            any_note = any_note or bool(note)
            factor = trap_row[metric.trap_factor]
            cells = [
                _cell(safe_cell(label, 24), justify="left"),
                _cell(
                    figure_text(metric, row) + note,
                    style=view_style if value is not None else MISSING_STYLE,
                ),
                _cell(
                    "" if factor is not None and factor == 1.0 else format_factor(factor),
                    style=DROP_STYLE.replace("bold ", "") if factor and factor > 1.0 else "",
                ),
                _cell(_rank_text(row, metric)),
                _cell(format_count(row["attempts"])),
                _cell(accepted_text(row)),
                _cell(format_rate(row["pass_rate"])),
            ]
            if show_missing:
                missing = row["missing_usage"]
                cells.append(_cell(format_count(missing), style=ATTENTION_STYLE if missing else ""))
            if show_missing_cost:
                missing = row["missing_cost"]
                cells.append(_cell(format_count(missing), style=ATTENTION_STYLE if missing else ""))
            if other is not None:
                other_value = row[other.value]
                if other_value is None and other is COST and other.missing_reason(row) == UNPRICED:
                    any_unpriced = True
                cells.append(
                    _cell(
                        figure_text(other, row),
                        style="" if other_value is not None else MISSING_STYLE,
                    )
                )
            if with_cost:
                total_cost = row["total_cost"]
                cells.append(
                    _cell(
                        format_money(total_cost) if total_cost is not None else MISSING,
                        style="" if total_cost is not None else MISSING_STYLE,
                    )
                )
            cells += [
                _cell(format_tokens(row["median_tokens_per_attempt"])),
                _cell(format_tokens(row["total_tokens"])),
            ]
            rows.append(cells)
        headings, rows, left_out = fit_columns(
            [heading for heading, _ in columns], rows, self._table_width()
        )
        justify = dict(columns)
        target = self._index.get(focus_label, previous) if focus_label else previous
        target = target if target < len(self._labels) else previous
        table.fill(
            [
                (original, Text(heading, style="bold"), justify[original])  # type: ignore[misc]
                for heading, original in headings
            ],
            rows,
            max(target, 0),
        )
        note_widget = self.query_one("#missing-note", Static)
        extra: list[str] = []
        if left_out:
            extra.append(f"not shown (narrow pane): {', '.join(left_out)}")
        if any_null:
            extra.append(f"{MISSING} {NO_ACCEPTED}")
        if any_unpriced:
            extra.append(f"{MISSING} {UNPRICED}: no price for the model (never $0; w)")
        if bool(frame[metric.lower_bound].any()):
            what = "cost" if metric is COST else "usage"
            extra.append(f"≥ lower bound: some {what} is missing")
        if any_note:
            extra.append(f"{NOTE_MARK} small sample: wide interval (see below)")
        if len(self._all_labels) > MAX_TABLE_GROUPS:
            extra.append(
                f"first {format_count(MAX_TABLE_GROUPS)} of "
                f"{format_count(len(self._all_labels))} groups (filter to narrow; exports hold all)"
            )
        note_widget.update(Text("  ·  ".join(extra), style=MISSING_STYLE))
        note_widget.display = bool(extra)

    def _focus_lines(
        self, comparison: Comparison, keep: dict[str, Any], drop: dict[str, Any]
    ) -> list[tuple[str, str, str, str]]:
        """(name, keep figure, drop figure, trailing note) per line of the focused block."""
        metric = self._metric
        lines: list[tuple[str, str, str, str]] = [
            ("attempts", format_count(keep["attempts"]), format_count(drop["attempts"]), ""),
            ("accepted", accepted_text(keep), accepted_text(drop), ""),
            (
                "pass rate",
                _rate_with_interval(keep),
                _rate_with_interval(drop),
                "Wilson" if keep["pass_rate_lo"] is not None else "",
            ),
            (
                "median / attempt",
                format_tokens(keep["median_tokens_per_attempt"]),
                format_tokens(drop["median_tokens_per_attempt"]),
                "",
            ),
            (
                "total tokens",
                format_tokens(keep["total_tokens"]),
                format_tokens(drop["total_tokens"]),
                "",
            ),
        ]
        if comparison.has_cost:
            lines.append(
                (
                    "total cost",
                    _total_cost_text(keep),
                    _total_cost_text(drop),
                    "",
                )
            )
        figures = [TOKENS, COST] if comparison.has_cost else [TOKENS]
        # The headline metric first, so its figure and interval sit under the view names.
        figures.sort(key=lambda columns: columns is not metric)
        for columns in figures:
            name = "tokens / accepted" if columns is TOKENS else "cost / accepted"
            keep_mark = NOTE_MARK if keep[columns.value] is not None and keep["ci_note"] else ""
            drop_mark = NOTE_MARK if drop[columns.value] is not None and drop["ci_note"] else ""
            lines.append(
                (
                    name,
                    figure_text(columns, keep) + keep_mark,
                    figure_text(columns, drop) + drop_mark,
                    "",
                )
            )
            if comparison.intervals.method != "none" and (
                keep[columns.value] is not None or drop[columns.value] is not None
            ):
                lines.append(
                    (
                        "  95%",
                        _interval_text(columns, keep),
                        _interval_text(columns, drop),
                        _methods(keep, drop),
                    )
                )
        lines.append(("rank", _rank_text(keep, metric), _rank_text(drop, metric), ""))
        return lines

    def _focus_text(self, comparison: Comparison, index: int) -> Text:
        keep = comparison.keep.row(index, named=True)
        drop = comparison.drop.row(index, named=True)
        trap = comparison.trap.row(index, named=True)
        metric = self._metric
        label = self._all_labels[index]
        lines = self._focus_lines(comparison, keep, drop)
        # Each view's column is as wide as its widest figure (a heading at the least).
        widest = max(
            cell_len(value)
            for _, keep_value, drop_value, _ in lines
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
        headline = "tokens / accepted" if metric is TOKENS else "cost / accepted"
        for name, keep_value, drop_value, trailing in lines:
            emphasis = "bold" if name == headline else ""
            is_interval = name.strip() == "95%"
            text.append("\n  ")
            text.append(name.ljust(label_width), style=LABEL_STYLE)
            value_style = LABEL_STYLE if is_interval else emphasis
            text.append(keep_value.rjust(width - 1) + " ", style=value_style)
            text.append(drop_value.rjust(width - 1) + " ", style=value_style)
            if trailing:
                text.append(f" {trailing}", style=LABEL_STYLE)
        if keep[metric.value] is None:
            reason = metric.missing_reason(keep)
            if reason == UNPRICED:
                text.append(
                    f"\n  {MISSING} {UNPRICED}: no attempt of this group has a known cost",
                    style=MISSING_STYLE,
                )
            else:
                text.append(
                    f"\n  {MISSING} {NO_ACCEPTED}: nothing to divide by", style=MISSING_STYLE
                )
        factor = trap[metric.trap_factor]
        text.append("\n  ")
        text.append("trap factor".ljust(label_width), style=LABEL_STYLE)
        text.append(
            format_factor(factor).rjust(width - 1),
            style=DROP_STYLE if factor is not None and factor > 1.0 else "bold",
        )
        hidden_attempts = trap["hidden_attempts"]
        if hidden_attempts:
            hidden = (
                f"{plural(hidden_attempts, 'attempt')}"
                f" · {format_tokens(trap['hidden_tokens'])} tokens"
            )
            if comparison.has_cost:
                hidden += f" · {format_money(trap['hidden_cost'])}"
            text.append("\n  ")
            text.append("hidden when dropped".ljust(label_width), style=LABEL_STYLE)
            text.append(hidden, style=DROP_STYLE.replace("bold ", ""))
        for view, row in (("keep", keep), ("drop", drop)):
            if row["ci_note"]:
                note = f"\n  {NOTE_MARK} {view}: {safe_text(row['ci_note'])}"
                text.append(note, style=MISSING_STYLE)
        return text

    def _callout_text(self, comparison: Comparison) -> Text:
        from tui_ledger.report import callout  # imported on first use

        if comparison.keep.height == 0:
            return Text("No attempts match the filter.", style=MISSING_STYLE)
        if self._metric is COST:
            sentence = safe_text(cost_callout(comparison))
            flips = any(
                k != d
                for k, d in zip(
                    comparison.trap["keep_cost_rank"],
                    comparison.trap["drop_cost_rank"],
                    strict=True,
                )
            )
        else:
            sentence = safe_text(callout(comparison))
            flips = comparison.flips
        style = CALLOUT_STYLE if flips else ""
        return Text.assemble(("» ", CALLOUT_STYLE), (sentence, style))

    # ------------------------------------------------------------------ events

    def on_groups_table_cursor_moved(self, event: GroupsTable.CursorMoved) -> None:
        """A row chosen in the summary puts its group under focus."""
        event.stop()
        if not self.groups_table.has_focus:
            return  # the app moved it to follow the attempts table's cursor
        if 0 <= event.row < len(self._labels):
            self.post_message(self.GroupSelected(self._labels[event.row]))


def _rate_with_interval(row: dict[str, Any]) -> str:
    """`68% [58–77%]`, or the rate alone where there is no interval."""
    rate = format_rate(row["pass_rate"])
    interval = format_interval(row["pass_rate_lo"], row["pass_rate_hi"], "rate")
    return f"{rate} {interval}" if interval and rate != MISSING else rate


def _total_cost_text(row: dict[str, Any]) -> str:
    value = row["total_cost"]
    if value is None:
        return f"{MISSING} {UNPRICED}"
    return format_money(value, lower_bound=bool(row["missing_cost"]) and value > 0)


def _interval_text(metric: MetricColumns, row: dict[str, Any]) -> str:
    if row[metric.value] is None:
        return ""
    low, high = row.get(f"{metric.value}_lo"), row.get(f"{metric.value}_hi")
    if low is None and high is None:
        return MISSING
    return metric.compact_interval(low, high)


def _methods(keep: dict[str, Any], drop: dict[str, Any]) -> str:
    """`(bootstrap)`, or `(bootstrap / delta)` when the views used different methods."""
    methods = [m for m in (keep["ci_method"], drop["ci_method"]) if m]
    if not methods:
        return ""
    unique = list(dict.fromkeys(methods))
    return f"({' / '.join(unique)})"
