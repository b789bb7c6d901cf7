"""What the summary pane says, as text: pure functions of a comparison, no widget.

The headline metric's columns (`MetricColumns`: tokens or cost per accepted result), how each
figure reads, the groups table's columns and cells and the notes under it, and fitting the table
into its width (the focused group's block and the callout are `focus_text.py`'s). `SummaryPane`
(`summary_pane`) and `Bars` (`bars`) lay these out. Every string that came from a file (group
names, column names) is made safe by `safe_text` / `safe_cell`, and returned as
`rich.text.Text` or plain text, never markup.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl
from rich.cells import cell_len
from rich.text import Text

from tui_ledger.accounting.ledger import LOWER_BOUND, Comparison, Metric, View
from tui_ledger.accounting.ledger import NOT_RECORDED as NOT_RECORDED_STATUS
from tui_ledger.accounting.ranking import rank_text as range_text
from tui_ledger.reports.pair_report import noise_rank_columns
from tui_ledger.text.numbers import (
    MISSING,
    NOT_RECORDED,
    NOTE_MARK,
    exact_per_accepted,
    format_compact,
    format_count,
    format_factor,
    format_money,
    format_rate,
    format_tokens,
    format_usage_figure,
)
from tui_ledger.text.textsafe import safe_cell, safe_text
from tui_ledger.tui.theme import (
    ATTENTION_STYLE,
    DROP_STYLE,
    MISSING_STYLE,
    VIEW_STYLES,
)

NO_ACCEPTED = "no accepted attempt"
NOISE_RANK = "~#"
"""The groups table's heading for the rank the pairwise verdicts support (`Pairs.noise_ranks`)."""
UNPRICED = "unpriced"
MAX_TABLE_GROUPS = 300  # a table, not a database: keeps a toggle instant when grouping by an id


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
    usage: str
    """The group's usage status column (`recorded`, `lower_bound`, `not_recorded`)."""
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
        """Why a group has no figure: usage never recorded, nothing accepted, or (cost) no
        known cost at all."""
        if row["usage"] == NOT_RECORDED_STATUS and row[self.usage] == NOT_RECORDED_STATUS:
            return NOT_RECORDED  # (a cost missing where usage is recorded is unpriced)
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
                # A tight interval on a big group: more digits, until the two ends differ
                # (ends that differ only past seven places, float noise, read as they are).
                for decimals in range(3, 8):
                    longer = f"${low:,.{decimals}f}", f"${high:,.{decimals}f}"
                    if longer[0] != longer[1]:
                        low_text, high_text = longer
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
    usage="usage",
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
    usage="cost_usage",
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
    """A group's headline figure: `3,000`, `≥ $0.043`, `not recorded`, or `— unpriced` /
    `—`."""
    value = row[metric.value]
    if value is None:
        reason = metric.missing_reason(row)
        if reason == NOT_RECORDED:
            return NOT_RECORDED
        return f"{MISSING} {UNPRICED}" if reason == UNPRICED else MISSING
    return metric.fmt(exact_figure(metric, row), bool(row[metric.lower_bound]))


def exact_figure(metric: MetricColumns, row: dict[str, Any]) -> Any:
    """A group's headline figure to print: for tokens, the exact division, since past 2**53
    the Float64 ratio rounds its last digits."""
    if metric is not TOKENS or row[metric.value] is None:
        return row[metric.value]
    return exact_per_accepted(row)


def accepted_text(row: dict[str, Any]) -> str:
    """Accepted out of attempts: `1/3`, `63,193/125,041`."""
    return f"{format_count(row['accepted'])}/{format_count(row['attempts'])}"


def rank_text(row: dict[str, Any], metric: MetricColumns = TOKENS) -> str:
    """A rank as far as the figures prove it: `3`, `2–5` when the bounds leave it open, `—`
    for a group whose usage was not recorded. A group with nothing accepted is ranked after
    every group with a figure."""
    return range_text(row[f"{metric.rank}_best"], row[f"{metric.rank}_worst"])


def total_text(metric: MetricColumns, row: dict[str, Any]) -> str:
    """A group's total (tokens or cost): `not recorded`, `≥ 1,294,100` when some usage is
    missing or a suspect 0, else the figure."""
    usage = row[metric.usage]
    if usage == NOT_RECORDED_STATUS and row["usage"] != NOT_RECORDED_STATUS:
        return MISSING  # cost: usage recorded but unpriced
    return format_usage_figure(
        row[metric.total], usage, lower_bound=usage == LOWER_BOUND, money=metric.name == "cost"
    )


def median_text(row: dict[str, Any]) -> str:
    """Median tokens per attempt, `not recorded` when usage never was."""
    return format_usage_figure(row["median_tokens_per_attempt"], row["usage"])


def tight(text: str) -> str:
    """A figure for the groups table's narrow columns: `≥1,484,917` (the bound sign kept,
    its space dropped)."""
    return text.replace("≥ ", "≥", 1)


def cell(text: str, *, style: str = "", justify: str = "right") -> Text:
    """A table cell: literal text (never markup), right-aligned unless asked."""
    return Text(text, style=style, justify=justify)  # type: ignore[arg-type]


