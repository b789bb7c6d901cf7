"""The one registry of commands: key, action, name, help text and when each makes sense.

VisiData keeps one command table; Posting gives each binding an id. Here `COMMANDS` is that
table, and everything the user can learn about keys is derived from it:

- `bindings()` builds the app's `BINDINGS` (and so the footer, via `Binding.group` and `show`);
- `LedgerApp.check_action` asks each command's `available` predicate, so the footer greys out
  what cannot run now;
- the help screen lists every entry, grouped by `section`;
- `command_palette.LedgerCommands` offers the available ones in the command palette, titled
  for the moment ("Show DROP FAILURES (the trap)", "Filter to workflow = lean", ...).

What a command is, its predicates (which receive the app through the small `CommandContext`
protocol, so this module does not import the app, which imports this module) and its palette
titles are `command_model.py`'s.
"""

from __future__ import annotations

from collections.abc import Iterator

from textual.binding import Binding, BindingType

from tui_ledger.tui.command_model import (
    APP,
    ATTEMPT,
    ATTEMPT_SCOPE,
    AUDIT,
    DATA,
    LEDGER_SCOPE,
    MOVE,
    VIEW,
    Command,
    CommandContext,
    always,
    can_edit_filter,
    can_match_tasks,
    cell_term_title,
    fixed_title,
    has_cell,
    has_column,
    has_cost,
    has_filter,
    has_tasks,
    matched_title,
    metric_title,
    on_attempt,
    on_main,
    sort_title,
    toggle_title,
)

COMMANDS: tuple[Command, ...] = (
    Command(
        "toggle_view",
        "t",
        "toggle view",
        "Switch between KEEP FAILURES (every attempt counts) and DROP FAILURES (only accepted "
        "attempts count, the trap).",
        VIEW,
        footer=True,
        title=toggle_title,
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
        available=can_edit_filter,
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
        available=has_cell,
        title=cell_term_title(negate=False),
    ),
    Command(
        "exclude_cell",
        "F",
        "exclude cell",
        "Add a filter term excluding the value under the cursor.",
        VIEW,
        available=has_cell,
        title=cell_term_title(negate=True),
    ),
    Command(
        "clear_filter",
        "",
        "clear filter",
        "Remove every filter term.",
        VIEW,
        available=has_filter,
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
        available=has_column,
        title=sort_title(descending=False),
    ),
    Command(
        "sort_descending",
        "right_square_bracket",
        "sort",
        "Sort the attempts by the current column, descending (missing values last).",
        VIEW,
        display="]",
        available=has_column,
        title=sort_title(descending=True),
    ),
    Command(
        "toggle_metric",
        "dollar_sign",
        "tokens ⇄ cost",
        "Headline: tokens ⇄ cost per accepted result (needs prices).",
        AUDIT,
        display="$",
        available=has_cost,
        title=metric_title,
    ),
    Command(
        "toggle_matched",
        "m",
        "matched tasks",
        "Compare only the tasks every group attempted (again: all).",
        AUDIT,
        available=can_match_tasks,
        title=matched_title,
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
        available=has_tasks,
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
        available=has_cell,
        title=lambda _: "Open the attempt: its verdict and steps",
    ),
    Command(
        "details",
        "i",
        "fields",
        "Show every field of the attempt under the cursor.",
        DATA,
        available=has_cell,
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
        available=always,
        title=lambda _: "Help: keys and views",
    ),
    Command(
        "command_palette",
        "ctrl+p",
        "commands",
        "The command palette, offering what makes sense now.",
        APP,
        display="Ctrl+P",
        available=always,
        palette=False,
    ),
    Command(
        "quit",
        "q",
        "quit",
        "Leave ledger-tui.",
        APP,
        footer=True,
        available=always,
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
        available=on_main,
    ),
    Command(
        "move('up')",
        "k,up",
        "up",
        "Previous row.",
        MOVE,
        display="↑  k",
        palette=False,
        available=on_main,
    ),
    Command(
        "move('left')",
        "h,left",
        "left",
        "Previous column.",
        MOVE,
        display="←  h",
        palette=False,
        available=on_main,
    ),
    Command(
        "move('right')",
        "l,right",
        "right",
        "Next column.",
        MOVE,
        display="→  l",
        palette=False,
        available=on_main,
    ),
    Command(
        "move('page_up')",
        "pageup",
        "page up",
        "One screen up.",
        MOVE,
        display="PgUp",
        palette=False,
        available=on_main,
    ),
    Command(
        "move('page_down')",
        "pagedown",
        "page down",
        "One screen down.",
        MOVE,
        display="PgDn",
        palette=False,
        available=on_main,
    ),
    Command(
        "move('top')",
        "home",
        "first row",
        "The first row.",
        MOVE,
        display="gg  Home",
        palette=False,
        available=on_main,
    ),
    Command(
        "focus_next",
        "tab",
        "next pane",
        "Next pane: filter, attempts, summary (Shift+Tab goes back).",
        MOVE,
        display="Tab",
        palette=False,
        available=always,
    ),
    Command(
        "g_prefix",
        "g",
        "first row (gg)",
        "",
        MOVE,
        palette=False,
        available=on_main,
    ),
    Command(
        "move('bottom')",
        "G,end",
        "last row",
        "The last row.",
        MOVE,
        display="G  End",
        palette=False,
        available=on_main,
    ),
)


ATTEMPT_COMMANDS: tuple[Command, ...] = tuple(
    Command(
        action,
        keys,
        name,
        text,
        ATTEMPT,
        display=display,
        footer=footer,
        available=on_attempt,
        scope=ATTEMPT_SCOPE,
        title=fixed_title(title),
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
