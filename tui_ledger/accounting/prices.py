"""Prices: a TOML table of USD per million tokens per model and bucket, and the cost per attempt.

The table (see sample_data/prices.toml)::

    flat = 2.0                 # optional: USD / MTok for any attempt priced by `tokens` alone

    [models."model-a"]
    input = 0.80               # input_tokens (uncached)
    cached_input = 0.08        # cached_input_tokens
    cache_write = 1.00         # cache_write_tokens
    output = 4.00              # output_tokens (reasoning is already inside)
    flat = 2.00                # optional: one rate for every token of this model
    source = "where the numbers come from"
    date = "2026-11-29"

`apply_prices(attempts, table)` gives each attempt a `cost` (Float64 USD) and returns warnings
shaped like the loader's (`kind`, `message`, `count`, `lines`, `sources`). An unpriced attempt
gets a missing cost (null), never $0. A provider-reported `cost` column wins where present;
where the table also prices the attempt and the two disagree beyond a tolerance, it is
flagged. Rules are in docs/ACCOUNTING.md ("Prices and cost").
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from tui_ledger.schema import BUCKETS, COST_COLUMN, LINE_COLUMN, SOURCE_COLUMN

TABLE_COST_COLUMN = "table_cost"
PER_TOKENS = 1_000_000  # prices are per million tokens

# Price keys in the TOML file -> the bucket column each prices.
BUCKET_KEYS: dict[str, str] = {
    "input": "input_tokens",
    "cached_input": "cached_input_tokens",
    "cache_write": "cache_write_tokens",
    "output": "output_tokens",
}
_ENTRY_KEYS = frozenset({*BUCKET_KEYS, "flat", "source", "date", "note", "notes"})

# Provider cost vs the table: flagged when they differ by more than this share of the table's
# figure, and by more than the absolute floor (providers round small costs).
RELATIVE_TOLERANCE = 0.01
ABSOLUTE_TOLERANCE = 0.0001  # USD
_EXAMPLES = 5


class PriceError(Exception):
    """A price table that cannot be used; the message is one line for people."""


@dataclass(frozen=True)
class Price:
    """One model's prices, USD per million tokens; None where the table gives none."""

    model: str
    input: float | None = None
    cached_input: float | None = None
    cache_write: float | None = None
    output: float | None = None
    flat: float | None = None
    source: str | None = None
    date: str | None = None

    def bucket_price(self, bucket: str) -> float | None:
        """The price of a bucket column (`input_tokens`, ...), or None."""
        for key, column in BUCKET_KEYS.items():
            if column == bucket:
                value: float | None = getattr(self, key)
                return value
        raise KeyError(bucket)


@dataclass(frozen=True)
class PriceTable:
    """Prices per model, a flat fallback price, and where they came from."""

    models: Mapping[str, Price] = field(default_factory=dict)
    flat: float | None = None
    path: str | None = None
    relative_tolerance: float = RELATIVE_TOLERANCE
    absolute_tolerance: float = ABSOLUTE_TOLERANCE

    def with_flat(self, flat: float | None) -> PriceTable:
        """The same table with a flat fallback price (e.g. from `--flat-price`)."""
        if flat is None:
            return self
        _check_price(flat, "--flat-price")
        return PriceTable(
            self.models, flat, self.path, self.relative_tolerance, self.absolute_tolerance
        )

    def describe(self) -> list[str]:
        """One line per price, for `ledger-tui check` and reports."""
        lines = []
        for price in self.models.values():
            parts = [
                f"{key} ${value:g}"
                for key in (*BUCKET_KEYS, "flat")
                if (value := getattr(price, key)) is not None
            ]
            origin = ", ".join(item for item in (price.source, price.date) if item)
            lines.append(
                f"{price.model}: {', '.join(parts)} per million tokens"
                + (f" ({origin})" if origin else "")
            )
        if self.flat is not None:
            lines.append(f"any other attempt priced by tokens: ${self.flat:g} per million tokens")
        return lines


@dataclass(frozen=True)
class PriceWarning:
    """Something about cost worth a reader's attention, counted like the loader's warnings."""

    kind: str
    message: str
    count: int
    lines: tuple[int, ...] = ()
    sources: tuple[str, ...] = ()


