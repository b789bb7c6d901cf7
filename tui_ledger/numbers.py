"""How figures read: thousands separators, `—` for unknown, `≥` for a lower bound.

One place, so the app, the CLI tables and the markdown export print a figure the same way.
"""

from __future__ import annotations

import math

MISSING = "—"


def format_count(value: int | float | None) -> str:
    """A whole number with thousands separators; `—` when unknown."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}"
    return f"{int(value):,}"


def format_tokens(value: int | float | None, *, lower_bound: bool = False) -> str:
    """Token figures: `3,000`, `≥ 3,000` when some usage is missing, `—` when unknown."""
    text = format_count(value)
    if lower_bound and text != MISSING:
        return f"≥ {text}"
    return text


def format_rate(value: float | None) -> str:
    """A pass rate as a percentage with no false precision."""
    if value is None or math.isnan(value):
        return MISSING
    return f"{value * 100:.0f}%"


def format_factor(value: float | None) -> str:
    """A trap factor, e.g. `×3.0`; `—` when there is nothing to compare."""
    if value is None or math.isnan(value) or math.isinf(value):
        return MISSING
    return f"×{value:.1f}"


def plain_number(value: int | float | None) -> int | float | None:
    """A figure for JSON: integral values as integers (3000, not 3000.0), NaN as null."""
    if value is None:
        return None
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        if value.is_integer() and abs(value) < 2**63:
            return int(value)
    return value
