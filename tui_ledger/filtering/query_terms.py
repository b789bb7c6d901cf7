"""The filter language read: one line of text -> terms (`tokenize`), and each column term
checked against its column (`term_value`): the grammar, the column names, the values (numbers,
dates, regexes) and every error's words and span. The language itself is described in
query.py, which turns the checked terms into one polars expression; the Spark engine
(spark/filters.py) compiles the same checked terms into its own.

Parsing runs on every keystroke of the app's filter box: a small hand-written scanner
(microseconds); bad input raises only `FilterError`. Part of the core: never imports textual.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import polars as pl

from tui_ledger.schema import (
    ALIASES,
    FALSE_WORDS,
    TRUE_WORDS,
    canonical_for,
    normalise_name,
)
from tui_ledger.text.textsafe import safe_text

# Every operator, for help screens and highlighting. `==` reads as `=`; `:>`, `:>=`, `:<`, `:<=`
# are comparisons on numbers and dates (GitHub-search style) and a plain search on text.
OPERATORS: tuple[str, ...] = (
    ":",
    "=",
    "==",
    "!=",
    ">",
    ">=",
    "<",
    "<=",
    "~",
    ":>",
    ":>=",
    ":<",
    ":<=",
)
OPERATOR_CHARS = frozenset(":=<>!~")
_COMPARISONS = frozenset({">", ">=", "<", "<="})

# Unquoted values meaning "the cell is missing", with `:`, `=` or `!=`. `—` is how the app shows
# a missing cell, so filtering to a cell under the cursor round-trips.
NULL_WORDS = frozenset({"null", "missing", "—"})

QUOTES = frozenset("\"'")
_NUMBER_SUFFIXES = {"k": 1_000, "m": 1_000_000, "b": 1_000_000_000}
_GROUPED_NUMBER = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")
_I64_LIMIT = 2**63

Kind = Literal["text", "number", "boolean", "date", "datetime", "time", "other"]
# A frame's schema, or a plain dict of dtypes (instances or classes: `{"tokens": pl.Int64}`).
SchemaType = pl.DataType | type[pl.DataType]


class FilterError(ValueError):
    """A filter that does not parse: `message` for people, `position` where in the text.

    `position` is the 0-based character offset of the offending part (a column name, an operator or
    a value) and `end` the offset just after it, so a UI can underline `text[position:end]`.
    """

    def __init__(self, message: str, position: int = 0, end: int | None = None) -> None:
        # Column names and values come from files: the message is shown, never obeyed.
        message = safe_text(message)
        super().__init__(message)
        self.message = message
        self.position = position
        self.end = max(end if end is not None else position + 1, position)

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class Term:
    """One term of a filter as typed, before it is checked against the columns.

    `column` and `op` are None for a bare word. Offsets index the filter text; `value_quoted` says
    whether any part of the value was in quotes (quoted values are never shortcuts or null words).
    """

    text: str
    start: int
    end: int
    negated: bool
    column: str | None
    column_start: int
    column_end: int
    op: str | None
    op_start: int
    value: str
    value_start: int
    value_end: int
    value_quoted: bool


# --- scanning ------------------------------------------------------------------------------------

# One character of a term: the character, whether it was inside quotes, its offset in the text.
_Char = tuple[str, bool, int]


def _scan(text: str) -> Iterable[tuple[int, int, list[_Char], list[int]]]:
    """Split `text` into terms: (start, end, characters, indexes where a quoted part began)."""
    length = len(text)
    index = 0
    while index < length:
        if text[index].isspace():
            index += 1
            continue
        start = index
        chars: list[_Char] = []
        quote_marks: list[int] = []
        while index < length and not text[index].isspace():
            char = text[index]
            if char not in QUOTES:
                chars.append((char, False, index))
                index += 1
                continue
            quote_marks.append(len(chars))
            index += 1
            while index < length and text[index] != char:
                inner = text[index]
                if inner == "\\" and index + 1 < length and text[index + 1] in (char, "\\"):
                    chars.append((text[index + 1], True, index + 1))
                    index += 2
                else:
                    chars.append((inner, True, index))
                    index += 1
            index += 1  # the closing quote; an unclosed quote simply ends with the text
        yield start, min(index, length), chars, quote_marks


def _find_operator(chars: list[_Char], begin: int) -> tuple[int, str, int] | None:
    """The first unquoted operator at or after `begin`: (index into chars, operator, its width)."""

    def unquoted(index: int) -> str:
        if index < len(chars) and not chars[index][1]:
            return chars[index][0]
        return ""

    for index in range(begin, len(chars)):
        char = unquoted(index)
        if not char or char not in OPERATOR_CHARS:
            continue
        pair = char + unquoted(index + 1)
        if pair == "==":
            return index, "=", 2
        if pair in ("!=", ">=", "<="):
            return index, pair, 2
        if char == "!":
            continue  # `!` alone is text
        if pair in (":>", ":<"):
            if unquoted(index + 2) == "=":
                return index, pair + "=", 3
            return index, pair, 2
        return index, char, 1
    return None


def _joined(chars: list[_Char]) -> str:
    return "".join(char for char, _, _ in chars)


def tokenize(text: str) -> list[Term]:
    """The terms of `text`, in order, with their offsets; raises FilterError only for lone `-`.

    Parses the syntax only: columns and values are checked by `parse_filter`.
    """
    terms: list[Term] = []
    for start, end, chars, quote_marks in _scan(text):
        body = 0
        negated = False
        # Only a `-` that is the term's very first character negates: after an empty quoted
        # part (`""-1`) it is text, or `""-1` and `-""-1` would both be negations.
        if chars and chars[0] == ("-", False, start):
            if len(chars) == 1 and not quote_marks:
                raise FilterError("'-' needs a term after it, e.g. -failed", start, start + 1)
            negated, body = True, 1
        found = _find_operator(chars, body)
        if found is None:
            value_chars = chars[body:]
            value_start = value_chars[0][2] if value_chars else end
            terms.append(
                Term(
                    text=text[start:end],
                    start=start,
                    end=end,
                    negated=negated,
                    column=None,
                    column_start=start,
                    column_end=start,
                    op=None,
                    op_start=start,
                    value=_joined(value_chars),
                    value_start=value_start,
                    value_end=end,
                    value_quoted=bool(quote_marks),
                )
            )
            continue
        op_index, op, op_width = found
        op_start = chars[op_index][2]
        column_chars = chars[body:op_index]
        value_index = op_index + op_width
        value_chars = chars[value_index:]
        column_start = column_chars[0][2] if column_chars else op_start
        terms.append(
            Term(
                text=text[start:end],
                start=start,
                end=end,
                negated=negated,
                column=_joined(column_chars),
                column_start=column_start,
                column_end=op_start,
                op=op,
                op_start=op_start,
                value=_joined(value_chars),
                value_start=value_chars[0][2] if value_chars else end,
                value_end=end,
                value_quoted=any(mark >= value_index for mark in quote_marks),
            )
        )
    return terms


# --- columns -------------------------------------------------------------------------------------


def _kind(dtype: pl.DataType | type[pl.DataType]) -> Kind:
    base = dtype.base_type()
    if base in (pl.String, pl.Categorical, pl.Enum, pl.Null):
        return "text"  # an all-null column (Null) reads as text that never matches
    if base == pl.Boolean:
        return "boolean"
    if base == pl.Date:
        return "date"
    if base == pl.Datetime:
        return "datetime"
    if base == pl.Time:
        return "time"
    if dtype.is_numeric():
        return "number"
    return "other"


def _operator_and_value(term: Term, kind: Kind) -> tuple[str, str, tuple[int, int]]:
    """A column term's operator, value and the value's span, as both engines compare them:
    `:>` (and `:>=`, `:<`, `:<=`) compares numbers and dates (`tokens:>5` is `tokens>5`) and
    on text looks for the text (`task:>x` contains ">x"); a term with no value is an error."""
    op = term.op or ":"
    value = term.value
    value_at = (term.value_start, term.value_end)
    if not value and not term.value_quoted:
        shown = f"{term.column}{op}"
        raise FilterError(f"{shown!r} needs a value after {op!r}", term.op_start, term.end)
    if op in (":>", ":>=", ":<", ":<="):
        if kind in ("number", "date", "datetime", "time"):
            op = op[1:]
        else:  # on text, `task:>x` looks for the text ">x"
            op, value = ":", op[1:] + value
            value_at = (term.op_start + 1, term.value_end)
    return op, value, value_at


@dataclass(frozen=True)
class TermValue:
    """A column term's value, checked against its column's kind by the rules (and in the
    words) both engines share (`term_value`); each builds its own expression from it."""

    kind: Kind
    op: str  # as compared: `:`, `=`, `~`, `<`, `<=`, `>`, `>=`
    text: str = ""  # `~`: the regex with its case flag; text: the value; `:` on a date: the needle
    number: float = 0.0
    truth: bool = False
    moment: dt.date | dt.datetime | dt.time | None = None  # a date, datetime or time compared


def term_value(
    column: str,
    dtype: SchemaType,
    kind: Kind,
    op: str,
    value: str,
    term: Term,
    value_at: tuple[int, int],
    closed: Sequence[str] | None = None,
) -> TermValue:
    """`column op value` checked for the column's kind: a FilterError (with the span to mark)
    for a column the filter cannot search, a bad regex, a comparison on text or true/false, a
    value that is not a number, a boolean or a date, or (`closed`: the column's only values,
    an Enum's or the outcome's) a value outside them."""
    if kind == "other":
        raise FilterError(
            f"column {column!r} holds {dtype}, which the filter cannot search",
            term.column_start,
            term.column_end,
        )
    if op == "~":
        pattern = value if value.startswith("(?-i)") else "(?i)" + value
        problem = _regex_problem(pattern)
        if problem is not None:
            raise FilterError(f"bad regular expression: {problem}", *value_at)
        return TermValue(kind, op, text=pattern)
    if kind in ("text", "boolean") and op in _COMPARISONS:
        what = "text (use : = ~)" if kind == "text" else "true/false"
        raise FilterError(
            f"{op!r} compares numbers or dates; {column} is {what}",
            term.op_start,
            term.op_start + len(op),
        )
    if kind == "text":
        lowered = value.lower()
        if op != ":" and closed is not None and lowered not in {v.lower() for v in closed}:
            # A closed set of values: a value outside it is a typo, not an empty result.
            close = difflib.get_close_matches(lowered, list(closed), n=1)
            hint = f"did you mean {close[0]!r}?" if close else "one of " + ", ".join(closed)
            raise FilterError(f"{column} has no value {value!r}; {hint}", *value_at)
        return TermValue(kind, op, text=value)
    if kind == "number":
        number = _parse_number(value)
        if number is None:
            raise FilterError(
                f"{column} holds numbers; {value!r} is not a number (e.g. 1000, 1.5k)", *value_at
            )
        return TermValue(kind, "=" if op == ":" else op, number=number)
    if kind == "boolean":
        lowered = value.strip().lower()
        if lowered in TRUE_WORDS or lowered in FALSE_WORDS:
            return TermValue(kind, op, truth=lowered in TRUE_WORDS)
        raise FilterError(f"{column} is true/false; {value!r} is neither", *value_at)
    if op == ":":
        # `timestamp:2024-05` matches the value's text, with or without the ISO `T`.
        return TermValue(kind, op, text=value.strip().replace("T", " ").replace("t", " "))
    parsed = _parse_temporal(value, kind)
    if parsed is None:
        example = {"date": "2024-05-01", "time": "14:30"}.get(kind, "2024-05-01T14:30")
        raise FilterError(
            f"{column} holds {kind}s; {value!r} is not one (e.g. {example})", *value_at
        )
    return TermValue(kind, op, moment=parsed)


def _resolve_column(term: Term, names: list[str]) -> str:
    """The real column `term.column` names: exactly, ignoring case, normalised, or by alias."""
    name = term.column or ""
    if not name:
        op = term.op or ":"
        raise FilterError(
            f"a column name is needed before {op!r}", term.op_start, term.op_start + len(op)
        )
    if name in names:
        return name
    folded = name.casefold()
    hits = [column for column in names if column.casefold() == folded]
    if not hits:
        key = normalise_name(name)
        hits = [column for column in names if normalise_name(column) == key]
    if not hits:
        # A name holding control or invisible characters, typed as the screen shows it
        # (`note \x1b[1m`): the file's own bytes cannot be typed, nor should they be.
        hits = [column for column in names if safe_text(column) == name]
    if len(hits) == 1:
        return hits[0]
    where = (term.column_start, term.column_end)
    if hits:
        listed = ", ".join(repr(column) for column in hits)
        raise FilterError(f"column {name!r} is ambiguous: {listed}; type it exactly", *where)
    canonical = canonical_for(name)
    if canonical is not None and canonical in names:
        return canonical
    raise FilterError(_unknown_column_message(name, names, term), *where)


def _unknown_column_message(name: str, names: list[str], term: Term) -> str:
    key = normalise_name(name)
    by_key = {normalise_name(column): column for column in names}
    close = difflib.get_close_matches(key, list(by_key), n=1, cutoff=0.65)
    if close:
        return f"unknown column {name!r}; did you mean {by_key[close[0]]!r}?"
    aliases = {
        alias: canonical
        for canonical, names_for in ALIASES.items()
        if canonical in names
        for alias in names_for
    }
    # Aliases are short and many: only a near miss counts (`agnet` -> `agent`, not `bar` -> `arm`).
    close = difflib.get_close_matches(key, list(aliases), n=1, cutoff=0.75)
    if close:
        return (
            f"unknown column {name!r}; did you mean {close[0]!r} "
            f"(another name for {aliases[close[0]]!r})?"
        )
    shown = ", ".join(names[:8]) + (", …" if len(names) > 8 else "")
    text = quoted(term.text[1:] if term.negated else term.text)
    return f"unknown column {name!r} (columns: {shown}); to search for the text, quote it: {text}"


# --- values --------------------------------------------------------------------------------------


def _parse_number(text: str) -> int | float | None:
    """`1000`, `1,000`, `1_000`, `-2.5`, `1e6`, `1.5k`, `2M` -> a number; anything else -> None."""
    cleaned = text.strip().lower()
    multiplier = 1
    if len(cleaned) > 1 and cleaned[-1] in _NUMBER_SUFFIXES and cleaned[-2] not in "+-":
        multiplier = _NUMBER_SUFFIXES[cleaned[-1]]
        cleaned = cleaned[:-1]
    if "," in cleaned:
        if not _GROUPED_NUMBER.fullmatch(cleaned):
            return None
        cleaned = cleaned.replace(",", "")
    if not cleaned or not cleaned.isascii():
        return None
    number: int | float
    try:
        number = int(cleaned)
    except ValueError:
        try:
            number = float(cleaned)
        except ValueError:
            return None
    try:
        number = number * multiplier
        if isinstance(number, float) and multiplier > 1 and number.is_integer():
            number = int(number)  # `1.5k` is 1500, not 1500.0
        if isinstance(number, int) and abs(number) >= _I64_LIMIT:
            number = float(number)  # beyond Int64: compare as a float, never overflow
    except OverflowError:
        number = math.copysign(math.inf, number)
    return number


def _parse_temporal(text: str, kind: Kind) -> dt.date | dt.datetime | dt.time | None:
    """ISO text -> a date (date-only text), a datetime or a time, fitting `kind`; else None."""
    value = text.strip()
    try:
        if kind == "time":
            return dt.time.fromisoformat(value)
        if len(value) <= 10 or kind == "date":
            return dt.date.fromisoformat(value)
        # A trailing `Z` is UTC; Python 3.10's fromisoformat reads only `+00:00`.
        iso = value.replace(" ", "T", 1)
        if iso[-1:] in ("Z", "z"):
            iso = iso[:-1] + "+00:00"
        return dt.datetime.fromisoformat(iso)
    except (ValueError, OverflowError):
        if kind == "datetime" and len(value) <= 10:
            try:
                return dt.datetime.fromisoformat(value)
            except (ValueError, OverflowError):
                return None
        return None


@lru_cache(maxsize=256)
def _regex_problem(pattern: str) -> str | None:
    """Why polars' regex engine rejects `pattern`, or None if it compiles."""
    try:
        pl.Series([""], dtype=pl.String).str.contains(pattern)
    except Exception as error:  # polars raises ComputeError; any failure means "not usable"
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        detail = next(
            (line for line in lines if line.startswith("error:")), lines[-1] if lines else ""
        )
        return detail.removeprefix("error:").strip() or "invalid regular expression"
    return None


def quoted(value: str) -> str:
    """`value` as the filter language reads it inside double quotes (escapes for `\\` and `"`)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
