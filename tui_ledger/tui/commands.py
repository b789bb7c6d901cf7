"""The one registry of commands: key, action, name, help text and when each makes sense.

VisiData keeps one command table; Posting gives each binding an id. Here `COMMANDS` is that
table, and everything the user can learn about keys is derived from it:

- `bindings()` builds the app's `BINDINGS` (and so the footer, via `Binding.group` and `show`);
- `LedgerApp.check_action` asks each command's `available` predicate, so the footer greys out
  what cannot run now;
- the help screen lists every entry, grouped by `section`;
- `LedgerCommands` offers the available ones in the command palette, titled for the moment
  ("Show DROP FAILURES (the trap)", "Filter to workflow = lean", ...).

Predicates receive the app through the small `CommandContext` protocol, so this module does not
import the app (which imports this module).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Protocol, TypeGuard

from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher

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


def _always(_: CommandContext) -> bool:
    return True


def _on_main_screen(context: CommandContext) -> bool:
    # Not behind a dialog: there the keys belong to the dialog (or to nothing), never to the
    # hidden ledger's table.
    return context.on_main_screen


def _on_attempt_screen(context: CommandContext) -> bool:
    return context.on_attempt_screen


def _ready(context: CommandContext) -> bool:
    return context.loaded and context.on_main_screen


def _has_cell(context: CommandContext) -> bool:
    return _ready(context) and context.cell_under_cursor() is not None


def _has_column(context: CommandContext) -> bool:
    return _ready(context) and context.column_under_cursor() is not None


def _can_edit_filter(context: CommandContext) -> bool:
    # Not while typing in the box: there, `/` is a character of the filter (a regex, a path).
    return _ready(context) and not context.filter_focused


def _has_filter(context: CommandContext) -> bool:
    return _ready(context) and bool(context.filter_text.strip())


def _has_cost(context: CommandContext) -> bool:
    return _ready(context) and context.has_cost


def _can_match_tasks(context: CommandContext) -> bool:
    # Matching needs tasks to match on, and makes no sense when each group is one task.
    return _ready(context) and context.has_task_column and not context.grouped_by_task


def _has_tasks(context: CommandContext) -> bool:
    return _ready(context) and context.has_task_column


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
    available: Predicate = _ready
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


def _toggle_title(context: CommandContext) -> str:
    other = "drop" if context.view == "keep" else "keep"
    return f"Show {VIEW_TITLES[other]} ({VIEW_GLOSSES[other]})"


def _metric_title(context: CommandContext) -> str:
    if context.metric == "cost":
        return "Headline: tokens per accepted result (instead of cost)"
    return "Headline: cost per accepted result (instead of tokens)"


def _matched_title(context: CommandContext) -> str:
    if context.matched_only:
        return "Compare every task again (matched tasks only is on)"
    return "Compare matched tasks only (tasks every group attempted)"


def _cell_term_title(negate: bool) -> Title:
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


def _sort_title(descending: bool) -> Title:
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

COMMANDS: tuple[Command, ...] = (
    Command(
        "toggle_view",
        "t",
        "toggle view",
        "Switch between KEEP FAILURES (every attempt counts) and DROP FAILURES (only accepted "
        "attempts count, the trap).",
        VIEW,
        footer=True,
        title=_toggle_title,
    ),
    Command(
        "edit_filter",
        "slash",
        "filter",
        "Edit the filter; the table and summary follow as you type; Enter returns to the table, "
        "Esc clears the filter.",
        VIEW,
        display="/",
        footer=True,
        available=_can_edit_filter,
        title=lambda _: "Edit the filter",
        # Priority: the app takes `/` before the table sees it and moves focus at once, so keys
        # typed right after it (`/lean` typed fast, or pasted) land in the box, not on the table.
        priority=True,
    ),
    Command(
        "filter_cell",
        "f",
        "filter to cell",
        "Add a filter term matching exactly the value under the cursor.",
        VIEW,
        footer=True,
        available=_has_cell,
        title=_cell_term_title(negate=False),
    ),
    Command(
        "exclude_cell",
        "F",
        "exclude cell",
        "Add a filter term excluding the value under the cursor.",
        VIEW,
        available=_has_cell,
        title=_cell_term_title(negate=True),
    ),
    Command(
        "clear_filter",
        "",
        "clear filter",
        "Remove every filter term.",
        VIEW,
        available=_has_filter,
    ),
    Command(
        "group_by",
        "b",
        "group by",
        "Choose the column(s) the summary groups by (several make one group per combination).",
        VIEW,
        footer=True,
        title=lambda _: "Group the summary by…",
    ),
    Command(
        "sort_ascending",
        "left_square_bracket",
        "sort",
        "Sort the attempts by the current column, ascending (missing values last).",
        VIEW,
        display="[",
        footer=True,
        footer_key="[ ]",
        available=_has_column,
        title=_sort_title(descending=False),
    ),
    Command(
        "sort_descending",
        "right_square_bracket",
        "sort",
        "Sort the attempts by the current column, descending (missing values last).",
        VIEW,
        display="]",
        available=_has_column,
        title=_sort_title(descending=True),
    ),
    Command(
        "toggle_metric",
        "dollar_sign",
        "tokens ⇄ cost",
        "Headline: tokens ⇄ cost per accepted result (needs prices).",
        AUDIT,
        display="$",
        available=_has_cost,
        title=_metric_title,
    ),
    Command(
        "toggle_matched",
        "m",
        "matched tasks",
        "Compare only the tasks every group attempted (again: all).",
        AUDIT,
        available=_can_match_tasks,
        title=_matched_title,
    ),
    Command(
        "budget",
        "B",
        "budget",
        "A budget: stop every attempt at N tokens (1m, Enter; empty clears; $2.50 with "
        "prices); every figure follows, the header says CAP.",
        VIEW,
        title=lambda _: "Budget: replay a cap on each attempt's tokens",
    ),
    Command(
        "toggle_accepted",
        "v",
        "graded ⇄ vouched",
        "Accepted as graded ⇄ as vouched by the grader's audit.",
        AUDIT,
        title=lambda context: (
            "Accepted as graded again (the verdicts as given)"
            if getattr(context, "accepted", "graded") == "vouched"
            else "Accepted as vouched: only results the grader can vouch for"
        ),
    ),
    Command(
        "grader_audit",
        "a",
        "grader's audit",
        "The grader's audit: flagged attempts, its health.",
        AUDIT,
        title=lambda _: "The grader's audit: flagged attempts and the grader's health",
    ),
    Command(
        "per_task",
        "p",
        "per task",
        "The focused group task by task, never-passed tasks and their spend; Enter filters "
        "to a task.",
        AUDIT,
        available=_has_tasks,
        title=lambda _: "Per task: where the focused group's spend went",
    ),
    Command(
        "pareto",
        "c",
        "chart",
        "Chart: pass rate vs spend, the frontier; s saves SVG.",
        AUDIT,
        title=lambda _: "Chart: pass rate vs spend per accepted result (Pareto)",
    ),
    Command(
        "open_attempt",
        "enter,o",
        "open",
        "Open the attempt under the cursor: its verdict, its steps.",
        DATA,
        display="Enter  o",
        footer=True,
        available=_has_cell,
        title=lambda _: "Open the attempt: its verdict and steps",
    ),
    Command(
        "details",
        "i",
        "fields",
        "Show every field of the attempt under the cursor.",
        DATA,
        available=_has_cell,
        title=lambda _: "Show the attempt's every field",
    ),
    Command(
        "warnings",
        "w",
        "warnings",
        "List the load warnings and fair-comparison checks.",
        DATA,
        footer=True,
        title=lambda context: f"Show the warnings ({context.warning_count()})",
    ),
    Command(
        "export",
        "e",
        "export",
        "Write the summary (.md, .csv, .json) and the filtered attempts (.csv, .parquet, "
        ".jsonl); never overwrites without asking.",
        DATA,
        footer=True,
        title=lambda _: "Export the summary and the filtered attempts",
    ),
    Command(
        "reload",
        "r",
        "reload",
        "Read the file(s) again, keeping the filter, the view and the cursor.",
        DATA,
        title=lambda _: "Reload the file(s)",
    ),
    Command(
        "help",
        "question_mark,f1",
        "help",
        "Every key, and what the two views mean.",
        APP,
        display="?  F1",
        footer=True,
        available=_always,
        title=lambda _: "Help: keys and views",
    ),
    Command(
        "command_palette",
        "ctrl+p",
        "commands",
        "The command palette, offering what makes sense now.",
        APP,
        display="Ctrl+P",
        available=_always,
        palette=False,
    ),
    Command(
        "quit",
        "q",
        "quit",
        "Leave ledger-tui.",
        APP,
        footer=True,
        available=_always,
        palette=False,
    ),
    # Movement: the attempts table (or the summary, when it has focus).
    Command(
        "move('down')",
        "j,down",
        "down",
        "Next row.",
        MOVE,
        display="↓  j",
        palette=False,
        available=_on_main_screen,
    ),
    Command(
        "move('up')",
        "k,up",
        "up",
        "Previous row.",
        MOVE,
        display="↑  k",
        palette=False,
        available=_on_main_screen,
    ),
    Command(
        "move('left')",
        "h,left",
        "left",
        "Previous column.",
        MOVE,
        display="←  h",
        palette=False,
        available=_on_main_screen,
    ),
    Command(
        "move('right')",
        "l,right",
        "right",
        "Next column.",
        MOVE,
        display="→  l",
        palette=False,
        available=_on_main_screen,
    ),
    Command(
        "move('page_up')",
        "pageup",
        "page up",
        "One screen up.",
        MOVE,
        display="PgUp",
        palette=False,
        available=_on_main_screen,
    ),
    Command(
        "move('page_down')",
        "pagedown",
        "page down",
        "One screen down.",
        MOVE,
        display="PgDn",
        palette=False,
        available=_on_main_screen,
    ),
    Command(
        "move('top')",
        "home",
        "first row",
        "The first row.",
        MOVE,
        display="gg  Home",
        palette=False,
        available=_on_main_screen,
    ),
    Command(
        "focus_next",
        "tab",
        "next pane",
        "Next pane: filter, attempts, summary (Shift+Tab goes back).",
        MOVE,
        display="Tab",
        palette=False,
        available=_always,
    ),
    Command(
        "g_prefix",
        "g",
        "first row (gg)",
        "",
        MOVE,
        palette=False,
        available=_on_main_screen,
    ),
    Command(
        "move('bottom')",
        "G,end",
        "last row",
        "The last row.",
        MOVE,
        display="G  End",
        palette=False,
        available=_on_main_screen,
    ),
)


def _fixed(title: str) -> Title:
    return lambda _: title


ATTEMPT_COMMANDS: tuple[Command, ...] = tuple(
    Command(
        action,
        keys,
        name,
        text,
        ATTEMPT,
        display=display,
        footer=footer,
        available=_on_attempt_screen,
        scope=ATTEMPT_SCOPE,
        title=_fixed(title),
    )
    for action, keys, display, name, text, footer, title in (
        (
            "step_open",
            "enter",
            "Enter",
            "open step",
            "Open the step under the cursor whole: its text, tool calls and observation "
            "(Esc or Enter closes).",
            True,
            "Open the step under the cursor",
        ),
        (
            "step_search",
            "slash",
            "/",
            "search",
            "Search the steps' text, tool calls and observations (Enter searches).",
            True,
            "Search the steps",
        ),
        (
            "step_next_match",
            "n",
            "n",
            "next match",
            "The next step that matches the search.",
            False,
            "Next match of the search",
        ),
        (
            "step_previous_match",
            "N",
            "N",
            "previous match",
            "The previous step that matches the search.",
            False,
            "Previous match of the search",
        ),
        (
            "step_next_error",
            "e",
            "e",
            "next error",
            "The next step that failed: an error, a failed tool call.",
            True,
            "Next step that failed",
        ),
        (
            "step_order",
            "c",
            "c",
            "costliest",
            "Steps by their own tokens, costliest first; again for the log's order.",
            True,
            "Order the steps costliest first (or back)",
        ),
        (
            "step_signal",
            "s",
            "s",
            "signal",
            "The step the grader's signal points at (again: the next signal's).",
            False,
            "Go to the step of the grader's signal",
        ),
        (
            "attempt_previous",
            "left_square_bracket",
            "[",
            "previous attempt",
            "The previous attempt of the ledger's view (its filter and order); the ledger's "
            "cursor follows.",
            False,
            "Previous attempt of the view",
        ),
        (
            "attempt_next",
            "right_square_bracket",
            "]",
            "next attempt",
            "The next attempt of the ledger's view (its filter and order); the ledger's cursor "
            "follows.",
            False,
            "Next attempt of the view",
        ),
        (
            "attempt_fields",
            "i",
            "i",
            "fields",
            "Every field of the attempt's row in the ledger.",
            True,
            "Show the row's every field",
        ),
        (
            "attempt_help",
            "question_mark,f1",
            "?  F1",
            "help",
            "The attempt screen's keys.",
            True,
            "Help: the attempt screen's keys",
        ),
        (
            "attempt_close",
            "escape,q",
            "Esc  q",
            "back",
            "Back to the ledger, where it was (the search box: out of it).",
            True,
            "Back to the ledger",
        ),
    )
)
"""The attempt screen's keys (`screens/attempt_screen.py` binds them; its actions are the
screen's): in the same registry, so the help, the footer and the palette know them."""

