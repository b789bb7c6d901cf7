"""The filter language (`tui_ledger.filtering.query`) as a Spark column expression.

The text is split into terms by `query.tokenize`, and each term is checked by query.py's own
rules (column resolution with aliases and suggestions, number, date and regex parsing, the
null words), so a filter that is an error locally is the same `FilterError` here. Only the
last step differs: a term becomes a Spark `Column` instead of a polars expression. The
semantics are query.py's (module docstring there); where the engines differ, this is how:

- Text matches ignoring case compare `lower()` of both sides (Java's lower case) where
  polars uses a case-insensitive regex; they differ only for the few letters whose lower
  case is longer than one character (such as `İ`).
- A regex term runs on Java's engine with `(?iU)` (Unicode-aware, as polars' `(?i)` is);
  it is first checked by polars' engine, so a pattern polars refuses is refused here too.
- Terms on the CSV's other columns need their types: pass the schema of
  `SparkLedger.typed_attempts()`.

The seam query.py could offer (docs/SPARK.md): a public `resolve(text, schema) ->
list[ResolvedTerm]` (negated, column, kind of test, typed value) that both the polars
compiler and this translator consume, instead of the private helpers imported below.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from functools import reduce

import polars as pl
from pyspark.sql import Column
from pyspark.sql import functions as F

from tui_ledger.filtering.query import (
    NULL_WORDS,
    OUTCOME_COLUMN,
    Kind,
    Term,
    _kind,
    _operator_and_value,
    _resolve_column,
    term_value,
    tokenize,
)
from tui_ledger.schema import OUTCOMES, SOURCE_COLUMN
from tui_ledger.spark.inputs import column

__all__ = ["spark_filter"]

SchemaType = pl.DataType | type[pl.DataType]


def spark_filter(text: str, schema: Mapping[str, SchemaType]) -> Column | None:
    """The filter `text` as one boolean Spark column (never null) over a frame with `schema`
    (polars dtypes, as `engine.polars_schema` gives them); None when there is nothing to
    filter. Raises `FilterError`, as `query.parse_filter` does, for text that does not parse.
    """
    if not text or text.isspace():
        return None
    translator = _Translator(schema)
    terms = [translator.term(term) for term in tokenize(text)]
    kept = [term for term in terms if term is not None]
    if not kept:
        return None
    return reduce(lambda a, b: a & b, kept)


def _never_null(condition: Column) -> Column:
    return F.coalesce(condition, F.lit(False))


def _lower_equals(value: Column, text: str) -> Column:
    return F.lower(value.cast("string")) == F.lower(F.lit(text))


def _contains(value: Column, needle: str) -> Column:
    return F.lower(value.cast("string")).contains(F.lower(F.lit(needle)))


def _compare(left: Column, op: str, right: object) -> Column:
    literal = F.lit(right)
    if op == ">":
        return left > literal
    if op == ">=":
        return left >= literal
    if op == "<":
        return left < literal
    if op == "<=":
        return left <= literal
    return left == literal


class _Translator:
    """Terms -> Spark columns against one schema (query.py's `_Compiler`, term for term)."""

    def __init__(self, schema: Mapping[str, SchemaType]) -> None:
        self.schema = dict(schema)
        self.names = list(schema)
        # Bare words search the attempts' own text, not the file every row shares.
        self.text_columns = [
            name
            for name in self.names
            if _kind(self.schema[name]) == "text"
            and self.schema[name].base_type() != pl.Null
            and name != SOURCE_COLUMN
        ]

    def term(self, term: Term) -> Column | None:
        condition = self._bare(term) if term.column is None else self._column_term(term)
        if condition is None:
            return None
        condition = _never_null(condition)
        return ~condition if term.negated else condition

    def _bare(self, term: Term) -> Column | None:
        word = term.value
        if not word:
            return None  # `""`: an empty quoted word filters nothing
        lowered = word.lower()
        if not term.value_quoted and lowered in OUTCOMES and OUTCOME_COLUMN in self.schema:
            return F.col(OUTCOME_COLUMN) == lowered
        if not self.text_columns:
            return F.lit(False)
        matches = [_never_null(_contains(column(name), word)) for name in self.text_columns]
        return reduce(lambda a, b: a | b, matches)

    def _column_term(self, term: Term) -> Column:
        name = _resolve_column(term, self.names)
        dtype = self.schema[name]
        kind = _kind(dtype)
        op, value, value_at = _operator_and_value(term, kind)
        if not term.value_quoted and value.lower() in NULL_WORDS and op in (":", "=", "!="):
            missing = column(name).isNull()
            return ~missing if op == "!=" else missing
        if op == "!=":
            # `col!=v` is exactly `-col=v`, so it keeps missing cells too.
            return ~_never_null(self._typed(name, dtype, kind, "=", value, term, value_at))
        return self._typed(name, dtype, kind, op, value, term, value_at)

    def _typed(
        self,
        name: str,
        dtype: SchemaType,
        kind: Kind,
        op: str,
        value: str,
        term: Term,
        value_at: tuple[int, int],
    ) -> Column:
        # The outcome is a closed set, as polars' Enum: a typo, not an empty result.
        closed = OUTCOMES if name == OUTCOME_COLUMN else None
        checked = term_value(name, dtype, kind, op, value, term, value_at, closed)
        target = column(name)
        if checked.op == "~":
            pattern = checked.text
            # Java: (?U) for Unicode classes and case, as polars' regex has by default.
            java = (
                "(?U)" + pattern
                if pattern.startswith("(?-i)")
                else "(?iU)" + pattern.removeprefix("(?i)")
            )
            return target.cast("string").rlike(java)
        if kind == "text" or (checked.op == ":" and kind != "boolean"):
            if checked.op == ":":
                return _contains(target, checked.text)
            return _lower_equals(target, value)
        if kind == "number":
            return _compare(target, checked.op, checked.number)
        if kind == "boolean":
            return target if checked.truth else ~target
        parsed = checked.moment
        if kind == "datetime" and not isinstance(parsed, dt.datetime):
            target = F.to_date(target)  # a date-only value compares the calendar day
        return _compare(target, "=" if op == ":" else op, parsed)