def _check_price(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PriceError(f"{where}: expected a price in USD per million tokens, got {value!r}")
    number = float(value)
    if math.isnan(number) or math.isinf(number) or number < 0:
        raise PriceError(f"{where}: expected a price >= 0 USD per million tokens, got {value!r}")
    return number


def parse_prices(text: str, path: str = "prices") -> PriceTable:
    """A price table from TOML text; raises PriceError naming the file and the key."""
    # Imported here: only `--prices` reads TOML, and every start-up would pay for the parser.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 only
        import tomli as tomllib

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PriceError(f"{path}: not valid TOML: {error}") from None
    unknown = set(document) - {"models", "flat", "currency", "unit"}
    if unknown:
        raise PriceError(
            f"{path}: unknown top-level key(s) {', '.join(sorted(unknown))}; expected "
            '[models."NAME"] tables and an optional flat = PRICE'
        )
    currency = document.get("currency", "USD")
    if str(currency).upper() != "USD":
        raise PriceError(f"{path}: currency {currency!r}: only USD prices are supported")
    models_section = document.get("models", {})
    if not isinstance(models_section, dict):
        raise PriceError(f'{path}: models must be tables, e.g. [models."model-a"]')
    models: dict[str, Price] = {}
    for name, entry in models_section.items():
        models[name] = _parse_entry(name, entry, path)
    flat = document.get("flat")
    return PriceTable(
        models=models,
        flat=None if flat is None else _check_price(flat, f"{path}: flat"),
        path=path,
    )


def _parse_entry(name: str, entry: object, path: str) -> Price:
    where = f'{path}: models."{name}"'
    if not isinstance(entry, dict):
        raise PriceError(f"{where}: expected a table of prices, got {entry!r}")
    unknown = set(entry) - _ENTRY_KEYS
    if unknown:
        raise PriceError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))}; expected "
            f"{', '.join((*BUCKET_KEYS, 'flat'))}, source, date"
        )
    values: dict[str, Any] = {
        key: _check_price(entry[key], f"{where}.{key}")
        for key in (*BUCKET_KEYS, "flat")
        if key in entry
    }
    if not values:
        raise PriceError(f"{where}: no price; give {', '.join(BUCKET_KEYS)} or flat")
    return Price(
        model=name,
        source=None if entry.get("source") is None else str(entry["source"]),
        date=None if entry.get("date") is None else str(entry["date"]),
        **values,
    )


