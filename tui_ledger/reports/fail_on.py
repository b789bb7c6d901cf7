"""`ledger-tui check --fail-on`: the conditions a CI gate can fail on, in plain words."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tui_ledger.accounting.checks import warnings_of
from tui_ledger.accounting.comparison import Comparison
from tui_ledger.findings import Finding
from tui_ledger.reports.pair_report import cheapest_decided, pair_line
from tui_ledger.text.textsafe import safe_label
from tui_ledger.text.wording import listing, plural

FAIL_ON_CONDITIONS: tuple[str, ...] = ("flip", "warnings", "not-recorded", "noise", "tampering")


def parse_fail_on(text: str) -> tuple[str, ...]:
    """`flip,noise` -> ("flip", "noise"); ValueError naming the accepted ones otherwise."""
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in FAIL_ON_CONDITIONS]
    if unknown or not names:
        what = f"unknown condition {unknown[0]!r}" if unknown else "no condition given"
        raise ValueError(f"--fail-on: {what}; accepted: {', '.join(FAIL_ON_CONDITIONS)}")
    return names


def conditions_met(
    conditions: Sequence[str],
    comparison: Comparison,
    checks: Iterable[Finding],
    *,
    tampered: Sequence[str] = (),
) -> list[str]:
    """One line per condition that holds (empty: the gate passes). `tampered`: a line for each
    accepted attempt the grader's audit found touching the grader or looking up the answer
    (`grader.report.tampered_lines`)."""
    lines = []
    warnings = warnings_of(checks)
    for condition in conditions:
        if condition == "flip" and comparison.flips():
            keep, drop = comparison.best("keep"), comparison.best("drop")
            who = (
                f": {safe_label(drop)} looks cheapest, {safe_label(keep)} is when failures are kept"
                if keep and drop and keep != drop
                else ""
            )
            lines.append(f"flip: dropping failures changes the ranking{who}")
        elif condition == "warnings" and warnings:
            lines.append(
                f"warnings: {plural(len(warnings), 'warning')} "
                f"(ledger-tui check lists {'it' if len(warnings) == 1 else 'them'})"
            )
        elif condition == "not-recorded" and comparison.not_recorded():
            names = [safe_label(name) for name in comparison.not_recorded()]
            lines.append(f"not-recorded: usage not recorded for {listing(names, limit=3)}")
        elif condition == "noise":
            pair = cheapest_decided(comparison)
            if pair is not None:
                lines.append(f"noise: the cheapest group is not decided: {pair_line(pair)}")
        elif condition == "tampering" and tampered:
            shown = "; ".join(tampered[:3]) + (
                f"; and {len(tampered) - 3} more" if len(tampered) > 3 else ""
            )
            lines.append(
                f"tampering: {len(tampered):,} signal(s) on accepted attempts "
                f"(ledger-tui grader lists them): {shown}"
            )
    return lines
