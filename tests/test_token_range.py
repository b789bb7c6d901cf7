"""A filter read as a range of tokens and its other terms (`filtering/token_range.py`)."""

from __future__ import annotations

import math

import polars as pl
import pytest

from tui_ledger.filtering.query import parse_filter
from tui_ledger.filtering.token_range import split_range

SCHEMA = {"workflow": pl.String, "tokens": pl.Int64, "cost": pl.Float64}


def _split(text: str):
    return split_range(parse_filter(text, SCHEMA), "tokens")


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("tokens>2000", 2001, None),
        ("tokens>=2k", 2000, None),
        ("tokens:>1.5k", 1501, None),
        ("tokens<10", None, 9),
        ("tokens<=10", None, 10),
        ("tokens=7", 7, 7),
        ("tokens:7", 7, 7),
        ("tokens>5 tokens<=9 tokens>6", 7, 9),
        ("tokens>-3", -2, None),
        ("tokens>2.5", 3, None),
        ("tokens<2.5", None, 2),
        ("tokens<=-2.5", None, -3),
    ],
)
def test_plain_comparisons_make_one_inclusive_range(
    text: str, low: int | None, high: int | None
) -> None:
    split = _split(text)
    assert split is not None and (split.within.low, split.within.high) == (low, high)
    assert split.rest is None


def test_a_fraction_or_a_float_is_exact_only_below_2_53() -> None:
    assert _split("tokens>2000").within.exact_below == math.inf  # type: ignore[union-attr]
    assert _split("tokens>2.5").within.exact_below == 2.0**53  # type: ignore[union-attr]
    assert _split("tokens>1e6").within.exact_below == 2.0**53  # type: ignore[union-attr]
    empty = _split("tokens=2.5")
    assert empty is not None and empty.within.low is not None and empty.within.high is not None
    assert empty.within.low > empty.within.high  # no integer equals a fraction


def test_the_other_terms_are_kept_as_one_expression() -> None:
    split = _split("lean tokens>5 cost<1")
    assert split is not None and split.rest is not None
    frame = pl.DataFrame(
        {"workflow": ["lean-loop", "one-shot"], "tokens": [9, 9], "cost": [0.5, 0.5]}
    )
    assert frame.filter(split.rest).get_column("workflow").to_list() == ["lean-loop"]


@pytest.mark.parametrize(
    "text", ["", "lean", "-tokens>5", "tokens!=5", "tokens:null", "-tokens:null", "cost>1"]
)
def test_no_range_where_the_rows_are_no_one_range(text: str) -> None:
    assert _split(text) is None


def test_an_expression_not_made_by_the_parser_is_not_split() -> None:
    assert split_range(pl.col("tokens") > 5, "tokens") is None
    assert split_range(None, "tokens") is None
