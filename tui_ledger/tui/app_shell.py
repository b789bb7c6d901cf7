"""The app's shell: its state and how it draws it. `LedgerShell` composes the components
(`header.LedgerHeader`, `filter_bar.FilterBar`, the `AttemptsTable`, the `SummaryPane`), holds
the user's settings (view, grouping, sort, filter, headline metric, matched tasks only, the
group under focus), hands its pipeline what it reads (`host.Inputs`: the files, and the
settings as a plain `Request`), answers what the commands read (`commands.CommandContext`),
and tells the components what to show: the drawing the pipeline's messages ask for
(`messages.Drawing`). `app.LedgerApp` is this shell with the keys' actions, the events and one
handler per message.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.notifications import SeverityLevel
from textual.widget import Widget
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

from tui_ledger.accounting.ledger import (
    DEFAULT_BY,
    group_labels,
)
from tui_ledger.text.textsafe import safe_text
from tui_ledger.tui import commands
from tui_ledger.tui.app_state import ShellState
from tui_ledger.tui.arrangement import NARROW_BELOW, Turns, callout_first, taking_turns
from tui_ledger.tui.command_palette import LedgerCommands
from tui_ledger.tui.host import Inputs
from tui_ledger.tui.loading import price
from tui_ledger.tui.pipeline import Pipeline
from tui_ledger.tui.snapshot import Request, Snapshot, Timings
from tui_ledger.tui.theme import APP_VARIABLES, LEDGER_THEME
from tui_ledger.tui.vouching import (
    Accepted,
    VouchedPipeline,
    accepted_word,
    flagged_positions,
    grader_note,
)
from tui_ledger.tui.widgets.attempts_table import AttemptsTable
from tui_ledger.tui.widgets.attempts_titles import attempts_titles
from tui_ledger.tui.widgets.cap_lines import cap_by_label
from tui_ledger.tui.widgets.filter_bar import FilterBar
from tui_ledger.tui.widgets.focus_text import empty_reason
from tui_ledger.tui.widgets.header import LedgerHeader, counts_text, files_size, title_text
from tui_ledger.tui.widgets.summary_pane import SummaryPane

# Imported on first use (the first frame must not wait for them): the loader, prices and checks
# (in the workers that use them), the dialogs, the audit screens, exports and --watch.
if TYPE_CHECKING:
    from tui_ledger.accounting.prices import PriceTable
    from tui_ledger.load.early import EarlyLoad

SWITCH_INTERVAL_SECONDS = 0.001  # the GIL switch interval while the app runs (see on_mount)


def _nothing() -> None:
    """What a finished worker is left holding in place of its call."""


class LedgerShell(ShellState):
    """The app's state and drawing (`app.LedgerApp` adds what keys and reports do); what the
    commands read of its state is `ShellState`'s."""

    CSS_PATH = "ledger.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]  # noqa: RUF012 (as App declares it)
    """Below 100 columns the panes take turns (`Screen.-narrow` in ledger.tcss, `arrangement`)."""
    TITLE = "ledger-tui"
    BINDINGS: ClassVar = commands.bindings()
    COMMANDS: ClassVar = {LedgerCommands} | App.COMMANDS
    COMMAND_PALETTE_BINDING = "ctrl+p"

    def __init__(
        self,
        paths: Sequence[str],
        *,
        demo: bool = False,
        load_options: dict[str, Any] | None = None,
        prices: PriceTable | None = None,
        watch_files: bool = False,
        spark: Any = None,
        early: EarlyLoad | None = None,
        accepted: Accepted = "graded",
    ) -> None:
        """`spark`: a `spark.commands.SparkInput` already opened (connected, mapped,
        validated): the figures, pages and checks are then computed on that server
        (`spark_pipeline.SparkPipeline`); None: locally, from `paths`. `early`: the load of
        `paths` with `load_options`, already under way (`load.early`), which the first load
        takes its ledger from. `accepted` (`--accepted`): as graded, or as the grader's audit
        vouches (`vouching.VouchedPipeline`; `v` toggles it)."""
        super().__init__()
        self._accepted = accepted
        self.paths = [str(path) for path in paths]
        self.demo = demo
        self.watch_files = watch_files
        """`--watch`: follow the files and show attempts as they are appended (tui/watching.py)."""
        self.load_options = {k: v for k, v in (load_options or {}).items() if v is not None}
        self.prices = prices
        """`--prices`, `--flat-price`: the load worker prices the attempts once they are read."""
        self.register_theme(LEDGER_THEME)
        self.theme = "ledger"
        self.timings = Timings()
        self.pipeline = self._pipeline(spark, early)
        """The data on screen and the work that produces it (on Spark: `SparkPipeline`)."""
        self._switch_interval = sys.getswitchinterval()
        # The user's settings, besides the reactive ones above.
        self._by: tuple[str, ...] = DEFAULT_BY
        self._sort: tuple[str, bool] | None = None
        self._focus_label: str | None = None
        self._last_g = 0.0
        self._availability: tuple[bool, ...] = ()
        self._per_task_waiting = False  # `p` was pressed; its figures are being computed
        # Draws asked for and painted (`unsettled`): equal once the screen shows the latest.
        self._draws_asked = self._draws_done = 0
        self.error_message: str | None = None
        """Why the app gave up (a load error), printed by `run_app` after the screen is gone."""
        # The components, kept by reference: `App.query_one` searches only the active screen,
        # and work finishing behind a dialog still has to reach them.
        self._header = LedgerHeader(id="header")
        self._filter_bar = FilterBar(id="filter-bar")
        self._table = AttemptsTable(id="attempts")
        self._filter_bar.input.leave_to = self._table
        self._summary = SummaryPane(id="summary")
        self._body = Horizontal(self._table, self._summary, id="body")

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """The stylesheet's own variables (`$keep`, `$drop`) for every theme, not only ours."""
        return dict(APP_VARIABLES)

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        """Header, filter line, the two panes, footer; the view and the metric bound down."""
        yield self._header.data_bind(LedgerShell.view)
        yield self._filter_bar
        self._table.data_bind(LedgerShell.view)
        self._summary.data_bind(LedgerShell.view, LedgerShell.metric)
        yield self._body
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Draw the empty frame at once, then load in a worker."""
        self.show_title()
        self.table.border_title = "Attempts"
        self.summary.border_title = "Summary"
        self.turns = Turns(self.table, self.summary.groups_table, self.filter_input)
        """Which pane has the width below 100 columns (`arrangement`)."""
        self.watch(self.screen, "focused", self._focus_moved)
        self._arrange()
        (self.turns.first() if taking_turns(self.size.width) else self.table).focus()
        # Recomputes run in worker threads, and each makes a few dozen small polars calls that
        # need the GIL back when they return. While this thread draws (a dialog closing
        # repaints the whole screen), Python's default 5 ms switch interval makes every such
        # return wait: `compare` at 1M rows took 235 ms beside a busy thread instead of 56.
        # At 1 ms it takes 150 ms; drawing is not measurably slower. (`on_unmount` puts back
        # the interval read in `__init__`.)
        sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
        self.pipeline.start_load(first=True)
        if self.watch_files:
            self._start_watching()

    def _pipeline(self, spark: Any, early: EarlyLoad | None) -> Pipeline:
        """The local pipeline, or (`--spark`) the one whose every stage is a Spark query;
        only the latter imports the engine. Either is handed what it reads as data."""
        inputs = Inputs(
            paths=tuple(self.paths),
            load_options=self.load_options,
            prices=self.prices,
            watch_files=self.watch_files,
            timings=self.timings,
            settings=self.request,
        )
        if spark is None:
            return VouchedPipeline(self, inputs, early, self._accepted)
        from tui_ledger.tui.spark_pipeline import SparkPipeline

        return SparkPipeline(self, inputs, spark)

    def _start_watching(self) -> None:
        """`--watch`: follow the files (`tui.watching`) once the first load has ended; each
        change is the pipeline's (`Pipeline.watched`, `Pipeline.watch_failed`)."""
        from tui_ledger.tui.watching import start_watching

        start_watching(
            self,
            self.paths,
            self.load_options,
            prepare=partial(price, prices=self.prices),
            on_change=self.pipeline.watched,
            on_error=self.pipeline.watch_failed,
        )

    @property
    def early_load(self) -> EarlyLoad | None:
        """The first load, if started before the app (`load.early`) and not yet taken by the
        pipeline's first load."""
        return self.pipeline.early_load

    def on_unmount(self) -> None:
        self.pipeline.close()
        sys.setswitchinterval(self._switch_interval)

    # ------------------------------------------------------------------ what is under way

    @property
    def unsettled(self) -> tuple[str, ...]:
        """What the screen still waits for, by name; empty once the figures of the latest
        request are on screen whole: loaded, recomputed, drawn (the summary's columns
        included), with their final intervals and their checks. Tests and the benchmark wait
        for this to empty rather than for the screen to look still."""
        if self.return_code is not None:
            return ()  # leaving: nothing more will be drawn
        waiting = self.pipeline.waiting()
        if self._per_task_waiting:
            waiting.append("per task")
        if self._draws_done < self._draws_asked:
            waiting.append("a repaint")
        return tuple(waiting)

    @property
    def busy(self) -> bool:
        """Work for the screen is under way (`unsettled` names it)."""
        return bool(self.unsettled)

    def _asked_to_draw(self) -> None:
        """The widgets were given new state: count the screen as unsettled until it has been
        painted with it (a refresh later)."""
        self._draws_asked += 1
        self.call_after_refresh(self._painted, self._draws_asked)

    def _painted(self, draw: int) -> None:
        self._draws_done = max(self._draws_done, draw)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Let a finished worker's arguments go now. Textual keeps each finished worker in a
        reference cycle (the worker, its task, the task's context naming the worker) until
        the cyclic garbage collector runs, and the worker keeps the call it ran, with its
        arguments: snapshots and filtered frames, 4 of them (100 MB) at 1M rows while
        someone types a filter."""
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            finished = event.worker
            if hasattr(finished, "_work"):
                finished._work = _nothing

    # ------------------------------------------------------------------ what the pipeline asks

    def request(self) -> Request:
        """The settings a recompute computes with, as they are now (`Inputs.settings`)."""
        bar = self._filter_bar
        return Request(
            bar.expression,
            self._by,
            self._sort,
            self.matched_only,
            self.view,
            text=bar.text,
            cap=self.cap,
        )

    def ledger_changed(self) -> None:
        """A ledger was loaded: settings its columns no longer allow are reset, the filter is
        parsed again for its columns, and the header counts it."""
        ledger = self.pipeline.ledger
        if ledger is None:
            return
        columns = set(ledger.attempts.columns)
        if not set(self._by) <= columns:
            self._by = DEFAULT_BY
        if self.matched_only and ("task" not in columns or "task" in self._by):
            self.matched_only = False
        if self._sort is not None and self._sort[0] not in columns:
            self._sort = None
        self._parse_filter()
        self.show_title()

    def refilter(self) -> None:
        """The ledger's frame was compacted: parse the filter again for its text values."""
        self._parse_filter()

    def filter_failed(self, message: str, by: tuple[str, ...] | None = None) -> None:
        """The latest request could not be computed: the filter parsed but could not run on
        these columns (e.g. a bad regex), or its grouping `by` failed; the grouping goes back
        to the one on screen (the header and the pane agree, and the next keystroke filters)."""
        snapshot = self.pipeline.snapshot
        shown_by = None if snapshot is None else snapshot.comparison.by
        if by is not None and by == self._by and shown_by is not None and by != shown_by:
            self._by = shown_by
            self._focus_label = None
            self.show_title()
            message = (
                f"still grouped by {', '.join(shown_by)}; could not group by "
                f"{', '.join(by)}: {message}"
            )
            self._filter_bar.failed(message, in_filter=False)
            self.say(message, title="group by", severity="error")  # whole, if the line cuts it
        else:
            self._filter_bar.failed(message)
        self._show_filter_status()

    def give_up(self, message: str) -> None:
        """The first load failed: nothing to show. Leave, and let the CLI's caller read the
        reason on stderr: `run_app` prints it once the screen is torn down, one unwrapped line
        (Rich would wrap or crop it to the terminal's width)."""
        self.error_message = f"ledger-tui: error: {message}"
        self.exit(return_code=2)

    def set_loading(self, loading: bool) -> None:
        """The panes' loading indicator (the first load, in a worker)."""
        self._body.loading = loading

    def show_snapshot(self, first: bool) -> None:
        """New figures are in (`first`: the first ever): draw them."""
        if first:
            self.set_loading(False)
        self._filter_bar.computed()
        self._show()

    def show_coming(self) -> None:
        """A follow-up of the figures ended without changing them: the warnings line stops
        saying it is coming."""
        self._show_warning_count()

    def show_checks(self) -> None:
        """The checks arrived: the warnings count, and the warnings panel if it is open."""
        self._show_warning_count()
        from tui_ledger.tui.screens.screens import WarningsScreen

        if isinstance(self.screen, WarningsScreen):
            self.screen.update_warnings(self.collect_warnings())

    def show_progress(self, text: str | None) -> None:
        """While a head is shown, how the whole read is going (None: the figures are in)."""
        self.summary.show_progress(text)

    def show_state(self, text: str) -> None:
        """On Spark: the state line under the summary (`computing on Spark · 3.2 s`)."""
        self.summary.border_subtitle = text

    # ------------------------------------------------------------------ the reactive settings

    def watch_view(self) -> None:
        """The table shows the view's rows; the header's badge, the panes' colours and the
        summary follow through their bindings (after this)."""
        self._show(summary=False)

    def watch_matched_only(self) -> None:
        """The header says whether only matched tasks are compared."""
        self.show_title()

    # ------------------------------------------------------------------ drawing

    def _show(self, *, summary: bool = True) -> None:
        """Draw the snapshot in the current view: table, counts, summary, header. `summary`
        False: the summary redraws itself (its view changed), under the focus given here."""
        snapshot = self.pipeline.snapshot
        if snapshot is None:
            return
        table = self.table
        table.sort_column = self._sort[0] if self._sort else None
        table.sort_descending = bool(self._sort and self._sort[1])
        table.set_frame(snapshot.frame(self.view), keep_cursor=True)
        table.set_flagged(flagged_positions(self.pipeline))
        self._focus_label = self._label_at_cursor() or self._focus_label
        self._show_table_titles()
        if summary:
            self.show_summary()
        else:
            self.summary.focus_label = self._focus_label
        self.show_title()
        self._show_filter_status()
        self._refresh_bindings_if_changed()
        self._asked_to_draw()

    def show_summary(self) -> None:
        """Draw the summary pane for the snapshot in the current view."""
        snapshot = self.pipeline.snapshot
        if snapshot is None:
            return
        self.summary.cap_figures = cap_by_label(snapshot.cap_figures, snapshot.comparison.by)
        self.summary.show(
            snapshot.comparison,
            self._focus_label,
            self.warning_count(),
            self.note_count(),
            hint=self._keys_hint(),
            pairs_coming=self.pipeline.pairs_coming(),
            coming=self.pipeline.coming(),
            empty=self._empty_reason(snapshot),
            grader=grader_note(self.pipeline),
        )
        self._asked_to_draw()

    def _empty_reason(self, snapshot: Snapshot) -> str | None:
        """Why no attempt is selected, when the filter alone does not say it."""
        if snapshot.comparison.keep.height:
            return None
        filtered, ledger = self._filter_bar.shown, self.pipeline.ledger
        near = None
        if filtered and ledger is not None and not snapshot.notice:
            from tui_ledger.tui.near_names import near_names

            near = near_names(filtered, ledger.attempts)
        return empty_reason(snapshot.notice is not None, snapshot.tasks, bool(filtered), near)

    def _show_warning_count(self) -> None:
        """Redraw the summary's `⚠ N warnings (w)` line (the checks arrived)."""
        if self.pipeline.snapshot is None:
            return
        self.summary.show_warnings(
            self.warning_count(), self.note_count(), self._keys_hint(), self.pipeline.coming()
        )
        self._asked_to_draw()

    def show_title(self) -> None:
        """Draw the header: the files, what is loaded (or loading), the view."""
        pipeline = self.pipeline
        loading = None
        if pipeline.loading_since is not None:
            loading = (time.perf_counter() - pipeline.loading_since, files_size(self.paths))
        counts = counts_text(
            # A head (the file's first rows, shown while the whole is read) counts nothing yet.
            attempts=pipeline.total_attempts(),
            workflows=pipeline.workflow_count,
            by=self._by,
            priced=self.prices is not None,
            watching=self.watch_files,
            matched_only=self.matched_only,
            loading=loading,
            reload_failed=pipeline.reload_error is not None,
            cap=None if self.cap is None else self.cap.words,
            accepted=accepted_word(pipeline),
        )
        self._header.show(title_text(self.paths, self.demo), counts)
        self._asked_to_draw()

    def _show_table_titles(self) -> None:
        snapshot = self.pipeline.snapshot
        ledger = self.pipeline.ledger
        if snapshot is None or ledger is None:
            return
        total = self.pipeline.total_attempts()
        if total is None:  # a head: its subtitle counts the rows read so far, and says so
            total = ledger.attempts.height
        title, subtitle = attempts_titles(snapshot, total, self.view, self._sort)
        if self.pipeline.partial is not None:  # no figure of a head's rows, not even hidden
            title = Text("Attempts", style="bold")
            subtitle.append(" · the file's first rows; reading the rest")
        self.table.border_title = title
        self.table.border_subtitle = subtitle

    def _show_filter_status(self) -> None:
        # A head's count would pass for the file's: the table's subtitle says what it holds.
        total = self.pipeline.total_attempts()
        if self._filter_bar.show_status(self.pipeline.snapshot, total, self.view):
            self._asked_to_draw()

    def _refresh_bindings_if_changed(self) -> None:
        """Ask the footer to redraw only when what can run has changed (it re-mounts its keys)."""
        state = tuple(command.available(self) for command in commands.COMMANDS)
        if state != self._availability:
            self._availability = state
            self.refresh_bindings()

    def _label_at_cursor(self) -> str | None:
        """The group (summary label) of the attempt under the table's cursor."""
        table = self.table
        rows = table.rows
        if rows.height == 0 or not set(self._by) <= set(rows.columns):
            return None
        row = rows.slice(table.cursor_row, 1).select(self._by)
        return group_labels(row, self._by)[0]

    def _parse_filter(self) -> bool:
        """Parse the filter as typed for the loaded attempts; False when it does not parse."""
        ledger = self.pipeline.ledger
        if ledger is None:
            return False
        return self._filter_bar.parse(ledger.attempts.schema, self.pipeline.text_values)

    def on_resize(self) -> None:
        """The badge picks big or plain letters by width; the panes arrange themselves."""
        self._header.badge.refresh(layout=True)
        self._arrange()

    def _arrange(self) -> None:
        """Where the summary's callout goes for the terminal's size (`arrangement`)."""
        width, height = self.size
        self.summary.place_callout(first=callout_first(width, height))

    def _focus_moved(self, focused: Widget | None) -> None:
        """The focused pane takes the turn (it only shows below 100 columns)."""
        if focused is not None and focused.screen is self._body.screen:
            self.turns.follow(focused.screen, focused)

    def action_focus_next(self) -> None:
        """Tab: at a narrow size, summary → attempts → filter (`arrangement.Turns`)."""
        self._focus_step(1)

    def action_focus_previous(self) -> None:
        """Shift+Tab: the other way round."""
        self._focus_step(-1)

    def _focus_step(self, step: int) -> None:
        if self.screen is self._body.screen and taking_turns(self.size.width):
            self.turns.next(self.focused, step).focus()
        elif step > 0:
            self.screen.focus_next()
        else:
            self.screen.focus_previous()

    def say(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> None:
        """A toast with literal text: file names and error messages are never read as markup."""
        self.notify(
            safe_text(message),
            title=safe_text(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )
