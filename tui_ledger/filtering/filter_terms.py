"""Writing filter terms: the text a cell's value becomes in the filter box (the app's `f` and
`F`, and a task picked in the per-task screen), which the filter language (`query`) reads back
as exactly that value.

Decisions: a term is always printable (text holding control, bidi or invisible characters
becomes an anchored regex with `\\x{..}` escapes), and a value that would read as something
else bare (an outcome word, `null`, text with spaces or operators) is quoted.
"""

from __future__ import annotations

import datetime as dt

from tui_ledger.filtering.query_terms import NULL_WORDS, OPERATOR_CHARS, QUOTES, quoted
from tui_ledger.schema import OUTCOMES
from tui_ledger.text.textsafe import UNSAFE_CODEPOINTS, safe_text

__all__ = ["filter_term", "quote_value"]


def _needs_quotes(text: str) -> bool:
    return (
        not text
        or text[0] == "-"
        or any(char.isspace() or char in QUOTES or char in OPERATOR_CHARS for char in text)
    )


def quote_value(text: str) -> str:
    """`text` as the filter language reads it back: bare when that is safe, else double-quoted."""
    if _needs_quotes(text) or text.lower() in NULL_WORDS or text.lower() in OUTCOMES:
        return quoted(text)
    return text


_REGEX_SPECIAL = frozenset("\\.+*?()|[]{}^$#&-~")


def _exact_pattern(text: str) -> str:
    """A regular expression matching exactly `text`, written in printable characters only:
    control, bidi and invisible characters (and the quote and backslash, which the filter's
    quoting would read) as `\\x{..}` escapes, which the regex engine reads back."""
    parts = []
    for char in text:
        if ord(char) in UNSAFE_CODEPOINTS or not char.isprintable() or char in "\"\\'":
            parts.append(f"\\x{{{ord(char):x}}}")
        elif char in _REGEX_SPECIAL:
            parts.append("\\" + char)
        else:
            parts.append(char)
    return "^" + "".join(parts) + "$"


def _printable(text: str) -> bool:
    return text.isprintable() and not any(ord(char) in UNSAFE_CODEPOINTS for char in text)


def filter_term(column: str, value: object, *, exclude: bool = False) -> str:
    """A term matching the rows whose `column` is `value` (`exclude`: the other rows).

    For the app's `f`/`F` keys: `filter_term("task", "fix login")` is `task="fix login"`;
    a missing value gives `task:null`. Text matches ignoring case, like `=` always does.
    The term is always printable: text holding control, bidi or invisible characters (say an
    ESC from a hostile file) becomes an anchored regex with escapes, `task~"^a\\x{1b}b$"`,
    so the filter box never sends the file's escape sequences to the terminal.
    """
    shown_column = safe_text(column)  # a hostile column name as the screen shows it
    name = quoted(shown_column) if _needs_quotes(shown_column) else shown_column
    sign = "-" if exclude else ""
    if isinstance(value, str) and not _printable(value):
        return f'{sign}{name}~"{_exact_pattern(value)}"'
    if value is None:
        return f"{sign}{name}:null"
    if isinstance(value, bool):
        shown = "true" if value else "false"
    elif isinstance(value, (int, float)):
        shown = repr(value)
    elif isinstance(value, (dt.date, dt.time)):
        shown = value.isoformat()
    else:
        shown = quote_value(str(value))
    return f"{sign}{name}={shown}"
