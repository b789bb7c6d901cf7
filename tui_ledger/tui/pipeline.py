"""The app's data pipeline: load -> recompute -> intervals -> checks, and compaction beside them.

`Pipeline` owns the data the screen shows (the ledger, the snapshot on screen, its checks) and
the state of the work that produces it; `LedgerApp` owns the user's settings and the widgets.
Each stage runs in a thread worker on the arguments it is given (never reading the app from
its thread) and ends by posting a message (`messages`), which the app's one handler for it
hands to the method of the same stage here, on the screen's thread:

- **load** (`start_load`, in `loading.Loading`): `load.load` and the pricing (`price`) ->
  `Loaded` -> `loaded`, which adopts the ledger and asks for a recompute (or `LoadFailed` ->
  `load_failed`). Small files (`SMALL_LOAD_BYTES`) load on the screen's thread before the
  first frame instead, with their first recompute, so it shows the figures. A larger CSV/TSV's
  first records (`load.load_head`, `HEAD_BYTES`) are read first, in the same worker, and
  posted as a head (`Loaded.head`): the table shows them at once, and the toggle, the filter
  and paging work on them, while the summary pane says the file is still being read, with an
  estimate of the progress (`progress_text`), and never shows the head's figures. The first
  recompute of the whole file ends that (`partial`).
- **recompute** (`recompute`): filter, matched tasks only, `ledger.compare` with delta-method
  intervals, and the sort (`snapshot.compute_snapshot`) -> `Recomputed` -> `recomputed`. At
  most one runs at a time (a thread cannot be stopped, and each holds its frames): a request
  made meanwhile waits, the latest only, and the running one is told it is superseded, so it
  stops early and its result is not shown. So a key typed in the filter starts at once, and a
  fast typist costs at most one recompute whose result is dropped, never a queue of them.
- **intervals**, **pairs** and **checks**, started together once new figures are drawn
  (`_follow_up`): the small groups' bootstrap intervals (`ledger.with_intervals`) ->
  `IntervalsReady` -> `intervals_ready`, the pairwise verdicts (`pairs.pairs_from_cells` on
  the attempts' `task_cells`) -> `PairsReady` -> `pairs_ready`, and the checks
  (`checks.run_checks`) -> `ChecksReady` / `ChecksFailed`, so none delays the figures nor
  competes with their drawing for the cores. Intervals and pairs land on the figures they were
  started for whichever comes first (`_figures_origin`).
- **compaction**, once a large ledger's first figures are drawn: `compact.compact_text` ->
  `Compacted` -> `compacted`, whose frame a recompute that reuses the comparison adopts; then
  that frame's cube (`cube.build_cube`, kept by `cube.remember_cube`), which the recomputes
  after it read for the filters and groupings it covers.

Posting does not wait for the handler (as `call_from_thread` did), so what is under way is
tracked here until its message is handled, not by the workers' lives: `waiting()` names it
(`LedgerApp.unsettled`). The pipeline calls nothing on the app but starting workers, posting
messages and timers (`host.PipelineHost`): what the app should draw is a message too
(`messages.Drawing`: `ShowSnapshot`, `SummaryChanged`, `TitleChanged`, ...), tracked until the
app's handler has drawn it (`handled`). What it reads of the app is handed to it as data
(`Inputs`): the files, their options and prices, and the settings as a plain `Request`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

import polars as pl
from textual.worker import get_current_worker

from tui_ledger.accounting import compact
from tui_ledger.accounting.compact import TextValues, compact_text
from tui_ledger.accounting.cube import build_cube, remember_cube
from tui_ledger.text.textsafe import safe_text
from tui_ledger.text.wording import first_line
from tui_ledger.tui.host import Inputs, PipelineHost
from tui_ledger.tui.loading import Loading
from tui_ledger.tui.messages import (
    Compacted,
    FilterFailed,
    ProgressChanged,
    Recomputed,
    Refilter,
    Said,
    ShowSnapshot,
)
from tui_ledger.tui.snapshot import Request, Snapshot, compute_snapshot

# Imported on first use, in the workers that use them (the first frame must not wait for the
# loader, prices or checks).
if TYPE_CHECKING:
    from tui_ledger.findings import Finding
    from tui_ledger.load import Ledger
    from tui_ledger.load.early import EarlyLoad
    from tui_ledger.tui.load_progress import Partial


class Pipeline(Loading):
    """The data the screen shows, and the work that produces it, for one app
    (`PipelineHost`): recompute and compaction here, the load in `Loading`, what follows new
    figures in `FollowUps`."""

    def __init__(self, app: PipelineHost, inputs: Inputs, early: EarlyLoad | None = None) -> None:
        super().__init__()
        self.app = app
        self.inputs = inputs
        self.early_load = early
        """The first load, if started before the app (`load.early`); the first load takes it."""
        self.started = time.perf_counter()
        self.ledger: Ledger | None = None  # its `attempts` carry the costs, once priced
        self.price_warnings: list[Finding] = []
        self.snapshot: Snapshot | None = None  # the figures on screen
        self.workflow_count: int | None = 0  # None: until the first comparison counts them
        # The distinct values of the loaded attempts' repetitive text columns, for fast text
        # filters (`compact.compact_text`); they belong to `ledger.attempts`, and only to it.
        self.text_values: TextValues | None = None
        self.loading_since: float | None = None
        # The file's first records are shown while the whole is read; until the whole file's
        # first figures are drawn, the summary shows the progress instead of any figure.
        self.partial: Partial | None = None
        self.reload_error: str | None = None
        # Every request has a generation; the figures of an older one are never shown.
        self.generation = 0
        self._superseded = threading.Event()  # set once the running recompute is outdated
        self._recompute_running = False
        self._pending: bool | None = None  # a request waiting (True: sort only)
        self._figures_stale = True  # the figures on screen no longer match the settings
        self._figures_ledger: Ledger | None = None  # the ledger the figures on screen came from
        # The frame being compacted in a worker, once its figures are drawn.
        self._compacting: pl.DataFrame | None = None
        self._compacted = False
        # Set once the compact frame's cube is built (or found not worth one), in a worker.
        self._cube_built: threading.Event | None = None
        self._first_screen_done = False
        self._first_rows_done = False
        self._head_drawn = threading.Event()  # set once a head is drawn: the whole read goes on
        # A ledger was adopted; until the app has checked its settings against it
        # (`LedgerChanged`) and asked for its figures, a recompute waits for that.
        self._settings_unchecked = False

    # ------------------------------------------------------------------ the engine's seams

    on_spark = False
    """Whether the figures are computed on a Spark Connect server (`spark_pipeline`)."""

    def total_attempts(self) -> int | None:
        """How many attempts are loaded (None while only a head is read)."""
        if self.ledger is None or self.partial is not None:
            return None
        return self.ledger.attempts.height

    def cursor_moved(self, row: int) -> None:
        """The attempts table's cursor is on `row` (on Spark: fetch the next page near the
        end); the local table holds every row."""

    def per_task(self, snapshot: Snapshot, keys: Mapping[str, Any]) -> pl.DataFrame:
        """`p`: one group (`keys`, column -> value) of the snapshot's attempts task by task
        (in a worker; on Spark, a query)."""
        from tui_ledger.accounting.per_task import per_task

        return per_task(snapshot.lazy(), dict(keys), snapshot.comparison.by)

    def export_rows(self, snapshot: Snapshot) -> pl.DataFrame:
        """`e`: the attempts an export writes (the filtered rows, sorted as shown); in the
        export's worker."""
        return snapshot.ordered.frame()

    def close(self) -> None:
        """The app is leaving (on Spark: interrupt what still runs)."""

    # ------------------------------------------------------------------ what is under way

    def checks_due(self) -> bool:
        """The figures on screen still wait for their checks (asked for, or about to be)."""
        shown = self.snapshot
        due = shown is not None and self.checks_generation == shown.generation
        return due and self.checks is None

    def waiting(self) -> list[str]:
        """What the figures still wait for, by name (see `LedgerApp.unsettled`)."""
        waiting: list[str] = []
        if self.loading_since is not None or (self.snapshot is None and self.ledger is None):
            waiting.append("load")
        if self._recompute_running or self._pending is not None:
            waiting.append("recompute")
        if self.ledger is not None and self.snapshot is None:
            waiting.append("first figures")
        if self._intervals_for is not None:
            waiting.append("intervals")
        if self._pairs_for is not None:
            waiting.append("pairs")
        if self._compacting is not None:
            waiting.append("compaction")
        if self._cube_built is not None and not self._cube_built.is_set():
            waiting.append("cube")
        if self.checks_due():
            waiting.append("checks")
        if self.drawing():
            waiting.append("drawing")
        return waiting

    def coming(self) -> list[str]:
        """What still follows the figures on screen (`checks`, `intervals`, `pairs`), which
        the summary's warnings line says is coming."""
        if self.partial is not None:
            return []
        waiting = self.waiting()
        return [name for name in ("checks", "intervals", "pairs") if name in waiting]

    def warnings(self) -> list[Finding]:
        """Every warning about the figures on screen: once computed, the fair-comparison
        checks, which hold the load report's and the price table's warnings too (with a
        per-group breakdown); until then, those warnings as read."""
        if self.ledger is None or self.partial is not None:
            return []  # a head's warnings would describe its rows only
        if self.checks is not None:
            return list(self.checks)
        found: list[Finding] = [*self.ledger.report.warnings, *self.price_warnings]
        if self.snapshot is not None and self.snapshot.notice is not None:
            found.append(self.snapshot.notice)
        return found

    # ------------------------------------------------------------------ recompute

    def recompute(self, *, sort_only: bool = False, inline: bool = False) -> None:
        """Filter, compare and sort again, with the settings as they are now (`Inputs.settings`),
        in a worker (or, `inline`, on this thread: for small files and quick group changes, so
        the one repaint shows the new figures).

        `sort_only`: the filter and grouping are those on screen, so the matching attempts and
        the comparison are reused and only the sort runs.
        """
        if self.ledger is None or self._settings_unchecked:
            return  # (a new ledger's: the app asks once its settings are checked against it)
        self._next_generation()
        if not sort_only:
            self._figures_stale = True  # the figures on screen no longer match the settings
        if self._recompute_running:
            self._pending = sort_only and self._pending is not False
            return
        self._start_recompute(sort_only, inline=inline)

    def _next_generation(self) -> None:
        """A new request: the running recompute (if any) is outdated from now on."""
        self.generation += 1
        self._superseded.set()

    def _start_recompute(self, sort_only: bool, *, inline: bool = False) -> None:
        ledger = self.ledger
        if ledger is None:
            return
        snapshot = self.snapshot
        reuse = sort_only and snapshot is not None and not self._figures_stale
        self._recompute_running = True
        request = self.inputs.settings()
        if inline:
            generation = self.generation
            self._superseded = threading.Event()
            try:
                done = compute_snapshot(
                    generation, ledger.attempts, request, None, self._superseded
                )
            except Exception:  # any fault: the worker runs it again and says what went wrong
                self._recompute_running = False  # (left set, no request ever ran again)
                self._start_recompute(sort_only)
                return
            self.recomputed(Recomputed(generation, done))
            return
        if reuse and snapshot is not None:
            # The same rows (the filter and matched tasks as they were picked), sorted anew.
            same = dataclasses.replace(request, expression=snapshot.condition, matched_only=False)
            self._run_recompute(snapshot.matching.source, same, snapshot)
            return
        self._run_recompute(ledger.attempts, request, None, self._final_figures(request))

    def _final_figures(self, request: Request) -> Snapshot | None:
        """The snapshot on screen if a recompute may show its figures again when its filter
        keeps exactly the same rows (`compute_snapshot`'s `shown`): whole-file figures of the
        current ledger, grouped the same way, whose intervals and checks are final (so nothing
        still under way is carried over to figures it was not started for)."""
        snapshot = self.snapshot
        if (
            snapshot is None
            or self.partial is not None
            or self._figures_ledger is not self.ledger
            or self.checks is None
            or self._intervals_for is not None
            or self._pairs_for is not None
            or snapshot.comparison.by != request.by
        ):
            return None
        return snapshot

    def _run_recompute(
        self,
        attempts: pl.DataFrame,
        request: Request,
        previous: Snapshot | None,
        shown: Snapshot | None = None,
    ) -> None:
        self._superseded = threading.Event()
        self.app.run_worker(
            partial(
                self._recompute_worker,
                self.generation,
                attempts,
                request,
                previous,
                self._superseded,
                shown,
            ),
            name="_recompute_worker",
            group="recompute",
            thread=True,
            exit_on_error=False,
        )

    def _recompute_worker(
        self,
        generation: int,
        attempts: pl.DataFrame,
        request: Request,
        previous: Snapshot | None,
        superseded: threading.Event,
        shown: Snapshot | None = None,
    ) -> None:
        """Filter, restrict to matched tasks, compare and sort; `previous`: reuse its figures;
        `shown`: reuse them if the filter keeps exactly their rows."""
        snapshot: Snapshot | None = None
        failure: str | None = None
        try:
            snapshot = compute_snapshot(generation, attempts, request, previous, superseded, shown)
        except pl.exceptions.PolarsError as error:
            # A filter that parses but cannot run on these columns (e.g. a bad regex).
            failure = safe_text(first_line(error))
        except Exception as error:  # a fault of ours: said, never stale figures
            # The worker would end quietly (exit_on_error=False) and the screen keep the last
            # figures as if they were these: say so instead.
            reason = safe_text(f"{type(error).__name__}: {first_line(error)}")
            failure = f"the figures could not be computed ({reason})"
            self.app.post_message(
                Said(
                    f"the figures could not be computed ({reason}); the screen still shows "
                    "the last ones. Please report this.",
                    "recompute failed",
                    "error",
                )
            )
        finally:
            del attempts, previous, shown  # let them go before the results are shown
            if not get_current_worker().is_cancelled:
                self.app.post_message(Recomputed(generation, snapshot, failure, request.by))

    def recomputed(self, recomputed: Recomputed) -> None:
        """A recompute finished: show it (or its error) if still current, then start the next."""
        snapshot = recomputed.snapshot
        try:
            if recomputed.failure is not None:
                if recomputed.generation == self.generation:
                    self._post(FilterFailed(recomputed.failure, recomputed.by))
            elif snapshot is not None:
                shown = self.snapshot
                self._apply(snapshot, shown is None or snapshot.comparison is not shown.comparison)
        finally:
            self._recompute_ended()

    def _recompute_ended(self) -> None:
        """The running recompute has finished (shown or not): start the waiting one, if any."""
        self._recompute_running = False
        pending, self._pending = self._pending, None
        if pending is not None and self.ledger is not None:
            self._start_recompute(pending)

    def _apply(self, snapshot: Snapshot, new_figures: bool = True) -> None:
        """Show a finished recompute (unless a newer one was asked for meanwhile).

        `new_figures`: the figures are new (not those on screen again, after a sort or a
        filter that keeps the same rows), so their final intervals and their checks are
        computed, in their own workers (`_follow_up`).
        """
        if snapshot.generation != self.generation:
            return
        self.inputs.timings.record("recompute", snapshot.seconds)
        first = self.snapshot is None
        self.snapshot = snapshot  # the previous one (and its frames) is let go here
        self._figures_ledger = self.ledger
        if self.partial is not None:
            if self.loading_since is not None:  # the head's rows: no figures, checks or counts
                self.checks, self.checks_generation = None, -1
                self._post(ShowSnapshot(first, snapshot, False))  # then `drawn`
                return
            # The whole file's first figures (the head's recomputes were superseded by its
            # load): the summary shows figures from now on.
            self.partial = None
            first = True
            self._post(ProgressChanged(None))
        if self.workflow_count is None and self.ledger is not None:
            request = self.inputs.settings()
            unfiltered = request.expression is None and not request.matched_only
            if unfiltered and request.by == ("workflow",):
                self.workflow_count = snapshot.comparison.keep.height  # one row per workflow
            else:
                attempts = self.ledger.attempts
                self.workflow_count = int(attempts.get_column("workflow").n_unique())
        self._figures_stale = False  # the latest request's: they match the settings
        if new_figures or first:
            self.checks = None
            self.checks_generation = snapshot.generation
            self._figures_origin = snapshot.comparison
        self._post(ShowSnapshot(first, snapshot, new_figures or first))  # then `drawn`

    def drawn(self, snapshot: Snapshot, new_figures: bool) -> None:
        """A recompute's frame has been drawn (the app calls this once the frame that draws
        `ShowSnapshot` is painted): record it, then start its intervals or checks.

        Matched by generation, not identity: a late result of an earlier follow-up for the same
        comparison (a sort reuses it) can replace the snapshot on screen with a copy before
        this runs (`_adopt`), and the checks would then never start."""
        shown = self.snapshot
        if shown is None or shown.generation != snapshot.generation:
            return
        timings = self.inputs.timings
        rows = snapshot.ordered.height
        if self.partial is not None:
            self._head_drawn.set()  # the load worker reads on
            if not self._first_rows_done:
                self._first_rows_done = True
                timings.record("first_rows", time.perf_counter() - self.started)
                timings.emit("first_rows", rows=rows)
            return
        timings.emit(
            "recompute",
            seconds=round(snapshot.seconds, 6),
            rows=rows,
            generation=snapshot.generation,
        )
        if not self._first_screen_done:
            self._first_screen_done = True
            timings.record("first_screen", time.perf_counter() - self.started)
            timings.emit("first_screen", rows=rows)
        self._start_compacting()
        if new_figures:
            self._follow_up(snapshot)

    def pairs_coming(self) -> bool:
        """Whether the figures on screen still wait for their pairwise verdicts (drawn or about
        to be: the callout says a flip is being checked)."""
        snapshot = self.snapshot
        return (
            snapshot is not None
            and self.partial is None
            and snapshot.comparison.pairs is None
            and self._figures_origin is not None
            and self._pairs_done_for is not self._figures_origin
        )

    # ------------------------------------------------------------------ compaction

    def _start_compacting(self) -> None:
        """Once a ledger's figures are on screen, compact its frame in a worker (large ones
        only, `compact.COMPACT_MIN_ROWS`): off the first screen's path, where it cost 0.7 s at
        10M rows; every recompute after it is faster (see `compact.compact_text`)."""
        ledger = self.ledger
        if (
            ledger is None
            or self._compacted
            or self._compacting is not None
            or ledger.attempts.height < compact.COMPACT_MIN_ROWS
        ):
            return
        self._compacting = ledger.attempts
        self.app.run_worker(
            partial(self._compact_worker, ledger.attempts),
            name="_compact_worker",
            group="compact",
            exclusive=True,
            thread=True,
            exit_on_error=False,
        )

    def _compact_worker(self, attempts: pl.DataFrame) -> None:
        compacted, values = compact_text(attempts)
        if not get_current_worker().is_cancelled:
            self.app.post_message(Compacted(attempts, compacted, values))

    def compacted(self, done: Compacted) -> None:
        """Adopt the compact frame: the same attempts, so the figures on screen stay; the rows
        shown are taken from it again (a recompute that reuses the comparison), so the text
        frame is let go. A frame the loader already read with Categorical keys (any CSV) comes
        back as it was: only its distinct values are new, and the rows on screen stay."""
        attempts, compacted = done.attempts, done.compacted
        ledger = self.ledger
        if ledger is None or ledger.attempts is not attempts:
            return  # a reload came meanwhile
        self._compacting = None
        self._compacted = True
        self.ledger = dataclasses.replace(ledger, attempts=compacted)
        self.text_values = done.values
        self._post(Refilter(compacted, fresh=compacted is not attempts))  # then `refiltered`
        self._start_cube(compacted)

    def _start_cube(self, attempts: pl.DataFrame) -> None:
        """Build the compact frame's cube in a worker (`cube.build_cube`): until it is there,
        every recompute reads the rows as before; after, a filter or grouping of its key
        columns reads its cells (`snapshot.compute_snapshot`)."""
        built = self._cube_built = threading.Event()
        self.app.run_worker(
            partial(self._cube_worker, attempts, built),
            name="_cube_worker",
            group="cube",
            exclusive=True,
            thread=True,
            exit_on_error=False,
        )

    def _cube_worker(self, attempts: pl.DataFrame, built: threading.Event) -> None:
        try:
            cube = build_cube(attempts)
            if cube is not None and not get_current_worker().is_cancelled:
                remember_cube(attempts, cube)
        finally:
            built.set()

    def refiltered(self, refilter: Refilter) -> None:
        """The app parsed its filter again for the compact frame's text values: the rows on
        screen are taken from the compact frame, by a recompute that reuses the comparison
        (with the settings as they are now), unless they already are."""
        compacted = refilter.attempts
        ledger, snapshot = self.ledger, self.snapshot
        if ledger is None or ledger.attempts is not compacted:
            return  # a reload came meanwhile
        if not refilter.fresh:
            return  # the rows on screen are already the compact frame's
        if self._recompute_running or snapshot is None or self._figures_stale:
            return  # the recompute running or waiting reads the compact frame when it starts
        self._next_generation()
        self._recompute_running = True
        self._run_recompute(compacted, self.inputs.settings(), snapshot)
