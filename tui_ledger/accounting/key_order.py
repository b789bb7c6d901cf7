"""Groups in the order of their keys' text, cheaply for Categorical keys.

`ledger.compare` returns one row per group, sorted by each key's text (a Categorical sorts as
its String would). polars sorts a Categorical by its text by looking the text up row by row:
at 200,000 groups that sort cost more than a tenth of a recompute. A category's code never
changes while its mapping lives, so the text order of the codes seen so far is kept here (one
dense array, code to place) and a sort reads that place, an integer, instead of the text.

The array grows when a frame brings codes it has not placed (new groups: a new file, or rows
appended under `--watch`); it places them all again, by their text, once. It keeps the
categories it placed in a Series of their dtype, which keeps their mapping alive (polars frees
a mapping no data uses, and its codes could then be given to other text).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl


@dataclass(frozen=True)
class _Places:
    placed: pl.Series  # the categories placed (Categorical): keeps their mapping alive
    by_code: pl.Series  # UInt32, indexed by code: the place of that code's text; null: unplaced


_lock = threading.Lock()
_places: dict[tuple[str, str, str], _Places] = {}


def sorted_by_text(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """`frame`'s rows in key order, nulls last, each key by its text: a Categorical key sorts
    as its String would (by `text_order`), any other as itself; ties keep their order."""
    order = [
        text_order(frame.get_column(name)) if frame.schema[name] == pl.Categorical else name
        for name in keys
    ]
    return frame.sort(order, nulls_last=True, maintain_order=True)


def text_order(column: pl.Series) -> pl.Series:
    """Per row of a Categorical `column`, an integer that sorts as the row's text does (null
    where the row is null). Sorting by it gives the order of `column.cast(pl.String)`."""
    codes = column.to_physical()
    categories = column.dtype.categories  # type: ignore[attr-defined]
    key = (categories.name(), categories.namespace(), str(categories.physical()))
    with _lock:
        places = _places.get(key)
        if places is None or not _covers(places, codes):
            places = _place(column, places)
            _places[key] = places
    return places.by_code.gather(codes.cast(pl.UInt32, strict=False)).rename(column.name)


def _covers(places: _Places, codes: pl.Series) -> bool:
    """Whether every code of `codes` has a place."""
    top = codes.max()
    if top is None:  # every row null
        return True
    if int(top) >= places.by_code.len():  # type: ignore[arg-type]
        return False
    found = places.by_code.gather(codes.drop_nulls().cast(pl.UInt32))
    return found.null_count() == 0


def _place(column: pl.Series, places: _Places | None) -> _Places:
    """Every category of `column` (and those placed before), placed by its text."""
    seen = column.drop_nulls().unique()
    if places is not None:
        seen = pl.concat([places.placed, seen]).unique()
    order = seen.cast(pl.String).arg_sort()
    codes = seen.to_physical().gather(order).cast(pl.UInt32)
    size = int(codes.max()) + 1 if codes.len() else 0  # type: ignore[arg-type]
    by_code = pl.repeat(None, size, dtype=pl.UInt32, eager=True).scatter(
        codes, pl.int_range(0, codes.len(), dtype=pl.UInt32, eager=True)
    )
    return _Places(placed=seen, by_code=by_code)
