"""How figures read: thousands separators, `—` for unknown, `≥` for a lower bound, the exact
tokens per accepted result past 2**53 (`exact_per_accepted`), sizes in bytes.

One place, so the app, the CLI tables and the markdown export print a figure the same way.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction
from typing import Any

MISSING = "—"


def format_count(value: int | float | Decimal | None) -> str:
    """A whole number with thousands separators; `—` when unknown.

    A `Decimal` is an exact figure past 2**53 (a median, a ratio): its fraction, if any, shows
    to one place, and no digit is rounded through a float.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, Decimal):
        return f"{value:,.0f}" if value == value.to_integral_value() else f"{value:,.1f}"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}"
    return f"{int(value):,}"


def format_tokens(value: int | float | Decimal | None, *, lower_bound: bool = False) -> str:
    """Token figures: `3,000`, `≥ 3,000` when some usage is missing, `—` when unknown.

    A ratio such as 61,516.5 tokens per accepted result reads as 61,517: a fraction of a token
    is noise on screen (JSON and CSV keep the exact value). Below 10 the decimal stays.
    """
    if isinstance(value, float) and math.isfinite(value) and abs(value) >= 10:
        value = math.floor(abs(value) + 0.5) * (1 if value >= 0 else -1)
    text = format_count(value)
    if lower_bound and text != MISSING:
        return f"≥ {text}"
    return text


NOT_RECORDED = "not recorded"
"""How a figure reads when the group's usage was never recorded (never `0`, never `≥ 0`)."""


def format_usage_figure(
    value: int | float | Decimal | None,
    usage: str | None,
    *,
    lower_bound: bool = False,
    money: bool = False,
) -> str:
    """A total, median or per-accepted figure given the group's usage status (`ledger.usage`):
    `not recorded` when it was never recorded, else the figure, `≥ N` when `lower_bound`."""
    if usage == "not_recorded":
        return NOT_RECORDED
    if money:
        return format_money(None if value is None else float(value), lower_bound=lower_bound)
    return format_tokens(value, lower_bound=lower_bound)


def format_rate(value: float | None) -> str:
    """A pass rate as a percentage with no false precision."""
    if value is None or math.isnan(value):
        return MISSING
    return f"{value * 100:.0f}%"


def format_factor(value: float | None, *, lower_bound: bool = False) -> str:
    """A trap factor, e.g. `×3.0`, `≥ ×2.8` when only a lower bound; `—` when there is
    nothing to compare."""
    if value is None or math.isnan(value) or math.isinf(value):
        return MISSING
    return f"≥ ×{value:.1f}" if lower_bound else f"×{value:.1f}"


def plain_number(value: int | float | Decimal | None) -> int | float | Decimal | None:
    """A figure for JSON: integral values as integers (3000, not 3000.0), NaN as null.

    An integral `Decimal` becomes an `int`; any other stays a `Decimal`, all of its digits.
    """
    if value is None:
        return None
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else value.normalize()
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        if value.is_integer() and abs(value) < 2**63:
            return int(value)
    return value


def format_money(value: float | None, *, lower_bound: bool = False) -> str:
    """USD with no false precision: `$1,234`, `$12.35`, `$0.043`; `—` when unknown."""
    if value is None or math.isnan(value):
        return MISSING
    if math.isinf(value):
        return "∞"
    magnitude = abs(value)
    if magnitude >= 100:
        text = f"${value:,.0f}"
    elif magnitude >= 1 or magnitude == 0:
        text = f"${value:,.2f}"
    else:
        # Two significant digits, never scientific notation.
        decimals = max(2, 1 - math.floor(math.log10(magnitude)))
        text = f"${value:.{decimals}f}"
    return f"≥ {text}" if lower_bound else text


def format_compact(value: int | float | None) -> str:
    """A figure in at most four characters or so: `950`, `1.2k`, `34k`, `1.2M`, `340T`; past a
    thousand trillion a power of ten, `9.2e18` (not `9223372T`); `∞`; `—`."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    magnitude = abs(value)
    if round(magnitude / 1e12) >= 1000:
        mantissa, exponent = f"{value:.1e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= limit:
            scaled = value / limit
            return (
                f"{scaled:.1f}{suffix}" if abs(round(scaled, 1)) < 10 else f"{scaled:.0f}{suffix}"
            )
    return f"{value:.0f}"


def format_interval(low: float | None, high: float | None, kind: str = "count") -> str:
    """A 95% interval in brackets: `[9–79%]` (rate), `[1.0k–4.2k]` (count), `[$0.03–$0.06]`."""
    if low is None and high is None:
        return ""
    if kind == "rate":
        low_text = MISSING if low is None else f"{low * 100:.0f}"
        high_text = MISSING if high is None else f"{high * 100:.0f}"
        return f"[{low_text}–{high_text}%]"
    if kind == "money":
        return f"[{format_money(low)}–{format_money(high)}]"
    return f"[{format_compact(low)}–{format_compact(high)}]"


def format_bytes(count: int) -> str:
    """A size in bytes as people read it: `52.3 MB`, `1.4 GB` (powers of ten), `45,069 bytes`."""
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count:,} bytes"


NOTE_MARK = "†"
"""Marks a figure whose 95% interval says little (a small sample); a note says why."""

FLOAT_EXACT = 2**53
"""Every integer below this is exactly a float64."""


_DECIMALS = Decimal("0.000001")


def exact_per_accepted(row: dict[str, Any], name: str = "tokens_per_accepted_result") -> Any:
    """`total_tokens / accepted` exactly, where the Float64 figure cannot be trusted.

    The accounting divides an exact Int128 total as a float; past 2**53 that rounds the last
    digits (9,007,199,254,740,993 tokens for one accepted result read 9,007,199,254,740,992).
    Here the division is redone on Python integers: a whole quotient is an `int`; a fraction
    past 2**53 a `Decimal` to six places. Anything else is the row's own figure.
    """
    value = row.get(name)
    total, accepted = row.get("total_tokens"), row.get("accepted")
    if value is None or total is None or not accepted:
        return value
    ratio = Fraction(int(total), int(accepted))
    if ratio.denominator == 1:
        return int(ratio)
    if abs(ratio) < FLOAT_EXACT:
        return value
    with localcontext() as context:
        context.prec = 60
        quotient = Decimal(ratio.numerator) / Decimal(ratio.denominator)
        return quotient.quantize(_DECIMALS, rounding=ROUND_HALF_EVEN).normalize()
