"""Some rows of one frame, in an order, held as row positions over it (`Rows`), not as a copy.

A filtered, sorted view of ten million attempts is a vector of 4-byte positions (38 MB) over the
one frame the ledger holds (294 MB), where a copy of the rows it keeps was the size of the frame
again, and the next keystroke's copy came beside it. Whoever shows the rows gathers only the ones
it draws (`slice`); whoever counts them reads the frame through a filter (`ledger.compare` on
`attempts.lazy().filter(...)`), so no copy is made for the figures either.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import polars as pl

__all__ = ["PickedRows", "Rows", "matching_rows", "narrowed_rows", "sorted_rows"]


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
    def resolved(self) -> int:
        """How many of the rows (from the first) are placed in the frame so far: every one,
        except for `PickedRows` still picking."""
        return self.height

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

    def picked(self, condition: pl.Expr, height: int) -> Rows:
        """Those of these rows where `condition` holds, in the same order, as `where` gives,
        when how many they are (`height`) is known already: picked only as far as they are
        read (`PickedRows`). A condition that reads no column is evaluated at once."""
        if not condition.meta.root_names():
            return self.where(condition)
        return PickedRows(self, condition, height)

    def same_as(self, other: Rows) -> bool:
        """Whether both are the same rows of the same frame in the same order."""
        if self.source is not other.source:
            return False
        if self.index is None or other.index is None:
            return self.index is None and other.index is None
        return self.index.len() == other.index.len() and self.index.equals(other.index)


PICK_CHUNKS = (2**16, 2**20)
"""The parent's rows `PickedRows` look at first, and at most, in one go (the chunk doubles
from the one to the other): the first screen of the accepted rows among 10M sorted ones is
found in about 2 ms, where picking every one takes about 80."""

WHOLE_FRAME_FROM = 4
"""`PickedRows` evaluate their condition over the whole frame, then gather it, when they look
at more than a quarter of its rows at once (the rest, for `tail`): a gather of booleans is
cheaper than one of the columns the condition reads (the rest of 10M sorted rows: about 80
against 110 ms)."""


class PickedRows(Rows):
    """Those of `parent`'s rows where `condition` holds, in its order, `height` of them: the
    rows `parent.where(condition)` holds, picked only as far as they are read.

    A screen of them needs its first rows and their count: the count is known beforehand
    (the figures counted them), and the first rows are found by looking at the parent's rows
    a chunk at a time, from the first, gathering only the condition's columns at their
    positions (`_Picking`). Whatever needs every row (`tail`, `frame`, `index`, a `find` not
    among the first ones) picks the rest, once. The picking is shared by the threads that
    read the rows (a lock); what is read is only ever rows already picked.
    """

    _picking: _Picking

    def __init__(
        self,
        parent: Rows,
        condition: pl.Expr,
        height: int,
        *,
        chunks: tuple[int, int] | None = None,
    ) -> None:
        """`chunks`: the parent's rows looked at first, and at most, in one go (`PICK_CHUNKS`
        when None)."""
        picking = _Picking(parent, condition, height, chunks or PICK_CHUNKS)
        object.__setattr__(self, "source", parent.source)  # (a frozen dataclass's fields)
        object.__setattr__(self, "_picking", picking)

    def __repr__(self) -> str:
        picking = self._picking
        return f"PickedRows({picking.height:,} rows, {picking.found.len():,} picked)"

    @property  # a field of `Rows`: here every row picked, then read
    def index(self) -> pl.Series:
        """Every row's position in the frame (picks the rows not yet picked)."""
        return self._picking.pick(self._picking.height)

    @property
    def height(self) -> int:
        return self._picking.height

    @property
    def resolved(self) -> int:
        return self._picking.found.len()

    def slice(self, start: int, length: int) -> pl.DataFrame:
        """Rows `start` to `start + length` (fewer at the end): the rows up to there picked."""
        if start < 0:
            return super().slice(start, length)
        found = self._picking.pick(start + length)
        return self.source[found.slice(start, length)]

    def position(self, row: int) -> int:
        found = self._picking.pick(row + 1) if row >= 0 else self.index
        return int(found[row])

    def picked(self, condition: pl.Expr, height: int) -> Rows:
        """As `Rows.picked`, from the parent's rows with both conditions: these rows keep the
        parent's order, so the ones where `condition` holds are the parent's where both do
        (the accepted rows of `tokens>2000` need not pick every row `tokens>2000` keeps)."""
        if not condition.meta.root_names():
            return self.where(condition)
        picking = self._picking
        return PickedRows(picking.parent, picking.condition & condition, height)

    def find(self, condition: pl.Expr) -> int | None:
        """The first of these rows where `condition` holds, if any: looked up in the frame,
        then picked only as far as the first of those (nothing more picked when none is
        among them)."""
        picking = self._picking
        positions = self.source.select(pl.arg_where(condition)).to_series()
        first = picking.first_picked(positions)
        if first is None:
            return None
        found = picking.look(first + 1)
        return int(found.is_in(positions.implode()).arg_true()[0])


