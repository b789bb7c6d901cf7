"""The per-task audit screen (`p`): one group task by task. The Pareto chart is `pareto_screen.py`.

`PerTaskScreen` shows what `per_task.per_task` computed for the group under focus: where its spend
went, which tasks it never passed and what those cost (`per_task.never_passed_spend`: the spend the
drop-failures view hides entirely). Every figure comes from the core; the screen only lays it
out, and every string from a file goes through `safe_text`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import polars as pl
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Label, Static

from tui_ledger.accounting.ledger import (
    LOWER_BOUND,
    RECORDED,
    VIEW_TITLES,
)
from tui_ledger.accounting.ledger import NOT_RECORDED as NOT_RECORDED_STATUS
from tui_ledger.accounting.per_task import never_passed_spend
from tui_ledger.text.labels import fit_labels
from tui_ledger.text.numbers import (
    MISSING,
    format_count,
    format_money,
    format_rate,
    format_tokens,
    format_usage_figure,
)
from tui_ledger.text.textsafe import safe_cell, safe_text
from tui_ledger.text.wording import plural
from tui_ledger.tui.screens.screens import _Dialog
from tui_ledger.tui.theme import DROP, KEEP, KEY_STYLE, MUTED

NEVER_PASSED_STYLE = DROP
TASK_LABEL = 36
"""Cells of a task's name in the per-task table."""
NOT_RECORDED_TEXT = "not recorded"
"""A figure whose usage was not recorded (SPEC.md section 1): never 0, never `≥ 0`."""

# --------------------------------------------------------------------------- per task


@dataclass(frozen=True)
class TaskChosen:
    """Enter on a task: the group's key values and the task, for the main table's filter."""

    keys: dict[str, Any]
    task: Any


@dataclass(frozen=True)
class _TaskColumn:
    """One column of the per-task table: the frame column, its heading, how a value reads."""

    name: str
    heading: str
    fmt: Callable[[dict[str, Any]], str]
    justify: str = "right"


def _per_accepted_tokens(row: dict[str, Any]) -> str:
    value = row["tokens_per_accepted_result"]
    if row.get("usage") == NOT_RECORDED_STATUS:
        return NOT_RECORDED_TEXT
    if value is None:
        return f"{MISSING} never passed" if row["never_passed"] else MISSING
    return format_tokens(value, lower_bound=bool(row["lower_bound"]))


def _total_tokens(row: dict[str, Any]) -> str:
    """A task's tokens: `not recorded`, `≥ N` when some usage is missing or a suspect 0."""
    usage = row.get("usage")
    return format_usage_figure(row["total_tokens"], usage, lower_bound=usage == LOWER_BOUND)


def _per_accepted_cost(row: dict[str, Any]) -> str:
    value = row["cost_per_accepted_result"]
    if value is None:
        if row["never_passed"]:
            return MISSING
        return f"{MISSING} unpriced"
    return format_money(value, lower_bound=bool(row["missing_cost"]))


def _total_cost(row: dict[str, Any]) -> str:
    value = row["total_cost"]
    if value is None:
        return f"{MISSING} unpriced"
    return format_money(value, lower_bound=bool(row["missing_cost"]))


def task_columns(frame: pl.DataFrame) -> list[_TaskColumn]:
    """The columns the per-task table shows for this frame (cost ones only with cost figures)."""
    columns = [
        _TaskColumn("task", "task", lambda row: safe_cell(row["task"], 36), "left"),
        _TaskColumn("attempts", "att", lambda row: format_count(row["attempts"])),
        _TaskColumn(
            "accepted", "acc", lambda row: f"{format_count(row['accepted'])}/{row['attempts']:,}"
        ),
        _TaskColumn("pass_rate", "pass", lambda row: format_rate(row["pass_rate"])),
        _TaskColumn("total_tokens", "tokens", _total_tokens),
        _TaskColumn("tokens_per_accepted_result", "per accepted", _per_accepted_tokens),
    ]
    if "total_cost" in frame.columns:
        columns += [
            _TaskColumn("total_cost", "cost", _total_cost),
            _TaskColumn("cost_per_accepted_result", "$ per accepted", _per_accepted_cost),
        ]
    if int(frame["missing_usage"].sum() or 0):
        columns.append(
            _TaskColumn("missing_usage", "no usage", lambda row: format_count(row["missing_usage"]))
        )
    return columns


