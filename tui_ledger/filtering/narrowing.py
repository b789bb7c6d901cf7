"""Whether one filter keeps only rows another keeps (`narrows`): typing one more letter of a
word, or one more digit of `tokens>2000`, needs only the rows already kept looked at again.

Decided on what the two filters say, term by term, never on rows: a filter narrows another when
each term of the other is implied by one of its own. A term implies
- the very same term (the same words against the same columns);
- a text search it extends: `lean` implies `lea`, `task:login-2` implies `task:login`
  (the shorter text is inside the longer one, as typed and lowercased, so a cell holding the
  longer holds the shorter whichever way its case is matched);
- a number comparison it tightens: `tokens>20000` implies `tokens>2000`, `tokens<=5` `tokens<50`.
Nothing else (a negated term, a regex, dates, a null word, an outcome word) implies any other
term than itself: where in doubt the answer is no, and the rows are filtered from the frame.
Both filters must have been parsed (`query.parse_filter`) against the same frame's columns and
distinct values (`filter_origin` tells what each expression was parsed from).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import polars as pl

from tui_ledger.filtering import filter_origin, query, query_terms
from tui_ledger.schema import OUTCOME_COLUMN, OUTCOMES

# Beyond this a comparison of an integer column with a float could round.
_EXACT = 2**53


@dataclass(frozen=True)
class _Fact:
    """What one term says, as far as implication goes."""

    key: tuple[object, ...]  # the term as written (equal keys: the very same term)
    word: str | None = None  # a text search for this text...
    column: str | None = None  # ...in this column (None: any text column), or the one compared
    op: str | None = None  # a number comparison: `>`, `>=`, `<`, `<=`
    number: float = 0.0


def _fact(term: query_terms.Term, compiler: query._Compiler) -> _Fact:
    key = (term.negated, term.column, term.op, term.value, term.value_quoted)
    if term.negated or not term.value:
        return _Fact(key)
    if term.column is None:
        outcome = not term.value_quoted and term.value.lower() in OUTCOMES
        if outcome and OUTCOME_COLUMN in compiler.schema:
            return _Fact(key)
        return _Fact(key, word=term.value)
    column = query_terms._resolve_column(term, compiler.names)
    kind = query_terms._kind(compiler.schema[column])
    op, value, _ = query_terms._operator_and_value(term, kind)
    if not term.value_quoted and value.lower() in query_terms.NULL_WORDS:
        return _Fact(key)
    if kind == "text" and op == ":" and value:
        return _Fact(key, word=value, column=column)
    if kind == "number" and op in (">", ">=", "<", "<="):
        number = query_terms._parse_number(value)
        if number is not None and math.isfinite(number) and abs(number) < _EXACT:
            return _Fact(key, column=column, op=op, number=number)
    return _Fact(key)


def _facts(expression: pl.Expr) -> tuple[query._Compiler, list[_Fact]] | None:
    origin = filter_origin.origin_of(expression)
    if origin is None:
        return None
    text, compiler = cast("tuple[str, query._Compiler]", origin)
    try:
        terms = query_terms.tokenize(text)
        return compiler, [_fact(term, compiler) for term in terms if compiler.term(term)]
    except query_terms.FilterError:
        return None


def _implies(new: _Fact, old: _Fact) -> bool:
    if new.key == old.key:
        return True
    if new.word is not None and old.word is not None:
        return (
            new.column == old.column
            and old.word in new.word
            and old.word.lower() in new.word.lower()
        )
    if new.op is None or old.op is None or new.column != old.column:
        return False
    if old.op in (">", ">="):
        if new.op == ">":
            return new.number >= old.number
        return new.op == ">=" and (
            new.number > old.number or (new.number == old.number and old.op == ">=")
        )
    if new.op == "<":
        return new.number <= old.number
    return new.op == "<=" and (
        new.number < old.number or (new.number == old.number and old.op == "<=")
    )


def narrows(new: pl.Expr, old: pl.Expr) -> bool:
    """Whether every row `new` keeps is kept by `old` too, as their terms say (False when
    that cannot be told: either not parsed by `query.parse_filter`, or parsed for other
    columns or values)."""
    if new is old:
        return True
    parsed_new, parsed_old = _facts(new), _facts(old)
    if parsed_new is None or parsed_old is None or parsed_new[0] is not parsed_old[0]:
        return False
    facts = parsed_new[1]
    return all(any(_implies(fact, wanted) for fact in facts) for wanted in parsed_old[1])
