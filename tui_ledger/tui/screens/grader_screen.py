"""The grader's audit (`a`): the attempts the audit flags, by group, with each signal's kind,
step and evidence (Enter opens the attempt at that step), then the grader's health: the tests no
attempt passed, the tasks every attempt failed or passed (they cannot separate the groups), and
the share of each task's attempts the harness failed before the agent acted.

Every figure is the core's (`grader.audit_ledger`, `grader.grader_health`,
`grader.ranking_change`); this screen lays it out, and every string from a file goes through
`safe_text`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

import polars as pl
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Label, Static

from tui_ledger.accounting.ledger import DEFAULT_BY, group_labels
from tui_ledger.text.textsafe import safe_text
from tui_ledger.text.wording import listing, plural
from tui_ledger.tui.screens.screens import _Dialog
from tui_ledger.tui.theme import CALLOUT_STYLE, ERROR_STYLE, KEY_STYLE, LABEL_STYLE, MUTED

if TYPE_CHECKING:
    from tui_ledger.grader import Audit, Health
    from tui_ledger.grader.ranking_change import RankingChange

OpenAt = Callable[[int, "int | None"], None]
"""Open the attempt at this position of the ledger's frame, at this step (None: the top)."""

_LISTED = 12
"""Tests and tasks listed by name in each part of the health (the rest counted)."""
_EVIDENCE = 100
"""Characters of evidence in the table (the attempt screen shows it whole)."""


def flagged_rows(
    attempts: pl.DataFrame, audit: Audit, by: Sequence[str] = DEFAULT_BY
) -> list[tuple[int, int | None, list[str]]]:
    """(position, step, cells) for each signal, by group then position: group, task, accepted
    as graded, kind, step, evidence."""
    signals = audit.signals
    if signals.height == 0:
        return []
    keys = [name for name in by if name in attempts.columns] or ["workflow"]
    picked = attempts[signals.get_column("row")]
    labels = group_labels(picked.select(keys), keys)
    tasks = (
        picked.get_column("task").cast(pl.String).to_list()
        if "task" in picked.columns
        else [None] * picked.height
    )
    rows = []
    for label, task, signal in zip(labels, tasks, signals.iter_rows(named=True), strict=True):
        position, step = int(signal["row"]), signal["step"]
        accepted = "accepted" if position in audit.accepted_rows else "not accepted"
        evidence = safe_text(signal["evidence"] or "")
        if len(evidence) > _EVIDENCE:
            evidence = evidence[: _EVIDENCE - 1] + "…"
        cells = [
            safe_text(label),
            safe_text(task) if task is not None else "—",
            accepted,
            signal["kind"],
            "—" if step is None else str(step),
            evidence,
        ]
        rows.append((position, step, cells))
    rows.sort(key=lambda item: (item[2][0], item[0]))
    return rows


def summary_text(audit: Audit, ranking: RankingChange | None) -> Text:
    """What the audit read and found, and whether the ranking changes as vouched."""
    text = Text()
    text.append(plural(audit.rows, "attempt"), style="bold")
    text.append(" audited · ", style=LABEL_STYLE)
    text.append(f"{plural(len(audit.flagged()), 'attempt')} flagged", style="bold")
    text.append(" · ", style=LABEL_STYLE)
    unvouched = len(audit.unvouched)
    text.append(
        f"{plural(unvouched, 'acceptance')} the grader cannot vouch for",
        style=ERROR_STYLE if unvouched else "",
    )
    if audit.tampered:
        text.append(f" ({len(audit.tampered):,} tampering)", style=ERROR_STYLE)
    text.append(f" · logs read: {audit.read:,}", style=LABEL_STYLE)
    if audit.unreadable:
        text.append(f" · {plural(len(audit.unreadable), 'log')} unreadable", style=ERROR_STYLE)
    if audit.note:
        text.append(f"\n{audit.note}", style=f"italic {MUTED}")
    if ranking is not None and ranking.unvouched:
        text.append("\n» ", style=CALLOUT_STYLE)
        text.append(ranking.sentence, style=CALLOUT_STYLE if ranking.changes else "")
    return text


