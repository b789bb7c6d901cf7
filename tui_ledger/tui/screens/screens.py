"""The dialogs over the ledger: help, export, save, confirm, group-by, warnings (with the
fair-comparison checks); an attempt's details are `detail_screen.py`'s.

Each is a `ModalScreen` that closes with Esc and returns its answer through `dismiss`, so the app
decides what to do with it. Everything that came from a file is shown as `rich.text.Text` through
`safe_text`: a task called `[bold]x[/]` reads `[bold]x[/]`.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import polars as pl
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, SelectionList, Static
from textual.widgets.selection_list import Selection

from tui_ledger.accounting.checks import is_warning
from tui_ledger.accounting.ledger import VIEW_GLOSSES, VIEW_TITLES
from tui_ledger.findings import Finding
from tui_ledger.text.numbers import format_count
from tui_ledger.text.textsafe import safe_text
from tui_ledger.text.wording import plural
from tui_ledger.tui import commands
from tui_ledger.tui.theme import (
    ACCENT,
    BACKGROUND,
    DROP,
    DROP_STYLE,
    ERROR_STYLE,
    KEEP,
    KEEP_STYLE,
    KEY_STYLE,
    MUTED,
)

VIEW_EXPLANATION = (
    "KEEP FAILURES (honest) counts every attempt: the tokens a workflow burned on failed, "
    "timed-out and errored attempts stay in its total, so tokens per accepted result is what "
    "one accepted result really cost.",
    "DROP FAILURES (the trap) counts only accepted attempts, as when failed rows are silently "
    "dropped from a chart: a workflow that fails often looks cheap, and the ranking can flip.",
)


class _Dialog(ModalScreen[Any]):
    """A modal with Esc (or q, where no text box takes it) to close and a titled frame."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "close", show=False)]

    def action_close(self) -> None:
        """Close without an answer."""
        self.dismiss(None)


# --------------------------------------------------------------------------- help


class HelpScreen(_Dialog):
    """Every key from the registry, and what the two views mean, in two columns."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "close", "close", show=False),
    ]

    def compose(self) -> ComposeResult:
        """Views, view keys and filters on the left; audit, data, move and app keys on the right."""
        sections = dict(commands.help_entries())
        left = [commands.VIEW]
        # The attempt screen's keys: its own help (? there) lists them.
        right = [commands.AUDIT, commands.DATA, commands.MOVE, commands.APP]
        with Vertical(id="help-dialog", classes="dialog"):
            with Horizontal(id="help-body"):
                with VerticalScroll(classes="help-column"):
                    yield Static(self.views_text(), id="help-views")
                    yield Static(self.keys_table(sections, left), id="help-keys-left")
                    yield Static(self.filter_table(), id="help-filter")
                with VerticalScroll(classes="help-column"):
                    yield Static(self.keys_table(sections, right), id="help-keys-right")
            yield Label(Text("Esc, q or ? closes", style=MUTED), classes="dialog-hint")

    def on_mount(self) -> None:
        """Title the frame."""
        self.query_one("#help-dialog").border_title = "ledger-tui help"

    @staticmethod
    def views_text() -> Text:
        """What the two views mean, in the views' own colours."""
        text = Text()
        text.append(f" {VIEW_TITLES['keep']} ", style=f"bold {BACKGROUND} on {KEEP}")
        text.append(f"  {VIEW_GLOSSES['keep']}\n", style=KEEP_STYLE)
        text.append(VIEW_EXPLANATION[0] + "\n\n")
        text.append(f" {VIEW_TITLES['drop']} ", style=f"bold {BACKGROUND} on {DROP}")
        text.append(f"  {VIEW_GLOSSES['drop']}\n", style=DROP_STYLE)
        text.append(VIEW_EXPLANATION[1] + "\n\n")
        text.append("t", style=KEY_STYLE)
        text.append(" switches between them; the summary always shows the focused group in both.")
        return text

    @staticmethod
    def _grid(rows: Sequence[tuple[str, str]], key_width: int = 10) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True, style=KEY_STYLE, min_width=key_width)
        table.add_column(ratio=1)
        for key, meaning in rows:
            table.add_row(Text(key), Text(meaning))
        return table

    @staticmethod
    def keys_table(sections: Mapping[str, list[commands.Command]], names: list[str]) -> Group:
        """Registry entries of some sections, each under its heading: key, then what it does."""
        parts: list[Text | Table] = []
        for name in names:
            parts.append(Text(f"\n{name}", style="bold underline"))
            rows = [(commands.key_text(c), c.help) for c in sections.get(name, [])]
            parts.append(HelpScreen._grid(rows))
        return Group(*parts)

    @staticmethod
    def filter_table() -> Group:
        """The filter language by example."""
        return Group(
            Text("\nFilter language", style="bold underline"),
            HelpScreen._grid(FILTER_EXAMPLES, key_width=16),
        )

    @staticmethod
    def plain() -> str:
        """Everything the help says, as plain text (for tests and screen readers)."""
        from rich.console import Console

        console = Console(width=200, color_system=None, record=True, file=io.StringIO())
        sections = dict(commands.help_entries())
        console.print(HelpScreen.views_text())
        console.print(HelpScreen.keys_table(sections, list(sections)))
        console.print(HelpScreen.filter_table())
        return console.export_text()


