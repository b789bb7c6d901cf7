"""A filter read as a range of one integer column and the rest (`split_range`): `lean
tokens>2000` is `lean` and tokens from 2001 up, so a summary of cells that knows each cell's
sorted values (`accounting.cube`) can answer it without the rows (`on_cube`).

Decided on what the filter says, term by term, as `narrowing` does (`filter_origin` tells what
each expression was parsed from): a term on the column splits off when it is a plain
comparison (`>`, `>=`, `<`, `<=`, `=`, or `:`, which for numbers is `=`) with a finite number,
not negated; the terms on the column are then ANDed into one inclusive range of integers. A
negated term, `!=`, a null word or a number past 2**62 on the column leaves the filter
unsplit (None): its rows are not one range.

A comparison with a float (`tokens>2.5`, `tokens>1e6`; `tokens>1.5k` is the integer 1500) is
what polars does with it, Int64 against Float64: the same as on integers only while the
column's values are below 2**53 (`TokenRange.exact_below`), which the caller checks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import polars as pl

from tui_ledger.accounting.cube import Cube, TokenRange
from tui_ledger.filtering import filter_origin, query, query_terms

_LARGEST = 2**62  # a bound past this might not be an Int64 literal


@dataclass(frozen=True)
class Range:
    """`rest` (the other terms ANDed, None when there are none) and the column's range
    (`cube.TokenRange`: inclusive bounds, and how far its values may go for the range to be
    what the rows' filter keeps)."""

    rest: pl.Expr | None
    within: TokenRange


def on_cube(
    cube: Cube, where: pl.Expr | None, by: Sequence[str]
) -> tuple[pl.Expr | None, TokenRange | None] | None:
    """The request as `cube` answers it, `(where, tokens)` for `Cube.compare(where, by,
    tokens)`: the filter itself when it reads only the cube's keys, else its other terms and
    its range of tokens when those are covered; None when the cube does not answer (the rows
    do)."""
    if cube.covers(where, by):
        return where, None
    split = split_range(where, "tokens")
    if split is None or not cube.covers(split.rest, by, split.within):
        return None
    return split.rest, split.within


def split_range(expression: pl.Expr | None, column: str) -> Range | None:
    """`expression` (made by `query.parse_filter`) as a range of `column` and its other terms,
    or None: no term on `column`, a term on it that is no plain comparison, or an expression
    whose text is not known."""
    if expression is None:
        return None
    origin = filter_origin.origin_of(expression)
    if origin is None:
        return None
    text, compiler = cast("tuple[str, query._Compiler]", origin)
    if column not in compiler.schema or query_terms._kind(compiler.schema[column]) != "number":
        return None
    low: int | None = None
    high: int | None = None
    exact_below = math.inf
    rest: list[pl.Expr] = []
    found = False
    try:
        terms = query_terms.tokenize(text)
        for term in terms:
            compiled = compiler.term(term)
            if compiled is None:
                continue
            if term.column is None or query_terms._resolve_column(term, compiler.names) != column:
                rest.append(compiled[0])
                continue
            bound = _bound(term, compiler)
            if bound is None:
                return None
            found = True
            op, number = bound
            if isinstance(number, float):
                exact_below = 2.0**53
            if op in (">", ">="):
                least = math.floor(number) + 1 if op == ">" else math.ceil(number)
                low = least if low is None else max(low, least)
            if op in ("<", "<="):
                most = math.ceil(number) - 1 if op == "<" else math.floor(number)
                high = most if high is None else min(high, most)
            if op == "=":
                if not float(number).is_integer():
                    low, high = 1, 0  # no integer equals a fraction
                else:
                    exact = int(number)
                    low = exact if low is None else max(low, exact)
                    high = exact if high is None else min(high, exact)
    except query_terms.FilterError:
        return None
    if not found:
        return None
    combined = None if not rest else rest[0] if len(rest) == 1 else pl.all_horizontal(rest)
    return Range(combined, TokenRange(low, high, exact_below))


def _bound(term: query_terms.Term, compiler: query._Compiler) -> tuple[str, int | float] | None:
    """A plain comparison's operator (`:` read as `=`) and number, or None."""
    if term.negated or term.value_quoted:
        return None
    kind = query_terms._kind(compiler.schema[query_terms._resolve_column(term, compiler.names)])
    op, value, _ = query_terms._operator_and_value(term, kind)
    if value.lower() in query_terms.NULL_WORDS or op not in (">", ">=", "<", "<=", "=", ":"):
        return None
    number = query_terms._parse_number(value)
    if number is None or not math.isfinite(number) or abs(number) >= _LARGEST:
        return None
    return ("=" if op == ":" else op), number