def health_text(health: Health) -> Text:
    """The grader's health, part by part (`grader.grader_health`)."""
    text = Text()
    text.append("The grader's health", style="bold")
    text.append(
        f" · over {plural(health.tasks, 'task')} attempted by two or more groups",
        style=LABEL_STYLE,
    )
    tests = health.tests_never_passed
    _heading(text, "Tests no attempt passed", tests.height)
    for row in tests.head(_LISTED).iter_rows(named=True):
        text.append(f"\n  {safe_text(row['task'])} · {safe_text(row['test'])}")
        text.append(f"  ({plural(row['attempts'], 'attempt')} ran it)", style=LABEL_STYLE)
    if tests.height > _LISTED:
        text.append(f"\n  and {tests.height - _LISTED:,} more", style=LABEL_STYLE)
    for title, frame in (
        ("Tasks every attempt failed", health.tasks_all_failed),
        ("Tasks every attempt passed (they cannot separate the groups)", health.tasks_all_passed),
    ):
        _heading(text, title, frame.height)
        if frame.height:
            names = [
                f"{safe_text(task)} ({attempts:,})"
                for task, attempts in frame.select("task", "attempts").iter_rows()
            ]
            text.append("\n  " + listing(names, limit=_LISTED, joiner="and", total=frame.height))
    infrastructure = health.infrastructure
    _heading(text, "The harness failed before the agent acted", infrastructure.height)
    for row in infrastructure.head(_LISTED).iter_rows(named=True):
        share = f"{row['share']:.0%}"
        text.append(
            f"\n  {safe_text(row['task'])}: {row['infrastructure_errors']:,} of "
            f"{plural(row['attempts'], 'attempt')} ({share}), failures the harness's"
        )
    if infrastructure.height > _LISTED:
        text.append(f"\n  and {infrastructure.height - _LISTED:,} more", style=LABEL_STYLE)
    text.append(
        "\n\nA signal is a reason to look, not a verdict: the rules read the steps' writes, "
        "history lookups and verdicts; an agent can cheat without touching a file they see.",
        style=MUTED,
    )
    return text


def _heading(text: Text, title: str, count: int) -> None:
    text.append(f"\n\n{title}: ", style="bold")
    text.append("none" if not count else f"{count:,}", style=LABEL_STYLE if not count else "")


class GraderScreen(_Dialog):
    """The grader's audit: flagged attempts by group (Enter opens one at its step), health."""

    DEFAULT_CSS = """
    #grader-dialog { width: 160; max-width: 98%; height: 94%; max-height: 94%; }
    #grader-summary { height: auto; margin: 0 0 1 0; }
    #grader-flagged { height: 2fr; min-height: 4; background: $surface; }
    #grader-health-scroll { height: 1fr; min-height: 3; margin: 1 0 0 0; }
    #grader-health { height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,a", "close", "back", show=False),
        Binding("j", "table('cursor_down')", "down", show=False),
        Binding("k", "table('cursor_up')", "up", show=False),
        Binding("g,home", "table('scroll_top')", "first row", show=False),
        Binding("G,end", "table('scroll_bottom')", "last row", show=False),
    ]

    COLUMNS = ("group", "task", "as graded", "signal", "step", "evidence")

    def __init__(
        self,
        attempts: pl.DataFrame,
        audit: Audit,
        health: Health,
        ranking: RankingChange | None,
        open_at: OpenAt,
        by: Sequence[str] = DEFAULT_BY,
    ) -> None:
        super().__init__()
        self.audit = audit
        self.health = health
        self.ranking = ranking
        self._open_at = open_at
        self.rows = flagged_rows(attempts, audit, by)
        """(position, step, cells) of each signal, as the table lists them."""
        self._health = health_text(health)

    @property
    def table(self) -> DataTable[Text]:
        """The flagged attempts' table."""
        return self.query_one("#grader-flagged", DataTable)

    def compose(self) -> ComposeResult:
        """What the audit found on top, the flagged attempts, the health below."""
        with Vertical(id="grader-dialog", classes="dialog"):
            yield Static(summary_text(self.audit, self.ranking), id="grader-summary")
            yield DataTable[Text](id="grader-flagged", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="grader-health-scroll"):
                yield Static(self._health, id="grader-health")
            yield Label(
                Text.assemble(
                    ("Enter", KEY_STYLE),
                    (" open the attempt at its signal's step · ", MUTED),
                    ("Tab", KEY_STYLE),
                    (" the health · ", MUTED),
                    ("Esc", KEY_STYLE),
                    (" back", MUTED),
                ),
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        """Title the frame, fill the table, focus it."""
        dialog = self.query_one("#grader-dialog")
        dialog.border_title = Text("the grader's audit · can it vouch for each result?")
        table = self.table
        table.add_columns(*self.COLUMNS)
        for number, (_, _, cells) in enumerate(self.rows):
            styled = [Text(cell) for cell in cells]
            styled[3].stylize(ERROR_STYLE if cells[2] == "accepted" else LABEL_STYLE)
            table.add_row(*styled, key=str(number))
        if not self.rows:
            table.display = False
            summary = self.query_one("#grader-summary", Static)
            summary.update(
                summary_text(self.audit, self.ranking).append(
                    "\n\nNo attempt is flagged.", style="bold"
                )
            )
        table.focus()

    def action_table(self, action: str) -> None:
        """j k g G: move in the table."""
        getattr(self.table, f"action_{action}")()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a flagged attempt: its screen, at its signal's step."""
        event.stop()
        if event.row_key.value is None:
            return
        position, step, _ = self.rows[int(event.row_key.value)]
        self._open_at(position, step)
