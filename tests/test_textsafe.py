"""safe_text and friends: a string from a file prints literally and cannot act on the terminal."""

from __future__ import annotations

import sys
import tracemalloc
import unicodedata

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.text import Text

from tui_ledger.text.textsafe import (
    ELLIPSIS,
    UNSAFE_CODEPOINTS,
    safe_cell,
    safe_markup,
    safe_text,
    safe_text_expr,
)

# --- terminal escape sequences cannot act -------------------------------------------------------


def test_csi_colour_is_shown_as_text() -> None:
    assert safe_text("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"


def test_osc_52_clipboard_write_is_inert() -> None:
    payload = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
    assert safe_text(payload) == "\\x1b]52;c;ZWNobyBwd25lZA==\\x07"


def test_osc_8_hyperlink_is_inert() -> None:
    link = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
    assert safe_text(link) == "\\x1b]8;;https://evil.example\\x1b\\click\\x1b]8;;\\x1b\\"


def test_title_change_is_inert() -> None:
    assert safe_text("\x1b]0;pwned\x07") == "\\x1b]0;pwned\\x07"


def test_bell_and_nul_and_del() -> None:
    assert safe_text("ding\x07") == "ding\\x07"
    assert safe_text("a\x00b\x7fc") == "a\\x00b\\x7fc"


def test_c1_controls_including_8bit_csi() -> None:
    assert safe_text("\x9b31m") == "\\x9b31m"
    assert safe_text("next\x85line") == "next\\x85line"


def test_carriage_return_cannot_overwrite() -> None:
    assert safe_text("passed\rfailed") == "passed\\rfailed"


def test_newline_and_tab_are_visible() -> None:
    assert safe_text("line one\nline\ttwo") == "line one\\nline\\ttwo"


# --- invisible and reordering characters are visible -------------------------------------------


def test_bidi_override_is_visible() -> None:
    # The "Trojan Source" trick: RLO makes `exe.txt` read as `txt.exe`.
    assert safe_text("report\u202etxt.exe") == "report<U+202E>txt.exe"


@pytest.mark.parametrize(
    "char",
    [*"\u202a\u202b\u202c\u202d\u202e", *"\u2066\u2067\u2068\u2069", *"\u200e\u200f\u061c"],
)
def test_every_bidi_control_is_visible(char: str) -> None:
    assert safe_text(f"a{char}b") == f"a<U+{ord(char):04X}>b"


@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
def test_zero_width_characters_are_visible(char: str) -> None:
    assert safe_text(f"lean{char}") == f"lean<U+{ord(char):04X}>"


def test_zero_width_joiner_in_a_workflow_name() -> None:
    # Two workflows that look identical on screen must not look identical in the table.
    assert safe_text("lean") != safe_text("le\u200dan")
    assert safe_text("le\u200dan") == "le<U+200D>an"


def test_tag_characters_cannot_smuggle_invisible_text() -> None:
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "hi")
    assert safe_text(f"ok{hidden}") == "ok<U+E0068><U+E0069>"


def test_lone_surrogate_is_visible_and_encodable() -> None:
    text = b"bad\xff".decode("utf-8", errors="surrogateescape")
    shown = safe_text(text)
    assert shown == "bad<U+DCFF>"
    shown.encode("utf-8")  # would raise UnicodeEncodeError if the surrogate survived


def test_every_unsafe_codepoint_is_non_printable() -> None:
    # The fast path returns printable strings untouched; that is only right if this holds.
    assert not any(chr(cp).isprintable() for cp in UNSAFE_CODEPOINTS)


def test_every_output_is_printable_except_for_kept_characters() -> None:
    every_unsafe = "".join(chr(cp) for cp in sorted(UNSAFE_CODEPOINTS))
    shown = safe_text(every_unsafe)
    assert shown.isascii() and shown.isprintable()


# --- everything else is kept literally ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["lean", "fix login", "[bold]x[/]", "[/]", "C:\\Users\\me", "naïve", "数据", "🙂", "e\u0301"],
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert safe_text(text) == text


def test_rich_markup_is_untouched_by_safe_text() -> None:
    assert safe_text("[bold red]x[/]") == "[bold red]x[/]"


def test_non_strings() -> None:
    assert safe_text(None) == ""
    assert safe_text(1234) == "1234"
    assert safe_text(1.5) == "1.5"
    assert safe_text(True) == "True"
    assert safe_text(b"ok\x1b\xff") == "ok\\x1b\\xff"


# --- safe_markup ---------------------------------------------------------------------------------


def test_safe_markup_escapes_markup_and_controls() -> None:
    assert safe_markup("[bold]x[/]") == "\\[bold]x\\[/]"
    assert safe_markup("\x1b[31m[red]") == "\\x1b[31m\\[red]"


@given(st.text())
def test_safe_markup_renders_as_the_safe_text(text: str) -> None:
    assert Text.from_markup(f"[b]{safe_markup(text)}[/b]").plain == safe_text(text)


