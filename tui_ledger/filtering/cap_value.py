"""A cap as people type it (`1m`, `250k`, `1,000,000`, `1e6`; `$2.50` in dollars) -> `cap.Cap`.

The numbers are the filter language's (`query_terms._parse_number`: one reading of `1.5k` in the
whole app); a bad cap raises `CapError` with one line that says what is wrong and what to type.
"""

from __future__ import annotations

import math

from tui_ledger.accounting.cap import Cap
from tui_ledger.filtering.query_terms import _parse_number

EXAMPLES = "e.g. 1m, 250k, 1,000,000 or 1e6 tokens, or $2.50 with prices"


class CapError(ValueError):
    """A cap that cannot be read; the message is one line for people."""


def parse_cap(text: str) -> Cap:
    """The cap `text` names; raises CapError for 0, a negative, a fraction of a token or
    anything unreadable."""
    typed = text.strip()
    dollars = typed.startswith("$")
    number = _parse_number(typed[1:] if dollars else typed)
    if number is None or not math.isfinite(number):
        raise CapError(f"cap {text!r}: not a number; {EXAMPLES}")
    if number <= 0:
        raise CapError(f"cap {text!r}: a cap must be more than 0; {EXAMPLES}")
    if dollars:
        return Cap(float(number), "usd")
    if isinstance(number, float):
        if not number.is_integer():
            raise CapError(f"cap {text!r}: a token cap is a whole number of tokens; {EXAMPLES}")
        number = int(number)
    return Cap(number)