COMMANDS = COMMANDS + ATTEMPT_COMMANDS

HELP_SECTIONS: tuple[str, ...] = (VIEW, AUDIT, DATA, MOVE, APP, ATTEMPT)


def action_name(action: str) -> str:
    """The bare action name of `move('down')` -> `move`."""
    return action.split("(", 1)[0]


def bindings(scope: str = LEDGER_SCOPE) -> list[BindingType]:
    """`BINDINGS` for the app (or the attempt screen): one `Binding` per registry entry with
    keys in that scope."""
    result: list[BindingType] = []
    for command in COMMANDS:
        if not command.keys or command.scope != scope:
            continue
        # Each key is its own binding; only the first of a command's keys shows in the footer.
        for index, key in enumerate(command.keys.split(",")):
            result.append(
                Binding(
                    key,
                    command.action,
                    command.name,
                    show=command.footer and index == 0,
                    key_display=command.footer_key if index == 0 else None,
                    priority=command.priority,
                    id=f"{scope}.{action_name(command.action)}.{key}",
                )
            )
    return result


def by_action(action: str) -> list[Command]:
    """Registry entries whose action (without arguments) is `action`."""
    return [command for command in COMMANDS if action_name(command.action) == action]


def is_available(context: CommandContext, action: str) -> bool:
    """Whether any registry entry for `action` can run now (unknown actions: True)."""
    commands = by_action(action)
    return not commands or any(command.available(context) for command in commands)