# When the groups table is wider than its pane, headings shorten first, then the columns least
# needed to read the comparison leave, in this order (the label and headline never do).
SHORT_HEADINGS: dict[str, str] = {
    "per accepted": "per acc",
    "$ per accepted": "$/acc",
    "no usage": "no use",
    "median": "med",
}
# The order columns leave a narrow pane in (docs/LAYOUT.md): the trap is a change of rank, so the
# label, the headline per accepted result, the rank, accepted and the pass rate stay; a column
# whose every cell is empty leaves before any of these (`fit_columns`).
LEAVE_FIRST: tuple[str, ...] = (
    "median",
    "total",
    "att",  # acc reads "61/90": the attempts are its denominator
    "no usage",
    "no cost",
    "total $",
    "tokens/acc",  # the other metric's headline
    "$/acc",
    NOISE_RANK,  # the bounds' rank stays; the table's note says what the sample adds
    "trap",
)
KEEP: frozenset[str] = frozenset({"#", "acc", "pass"})  # with the label and the headline
EMPTY_CELLS: frozenset[str] = frozenset({"", MISSING})
CELL_PADDING = 2  # the groups table's padding, one cell on each side


def fit_columns(
    headings: list[str], rows: list[list[Text]], width: int
) -> tuple[list[tuple[str, str]], list[list[Text]], list[str]]:
    """Fit a table into `width` cells: shorter headings, then the columns whose every cell is
    empty leave, then the others in `LEAVE_FIRST` order; `KEEP`, the label and the headline
    never leave (past them the table scrolls sideways). Returns (shown heading, original
    heading) per kept column, the rows with those columns, and the headings left out.
    `width` 0 (not laid out yet) keeps everything."""
    values = [
        max((cell_len(row[i].plain) for row in rows), default=0) for i in range(len(headings))
    ]

    def total(names: list[str], keep: list[int]) -> int:
        return sum(max(cell_len(names[i]), values[i]) + CELL_PADDING for i in keep)

    shown = list(headings)
    keep = list(range(len(headings)))
    if width > 0 and total(shown, keep) > width:
        shown = [SHORT_HEADINGS.get(name, name) for name in headings]
        empty = [
            i
            for i in keep
            if i >= 2
            and headings[i] not in KEEP
            and rows
            and all(row[i].plain.strip() in EMPTY_CELLS for row in rows)
        ]
        order = empty + [
            i
            for name in LEAVE_FIRST
            for i in keep
            if i >= 2 and i not in empty and headings[i] == name
        ]
        left: list[int] = []
        for index in order:
            if total(shown, keep) <= width:
                break
            left.append(index)
            keep = [i for i in keep if i != index]
        for index in reversed(left):  # a narrow column that left early may fit again
            if index not in empty and total(shown, sorted([*keep, index])) <= width:
                keep = sorted([*keep, index])
    left_out = [headings[i] for i in range(len(headings)) if i not in keep]
    return (
        [(shown[i], headings[i]) for i in keep],
        [[row[i] for i in keep] for row in rows],
        left_out,
    )


# --------------------------------------------------------------------------- the groups table


@dataclass(frozen=True)
class GroupColumns:
    """The groups table's columns for a comparison in a view, and the headline metric's."""

    metric: MetricColumns
    other: MetricColumns | None  # the other metric's headline, when there are costs
    show_missing: bool  # some group has missing usage
    show_missing_cost: bool  # missing cost differs from missing usage somewhere
    with_cost: bool
    headings: list[tuple[str, str]]  # (heading, justify) in table order
    # Per group label, the rank range the pairwise verdicts support (`~#`; tokens only, once
    # the pairs are drawn and not capped): None when the column is not shown.
    noise_ranks: dict[str, tuple[int, int]] | None = None


