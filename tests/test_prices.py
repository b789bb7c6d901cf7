"""Prices: cost per attempt from a TOML table; unpriced is missing, never $0; provider cost wins."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tui_ledger.accounting.ledger import compare
from tui_ledger.accounting.prices import (
    PriceError,
    PriceTable,
    apply_prices,
    load_prices,
    parse_prices,
)
from tui_ledger.schema import OUTCOME_DTYPE

SAMPLE_PRICES = Path(__file__).resolve().parent.parent / "sample_data" / "prices.toml"

TABLE = """
[models."model-a"]
input = 1.00
cached_input = 0.10
cache_write = 1.25
output = 5.00
source = "test"
date = "2026-01-01"

[models."flat-model"]
flat = 2.00
source = "test"
date = "2026-01-01"
"""


def attempts(**columns: Sequence[Any]) -> pl.DataFrame:
    data: dict[str, Sequence[Any]] = {"workflow": ["w"] * len(next(iter(columns.values())))}
    data.update(columns)
    data.setdefault("outcome", ["passed"] * len(data["workflow"]))
    data.setdefault("line", list(range(2, 2 + len(data["workflow"]))))
    frame = pl.DataFrame(data).with_columns(pl.col("outcome").cast(OUTCOME_DTYPE))
    return frame.with_columns(
        pl.col(name).cast(pl.Int64)
        for name in frame.columns
        if name.endswith("tokens") and frame.schema[name] != pl.Int64
    )


def bucket_attempts(models: list[str | None]) -> pl.DataFrame:
    n = len(models)
    return attempts(
        model=models,
        tokens=[2_250_000] * n,
        input_tokens=[1_000_000] * n,
        cached_input_tokens=[1_000_000] * n,
        cache_write_tokens=[0] * n,
        output_tokens=[250_000] * n,
    )


def test_sample_price_table_reads_with_sources_and_dates() -> None:
    if not SAMPLE_PRICES.exists():
        pytest.skip("sample_data/prices.toml not present")
    table = load_prices(SAMPLE_PRICES)
    assert {"model-a", "model-b"} <= set(table.models)
    for price in table.models.values():
        assert price.source and price.date


def test_bucket_prices_give_exact_cost_per_attempt() -> None:
    priced, warnings = apply_prices(bucket_attempts(["model-a"]), parse_prices(TABLE))
    # 1M input at $1 + 1M cached at $0.10 + 0 cache writes + 0.25M output at $5
    assert priced["cost"].item() == pytest.approx(1.0 + 0.10 + 1.25)
    assert warnings == []
    assert "table_cost" not in priced.columns  # only beside a provider's cost


def test_unpriced_model_has_missing_cost_and_a_warning_never_zero() -> None:
    priced, warnings = apply_prices(bucket_attempts(["model-a", "mystery"]), parse_prices(TABLE))
    assert priced["cost"].to_list()[1] is None
    assert [w.kind for w in warnings] == ["unpriced_model"]
    assert "mystery" in warnings[0].message and "never $0" in warnings[0].message
    assert warnings[0].count == 1
    assert warnings[0].lines == (3,)
    # The group's cost is a lower bound; a group of only unpriced attempts has no cost at all.
    only_unpriced = priced.filter(pl.col("model") == "mystery")
    row = compare(only_unpriced).keep.row(0, named=True)
    assert row["total_cost"] is None
    assert row["cost_per_accepted_result"] is None
    mixed = compare(priced).keep.row(0, named=True)
    assert mixed["cost_lower_bound"] is True
    assert mixed["missing_cost"] == 1


def test_price_lacking_a_bucket_the_file_has_is_unpriced() -> None:
    table = parse_prices('[models."model-a"]\ninput = 1.0\noutput = 2.0\n')
    priced, warnings = apply_prices(bucket_attempts(["model-a"]), table)
    assert priced["cost"].item() is None
    assert "cached_input" in warnings[0].message


def test_flat_price_for_a_tokens_only_ledger() -> None:
    frame = attempts(tokens=[500_000, 1_000_000])
    priced, warnings = apply_prices(frame, PriceTable().with_flat(3.0))
    assert priced["cost"].to_list() == pytest.approx([1.5, 3.0])
    assert warnings == []


def test_flat_entry_of_a_model() -> None:
    frame = attempts(model=["flat-model"], tokens=[1_000_000])
    priced, _ = apply_prices(frame, parse_prices(TABLE))
    assert priced["cost"].item() == pytest.approx(2.0)


def test_tokens_only_without_any_flat_price_is_unpriced() -> None:
    frame = attempts(model=["model-a"], tokens=[1_000_000])
    priced, warnings = apply_prices(frame, parse_prices(TABLE))
    assert priced["cost"].item() is None
    assert warnings[0].kind == "unpriced_model"
    assert "flat" in warnings[0].message


def test_missing_usage_gives_missing_cost() -> None:
    frame = bucket_attempts(["model-a", "model-a"]).with_columns(
        pl.when(pl.col("line") == 3)
        .then(None)
        .otherwise(pl.col("output_tokens"))
        .alias("output_tokens")
    )
    priced, warnings = apply_prices(frame, parse_prices(TABLE))
    assert priced["cost"].to_list()[1] is None
    assert [w.kind for w in warnings] == ["missing_cost"]


def test_provider_cost_is_used_and_disagreements_are_flagged() -> None:
    frame = bucket_attempts(["model-a"] * 3).with_columns(
        pl.Series("cost", [2.35, 2.351, 9.99])  # table says 2.35 for each
    )
    priced, warnings = apply_prices(frame, parse_prices(TABLE))
    assert priced["cost"].to_list() == pytest.approx([2.35, 2.351, 9.99])
    assert priced["table_cost"].to_list() == pytest.approx([2.35] * 3)
    assert [w.kind for w in warnings] == ["cost_disagreement"]
    assert warnings[0].count == 1  # 2.351 is within 1%
    assert warnings[0].lines == (4,)


def test_provider_cost_fills_in_for_an_unpriced_model() -> None:
    frame = bucket_attempts(["mystery"]).with_columns(pl.Series("cost", [0.5]))
    priced, warnings = apply_prices(frame, parse_prices(TABLE))
    assert priced["cost"].item() == 0.5
    assert warnings == []


def test_provider_cost_without_a_table_and_unreadable_cells() -> None:
    frame = attempts(tokens=[1, 2, 3, 4], cost=["$0.12", "", "abc", "0.5"])
    priced, warnings = apply_prices(frame, None)
    assert priced["cost"].to_list() == [0.12, None, None, 0.5]
    assert [w.kind for w in warnings] == ["unreadable_cost"]
    assert warnings[0].lines == (4,)


def test_no_table_and_no_cost_column_changes_nothing() -> None:
    frame = attempts(tokens=[1])
    priced, warnings = apply_prices(frame, None)
    assert priced.equals(frame)
    assert warnings == []
    assert not compare(priced).has_cost


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[models.a\n", "not valid TOML"),
        ('[models."a"]\ninput = -1\n', 'models."a".input'),
        ('[models."a"]\ninput = "cheap"\n', "expected a price"),
        ('[models."a"]\nsource = "x"\n', "no price"),
        ('[models."a"]\ninptu = 1\n', "unknown key"),
        ('currency = "EUR"\n', "only USD"),
    ],
)
def test_bad_price_tables_are_refused_with_the_key(text: str, message: str) -> None:
    with pytest.raises(PriceError, match=r"prices\.toml") as error:
        parse_prices(text, "prices.toml")
    assert message in str(error.value)


def test_missing_price_file(tmp_path: Path) -> None:
    with pytest.raises(PriceError, match="no such price file"):
        load_prices(tmp_path / "nope.toml")
