"""Rendering a comparison as text: a terminal table, JSON, CSV or markdown, and the callout.

What `ledger-tui summary` prints and what the app exports come from here, so a figure reads the
same everywhere.

Decisions:

- Every rendering is safe to print. Table, markdown and CSV show text from files (group
  labels, column names, warnings) through `safe_text`: `\\x1b`, `<U+202E>`. JSON is data: it
  keeps the exact strings, with every character that could act on a terminal written as a
  `\\uXXXX` escape (`json_text`), which any JSON reader turns back into the same string.
- Token figures are exact. `total_tokens` is an exact integer; a median past 2**52 comes
  from the ledger as an exact Decimal. `tokens_per_accepted_result` is recomputed from the
  exact total (`exact_per_accepted`): a whole quotient is an integer, a fraction past 2**53
  keeps its digits (a Decimal, six places). A float that is not exact (an interval end past
  2**53) prints as a float in JSON, never as an integer it is not.
- The summary CSV's group labels are neutralised for spreadsheets with `spreadsheet_safe`, as
  `export_files` does for the attempts (`neutralise_text`).

The callout is `callout.py`; the JSON document and the JSON text are `summary_json.py`.
Writing files (atomically, never replacing one unasked) is `export_files`; the standalone
Pareto chart is `pareto_svg`.
"""

from __future__ import annotations

import csv
import io
import textwrap
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from tui_ledger.accounting.ledger import (
    LOWER_BOUND,
    VIEW_GLOSSES,
    VIEW_TITLES,
    VIEWS,
    Comparison,
    Metric,
    View,
)
from tui_ledger.accounting.ledger import NOT_RECORDED as NOT_RECORDED_STATUS
from tui_ledger.accounting.ranking import rank_text
from tui_ledger.exports.export_files import escape_html, neutralise_text
from tui_ledger.findings import Finding

# The callout and the JSON document have their own modules; named here too, where the app,
# the grader and the trace have always found them.
from tui_ledger.reports.callout import callout
from tui_ledger.reports.callout import undecided as undecided
from tui_ledger.reports.pair_report import (
    pair_lines,
)
from tui_ledger.reports.summary_json import json_number, json_text, summary_json
from tui_ledger.reports.summary_json import view_json as view_json
from tui_ledger.reports.table_fit import figure_table, fit_table, left_out_line
from tui_ledger.text.labels import fit_labels
from tui_ledger.text.numbers import (
    NOT_RECORDED,
    NOTE_MARK,
    exact_per_accepted,
    format_count,
    format_factor,
    format_interval,
    format_money,
    format_rate,
    format_tokens,
    format_usage_figure,
)
from tui_ledger.text.textsafe import LABEL_WIDTH, safe_label, safe_text
from tui_ledger.text.wording import plural

if TYPE_CHECKING:
    from tui_ledger.accounting.checks import Check

SummaryFormat = Literal["table", "json", "csv", "markdown"]
SUMMARY_FORMATS: tuple[str, ...] = ("table", "json", "csv", "markdown")


# --------------------------------------------------------------------------- tables

_COLUMNS: tuple[tuple[str, str], ...] = (
    ("attempts", "attempts"),
    ("accepted", "accepted"),
    ("pass_rate", "pass rate [95%]"),
    ("missing_usage", "missing usage"),
    ("suspect_zeros", "usage 0"),
    ("median_tokens_per_attempt", "median / attempt"),
    ("total_tokens", "total tokens"),
    ("tokens_per_accepted_result", "per accepted [95%]"),
    ("rank", "rank"),
)
_COST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("total_cost", "total cost"),
    ("cost_per_accepted_result", "$ per accepted [95%]"),
)


def _columns(comparison: Comparison) -> tuple[tuple[str, str], ...]:
    return _COLUMNS + (_COST_COLUMNS if comparison.has_cost else ())


def _with_interval(text: str, row: dict[str, Any], name: str, kind: str) -> str:
    interval = format_interval(row.get(f"{name}_lo"), row.get(f"{name}_hi"), kind)
    return f"{text} {interval}" if interval else text


