"""What one recompute produces (`Snapshot`), the recompute itself (`compute_snapshot`), and what
the app's operations cost (`Timings`).

No textual here: a recompute runs in a worker thread on what it is given (`Request`, the
attempts, the previous snapshot), never on the app's state, and its result is plain data the
widgets draw.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from tui_ledger.accounting.cap import Cap, cap_figures, capped, kept_accepted
from tui_ledger.accounting.cube import cube_for
from tui_ledger.accounting.ledger import Comparison, View, compare, counted, has_cost, read_columns
from tui_ledger.accounting.rows import Rows, matching_rows, narrowed_rows, sorted_rows
from tui_ledger.filtering.recent_figures import RecentFigures, recent_for
from tui_ledger.filtering.token_range import on_cube
from tui_ledger.tui import PROCESS_START

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tui_ledger.findings import Notice


@dataclass(frozen=True)
class Snapshot:
    """One recompute's result: the attempts the filter keeps, in file order and sorted as
    asked, and the comparison of both views.

    The rows are positions over the ledger's one frame (`rows.Rows`), never a copy of them:
    the table gathers only the rows it draws, and whatever counts them (intervals, pairs,
    checks, the per-task table) reads the frame through `condition` (`lazy`). The DROP FAILURES
    rows are picked only when that view is first shown, and only as far as it reads them
    (`drop_rows`).
    """

    generation: int
    matching: Rows  # the attempts the filter (and matched tasks only) keeps, file order
    ordered: Rows  # the same, sorted as asked
    comparison: Comparison
    seconds: float = 0.0
    notice: Notice | None = None  # set when matched tasks only is on
    condition: pl.Expr | None = None  # picks `matching` from the frame (None: every attempt)
    tasks: int = 0  # matched tasks only: how many tasks every group attempted
    cap: Cap | None = None  # the budget (`B`): the figures are those of the capped attempts
    cap_figures: pl.DataFrame | None = None  # what the cap did per group (`cap.cap_figures`)

    @functools.cached_property
    def drop_rows(self) -> Rows:
        """The accepted attempts only, in the same order, picked as far as they are read
        (`Rows.picked`): a screen of them costs its rows, not a pass over every one. How many
        they are is the DROP FAILURES view's count, over the same rows (`matching`)."""
        accepted = self.comparison.drop.get_column("attempts").cast(pl.Int64).sum()
        return self.ordered.picked(kept_accepted(self.cap, counted("drop")), int(accepted))

    def frame(self, view: View) -> Rows:
        """The rows the table shows in a view."""
        return self.ordered if view == "keep" else self.drop_rows

    def rows(self, view: View) -> int:
        """How many attempts the view holds: the table's rows here; on Spark, where the table
        holds the pages fetched so far, the comparison's count (`SparkSnapshot`)."""
        return self.frame(view).height

    def rows_note(self, view: View) -> str | None:
        """What the attempts pane's subtitle adds about its rows (on Spark: how many fetched)."""
        return None

    def lazy(self) -> pl.LazyFrame:
        """The matching attempts as a filter of the one frame, for a query that counts them
        (only the columns it reads are filtered, a morsel at a time); under a cap, as the cap
        leaves them (`cap.capped`), so intervals, pairs and checks follow the capped figures."""
        return capped(through(self.matching.source, self.condition), self.cap)


@dataclass(frozen=True)
class Request:
    """What a recompute computes, as the settings stood when it started: the filter's
    expression, the grouping, the sort, matched tasks only, and the view the table shows
    (whose rows the worker picks, so the screen does not have to)."""

    expression: pl.Expr | None
    by: tuple[str, ...]
    sort: tuple[str, bool] | None
    matched_only: bool
    view: View
    text: str = ""  # the filter as typed (what the Spark pipeline sends to the server)
    cap: Cap | None = None  # the budget (`B`): every figure is the capped one


