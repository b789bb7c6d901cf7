"""The interactive ledger: attempts on the left, the summary per group on the right, one view key.

`LedgerApp` turns keys into actions, events into settings, the workers' reports into
calls on its pipeline, and what the pipeline asks it to draw (`messages.Drawing`) into the
drawing its base class does; its state, and how it is drawn, are its base class's (`app_shell.
LedgerShell`: it composes the components and holds the user's settings). The data comes from its
`pipeline.Pipeline` (load, recompute, intervals, checks, compaction, in thread workers); the
exports are `exporting`; the colours are `theme`.

Data flows one way (docs/ARCHITECTURE.md): the loader gives a frame; the filter (query.py) narrows
it; `ledger.compare` computes both views at once; the widgets draw what they are given. A
toggle between KEEP FAILURES and DROP FAILURES needs no recompute at all, because the comparison
already holds both views. The same goes for the headline metric (tokens or cost per accepted
result): the comparison holds both.

Run it with `ledger-tui FILE` (cli.py calls `run.run_app`), or `python -m tui_ledger.tui.run FILE`.
`LEDGER_TUI_TIMINGS=FILE` appends a JSON line per drawn first screen and recompute to FILE
(see `snapshot.Timings`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from textual import on
from textual.message import Message
from textual.widgets import Input

from tui_ledger.accounting.ledger import ParetoMetric
from tui_ledger.tui import messages
from tui_ledger.tui.app_shell import LedgerShell
from tui_ledger.tui.vouching import Audited, Refigure, VouchedPipeline, flagged_positions
from tui_ledger.tui.widgets.attempts_table import AttemptsTable
from tui_ledger.tui.widgets.filter_bar import FilterInput
from tui_ledger.tui.widgets.summary_pane import SummaryPane

if TYPE_CHECKING:
    from tui_ledger.grader import Signal

_Report = TypeVar("_Report", bound=Message)


def _unless_leaving(
    handler: Callable[[LedgerApp, _Report], None],
) -> Callable[[LedgerApp, _Report], None]:
    """A worker's report that arrives while the app shuts down is dropped: its panes may be
    gone already (see `LedgerApp.leaving`)."""

    @functools.wraps(handler)
    def handle(app: LedgerApp, report: _Report) -> None:
        if not app.leaving:
            handler(app, report)

    return handle


def _drawing(
    handler: Callable[[LedgerApp, _Report], None],
) -> Callable[[LedgerApp, _Report], None]:
    """What the pipeline asked the app to draw: drawn unless the app is shutting down, and
    handed back to the pipeline as handled either way (it counts it until then, so
    `unsettled` says "drawing")."""

    @functools.wraps(handler)
    def handle(app: LedgerApp, message: _Report) -> None:
        try:
            if not app.leaving:
                handler(app, message)
        finally:
            app.pipeline.handled(message)

    return handle


GG_SECONDS = 0.6  # the second `g` of `gg` must follow the first within this long
# A group change recomputes on the screen's thread when the last recompute took less (a
# pause this short is less than the GIL contention a worker would meet; see action_group_by).
INLINE_RECOMPUTE_SECONDS = 0.1
# `move` directions -> the action of the table (or the summary's groups table) that moves so.
_MOVES = {
    "down": "cursor_down",
    "up": "cursor_up",
    "left": "cursor_left",
    "right": "cursor_right",
    "page_up": "page_up",
    "page_down": "page_down",
    "top": "scroll_home",
    "bottom": "scroll_end",
}


class LedgerApp(LedgerShell):
    """ledger-tui: a filterable table of attempts beside a live summary per workflow."""

    # ------------------------------------------------------------------ what the workers report

    @on(messages.Loaded)
    @_unless_leaving
    def _got_loaded(self, message: messages.Loaded) -> None:
        self.pipeline.loaded(message)

    @on(messages.LoadFailed)
    @_unless_leaving
    def _got_load_failed(self, message: messages.LoadFailed) -> None:
        self.pipeline.load_failed(message)

    @on(messages.Recomputed)
    @_unless_leaving
    def _got_recomputed(self, message: messages.Recomputed) -> None:
        self.pipeline.recomputed(message)

    @on(messages.IntervalsReady)
    @_unless_leaving
    def _got_intervals(self, message: messages.IntervalsReady) -> None:
        self.pipeline.intervals_ready(message)

    @on(messages.PairsReady)
    @_unless_leaving
    def _got_pairs(self, message: messages.PairsReady) -> None:
        self.pipeline.pairs_ready(message)

    @on(messages.ChecksReady)
    @_unless_leaving
    def _got_checks(self, message: messages.ChecksReady) -> None:
        self.pipeline.checks_ready(message)

    @on(messages.ChecksFailed)
    @_unless_leaving
    def _got_checks_failed(self, message: messages.ChecksFailed) -> None:
        self.pipeline.checks_failed(message)

    @on(messages.Compacted)
    @_unless_leaving
    def _got_compacted(self, message: messages.Compacted) -> None:
        self.pipeline.compacted(message)

    @on(messages.PerTaskReady)
    @_unless_leaving
    def _got_per_task(self, message: messages.PerTaskReady) -> None:
        self._per_task_waiting = False
        from tui_ledger.tui.audits import show_per_task

        show_per_task(self, message)

    @on(Audited)
    @_unless_leaving
    def _got_audited(self, message: Audited) -> None:
        if isinstance(self.pipeline, VouchedPipeline):
            self.pipeline.audited(message)

    @on(messages.Said)
    @_drawing
    def _got_said(self, message: messages.Said) -> None:
        self.say(
            message.text, title=message.title, severity=message.severity, timeout=message.timeout
        )

    # ------------------------------------------------------------------ what the pipeline draws

    @on(messages.TitleChanged)
    @_drawing
    def _got_title(self, message: messages.TitleChanged) -> None:
        self.show_title()

    @on(messages.LoadingChanged)
    @_drawing
    def _got_loading(self, message: messages.LoadingChanged) -> None:
        self.set_loading(message.loading)

    @on(messages.ProgressChanged)
    @_drawing
    def _got_progress(self, message: messages.ProgressChanged) -> None:
        self.show_progress(message.text)

    @on(messages.LedgerChanged)
    @_drawing
    def _got_ledger(self, message: messages.LedgerChanged) -> None:
        self.ledger_changed()
        self.pipeline.settings_checked(message.inline)

    @on(messages.ShowSnapshot)
    @_drawing
    def _got_snapshot(self, message: messages.ShowSnapshot) -> None:
        self.show_snapshot(message.first)
        if message.drawn is not None:  # what follows the figures starts once they are painted
            self.call_after_refresh(self.pipeline.drawn, message.drawn, message.new_figures)

    @on(messages.SummaryChanged)
    @_drawing
    def _got_summary(self, message: messages.SummaryChanged) -> None:
        self.show_summary()
        if message.timing is not None:
            name, seconds = message.timing
            self.call_after_refresh(self.timings.emit, name, seconds=round(seconds, 6))

    @on(messages.ComingChanged)
    @_drawing
    def _got_coming(self, message: messages.ComingChanged) -> None:
        self.show_coming()

    @on(messages.ChecksChanged)
    @_drawing
    def _got_checks_changed(self, message: messages.ChecksChanged) -> None:
        self.show_checks()

    @on(messages.FilterFailed)
    @_drawing
    def _got_filter_failed(self, message: messages.FilterFailed) -> None:
        self.filter_failed(message.message, message.by)

    @on(messages.Refilter)
    @_drawing
    def _got_refilter(self, message: messages.Refilter) -> None:
        self.refilter()
        self.pipeline.refiltered(message)

    @on(messages.PageFetched)
    @_drawing
    def _got_page(self, message: messages.PageFetched) -> None:
        if self.view == message.view:
            self.show_snapshot(False)

    @on(messages.StateChanged)
    @_drawing
    def _got_state(self, message: messages.StateChanged) -> None:
        self.show_state(message.text)

    @on(Refigure)
    @_drawing
    def _got_refigure(self, message: Refigure) -> None:
        self.show_summary()
        self.table.set_flagged(flagged_positions(self.pipeline))

    @on(messages.GaveUp)
    @_drawing
    def _got_gave_up(self, message: messages.GaveUp) -> None:
        self.give_up(message.message)

    # ------------------------------------------------------------------ events

    def on_attempts_table_cursor_moved(self, event: AttemptsTable.CursorMoved) -> None:
        """The summary follows the group of the attempt under the cursor."""
        label = self._label_at_cursor()
        if label is not None and label != self._focus_label:
            self._focus_label = label
            self.summary.focus_group(label)
        self._refresh_bindings_if_changed()
        self.pipeline.cursor_moved(event.row)

    def on_attempts_table_row_activated(self, event: AttemptsTable.RowActivated) -> None:
        """Enter on a row: the attempt's screen (its verdict and steps)."""
        self.action_open_attempt()

    def on_summary_pane_group_selected(self, event: SummaryPane.GroupSelected) -> None:
        """A row picked in the summary puts that group under focus."""
        self._focus_label = event.label
        self.summary.focus_group(event.label)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        bar = self._filter_bar
        if event.value == bar.text:
            return
        bar.text = event.value
        if self._parse_filter():
            self.pipeline.recompute()
        self._show_filter_status()

    @on(Input.Submitted, "#filter")
    @on(FilterInput.Left)
    def _filter_done(self) -> None:
        self.table.focus()

    # ------------------------------------------------------------------ actions

    def action_toggle_view(self) -> None:
        """t: KEEP FAILURES <-> DROP FAILURES, in one step (no recompute needed)."""
        started = time.perf_counter()
        self.view = "drop" if self.view == "keep" else "keep"
        self.timings.record("toggle", time.perf_counter() - started)

    def action_toggle_metric(self) -> None:
        """$: the summary's headline between tokens and cost per accepted result."""
        if not self.has_cost:
            self.say(
                "No cost figures: open the file with --prices FILE or --flat-price USD.",
                title="tokens ⇄ cost",
                timeout=4,
            )
            return
        started = time.perf_counter()
        self.metric = "cost" if self.metric == "tokens" else "tokens"
        self._asked_to_draw()  # the summary redraws itself (its binding)
        self.timings.record("toggle", time.perf_counter() - started)

    def action_toggle_accepted(self) -> None:
        """v: accepted as graded <-> as vouched by the grader's audit; every figure follows
        once the audit is in (`vouching.VouchedPipeline`)."""
        pipeline = self.pipeline
        if not isinstance(pipeline, VouchedPipeline):
            self._local_only("Accepted as vouched")
            return
        pipeline.set_accepted("graded" if pipeline.accepted == "vouched" else "vouched")
        if pipeline.accepted == "vouched" and pipeline.auditing:
            self.say("The figures stay as graded until the grader's audit is in.", timeout=4)

    def action_grader_audit(self) -> None:
        """a: the grader's audit: the flagged attempts by group, the tests no attempt passed,
        the tasks that cannot separate the groups."""
        pipeline = self.pipeline
        if not isinstance(pipeline, VouchedPipeline) or pipeline.ledger is None:
            self._local_only("The grader's audit")
            return
        if pipeline.audit is None or pipeline.health is None:
            what = pipeline.audit_error or "it is still reading the attempts' logs"
            self.say(f"The grader's audit is not in yet: {what}.", timeout=4)
            return
        from tui_ledger.tui.screens.grader_screen import GraderScreen

        self.push_screen(
            GraderScreen(
                pipeline.ledger.attempts,
                pipeline.audit,
                pipeline.health,
                pipeline.ranking,
                self._open_flagged,
                self._by,
            )
        )

    def _open_flagged(self, position: int, step: int | None) -> None:
        """Enter on a flagged attempt in the audit: its screen, at the evidence's step."""
        ledger = self.pipeline.ledger
        if ledger is None or not 0 <= position < ledger.attempts.height:
            return
        from tui_ledger.tui.screens.attempt_signals import SignalsAttemptScreen

        row = ledger.attempts.row(position, named=True)
        screen = SignalsAttemptScreen(
            row,
            0,
            1,
            lambda _: None,  # one attempt: `[` `]` say it is the first and the last
            self.paths,
            signals_of=lambda: self._signals_at(position),
            start_at_step=step,
        )
        self.push_screen(screen)

    def _signals_at(self, position: int) -> list[Signal]:
        """The grader's signals of the attempt at `position` of the ledger's frame."""
        audit = self.pipeline.audit if isinstance(self.pipeline, VouchedPipeline) else None
        return [] if audit is None else audit.signals_of(position)

    def action_toggle_matched(self) -> None:
        """m: compare only the tasks every group attempted, or every task again."""
        if not self.has_task_column or self.grouped_by_task:
            return
        if not self._local_only("Matched tasks only"):
            return
        self.matched_only = not self.matched_only
        self.pipeline.recompute()

    def action_budget(self) -> None:
        """B: a cap on each attempt's spend (`1m`; empty clears); every figure follows."""
        ledger = self.pipeline.ledger
        if ledger is None or not self._local_only("A budget"):
            return
        from tui_ledger.tui.screens.cap_screen import CLEAR, CapScreen

        def chosen(answer: object) -> None:
            if answer is None:
                return  # Esc: as it was
            cap = None if answer == CLEAR else answer
            if cap == self.cap:
                return
            self.cap = cap  # type: ignore[assignment]
            self.show_title()
            self.pipeline.recompute()

        self.push_screen(CapScreen(self.cap, list(ledger.attempts.columns)), chosen)

    def action_cap_sweep(self) -> None:
        """B on the Pareto chart: every token cap at once over the attempts on screen (the
        filter's, before any budget), drawn (`cap_chart`)."""
        snapshot = self.pipeline.snapshot
        if snapshot is None or not self._local_only("The cap sweep"):
            return
        from tui_ledger.accounting.cap_sweep import cap_sweep
        from tui_ledger.tui.screens.cap_chart import CapSweepScreen
        from tui_ledger.tui.snapshot import through

        rows = through(snapshot.matching.source, snapshot.condition)
        self.push_screen(CapSweepScreen(cap_sweep(rows, snapshot.comparison.by)))

    def _local_only(self, what: str) -> bool:
        """Whether `what` can run: on Spark, say that it is not computed there yet."""
        if not self.pipeline.on_spark:
            return True
        self.say(f"{what} is not computed on Spark yet; run without --spark on a local copy.")
        return False

    def _figures_final(self, what: str) -> bool:
        """Whether the figures are the whole file's; while only its first rows are read
        (`Pipeline.partial`), say that `what` waits for them."""
        if self.pipeline.partial is None:
            return True
        self.say(f"{what} waits for the whole file, which is still being read.", timeout=4)
        return False

    def action_per_task(self) -> None:
        """p: the focused group task by task."""
        snapshot = self.pipeline.snapshot
        if snapshot is None or not self.has_task_column or not self._figures_final("Per task"):
            return
        from tui_ledger.tui.audits import open_per_task

        self._per_task_waiting = open_per_task(self, snapshot, self._focus_label)

    def action_pareto(self) -> None:
        """c: pass rate against spend per accepted result, both views, with the frontier."""
        comparison = self.comparison
        if comparison is None or not self._figures_final("The chart"):
            return
        metric: ParetoMetric = self.headline
        from tui_ledger.tui.audits import open_pareto

        open_pareto(self, comparison, metric)

    def action_edit_filter(self) -> None:
        """/: into the filter box, cursor at the end."""
        box = self.filter_input
        # Focus now, not via `focus()` (which waits behind keys already queued): typing `/lean`
        # fast, or pasting it, must put `lean` in the box rather than run l, e, a, n as keys.
        self.screen.set_focus(box)
        box.cursor_position = len(box.value)

    def action_clear_filter(self) -> None:
        """Remove every filter term."""
        self.filter_input.value = ""

    def _add_term(self, negate: bool) -> None:
        cell = self.cell_under_cursor()
        if cell is not None:
            from tui_ledger.filtering.filter_terms import filter_term

            self._filter_bar.add_term(filter_term(*cell, exclude=negate))

    def action_filter_cell(self) -> None:
        """f: keep only attempts with the value under the cursor."""
        self._add_term(negate=False)

    def action_exclude_cell(self) -> None:
        """F: drop the attempts with the value under the cursor."""
        self._add_term(negate=True)

    def action_group_by(self) -> None:
        """b: pick the group-by column(s)."""
        ledger = self.pipeline.ledger
        if ledger is None:
            return
        from tui_ledger.tui.screens.screens import GroupByScreen

        def chosen(columns: list[str] | None) -> None:
            if columns:
                self.group_by(columns)

        self.push_screen(GroupByScreen(ledger.attempts.schema, self._by), chosen)

    def group_by(self, columns: Sequence[str]) -> None:
        """Group the summary by `columns` (what the `b` dialog chose), and recompute."""
        if tuple(columns) == self._by:
            return
        self._by = tuple(columns)
        self._focus_label = None
        if self.matched_only and "task" in self._by:
            self.matched_only = False
            self.say("Grouping by task: matched tasks only is off.", timeout=4)
        self.show_title()
        # Closing the dialog repaints the whole screen; a recompute in a worker at the same
        # moment waits for the GIL between its polars calls (1M rows: 70-90 ms for a 45 ms
        # compare). When the last one was quick, run it here instead, so the one repaint shows
        # the new groups.
        self.pipeline.recompute(inline=self.timings.recompute < INLINE_RECOMPUTE_SECONDS)

    def _sort_by_cursor(self, descending: bool) -> None:
        column = self.column_under_cursor()
        if column is None:
            return
        self._sort = (column, descending)
        self.pipeline.recompute(sort_only=True)

    def action_sort_ascending(self) -> None:
        """[: sort by the current column, ascending, missing values last."""
        self._sort_by_cursor(descending=False)

    def action_sort_descending(self) -> None:
        """]: sort by the current column, descending, missing values last."""
        self._sort_by_cursor(descending=True)

    def action_move(self, where: str) -> None:
        """Arrows, h j k l, PgUp/PgDn, gg/Home, G/End: move in the focused pane."""
        action = f"action_{_MOVES[where]}"
        groups = self.summary.groups_table
        if groups.has_focus:
            if where not in ("left", "right"):  # every column the pane shows fits its width
                getattr(groups, action)()
            return
        table = self.table
        if not table.has_focus and not self.filter_input.has_focus:
            table.focus()
        getattr(table, action)()

    def action_g_prefix(self) -> None:
        """g: the first half of gg."""
        now = time.monotonic()
        if now - self._last_g <= GG_SECONDS:
            self._last_g = 0.0
            self.action_move("top")
        else:
            self._last_g = now

    def action_open_attempt(self) -> None:
        """Enter, o: the attempt under the cursor, inside: its verdict and its steps."""
        row = self.table.current_row() if self.loaded else None
        if row is not None:
            from tui_ledger.tui.screens.attempt_signals import SignalsAttemptScreen

            table = self.table
            cap = self.cap.amount if self.cap is not None and self.cap.unit == "tokens" else None
            screen = SignalsAttemptScreen(
                row,
                table.cursor_row,
                table.row_count,
                self._walk,
                self.paths,
                int(cap) if cap else None,
                signals_of=lambda: self._signals_at(table.rows.position(table.cursor_row)),
            )
            self.push_screen(screen)

    def _walk(self, delta: int) -> tuple[dict[str, object], int, int] | None:
        """`[` / `]` on the attempt screen: the ledger's cursor moves `delta` rows in its view
        (the filter and order it shows); the attempt there, its row, the rows in the view."""
        table = self.table
        row = table.cursor_row + delta
        if not self.loaded or not 0 <= row < table.row_count:
            return None
        table.cursor_row = row
        found = table.current_row()
        return None if found is None else (found, row, table.row_count)

    def action_details(self) -> None:
        """i: the attempt's every field."""
        row = self.table.current_row() if self.loaded else None
        if row is not None:
            from tui_ledger.tui.screens.detail_screen import DetailScreen

            self.push_screen(DetailScreen.of_attempt(row, self.table.cursor_row))

    def action_warnings(self) -> None:
        """w: the warnings panel."""
        from tui_ledger.tui.screens.screens import WarningsScreen

        ledger = self.pipeline.ledger
        units = ledger.report.units if ledger is not None else None
        self.push_screen(WarningsScreen(self.collect_warnings(), units))

    def action_help(self) -> None:
        """? / F1: keys and views."""
        from tui_ledger.tui.screens.screens import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)
            return
        self.push_screen(HelpScreen())

    def action_reload(self) -> None:
        """r: read the file(s) again; filter, view and cursor stay."""
        self.pipeline.start_load(first=False)

    def action_export(self) -> None:
        """e: ask for file names, then write (asking before replacing anything)."""
        if not self._figures_final("Export"):
            return
        from tui_ledger.tui.exporting import export

        export(self)
