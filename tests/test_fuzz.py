"""Fuzzing: generated files of attempts and filter strings through load, filter and summary.

Each generated file comes with what a person would read in it: the attempts, in order, with
their workflow, usage and outcome, decided by a plain-Python reading of SPEC.md section 1
written here (not the loader's code). Then:

- loading raises `LoadError` exactly when the file holds something the contract refuses (a
  negative, fractional, infinite, junk or too-large count, a word in no vocabulary), and
  nothing else ever escapes;
- a file that loads holds exactly the attempts written (nothing lost, nothing invented), and
  `scan` reads the same;
- the summary of what loaded equals the plain-Python oracle (tests/oracle.py), also after
  any filter that parses; filter strings raise nothing but `FilterError`;
- the file's bytes are unchanged.

Bounded for CI: a few hundred examples in all, no deadline; the module runs in seconds.
"""

from __future__ import annotations

import json
import string
import tempfile
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from tests.corpus.guard import unchanged
from tests.frames import assert_same_attempts
from tests.oracle import oracle_summary
from tui_ledger import schema
from tui_ledger.accounting.compact import text_values
from tui_ledger.accounting.ledger import compare
from tui_ledger.filtering.query import OPERATORS, FilterError, parse_filter
from tui_ledger.load import Ledger, LoadError, load, scan
from tui_ledger.text.numbers import exact_per_accepted
from tui_ledger.text.textsafe import UNSAFE_CODEPOINTS

INT64_MAX = 2**63 - 1
BAD_COUNTS = [
    *("-5", "1.5", "2.5e0", "abc", "inf", "-Infinity", "0x10", "1,000", "1e-3"),
    *(str(INT64_MAX + 1), "1e19", "12 tokens"),
]
FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --- how a person reads a file (SPEC.md section 1), independently of the loader ---------------

STATUS_OUTCOME = {word: outcome for word, outcome in schema.STATUS_WORDS.items() if word}


def reference_count(text: str) -> tuple[int | None, bool]:
    """(the count `text` means, or None for missing; whether it is refused), by Python's
    Decimal: a whole number 0 <= n < 2**63 in plain, decimal or scientific notation."""
    stripped = text.strip()
    if stripped.lower() in schema.MISSING_WORDS:
        return None, False
    if "_" in stripped or not stripped.isascii():
        return None, True
    try:
        value = Decimal(stripped)
    except InvalidOperation:
        return None, True
    if not value.is_finite() or value != value.to_integral_value() or not 0 <= value <= INT64_MAX:
        return None, True
    return int(value), False


def expected_outcome(passed: bool | None, has_passed: bool, status: str | None) -> str:
    """The outcome of one attempt from its `passed` value and its status's outcome."""
    if has_passed and passed is True:
        return "passed"
    if has_passed and passed is False:
        return status if status in ("timeout", "error") else "failed"
    return status or "ungraded"


# --- cells: a value, and a way of writing it --------------------------------------------------


def _respell(draw: st.DrawFn, word: str) -> str:
    """The same word as a person might type it: any case, `_` as `-` or a space."""
    cased = "".join(draw(st.sampled_from([c.lower(), c.upper()])) for c in word)
    return cased.replace("_", draw(st.sampled_from(["_", "-", " "])))


def _scientific(number: int) -> str:
    """`number` in exact scientific notation: 1500 -> 1.5e3."""
    digits = str(number)
    if number == 0:
        return "0e0"
    significant = digits.rstrip("0") or "0"
    exponent = len(digits) - 1
    mantissa = significant[0] + ("." + significant[1:] if len(significant) > 1 else "")
    return f"{mantissa}e{exponent}"


