"""How the main screen arranges its two panes for the terminal's size (docs/LAYOUT.md, issue 56).

The first screen says the trap at every size: with no key pressed it holds the view's name,
each group with its rank and tokens per accepted result, and the callout's sentence.

- From 120 columns and 40 rows: the attempts and the summary side by side, the summary's
  callout under the focused group's block (the layout the app always had).
- Below 120 columns or 40 rows: the callout moves up, to just under the groups table, where the
  first screen still holds it (`SummaryPane.place_callout`).
- Below 100 columns the panes take turns: the pane with the focus takes the whole width and the
  other leaves the screen (`Screen.-narrow` and `-attempts-turn` in ledger.tcss). The summary
  has the first turn; Tab goes summary → attempts → filter → summary (Shift+Tab back), and the
  filter line keeps whichever pane had the focus before it.
"""

from __future__ import annotations

from typing import Literal

from textual.screen import Screen
from textual.widget import Widget

__all__ = [
    "FULL_COLUMNS",
    "FULL_ROWS",
    "NARROW_BELOW",
    "Turns",
    "callout_first",
    "taking_turns",
]

NARROW_BELOW = 100
"""Below this many columns the two panes take turns (the screen's `-narrow` class)."""
FULL_COLUMNS = 120
"""From this many columns (and `FULL_ROWS` rows) the summary keeps its callout under the
focused group's block."""
FULL_ROWS = 40

Pane = Literal["attempts", "summary"]


def callout_first(width: int, height: int) -> bool:
    """Whether the callout goes right under the groups table (a smaller terminal)."""
    return width < FULL_COLUMNS or height < FULL_ROWS


def taking_turns(width: int) -> bool:
    """Whether the panes take turns (one at a time, the whole width) at this many columns."""
    return width < NARROW_BELOW


class Turns:
    """Which pane has the width below `NARROW_BELOW` columns, and the order Tab goes there.

    `attempts` is the attempts table; `groups` the summary's groups table (the summary's one
    focusable part); `filter_input` the filter line's box."""

    def __init__(self, attempts: Widget, groups: Widget, filter_input: Widget) -> None:
        self._attempts = attempts
        self._groups = groups
        self._filter = filter_input
        self.pane: Pane = "summary"
        """The pane on screen while they take turns (the last one that had the focus)."""

    def follow(self, screen: Screen[object], focused: Widget | None) -> None:
        """The focus moved to `focused`: its pane takes the turn (the filter's box keeps the
        pane that had it)."""
        if focused is None:
            return
        if focused is self._attempts:
            self.pane = "attempts"
        elif focused is self._groups:
            self.pane = "summary"
        screen.set_class(self.pane == "attempts", "-attempts-turn")

    def first(self) -> Widget:
        """The widget to focus first at a narrow size: the summary's table."""
        return self._groups

    def next(self, focused: Widget | None, step: int) -> Widget:
        """The widget Tab (`step` 1) or Shift+Tab (-1) focuses after `focused`."""
        order = [self._groups, self._attempts, self._filter]
        at = order.index(focused) if focused in order else 0
        return order[(at + step) % len(order)]