class PerTaskScreen(_Dialog):
    """The focused group task by task (failures kept): spend, accepted, never-passed tasks.

    `[` `]` sort by the column under the cursor; Enter filters the main table to the group and
    the task under the cursor; Esc goes back.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,p", "close", "back", show=False),
        Binding("left_square_bracket", "sort(False)", "sort ascending", show=False),
        Binding("right_square_bracket", "sort(True)", "sort descending", show=False),
        # The ledger's own h j k l / g G move its table; here they move this one.
        Binding("j", "table('cursor_down')", "down", show=False),
        Binding("k", "table('cursor_up')", "up", show=False),
        Binding("h", "table('cursor_left')", "left", show=False),
        Binding("l", "table('cursor_right')", "right", show=False),
        Binding("g,home", "table('scroll_top')", "first row", show=False),
        Binding("G,end", "table('scroll_bottom')", "last row", show=False),
    ]

    def __init__(
        self,
        label: str,
        keys: dict[str, Any],
        tasks: pl.DataFrame,
        *,
        metric: str = "tokens",
    ) -> None:
        super().__init__()
        self._label = label
        self._keys = dict(keys)
        self._frame = tasks
        self._metric = metric
        self._columns = task_columns(tasks)
        default = "total_cost" if metric == "cost" and "total_cost" in tasks.columns else None
        self._sort: tuple[str, bool] = (default or "total_tokens", True)
        if default:
            self._frame = self._sorted(tasks, default, True)

    @property
    def frame(self) -> pl.DataFrame:
        """The per-task rows, in the order shown."""
        return self._frame

    @property
    def table(self) -> DataTable[Text]:
        """The per-task table."""
        return self.query_one("#per-task-table", DataTable)

    def compose(self) -> ComposeResult:
        """Totals and never-passed spend on top, the tasks below."""
        with Vertical(id="per-task-dialog", classes="dialog"):
            yield Static(self._totals_text(), id="per-task-totals")
            yield DataTable[Text](id="per-task-table", cursor_type="cell", zebra_stripes=True)
            yield Label(
                Text.assemble(
                    ("[ ]", KEY_STYLE),
                    (" sort by the column · ", MUTED),
                    ("Enter", KEY_STYLE),
                    (" filter the table to this group and task · ", MUTED),
                    ("Esc", KEY_STYLE),
                    (" back", MUTED),
                ),
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        """Title the frame, fill the table, focus it."""
        dialog = self.query_one("#per-task-dialog")
        dialog.border_title = Text.assemble(
            ("per task · ", "bold"),
            (safe_text(self._label), "bold"),
            (f"  {VIEW_TITLES['keep']} (every attempt counts)", KEEP),
        )
        self._fill()
        self.table.focus()

    def _totals_text(self) -> Text:
        frame = self._frame
        spend = never_passed_spend(frame)
        has_cost = "total_cost" in frame.columns
        tasks = frame.height
        text = Text()
        total_tokens = frame["total_tokens"].drop_nulls()
        usage = frame["usage"] if "usage" in frame.columns else None
        if usage is not None and tasks and bool((usage == NOT_RECORDED_STATUS).all()):
            tokens_text = f"tokens {NOT_RECORDED_TEXT}"  # not "not recorded tokens"
        else:
            tokens_text = (
                format_tokens(
                    int(total_tokens.sum()) if len(total_tokens) else None,
                    lower_bound=usage is not None and bool((usage != RECORDED).any()),
                )
                + " tokens"
            )
        text.append(plural(tasks, "task"), style="bold")
        text.append(f" · {plural(int(frame['attempts'].sum()), 'attempt')}", style="bold")
        text.append(f" · {format_count(int(frame['accepted'].sum()))} accepted · {tokens_text}")
        if has_cost:
            known = frame["total_cost"].drop_nulls()
            floor = bool(frame["missing_cost"].sum())
            total = format_money(float(known.sum()), lower_bound=floor) if len(known) else MISSING
            text.append(f" · {total}")
        text.append("\n")
        if spend.tasks == 0:
            text.append("✔ every task passed at least once", style=KEEP)
            return text
        text.append(
            f"✘ never passed: {plural(spend.tasks, 'task')}",
            style=f"bold {NEVER_PASSED_STYLE}",
        )
        text.append(
            f" · {plural(spend.attempts, 'attempt')} · "
            + (
                f"{format_tokens(spend.tokens, lower_bound=spend.tokens_lower_bound)} tokens"
                if spend.tokens is not None or usage is None
                else f"tokens {NOT_RECORDED_TEXT}"
            ),
            style=NEVER_PASSED_STYLE,
        )
        if has_cost:
            text.append(f" · {format_money(spend.cost)}", style=NEVER_PASSED_STYLE)
        text.append(
            "  the spend the drop-failures view hides entirely (no accepted result to divide by)",
            style=MUTED,
        )
        return text

    @staticmethod
    def _sorted(frame: pl.DataFrame, column: str, descending: bool) -> pl.DataFrame:
        return frame.sort(
            [column, "task"], descending=[descending, False], nulls_last=True, maintain_order=True
        )

    def _fill(self) -> None:
        table = self.table
        row_before, column_before = table.cursor_row, table.cursor_column
        table.clear(columns=True)
        sort_column, descending = self._sort
        for column in self._columns:
            arrow = (" ▼" if descending else " ▲") if column.name == sort_column else ""
            table.add_column(
                Text(column.heading + arrow, style="bold", justify=column.justify),  # type: ignore[arg-type]
                key=column.name,
            )
        # Task names cut together, so that no two read alike (`labels.fit_labels`).
        tasks = self._frame["task"].to_list()
        texts = [safe_text(task) for task in tasks]
        task_names = dict(zip(texts, fit_labels(texts, TASK_LABEL), strict=True))
        rows = []
        for row, task_text in zip(self._frame.iter_rows(named=True), texts, strict=True):
            style = NEVER_PASSED_STYLE if row["never_passed"] else ""
            cells = []
            for column in self._columns:
                text = task_names[task_text] if column.name == "task" else column.fmt(row)
                if column.name == "task" and row["never_passed"]:
                    text = "✘ " + text
                cells.append(Text(text, style=style, justify=column.justify))  # type: ignore[arg-type]
            rows.append(cells)
        table.add_rows(rows)
        if rows:
            table.move_cursor(
                row=min(row_before, len(rows) - 1),
                column=min(column_before, len(self._columns) - 1),
                animate=False,
            )

    def action_table(self, action: str) -> None:
        """Move the per-task table's cursor (h j k l, g/Home, G/End)."""
        table = self.table
        if action == "scroll_top":
            table.move_cursor(row=0)
        elif action == "scroll_bottom":
            table.move_cursor(row=max(table.row_count - 1, 0))
        else:
            getattr(table, f"action_{action}")()

    def action_sort(self, descending: bool) -> None:
        """[ / ]: sort by the column under the cursor (missing values last, ties by task)."""
        column = self._columns[self.table.cursor_column].name
        self._sort = (column, descending)
        self._frame = self._sorted(self._frame, column, descending)
        self._fill()

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        """Enter: filter the main table to this group and task."""
        event.stop()
        row = event.coordinate.row
        if 0 <= row < self._frame.height:
            self.dismiss(TaskChosen(self._keys, self._frame["task"][row]))
