"""Some rows of one frame, in an order, held as row positions over it (`Rows`), not as a copy.

A filtered, sorted view of ten million attempts is a vector of 4-byte positions (38 MB) over the
one frame the ledger holds (294 MB), where a copy of the rows it keeps was the size of the frame
again, and the next keystroke's copy came beside it. Whoever shows the rows gathers only the ones
it draws (`slice`); whoever counts them reads the frame through a filter (`ledger.compare` on
`attempts.lazy().filter(...)`), so no copy is made for the figures either.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

__all__ = ["Rows", "matching_rows", "narrowed_rows", "sorted_rows"]


@dataclass(frozen=True, eq=False)
class Rows:
    """The rows of `source` at `index` (UInt32 positions, in the order shown); every row in
    frame order when `index` is None."""

    source: pl.DataFrame
    index: pl.Series | None = None

    @property
    def height(self) -> int:
        return self.source.height if self.index is None else self.index.len()

    @property
    def columns(self) -> list[str]:
        return self.source.columns

    @property
    def schema(self) -> pl.Schema:
        return self.source.schema

    def slice(self, start: int, length: int) -> pl.DataFrame:
        """Rows `start` to `start + length` (fewer at the end), gathered from the frame."""
        if self.index is None:
            return self.source.slice(start, length)
        return self.source[self.index.slice(start, length)]

    def head(self, rows: int) -> pl.DataFrame:
        return self.slice(0, rows)

    def tail(self, rows: int) -> pl.DataFrame:
        return self.slice(max(self.height - rows, 0), rows)

    def position(self, row: int) -> int:
        """Where row `row` of these rows sits in the frame."""
        return row if self.index is None else int(self.index[row])

    def value(self, column: str, row: int) -> object:
        """One cell, read from the frame (no gather)."""
        return self.source.get_column(column)[self.position(row)]

    def row(self, row: int) -> dict[str, object]:
        """Every field of one row, by name."""
        return self.source.row(self.position(row), named=True)

    def find(self, condition: pl.Expr) -> int | None:
        """The first of these rows (in their order) where `condition` holds, if any: looked up
        in the frame, then among the positions."""
        positions = self.source.select(pl.arg_where(condition)).to_series()
        if positions.is_empty():
            return None
        if self.index is None:
            return int(positions[0])
        found = self.index.is_in(positions.implode()).arg_true()
        return None if found.is_empty() else int(found[0])

    def frame(self) -> pl.DataFrame:
        """These rows as a frame of their own (a copy: for an export, not for drawing)."""
        return self.source if self.index is None else self.source[self.index]

    def where(self, condition: pl.Expr) -> Rows:
        """Those of these rows where `condition` holds, in the same order."""
        keep = self.source.select(condition.fill_null(False)).to_series()
        if self.index is None:
            return Rows(self.source, keep.arg_true())
        return Rows(self.source, self.index.filter(keep.gather(self.index)))

    def same_as(self, other: Rows) -> bool:
        """Whether both are the same rows of the same frame in the same order."""
        if self.source is not other.source:
            return False
        if self.index is None or other.index is None:
            return self.index is None and other.index is None
        return self.index.len() == other.index.len() and self.index.equals(other.index)


def matching_rows(attempts: pl.DataFrame, condition: pl.Expr | None) -> Rows:
    """The attempts where `condition` holds (every one when None), in file order. The
    condition is evaluated once, to positions; the rows are not copied."""
    if condition is None:
        return Rows(attempts)
    positions = attempts.select(pl.arg_where(condition.fill_null(False))).to_series()
    return Rows(attempts, positions)


def sorted_rows(rows: Rows, column: str, *, descending: bool) -> Rows:
    """The same rows sorted on one column, stable from their order (ties keep it), nulls
    last: what `DataFrame.sort(column, maintain_order=True, nulls_last=True)` gives, as
    positions. Only that column is gathered."""
    values = rows.source.get_column(column)
    if rows.index is not None:
        values = values.gather(rows.index)
    positions = rows.index if rows.index is not None else pl.int_range(rows.height, eager=True)
    order = (
        pl.DataFrame({"position": positions.cast(pl.UInt32), "value": values})
        .sort("value", descending=descending, nulls_last=True, maintain_order=True)
        .get_column("position")
    )
    return Rows(rows.source, order)


def narrowed_rows(rows: Rows, condition: pl.Expr) -> Rows:
    """Those of `rows` (in file order) where `condition` holds, found among them only: what
    `matching_rows(rows.source, condition)` gives when `condition` keeps none but some of
    `rows` (`narrowing.narrows`), reading only the columns it names at those rows."""
    names = condition.meta.root_names()
    if rows.index is None or not names:
        return matching_rows(rows.source, condition)
    part = rows.source.select(list(dict.fromkeys(names)))[rows.index]
    keep = part.select(condition.fill_null(False)).to_series()
    return Rows(rows.source, rows.index.filter(keep))