# --- safe_cell -----------------------------------------------------------------------------------


def test_short_cell_is_unchanged() -> None:
    assert safe_cell("lean", 10) == "lean"


def test_long_cell_ends_with_an_ellipsis_within_width() -> None:
    cell = safe_cell("abcdefghijklmnop", 8)
    assert cell == "abcdefg" + ELLIPSIS
    assert cell_len(cell) == 8


def test_cell_that_fits_exactly_is_not_cut() -> None:
    assert safe_cell("abcdefgh", 8) == "abcdefgh"


def test_escapes_are_never_split() -> None:
    assert safe_cell("ab\x1bcdef", 5) == "ab" + ELLIPSIS  # `\x1b` would not fit whole
    assert safe_cell("ab\x1b", 6) == "ab\\x1b"


def test_escaped_text_that_grows_past_width_is_cut() -> None:
    assert safe_cell("\u202e\u202e", 9) == "<U+202E>" + ELLIPSIS


def test_wide_characters_count_two_cells() -> None:
    cell = safe_cell("数据数据数据", 5)
    assert cell == "数据" + ELLIPSIS
    assert cell_len(cell) == 5


def test_tiny_widths() -> None:
    assert safe_cell("abc", 1) == ELLIPSIS
    assert safe_cell("abc", 0) == ""
    assert safe_cell("a", 1) == "a"
    assert safe_cell("abc", 2, ellipsis="...") == ""


def test_none_cell_is_empty() -> None:
    assert safe_cell(None, 5) == ""


def test_huge_cell_costs_what_a_small_one_costs() -> None:
    huge = "x" * 10_000_000 + "\x1b"
    huge_bytes = b"\xff" * 10_000_000
    zero_width = "e" + "\u0301" * 10_000_000
    # Measured in memory, not time (no test asserts a time): any step over the whole value
    # (decoding, escaping, normalising, copying it) makes a copy of its 10 MB; the window is a
    # few hundred characters.
    tracemalloc.start()
    try:
        for _ in range(100):
            assert safe_cell(huge, 20) == "x" * 19 + ELLIPSIS
            assert cell_len(safe_cell(huge_bytes, 20)) <= 20
            assert safe_cell(zero_width, 20).endswith(ELLIPSIS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, f"{peak:,} bytes at the peak: the whole value was copied"


def test_huge_string_through_safe_text() -> None:
    huge = "ab\x1b" * 1_000_000
    assert safe_text(huge) == "ab\\x1b" * 1_000_000


@given(st.text(), st.integers(min_value=1, max_value=60))
def test_cell_is_a_bounded_prefix_of_the_safe_text(text: str, width: int) -> None:
    cell = safe_cell(text, width)
    full = safe_text(text)
    assert cell_len(cell) <= width
    if cell.endswith(ELLIPSIS) and cell != full:
        assert full.startswith(cell[: -len(ELLIPSIS)])
    else:
        assert cell == full


# --- safe_text_expr ------------------------------------------------------------------------------


def test_expr_sanitises_a_column() -> None:
    frame = pl.DataFrame({"task": ["ok", "\x1b[2J", "a\u202eb", None, "[bold]"]})
    assert frame.select(safe_text_expr(pl.col("task")))["task"].to_list() == [
        "ok",
        "\\x1b[2J",
        "a<U+202E>b",
        None,
        "[bold]",
    ]


def test_expr_works_on_categorical_and_numbers() -> None:
    frame = pl.DataFrame(
        {"model": pl.Series(["gpt\x07", "x"], dtype=pl.Categorical), "tokens": [1, None]}
    )
    out = frame.select(safe_text_expr(pl.col("model")), safe_text_expr(pl.col("tokens")))
    assert out["model"].to_list() == ["gpt\\x07", "x"]
    assert out["tokens"].to_list() == ["1", None]


def _no_surrogates(text: str) -> bool:
    return not any(unicodedata.category(c) == "Cs" for c in text)


@given(st.lists(st.text().filter(_no_surrogates), max_size=8))
def test_expr_agrees_with_safe_text(values: list[str]) -> None:
    series = pl.Series("v", values, dtype=pl.String)
    assert series.to_frame().select(safe_text_expr(pl.col("v")))["v"].to_list() == [
        safe_text(v) for v in values
    ]


def test_expr_covers_every_unsafe_codepoint_polars_can_hold() -> None:
    every = "".join(chr(cp) for cp in sorted(UNSAFE_CODEPOINTS) if not 0xD800 <= cp <= 0xDFFF)
    out = pl.select(safe_text_expr(pl.lit(every))).item()
    assert out == safe_text(every)


def test_every_format_character_is_visible() -> None:
    """Unicode category Cf is invisible by definition: a soft hyphen makes `le\\xadan` read as
    `lean`, so two workflows would look the same."""
    format_characters = [
        cp for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)) == "Cf"
    ]
    assert set(format_characters) <= UNSAFE_CODEPOINTS
    assert safe_text("le\xadan") == "le<U+00AD>an"
