"""The figures and rows recent recomputes found for one frame, for the next ones to reuse
(`RecentFigures`, one per frame: `recent_for`).

A key often asks for figures the app had a moment ago: a cleared filter wants the unfiltered
figures, Backspace the filter before, a group change back the grouping before. Each is the
same frame through the same filter, grouped the same way, so its comparison is the one computed
then (at 100M rows, seconds of work), and its rows the ones picked then. And a filter that
keeps only rows an earlier one kept (one more letter typed, `narrowing.narrows`) is looked for
among those rows only (`rows.narrowed_rows`).

What an entry answers for is exactly its key: the frame (by identity, held weakly, so a frame
let go takes its figures with it, and a reloaded or appended ledger, a new frame, finds none),
the filter (compared as an expression: the same terms against the same distinct values) and
the grouping. Matched tasks only is not remembered (what it keeps depends on the grouping).
The rows remembered besides the newest (those on screen, held anyway) hold at most a quarter of
the frame's rows in positions, all together (4 bytes a row kept: 100 MB at 100M rows); beyond,
the oldest rows are let go first, their figures kept; and their comparisons hold at most
`MAX_GROUPS` groups in all, the newest filter's groupings but its last aside (a ledger of
200,000 groups keeps only the comparison on screen).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from tui_ledger.accounting.comparison import Comparison
from tui_ledger.accounting.rows import PickedRows, Rows
from tui_ledger.filtering.narrowing import narrows

MAX_ENTRIES = 8  # filters (with their figures, one grouping or more) remembered per frame
MAX_FRAMES = 4  # frames remembered at once (the app holds one; a test or a notebook, more)
ROWS_SHARE = 4  # remembered positions stay under the frame's rows / this
MAX_GROUPS = 100_000  # groups of the comparisons remembered besides the newest filter's


def same_filter(a: pl.Expr | None, b: pl.Expr | None) -> bool:
    """Whether two filters are the same expression (the same terms and values)."""
    if a is None or b is None:
        return a is None and b is None
    return a is b or a.meta.eq(b)


@dataclass(eq=False)
class _Entry:
    expression: pl.Expr | None
    rows: Rows | None  # the rows it keeps, file order (None: let go, or never kept)
    figures: dict[tuple[str, ...], Comparison]  # by grouping


class RecentFigures:
    """What recent recomputes of one frame found, newest last."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self._frame = weakref.ref(frame)
        self._height = frame.height
        self._entries: list[_Entry] = []
        self._lock = threading.Lock()

    def of(self, frame: pl.DataFrame) -> bool:
        """Whether these are `frame`'s (the very object, still alive)."""
        return self._frame() is frame

    def _find(self, expression: pl.Expr | None) -> _Entry | None:
        for entry in reversed(self._entries):
            if same_filter(entry.expression, expression):
                return entry
        return None

    def rows(self, expression: pl.Expr | None) -> Rows | None:
        """The rows `expression` keeps, if remembered."""
        with self._lock:
            entry = self._find(expression)
            return None if entry is None else entry.rows

    def figures(self, expression: pl.Expr | None, by: Sequence[str]) -> Comparison | None:
        """The comparison of the rows `expression` keeps grouped by `by`, if remembered."""
        with self._lock:
            entry = self._find(expression)
            return None if entry is None else entry.figures.get(tuple(by))

    def figures_of(self, rows: Rows, by: Sequence[str]) -> Comparison | None:
        """The comparison grouped by `by` of a remembered filter that kept exactly `rows`
        (`tokens>20` after `tokens>2`, often): the same rows, so the same figures."""
        with self._lock:
            known = [
                (entry.rows, entry.figures.get(tuple(by)))
                for entry in reversed(self._entries)
                if entry.rows is not None and entry.rows.height == rows.height
            ]
        for kept, figures in known:
            if figures is not None and kept is not None and kept.same_as(rows):
                return figures
        return None

    def wider_rows(self, expression: pl.Expr) -> Rows | None:
        """The fewest remembered rows of a filter `expression` narrows, if any: every row
        `expression` keeps is among them."""
        with self._lock:
            known = [(entry.expression, entry.rows) for entry in self._entries]
        best: Rows | None = None
        for wider, rows in known:
            # Rows picked as far as read have positions (asking for them would pick them all).
            if wider is None or rows is None or not _has_positions(rows):
                continue
            if (best is None or rows.height < best.height) and narrows(expression, wider):
                best = rows
        return best

    def remember(
        self,
        expression: pl.Expr | None,
        rows: Rows | None,
        by: Sequence[str] | None = None,
        comparison: Comparison | None = None,
    ) -> None:
        """Note the rows `expression` keeps and, grouped by `by`, their comparison."""
        if rows is not None and not self.of(rows.source):
            return
        with self._lock:
            entry = self._find(expression)
            if entry is None:
                entry = _Entry(expression, None, {})
            else:
                self._entries.remove(entry)
            self._entries.append(entry)
            if rows is not None:
                entry.rows = rows
            if by is not None and comparison is not None:
                entry.figures.pop(tuple(by), None)  # the newest grouping last
                entry.figures[tuple(by)] = comparison
            del self._entries[:-MAX_ENTRIES]
            self._within_budget()

    def _within_budget(self) -> None:
        """Let go of the oldest rows until the positions held fit `ROWS_SHARE` (the newest
        entry's aside: those are the rows on screen, held anyway)."""
        older = self._entries[:-1]
        budget = self._height // ROWS_SHARE
        held = sum(_positions(entry.rows) for entry in older)
        for entry in older:
            if held <= budget:
                break
            held -= _positions(entry.rows)
            if _positions(entry.rows):
                entry.rows = None
        # A comparison holds a row per group and view: 200,000 groups are tens of MB.
        groups = sum(_groups(entry) for entry in older)
        for entry in older:
            if groups <= MAX_GROUPS:
                break
            groups -= _groups(entry)
            entry.figures.clear()
        newest = self._entries[-1].figures if self._entries else {}
        while len(newest) > 1 and sum(figures.keep.height for figures in newest.values()) > (
            MAX_GROUPS
        ):
            del newest[next(iter(newest))]  # its oldest grouping (the newest is on screen)
        self._entries[:] = [
            entry for entry in self._entries[:-1] if entry.rows is not None or entry.figures
        ] + self._entries[-1:]


def _groups(entry: _Entry) -> int:
    return sum(comparison.keep.height for comparison in entry.figures.values())


def _has_positions(rows: Rows) -> bool:
    """Whether `rows` are some of a frame's, not every one of them (`index` is not None)."""
    return isinstance(rows, PickedRows) or rows.index is not None


def _positions(rows: Rows | None) -> int:
    """How many positions `rows` holds (every row of a frame holds none; rows picked as far as
    read, those picked so far: asking for their `index` would pick them all)."""
    if rows is None:
        return 0
    if isinstance(rows, PickedRows):
        return rows.resolved
    return 0 if rows.index is None else rows.index.len()


_lock = threading.Lock()
_recent: list[RecentFigures] = []


def recent_for(frame: pl.DataFrame) -> RecentFigures:
    """The figures remembered for `frame` (new, empty, the first time it is asked for)."""
    with _lock:
        _recent[:] = [recent for recent in _recent if recent._frame() is not None]
        for recent in _recent:
            if recent.of(frame):
                return recent
        recent = RecentFigures(frame)
        _recent.append(recent)
        del _recent[:-MAX_FRAMES]
        return recent