def _cells(row: dict[str, Any], with_cost: bool = False) -> list[str]:
    per_accepted = exact_per_accepted(row)
    note = NOTE_MARK if row.get("ci_note") else ""
    usage = row["usage"]
    if usage == NOT_RECORDED_STATUS:
        per_accepted_text = NOT_RECORDED
    elif per_accepted is None:
        per_accepted_text = "— (no accepted attempt)"
    else:
        per_accepted_text = (
            _with_interval(
                format_tokens(per_accepted, lower_bound=bool(row["lower_bound"])),
                row,
                "tokens_per_accepted_result",
                "count",
            )
            + note
        )
    cells = [
        format_count(row["attempts"]),
        f"{row['accepted']}/{row['attempts']}",
        _with_interval(format_rate(row["pass_rate"]), row, "pass_rate", "rate"),
        format_count(row["missing_usage"]),
        format_count(row["suspect_zeros"]),
        format_usage_figure(row["median_tokens_per_attempt"], usage),
        format_usage_figure(row["total_tokens"], usage, lower_bound=usage == LOWER_BOUND),
        per_accepted_text,
        rank_text(row["rank_best"], row["rank_worst"]),
    ]
    if with_cost:
        cost = row["cost_per_accepted_result"]
        cost_usage = row["cost_usage"]
        cells += [
            MISSING_TEXT  # usage recorded, cost unknown: unpriced
            if cost_usage == NOT_RECORDED_STATUS and usage != NOT_RECORDED_STATUS
            else format_usage_figure(
                row["total_cost"], cost_usage, lower_bound=cost_usage == LOWER_BOUND, money=True
            ),
            NOT_RECORDED
            if cost_usage == NOT_RECORDED_STATUS and usage == NOT_RECORDED_STATUS
            else _with_interval(
                format_money(cost, lower_bound=bool(row["cost_lower_bound"])),
                row,
                "cost_per_accepted_result",
                "money",
            )
            if cost is not None
            else MISSING_TEXT,
        ]
    return cells


MISSING_TEXT = "—"


def _hidden_text(keep: dict[str, Any], drop: dict[str, Any], hidden: Any, metric: Metric) -> str:
    """What dropping failures hides in one group: `not recorded`, `≥ 2,000` when some dropped
    attempt's usage (or cost) is missing or a suspect 0, else the figure."""
    usage, missing, zeros = (
        ("usage", "missing_usage", "suspect_zeros")
        if metric == "tokens"
        else ("cost_usage", "missing_cost", "suspect_zero_cost")
    )
    if keep[usage] == NOT_RECORDED_STATUS and keep["usage"] == NOT_RECORDED_STATUS:
        return NOT_RECORDED
    bound = keep[missing] + keep[zeros] > drop[missing] + drop[zeros]
    if bound and not hidden:
        return NOT_RECORDED  # what the dropped attempts spent was never recorded
    if metric == "cost":
        return format_money(hidden, lower_bound=bound)
    return format_tokens(hidden, lower_bound=bound)


def _rows(
    comparison: Comparison, view: View, labels: Sequence[str] | None = None
) -> list[list[str]]:
    frame = comparison.view(view)
    shown = labels if labels is not None else fit_labels(comparison.labels, LABEL_WIDTH)
    return [
        [label, *_cells(row, comparison.has_cost)]
        for label, row in zip(shown, frame.iter_rows(named=True), strict=True)
    ]


def interval_notes(comparison: Comparison, views: Sequence[View] = VIEWS) -> list[str]:
    """The method line, then one line per group whose interval says little (marked †)."""
    if comparison.intervals.method == "none":
        return []
    notes = [comparison.intervals.describe() + "."]
    for view in views:
        frame = comparison.view(view)
        for label, note in zip(comparison.labels, frame["ci_note"], strict=True):
            if note:
                notes.append(
                    f"{NOTE_MARK} {safe_label(label)} ({VIEW_TITLES[view].lower()}): {note}."
                )
    return notes


def _group_title(comparison: Comparison) -> str:
    return safe_text(" · ".join(comparison.by))  # column names are the file's own text


