"""The steps of one attempt: a keyboard table drawn with the Line API (only the lines on screen).

One line per step: its number, who acted, what it did on one line (`Step.summary()`), its own
tokens, the running total as a bar against the attempt's tokens in the ledger, and the time since
the first step. Steps arrive in batches while the log is read (`add_steps`); the table holds them
once, in the log's order, and shows them in that order or costliest first (`costliest_first`)
through a list of positions, never a copy.

Everything that came from the log is drawn as literal text: `textsafe.safe_cell` makes control
characters visible, and cells become `Segment`s, never markup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size, clamp
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from tui_ledger.accounting.cap import stop_position
from tui_ledger.text.numbers import MISSING, format_tokens
from tui_ledger.text.textsafe import safe_cell
from tui_ledger.trajectory import Step
from tui_ledger.tui.theme import (
    ACCENT,
    CURSOR,
    DROP,
    FOREGROUND,
    KEEP,
    MUTED,
    PANEL,
    PRIMARY,
    SECONDARY,
)
from tui_ledger.tui.widgets.row_cursor import RowCursorView

__all__ = ["StepsTable", "elapsed_text"]

WHO_STYLES = {
    "agent": Style(color=PRIMARY),
    "tool": Style(color=SECONDARY),
    "user": Style(color=ACCENT),
    "system": Style(color=MUTED),
}
_EIGHTHS = " ▏▎▍▌▋▊▉"
_CACHE_LIMIT = 2048


def _parse_time(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return None


def elapsed_text(seconds: float) -> str:
    """`+0:07`, `+12:34`, `+1:02:03`: time since the attempt's first step."""
    whole = max(int(seconds), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"+{hours}:{minutes:02d}:{secs:02d}" if hours else f"+{minutes}:{secs:02d}"


def bar_text(value: int, scale: int, width: int) -> tuple[str, bool]:
    """A bar `width` cells long filled to value/scale in eighths; True when value > scale."""
    if scale <= 0 or width <= 0:
        return " " * max(width, 0), False
    over = value > scale
    eighths = round(min(value / scale, 1.0) * width * 8)
    full, part = divmod(eighths, 8)
    text = "█" * full + (_EIGHTHS[part] if part and full < width else "")
    return text.ljust(width), over


class StepsTable(RowCursorView, can_focus=True, inherit_bindings=False):
    """An attempt's steps, one line each, under a header line; a cursor row."""

    ALLOW_SELECT = False

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,g", "scroll_home", "First step", show=False),
        Binding("end,G", "scroll_end", "Last step", show=False),
    ]

    DEFAULT_CSS = """
    StepsTable {
        height: 1fr;
        width: 1fr;
        background: $surface;
        color: $foreground;
    }
    """

    cursor_row: reactive[int] = reactive(0, always_update=True, init=False)
    """The display row under the cursor (0 is the first step shown)."""

    class Chosen(Message):
        """A step was chosen (a double click): the screen opens it."""

        def __init__(self, step: Step) -> None:
            self.step = step
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._steps: list[Step] = []
        self._totals: list[int] = []  # tokens of the steps up to each, in the log's order
        self._order: list[int] | None = None  # display row -> step position (costliest first)
        self._start: datetime | None = None
        self._recorded = False  # whether any step records its tokens
        self.error_count = 0
        """How many steps failed."""
        self._scale: int | None = None  # the attempt's tokens in the ledger
        self._marked: Callable[[Step], bool] | None = None
        self.cap: int | None = None
        """A token budget (the app's `B`): the step where it would have stopped the attempt
        is marked ✂ (`stop_position`)."""
        self._cache: dict[tuple[object, ...], Strip] = {}
        self._generation = 0

    # ------------------------------------------------------------------ data

    @property
    def steps(self) -> list[Step]:
        """Every step read so far, in the log's order (the table's own list: do not change)."""
        return self._steps

    @property
    def row_count(self) -> int:
        """How many steps are shown."""
        return len(self._steps)

    @property
    def costliest_first(self) -> bool:
        """Whether the steps are shown by their tokens, most first (else in the log's order)."""
        return self._order is not None

    def reset(self, scale: int | None) -> None:
        """Forget every step (another attempt); `scale`: its tokens in the ledger."""
        self._steps = []
        self._totals = []
        self._order = None
        self._start = None
        self._recorded = False
        self.error_count = 0
        self._scale = scale
        self._marked = None
        self._changed()
        self.scroll_to(0, 0, animate=False, force=True)
        self.cursor_row = 0

    def add_steps(self, steps: Iterable[Step]) -> None:
        """Steps read further on in the log; the cursor stays on its step."""
        current = self.current_step()
        total = self._totals[-1] if self._totals else 0
        for step in steps:
            self._steps.append(step)
            total += step.tokens or 0
            self._totals.append(total)
            self._recorded = self._recorded or step.tokens is not None
            self.error_count += step.error
            if self._start is None:
                self._start = _parse_time(step.timestamp)
        if self._order is not None:
            self._order = self._costliest_order()
        self._changed()
        if current is not None:
            self._put_cursor_on(current)

    def running_total(self, position: int) -> int:
        """The tokens of the steps up to the one at `position` (log order), 0 before any."""
        return self._totals[position] if self._totals else 0

    def stop_position(self) -> int | None:
        """The position (log order) of the step during which the budget would have stopped
        the attempt; None without a budget, without tokens per step, or within it."""
        if self.cap is None or not self._recorded:
            return None
        return stop_position(self._totals, self.cap)

    def recorded_total(self) -> int | None:
        """The tokens of every step read so far; None while no step records any."""
        return self._totals[-1] if self._recorded else None

    def set_costliest_first(self, on: bool) -> None:
        """Show the steps costliest first, or in the log's order; the cursor keeps its step."""
        current = self.current_step()
        self._order = self._costliest_order() if on else None
        self._changed()
        if current is not None:
            self._put_cursor_on(current)

    def mark(self, marked: Callable[[Step], bool] | None) -> None:
        """Mark the steps for which `marked` holds (a search's matches), or none."""
        self._marked = marked
        self._cache.clear()
        self.refresh()

    def step_at(self, row: int) -> Step:
        """The step shown at display row `row`."""
        return self._steps[self._order[row] if self._order is not None else row]

    def current_step(self) -> Step | None:
        """The step under the cursor, None before any is read."""
        if not self._steps:
            return None
        return self.step_at(clamp(self.cursor_row, 0, len(self._steps) - 1))

    def find(self, wanted: Callable[[Step], bool], *, forward: bool = True) -> Step | None:
        """Move the cursor to the next step after it (or before it) for which `wanted` holds,
        going round past the end; None (the cursor stays) when no step does."""
        count = len(self._steps)
        for offset in range(1, count + 1):
            row = (self.cursor_row + (offset if forward else -offset)) % count
            step = self.step_at(row)
            if wanted(step):
                self.cursor_row = row
                return step
        return None

    def _costliest_order(self) -> list[int]:
        steps = self._steps
        return sorted(
            range(len(steps)),
            key=lambda i: (steps[i].tokens is None, -(steps[i].tokens or 0), i),
        )

    def _put_cursor_on(self, step: Step) -> None:
        position = step.index - 1
        if not (0 <= position < len(self._steps) and self._steps[position] is step):
            position = self._steps.index(step)
        row = self._order.index(position) if self._order is not None else position
        if row != self.cursor_row:
            self.cursor_row = row

    def _changed(self) -> None:
        self._generation += 1
        self._cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(self._steps) + 1)
        self.refresh()

    # ------------------------------------------------------------------ layout

    def _widths(self, width: int) -> tuple[int, int, int, int, int, int]:
        """Cells for: number, who, what, tokens, bar, running total (0 when left out)."""
        number = max(3, len(str(len(self._steps))))
        running = 9 if width >= 110 else 0
        bar = 12 if width >= 110 else 8
        fixed = 1 + number + 1 + 6 + 1 + 1 + 9 + 1 + bar + 1 + (running + 1 if running else 0)
        fixed += 8 + 1  # the time
        return number, 6, max(width - fixed, 8), 9, bar, running

    def _line(self, row: int, width: int) -> list[tuple[str, Style]]:
        number, who, what, tokens, bar, running = self._widths(width)
        step = self.step_at(row)
        position = self._order[row] if self._order is not None else row
        marked = self._marked is not None and self._marked(step)
        stopped = self.cap is not None and position == self.stop_position()
        cells: list[tuple[str, Style]] = [
            ("✂", Style(color=DROP, bold=True))
            if stopped
            else (("•" if marked else " "), Style(color=ACCENT, bold=True)),
            (str(step.index).rjust(number) + " ", Style(color=MUTED)),
            # A sub-agent's step (Claude Code's) is marked ↳; its name is in the step's title.
            (
                (("↳" + step.source) if step.agent else step.source)[:who].ljust(who) + " ",
                WHO_STYLES.get(step.source, Style()),
            ),
        ]
        summary = step.summary()[: 4 * what + 16]
        if step.error:
            summary = "✘ " + summary
        what_style = Style(color=DROP) if step.error else Style()
        cells.append((safe_cell(summary, what).ljust(what) + " ", what_style))
        own = MISSING if step.tokens is None else format_tokens(step.tokens)
        cells.append((own.rjust(tokens) + " ", Style()))
        total = self._totals[position]
        scale = self._scale if self._scale else (self._totals[-1] if self._totals else 0)
        # No step records its tokens: no running total to draw (a 0 would read as none spent).
        filled, over = bar_text(total, scale if self._recorded else 0, bar)
        cells.append((filled, Style(color=DROP if over else KEEP, bgcolor=PANEL)))
        cells.append((" ", Style()))
        if running:
            shown_total = format_tokens(total) if self._recorded else MISSING
            cells.append((shown_total.rjust(running) + " ", Style(color=MUTED)))
        moment = _parse_time(step.timestamp)
        if moment is not None and self._start is not None:
            try:
                shown = elapsed_text((moment - self._start).total_seconds())
            except TypeError:  # one stamp with a zone, one without
                shown = MISSING
        else:
            shown = MISSING
        cells.append((shown.rjust(8), Style(color=MUTED)))
        return cells

    def _header(self, width: int) -> list[tuple[str, Style]]:
        number, who, what, tokens, bar, running = self._widths(width)
        order = "tokens ▼" if self._order is not None else "tokens"
        parts = [
            " " + "#".rjust(number) + " ",
            "who".ljust(who) + " ",
            "what".ljust(what) + " ",
            order.rjust(tokens) + " ",
            "running".ljust(bar) + " ",
        ]
        if running:
            parts.append("total".rjust(running) + " ")
        parts.append("time".rjust(8))
        return [("".join(parts), Style(bold=True, bgcolor=PANEL, color=FOREGROUND))]

    def render_line(self, y: int) -> Strip:
        """The header at 0, then the steps from the scroll offset."""
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            cells = self._header(width)
            return Strip([Segment(text, base + style) for text, style in cells]).crop_extend(
                0, width, base + Style(bgcolor=PANEL)
            )
        row = self.scroll_offset.y + y - 1
        if row >= len(self._steps):
            return Strip.blank(width, base)
        cursor = row == self.cursor_row
        key = (self._generation, row, cursor, width, self.has_focus)
        found = self._cache.get(key)
        if found is not None:
            return found
        line_style = base
        if cursor:
            line_style += Style(bgcolor=CURSOR if self.has_focus else PANEL, bold=self.has_focus)
        # Each cell's own style over the line's (the bar keeps its track's background).
        segments = [Segment(text, line_style + style) for text, style in self._line(row, width)]
        strip = Strip(segments).crop_extend(0, width, line_style)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = strip
        return strip

    def on_resize(self) -> None:
        """Lines are laid out for the width."""
        self._cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(self._steps) + 1)

    def on_focus(self) -> None:
        """The cursor shows whether the table has the keyboard."""
        self._cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        """As on_focus."""
        self._cache.clear()
        self.refresh()

    # ------------------------------------------------------------------ cursor

    def _body_height(self) -> int:
        return max(self.scrollable_content_region.height - 1, 0)

    def watch_cursor_row(self, old: int, new: int) -> None:
        """Repaint the two lines and follow the cursor."""
        self._refresh_row(old)
        self._refresh_row(new)
        self.scroll_cursor_into_view()

    def scroll_cursor_into_view(self) -> None:
        """Show the cursor's line (once laid out, if it is not yet)."""
        if not self._scroll_to_cursor_row():
            self.call_after_refresh(self._scroll_later)

    def _scroll_later(self) -> None:
        if self._body_height() > 0:
            self.scroll_cursor_into_view()

    def on_click(self, event: events.Click) -> None:
        """A click puts the cursor on the step; a double click opens it."""
        row = self.clicked_row(event)
        if row is not None:
            self.cursor_row = row
            if event.chain >= 2:
                self.post_message(self.Chosen(self.step_at(row)))
