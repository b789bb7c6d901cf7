"""Why a filter by a name kept nothing, when the name typed is part of a real one.

Lists cut long names (`labels.fit_labels`: `…orchestrator_qwen-3-coder-480B`), and a user who
types what they read (`workflow=orchestrator_qwen-3-coder-480B`) names no group exactly. When a
filter keeps no attempt, `near_names` looks at its `col=value` terms on text columns and, for a
value no row has but some rows' values contain (its pieces between `…` in order), names them
whole, so the summary's empty line says what the full name is.
"""

from __future__ import annotations

import polars as pl

from tui_ledger.filtering.query import FilterError, _resolve_column, tokenize
from tui_ledger.text.textsafe import ELLIPSIS, safe_text

SHOWN = 3
"""At most this many full names are offered."""

MAX_TEXT_ROWS = 2_000_000
"""A plain text column longer than this is not searched (its distinct values cost too much on
the screen's thread); a Categorical one always is (its categories are at hand)."""


def near_names(text: str, attempts: pl.DataFrame) -> str | None:
    """A sentence naming the full values a `col=value` term of `text` was likely cut from (it
    names no value exactly), or None."""
    try:
        terms = tokenize(text)
    except FilterError:
        return None
    for term in terms:
        if term.column is None or term.op != "=" or term.negated or not term.value:
            continue
        try:
            column = _resolve_column(term, list(attempts.columns))
        except FilterError:
            continue
        values = _distinct_text(attempts, column)
        if values is None or term.value in values:
            continue
        pieces = [piece for piece in term.value.split(ELLIPSIS) if piece]
        found = [value for value in values if _in_order(pieces, value)] if pieces else []
        if not found:
            continue
        found.sort()
        names = ", ".join(safe_text(name) for name in found[:SHOWN])
        more = f" and {len(found) - SHOWN:,} more" if len(found) > SHOWN else ""
        return (
            f"no {safe_text(column)} is named {safe_text(term.value)!r}; "
            f"the full name: {names}{more} (f on a cell filters by its full value)."
        )
    return None


def _distinct_text(attempts: pl.DataFrame, column: str) -> list[str] | None:
    """The distinct values of a text column, or None (not text, or too long to search)."""
    series = attempts.get_column(column)
    if isinstance(series.dtype, pl.Categorical | pl.Enum):
        return series.unique().drop_nulls().cast(pl.String).to_list()
    if series.dtype != pl.String or series.len() > MAX_TEXT_ROWS:
        return None
    return series.unique().drop_nulls().to_list()


def _in_order(pieces: list[str], value: str) -> bool:
    """Whether every piece appears in `value`, in order."""
    at = 0
    for piece in pieces:
        found = value.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True
