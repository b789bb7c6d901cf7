"""What follows new figures once they are drawn, each in its own worker (`FollowUps`, the base
of `pipeline.Pipeline`): the small groups' bootstrap intervals (`ledger.with_intervals`) ->
`IntervalsReady`, the pairwise verdicts (`pairs.pairs_from_cells` on `pair_cells`) ->
`PairsReady`, and the fair-comparison checks (`checks.run_checks`) -> `ChecksReady` /
`ChecksFailed`. Intervals and pairs land on the figures they were started for whichever comes
first (`_figures_origin`, set by the pipeline when it adopts new figures).

What they change on screen they ask the app to draw by a message (`_post`: `SummaryChanged`,
`ComingChanged`, `ChecksChanged`, `Said`), each counted until the app has handled it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

import polars as pl
from textual.worker import get_current_worker

from tui_ledger.accounting.ledger import Comparison, same_groups, with_intervals
from tui_ledger.text.wording import first_line
from tui_ledger.tui.messages import (
    ChecksChanged,
    ChecksFailed,
    ChecksReady,
    ComingChanged,
    IntervalsReady,
    PairsReady,
    Said,
    SummaryChanged,
)
from tui_ledger.tui.snapshot import Snapshot

if TYPE_CHECKING:
    from textual.message import Message

    from tui_ledger.accounting.checks import Check
    from tui_ledger.accounting.pairs import PairCells
    from tui_ledger.findings import Finding
    from tui_ledger.load import Ledger, LoadReport
    from tui_ledger.tui.host import Inputs, PipelineHost


class Stopped(Exception):
    """A follow-up's work was interrupted (on Spark: its query cancelled for newer figures):
    nothing to report."""


class FollowUps:
    """The follow-up stages' state and work; the pipeline that inherits them owns the rest of
    what they read (`app`, `inputs`, `ledger`, `snapshot`, `price_warnings`)."""

    app: PipelineHost
    inputs: Inputs
    ledger: Ledger | None
    snapshot: Snapshot | None
    price_warnings: list[Finding]

    def __init__(self) -> None:
        # One follow-up computes at a time (`_turn`); one superseded while it waited skips.
        self._turn_lock = threading.Lock()
        self.checks: list[Check] | None = None  # for the snapshot on screen, once computed
        self.checks_generation = -1
        self._intervals_for: Comparison | None = None  # its final intervals are being computed
        self._pairs_for: Comparison | None = None  # its pairwise verdicts are being drawn
        # The comparison on screen as its recompute made it (before intervals and pairs were
        # added to it): what a worker's result is matched against.
        self._figures_origin: Comparison | None = None
        self._pairs_done_for: Comparison | None = None  # the origin whose pairs came (or failed)
        # What was posted for the app to draw and is not drawn yet (`_post`), by identity.
        self._undrawn: dict[int, Message] = {}

    # ------------------------------------------------------------------ asking the app to draw

    def _post(self, message: Message) -> None:
        """Ask the app to draw something (a `messages.Drawing`, or `Said`), on the screen's
        thread. Posting does not wait for the handler, so the message is counted until the app
        has handled it (`handled`): `waiting()` says "drawing" meanwhile."""
        self._undrawn[id(message)] = message
        self.app.post_message(message)

    def handled(self, message: Message) -> None:
        """The app has handled (drawn, or dropped while leaving) a message posted by `_post`;
        any other message is no concern of the pipeline's."""
        if self._undrawn.get(id(message)) is message:
            del self._undrawn[id(message)]

    def drawing(self) -> bool:
        """Whether a message posted for the app to draw has not been handled yet."""
        return bool(self._undrawn)

    def _follow_up(self, snapshot: Snapshot) -> None:
        """Start what follows new figures once they are drawn: their final intervals (when
        they came with the delta method's), their pairwise verdicts and their checks, each in
        its own worker, at once. None needs another, so none waits for another to be drawn.
        (Started when the figures are adopted instead, beside their drawing, they delayed the
        figures at 200,000 groups about as much as they brought the final screen forward:
        15 ms.)"""
        if snapshot.comparison.intervals.method == "delta":
            self._intervals_for = snapshot.comparison
            self.app.run_worker(
                partial(self._intervals_worker, snapshot.comparison, snapshot.lazy()),
                name="_intervals_worker",
                group="intervals",
                exclusive=True,
                thread=True,
                exit_on_error=False,
            )
        self._start_pairs(snapshot)
        self._start_checks(snapshot)
        self._post(ComingChanged())  # the warnings line names what has just started

    @contextlib.contextmanager
    def _turn(self) -> Iterator[bool]:
        """A follow-up's turn to compute, in its worker: True when it should (False when newer
        figures superseded it while it waited: its worker is cancelled).

        The follow-ups take turns rather than compute at once: polars already spreads one
        query over every core, and three at once (or, while a filter is typed, those of
        figures already replaced, which run to their end) held their temporaries together.
        At a million rows a typed filter's peak was 20-30 MB higher for it."""
        with self._turn_lock:
            yield not get_current_worker().is_cancelled

    # ------------------------------------------------------------------ intervals

    def _intervals_worker(self, comparison: Comparison, attempts: pl.LazyFrame) -> None:
        """The comparison with its final intervals (bootstrap for the small groups)."""
        started = time.perf_counter()
        final: Comparison | None
        try:
            with self._turn() as go_on:
                if not go_on:
                    return
                final = with_intervals(comparison, attempts, "auto")
        except (pl.exceptions.PolarsError, ValueError):
            final = None  # the delta-method bounds stay
        seconds = time.perf_counter() - started
        del attempts
        if not get_current_worker().is_cancelled:
            self.app.post_message(IntervalsReady(comparison, final, seconds))

    def intervals_ready(self, ready: IntervalsReady) -> None:
        """Show the final intervals if their figures are still on screen (their checks were
        started with them, `_follow_up`)."""
        comparison, final, seconds = ready.comparison, ready.final, ready.seconds
        if self._intervals_for is comparison:
            self._intervals_for = None
        snapshot = self.snapshot
        if snapshot is None or self._figures_origin is not comparison:
            return
        if final is not None:
            if snapshot.comparison.pairs is not None:  # drawn first: kept
                final = same_groups(final, pairs=snapshot.comparison.pairs)
            self._adopt(snapshot, final)
            self.inputs.timings.record("intervals", seconds)
            self._post(SummaryChanged(("intervals", seconds)))
        else:
            self._post(ComingChanged())  # the line stops saying they are coming

    def _adopt(self, snapshot: Snapshot, comparison: Comparison) -> None:
        """The snapshot on screen with `comparison` (the same figures, more of them final)."""
        updated = dataclasses.replace(snapshot, comparison=comparison)
        if "drop_rows" in snapshot.__dict__:  # already (partly) picked: keep them, and how far
            updated.__dict__["drop_rows"] = snapshot.__dict__["drop_rows"]
        self.snapshot = updated

    # ------------------------------------------------------------------ pairs

    def _start_pairs(self, snapshot: Snapshot) -> None:
        """Draw the pairwise verdicts of new figures, in a worker (`pairs_ready`)."""
        self._pairs_for = snapshot.comparison
        self.app.run_worker(
            partial(self._pairs_worker, snapshot.comparison, snapshot),
            name="_pairs_worker",
            group="pairs",
            exclusive=True,
            thread=True,
            exit_on_error=False,
        )

    def pair_cells(self, snapshot: Snapshot) -> PairCells:
        """What the pairs are drawn from (`pairs.task_cells`) of the snapshot's attempts, in
        the pairs' worker (on Spark, queries). Its per-value counts, read only for a pair
        drawn unpaired, are counted in the same worker from the same attempts."""
        from tui_ledger.accounting.pairs import task_cells

        return task_cells(snapshot.lazy(), snapshot.comparison.by)

    def _pairs_worker(self, comparison: Comparison, snapshot: Snapshot) -> None:
        """The pairwise verdicts of the figures on screen (None if they could not be drawn:
        the summary then says nothing of noise)."""
        started = time.perf_counter()
        from tui_ledger.accounting.pairs import pairs_from_cells
        from tui_ledger.accounting.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

        try:
            with self._turn() as go_on:
                if not go_on:
                    return
                cells = self.pair_cells(snapshot)
                del snapshot
                drawn = pairs_from_cells(
                    comparison, cells, seed=BOOTSTRAP_SEED, resamples=BOOTSTRAP_RESAMPLES
                )
        except (pl.exceptions.PolarsError, ValueError, MemoryError):
            drawn = None  # (on Spark, a query's failure or interruption is a ValueError too)
        seconds = time.perf_counter() - started
        if not get_current_worker().is_cancelled:
            self.app.post_message(PairsReady(comparison, drawn, seconds))

    def pairs_ready(self, ready: PairsReady) -> None:
        """Show the pairwise verdicts (the callout, the focus block's line, the noise ranks)
        if their figures are still on screen."""
        if self._pairs_for is ready.comparison:
            self._pairs_for = None
        snapshot = self.snapshot
        if snapshot is None or self._figures_origin is not ready.comparison:
            return
        self._pairs_done_for = ready.comparison
        if ready.pairs is not None:
            self._adopt(snapshot, same_groups(snapshot.comparison, pairs=ready.pairs))
            self.inputs.timings.record("pairs", ready.seconds)
            self._post(SummaryChanged(("pairs", ready.seconds)))
        else:
            self._post(SummaryChanged())  # the callout stops saying the verdicts are coming

    # ------------------------------------------------------------------ checks

    def _start_checks(self, snapshot: Snapshot) -> None:
        ledger = self.ledger
        if ledger is None:
            return
        if self.checks_generation == snapshot.generation and self.checks is None:
            self.app.run_worker(
                partial(
                    self._checks_worker,
                    snapshot.generation,
                    snapshot,
                    self.inputs.settings().by,
                    ledger.report,
                    list(self.price_warnings),
                ),
                name="_checks_worker",
                group="checks",
                exclusive=True,
                thread=True,
                exit_on_error=False,
            )

    def find_checks(
        self, snapshot: Snapshot, by: tuple[str, ...], report: LoadReport, extra: list[Finding]
    ) -> list[Check]:
        """Every fair-comparison check of the snapshot's attempts, merged with the warnings
        `extra` (in the checks' worker; on Spark, a query). Raises `Stopped` when interrupted."""
        from tui_ledger.accounting.checks import run_checks

        return run_checks(snapshot.lazy(), list(by), report, warnings=extra)

    def checks_worker_ended(self) -> None:
        """The checks' worker has ended, whatever its outcome (on Spark: the state line)."""

    def _checks_worker(
        self,
        generation: int,
        snapshot: Snapshot,
        by: tuple[str, ...],
        report: LoadReport,
        price_warnings: list[Finding],
    ) -> None:
        """The checks of the figures on screen (`find_checks`) -> `ChecksReady`, or why they
        could not run -> `ChecksFailed`; nothing when interrupted (newer figures came)."""
        started = time.perf_counter()
        extra: list[Finding] = list(price_warnings)
        if snapshot.notice is not None:
            extra.append(snapshot.notice)
        try:
            with self._turn() as go_on:
                if not go_on:
                    return
                found = self.find_checks(snapshot, by, report, extra)
        except Stopped:
            return
        except (pl.exceptions.PolarsError, ValueError) as error:
            self.app.post_message(ChecksFailed(generation, first_line(error)))
            return
        finally:
            self.checks_worker_ended()
        seconds = time.perf_counter() - started
        if not get_current_worker().is_cancelled:
            self.app.post_message(ChecksReady(generation, found, seconds))

    def checks_failed(self, failed: ChecksFailed) -> None:
        """The checks could not run: the warnings panel lists the warnings as read."""
        if failed.generation == self.checks_generation:
            self.checks_generation = -1  # no checks for these figures; the warnings as read
            self._post(ComingChanged())
        self._post(Said(failed.reason, "checks failed", "error"))

    def checks_ready(self, ready: ChecksReady) -> None:
        """The checks of the figures on screen (unless newer figures are on the way)."""
        if ready.generation != self.checks_generation:
            return  # figures newer than these checks are on the way
        self.inputs.timings.record("checks", ready.seconds)
        self.checks = ready.checks
        self._post(ChecksChanged())
