"""`ledger-tui grader`'s report: the flagged attempts, the grader's health, and the figures as
graded and as vouched, as text, JSON or markdown.

JSON (README, "Can the grader vouch for it?"): `accepted_modes`, `by`, `attempts` (only those with
a signal: `{attempt: <trace's "attempt" object>, signals: [{kind, step, evidence}]}`),
`tests_never_passed` (`[{task, test, attempts}]`), `tasks_all_failed` and `tasks_all_passed`
(`[{task, attempts}]`), `infrastructure` (`[{task, attempts, infrastructure_errors, share}]`),
`vouched` (per group: attempts, accepted as graded and as vouched, tokens per accepted result
both ways, failures kept), and `logs_read`, `unreadable`, `note`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from tui_ledger.accounting.comparison import group_labels
from tui_ledger.accounting.ledger import compare
from tui_ledger.grader.audit import Audit
from tui_ledger.grader.health import Health, grader_health
from tui_ledger.grader.signals import TAMPERING
from tui_ledger.reports.report import json_number, json_text
from tui_ledger.text.numbers import format_count, format_tokens
from tui_ledger.text.textsafe import safe_text
from tui_ledger.trajectory.render import attempt_json

GRADER_FORMATS: tuple[str, ...] = ("text", "json", "md")
_ROW_FIELDS = ("workflow", "task", "outcome")


@dataclass(frozen=True)
class GraderReport:
    """Everything `ledger-tui grader` prints, computed once."""

    audit: Audit
    health: Health
    by: tuple[str, ...]
    flagged: list[dict[str, Any]]
    """Each flagged attempt's row (its fields) with its 1-based `row_number`."""
    vouched: list[dict[str, Any]]
    """Per group: label, attempts, accepted as graded/vouched, per accepted result both ways."""


def grader_report(attempts: pl.DataFrame, audit: Audit, by: Sequence[str]) -> GraderReport:
    """The report of an audited frame (`attempts` as loaded: the audit's rows), grouped by `by`."""
    flagged = [{**attempts.row(row, named=True), "row_number": row + 1} for row in audit.flagged()]
    graded = compare(audit.apply(attempts, "graded"), list(by), intervals="none")
    vouched = compare(audit.apply(attempts, "vouched"), list(by), intervals="none")
    labels = group_labels(graded.keep, list(by))
    figures = []
    for label, before, after in zip(
        labels, graded.keep.iter_rows(named=True), vouched.keep.iter_rows(named=True), strict=True
    ):
        figures.append(
            {
                "group": label,
                "attempts": before["attempts"],
                "accepted_graded": before["accepted"],
                "accepted_vouched": after["accepted"],
                "tokens_per_accepted_result_graded": before["tokens_per_accepted_result"],
                "tokens_per_accepted_result_vouched": after["tokens_per_accepted_result"],
                "lower_bound_graded": bool(before["lower_bound"]),
                "lower_bound_vouched": bool(after["lower_bound"]),
            }
        )
    return GraderReport(audit, grader_health(attempts, audit, by), tuple(by), flagged, figures)


def render_grader(report: GraderReport, fmt: str = "text") -> str:
    """The report in one of GRADER_FORMATS, ready to print (safe on a terminal)."""
    if fmt == "json":
        return json_text(grader_json(report))
    if fmt == "text":
        return _text(report, markdown=False)
    if fmt == "md":
        return _text(report, markdown=True)
    raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(GRADER_FORMATS)}")


def grader_json(report: GraderReport) -> dict[str, Any]:
    audit, health = report.audit, report.health
    return {
        "by": list(report.by),
        "attempts": [
            {
                "attempt": attempt_json(row, row["row_number"]),
                "signals": [signal.as_json() for signal in audit.signals_of(row["row_number"] - 1)],
            }
            for row in report.flagged
        ],
        "tests_never_passed": health.tests_never_passed.to_dicts(),
        "tasks_all_failed": health.tasks_all_failed.to_dicts(),
        "tasks_all_passed": health.tasks_all_passed.to_dicts(),
        "infrastructure": health.infrastructure.to_dicts(),
        "vouched": {
            group["group"]: {
                name: json_number(value) for name, value in group.items() if name != "group"
            }
            for group in report.vouched
        },
        "logs_read": audit.read,
        "unreadable": [{"row": row + 1, "error": message} for row, message in audit.unreadable],
        "note": audit.note,
    }


