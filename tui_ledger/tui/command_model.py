"""What a command of the registry is (`Command`) and when it makes sense: the app as the
commands read it (the small `CommandContext` protocol, so nothing here imports the app), the
predicates that grey a command out, the palette's titles for the moment, and the scopes and help
sections a command belongs to. The registry itself, and what is derived from it (bindings, help,
palette), is `commands.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from tui_ledger.accounting.ledger import VIEW_GLOSSES, VIEW_TITLES
from tui_ledger.text.textsafe import safe_text


class CommandContext(Protocol):
    """What the predicates and palette titles read from the app."""

    @property
    def loaded(self) -> bool:
        """Whether attempts are loaded (most commands need them)."""

    @property
    def on_main_screen(self) -> bool:
        """Whether no dialog is open over the ledger."""

    @property
    def view(self) -> str:
        """The current view: "keep" or "drop"."""

    @property
    def filter_text(self) -> str:
        """The filter as typed."""

    @property
    def filter_focused(self) -> bool:
        """Whether the filter box has the keyboard."""

    @property
    def on_attempt_screen(self) -> bool:
        """Whether the attempt screen (an attempt's steps) is the one on top."""

    def cell_under_cursor(self) -> tuple[str, object] | None:
        """(column, value) of the attempts table's cursor, if any."""

    def column_under_cursor(self) -> str | None:
        """The attempts table's current column, if any."""

    def warning_count(self) -> int:
        """How many warnings the warnings panel would list."""

    @property
    def has_cost(self) -> bool:
        """Whether the attempts carry cost figures (prices, or a provider cost column)."""

    @property
    def metric(self) -> str:
        """The summary's headline metric: "tokens" or "cost" (per accepted result)."""

    @property
    def matched_only(self) -> bool:
        """Whether the comparison keeps only the tasks every group attempted."""

    @property
    def has_task_column(self) -> bool:
        """Whether the attempts have a `task` column."""

    @property
    def grouped_by_task(self) -> bool:
        """Whether `task` is one of the group-by columns."""

    def run_action_now(self, action: str) -> None:
        """Run an app action by name (used by the command palette)."""


Predicate = Callable[[CommandContext], bool]
Title = Callable[[CommandContext], str]


def always(_: CommandContext) -> bool:
    return True


def on_main(context: CommandContext) -> bool:
    # Not behind a dialog: there the keys belong to the dialog (or to nothing), never to the
    # hidden ledger's table.
    return context.on_main_screen


def on_attempt(context: CommandContext) -> bool:
    return context.on_attempt_screen


def ready(context: CommandContext) -> bool:
    return context.loaded and context.on_main_screen


def has_cell(context: CommandContext) -> bool:
    return ready(context) and context.cell_under_cursor() is not None


def has_column(context: CommandContext) -> bool:
    return ready(context) and context.column_under_cursor() is not None


def can_edit_filter(context: CommandContext) -> bool:
    # Not while typing in the box: there, `/` is a character of the filter (a regex, a path).
    return ready(context) and not context.filter_focused


def has_filter(context: CommandContext) -> bool:
    return ready(context) and bool(context.filter_text.strip())


def has_cost(context: CommandContext) -> bool:
    return ready(context) and context.has_cost


def can_match_tasks(context: CommandContext) -> bool:
    # Matching needs tasks to match on, and makes no sense when each group is one task.
    return ready(context) and context.has_task_column and not context.grouped_by_task


def has_tasks(context: CommandContext) -> bool:
    return ready(context) and context.has_task_column


@dataclass(frozen=True)
class Command:
    """One thing the user can do: its keys, the app action it runs, and how it is explained."""

    action: str
    """The app action (`action_<name>` on `LedgerApp`)."""
    keys: str
    """Textual key names, comma separated; empty for a palette-only command."""
    name: str
    """A few words, for the footer and the palette."""
    help: str
    """One sentence for the help screen and the palette."""
    section: str
    """Help screen heading."""
    display: str = ""
    """How the keys read in the help screen (defaults to the footer's rendering)."""
    footer: bool = False
    """Shown in the footer."""
    footer_key: str | None = None
    """How the footer shows the key, where it differs from Textual's (`[ ]` for the sort pair)."""
    available: Predicate = ready
    """Whether it can run now (greys it out in the footer, hides it from the palette)."""
    palette: bool = True
    """Offered in the command palette."""
    title: Title | None = None
    """The palette's title for the moment; defaults to `name`."""
    priority: bool = False
    """Bind with priority (runs even when a focused widget would take the key)."""
    scope: str = "ledger"
    """Where the keys are bound: the app (`LEDGER_SCOPE`) or the attempt screen
    (`ATTEMPT_SCOPE`, whose actions are the screen's)."""

    def palette_title(self, context: CommandContext) -> str:
        """The name the palette shows now."""
        return self.title(context) if self.title is not None else self.name.capitalize()


def toggle_title(context: CommandContext) -> str:
    other = "drop" if context.view == "keep" else "keep"
    return f"Show {VIEW_TITLES[other]} ({VIEW_GLOSSES[other]})"


def metric_title(context: CommandContext) -> str:
    if context.metric == "cost":
        return "Headline: tokens per accepted result (instead of cost)"
    return "Headline: cost per accepted result (instead of tokens)"


def matched_title(context: CommandContext) -> str:
    if context.matched_only:
        return "Compare every task again (matched tasks only is on)"
    return "Compare matched tasks only (tasks every group attempted)"


def cell_term_title(negate: bool) -> Title:
    def title(context: CommandContext) -> str:
        cell = context.cell_under_cursor()
        if cell is None:
            return "Exclude the value under the cursor" if negate else "Filter to the value"
        column, value = cell
        shown = "—" if value is None else safe_text(value)
        if len(shown) > 30:
            shown = shown[:29] + "…"
        return f"{'Exclude' if negate else 'Filter to'} {safe_text(column)} = {shown}"

    return title


def sort_title(descending: bool) -> Title:
    def title(context: CommandContext) -> str:
        column = context.column_under_cursor() or "the current column"
        return f"Sort by {safe_text(column)}, {'descending' if descending else 'ascending'}"

    return title


LEDGER_SCOPE = "ledger"
ATTEMPT_SCOPE = "attempt"

MOVE = "Move"
VIEW = "View and filter"
AUDIT = "Audit"
DATA = "Data"
APP = "App"
ATTEMPT = "The attempt screen (Enter on an attempt)"


def fixed_title(title: str) -> Title:
    return lambda _: title