def load_prices(path: str | Path) -> PriceTable:
    """Read a TOML price table; raises PriceError with a one-line message."""
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PriceError(f"{target}: no such price file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise PriceError(f"{target}: cannot read the price file ({error})") from None
    return parse_prices(text, str(target))


# --------------------------------------------------------------------------- cost


@dataclass(frozen=True)
class _Rule:
    """How one model's attempts are priced: by buckets, by a flat rate on tokens, or not."""

    how: str  # "buckets", "flat" or "unpriced"
    price: Price | None = None
    flat: float | None = None
    why: str = ""


def _rule_for(model: str | None, table: PriceTable, buckets: Sequence[str]) -> _Rule:
    price = table.models.get(model) if model is not None else None
    if price is not None and buckets:
        lacking = [bucket for bucket in buckets if price.bucket_price(bucket) is None]
        if not lacking:
            return _Rule("buckets", price=price)
        if price.flat is not None:
            return _Rule("flat", price=price, flat=price.flat)
        why = f"its price has no {', '.join(_key_of(b) for b in lacking)}"
    elif price is not None:
        if price.flat is not None:
            return _Rule("flat", price=price, flat=price.flat)
        why = "the file has only a tokens total and its price has no flat rate"
    elif model is None:
        why = "no model named"
    else:
        why = "not in the price table"
    if table.flat is not None:
        return _Rule("flat", flat=table.flat)
    return _Rule("unpriced", why=why)


def _key_of(bucket: str) -> str:
    return next(key for key, column in BUCKET_KEYS.items() if column == bucket)


def _lookup(models: pl.Expr, values: Mapping[str, float | None], default: float | None) -> pl.Expr:
    """Per row, `values[model]` (null for a model not listed, or `default`)."""
    if not values:
        return pl.lit(default, dtype=pl.Float64)
    return models.replace_strict(
        list(values), list(values.values()), default=default, return_dtype=pl.Float64
    )


def cost_expression(
    columns: Sequence[str], table: PriceTable, models: Sequence[str | None]
) -> pl.Expr:
    """The table's cost of each attempt in USD, as one polars expression.

    `columns` are the attempts' columns; `models` the distinct values of `model` (or `[None]`
    without a model column). Bucket columns present are priced bucket by bucket; a model whose
    price lacks one of them, or a ledger with only `tokens`, is priced by a flat rate (the
    model's own, else the table's); anything else is null. A missing bucket or token count
    gives a null cost: unknown usage is unknown cost.
    """
    buckets = [bucket for bucket in BUCKETS if bucket in columns]
    rules = {model: _rule_for(model, table, buckets) for model in models}
    model = pl.col("model") if "model" in columns else pl.lit(None, dtype=pl.String)
    flat_rates = {m: r.flat for m, r in rules.items() if m is not None and r.how == "flat"}
    null_rule = rules.get(None)
    null_flat = null_rule.flat if null_rule is not None and null_rule.how == "flat" else None
    flat_price = _lookup(model, flat_rates, None)
    if null_flat is not None:
        flat_price = pl.when(model.is_null()).then(pl.lit(null_flat)).otherwise(flat_price)
    by_tokens = pl.col("tokens").cast(pl.Float64) * flat_price / PER_TOKENS
    if not buckets:
        return by_tokens
    priced = {m: r.price for m, r in rules.items() if m is not None and r.how == "buckets"}
    terms = [
        pl.col(bucket).cast(pl.Float64)
        * _lookup(
            model,
            {m: p.bucket_price(bucket) for m, p in priced.items() if p is not None},
            None,
        )
        for bucket in buckets
    ]
    by_buckets = pl.sum_horizontal(terms, ignore_nulls=False) / PER_TOKENS
    uses_buckets = model.is_in(list(priced)) if priced else pl.lit(False)
    return pl.when(uses_buckets).then(by_buckets).otherwise(by_tokens)


def apply_prices(
    attempts: pl.DataFrame, table: PriceTable | None
) -> tuple[pl.DataFrame, list[PriceWarning]]:
    """The attempts with a Float64 `cost` column (USD), and what to warn about.

    - With a table: each attempt's cost from the table (see `cost_expression`); where the
      attempts already had a provider-reported `cost`, that figure wins, the table's is kept
      beside it as `table_cost`, and disagreements beyond the tolerance are flagged.
    - Without a table: a provider `cost` column is read as Float64; otherwise the attempts
      come back unchanged (no cost figures).
    Warnings: unpriced models (cost missing, never $0), attempts whose cost is missing
    because their usage is, provider costs that are not numbers, and disagreements.
    """
    warnings: list[PriceWarning] = []
    provider: pl.Expr | None = None
    if COST_COLUMN in attempts.columns:
        provider, warning = _provider_cost(attempts)
        if warning is not None:
            warnings.append(warning)
    if table is None:
        if provider is None:
            return attempts, warnings
        return attempts.with_columns(provider.alias(COST_COLUMN)), warnings

    has_model = "model" in attempts.columns
    models: list[str | None] = (
        attempts["model"].cast(pl.String).unique().sort(nulls_last=True).to_list()
        if has_model
        else [None]
    )
    buckets = [bucket for bucket in BUCKETS if bucket in attempts.columns]
    table_cost = cost_expression(attempts.columns, table, models).alias(TABLE_COST_COLUMN)
    priced = attempts.with_columns(table_cost)
    if provider is not None:
        priced = priced.with_columns(provider.alias(COST_COLUMN))
        cost = pl.coalesce(pl.col(COST_COLUMN), pl.col(TABLE_COST_COLUMN))
    else:
        cost = pl.col(TABLE_COST_COLUMN)
    priced = priced.with_columns(cost.alias(COST_COLUMN))

    rules = {model: _rule_for(model, table, buckets) for model in models}
    warnings += _unpriced_warnings(priced, rules, has_model, provider is not None)
    warnings += _missing_usage_warning(priced, rules, has_model, buckets)
    if provider is not None:
        disagreement = _disagreement_warning(priced, table)
        if disagreement is not None:
            warnings.append(disagreement)
    else:
        priced = priced.drop(TABLE_COST_COLUMN)
    return priced, warnings


def _provider_cost(attempts: pl.DataFrame) -> tuple[pl.Expr, PriceWarning | None]:
    """The provider's `cost` column as Float64 USD, and a warning for cells that are not."""
    dtype = attempts.schema[COST_COLUMN]
    column = pl.col(COST_COLUMN)
    if dtype.is_numeric():
        as_number = column.cast(pl.Float64)
        bad = as_number.is_nan() | as_number.is_infinite() | (as_number < 0)
    else:
        text = column.cast(pl.String).str.strip_chars().str.strip_chars_start("$")
        blank = text.is_null() | text.str.to_lowercase().is_in(["", "na", "nan", "null", "none"])
        as_number = pl.when(blank).then(None).otherwise(text.cast(pl.Float64, strict=False))
        bad = (~blank & as_number.is_null()) | as_number.is_infinite() | (as_number < 0)
    cleaned = pl.when(bad.fill_null(False)).then(None).otherwise(as_number)
    flagged = attempts.filter(bad.fill_null(False))
    if flagged.height == 0:
        return cleaned, None
    return cleaned, PriceWarning(
        "unreadable_cost",
        f"{_attempts(flagged.height)} with a cost that is not a USD amount >= 0; "
        "their cost is missing",
        flagged.height,
        *_examples(flagged),
    )


def _unpriced_warnings(
    priced: pl.DataFrame, rules: Mapping[str | None, _Rule], has_model: bool, provider: bool
) -> list[PriceWarning]:
    unpriced = [model for model, rule in rules.items() if rule.how == "unpriced"]
    if not unpriced:
        return []
    model = pl.col("model") if has_model else pl.lit(None, dtype=pl.String)
    in_unpriced = (
        model.is_in([m for m in unpriced if m is not None])
        | (model.is_null() if None in unpriced else pl.lit(False))
    ).fill_null(False)
    # Attempts the provider priced are not missing a cost.
    rows = priced.filter(in_unpriced & pl.col(COST_COLUMN).is_null())
    if rows.height == 0:
        return []
    counts = dict(rows.group_by(model.alias("__model")).len().iter_rows())
    named = "; ".join(
        f"{'(no model)' if m is None else m} ({_attempts(counts[m])}: {rules[m].why})"
        for m in unpriced
        if m in counts
    )
    hint = " or a flat price (--flat-price)" if not has_model else ""
    return [
        PriceWarning(
            "unpriced_model",
            f"{_attempts(rows.height)} {_have(rows.height)} no price, so their cost is missing "
            f"(never $0) and cost per accepted result is a lower bound for their groups: {named}. "
            f"Add the model to the price table{hint}.",
            rows.height,
            *_examples(rows),
        )
    ]


def _missing_usage_warning(
    priced: pl.DataFrame,
    rules: Mapping[str | None, _Rule],
    has_model: bool,
    buckets: Sequence[str],
) -> list[PriceWarning]:
    """Priced models whose attempts lack the usage the price needs."""
    model = pl.col("model") if has_model else pl.lit(None, dtype=pl.String)
    priced_models = [m for m, rule in rules.items() if rule.how != "unpriced"]
    if not priced_models:
        return []
    in_priced = model.is_in([m for m in priced_models if m is not None]).fill_null(False)
    if None in priced_models:
        in_priced = in_priced | model.is_null()
    rows = priced.filter(in_priced & pl.col(COST_COLUMN).is_null())
    if rows.height == 0:
        return []
    what = "token buckets" if buckets else "tokens"
    return [
        PriceWarning(
            "missing_cost",
            f"{_attempts(rows.height)} of priced models have missing usage ({what}), so "
            "their cost is missing too; cost per accepted result is a lower bound for their "
            "groups",
            rows.height,
            *_examples(rows),
        )
    ]


def _disagreement_warning(priced: pl.DataFrame, table: PriceTable) -> PriceWarning | None:
    provider, ours = pl.col(COST_COLUMN), pl.col(TABLE_COST_COLUMN)
    gap = (provider - ours).abs()
    allowed = pl.max_horizontal(ours.abs() * table.relative_tolerance, table.absolute_tolerance)
    rows = priced.filter((gap > allowed).fill_null(False))
    if rows.height == 0:
        return None
    worst = rows.select(((provider - ours) / ours).abs().max()).item()
    share = "" if worst is None or math.isinf(worst) else f" (up to {worst:.0%} apart)"
    return PriceWarning(
        "cost_disagreement",
        f"{_attempts(rows.height)} {_have(rows.height)} a provider-reported cost that differs "
        f"from the price table by more than {table.relative_tolerance:.0%} and "
        f"${table.absolute_tolerance:g}{share}; the provider's figure was used "
        "(the table's is in table_cost)",
        rows.height,
        *_examples(rows),
    )


def _examples(rows: pl.DataFrame) -> tuple[tuple[int, ...], tuple[str, ...]]:
    if LINE_COLUMN not in rows.columns:
        return (), ()
    head = rows.head(_EXAMPLES)
    lines = tuple(int(v) for v in head[LINE_COLUMN].to_list() if v is not None)
    if SOURCE_COLUMN not in rows.columns or len(lines) != head.height:
        return lines, ()
    return lines, tuple(str(v) for v in head[SOURCE_COLUMN].to_list())


def _attempts(count: int) -> str:
    return f"{count:,} attempt" + ("" if count == 1 else "s")


def _have(count: int) -> str:
    return "has" if count == 1 else "have"


def cost_beside_tokens(attempts: pl.DataFrame) -> pl.DataFrame:
    """The priced attempts with `cost` (and `table_cost`) right after `tokens`, where people
    look for them, instead of after `source` and `line` (the app's attempts table)."""
    moved = [name for name in (COST_COLUMN, TABLE_COST_COLUMN) if name in attempts.columns]
    if not moved or "tokens" not in attempts.columns:
        return attempts
    order: list[str] = []
    for name in attempts.columns:
        if name in moved:
            continue
        order.append(name)
        if name == "tokens":
            order.extend(moved)
    return attempts.select(order)