class _Picking:
    """How far `PickedRows` are picked: the positions found so far and how many of the
    parent's rows were looked at to find them (`progress`, one tuple, replaced whole as more
    are found, never changed in place). One thread picks at a time (`lock`); any may read."""

    def __init__(
        self, parent: Rows, condition: pl.Expr, height: int, chunks: tuple[int, int]
    ) -> None:
        self.parent = parent
        self.condition = condition.fill_null(False)
        self.names = list(dict.fromkeys(condition.meta.root_names()))
        self.height = height
        self.chunk, self.most = chunks
        self.lock = threading.Lock()
        self.progress: tuple[pl.Series, int] = (pl.Series("index", [], dtype=pl.UInt32), 0)

    @property
    def found(self) -> pl.Series:
        return self.progress[0]

    def done(self, looked: int) -> bool:
        """Whether `looked` rows are every one of the parent's."""
        return looked >= self.parent.height

    def pick(self, rows: int) -> pl.Series:
        """The positions found once at least `rows` are (every one, when there are fewer);
        asked for every row, the rest are picked in one go."""
        found, looked = self.progress
        if found.len() >= rows or self.done(looked):
            return found
        with self.lock:
            found, looked = self.progress
            parts = [found]
            picked = found.len()
            while picked < rows and not self.done(looked):
                rest = self.parent.height - looked
                length = rest if rows >= self.height else min(self.chunk, rest)
                parts.append(self._pick(looked, length))
                picked += parts[-1].len()
                looked += length
                self.chunk = min(self.chunk * 2, self.most)
            return self._publish(parts, looked)

    def look(self, through: int) -> pl.Series:
        """The positions found once the parent's first `through` rows are looked at (in one
        go from where the last look stopped)."""
        found, looked = self.progress
        if looked >= through:
            return found
        with self.lock:
            found, looked = self.progress
            if looked >= through:
                return found
            return self._publish([found, self._pick(looked, through - looked)], through)

    def _publish(self, parts: list[pl.Series], looked: int) -> pl.Series:
        """The positions found in `parts`, having looked at `looked` rows: made the progress
        (under the lock), whole."""
        found = pl.concat(parts, rechunk=True) if len(parts) > 1 else parts[0]
        if self.done(looked) and found.len() != self.height:
            raise RuntimeError(f"picked {found.len():,} rows where {self.height:,} were counted")
        self.progress = (found, looked)
        return found

    def _pick(self, start: int, length: int) -> pl.Series:
        """The positions of the parent's rows `start` to `start + length` where the condition
        holds, reading only its columns there."""
        parent = self.parent
        columns = parent.source.select(self.names)
        if parent.index is None:  # positions straight from the condition (no mask kept)
            found = pl.arg_where(self.condition) + pl.lit(start, dtype=pl.UInt32)
            return columns.slice(start, length).select(found.cast(pl.UInt32)).to_series()
        positions = parent.index.slice(start, length)
        if length * WHOLE_FRAME_FROM < parent.source.height:
            keep = columns[positions].select(self.condition).to_series()
        else:  # most of the frame: the condition over every row, gathered as booleans
            keep = parent.source.select(self.condition).to_series().gather(positions)
        return positions.filter(keep)

    def first_picked(self, positions: pl.Series) -> int | None:
        """Which of the parent's rows is the first at one of `positions` (in the frame) where
        the condition holds (None: none is): one pass over the parent's positions, the
        condition's columns read at those few."""
        parent = self.parent
        if positions.is_empty():
            return None
        if parent.index is None:
            ranks = positions  # (ascending, from `arg_where`)
        else:
            ranks = parent.index.is_in(positions.implode()).arg_true()
            positions = parent.index.gather(ranks)
        keep = parent.source.select(self.names)[positions].select(self.condition).to_series()
        ranks = ranks.filter(keep)
        return None if ranks.is_empty() else int(ranks[0])


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
