"""A check's detail lines, written out only when read.

A check such as "small samples" has one detail line per group it names: 200,000 lines at
200,000 groups. Making them all as Python strings cost more than half of the checks (0.2 s),
and the warnings panel shows the first twenty. `DetailLines` keeps the rows a line is made
from and writes out only the lines read, in one polars pass over those rows; the whole list is
written once, the first time all of it is read (`ledger-tui check`, the JSON).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import overload

import polars as pl

Writer = Callable[[pl.DataFrame], pl.Series]


class DetailLines(Sequence[str]):
    """One line per row of `rows`, made by `write` (rows in, a String Series of as many lines
    out) only for the rows read. Compares equal to any sequence of the same lines."""

    def __init__(self, rows: pl.DataFrame, write: Writer) -> None:
        self._rows = rows
        self._write = write
        self._lines: list[str] | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._rows.height

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if self._lines is not None:
            return self._lines[index]
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return self._all()[index]
            return self._made(start, max(stop - start, 0))
        place = index + len(self) if index < 0 else index
        if not 0 <= place < len(self):
            raise IndexError("detail line index out of range")
        return self._made(place, 1)[0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DetailLines | list | tuple):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are not hashable

    def __repr__(self) -> str:
        return f"DetailLines({len(self):,} lines)"

    def _made(self, start: int, count: int) -> list[str]:
        return self._write(self._rows.slice(start, count)).to_list()

    def _all(self) -> list[str]:
        with self._lock:
            if self._lines is None:
                self._lines = self._write(self._rows).to_list()
            return self._lines
