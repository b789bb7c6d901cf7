"""The pipeline's load stage (`Loading`, a base of `pipeline.Pipeline`): read the app's files
(`load.load`) and price them (`price`) in a worker -> `Loaded` -> `loaded`, which adopts the
ledger and asks for its figures once the app has checked its settings against it
(`LedgerChanged` -> `settings_checked`); or `LoadFailed` -> `load_failed`. Small files
(`SMALL_LOAD_BYTES`) load on the screen's thread before the first frame instead; a larger
CSV/TSV's head (`load.load_head`, `HEAD_BYTES`) is posted first (`Loaded.head`), and the
summary pane shows the whole read's progress (`progress_text`) until its first figures.
`--watch` hands its updates here too (`watched`, `watch_failed`).
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import polars as pl
from textual.worker import get_current_worker

from tui_ledger.text.textsafe import safe_text
from tui_ledger.tui.follow_ups import FollowUps
from tui_ledger.tui.load_progress import Partial, progress_text
from tui_ledger.tui.messages import (
    GaveUp,
    LedgerChanged,
    Loaded,
    LoadFailed,
    LoadingChanged,
    ProgressChanged,
    Said,
    TitleChanged,
)
from tui_ledger.tui.widgets.header import files_size

# Imported on first use, in the workers that use them (the first frame must not wait for the
# loader or the prices).
if TYPE_CHECKING:
    from tui_ledger.accounting.compact import TextValues
    from tui_ledger.accounting.prices import PriceTable
    from tui_ledger.findings import Finding
    from tui_ledger.load import Ledger
    from tui_ledger.load.early import EarlyLoad
    from tui_ledger.tui.watching import WatchUpdate

# Files this small (in all) load and compare in a few ms (20-30 ms at 16k rows, most of it fixed
# cost): the first load runs on the screen's thread before the first frame, which then shows the
# figures. A worker, the loading frames and a second full frame cost more than that (~0.1 s of
# a tiny file's start-up).
SMALL_LOAD_BYTES = 256 * 1024
# A larger CSV/TSV first shows its first whole records, this many bytes of them (about 5,000
# rows of 5 columns; 20 ms to read and validate), while the whole file is read behind them.
HEAD_BYTES = SMALL_LOAD_BYTES
# The load worker lets the screen draw a head before it reads the whole file, waiting at most
# this long (a head draws in 20-50 ms on an idle machine).
HEAD_DRAW_WAIT = 1.0
# A load started before the app (`load.early`, up to 128 MB) is waited for this long when the
# app is up, before the first frame (which then shows the figures at once); past it, the first
# frame says the file is being read.
EARLY_LOAD_WAIT = 0.25


def price(ledger: Ledger, prices: PriceTable | None) -> tuple[Ledger, list[Finding]]:
    """The ledger with each attempt's cost (`--prices`, `--flat-price`, or a provider cost
    column), and the price warnings. Runs in a worker thread (the load's, or the watch's)."""
    from tui_ledger.accounting.prices import apply_prices, cost_beside_tokens

    priced, price_warnings = apply_prices(ledger.attempts, prices)
    return dataclasses.replace(ledger, attempts=cost_beside_tokens(priced)), list(price_warnings)


def read(
    paths: Sequence[str],
    load_options: Mapping[str, Any],
    prices: PriceTable | None,
    early: EarlyLoad | None,
) -> tuple[Ledger, list[Finding], float]:
    """The files loaded (or `early`'s ledger, the load started before the app) and priced,
    the price warnings, and the seconds it took (the early load's own, not the wait for it).
    Raises `LoadError` (or OSError) as `load` does."""
    started = time.perf_counter()
    if early is not None:
        loaded = early.result()
        started = time.perf_counter() - early.seconds
    else:
        from tui_ledger.load import load

        loaded = load(paths, **load_options)
    ledger, price_warnings = price(loaded, prices)
    return ledger, price_warnings, time.perf_counter() - started


class Loading(FollowUps):
    """The load stage's work; the pipeline that inherits it owns the state it sets (made in
    `Pipeline.__init__`) and the recompute it asks for (`recompute`)."""

    early_load: EarlyLoad | None
    workflow_count: int | None
    text_values: TextValues | None
    loading_since: float | None
    partial: Partial | None
    reload_error: str | None
    _compacting: pl.DataFrame | None
    _compacted: bool
    _cube_built: threading.Event | None
    _head_drawn: threading.Event
    _settings_unchecked: bool

    if TYPE_CHECKING:

        def recompute(self, *, sort_only: bool = False, inline: bool = False) -> None: ...

    def start_load(self, *, first: bool) -> None:
        """Load the app's files: the first time, or again (`r`).

        A first load already under way (`early_load`, started before the app) is waited
        for here, at most `EARLY_LOAD_WAIT`, and then shown like a small file's; one that takes
        longer is waited for in the load worker, without a head (its read holds polars' thread
        pool, which the head's figures would wait behind)."""
        early = self.early_load if first else None
        self.early_load = None
        if early is not None and early.wait(EARLY_LOAD_WAIT):
            self._load_now(early)
            return
        if first and early is None and self._small_files():
            self._load_now()
            return
        self.loading_since = time.perf_counter()
        if first:
            self._post(LoadingChanged(True))
        self._post(TitleChanged())
        self.app.set_timer(0.2, self._tick_loading)
        inputs = self.inputs
        head = None
        if first and not inputs.watch_files and early is None:
            head = self._head_drawn = threading.Event()
        self.app.run_worker(
            partial(
                self._load_worker,
                inputs.paths,
                inputs.load_options,
                inputs.prices,
                first,
                head,
                early,
            ),
            name="_load_worker",
            group="load",
            exclusive=True,
            thread=True,
            exit_on_error=False,
        )

    def _small_files(self) -> bool:
        """Whether the files are few and small enough to load before the first frame."""
        paths = self.inputs.paths
        if self.inputs.watch_files or not all(os.path.isfile(path) for path in paths):
            return False
        return files_size(paths) <= SMALL_LOAD_BYTES

    def _load_now(self, early: EarlyLoad | None = None) -> None:
        """The first load of small files, on the screen's thread (`SMALL_LOAD_BYTES`), or the
        ledger of a load started before the app and done (`early`): what `_load_worker` does,
        then the first recompute, so the first frame shows the figures."""
        import tui_ledger.reports.report  # noqa: F401  (the summary's callout)
        from tui_ledger.load import LoadError

        inputs = self.inputs
        try:
            ledger, price_warnings, seconds = read(
                inputs.paths, inputs.load_options, inputs.prices, early
            )
            workflows = int(ledger.attempts.get_column("workflow").n_unique())
        except (LoadError, OSError) as error:
            self.load_failed(LoadFailed(error, True))
            return
        self.loaded(Loaded(ledger, price_warnings, workflows, seconds, True), inline=True)

    def _tick_loading(self) -> None:
        """While loading, every 0.2 s: the header's time, the summary's progress. (While the
        app leaves, the app's handlers drop what this posts.)"""
        if self.loading_since is None:
            return
        self._post(TitleChanged())
        self._show_progress()
        self.app.set_timer(0.2, self._tick_loading)

    def _show_progress(self) -> None:
        """While a head is shown: the summary pane says how the whole read is going."""
        partial = self.partial
        if partial is not None:
            now = time.perf_counter()
            self._post(
                ProgressChanged(progress_text(partial, now, read=self.loading_since is None))
            )

    def _load_worker(
        self,
        paths: Sequence[str],
        load_options: Mapping[str, Any],
        prices: PriceTable | None,
        first: bool,
        head_drawn: threading.Event | None = None,
        early: EarlyLoad | None = None,
    ) -> None:
        """Read the whole file (or wait for `early`, the read started before the app); first
        (`head_drawn`), its head, which it lets the screen draw before reading on
        (`HEAD_DRAW_WAIT`)."""
        # What the first screen needs besides the loader, imported here rather than on the
        # screen's thread: the summary's callout (report) and the warnings count (checks).
        import tui_ledger.accounting.checks
        import tui_ledger.reports.report  # noqa: F401

        if head_drawn is not None and self._load_head(paths, load_options, prices):
            # Polars runs every query on one thread pool: the whole read would take it from
            # the head's drawing (at 10M rows, on a loaded machine, seconds of it).
            head_drawn.wait(HEAD_DRAW_WAIT)
        from tui_ledger.load import LoadError

        try:
            ledger, price_warnings, seconds = read(paths, load_options, prices, early)
            # A first load is grouped by workflow with no filter: its first comparison counts
            # the workflows (0.12 s saved at 10M rows); a reload counts them here.
            workflows = None if first else int(ledger.attempts.get_column("workflow").n_unique())
        except (LoadError, OSError) as error:
            self.app.post_message(LoadFailed(error, first))
            return
        if not get_current_worker().is_cancelled:
            self.app.post_message(Loaded(ledger, price_warnings, workflows, seconds, first))

    def _load_head(
        self, paths: Sequence[str], load_options: Mapping[str, Any], prices: PriceTable | None
    ) -> bool:
        """Post the file's first records (`load.load_head`), if it has a head to show; whether
        it did (in the load worker, before the whole file)."""
        from tui_ledger.load import LoadError, load_head

        started = time.perf_counter()
        try:
            head = load_head(paths, HEAD_BYTES, **load_options)
            if head is None:
                return False
            ledger, price_warnings = price(head, prices)
        except (LoadError, OSError, ValueError, pl.exceptions.PolarsError):
            return False  # the whole file's read says what is wrong
        seconds = time.perf_counter() - started
        if get_current_worker().is_cancelled:
            return False
        self.app.post_message(Loaded(ledger, price_warnings, None, seconds, first=True, head=True))
        return True

    def watched(self, update: WatchUpdate[tuple[Ledger, list[Finding]]]) -> None:
        """`--watch`: new attempts arrived (or the files were rewritten); filter, view, sort and
        cursor stay, as with `r`. (Seen as the app shuts down, what it posts is dropped.)"""
        ledger, price_warnings = update.prepared
        # `first=True`: no "reloaded" toast for every appended line; the header counts update.
        self.loaded(Loaded(ledger, price_warnings, update.workflows, update.seconds, first=True))

    def watch_failed(self, message: str) -> None:
        """`--watch`: a change could not be read; keep what is shown and say why."""
        self.load_failed(LoadFailed(RuntimeError(message), first=False))

    def load_failed(self, failed: LoadFailed) -> None:
        """A load could not be read: the first one ends the app; a reload keeps what is shown."""
        self.loading_since = None
        self.partial = None
        self._head_drawn.set()
        error = failed.error
        message = safe_text(str(error) or type(error).__name__)
        if failed.first and not self.inputs.watch_files:
            self._post(GaveUp(message))
            return
        self.reload_error = message
        self._post(TitleChanged())
        self._post(Said(message, "reload failed; kept what was loaded", "error"))

    def loaded(self, loaded: Loaded, *, inline: bool = False) -> None:
        """Adopt a freshly loaded (and priced) ledger, and recompute its figures (`inline`: on
        this thread, into the next frame, once the app has checked its settings against it)."""
        if loaded.head:
            self._head_loaded(loaded)
            return
        timings = self.inputs.timings
        timings.record("load", loaded.seconds)
        timings.emit("loaded", seconds=round(loaded.seconds, 6))
        self.loading_since = None
        self.reload_error = None
        self.ledger = ledger = loaded.ledger
        self.text_values = self._compacting = self._cube_built = None
        self._compacted = False
        self.price_warnings = loaded.price_warnings
        self.workflow_count = loaded.workflows
        self._ledger_changed(inline)
        self._show_progress()
        if not loaded.first:
            self._post(Said(f"{ledger.attempts.height:,} attempts", "reloaded", timeout=3))

    def _ledger_changed(self, inline: bool) -> None:
        """A ledger was adopted: the app checks its settings against it, then asks for its
        figures (`LedgerChanged`); a recompute asked for meanwhile waits for that one."""
        self._settings_unchecked = True
        self._post(LedgerChanged(inline))  # then `settings_checked`

    def settings_checked(self, inline: bool) -> None:
        """The app has checked its settings against the new ledger (`LedgerChanged`): its
        figures, with the settings as they are now (`inline`: on this thread)."""
        self._settings_unchecked = False
        self.recompute(inline=inline)

    def _head_loaded(self, loaded: Loaded) -> None:
        """The file's first records: shown in the table (and filtered, toggled, paged) while
        the whole file is read; the summary pane shows the read's progress, not their figures."""
        if self.loading_since is None or self.ledger is not None:
            self._head_drawn.set()
            return  # the load failed, or the app is leaving: nothing to preview
        timings = self.inputs.timings
        timings.record("head", loaded.seconds)
        timings.emit("head", seconds=round(loaded.seconds, 6))
        self.partial = Partial(
            rows=loaded.ledger.attempts.height,
            head_bytes=HEAD_BYTES,
            size=files_size(self.inputs.paths),
            since=self.loading_since,
        )
        self.ledger = loaded.ledger
        self.workflow_count = None
        self._show_progress()
        self._post(LoadingChanged(False))
        self._ledger_changed(inline=True)