@st.composite
def count_cell(draw: st.DrawFn, *, json_file: bool) -> tuple[object, int | None, bool]:
    """(cell as written, the count it means or None for missing, whether it is refused)."""
    kind = draw(st.sampled_from(["int"] * 6 + ["missing"] * 2 + ["bad", "junk"]))
    if kind == "junk":  # anything number-like: read exactly as a person would, or refused
        text = draw(st.text(alphabet="0123456789.eE+-_ xna", min_size=1, max_size=8))
        number, refused = reference_count(text)
        return text, number, refused
    if kind == "missing":
        if json_file and draw(st.booleans()):
            return None, None, False
        return _respell(draw, draw(st.sampled_from(sorted(schema.MISSING_WORDS)))), None, False
    if kind == "bad":
        bad = draw(st.sampled_from(BAD_COUNTS))
        return bad, None, True
    number = draw(
        st.one_of(
            st.integers(0, 5000),
            st.integers(0, INT64_MAX),
            st.sampled_from([0, 2**53 + 1, INT64_MAX, 10**18]),
        )
    )
    notation = draw(st.sampled_from(["plain", "plain", "decimal", "scientific", "padded"]))
    text = {
        "plain": str(number),
        "decimal": f"{number}.0",
        "scientific": _scientific(number),
        "padded": f" {number} ",
    }[notation]
    if json_file and notation in ("plain", "decimal", "scientific") and draw(st.booleans()):
        return _Raw(text), number, False  # a JSON number literal, not a string
    return text, number, False


class _Raw(str):
    """A JSON number literal to write as it is (not as a string)."""


@st.composite
def passed_cell(draw: st.DrawFn) -> tuple[str, bool | None, bool]:
    kind = draw(st.sampled_from(["true", "false", "missing", "missing", "junk"]))
    if kind == "junk":
        junk = draw(st.sampled_from(["maybe", "2", "yes!", "passed?", "tru"]))
        return junk, None, True
    words = {
        "true": schema.TRUE_WORDS,
        "false": schema.FALSE_WORDS,
        "missing": schema.MISSING_WORDS,
    }[kind]
    word = draw(st.sampled_from(sorted(words)))
    value = {"true": True, "false": False, "missing": None}[kind]
    return _respell(draw, word).replace(" ", "_") if word else word, value, False


@st.composite
def status_cell(draw: st.DrawFn) -> tuple[str, str | None, bool]:
    kind = draw(st.sampled_from(["word"] * 5 + ["missing", "junk"]))
    if kind == "junk":
        return draw(st.sampled_from(["exploded", "pass!", "done", "halted"])), None, True
    if kind == "missing":
        return draw(st.sampled_from(["", "NA", "null", "unset", "None"])), None, False
    word = draw(st.sampled_from(sorted(STATUS_OUTCOME)))
    return _respell(draw, word), STATUS_OUTCOME[word], False


NAME_CHARS = st.characters(
    blacklist_categories=["Cs"],  # surrogates cannot be written as UTF-8
    blacklist_characters="\x00",
)
workflow_names = st.builds(
    lambda first, middle, last: first + middle + last,
    st.sampled_from(string.ascii_letters),
    st.text(NAME_CHARS, max_size=8),
    st.sampled_from(string.ascii_letters + string.digits),
)


def _header_name(draw: st.DrawFn, canonical: str) -> str:
    alias = draw(st.sampled_from(schema.ALIASES[canonical]))
    return _respell(draw, alias)


# --- whole files --------------------------------------------------------------------------------