FILTER_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("lean", "any text column contains lean (any case)"),
    ("workflow:lean", "a column contains (text) or equals (numbers)"),
    ("workflow=lean", "exact value"),
    ("tokens>1000", "also >=, <, <=, !="),
    ("task~^fix", "regular expression"),
    ("-failed", "a leading - negates; passed, failed, timeout, error, ungraded"),
    ('task:"fix login"', "quotes group spaces; terms are ANDed"),
)


# --------------------------------------------------------------------------- export


@dataclass(frozen=True)
class ExportRequest:
    """What to write: either path may be empty (skip it). `raw`: CSV cells exactly as they are,
    even those a spreadsheet would run as formulas (by default they get a leading apostrophe)."""

    summary_path: str
    attempts_path: str
    raw: bool = False


class _FileDialog(_Dialog):
    """What the file dialogs share: an error line, Export/Cancel buttons, Esc to cancel."""

    OK_LABEL = "Export"

    def buttons(self) -> ComposeResult:
        """The error line and the two buttons, for the end of `compose`."""
        yield Static(id="export-error")
        with Horizontal(classes="buttons"):
            yield Button(self.OK_LABEL, variant="primary", id="export-ok")
            yield Button("Cancel", id="export-cancel")

    def show_error(self, message: str) -> None:
        """Say why the names cannot be used, and stay open."""
        self.query_one("#export-error", Static).update(Text(safe_text(message), style=ERROR_STYLE))

    @on(Button.Pressed, "#export-cancel")
    def _cancel(self) -> None:
        self.dismiss(None)


class ExportScreen(_FileDialog):
    """Ask where to write the summary and the filtered attempts."""

    def __init__(
        self, summary_path: str, attempts_path: str, rows: int, filtered: bool, raw: bool = False
    ) -> None:
        super().__init__()
        self._summary_path = summary_path
        self._attempts_path = attempts_path
        self._rows = rows
        self._filtered = filtered
        self._raw = raw

    def compose(self) -> ComposeResult:
        """Two file names and two buttons."""
        with Vertical(id="export-dialog", classes="dialog"):
            yield Label(
                Text.assemble(
                    ("Summary", "bold"),
                    ("  both views, the trap figures and the warnings · .md .csv .json", MUTED),
                )
            )
            yield Input(self._summary_path, id="summary-path", placeholder="(leave empty: skip)")
            which = "matching the filter" if self._filtered else "all"
            yield Label(
                Text.assemble(
                    ("Attempts", "bold"),
                    (
                        f"  {format_count(self._rows)} rows ({which}; failures included)"
                        " · .csv .parquet .jsonl",
                        MUTED,
                    ),
                )
            )
            yield Input(self._attempts_path, id="attempts-path", placeholder="(leave empty: skip)")
            yield Checkbox(
                "raw CSV: keep cells starting = + - @ as typed (spreadsheets run them)",
                self._raw,
                id="export-raw",
            )
            yield from self.buttons()

    def on_mount(self) -> None:
        """Title the frame and start in the first field."""
        self.query_one("#export-dialog").border_title = "export"
        self.query_one("#summary-path", Input).focus()

    def _request(self) -> ExportRequest:
        return ExportRequest(
            self.query_one("#summary-path", Input).value.strip(),
            self.query_one("#attempts-path", Input).value.strip(),
            raw=self.query_one("#export-raw", Checkbox).value,
        )

    @on(Input.Submitted, "#summary-path")
    def _next_field(self) -> None:
        self.query_one("#attempts-path", Input).focus()

    @on(Input.Submitted, "#attempts-path")
    @on(Button.Pressed, "#export-ok")
    def _submit(self) -> None:
        request = self._request()
        if not request.summary_path and not request.attempts_path:
            self.show_error("Nothing to write: give at least one file name.")
            return
        self.dismiss(request)