def _table_text(
    comparison: Comparison,
    views: Sequence[View],
    warnings: list[Finding],
    width: int | None = None,
    noted: Sequence[Finding] = (),
) -> str:
    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(
        file=buffer, width=width or _TABLE_WIDTH, color_system=None, legacy_windows=False
    )
    headings = [heading for _, heading in _columns(comparison)]
    figures = {view: _rows(comparison, view, comparison.labels) for view in views}
    shown, labels, widths = fit_table(
        comparison.labels,
        headings,
        [cells[1:] for rows in figures.values() for cells in rows],
        width,
    )
    prose = min(_PROSE_WIDTH, width) if width else _PROSE_WIDTH

    def say(text: str, indent: str = "") -> None:
        # Prose wraps at a reading width; only the tables may be wider.
        wrapped = textwrap.fill(
            text,
            width=prose - len(indent),
            subsequent_indent=indent + "  " if indent else "",
        )
        console.print(Text(indent + wrapped if indent else wrapped), soft_wrap=True)

    for view in views:
        title = Text(f"{VIEW_TITLES[view]} ({VIEW_GLOSSES[view]})")
        table = figure_table(
            title,
            _group_title(comparison),
            labels,
            headings,
            [cells[1:] for cells in figures[view]],
            shown,
            widths,
        )
        console.print(table)
        left_out = left_out_line(headings, shown)
        if left_out:
            say(left_out)
        console.print()
    if len(views) == 2:
        say(safe_text(callout(comparison)))
        trap_headings = ["hidden attempts", "hidden tokens", "trap factor", "rank keep→drop"]
        if comparison.has_cost:
            trap_headings += ["hidden cost", "cost trap factor"]
        trap_rows = []
        for index, row in enumerate(comparison.trap.iter_rows(named=True)):
            keep_row = comparison.keep.row(index, named=True)
            drop_row = comparison.drop.row(index, named=True)
            cells = [
                format_count(row["hidden_attempts"]),
                _hidden_text(keep_row, drop_row, row["hidden_tokens"], "tokens"),
                format_factor(row["trap_factor"], lower_bound=row["trap_factor_lower_bound"]),
                f"{rank_text(row['keep_rank_best'], row['keep_rank_worst'])}→"
                f"{rank_text(row['drop_rank_best'], row['drop_rank_worst'])}",
            ]
            if comparison.has_cost:
                cells += [
                    _hidden_text(keep_row, drop_row, row["hidden_cost"], "cost"),
                    format_factor(
                        row["cost_trap_factor"], lower_bound=row["cost_trap_factor_lower_bound"]
                    ),
                ]
            trap_rows.append(cells)
        trap_shown, _, trap_widths = fit_table(comparison.labels, trap_headings, trap_rows, width)
        trap = figure_table(
            Text("What dropping failures hides"),
            _group_title(comparison),
            labels,
            trap_headings,
            trap_rows,
            trap_shown,
            trap_widths,
        )
        console.print()
        console.print(trap)
        left_out = left_out_line(trap_headings, trap_shown)
        if left_out:
            say(left_out)
    for view in views:
        found = pair_lines(comparison, view, VIEW_TITLES[view].lower())
        if found:
            console.print()
            say(safe_text(found[0]))
            for line in found[1:]:
                say(safe_text(f"- {line}"), indent="  ")
    notes = interval_notes(comparison, views)
    if notes:
        console.print()
        for note in notes:
            say(safe_text(note))
    if warnings:
        console.print()
        count = plural(len(warnings), "warning")
        them = "it" if len(warnings) == 1 else "them"
        console.print(Text(f"⚠ {count} (ledger-tui check explains {them}):"))
        for warning in warnings:
            say(f"- {safe_text(warning.message)}", indent="  ")
    if noted:
        console.print()
        console.print(Text(f"{plural(len(noted), 'note')}:"))
        for finding in noted:
            say(f"- {safe_text(finding.message)}", indent="  ")
    lines = [line.rstrip() for line in buffer.getvalue().splitlines()]
    return "\n".join(lines).rstrip() + "\n"


_TABLE_WIDTH = 220  # tables take their natural width up to this
_PROSE_WIDTH = 110


def _markdown_cell(text: str) -> str:
    # A file's text is shown, never run: raw HTML is escaped (`<` -> `&lt;`, before
    # `safe_text`, whose `<U+202E>` is no HTML), as are `|` (a cell's end) and `\\`.
    return safe_text(escape_html(text)).replace("\\", "\\\\").replace("|", "\\|")


