"""What the summary pane says about the group under focus, as text: its block in both views
(`focus_block`, `focus_lines`), the callout above the table (`callout_text`) and why the
summary is empty (`empty_reason`). Pure functions of a comparison, no widget; the groups table,
the headline metric and how each figure reads are `summary_text.py`'s. Every string that came
from a file is made safe by `safe_text` / `safe_cell`.
"""

from __future__ import annotations

import textwrap
from typing import Any

from rich.cells import cell_len
from rich.text import Text

from tui_ledger.accounting.ledger import LOWER_BOUND, VIEW_TITLES, Comparison, View
from tui_ledger.accounting.ledger import NOT_RECORDED as NOT_RECORDED_STATUS
from tui_ledger.reports.pair_report import pair_line
from tui_ledger.text.numbers import (
    MISSING,
    NOT_RECORDED,
    NOTE_MARK,
    format_count,
    format_factor,
    format_interval,
    format_money,
    format_rate,
    format_tokens,
)
from tui_ledger.text.textsafe import safe_cell, safe_text
from tui_ledger.text.wording import NO_ATTEMPTS_MATCH, plural
from tui_ledger.tui.theme import (
    ATTENTION_STYLE,
    CALLOUT_STYLE,
    DROP_STYLE,
    LABEL_STYLE,
    MISSING_STYLE,
    VIEW_STYLES,
)
from tui_ledger.tui.widgets.summary_text import (
    COST,
    NO_ACCEPTED,
    TOKENS,
    UNPRICED,
    MetricColumns,
    accepted_text,
    figure_text,
    median_text,
    rank_text,
    total_text,
)

FOCUS_LABEL_WIDTH = 19
"""Cells the focus block gives its row names and the group's name in its heading: with two
15-cell view columns and the indent, the block is 51 cells, what the summary has inside its
narrowest width (56, so the attempts pane keeps outcome, tokens and cost at 80 columns)."""
FOCUS_NAME_WIDTH = FOCUS_LABEL_WIDTH - 1
"""Cells for the group's name in the block's heading: one less, for the space before the view
names (a name cut to fit is cut to this, `labels.fit_labels`, so the cut names stay distinct)."""


