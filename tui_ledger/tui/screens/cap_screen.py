"""The budget dialog (`B`): a cap on each attempt's spend, typed as the filter language types
numbers (`1m`, `250k`, `1,000,000`, `1e6`; `$2.50` with prices). Enter applies, an empty box
clears the cap, Esc leaves it as it was; a cap that cannot be read says why and stays open."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Static

from tui_ledger.accounting.cap import Cap, needs_cost
from tui_ledger.filtering.cap_value import CapError, parse_cap
from tui_ledger.tui.screens.screens import _Dialog
from tui_ledger.tui.theme import ERROR_STYLE, MUTED

CLEAR = "clear"
"""What the dialog answers when its box is left empty: no cap."""


class CapScreen(_Dialog):
    """Ask for a cap; answers a `Cap`, `CLEAR` (empty box), or None (Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "cancel", show=False)]

    def __init__(self, current: Cap | None, columns: list[str]) -> None:
        super().__init__()
        self._current = current
        self._columns = columns

    def compose(self) -> ComposeResult:
        """A line of what it does, the box, and where its errors go."""
        with Vertical(id="cap-dialog", classes="dialog"):
            yield Static(
                Text(
                    "Stop every attempt at N tokens: 1m, 250k, 1,000,000 ($2.50 with prices). "
                    "Enter applies; empty clears; Esc cancels.",
                    style=MUTED,
                )
            )
            current = "" if self._current is None else self._typed(self._current)
            yield Input(current, id="cap-input", placeholder="e.g. 1m (empty: no cap)")
            yield Static(id="cap-error")

    @staticmethod
    def _typed(cap: Cap) -> str:
        return cap.words if cap.unit == "usd" else f"{cap.amount:,}"

    def on_mount(self) -> None:
        """Title the frame and put the cursor in the box."""
        self.query_one("#cap-dialog").border_title = "budget (cap per attempt)"
        self.query_one("#cap-input", Input).focus()

    @on(Input.Submitted, "#cap-input")
    def _submit(self) -> None:
        typed = self.query_one("#cap-input", Input).value.strip()
        if not typed:
            self.dismiss(CLEAR)
            return
        try:
            cap = parse_cap(typed)
        except CapError as error:
            self._error(str(error))
            return
        problem = needs_cost(cap, self._columns)
        if problem is not None:
            self._error(problem)
            return
        self.dismiss(cap)

    def _error(self, message: str) -> None:
        self.query_one("#cap-error", Static).update(Text(message, style=ERROR_STYLE))
