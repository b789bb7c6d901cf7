"""The app's state as the commands and the parts read it: `ShellState` holds the reactive
settings (view, headline metric, matched tasks only, the budget), the components by reference,
and answers what the commands read (`commands.CommandContext`: loaded, on which screen, the
filter, the cell under the cursor, the warnings' counts...) and which actions can run now
(`check_action`). `app_shell.LedgerShell` builds on it with the layout, the pipeline's requests
and the drawing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App
from textual.command import CommandPalette
from textual.reactive import var

from tui_ledger.accounting.ledger import Comparison, Metric, View
from tui_ledger.tui import commands
from tui_ledger.tui.pipeline import Pipeline
from tui_ledger.tui.widgets.attempts_table import AttemptsTable
from tui_ledger.tui.widgets.filter_bar import FilterBar, FilterInput
from tui_ledger.tui.widgets.summary_pane import SummaryPane

# Types only: the modules are imported on first use (the first frame must not wait for them).
if TYPE_CHECKING:
    from tui_ledger.accounting.cap import Cap
    from tui_ledger.accounting.checks import Check
    from tui_ledger.findings import Finding
    from tui_ledger.load import Ledger


class ShellState(App[int]):
    """The app's settings and what the commands read of them (no drawing: `LedgerShell`)."""

    view: var[View] = var("keep", init=False)
    """KEEP FAILURES (every attempt counts) or DROP FAILURES (only accepted ones); bound down
    to the header's badge, the table and the summary. No recompute: the comparison holds both."""
    metric: var[Metric] = var("tokens", init=False)
    """The summary's headline metric asked for (per accepted result), bound down to the
    summary; `headline` is the one shown (tokens when there are no cost figures)."""
    matched_only: var[bool] = var(False, init=False)
    """Whether only the tasks every group attempted are compared (the header says so)."""
    cap: Cap | None = None
    """The budget (`B`): every figure is as if each attempt had stopped at it (header: CAP)."""

    pipeline: Pipeline
    """The data on screen and the work that produces it (set by `LedgerShell`)."""
    _by: tuple[str, ...]
    _filter_bar: FilterBar
    _table: AttemptsTable
    _summary: SummaryPane

    # ------------------------------------------------------------------ widgets

    @property
    def table(self) -> AttemptsTable:
        """The attempts table."""
        return self._table

    @property
    def summary(self) -> SummaryPane:
        """The summary pane."""
        return self._summary

    @property
    def filter_input(self) -> FilterInput:
        """The filter box."""
        return self._filter_bar.input

    # ------------------------------------------------------------------ state for commands

    @property
    def loaded(self) -> bool:
        """Whether attempts are on screen."""
        return self.pipeline.snapshot is not None

    @property
    def leaving(self) -> bool:
        """The app is shutting down (`exit`, or a test's `run_test` ending). Textual removes the
        screens before it stops handling messages, so a worker's report or a watcher's callback
        can arrive when the panes are gone: what arrives then is dropped, never drawn."""
        return not self.is_running

    @property
    def on_main_screen(self) -> bool:
        """No dialog is open over the ledger (the command palette does not count)."""
        return all(isinstance(screen, CommandPalette) for screen in self.screen_stack[1:])

    @property
    def on_attempt_screen(self) -> bool:
        """The attempt screen is on top (the command palette does not count)."""
        screens = [s for s in self.screen_stack if not isinstance(s, CommandPalette)]
        return bool(screens) and getattr(screens[-1], "is_attempt_screen", False)

    @property
    def by(self) -> tuple[str, ...]:
        """The summary's group-by columns."""
        return self._by

    @property
    def filter_text(self) -> str:
        """The filter as typed."""
        return self._filter_bar.text

    @property
    def filtered(self) -> bool:
        """Whether a filter narrows the attempts."""
        return self._filter_bar.expression is not None

    @property
    def filter_focused(self) -> bool:
        """Whether the filter box has the keyboard."""
        return self.filter_input.has_focus

    @property
    def comparison(self) -> Comparison | None:
        """The comparison on screen."""
        snapshot = self.pipeline.snapshot
        return snapshot.comparison if snapshot else None

    @property
    def ledger(self) -> Ledger | None:
        """The loaded ledger (its attempts priced, when a price table was given)."""
        return self.pipeline.ledger

    @property
    def has_cost(self) -> bool:
        """Whether the comparison on screen has cost figures."""
        comparison = self.comparison
        return comparison is not None and comparison.has_cost

    @property
    def headline(self) -> Metric:
        """The summary's headline metric as shown (tokens when there are no cost figures)."""
        return self.metric if self.has_cost else "tokens"

    @property
    def accepted(self) -> str:
        """What counts as accepted: "graded" (the verdicts as given) or "vouched" (`v`)."""
        return getattr(self.pipeline, "accepted", "graded")

    @property
    def has_task_column(self) -> bool:
        """Whether the attempts have a task column."""
        ledger = self.pipeline.ledger
        return ledger is not None and "task" in ledger.attempts.columns

    @property
    def grouped_by_task(self) -> bool:
        """Whether the summary groups by task."""
        return "task" in self._by

    @property
    def checks(self) -> list[Check] | None:
        """The fair-comparison checks of the attempts on screen (None until computed)."""
        return self.pipeline.checks

    def cell_under_cursor(self) -> tuple[str, object] | None:
        """(column, value) under the attempts table's cursor."""
        if not self.loaded:
            return None
        return self.table.current_value()

    def column_under_cursor(self) -> str | None:
        """The attempts table's current column name."""
        if not self.loaded:
            return None
        names = self.table.column_names
        column = self.table.cursor_column
        return names[column] if 0 <= column < len(names) else None

    def collect_warnings(self) -> list[Finding]:
        """Every warning the warnings panel lists (`Pipeline.warnings`)."""
        return self.pipeline.warnings()

    def warning_count(self) -> int:
        """How many warnings there are (informational notes not counted)."""
        from tui_ledger.accounting.checks import is_warning

        return sum(1 for item in self.collect_warnings() if is_warning(item))

    def note_count(self) -> int:
        """How many informational notes the warnings panel lists besides the warnings."""
        from tui_ledger.accounting.checks import is_warning

        return sum(1 for item in self.collect_warnings() if not is_warning(item))

    def _keys_hint(self) -> str:
        """The audit keys that can run now, for the line under the summary (the footer is full)."""
        parts = []
        if self.has_task_column:
            parts.append("p per task")
        parts.append("c chart")
        if self.has_task_column and not self.grouped_by_task:
            parts.append("m matched tasks" + (" (on)" if self.matched_only else ""))
        if self.has_cost:
            parts.append("$ tokens ⇄ cost")
        return " · ".join(parts)

    def run_action_now(self, action: str) -> None:
        """Run a registry action (the command palette's callback)."""
        self.call_later(self.run_action, action)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Registry predicates decide; an unavailable command is greyed out, not hidden (but
        on the attempt screen the ledger's keys are hidden: its footer is its own)."""
        if commands.is_available(self, action):
            return True
        attempt_open = any(getattr(s, "is_attempt_screen", False) for s in self.screen_stack)
        return False if attempt_open else None