def focus_lines(
    comparison: Comparison, keep: dict[str, Any], drop: dict[str, Any], metric: MetricColumns
) -> list[tuple[str, str, str, str]]:
    """(name, keep figure, drop figure, trailing note) per line of the focused block."""
    lines: list[tuple[str, str, str, str]] = [
        ("attempts", format_count(keep["attempts"]), format_count(drop["attempts"]), ""),
        ("accepted", accepted_text(keep), accepted_text(drop), ""),
        (
            "pass rate",
            _rate_with_interval(keep),
            _rate_with_interval(drop),
            "Wilson" if keep["pass_rate_lo"] is not None else "",
        ),
        ("median / attempt", median_text(keep), median_text(drop), ""),
        ("total tokens", total_text(TOKENS, keep), total_text(TOKENS, drop), ""),
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
    lines.append(("rank", rank_text(keep, metric), rank_text(drop, metric), ""))
    return lines


def focus_block(
    comparison: Comparison,
    index: int,
    label: str,
    metric: MetricColumns,
    view: View,
    room: int = 0,
) -> Text:
    """The focused group (row `index`, named `label`) in both views side by side, `view`
    highlighted: its figures with their intervals, trap factor and what dropping hides.
    Its notes wrap to `room` cells (0: to the block's own width), and the words naming an
    interval's method are left out where they would not fit in it."""
    keep = comparison.keep.row(index, named=True)
    drop = comparison.drop.row(index, named=True)
    trap = comparison.trap.row(index, named=True)
    lines = focus_lines(comparison, keep, drop, metric)
    # Each view's column is as wide as its widest figure (its heading chip at the least); the
    # block is 51 cells for usual figures, so it fits the summary's narrowest width (LAYOUT.md).
    widest = max(
        cell_len(value)
        for _, keep_value, drop_value, _ in lines
        for value in (keep_value, drop_value)
    )
    width = max(len(VIEW_TITLES["keep"]) + 2, widest + 1)
    label_width = FOCUS_LABEL_WIDTH
    body = max(label_width + 2 * width, room - 2)  # after the indent, for the notes to wrap in
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append("▸ ", style="bold")
    name = safe_cell(label, FOCUS_NAME_WIDTH)
    text.append(name, style="bold")
    text.append(" " * max(1, label_width - cell_len(name)))
    for shown in ("keep", "drop"):
        style = VIEW_STYLES[shown] + (" reverse" if shown == view else "")
        text.append(" " * (width - len(VIEW_TITLES[shown]) - 2))
        text.append(f" {VIEW_TITLES[shown]} ", style=style)
    headline = "tokens / accepted" if metric is TOKENS else "cost / accepted"
    for name, keep_value, drop_value, trailing in lines:
        emphasis = "bold" if name == headline else ""
        is_interval = name.strip() == "95%"
        text.append("\n  ")
        text.append(name.ljust(label_width), style=LABEL_STYLE)
        value_style = LABEL_STYLE if is_interval else emphasis
        text.append(keep_value.rjust(width - 1) + " ", style=value_style)
        text.append(drop_value.rjust(width - 1) + " ", style=value_style)
        # The words naming the method (`Wilson`, `(bootstrap)`) only where they fit whole: cut
        # to "Wi…" they say nothing (a wider pane shows them; exports carry `ci_method`).
        if trailing and (not room or 2 + label_width + 2 * width + 1 + cell_len(trailing) <= room):
            text.append(f" {trailing}", style=LABEL_STYLE)
    if keep[metric.value] is None:
        reason = metric.missing_reason(keep)
        if reason == NOT_RECORDED:
            what = "cost" if metric is COST else "usage"
            text.append(
                _note(
                    f"{NOT_RECORDED}: every attempt's {what} is missing or 0 (unmetered?); "
                    "no figure and no rank",
                    body,
                ),
                style=MISSING_STYLE,
            )
        elif reason == UNPRICED:
            text.append(
                _note(f"{MISSING} {UNPRICED}: no attempt of this group has a known cost", body),
                style=MISSING_STYLE,
            )
        else:
            text.append(
                _note(f"{MISSING} {NO_ACCEPTED}: nothing to divide by", body), style=MISSING_STYLE
            )
    factor = trap[metric.trap_factor]
    text.append("\n  ")
    text.append("trap factor".ljust(label_width), style=LABEL_STYLE)
    text.append(
        format_factor(factor, lower_bound=trap[f"{metric.trap_factor}_lower_bound"]).rjust(
            width - 1
        ),
        style=DROP_STYLE if factor is not None and factor > 1.0 else "bold",
    )
    hidden_attempts = trap["hidden_attempts"]
    if hidden_attempts:
        hidden = f"{plural(hidden_attempts, 'attempt')} · {_hidden(keep, drop, trap, TOKENS)}"
        if comparison.has_cost:
            hidden += f" · {_hidden(keep, drop, trap, COST)}"
        text.append("\n  ")
        text.append("dropping hides".ljust(label_width), style=LABEL_STYLE)
        # Wrapped at its ` · ` under the figures, so the block keeps its width (80 columns).
        wrapped = [""]
        for part in hidden.split(" · "):
            joined = f"{wrapped[-1]} · {part}" if wrapped[-1] else part
            if wrapped[-1] and cell_len(joined) > body - label_width:
                wrapped.append(part)
            else:
                wrapped[-1] = joined
        indent = "\n  " + " " * label_width
        text.append(indent.join(wrapped), style=DROP_STYLE.replace("bold ", ""))
    for name, row in (("keep", keep), ("drop", drop)):
        if row["ci_note"]:
            note = _note(f"{NOTE_MARK} {name}: {safe_text(row['ci_note'])}", body, hanging=2)
            text.append(note, style=MISSING_STYLE)
    if metric is TOKENS:
        _append_noise(text, comparison, index, view, label_width, body)
    return text


def _append_noise(
    text: Text, comparison: Comparison, index: int, view: View, label_width: int, body: int
) -> None:
    """The focus block's `noise` line: the focused group against the cheapest other group in
    the view drawn, the ratio, its interval and the verdict (once the pairs are drawn)."""
    pairs = comparison.pairs
    if pairs is None:
        return
    label = comparison.labels[index]
    pair = pairs.against_cheapest(view, label)
    if pair is None:
        return
    cheapest = pairs.view(view)[0].a
    heading = "vs 2nd cheapest" if label == cheapest else "vs cheapest"
    lines = textwrap.wrap(pair_line(pair), max(body - label_width, 20), break_on_hyphens=False)
    text.append("\n  ")
    text.append(heading.ljust(label_width), style=LABEL_STYLE)
    style = "" if pair.decided else MISSING_STYLE
    text.append(("\n  " + " " * label_width).join(lines), style=style)


def _note(text: str, width: int, *, hanging: int = 0) -> str:
    """A note under the focus block, on a line of its own and wrapped at `width` cells (its
    lines after the first indented `hanging` more)."""
    lines = textwrap.wrap(text, width, subsequent_indent=" " * hanging, break_on_hyphens=False) or [
        ""
    ]
    return "".join(f"\n  {line}" for line in lines)


def empty_reason(
    matched_only: bool, tasks: int, filtered: bool, near: str | None = None
) -> str | None:
    """Why no attempt is selected when the filter alone does not say it: matched tasks only
    (`m`) and no task that every group attempted (`filtered`: among the filter's attempts);
    or a name typed from a cut label (`near`: `near_names.near_names`)."""
    if not matched_only or tasks:
        return None if near is None else f"No attempts match the filter: {near}"
    among = " among the attempts the filter keeps" if filtered else ""
    return (
        f"No task was attempted by every group{among}, so matched tasks only keeps no "
        "attempt (m shows every task again)."
    )


def callout_text(
    comparison: Comparison,
    metric: MetricColumns,
    *,
    pairs_coming: bool = False,
    empty: str | None = None,
) -> Text:
    """The callout under the focused group: what dropping failures hides, in the headline
    metric, in colour when the ranking flips (and the sample decides it). `pairs_coming`: the
    pairwise verdicts are still being drawn, and a flip says it is being checked. `empty`:
    why no attempt is selected, when it is not the filter."""
    from tui_ledger.reports.pair_report import flip_noise
    from tui_ledger.reports.report import callout  # imported on first use

    if comparison.keep.height == 0:
        return Text(empty or NO_ATTEMPTS_MATCH, style=MISSING_STYLE)
    sentence = safe_text(callout(comparison, metric.name))
    flips = comparison.flips(metric.name)
    noise = flips and metric is TOKENS and flip_noise(comparison) is not None
    style = ATTENTION_STYLE if noise else CALLOUT_STYLE if flips else ""
    text = Text.assemble(("» ", CALLOUT_STYLE), (sentence, style))
    if flips and metric is TOKENS and comparison.pairs is None and pairs_coming:
        text.append("  Is it noise? checking…", style=LABEL_STYLE)
    return text


def _rate_with_interval(row: dict[str, Any]) -> str:
    """`68% [58–77%]`, or the rate alone where there is no interval."""
    rate = format_rate(row["pass_rate"])
    interval = format_interval(row["pass_rate_lo"], row["pass_rate_hi"], "rate")
    return f"{rate} {interval}" if interval and rate != MISSING else rate


def _total_cost_text(row: dict[str, Any]) -> str:
    value = row["total_cost"]
    if row["cost_usage"] == NOT_RECORDED_STATUS and row["usage"] == NOT_RECORDED_STATUS:
        return NOT_RECORDED
    if value is None:
        return f"{MISSING} {UNPRICED}"
    return format_money(value, lower_bound=row["cost_usage"] == LOWER_BOUND and value > 0)


def _hidden(
    keep: dict[str, Any], drop: dict[str, Any], trap: dict[str, Any], metric: MetricColumns
) -> str:
    """What dropping failures hides of one group: `2,000 tokens`, `≥ $0.04` when a dropped
    attempt's usage is missing or a suspect 0, `tokens not recorded`."""
    cost = metric is COST
    if keep[metric.usage] == NOT_RECORDED_STATUS and keep["usage"] == NOT_RECORDED_STATUS:
        return f"{'cost' if cost else 'tokens'} {NOT_RECORDED}"
    zeros = "suspect_zero_cost" if cost else "suspect_zeros"
    bound = keep[metric.missing] + keep[zeros] > drop[metric.missing] + drop[zeros]
    if bound and not trap[metric.hidden]:
        return f"{'cost' if cost else 'tokens'} {NOT_RECORDED}"
    if cost:
        return format_money(trap[metric.hidden], lower_bound=bound)
    return f"{format_tokens(trap[metric.hidden], lower_bound=bound)} tokens"


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
