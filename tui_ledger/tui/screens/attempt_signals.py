"""The attempt screen with the grader's signals: `SignalsAttemptScreen` is `AttemptScreen` with
a line per signal above the steps (its kind, its step, its evidence) and `s`, which puts the
steps' cursor on the signal's step (again: the next signal's). Opened from the audit (`a`, then
Enter on a flagged attempt) it starts at the step of the signal chosen.

The signals are asked for each time an attempt is shown (`signals_of`: the app reads the
ledger's cursor, which `[` `]` move), so walking the view shows each attempt's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import Static

from tui_ledger.text.textsafe import safe_text
from tui_ledger.tui.screens.attempt_screen import AttemptScreen, StepsRead, Walk
from tui_ledger.tui.theme import ERROR_STYLE, KEY_STYLE, LABEL_STYLE, MUTED

if TYPE_CHECKING:
    from tui_ledger.grader import Signal

SignalsOf = Callable[[], "list[Signal]"]
"""The grader's signals of the attempt shown now, or [] when the audit is not in."""


def signals_text(signals: Sequence[Signal]) -> Text:
    """One line per signal: `⚑ touched_grader · step 3 · sed -i … tests/test_parse.py`."""
    text = Text(no_wrap=True, overflow="ellipsis")
    for number, signal in enumerate(signals):
        if number:
            text.append("\n")
        text.append("⚑ ", style=ERROR_STYLE)
        text.append(signal.kind, style="bold")
        where = f"step {signal.step}" if signal.step is not None else "the verdict"
        text.append(f" · {where} · ", style=LABEL_STYLE)
        text.append(safe_text(signal.evidence))
    if any(signal.step is not None for signal in signals):
        text.append("\n")
        text.append("s", style=KEY_STYLE)
        text.append(" goes to the signal's step (again: the next one)", style=MUTED)
    return text


class SignalsAttemptScreen(AttemptScreen):
    """`AttemptScreen` with the grader's signals above the steps, and `s` to go to their step."""

    DEFAULT_CSS = """
    SignalsAttemptScreen #attempt-signals { height: auto; max-height: 6; }
    """

    def __init__(
        self,
        row: Mapping[str, Any],
        position: int,
        count: int,
        walk: Walk,
        inputs: Sequence[str] = (),
        cap: int | None = None,
        *,
        signals_of: SignalsOf,
        start_at_step: int | None = None,
    ) -> None:
        """As `AttemptScreen`; `signals_of`: the signals of the attempt shown;
        `start_at_step`: the step the steps' cursor goes to once it is read."""
        super().__init__(row, position, count, walk, inputs, cap)
        self._signals_of = signals_of
        self.signals: list[Signal] = []
        self._signals_line = Static(id="attempt-signals")
        self._signals_line.display = False
        self._pending_step = start_at_step
        self._signal_turn = 0

    def compose(self) -> ComposeResult:
        """The attempt screen, the signals' line under its head (above the steps)."""
        for widget in super().compose():
            yield widget
            if widget is self._head:  # in the attempt's top block, under its head line
                yield self._signals_line

    def _start(self) -> None:
        """An attempt shown (opened, or `[` `]`): its own signals."""
        super()._start()
        self._show_signals()

    def _show_signals(self) -> None:
        self.signals = self._signals_of()
        self._signal_turn = 0
        line = self._signals_line
        if self.signals:
            line.update(signals_text(self.signals))
        line.display = bool(self.signals)

    @on(StepsRead)
    def _step_arrived(self, report: StepsRead) -> None:
        """Opened at a signal's step: go there once that step is read."""
        if self._pending_step is not None:
            self.call_after_refresh(self._go_to_pending)

    def _go_to_pending(self) -> None:
        wanted = self._pending_step
        if wanted is not None and self._go_to_step(wanted):
            self._pending_step = None

    def _go_to_step(self, index: int) -> bool:
        """Put the steps' cursor on the step `trace` numbers `index`; whether it is read."""
        steps = self.steps
        if (
            steps.cursor_row >= 0
            and steps.row_count
            and steps.step_at(steps.cursor_row).index == index
        ):
            return True
        return steps.find(lambda step: step.index == index) is not None

    def action_step_signal(self) -> None:
        """s: the step of the grader's signal (each press: the next signal with a step)."""
        with_steps = [signal for signal in self.signals if signal.step is not None]
        if not with_steps:
            what = "no signal" if not self.signals else "its signals come from the verdict"
            self.notify(f"This attempt has {what}: no step to go to.", timeout=3, markup=False)
            return
        signal = with_steps[self._signal_turn % len(with_steps)]
        self._signal_turn += 1
        assert signal.step is not None
        if not self._go_to_step(signal.step):
            self._pending_step = signal.step
            self.notify(f"Step {signal.step} is not read yet.", timeout=3, markup=False)
