"""Make strings from files safe to show on a terminal.

Every string the app or the CLI shows came from a file somebody else wrote: a task id, an error
message, a model name. Printed as-is, an ESC byte starts a terminal command (colours, window titles,
OSC 52 clipboard writes, OSC 8 links), a CR overwrites what was already on the line, and a bidi
override reorders what the reader sees. So every such string goes through `safe_text` (or
`safe_cell` for a table cell, or `safe_text_expr` for a whole column) before it reaches a screen.

Each character that could act on the terminal, or hide from the reader, becomes a short visible
escape; everything else is kept exactly:

- C0 controls, DEL and C1 controls become Python-style escapes: `\\n`, `\\r`, `\\t`, and `\\xNN`
  for the others (`\\x1b` for ESC, `\\x07` for BEL, `\\x7f` for DEL, `\\x9b` for the 8-bit CSI).
- Invisible formatting characters become `<U+XXXX>`: every format character (Unicode category
  Cf: bidi embeddings, overrides, isolates and marks, zero-width spaces and joiners, the soft
  hyphen, the byte-order mark, invisible math operators, interlinear annotations, tag characters
  used to smuggle invisible text, ...), line/paragraph separators, and lone surrogates (which
  cannot even be encoded for output).

A backslash already in the text is not doubled, so a literal `\\x1b` typed in a file looks the same
as an escaped ESC byte; this keeps Windows paths and regexes readable, and the difference does not
matter to anyone reading a table.

Rich markup (`[bold]`) is not this module's concern: the UI shows strings as `rich.text.Text` or
with markup off. `safe_markup` is for the rare place that builds a markup string.

This module is part of the core: it may import `rich`, never `textual`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import polars as pl
from rich.cells import cell_len

__all__ = [
    "DEFAULT_CELL_WIDTH",
    "ELLIPSIS",
    "UNSAFE_CODEPOINTS",
    "safe_cell",
    "safe_markup",
    "safe_text",
    "safe_text_expr",
]

DEFAULT_CELL_WIDTH = 40
ELLIPSIS = "…"

_NAMED_CONTROLS = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def _ranges(*spans: tuple[int, int]) -> Iterable[int]:
    for first, last in spans:
        yield from range(first, last + 1)


# Characters shown as `\xNN` (or `\n`, `\r`, `\t`): C0 controls, DEL, C1 controls.
_CONTROL_CODEPOINTS = tuple(_ranges((0x00, 0x1F), (0x7F, 0x9F)))

# Characters shown as `<U+XXXX>`: invisible, or reorder what is around them.
_FORMAT_CODEPOINTS = tuple(
    _ranges(
        (0x00AD, 0x00AD),  # soft hyphen (invisible: "le\xadan" reads as "lean")
        (0x0600, 0x0605),  # Arabic number signs and other prepended format marks
        (0x061C, 0x061C),  # Arabic letter mark (bidi)
        (0x06DD, 0x06DD),  # Arabic end of ayah
        (0x070F, 0x070F),  # Syriac abbreviation mark
        (0x0890, 0x0891),  # Arabic pound and piastre marks above
        (0x08E2, 0x08E2),  # Arabic disputed end of ayah
        (0x180E, 0x180E),  # Mongolian vowel separator (invisible)
        (0x200B, 0x200F),  # zero-width space, non-joiner, joiner; LRM, RLM
        (0x2028, 0x2029),  # line and paragraph separators
        (0x202A, 0x202E),  # bidi embeddings and overrides: LRE, RLE, PDF, LRO, RLO
        (0x2060, 0x2064),  # word joiner, invisible math operators
        (0x2066, 0x2069),  # bidi isolates: LRI, RLI, FSI, PDI
        (0x206A, 0x206F),  # deprecated format controls
        (0xFEFF, 0xFEFF),  # zero-width no-break space / byte-order mark
        (0xFFF9, 0xFFFB),  # interlinear annotation controls
        (0x110BD, 0x110BD),  # Kaithi number sign
        (0x110CD, 0x110CD),  # Kaithi number sign above
        (0x13430, 0x1343F),  # Egyptian hieroglyph format controls
        (0x1BCA0, 0x1BCA3),  # shorthand format controls
        (0x1D173, 0x1D17A),  # musical symbol format controls
        (0xE0000, 0xE007F),  # tag characters (invisible "ASCII smuggling")
    )
)

# Lone surrogates reach a str through `surrogateescape` decoding; writing one to a terminal
# raises UnicodeEncodeError, so they are escaped too. Polars strings are valid UTF-8 and never hold
# them, which is why `safe_text_expr` leaves them out.
_SURROGATE_CODEPOINTS = tuple(_ranges((0xD800, 0xDFFF)))


def _control_escape(codepoint: int) -> str:
    return _NAMED_CONTROLS.get(codepoint, f"\\x{codepoint:02x}")


def _format_escape(codepoint: int) -> str:
    return f"<U+{codepoint:04X}>"


_ESCAPES: dict[int, str] = {
    **{cp: _control_escape(cp) for cp in _CONTROL_CODEPOINTS},
    **{cp: _format_escape(cp) for cp in _FORMAT_CODEPOINTS},
    **{cp: _format_escape(cp) for cp in _SURROGATE_CODEPOINTS},
}

UNSAFE_CODEPOINTS: frozenset[int] = frozenset(_ESCAPES)
"""Every code point `safe_text` replaces. None of them is `str.isprintable()`."""

# The same table as two parallel lists, for polars' Aho-Corasick `str.replace_many`.
_EXPR_PATTERNS = [chr(cp) for cp in (*_CONTROL_CODEPOINTS, *_FORMAT_CODEPOINTS)]
_EXPR_REPLACEMENTS = [_ESCAPES[ord(ch)] for ch in _EXPR_PATTERNS]

# Upper bound on how many characters `safe_cell` looks at per cell of width. Any character fills at
# least one cell except zero-width ones (combining marks); a cell made of nothing else is cut here.
_CHARS_PER_CELL = 4


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="backslashreplace")
    return str(value)


def _escape(text: str) -> str:
    # Every unsafe character is non-printable, so a printable string is returned untouched
    # without building a copy (the common case, checked at C speed).
    if text.isprintable():
        return text
    return text.translate(_ESCAPES)


def safe_text(value: object) -> str:
    """`value` as a string that prints literally on a terminal.

    Control characters (C0, DEL, C1) become `\\n`, `\\r`, `\\t` or `\\xNN`; bidi controls,
    zero-width and other invisible formatting characters become `<U+XXXX>`. Nothing else changes,
    Rich markup included. `None` is the empty string (callers show missing values as `—`); bytes are
    decoded as UTF-8 with undecodable bytes shown as `\\xNN`; anything else goes through `str()`.

    >>> safe_text("\\x1b[31mred\\x1b[0m")
    '\\\\x1b[31mred\\\\x1b[0m'
    >>> safe_text("abc\\u202edef")
    'abc<U+202E>def'
    """
    return _escape(_as_text(value))


def safe_markup(value: object) -> str:
    """`safe_text(value)` with Rich markup escaped, for building a Rich markup string.

    Prefer passing `rich.text.Text` objects (or `markup=False`) to the UI; use this only where a
    markup string has to be assembled, e.g. `f"[b]{safe_markup(task)}[/b]"`.

    >>> safe_markup("[bold]x")
    '\\\\[bold]x'
    """
    return _escape_markup(safe_text(value))


# A run of backslashes, then a "[" and, where it would open or close a Rich tag, the tag.
_MARKUP_BRACKET = re.compile(r"(\\*)\[([a-z#/@][^\[]*?\])?")
_TRAILING_BACKSLASHES = re.compile(r"(\\+)$")


def _escape_markup(text: str) -> str:
    """Rich markup showing exactly `text`. (`rich.markup.escape` leaves a backslash before a
    "[" that opens no tag, which Rich then drops, so `\\[` would show as `[`.)

    Rich reads a tag with 2k+1 backslashes before it as k backslashes and the tag as text;
    elsewhere it reads "\\[" as "[". A trailing run of backslashes is doubled, since a tag
    (`[/b]`) usually follows.
    """

    def bracket(match: re.Match[str]) -> str:
        slashes, tag = match.group(1), match.group(2)
        if tag is not None:
            return f"{slashes}{slashes}\\[{tag}"
        return f"{slashes}\\[" if slashes else "["

    escaped = _MARKUP_BRACKET.sub(bracket, text)
    return _TRAILING_BACKSLASHES.sub(lambda m: m.group(1) * 2, escaped)


def safe_cell(value: object, width: int = DEFAULT_CELL_WIDTH, *, ellipsis: str = ELLIPSIS) -> str:
    """`safe_text(value)` cut to at most `width` terminal cells, ending in `ellipsis` if cut.

    Widths are terminal cells (a CJK character takes two). An escape such as `\\x1b` or
    `<U+202E>` is never split: it is kept whole or dropped with the rest of the tail. Only the first
    few times `width` characters of the value are looked at, so a 10 MB cell costs what a short one
    costs. `width <= 0` gives the empty string.
    """
    if width <= 0:
        return ""
    window_chars = _CHARS_PER_CELL * width + 16
    if isinstance(value, (bytes, bytearray, memoryview)):
        # Cut the bytes first: a huge blob must not be decoded whole (4 bytes per char at most).
        raw = bytes(value[: 4 * window_chars])
        text = raw.decode("utf-8", errors="backslashreplace")
        cut_input = len(value) > len(raw)
    else:
        text = _as_text(value)
        cut_input = False
    if len(text) > window_chars:
        text = text[:window_chars]
        cut_input = True

    if not cut_input and len(text) <= width and text.isprintable() and cell_len(text) <= width:
        return text  # the common case: short, clean, fits

    escaped = _escape(text)
    if not cut_input and cell_len(escaped) <= width:
        return escaped

    # Cut between whole escapes, leaving room for the ellipsis.
    room = width - cell_len(ellipsis)
    if room < 0:
        return ""
    pieces: list[str] = []
    used = 0
    for char in text:
        piece = _ESCAPES.get(ord(char), char)
        size = cell_len(piece)
        if used + size > room:
            break
        pieces.append(piece)
        used += size
    cut = "".join(pieces)
    # Grapheme-aware measuring can differ from the per-character sum; trust the whole string.
    while pieces and cell_len(cut) > room:
        pieces.pop()
        cut = "".join(pieces)
    return cut + ellipsis


LABEL_WIDTH = 80
"""Terminal cells a group's or task's name takes where people read it (tables, sentences)."""


def safe_label(value: object) -> str:
    """A label as people read it: terminal-safe and cut to `LABEL_WIDTH` cells (a 5 MB group
    name costs what an 80-character one costs). Data exports (CSV, JSON) keep the whole text."""
    return safe_cell(value, LABEL_WIDTH)


def safe_text_expr(expr: pl.Expr) -> pl.Expr:
    """A polars expression doing `safe_text` to every value of `expr`, in one vectorised pass.

    The column is cast to `String` first (so Categorical, Enum and numbers work); nulls stay null.
    The escapes are exactly those of `safe_text` (polars strings never hold lone surrogates).
    """
    return expr.cast(pl.String).str.replace_many(_EXPR_PATTERNS, _EXPR_REPLACEMENTS)