def help_entries() -> Iterator[tuple[str, list[Command]]]:
    """The registry as the help screen lists it: sections in order, hidden helpers left out."""
    for section in HELP_SECTIONS:
        entries = [c for c in COMMANDS if c.section == section and c.help]
        if entries:
            yield section, entries


def key_text(command: Command) -> str:
    """How a command's keys read to people: its display, or the keys themselves."""
    if command.display:
        return command.display
    if not command.keys:
        return "(palette)"
    return "  ".join(command.keys.split(","))


class LedgerCommands(Provider):
    """Command palette provider: the registry's commands that make sense now."""

    def _offers(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        context = self.app
        if not _is_context(context):
            return
        for command in COMMANDS:
            if not command.palette or not command.available(context):
                continue
            action = command.action
            if command.scope == ATTEMPT_SCOPE:
                action = f"screen.{action}"  # the attempt screen's own action
            runner = partial(context.run_action_now, action)
            yield command.palette_title(context), command.help, runner

    async def discover(self) -> Hits:
        """Everything available now, in registry order."""
        for title, help_text, runner in self._offers():
            yield DiscoveryHit(Content(title), runner, text=title, help=help_text)

    async def search(self, query: str) -> Hits:
        """Fuzzy-match the available commands' titles."""
        matcher = self.matcher(query)
        for title, help_text, runner in self._offers():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score, literal_highlight(matcher, title), runner, text=title, help=help_text
                )


def literal_highlight(matcher: Matcher, candidate: str) -> Content:
    """`Matcher.highlight` without reading the candidate as markup (titles hold file values)."""
    content = Content(candidate)
    score, offsets = matcher.fuzzy_search.match(matcher.query, candidate)
    if not score:
        return content
    for offset in offsets:
        if not candidate[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


def _is_context(app: object) -> TypeGuard[CommandContext]:
    return all(hasattr(app, name) for name in ("loaded", "view", "run_action_now"))
