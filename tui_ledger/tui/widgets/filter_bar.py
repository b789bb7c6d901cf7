"""The filter line: the box the filter is typed in, its parse errors underlined, and the count
of attempts it keeps.

`FilterBar` is the component: it holds the filter as typed, the expression it parsed to
(`query.parse_filter`, given the attempts' columns by the app) or the error, and says what the
filter keeps (`filter_status_text`). The app recomputes when a new expression parses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl
from rich.highlighter import Highlighter
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.geometry import Size
from textual.message import Message
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from tui_ledger.accounting.compact import TextValues
from tui_ledger.accounting.ledger import View
from tui_ledger.filtering.query import FilterError, parse_filter
from tui_ledger.text.numbers import format_count
from tui_ledger.text.textsafe import safe_text
from tui_ledger.tui.snapshot import Snapshot
from tui_ledger.tui.theme import (
    ATTENTION_STYLE,
    DROP,
    DROP_STYLE,
    ERROR_STYLE,
    KEY_STYLE,
    LABEL_STYLE,
)

PLACEHOLDER = 'type to filter: lean  tokens>1000  -failed  task:"fix login"'


def placeholder_for(width: int) -> str:
    """`PLACEHOLDER` for a box `width` cells wide: its examples that fit, whole (a term cut
    short, `lea`, reads as a filter typed), else "type to filter", else nothing."""
    words, examples = PLACEHOLDER.split(": ", 1)
    terms = examples.split("  ")
    for count in range(len(terms), 0, -1):
        shown = f"{words}: {'  '.join(terms[:count])}"
        if len(shown) <= width:
            return shown
    return words if len(words) <= width else ""


class ErrorSpan(Highlighter):
    """Underlines the part of the filter a parse error points at."""

    def __init__(self) -> None:
        self.span: tuple[int, int] | None = None

    def highlight(self, text: Text) -> None:
        """Mark `span` in red with a curly underline."""
        if self.span is not None:
            start, end = self.span
            end = max(end, start + 1)
            if start >= len(text.plain):
                text.append(" ")  # point past the end (e.g. a missing value)
            text.stylize(f"bold underline {DROP}", start, end)


class FilterInput(Input):
    """The filter box: Enter or ↓ returns to the table, Esc clears it and returns.

    Textual queues each key on the widget focused when the key arrives, and runs a widget's
    key bindings only once the key has come back up to the app, so keys typed right after
    Enter (`/lean⏎q`, typed fast or pasted) would still reach the box as text. So the keys
    that leave are handled here, as they arrive, moving focus to `leave_to` at once; a key
    queued behind them goes on to the table, as if it had been focused when typed. For the same
    reason the box's own editing bindings (ctrl+u, backspace, arrows) run here, as they arrive,
    so a burst edits the text in the order it was typed.
    """

    leave_to: Widget | None = None
    """Where focus goes when the user leaves the box."""

    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)
    """The text's width, which `Input` sets on every change of the text. `Widget`'s reactive
    lays the whole screen out again when it changes: 0.09 s of the screen's thread on every
    keystroke at 200,000 groups, beside the recompute's worker. The box is one line of fixed
    size without a scrollbar (ledger.tcss); its scrolling reads this when the cursor moves,
    so a repaint of the box is enough."""

    class Left(Message):
        """The user left the filter box (Esc or ↓); the app puts focus back on the table."""

    async def _on_key(self, event: events.Key) -> None:
        target = self.leave_to
        if target is not None and self.screen.focused is target:
            event.stop()
            event.prevent_default()
            target._forward_event(events.Key(event.key, event.character))
            return
        if event.key in ("enter", "escape", "down"):
            event.stop()
            event.prevent_default()
            if event.key == "enter":
                await self.action_submit()
            elif event.key == "escape":
                self.value = ""  # Esc clears the filter
            self._leave()
            if event.key != "enter":
                self.post_message(self.Left())
            return
        editing = self._bindings.key_to_bindings.get(event.key)
        if editing:
            # An editing key of the box (ctrl+u, backspace, ←, ctrl+w, ...) acts now, in the
            # order typed: as a binding it would run only once the key came back up to the
            # app, behind characters typed after it (ctrl+u then `s` fast gave "" not "s").
            event.stop()
            event.prevent_default()
            await self.run_action(editing[0].action)
            return
        await super()._on_key(event)

    def _leave(self) -> None:
        if self.leave_to is not None:
            self.screen.set_focus(self.leave_to)

    def on_resize(self, event: events.Resize) -> None:
        """The examples that fit the box's new width (the status beside it grows and shrinks
        with what the filter keeps)."""
        self.placeholder = placeholder_for(event.size.width)


class FilterBar(Horizontal):
    """`filter ▸` and the box on the left, what the filter keeps on the right."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = ""
        """The filter as typed (what the box last said it holds)."""
        self.expression: pl.Expr | None = None
        """The last filter that parsed; None for no filter."""
        self.error: FilterError | None = None
        """Why the filter as typed does not parse."""
        self.shown = ""
        """The filter `expression` was parsed from: the text as typed, or, while that does
        not parse, the whole terms typed before the one in error."""
        self.failure: str | None = None
        """Why the latest request could not be computed (a bad regex, a grouping that
        failed): the table still shows the figures before it."""
        self._parsed = ""  # the text last parsed
        self._error_span = ErrorSpan()
        # Kept by reference: work finishing behind a dialog still updates them.
        self.input = FilterInput(
            id="filter",
            placeholder=PLACEHOLDER,
            highlighter=self._error_span,
            compact=True,
            select_on_focus=False,
        )
        self._status = Static(id="filter-status")
        self._status_text = Text()  # what the status shows

    def compose(self) -> ComposeResult:
        """The label, the box, the status."""
        yield Label("filter ▸ ", id="filter-label")
        yield self.input
        yield self._status

    def parse(self, schema: Mapping[str, Any], values: TextValues | None) -> bool:
        """Parse the filter as typed for a frame of this `schema` (and the distinct `values`
        of its text columns); whether the expression to filter by is new.

        On an error, underline where, and filter by the whole terms typed before the one in
        error (`agnt:` filters by nothing, not by the half-typed word `agnt` the keystroke
        before it matched), so the table shows what the status line says it shows."""
        if self.text != self._parsed:  # new text: an earlier request's failure is not its
            self.failure, self._parsed = None, self.text
        try:
            expression = parse_filter(self.text, schema, values)
        except FilterError as error:
            self.error = error
            self._mark_error((error.position, error.end))
            before = self.text[: term_start(self.text, error.position)].rstrip()
            try:
                expression = parse_filter(before, schema, values)
            except FilterError:
                return False  # the filter shown stays (`shown` says which)
            new = before != self.shown
            self.expression, self.shown = expression, before
            return new
        self.error = None
        self._mark_error(None)
        self.expression, self.shown = expression, self.text
        return True

    def failed(self, message: str, *, in_filter: bool = True) -> None:
        """The latest request could not be computed: the filter parsed but could not run on
        these columns (e.g. a bad regex; `in_filter`: underlined whole), or its grouping failed;
        the table still shows the figures before it."""
        self.failure = message
        if in_filter:
            self._mark_error((0, len(self.text)))

    def computed(self) -> None:
        """New figures are shown: an earlier request's failure no longer describes them."""
        self.failure = None

    def add_term(self, term: str) -> None:
        """Append a term to the box (which then filters, as if typed)."""
        self.input.value = f"{self.input.value.rstrip()} {term}".strip()

    def _mark_error(self, span: tuple[int, int] | None) -> None:
        self._error_span.span = span
        self.input.refresh()

    def show_status(self, snapshot: Snapshot | None, total: int | None, view: View) -> bool:
        """Say what the filter keeps of the `total` attempts (or why it cannot); False when
        there is nothing to say yet."""
        text = filter_status_text(self.error, snapshot, total, view, self.shown, self.failure)
        shown = text if text is not None else Text()
        if shown != self._status_text:  # an update lays the whole screen out again
            self._status_text = shown
            self._status.update(shown)
        return text is not None