@st.composite
def ledger_files(draw: st.DrawFn) -> dict[str, Any]:
    """A file of attempts (text and format) and what a person reads in it."""
    fmt = draw(st.sampled_from(["csv", "tsv", "jsonl"]))
    json_file = fmt == "jsonl"
    has_passed = draw(st.booleans())
    has_status = draw(st.booleans()) or not has_passed
    buckets = draw(st.booleans())
    groups = draw(st.lists(workflow_names, min_size=1, max_size=3, unique=True))
    extras = draw(st.lists(st.sampled_from(["note", "seed", "x y", "score"]), unique=True))

    header = {"workflow": _header_name(draw, "workflow")}
    if has_passed:
        header["passed"] = _header_name(draw, "passed")
    if has_status:
        header["status"] = _header_name(draw, "status")
    count_columns = ["input_tokens", "output_tokens"] if buckets else ["tokens"]
    for canonical in count_columns:
        header[canonical] = _header_name(draw, canonical)
    for extra in extras:
        header[extra] = extra
    order = draw(st.permutations(list(header)))

    rows: list[dict[str, object]] = []
    expected: list[tuple[str, int | None, str]] = []
    refused = False
    for _ in range(draw(st.integers(1, 12))):
        workflow = draw(st.sampled_from(groups))
        row: dict[str, object] = {"workflow": workflow}
        passed: bool | None = None
        status: str | None = None
        if has_passed:
            row["passed"], passed, bad = draw(passed_cell())
            refused |= bad
        if has_status:
            row["status"], status, bad = draw(status_cell())
            refused |= bad
        counts: list[int | None] = []
        for canonical in count_columns:
            row[canonical], number, bad = draw(count_cell(json_file=json_file))
            refused |= bad
            counts.append(number)
        tokens: int | None = None if any(c is None for c in counts) else sum(counts)  # type: ignore[arg-type]
        if tokens is not None and tokens > INT64_MAX:
            refused = True  # buckets adding up past the largest count
        for extra in extras:
            row[extra] = draw(st.text(NAME_CHARS, max_size=6))
        rows.append(row)
        expected.append((workflow, tokens, expected_outcome(passed, has_passed, status)))
    return {
        "fmt": fmt,
        "text": _render(fmt, order, header, rows),
        "expected": expected,
        "refused": refused,
    }


def _render(
    fmt: str, order: list[str], header: dict[str, str], rows: list[dict[str, object]]
) -> str:
    if fmt == "jsonl":
        lines = []
        for row in rows:
            parts = []
            for key in order:
                value = row[key]
                written = str(value) if isinstance(value, _Raw) else json.dumps(value)
                parts.append(f"{json.dumps(header[key])}: {written}")
            lines.append("{" + ", ".join(parts) + "}")
        return "\n".join(lines) + "\n"
    separator = "\t" if fmt == "tsv" else ","

    def cell(value: object) -> str:
        text = "" if value is None else str(value)
        if any(char in text for char in (separator, '"', "\n", "\r")) or text != text.strip():
            return '"' + text.replace('"', '""') + '"'
        return text

    lines = [separator.join(cell(header[key]) for key in order)]
    lines += [separator.join(cell(row[key]) for key in order) for row in rows]
    ending = "\r\n" if separator == "," and len(rows) % 2 else "\n"  # CRLF files too
    return ending.join(lines) + ending


# --- the summary against the oracle ------------------------------------------------------------


def assert_summary_matches_oracle(attempts: pl.DataFrame) -> None:
    """Every figure of both views, per workflow, as the plain-Python oracle computes it."""
    if attempts.height == 0:
        return
    comparison = compare(attempts, ["workflow"], intervals="none")
    rows = list(
        attempts.select("workflow", "tokens", pl.col("outcome").cast(pl.String)).iter_rows()
    )
    small = all(
        (total or 0) < 2**53
        for total in attempts.group_by("workflow").agg(pl.col("tokens").sum())["tokens"]
    )
    for view in ("keep", "drop"):
        oracle = oracle_summary(rows, view)
        got = {row["workflow"]: row for row in comparison.view(view).iter_rows(named=True)}
        assert set(got) == set(oracle)
        for group, figures in oracle.items():
            row = got[group]
            for name in ("attempts", "accepted", "missing_usage", "total_tokens", "lower_bound"):
                assert row[name] == figures[name], (view, group, name)
            median = figures["median_tokens_per_attempt"]
            if median is None:
                assert row["median_tokens_per_attempt"] is None
            else:  # exact at every size: a Float64 below 2**52, a Decimal past it
                assert Fraction(row["median_tokens_per_attempt"]) == median, (view, group)
            exact = exact_per_accepted(row)
            if figures["tokens_per_accepted_result"] is None:
                assert exact is None, (view, group)
            else:
                ratio = Fraction(figures["total_tokens"], figures["accepted"])
                assert abs(Fraction(exact) - ratio) <= ratio * Fraction(1, 2**52), (view, group)
            if small:
                assert row["rank"] == figures["rank"], (view, group, "rank")


