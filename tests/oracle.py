"""A deliberately naive plain-Python reading of the accounting contract, for property tests.

It shares nothing with tui_ledger.accounting.ledger but the contract's words: if the two
disagree, one of them has a bug.
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
    """Per workflow: the SPEC.md section 3 metrics of one view, computed row by row.

    Usage: missing (None) is unknown; 0 is a suspect zero (kept as 0, but a figure that counts
    one is a lower bound); a group none of whose attempts holds more than 0 has usage not
    recorded: no total, median, figure or rank, in both views.
    """
    groups: dict[str, list[tuple[int | None, str]]] = defaultdict(list)
    recorded_anywhere: dict[str, bool] = defaultdict(bool)
    for workflow, tokens, _ in attempts:
        groups[workflow]  # every group exists in every view
        recorded_anywhere[workflow] |= tokens is not None and tokens > 0
    for workflow, tokens, outcome in attempts:
        if view == "keep" or outcome == "passed":
            groups[workflow].append((tokens, outcome))
    result: dict[str, dict[str, Any]] = {}
    for workflow, rows in groups.items():
        known = [tokens for tokens, _ in rows if tokens is not None]
        zeros = sum(1 for tokens in known if tokens == 0)
        accepted = sum(1 for _, outcome in rows if outcome == "passed")
        if not recorded_anywhere[workflow] or (rows and zeros == len(known)):
            usage = "not_recorded"
        elif len(known) < len(rows) or zeros:
            usage = "lower_bound"
        else:
            usage = "recorded"
        total: int | None
        if usage == "not_recorded":
            total = None
        elif not rows:
            total = 0
        else:
            total = sum(known)
        per_accepted = total / accepted if accepted and total is not None else None
        result[workflow] = {
            "attempts": len(rows),
            "accepted": accepted,
            "missing_usage": len(rows) - len(known),
            "suspect_zeros": zeros,
            "usage": usage,
            "median_tokens_per_attempt": (
                median(known) if known and usage != "not_recorded" else None
            ),
            "total_tokens": total,
            "tokens_per_accepted_result": per_accepted,
            "lower_bound": per_accepted is not None and usage == "lower_bound",
        }
    # Ranks: each figure an interval; no accepted result after every figure; not recorded out.
    top = float("inf")

    def interval(record: dict[str, Any]) -> tuple[float, float]:
        value = record["tokens_per_accepted_result"]
        if value is None:
            return (top, top)
        return (value, 1e308 if record["lower_bound"] else value)

    ranked = {name: r for name, r in result.items() if r["usage"] != "not_recorded"}
    # No accepted result comes after every figure: with no figure at all, nothing is ranked.
    if all(r["tokens_per_accepted_result"] is None for r in ranked.values()):
        ranked = {}
    for name, record in result.items():
        if name not in ranked:
            record.update(rank_best=None, rank_worst=None, rank=None)
            continue
        low, high = interval(record)
        others = [interval(other) for other_name, other in ranked.items() if other_name != name]
        best = 1 + sum(1 for _, other_high in others if other_high < low)
        worst = 1 + sum(1 for other_low, _ in others if other_low < high)
        record.update(rank_best=best, rank_worst=worst, rank=best if best == worst else None)
    return result
