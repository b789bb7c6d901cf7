"""Token counts, the workflow and the task, parsed in polars: the exact count parser and the
key trimming, with every problem kept as a helper column for `validate` to name."""

from __future__ import annotations

import re
from collections.abc import Callable

import polars as pl

from tui_ledger import schema
from tui_ledger.load.helper_columns import BAD, MISMATCH, TEXT_KEYS, WHY, ZERO, Engine

_INT64_MAX = 2**63 - 1
_NUMBER = r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$"
_INFINITY_WORDS = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity")


# Why a cell cannot be read (the `WHY` helper columns): an Enum, one byte a row, since a text
# column would hold 16 bytes for every row, null or not.
_REASONS = pl.Enum(["empty", "negative", "infinite", "not_number", "fractional", "range"])


def _reason(word: str) -> pl.Expr:
    return pl.lit(word, dtype=_REASONS)


COUNT_PROBLEMS: dict[str, str] = {
    "negative": "is negative; token counts are 0 or more",
    "not_number": "is not a number",
    "fractional": "is not a whole number; token counts are whole numbers",
    "infinite": "is not a finite number",
    "range": "is larger than the biggest count stored exactly (9,223,372,036,854,775,807)",
}


def parse_accounting(
    frame: pl.LazyFrame,
    mapping: dict[str, str],
    zero_usage_is_missing: bool,
    *,
    in_memory: bool,
) -> tuple[pl.LazyFrame, list[str]]:
    """Token counts, the workflow and the task, parsed in polars; problems as helper columns.

    In memory, a cheap probe first finds the count columns holding anything but plain
    integers and empty cells; only those pay for the exact decimal parser.
    """
    derived: list[str] = []
    exprs: list[pl.Expr] = []
    types = frame.collect_schema()
    keys = [name for name in TEXT_KEYS if name in mapping]
    trimmed = _trimmed_keys(
        frame,
        [name for name in keys if types[name] == pl.Categorical],
        engine="auto" if in_memory else "streaming",
    )
    for name in keys:
        trimmed.setdefault(name, pl.col(name).str.strip_chars())
        exprs.append(trimmed[name].alias(name))
    workflow = trimmed["workflow"]
    exprs.append(
        pl.when(workflow.is_null() | (workflow == ""))
        .then(_reason("empty"))
        .alias(WHY + "workflow")
    )
    counts = [name for name in schema.INTEGER_COLUMNS if name in mapping]
    typed = {name for name in counts if types[name] == pl.Int64}
    plain: set[str] = set()
    probed = [name for name in counts if name not in typed]
    if in_memory and probed:
        probe = frame.select(
            (pl.col(name).is_not_null() & pl.col(name).str.to_integer(strict=False).is_null())
            .any()
            .alias(name)
            for name in probed
        )
        plain = {name for name, other in probe.collect().row(0, named=True).items() if not other}
    frame = _parse_counts(frame.with_columns(exprs), counts, plain, typed)
    buckets = [name for name in schema.BUCKETS if name in mapping]
    if buckets:
        total = pl.col(buckets[0]).cast(pl.Int128)
        for name in buckets[1:]:
            total = total + pl.col(name)  # null in any bucket -> null: missing usage
        if "tokens" not in mapping:
            frame = frame.with_columns(
                pl.when(total <= _INT64_MAX).then(total).cast(pl.Int64).alias("tokens"),
                pl.when(total > _INT64_MAX).then(_reason("range")).alias(WHY + "tokens"),
                pl.when(total > _INT64_MAX).then(total.cast(pl.String)).alias(BAD + "tokens"),
            )
            derived.append(
                f"tokens = {' + '.join(buckets)} (a row missing any of them has missing usage)"
            )
        elif "input_tokens" in buckets and "output_tokens" in buckets:
            tokens = pl.col("tokens")
            frame = frame.with_columns(
                (tokens.is_not_null() & total.is_not_null() & (total != tokens))
                .fill_null(False)
                .alias(MISMATCH)
            )
    if zero_usage_is_missing:
        frame = frame.with_columns(
            pl.when(pl.col("tokens") != 0).then(pl.col("tokens")).alias("tokens"),
            (pl.col("tokens") == 0).alias(ZERO),
        )
        derived.append("a usage of exactly 0 tokens is read as missing (--zero-usage-is-missing)")
    else:
        frame = frame.with_columns((pl.col("tokens") == 0).alias(ZERO))
    return frame, derived


def _trimmed_keys(frame: pl.LazyFrame, names: list[str], *, engine: Engine) -> dict[str, pl.Expr]:
    """Categorical key columns trimmed of surrounding white space: untouched (the common
    case, decided on the distinct values) or, where some value has spaces, trimmed as text."""
    expressions: dict[str, pl.Expr] = {}
    for name in names:
        # One query per column: a streamed `unique` of one column at a time.
        distinct = frame.select(pl.col(name).unique().cast(pl.String)).collect(engine=engine)
        values = distinct.to_series()
        if (values.str.strip_chars() != values).any():
            text = pl.col(name).cast(pl.String).str.strip_chars()
            expressions[name] = text.cast(pl.Categorical)
        else:
            expressions[name] = pl.col(name)
    return expressions


_Helper = Callable[[str], pl.Expr]