def _text(report: GraderReport, *, markdown: bool) -> str:
    audit, health = report.audit, report.health
    lines: list[str] = []
    heading = "## " if markdown else ""
    lines.append(
        f"{heading}Grader audit: {format_count(audit.rows)} attempts, "
        f"{format_count(audit.read)} logs read"
        + (f", {format_count(len(audit.unreadable))} unreadable" if audit.unreadable else "")
    )
    if audit.note:
        lines.append(audit.note)
    lines.append("")
    lines.append(f"{heading}Flagged attempts ({len(report.flagged)})")
    if not report.flagged:
        lines.append("none: no signal in any attempt")
    for row in report.flagged:
        where = " · ".join(str(row[name]) for name in _ROW_FIELDS if row.get(name) is not None)
        lines.append(f"{'- ' if markdown else ''}row {row['row_number']}: {where}")
        for signal in audit.signals_of(row["row_number"] - 1):
            step = "no step" if signal.step is None else f"step {signal.step}"
            evidence = f"`{signal.evidence}`" if markdown else signal.evidence
            lines.append(f"    {'- ' if markdown else ''}{signal.kind} ({step}): {evidence}")
    lines.append("")
    lines.append(
        f"{heading}Grader health over {format_count(health.tasks)} tasks two or more groups "
        "attempted"
    )
    lines += _listing(
        "tests no attempt passed",
        [
            f"{t['task']}: {t['test']} (ran {t['attempts']}x)"
            for t in _rows(health.tests_never_passed)
        ],
        markdown,
    )
    lines += _listing(
        "tasks every attempt failed",
        [f"{t['task']} ({t['attempts']} attempts)" for t in _rows(health.tasks_all_failed)],
        markdown,
    )
    lines += _listing(
        "tasks every attempt passed (they cannot separate the groups)",
        [f"{t['task']} ({t['attempts']} attempts)" for t in _rows(health.tasks_all_passed)],
        markdown,
    )
    lines += _listing(
        "infrastructure errors (the harness failed before the agent acted)",
        [
            f"{t['task']}: {t['infrastructure_errors']} of {t['attempts']} attempts "
            f"({t['share']:.0%})"
            for t in _rows(health.infrastructure)
        ],
        markdown,
    )
    lines.append("")
    lines.append(
        f"{heading}Accepted as graded and as vouched (tokens per accepted result, failures kept)"
    )
    lines += _figures(report.vouched, markdown)
    return "\n".join(safe_text(line) for line in lines) + "\n"


def _rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dicts()


def _listing(title: str, items: list[str], markdown: bool) -> list[str]:
    if not items:
        return [f"{'- ' if markdown else ''}{title}: none"]
    return [f"{'- ' if markdown else ''}{title}:"] + [
        f"    {'- ' if markdown else ''}{item}" for item in items
    ]


def _figures(groups: list[dict[str, Any]], markdown: bool) -> list[str]:
    """Each group's acceptances and tokens per accepted result, as graded and as vouched (a
    terminal's table: two header lines, so it fits 80 columns with the demo's names)."""
    rows = [
        [
            str(group["group"]),
            format_count(group["attempts"]),
            format_count(group["accepted_graded"]),
            format_count(group["accepted_vouched"]),
            _per(group["tokens_per_accepted_result_graded"], group["lower_bound_graded"]),
            _per(group["tokens_per_accepted_result_vouched"], group["lower_bound_vouched"]),
        ]
        for group in groups
    ]
    if markdown:
        header = ["group", "attempts", "accepted as graded", "accepted as vouched"]
        header += ["per accepted, graded", "per accepted, vouched"]
        lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
        cells = [[cell.replace("|", "\\|") for cell in row] for row in rows]
        return lines + ["| " + " | ".join(row) + " |" for row in cells]
    header = ["group", "attempts", "graded", "vouched", "graded", "vouched"]
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [
        "  ".join(
            cell.ljust(width) if index == 0 else cell.rjust(width)
            for index, (cell, width) in enumerate(zip(line, widths, strict=True))
        )
        for line in [header, *rows]
    ]
    accepted = widths[2] + 2 + widths[3]
    per = widths[4] + 2 + widths[5]
    above = " " * (widths[0] + 2 + widths[1] + 2)
    above += "accepted".center(accepted) + "  " + "per accepted".center(per)
    return [above.rstrip(), *lines]


def _per(value: float | None, lower_bound: bool) -> str:
    return "—" if value is None else format_tokens(value, lower_bound=lower_bound)


def tampered_lines(audit: Audit) -> list[str]:
    """Each accepted attempt with touched_grader or answer_lookup, one line each (`check
    --fail-on tampering`): its 1-based row, the kind, the step and the evidence."""
    lines = []
    for row in audit.tampered:
        for signal in audit.signals_of(row):
            if signal.kind in TAMPERING:
                lines.append(
                    f"row {row + 1}: {signal.kind} at step {signal.step}: {signal.evidence}"
                )
    return lines