def compute_snapshot(
    generation: int,
    attempts: pl.DataFrame,
    request: Request,
    previous: Snapshot | None,
    superseded: threading.Event,
    shown: Snapshot | None = None,
) -> Snapshot | None:
    """Filter, restrict to matched tasks, compare and sort (in a worker thread); `previous`:
    reuse its figures. None when a newer request came meanwhile (`superseded` is set).

    `shown`: the figures on screen, final, of the same ledger and grouping. When the filter
    keeps exactly their rows (a digit typed into `tokens>1` often does), they are the figures
    of these rows too, intervals and all: reused, not computed again.

    Otherwise what recent recomputes of the same frame found is reused (`recent_figures`): the
    rows and the comparison of a filter seen lately (cleared, typed back) and a grouping seen
    lately with it; a filter that keeps only rows a recent one kept is looked for among those.
    A new comparison comes from the frame's cube when it has one that covers the request
    (`token_range.on_cube`: the filter and the grouping read only its key columns, but for
    one range of tokens), from the rows otherwise. With the cube, the rows are picked only
    as far as they are read (`Rows.picked`: the table's first page, and their count is the
    figures'); a sort picks them all.
    """
    # Figures of another cap (or none) are never these: not reused, not remembered.
    if previous is not None and previous.cap != request.cap:
        previous = None
    if shown is not None and shown.cap != request.cap:
        shown = None
    if request.cap is not None:
        return _capped_snapshot(generation, attempts, request, previous, superseded)
    started = time.perf_counter()
    notice = previous.notice if previous is not None else None
    tasks = previous.tasks if previous is not None else 0
    comparison = previous.comparison if previous is not None else None
    where, by, sort = request.expression, request.by, request.sort
    # What recent recomputes of this frame found (not under matched tasks only).
    recent = None if request.matched_only or notice is not None else recent_for(attempts)
    if recent is not None and shown is not None and shown.notice is None:
        # The figures on screen are final now (intervals, pairs): remembered as such.
        recent.remember(shown.condition, shown.matching, shown.comparison.by, shown.comparison)
    # A filter and grouping of the frame's cube's key columns only (and a range of tokens):
    # the figures from its cells, and the rows picked as far as the table reads them (the
    # figures count them).
    cube = None if comparison is not None or request.matched_only else cube_for(attempts)
    on_the_cube = None if cube is None else on_cube(cube, where, by)
    if (
        previous is not None
        and not request.matched_only
        and where is previous.condition
        and previous.matching.source is attempts
    ):
        matching = previous.matching  # a new sort of the rows on screen: they are picked
    elif cube is not None and on_the_cube is not None:
        remembered = recent.rows(where) if recent is not None else None
        comparison = recent.figures(where, by) if recent is not None else None
        if comparison is None:
            comparison = cube.compare(on_the_cube[0], by, on_the_cube[1])
            _ = comparison.labels  # made here rather than on the screen's thread
        if remembered is not None:
            matching = remembered
        elif where is None:
            matching = Rows(attempts)
        else:
            kept = comparison.keep.get_column("attempts").cast(pl.Int64).sum()
            matching = Rows(attempts).picked(where, int(kept))
    elif recent is not None:
        matching = _rows(recent, attempts, where)
    else:
        if request.matched_only:
            where, notice, tasks = _matched_tasks(attempts, where, by)
        matching = matching_rows(attempts, where)
    if superseded.is_set():
        return None
    if (
        comparison is None
        and shown is not None
        and notice == shown.notice  # matched tasks only: its note is among the checks
        and matching.same_as(shown.matching)
    ):
        comparison, matching = shown.comparison, shown.matching
    if comparison is None and recent is not None:
        # A filter cleared or typed back, a grouping seen lately; or other words for the
        # same rows (`tokens>20` after `tokens>2`).
        comparison = recent.figures(where, by)
        if comparison is None:
            comparison = recent.figures_of(matching, by)
    if comparison is None:
        # Delta-method intervals first (no extra pass); the small groups' bootstrap intervals
        # follow in their own worker once these figures are shown.
        comparison = compare(_figures_input(attempts, matching, where, by), by, intervals="delta")
        _ = comparison.labels  # made here rather than on the screen's thread (200,000: 10 ms)
    if recent is not None:
        recent.remember(where, matching, comparison.by, comparison)
    if superseded.is_set():
        return None
    ordered = _ordered(matching, sort)
    snapshot = Snapshot(
        generation,
        matching,
        ordered,
        comparison,
        time.perf_counter() - started,
        notice,
        where,
        tasks,
    )
    if request.view == "drop":
        # The rows the table will show first, picked here, not on screen.
        _ = snapshot.drop_rows.head(FIRST_ROWS)
    return snapshot


def _capped_snapshot(
    generation: int,
    attempts: pl.DataFrame,
    request: Request,
    previous: Snapshot | None,
    superseded: threading.Event,
) -> Snapshot | None:
    """`compute_snapshot` under a cap: the rows as usual, the comparison of the capped
    attempts (never the cube's, nor a recent uncapped one), and what the cap did per group."""
    started = time.perf_counter()
    cap = request.cap
    where, by = request.expression, request.by
    notice = previous.notice if previous is not None else None
    tasks = previous.tasks if previous is not None else 0
    if previous is not None and where is previous.condition:
        matching, comparison = previous.matching, previous.comparison  # a new sort only
        figures = previous.cap_figures
    else:
        if request.matched_only:
            where, notice, tasks = _matched_tasks(attempts, where, by)
        matching = matching_rows(attempts, where)
        if superseded.is_set():
            return None
        rows = _figures_input(attempts, matching, where, by)
        comparison = compare(capped(rows, cap), by, intervals="delta")
        _ = comparison.labels  # made here rather than on the screen's thread
        figures = None if cap is None else cap_figures(rows, cap, by)
    if superseded.is_set():
        return None
    return Snapshot(
        generation,
        matching,
        _ordered(matching, request.sort),
        comparison,
        time.perf_counter() - started,
        notice,
        where,
        tasks,
        cap,
        figures,
    )