def _load_both(path: Path) -> Ledger | None:
    """`load` and `scan` of `path`: both refuse, or both read the same attempts."""
    try:
        eager = load(path)
    except LoadError as error:
        try:
            scan(path)
        except LoadError as lazy_error:
            assert str(lazy_error) == str(error)
            return None
        raise AssertionError(f"scan read what load refused: {error}") from None
    lazy, report = scan(path)
    assert_same_attempts(lazy.collect(), eager.attempts)
    assert report == eager.report
    return eager


@FUZZ
@given(ledger_files())
def test_generated_files_load_exactly_or_are_refused(generated: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"runs.{generated['fmt']}"
        path.write_bytes(generated["text"].encode("utf-8"))
        with unchanged(path):
            ledger = _load_both(path)
    if generated["refused"]:
        assert ledger is None, "a refused cell was read"
        return
    assert ledger is not None
    read = list(
        ledger.attempts.select("workflow", "tokens", pl.col("outcome").cast(pl.String)).iter_rows()
    )
    assert read == generated["expected"]  # nothing lost, nothing invented, in order
    assert_summary_matches_oracle(ledger.attempts)


# --- filters -------------------------------------------------------------------------------------

VALUES = st.one_of(
    st.sampled_from(["lean", "1000", "1k", "-1", "null", "—", "true", "2024-05-01", "^a.*$", ""]),
    st.sampled_from(list(schema.OUTCOMES)),
    st.text(max_size=6),
)


@st.composite
def filter_texts(draw: st.DrawFn, columns: list[str]) -> str:
    """Filter text: well-formed terms over the frame's columns, junk, or anything at all."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=30))
    terms = []
    for _ in range(draw(st.integers(1, 4))):
        negate = draw(st.sampled_from(["", "", "-"]))
        value = draw(VALUES)
        if draw(st.booleans()):
            value = '"' + value.replace('"', '\\"') + '"'
        if draw(st.integers(0, 3)) == 0:
            terms.append(negate + value)
            continue
        column = draw(st.sampled_from([*columns, "nosuch", "Agent", "TOKENS"]))
        if draw(st.booleans()) and " " in column:
            column = '"' + column + '"'
        terms.append(negate + column + draw(st.sampled_from(OPERATORS)) + value)
    return " ".join(terms)


@FUZZ
@given(st.data(), ledger_files())
def test_filters_on_generated_files_keep_the_summary_honest(
    data: st.DataObject, generated: dict[str, Any]
) -> None:
    assume(not generated["refused"])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"runs.{generated['fmt']}"
        path.write_bytes(generated["text"].encode("utf-8"))
        with unchanged(path):
            attempts = load(path).attempts
    values = text_values(attempts)
    for _ in range(3):
        text = data.draw(filter_texts(attempts.columns))
        try:
            expression = parse_filter(text, attempts.schema)
        except FilterError as error:
            assert not any(ord(char) in UNSAFE_CODEPOINTS for char in error.message)
            with pytest.raises(FilterError):
                parse_filter(text, attempts.schema, values)
            continue
        kept = attempts if expression is None else attempts.filter(expression)
        assert_summary_matches_oracle(kept)
        # Matching through the distinct text values keeps exactly the same rows, in order.
        through_values = parse_filter(text, attempts.schema, values)
        assert_frame_equal(
            attempts if through_values is None else attempts.filter(through_values), kept
        )
