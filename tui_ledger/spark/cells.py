"""The loader's cell rules as Spark column expressions: a token count read exactly from its text
(plain, decimal or scientific notation, whole numbers only, nothing past Int64, nothing read
through a float), keys trimmed as polars trims them, and the outcome from `passed` and
`status` words (SPEC.md section 1). `opening.open_ledger` runs them as steps.

Imports pyspark: only the Spark path imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tui_ledger import schema
from tui_ledger.spark.inputs import column

INT64_MAX = 2**63 - 1
# Helper columns (`__ledger_*`) live only inside the engine's plans; none reaches a result.
WHY = "__ledger_why_"  # + canonical name: why a cell cannot be read (null when it can)
BAD = "__ledger_bad_"  # + canonical name: the cell as written, where it cannot be read
RAW = "__ledger_raw_"  # + workflow or task: a text key as read, before its trim (`fine_cells`)
# Per row, what the validation counts: a usage of 0, buckets that do not add up to `tokens`,
# `passed` and `status` that disagree, a `passed` or `status` word that is not one.
ZERO = "__ledger_zero"
MISMATCH = "__ledger_mismatch"
CONTRADICTING = "__ledger_contradicting"
PASSED_UNKNOWN = "__ledger_passed_unknown"
STATUS_UNKNOWN = "__ledger_status_unknown"
FLAGS = (ZERO, MISMATCH, CONTRADICTING, PASSED_UNKNOWN, STATUS_UNKNOWN)
# White space as the loader strips it: polars' strip_chars (Rust's char::is_whitespace) for
# keys and counts; Python's str.strip (which also strips \x1c-\x1f) for outcome words.
_RUST_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_PYTHON_SPACE = _RUST_SPACE + "\x1c\x1d\x1e\x1f"
# The loader's number grammar, for Java's regex engine (same syntax).
_NUMBER = r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$"
_INFINITY_WORDS = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity")
# Exponents are clamped to this before arithmetic: past it every count is out of range or
# fractional anyway, and long arithmetic can then never overflow (an error under ANSI).
_EXPONENT_CLAMP = 1_000_000_000


def stripped(value: Column, spaces: str = _RUST_SPACE) -> Column:
    """`value` without the `spaces` at either end: trim(BOTH chars FROM value) (no regular
    expression per row), asked only of a cell whose first or last character is one of them.
    Spark's trim tries each of the 25 characters at each end of every cell: 0.6-0.9 s a 1M
    scan of one key, against 0.2-0.3 s for the scan itself; the two one-character
    lookups cost 0.2 s, and most cells have nothing to strip."""
    ends = list(spaces)
    padded = F.substring(value, 1, 1).isin(ends) | F.substring(value, -1, 1).isin(ends)
    return F.when(padded, F.trim(value, F.lit(spaces))).otherwise(value)


def is_integral(dtype: T.DataType) -> bool:
    if isinstance(dtype, T.DecimalType):
        return dtype.scale == 0 and dtype.precision <= 18
    return isinstance(dtype, (T.LongType, T.IntegerType, T.ShortType, T.ByteType))


def as_text(value: Column, dtype: T.DataType) -> Column:
    """A cell as text, as the loader validates it: a nested value as its JSON."""
    if isinstance(dtype, (T.ArrayType, T.MapType, T.StructType)):
        return F.to_json(value)
    if isinstance(dtype, T.StringType):
        return value
    return value.try_cast("string")


def count_steps(name: str, dtype: T.DataType) -> list[dict[str, Column]]:
    """Steps that read one token-count column `name` into `name` (LONG, null = missing),
    `WHY + name` (why a cell is not a count, null when fine) and `BAD + name` (the cell as
    written, where it is not).

    Integers arrive as they are (only the sign is checked). Anything else is read from its
    text exactly as the loader reads it: `try_cast` takes the plain integers (the common
    case); only the rest go through the exact decimal parser. Each step is one `withColumns`
    over named helper columns, so no expression repeats another inside itself: written as one
    nested expression, the parser is a tree Spark takes tens of seconds to plan and compile.
    """
    raw = column(name)
    if is_integral(dtype):
        value = raw.cast("long")
        return [
            {name: value},
            {
                WHY + name: F.when(F.col(name) < 0, F.lit("negative")),
                BAD + name: F.when(F.col(name) < 0, F.col(name).cast("string")),
            },
        ]

    def h(part: str) -> Column:
        return F.col(f"__ledger_{name}_{part}")

    def named(parts: dict[str, Column]) -> dict[str, Column]:
        return {f"__ledger_{name}_{part}": expr for part, expr in parts.items()}

    rest = h("rest")
    return [
        named({"text": as_text(raw, dtype)}),
        named({"fast": h("text").try_cast("long")}),
        named({"rest": F.when(h("fast").isNull(), stripped(h("text")))}),
        named(
            {
                "missing": F.lower(rest).isin(list(schema.MISSING_WORDS)) | h("text").isNull(),
                "matched": rest.rlike(_NUMBER),
                "sign": F.regexp_extract(rest, _NUMBER, 1),
                "fraction": F.regexp_extract(rest, _NUMBER, 3),
                "digits": F.concat(
                    F.regexp_extract(rest, _NUMBER, 2), F.regexp_extract(rest, _NUMBER, 3)
                ),
                "exponent_text": F.regexp_extract(rest, _NUMBER, 4),
            }
        ),
        named(
            {
                "significant": F.regexp_replace(h("digits"), "^0+", ""),
                "parsed_exponent": h("exponent_text").try_cast("long"),
            }
        ),
        named(
            {
                "trimmed": F.regexp_replace(h("significant"), "0+$", ""),
                # least/greatest skip nulls, so an unreadable exponent is kept null here.
                "exponent": F.when(h("exponent_text") == "", F.lit(0)).when(
                    h("parsed_exponent").isNotNull(),
                    F.least(
                        F.greatest(h("parsed_exponent"), F.lit(-_EXPONENT_CLAMP)),
                        F.lit(_EXPONENT_CLAMP),
                    ),
                ),
            }
        ),
        named(
            {
                # value = trimmed * 10 ** scale; trailing zeros moved from digits to the scale
                "scale": h("exponent")
                - F.length(h("fraction"))
                + F.length(h("significant"))
                - F.length(h("trimmed")),
                "zero": (h("digits") != "") & (h("trimmed") == ""),
            }
        ),
        named({"width": F.length(h("trimmed")) + h("scale")}),
        named(
            {
                "exact": F.when(
                    ~h("zero") & (h("scale") >= 0) & (h("width") <= 19),
                    F.rpad(h("trimmed"), F.least(h("width"), F.lit(19)).cast("int"), "0").try_cast(
                        "decimal(20,0)"
                    ),
                )
            }
        ),
        named(
            {
                "slow": F.when(h("zero"), F.lit(0).cast("long")).when(
                    h("exact") <= F.lit(INT64_MAX), h("exact").cast("long")
                )
            }
        ),
        named(
            {
                "value": F.when(h("fast").isNotNull(), h("fast"))
                .when(h("missing"), F.lit(None).cast("long"))
                .otherwise(h("slow")),
                "why": F.when(h("fast") < 0, F.lit("negative"))
                .when(h("fast").isNotNull() | h("missing"), F.lit(None).cast("string"))
                .when(F.lower(rest).isin(list(_INFINITY_WORDS)), F.lit("infinite"))
                .when(~h("matched") | (h("digits") == ""), F.lit("not_number"))
                .when(h("zero"), F.lit(None).cast("string"))
                .when(h("sign") == "-", F.lit("negative"))
                .when(
                    (h("exponent_text") != "") & h("parsed_exponent").isNull(),
                    F.when(h("exponent_text").startswith("-"), F.lit("fractional")).otherwise(
                        F.lit("range")
                    ),
                )
                .when(h("scale") < 0, F.lit("fractional"))
                .when(h("slow").isNull(), F.lit("range")),
            }
        ),
        {
            name: h("value").cast("long"),
            WHY + name: h("why"),
            BAD + name: F.when(h("why").isNotNull(), h("text")),
        },
    ]


def _word_table(words: Mapping[str, Any]) -> dict[str, Any]:
    """The spellings a cell is most often written in, for a hash lookup before any
    normalising (lower case, Capitalised, UPPER case of every vocabulary word)."""
    table: dict[str, Any] = {}
    for word, meaning in words.items():
        for spelling in (word, word.capitalize(), word.upper()):
            table.setdefault(spelling, meaning)
    return table


def _lookup(value: Column, table: Mapping[str, Any], otherwise: Column) -> Column:
    """`table[value]` where `value` is a key, else `otherwise` (a CASE over a few values)."""
    by_meaning: dict[Any, list[str]] = {}
    for word, meaning in table.items():
        by_meaning.setdefault(meaning, []).append(word)
    result = otherwise
    for meaning, words in by_meaning.items():
        result = F.when(value.isin(words), F.lit(meaning)).otherwise(result)
    return result


_PASSED_WORDS: dict[str, str] = {
    **dict.fromkeys(schema.TRUE_WORDS, "true"),
    **dict.fromkeys(schema.FALSE_WORDS, "false"),
    **dict.fromkeys(schema.MISSING_WORDS, "missing"),
}


def read_boolean_passed(value: Column) -> Column:
    """`read_passed`'s word for a BOOLEAN `passed` column, read as it is: its text would only
    say "true" or "false" again, at 0.1-0.15 s a part of the figures' query at 1M rows."""
    return F.when(value.isNull(), F.lit("missing")).when(value, F.lit("true")).otherwise("false")