def _markdown_text(
    comparison: Comparison,
    views: Sequence[View],
    warnings: list[Finding],
    noted: Sequence[Finding] = (),
) -> str:
    columns = _columns(comparison)
    headings = [_group_title(comparison), *(heading for _, heading in columns)]
    lines: list[str] = []
    for view in views:
        lines.append(f"### {VIEW_TITLES[view]} ({VIEW_GLOSSES[view]})")
        lines.append("")
        lines.append("| " + " | ".join(_markdown_cell(h) for h in headings) + " |")
        lines.append("|---|" + "---:|" * len(columns))
        for cells in _rows(comparison, view):
            lines.append("| " + " | ".join(_markdown_cell(cell) for cell in cells) + " |")
        lines.append("")
    if len(views) == 2:
        lines.append(_markdown_cell(callout(comparison)))
        lines.append("")
    for view in views:
        found = pair_lines(comparison, view, VIEW_TITLES[view].lower())
        if found:
            lines.append(f"**{_markdown_cell(found[0])}**")
            lines.append("")
            lines.extend(f"- {_markdown_cell(line)}" for line in found[1:])
            lines.append("")
    notes = interval_notes(comparison, views)
    if notes:
        lines.extend(f"{_markdown_cell(note)}  " for note in notes)
        lines.append("")
    if warnings:
        lines.append(f"**{plural(len(warnings), 'warning')}:**")
        lines.append("")
        lines.extend(f"- {_markdown_cell(w.message)}" for w in warnings)
        lines.append("")
    if noted:
        lines.append(f"**{plural(len(noted), 'note')}:**")
        lines.append("")
        lines.extend(f"- {_markdown_cell(n.message)}" for n in noted)
        lines.append("")
    return "\n".join(lines)


def _csv_text(
    comparison: Comparison, views: Sequence[View], *, spreadsheet_safe: bool = False
) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    frame = comparison.keep
    metric_names = [name for name in frame.columns if name not in comparison.key_columns]
    # A key the accounting also names a column of (`passed`) is headed `by_passed`.
    headers = [
        key if key == column else f"by_{key}"
        for key, column in zip(comparison.by, comparison.key_columns, strict=True)
    ]

    def label(value: Any) -> Any:
        # Group keys and column names are the file's text, printed where a terminal reads.
        text = safe_text(_csv_value(value))
        return neutralise_text(text) if spreadsheet_safe else text

    writer.writerow(["view", *(label(key) for key in headers), *metric_names])
    for view in views:
        for row in comparison.view(view).iter_rows(named=True):
            row["tokens_per_accepted_result"] = exact_per_accepted(row)
            writer.writerow(
                [
                    view,
                    *(label(row[key]) for key in comparison.key_columns),
                    *(_csv_value(row[name]) for name in metric_names),
                ]
            )
    return buffer.getvalue()


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (float, Decimal)):
        number = json_number(value)
        return format(number, "f") if isinstance(number, Decimal) else number
    return value


def render_summary(
    comparison: Comparison,
    fmt: str = "table",
    view: View | None = None,
    warnings: Iterable[Finding] = (),
    checks: Iterable[Check] = (),
    *,
    spreadsheet_safe: bool = False,
    width: int | None = None,
) -> str:
    """The summary as text in one of SUMMARY_FORMATS; one view, or both with the trap.

    `width`: the table format fits a terminal that wide (group labels cut by
    `labels.fit_labels`, so no two read the same); None takes the table's natural width.

    `checks` (from `checks.run_checks`) go into the JSON document; the text formats list the
    `warnings` and point at `ledger-tui check`.

    Every format is safe to print on a terminal. Table, markdown and CSV show a file's text
    through `safe_text` (escapes visible, as `\\x1b`); JSON keeps the exact strings (it is
    data) with every character that could act on a terminal written as a `\\uXXXX` escape,
    which any JSON reader turns back into the same string. `spreadsheet_safe` neutralises
    formulas in the CSV's group labels (see `neutralise_formulas`).
    """
    from tui_ledger.accounting.checks import is_warning, warnings_of

    checks = list(checks)
    # The checks hold every warning (the loader's and the price table's among them, and the
    # fair-comparison ones): their warnings are the one list. `warnings` only stand in where
    # no check was run (a streamed scan).
    warning_list = warnings_of(checks) if checks else list(warnings)
    # The checks that are notes (what was done, as `--matched-tasks`), listed as the app's
    # warnings panel lists them: after the warnings, not counted among them.
    noted = [check for check in checks if not is_warning(check)]
    views: tuple[View, ...] = (view,) if view is not None else VIEWS
    if fmt == "json":
        return json_text(summary_json(comparison, view, warning_list, checks))
    if fmt == "csv":
        return _csv_text(comparison, views, spreadsheet_safe=spreadsheet_safe)
    if fmt == "markdown":
        return _markdown_text(comparison, views, warning_list, noted)
    if fmt == "table":
        return _table_text(comparison, views, warning_list, width, noted)
    raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(SUMMARY_FORMATS)}")