def term_start(text: str, position: int) -> int:
    """Where the term at `position` of a filter starts (after the space before it)."""
    return text.rfind(" ", 0, max(0, min(position, len(text)))) + 1


def filter_status_text(
    error: FilterError | None,
    snapshot: Snapshot | None,
    total: int | None,
    view: View,
    filtered_by: str = "",
    failure: str | None = None,
) -> Text | None:
    """What the filter status says: the parse error and the filter the table shows instead
    (`filtered_by`), or why the latest request could not be computed (`failure`), or how many of
    the `total` attempts the filter keeps (in DROP FAILURES, how many more the view hides);
    None when there is nothing on screen yet."""
    if error is not None:
        instead = "table unfiltered"
        if filtered_by:
            instead = f'table filtered by "{safe_text(filtered_by)}"'
        # What the table shows first: a long message is cut at the line's end.
        return Text.assemble(
            ("✘ ", DROP_STYLE),
            (f"at {error.position + 1}, {instead}: ", LABEL_STYLE),
            (safe_text(error.message), ERROR_STYLE),
        )
    if failure is not None:
        return Text.assemble(
            ("✘ ", DROP_STYLE),
            ("table unchanged: ", LABEL_STYLE),
            (safe_text(failure), ERROR_STYLE),
        )
    if snapshot is None or total is None:
        return None
    # The same count as the table's: in DROP FAILURES the rows it hides are said, not counted.
    matching = snapshot.rows("keep")
    shown = snapshot.rows(view)
    noun = "attempt" if total == 1 else "attempts"
    text = Text(f"{format_count(shown)} of {format_count(total)} {noun}", style=LABEL_STYLE)
    if view == "drop" and matching != shown:
        text.append(" · ", style=LABEL_STYLE)
        text.append(f"{format_count(matching - shown)} hidden by DROP FAILURES", style=DROP_STYLE)
    notice = snapshot.notice
    if notice is not None:
        tasks = snapshot.tasks
        text = Text.assemble(
            ("matched tasks only ", KEY_STYLE),
            (
                f"({format_count(tasks)} tasks, {format_count(notice.count)} left out) ",
                ATTENTION_STYLE,
            ),
            text,
        )
    return text