def _matched_tasks(
    attempts: pl.DataFrame, where: pl.Expr | None, by: Sequence[str]
) -> tuple[pl.Expr, Notice, int]:
    """`where` narrowed to the tasks every group attempted (`m`), its notice and how many."""
    from tui_ledger.accounting.matched import matched_tasks_where

    matched, notice, tasks = matched_tasks_where(through(attempts, where), by)
    return (matched if where is None else where & matched), notice, tasks


def _ordered(matching: Rows, sort: tuple[str, bool] | None) -> Rows:
    """The rows in the asked order: stable, from file order (ties keep the file's order,
    whatever came before)."""
    if sort is None:
        return matching
    column, descending = sort
    return sorted_rows(matching, column, descending=descending)


FIRST_ROWS = 200
"""The DROP FAILURES rows a recompute picks for the table when that view is shown: a screen and
the rows its columns are sized from (the rest are picked as they are read)."""

NARROWER_THAN = 2
"""A filter is looked for among a recent filter's rows when they are at most this share of the
frame (1/2): gathering its columns at more positions costs about what reading them all does."""


def _rows(recent: RecentFigures, attempts: pl.DataFrame, where: pl.Expr | None) -> Rows:
    """The rows `where` keeps: as remembered; else, when it keeps only rows a recent filter
    kept (one more letter typed) and those are few enough (`NARROWER_THAN`), among those;
    else from the whole frame."""
    remembered = recent.rows(where)
    if remembered is not None:
        return remembered
    if where is not None:
        wider = recent.wider_rows(where)
        if wider is not None and wider.height * NARROWER_THAN <= attempts.height:
            return narrowed_rows(wider, where)
    return matching_rows(attempts, where)


def _figures_input(
    attempts: pl.DataFrame, matching: Rows, where: pl.Expr | None, by: Sequence[str]
) -> pl.DataFrame | pl.LazyFrame:
    """What `compare` reads for the matching rows, never a copy of every column.

    Most rows kept: the frame through the filter, so polars filters only the columns the
    figures read, a morsel at a time (at 10M rows: 0.24 s and +330 MB, against 0.38 s and
    +570 MB for a copy). Under a quarter kept: those rows' few columns gathered once, since
    each of `compare`'s queries would run the filter over every row again (`lea` at 1M rows,
    one row in eight kept: about 10 ms more a keystroke)."""
    if matching.index is None or where is None:
        return attempts.lazy()
    if matching.height * 4 < attempts.height:
        return attempts.select(read_columns(by, has_cost(attempts)))[matching.index]
    return through(attempts, where)


def through(attempts: pl.DataFrame, condition: pl.Expr | None) -> pl.LazyFrame:
    """The attempts `condition` keeps (every one when None), as a lazy filter of the frame:
    a query on it filters only the columns it reads, a morsel at a time."""
    frame = attempts.lazy()
    return frame if condition is None else frame.filter(condition)


TIMINGS_ENV = "LEDGER_TUI_TIMINGS"


@dataclass
class Timings:
    """What the last operations cost, in seconds (read by benchmarks and tests).

    With the environment variable `LEDGER_TUI_TIMINGS=FILE`, the app also appends one JSON line
    per event to FILE: `{"event": "first_screen", "t": ...}` once the first full screen (the
    table and the summary of every group) has been drawn, and `{"event": "recompute", "t": ...,
    "seconds": ..., "rows": ..., "generation": ...}` each time a recompute has been drawn (its
    figures with delta-method intervals), then `{"event": "intervals", "t": ..., "seconds": ...}`
    when the small groups' bootstrap intervals have replaced those, and `{"event": "pairs", ...}`
    when the pairwise verdicts have been drawn and shown. A large CSV adds `head`
    (its first rows read, `seconds` reading them), `first_rows` (drawn in the table), and
    `loaded` (the whole file read, `seconds` reading it). `t` is
    seconds since the process started (`tui_ledger.tui.PROCESS_START`); `seconds` is the
    recompute's own work in its worker.
    """

    load: float = 0.0
    first_screen: float = 0.0
    recompute: float = 0.0
    toggle: float = 0.0
    checks: float = 0.0
    intervals: float = 0.0
    pairs: float = 0.0
    history: list[tuple[str, float]] = field(default_factory=list)

    def record(self, name: str, seconds: float) -> None:
        """Remember one measurement."""
        setattr(self, name, seconds)
        self.history.append((name, seconds))

    def emit(self, event: str, **fields: object) -> None:
        """Append `{"event": event, "t": seconds since process start, **fields}` to the file
        `LEDGER_TUI_TIMINGS` names (nothing without it; a failed write is ignored)."""
        target = os.environ.get(TIMINGS_ENV)
        if not target:
            return
        line = {"event": event, "t": round(time.perf_counter() - PROCESS_START, 6), **fields}
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(line) + "\n")
        except OSError:
            pass