def read_passed(raw: Column) -> Column:
    """'true', 'false', 'missing' or 'unknown' for a `passed` cell (the loader's rule:
    trimmed, any case)."""
    word = F.lower(stripped(raw, _PYTHON_SPACE))
    slow = _lookup(word, _PASSED_WORDS, F.lit("unknown"))
    return F.when(raw.isNull(), F.lit("missing")).otherwise(
        _lookup(raw, _word_table(_PASSED_WORDS), slow)
    )


def read_status(raw: Column) -> Column:
    """The outcome a `status` cell names, or 'unknown' (the loader's rule: a missing word is
    ungraded; otherwise trimmed, lower case, spaces, dots and dashes read as `_`)."""
    lowered = F.lower(stripped(raw, _PYTHON_SPACE))
    normalised = F.regexp_replace(lowered, r"(?U)[\s.\-]+", "_")
    slow = F.when(lowered.isin(list(schema.MISSING_WORDS)), F.lit("ungraded")).otherwise(
        _lookup(normalised, schema.STATUS_WORDS, F.lit("unknown"))
    )
    fast = {
        **_word_table(schema.STATUS_WORDS),
        **_word_table(dict.fromkeys(schema.MISSING_WORDS, "ungraded")),
    }
    return F.when(raw.isNull(), F.lit("ungraded")).otherwise(_lookup(raw, fast, slow))


def outcome_from(passed: Column | None, status: Column | None) -> tuple[Column, Column]:
    """SPEC.md section 1: the outcome from `passed`, `status`, or both; and whether a row's
    status contradicts its `passed`. Inputs are `read_passed` and `read_status` words."""
    if passed is not None and status is not None:
        outcome = (
            F.when(passed == "true", F.lit("passed"))
            .when(
                passed == "false",
                F.when(status.isin("timeout", "error"), status).otherwise(F.lit("failed")),
            )
            .otherwise(status)
        )
        contradicting = ((passed == "true") & status.isin("failed", "timeout", "error")) | (
            (passed == "false") & (status == "passed")
        )
        return outcome, contradicting
    if passed is not None:
        outcome = (
            F.when(passed == "true", F.lit("passed"))
            .when(passed == "false", F.lit("failed"))
            .otherwise(F.lit("ungraded"))
        )
        return outcome, F.lit(False)
    assert status is not None
    return status, F.lit(False)