class SaveScreen(_FileDialog):
    """Ask for one file name (e.g. the chart's SVG); returns it, or None when cancelled."""

    OK_LABEL = "Save"

    def __init__(self, path: str, *, title: str, what: str) -> None:
        super().__init__()
        self._path = path
        self._title = title
        self._what = what

    def compose(self) -> ComposeResult:
        """What is written, one file name, two buttons."""
        with Vertical(id="export-dialog", classes="dialog"):
            yield Label(Text(safe_text(self._what), style=MUTED))
            yield Input(self._path, id="save-path", placeholder="file name")
            yield from self.buttons()

    def on_mount(self) -> None:
        """Title the frame and put the cursor in the name."""
        self.query_one("#export-dialog").border_title = self._title
        self.query_one("#save-path", Input).focus()

    @on(Input.Submitted, "#save-path")
    @on(Button.Pressed, "#export-ok")
    def _submit(self) -> None:
        path = self.query_one("#save-path", Input).value.strip()
        if not path:
            self.show_error("Give a file name.")
            return
        self.dismiss(path)


class ConfirmScreen(_Dialog):
    """A yes/no question; `y` or Enter on Yes answers yes, `n` or Esc answers no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n,q", "answer(False)", "no", show=False),
        Binding("y", "answer(True)", "yes", show=False),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self._question = question

    def compose(self) -> ComposeResult:
        """The question and two buttons."""
        with Vertical(id="confirm-dialog", classes="dialog"):
            yield Static(Text(safe_text(self._question)))
            with Horizontal(classes="buttons"):
                yield Button("Yes (y)", variant="error", id="confirm-yes")
                yield Button("No (n)", variant="primary", id="confirm-no")

    def on_mount(self) -> None:
        """Default to the safe answer."""
        self.query_one("#confirm-dialog").border_title = "confirm"
        self.query_one("#confirm-no", Button).focus()

    def action_answer(self, answer: bool) -> None:
        """Close with the answer."""
        self.dismiss(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")


# --------------------------------------------------------------------------- group by


class GroupByScreen(_Dialog):
    """Pick the column(s) to group the summary by; returns their names in the order picked."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "cancel", show=False),
        Binding("enter", "apply", "apply", show=False, priority=True),
    ]

    def __init__(self, schema: Mapping[str, pl.DataType], current: Sequence[str]) -> None:
        super().__init__()
        self._schema = dict(schema)
        self._current = list(current)

    def compose(self) -> ComposeResult:
        """The columns, ticked where they group now."""
        selections = [
            Selection(
                Content.assemble(
                    Content(safe_text(name)),
                    Content.styled(f"  {_dtype_name(dtype)}", MUTED),
                ),
                name,
                name in self._current,
            )
            for name, dtype in self._schema.items()
        ]
        with Vertical(id="groupby-dialog", classes="dialog"):
            yield Label(Text("Space ticks a column · Enter applies · Esc cancels", style=MUTED))
            yield SelectionList[str](*selections, id="groupby-list")
            yield Static(id="groupby-error")

    def on_mount(self) -> None:
        """Title the frame and focus the list."""
        self.query_one("#groupby-dialog").border_title = "group by"
        self.query_one(SelectionList).focus()

    def action_apply(self) -> None:
        """Close with the ticked columns (current order first, then newly ticked)."""
        chosen = list(self.query_one(SelectionList).selected)
        if not chosen:
            self.query_one("#groupby-error", Static).update(
                Text("Tick at least one column.", style=ERROR_STYLE)
            )
            return
        ordered = [name for name in self._current if name in chosen]
        ordered += [name for name in chosen if name not in ordered]
        self.dismiss(ordered)


