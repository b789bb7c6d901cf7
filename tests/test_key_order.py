"""`key_order.text_order` sorts a Categorical as its text does, however its codes were given.

The codes of a Categorical follow the order in which texts were first seen, not their text
order, and `text_order` keeps one array of places across calls: these check it against a sort
of the column cast to String, through frames that bring new categories (so the array grows),
nulls, texts that sort differently from their first appearance, and a named mapping beside
the global one.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from tui_ledger.accounting.key_order import text_order

texts = st.lists(
    st.one_of(st.none(), st.text(alphabet="abzÄü_- 0", max_size=4)), min_size=0, max_size=30
)


def _text_sorted(column: pl.Series) -> list[str | None]:
    return column.cast(pl.String).sort(nulls_last=True).to_list()


def _order_sorted(column: pl.Series) -> list[str | None]:
    frame = pl.DataFrame({"key": column})
    ordered = frame.sort(text_order(column), nulls_last=True, maintain_order=True)
    return ordered.get_column("key").cast(pl.String).to_list()


@given(st.lists(texts, min_size=1, max_size=4))
def test_sorting_by_text_order_is_sorting_by_text(batches: list[list[str | None]]) -> None:
    # Each batch may bring categories never placed before: the places grow, and every batch
    # (the earlier ones again, too) still sorts as its text.
    columns = [pl.Series("key", batch, dtype=pl.Categorical) for batch in batches]
    for column in [*columns, *columns]:
        assert _order_sorted(column) == _text_sorted(column)


def test_equal_texts_share_a_place_and_nulls_have_none() -> None:
    column = pl.Series("key", ["b", None, "a", "b"], dtype=pl.Categorical)
    order = text_order(column).to_list()
    assert order[0] == order[3]
    assert order[1] is None
    assert order[2] < order[0]


def test_a_named_mapping_is_placed_apart_from_the_global_one() -> None:
    # "q" then "p" in the global mapping, "p" then "q" in a named one: their codes disagree.
    global_column = pl.Series("key", ["q", "p"], dtype=pl.Categorical)
    named = pl.Categorical(pl.Categories("key-order-test"))
    named_column = pl.Series("key", ["p", "q", "p"], dtype=named)
    assert _order_sorted(global_column) == ["p", "q"]
    assert _order_sorted(named_column) == ["p", "p", "q"]
    assert _order_sorted(global_column.reverse()) == ["p", "q"]
