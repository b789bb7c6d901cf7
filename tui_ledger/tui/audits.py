"""The app's two audit views: `p`, the focused group task by task, and `c`, the Pareto chart.

The per-task figures are computed in a worker (`Pipeline.per_task`: `per_task.per_task`, or the
engine on Spark), then shown in `audit_screens.PerTaskScreen`; choosing a task there filters the
attempts table to it. The chart
draws the comparison on screen (`pareto_screen.ParetoScreen`), and `s` in it saves it as SVG
(`exporting.save_chart`). Imported when first used, not with the app.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import polars as pl
from textual.worker import get_current_worker

from tui_ledger.accounting.ledger import Comparison, ParetoMetric
from tui_ledger.filtering.filter_terms import filter_term
from tui_ledger.tui.exporting import ExportHost, save_chart
from tui_ledger.tui.messages import PerTaskReady
from tui_ledger.tui.screens.audit_screens import PerTaskScreen, TaskChosen
from tui_ledger.tui.screens.pareto_screen import ParetoScreen
from tui_ledger.tui.snapshot import Snapshot

if TYPE_CHECKING:
    from tui_ledger.accounting.ledger import Metric
    from tui_ledger.tui.widgets.attempts_table import AttemptsTable
    from tui_ledger.tui.widgets.filter_bar import FilterInput
    from tui_ledger.tui.widgets.summary_pane import SummaryPane


class AuditHost(ExportHost, Protocol):
    """What the audit views need of the app (`AuditHost` is one): the exports' needs (`s`
    saves the chart), the panes a chosen task filters, and the headline metric."""

    @property
    def summary(self) -> SummaryPane: ...
    @property
    def table(self) -> AttemptsTable: ...
    @property
    def filter_input(self) -> FilterInput: ...
    @property
    def headline(self) -> Metric: ...
    @property
    def on_main_screen(self) -> bool: ...


def open_per_task(app: AuditHost, snapshot: Snapshot, label: str | None) -> bool:
    """Show the snapshot's group `label` (else the one the summary's cursor is on, else the
    first) task by task, once its figures are computed: the worker posts `PerTaskReady`, which
    the app hands to `show_per_task`. False when there is no group to show."""
    label = label or app.summary.selected_label
    labels = snapshot.comparison.labels
    if label not in labels:
        label = labels[0] if labels else None
    if label is None:
        app.say("No group to show.", title="per task", timeout=3)
        return False
    keys = snapshot.comparison.keep.select(snapshot.comparison.key_columns).row(labels.index(label))
    app.run_worker(
        partial(_per_task_worker, app, snapshot, label, tuple(keys)),
        name="_per_task_worker",
        group="per-task",
        exclusive=True,
        thread=True,
        exit_on_error=False,
    )
    return True


def _per_task_worker(app: AuditHost, snapshot: Snapshot, label: str, keys: tuple[Any, ...]) -> None:
    by = snapshot.comparison.by
    named = dict(zip(by, keys, strict=True))
    try:
        tasks = app.pipeline.per_task(snapshot, named)
    except (pl.exceptions.PolarsError, ValueError) as error:
        app.post_message(PerTaskReady(label, named, None, str(error)))
        return
    if not get_current_worker().is_cancelled:
        app.post_message(PerTaskReady(label, named, tasks))


def show_per_task(app: AuditHost, ready: PerTaskReady) -> None:
    """Open the per-task screen (unless a dialog opened meanwhile); a task chosen there is
    added to the filter, with the group's own keys."""
    if ready.error is not None or ready.tasks is None:
        app.say(ready.error or "", title="per task", severity="error")
        return
    if not app.on_main_screen:
        return

    def chosen(choice: TaskChosen | None) -> None:
        if choice is None:
            return
        box = app.filter_input
        terms = [filter_term(column, value) for column, value in choice.keys.items()]
        terms.append(filter_term("task", choice.task))
        present = box.value.split()
        added = [term for term in terms if term not in present]
        box.value = " ".join([box.value.strip(), *added]).strip()
        app.table.focus()

    screen = PerTaskScreen(ready.label, ready.keys, ready.tasks, metric=app.headline)
    app.push_screen(screen, chosen)


def open_pareto(app: AuditHost, comparison: Comparison, metric: ParetoMetric) -> None:
    """Show the Pareto chart of the comparison on screen."""
    app.push_screen(ParetoScreen(comparison, metric, save=partial(save_chart, app)))