def _number_steps() -> list[Callable[[pl.Expr, _Helper], dict[str, pl.Expr]]]:
    """The exact decimal parser, as steps over named helper columns (see `_parse_counts`)."""
    int64 = pl.Int64
    return [
        lambda raw, h: {
            "rest": pl.when(h("fast").is_null() & raw.is_not_null()).then(raw.str.strip_chars())
        },
        lambda raw, h: {
            "unknown": pl.when(
                ~h("rest").str.to_lowercase().is_in(list(schema.MISSING_WORDS))
            ).then(h("rest"))
        },
        lambda raw, h: {"simple": h("unknown").str.strip_suffix(".0").str.to_integer(strict=False)},
        lambda raw, h: {"slow": pl.when(h("simple").is_null()).then(h("unknown"))},
        lambda raw, h: {"parts": h("slow").str.extract_groups(_NUMBER)},
        lambda raw, h: {
            "sign": h("parts").struct.field("1"),
            "fraction": h("parts").struct.field("3").fill_null(""),
            "digits": pl.concat_str(
                h("parts").struct.field("2").fill_null(""),
                h("parts").struct.field("3").fill_null(""),
            ),
            "exponent_text": h("parts").struct.field("4"),
        },
        lambda raw, h: {
            "exponent": h("exponent_text").str.to_integer(strict=False),
            "significant": h("digits").str.strip_chars_start("0"),
        },
        lambda raw, h: {"trimmed": h("significant").str.strip_chars_end("0")},
        lambda raw, h: {
            # value = trimmed * 10 ** scale; trailing zeros moved from the digits to the scale
            "scale": h("exponent").fill_null(0)
            - h("fraction").str.len_chars().cast(int64)
            + h("significant").str.len_chars().cast(int64)
            - h("trimmed").str.len_chars().cast(int64),
            "zero": h("sign").is_not_null() & (h("digits") != "") & (h("trimmed") == ""),
        },
        lambda raw, h: {"width": h("trimmed").str.len_chars().cast(int64) + h("scale")},
        lambda raw, h: {
            "exact": pl.when(~h("zero") & (h("scale") >= 0) & (h("width") <= 19))
            .then(h("trimmed").str.pad_end(h("width").clip(0, 19).cast(pl.UInt32), "0"))
            .str.to_integer(strict=False)
        },
        lambda raw, h: {
            "value": pl.coalesce(
                h("fast"),
                h("simple"),
                pl.when(h("zero")).then(pl.lit(0, int64)).otherwise(h("exact")),
            ),
            "why": pl.when(h("fast") < 0)
            .then(_reason("negative"))
            .when(h("fast").is_not_null())
            .then(None)
            .when(h("simple") < 0)
            .then(_reason("negative"))
            .when(h("slow").is_null())
            .then(None)
            .when(h("slow").str.to_lowercase().is_in(list(_INFINITY_WORDS)))
            .then(_reason("infinite"))
            .when(h("sign").is_null() | (h("digits") == ""))
            .then(_reason("not_number"))
            .when(h("zero"))
            .then(None)
            .when(h("sign") == "-")
            .then(_reason("negative"))
            .when(h("exponent_text").is_not_null() & h("exponent").is_null())
            .then(
                pl.when(h("exponent_text").str.starts_with("-"))
                .then(_reason("fractional"))
                .otherwise(_reason("range"))
            )
            .when(h("scale") < 0)
            .then(_reason("fractional"))
            .when(h("exact").is_null())
            .then(_reason("range")),
        },
    ]


def _parse_counts(
    frame: pl.LazyFrame, names: list[str], plain: set[str], typed: set[str]
) -> pl.LazyFrame:
    """Token counts from their text, exactly.

    Each column `name` becomes Int64 (null = missing), with `WHY + name` (why a cell is not a
    count, null when fine) and `BAD + name` (the cell's text, where it is not). Plain integers
    take the fast path; only the rest go through the exact decimal parser, and columns in
    `plain` are known to hold nothing else. Columns in `typed` are Int64 already, so only
    their sign is checked. Every step is its own `with_columns` over named helper columns, so
    no expression repeats another inside itself.
    """
    if not names:
        return frame

    def helper(name: str) -> _Helper:
        return lambda part: pl.col(f"__ledger_{name}_{part}")

    frame = frame.with_columns(
        (pl.col(name) if name in typed else pl.col(name).str.to_integer(strict=False)).alias(
            f"__ledger_{name}_fast"
        )
        for name in names
    )
    exact = [name for name in names if name not in plain and name not in typed]
    if exact:
        for build in _number_steps():
            frame = frame.with_columns(
                expr.alias(f"__ledger_{name}_{part}")
                for name in exact
                for part, expr in build(pl.col(name), helper(name)).items()
            )
    final: list[pl.Expr] = []
    for name in names:
        h = helper(name)
        why: pl.Expr
        if name in plain or name in typed:
            value, why = h("fast"), pl.when(h("fast") < 0).then(_reason("negative"))
        else:
            value, why = h("value"), h("why")
        final += [
            value.alias(name),
            why.alias(WHY + name),
            pl.when(why.is_not_null()).then(pl.col(name).cast(pl.String)).alias(BAD + name),
        ]
    temporary = [f"__ledger_{name}_" for name in names]
    return frame.with_columns(final).select(
        pl.exclude([f"^{re.escape(prefix)}.*$" for prefix in temporary])
    )