def _dtype_name(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Enum):
        return "outcome"
    return str(dtype).lower()


# --------------------------------------------------------------------------- warnings


def warning_text(warning: Finding, units: Mapping[str, str] | None = None) -> Text:
    """One warning as a block: kind, message, details, how many rows, which lines (and files).

    A check (`checks.Check`) also has a severity and per-group details. `units` (the load
    report's) marks the files that hold one attempt: named alone, without a line number."""
    text = Text()
    serious = is_warning(warning)
    colour = ACCENT if serious else MUTED
    kind = warning.kind
    message = warning.message
    text.append("⚠ " if serious else "ℹ ", style=f"bold {colour}")
    severity = getattr(warning, "severity", None)
    if severity:
        text.append(f"{str(severity).upper()}  ", style=f"bold {colour}")
    if kind:
        text.append(safe_text(str(kind).replace("_", " ")), style=f"bold {colour}")
        text.append("  ")
    text.append(safe_text(message))
    for detail in (getattr(warning, "details", None) or ())[:20]:  # only those 20 are made
        text.append("\n   · ", style=MUTED)
        text.append(safe_text(detail))
    count = warning.count
    lines = list(warning.lines)
    sources = list(warning.sources)
    where: list[str] = []
    if count:
        where.append(plural(count, "row"))
    if lines:
        several_files = len(set(sources)) > 1
        more = " …" if (count or 0) > len(lines) or len(lines) > 12 else ""
        whole = bool(units and sources and all(units.get(s) == "file" for s in sources))
        if whole:
            # One attempt per file (a harness's trial): the file's path names it.
            shown = [safe_text(str(source)) for source in dict.fromkeys(sources[:12])]
            where.append(f"e.g. {', '.join(shown)}{more}")
        else:
            shown = [
                f"{safe_text(str(sources[i]))}:{line}"
                if several_files and i < len(sources)
                else str(line)
                for i, line in enumerate(lines[:12])
            ]
            where.append(f"e.g. line{'s' if len(lines) != 1 else ''} {', '.join(shown)}{more}")
    if where:
        text.append("\n   " + " · ".join(where), style=MUTED)
    return text


class WarningsScreen(_Dialog):
    """The load report's and the price table's warnings and every fair-comparison check.

    Warnings first, then informational notes, each with its severity, message, per-group
    details and example lines. `update_warnings` redraws it when the checks arrive.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,w", "close", "close", show=False)]

    def __init__(self, warnings: Sequence[Finding], units: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self._warnings = list(warnings)
        self._units = units  # the load report's: which sources hold one attempt each

    def compose(self) -> ComposeResult:
        """One block per warning, or a line saying there are none."""
        with Vertical(id="warnings-dialog", classes="dialog"):
            with VerticalScroll(id="warnings-body"):
                yield Static(self._body(), id="warnings-text")
            yield Label(Text("Esc or w closes · ↑↓ scroll", style=MUTED), classes="dialog-hint")

    def _body(self) -> Text:
        if not self._warnings:
            return Text("✓ No warnings: nothing looked suspect.", style=MUTED)
        blocks = [warning_text(warning, self._units) for warning in self._warnings]
        return Text("\n\n").join(blocks)

    def _title(self) -> str:
        warnings = sum(1 for item in self._warnings if is_warning(item))
        notes = len(self._warnings) - warnings
        title = f"{warnings} warning{'s' if warnings != 1 else ''}"
        if notes:
            title += f" · {notes} note{'s' if notes != 1 else ''}"
        return title + " · load, prices and fair-comparison checks"

    def update_warnings(self, warnings: Sequence[Finding]) -> None:
        """Show a newer list (the checks finished while the panel was open)."""
        self._warnings = list(warnings)
        self.query_one("#warnings-text", Static).update(self._body())
        self.query_one("#warnings-dialog").border_title = self._title()

    def on_mount(self) -> None:
        """Title the frame with the counts."""
        self.query_one("#warnings-dialog").border_title = self._title()
        self.query_one("#warnings-body").focus()
