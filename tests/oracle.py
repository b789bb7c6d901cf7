"""A deliberately naive plain-Python reading of the accounting contract, for property tests.

It shares nothing with tui_ledger.ledger but the contract's words: if the two disagree, one
of them has a bug.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from typing import Any

Attempt = tuple[str, int | None, str]  # (workflow, tokens or None when missing, outcome)


def median(values: list[int]) -> int | Fraction:
    """The middle value, or the exact mean of the two middle values of an even count."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    mean = Fraction(ordered[middle - 1] + ordered[middle], 2)
    return int(mean) if mean.denominator == 1 else mean


def oracle_summary(attempts: list[Attempt], view: str) -> dict[str, dict[str, Any]]:
    """Per workflow: the SPEC.md section 3 metrics of one view, computed row by row."""
    groups: dict[str, list[tuple[int | None, str]]] = defaultdict(list)
    for workflow, _, _ in attempts:
        groups[workflow]  # every group exists in every view
    for workflow, tokens, outcome in attempts:
        if view == "keep" or outcome == "passed":
            groups[workflow].append((tokens, outcome))
    result: dict[str, dict[str, Any]] = {}
    for workflow, rows in groups.items():
        known = [tokens for tokens, _ in rows if tokens is not None]
        accepted = sum(1 for _, outcome in rows if outcome == "passed")
        if not rows:
            total: int | None = 0
        elif not known:
            total = None
        else:
            total = sum(known)
        per_accepted = total / accepted if accepted and total is not None else None
        result[workflow] = {
            "attempts": len(rows),
            "accepted": accepted,
            "missing_usage": len(rows) - len(known),
            "median_tokens_per_attempt": median(known) if known else None,
            "total_tokens": total,
            "tokens_per_accepted_result": per_accepted,
            "lower_bound": per_accepted is not None and len(known) < len(rows),
        }
    values = sorted(
        r["tokens_per_accepted_result"]
        for r in result.values()
        if r["tokens_per_accepted_result"] is not None
    )
    for record in result.values():
        value = record["tokens_per_accepted_result"]
        record["rank"] = values.index(value) + 1 if value is not None else len(values) + 1
    return result