def group_columns(comparison: Comparison, view: View, metric: MetricColumns) -> GroupColumns:
    """Which columns the groups table shows: the figure that matters first, with its trap
    factor and rank; the inputs after it (on a narrow pane or with huge counts, those are
    what scroll out of sight)."""
    frame = comparison.view(view)
    with_cost = comparison.has_cost
    other = (COST if metric is TOKENS else TOKENS) if with_cost else None
    show_missing = bool(frame["missing_usage"].sum())
    # Missing cost is mostly missing usage (an unpriced bucket): a column only when it differs.
    show_missing_cost = with_cost and not frame["missing_cost"].equals(frame["missing_usage"])
    title = safe_text(" · ".join(comparison.by))
    noise_ranks = noise_rank_columns(comparison, view) if metric is TOKENS else {}
    columns: list[tuple[str, str]] = [
        (title, "left"),
        (metric.heading, "right"),
        ("trap", "right"),
        ("#", "right"),
    ]
    if noise_ranks:
        columns.append((NOISE_RANK, "right"))
    columns += [
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
    return GroupColumns(
        metric,
        other,
        show_missing,
        show_missing_cost,
        with_cost,
        columns,
        noise_ranks or None,
    )


def group_row(
    label: str,
    row: dict[str, Any],
    trap_row: dict[str, Any],
    columns: GroupColumns,
    view: View,
) -> tuple[list[Text], set[str]]:
    """One group's cells, and which notes under the table it calls for: "no accepted",
    "unpriced", "small sample"."""
    metric, other = columns.metric, columns.other
    notes: set[str] = set()
    value = row[metric.value]
    if value is None:
        reason = metric.missing_reason(row)
        notes.add(
            "unpriced"
            if reason == UNPRICED
            else "not recorded"
            if reason == NOT_RECORDED
            else "no accepted"
        )
    note = NOTE_MARK if value is not None and row["ci_note"] else ""
    if note:
        notes.add("small sample")
    factor = trap_row[metric.trap_factor]
    cells = [
        cell(safe_cell(label, 24), justify="left"),
        cell(
            figure_text(metric, row) + note,
            style=VIEW_STYLES[view] if value is not None else MISSING_STYLE,
        ),
        cell(
            ""
            if factor is not None and factor == 1.0
            else tight(
                format_factor(factor, lower_bound=trap_row[f"{metric.trap_factor}_lower_bound"])
            ),
            style=DROP_STYLE.replace("bold ", "") if factor and factor > 1.0 else "",
        ),
        cell(rank_text(row, metric)),
    ]
    if columns.noise_ranks is not None:
        cells.append(cell(noise_rank_text(columns.noise_ranks, label)))
    cells += [
        cell(format_count(row["attempts"])),
        cell(accepted_text(row)),
        cell(format_rate(row["pass_rate"])),
    ]
    if columns.show_missing:
        missing = row["missing_usage"]
        cells.append(cell(format_count(missing), style=ATTENTION_STYLE if missing else ""))
    if columns.show_missing_cost:
        missing = row["missing_cost"]
        cells.append(cell(format_count(missing), style=ATTENTION_STYLE if missing else ""))
    if other is not None:
        other_value = row[other.value]
        if other_value is None and other is COST and other.missing_reason(row) == UNPRICED:
            notes.add("unpriced")
        cells.append(
            cell(
                figure_text(other, row),
                style="" if other_value is not None else MISSING_STYLE,
            )
        )
    if columns.with_cost:
        total_cost = row["total_cost"]
        cells.append(
            cell(
                total_text(COST, row),
                style="" if total_cost is not None else MISSING_STYLE,
            )
        )
    recorded = row["usage"] != NOT_RECORDED_STATUS
    cells += [
        cell(median_text(row), style="" if recorded else MISSING_STYLE),
        cell(tight(total_text(TOKENS, row)), style="" if recorded else MISSING_STYLE),
    ]
    return cells, notes


def noise_rank_text(ranks: dict[str, tuple[int, int]], label: str) -> str:
    """A group's `~#`: `1–2` when the sample cannot tell it from a neighbour, `—` when it was
    not compared (no figure)."""
    if label not in ranks:
        return range_text(None, None)
    best, worst = ranks[label]
    return range_text(best, worst)


def missing_notes(
    left_out: list[str],
    notes: set[str],
    frame: pl.DataFrame,
    metric: MetricColumns,
    groups: int,
    noise_ranks: dict[str, tuple[int, int]] | None = None,
) -> list[str]:
    """The line under the groups table: columns left out, what `—`, `≥` and `†` mean where
    they appear, and how many of the `groups` the table holds."""
    extra: list[str] = []
    if left_out:
        extra.append(f"not shown (narrow pane): {', '.join(left_out)}")
    if "no accepted" in notes:
        extra.append(f"{MISSING} {NO_ACCEPTED}")
    unrecorded = (frame[metric.usage] == NOT_RECORDED_STATUS) & (
        frame["usage"] == NOT_RECORDED_STATUS
    )  # (cost missing beside recorded usage is unpriced)
    if "not recorded" in notes or bool(unrecorded.any()):
        extra.append(f"{NOT_RECORDED}: every attempt's usage missing or 0; no figure, no rank")
    if "unpriced" in notes:
        extra.append(f"{MISSING} {UNPRICED}: no price for the model (never $0; w)")
    if bool(frame[metric.lower_bound].any()):
        what = "cost" if metric is COST else "usage"
        extra.append(f"≥ lower bound: some {what} is missing or 0")
    if bool(
        frame[f"{metric.rank}_best"]
        .ne_missing(frame[f"{metric.rank}_worst"])
        .fill_null(False)
        .any()
    ):
        extra.append("2–4: rank as far as the bounds prove it")
    if noise_ranks and NOISE_RANK not in left_out:
        tied = any(best != worst for best, worst in noise_ranks.values())
        extra.append(
            f"{NOISE_RANK}: rank the sample supports"
            + (" (groups within noise share places)" if tied else "")
        )
    if "small sample" in notes:
        extra.append(f"{NOTE_MARK} small sample: wide interval (see below)")
    if groups > MAX_TABLE_GROUPS:
        extra.append(
            f"first {format_count(MAX_TABLE_GROUPS)} of "
            f"{format_count(groups)} groups (filter to narrow; exports hold all)"
        )
    return extra
