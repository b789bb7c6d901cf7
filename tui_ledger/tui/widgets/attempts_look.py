"""How the attempts table looks: its component classes and their CSS (the table's colours, the
cursor, struck rows, each outcome's colour), the grader's flag mark, and the style helpers that
lay a cell's colour over its row's background. `attempts_table` draws with them.
"""

from __future__ import annotations

from rich.style import Style

FLAG_MARK = "⚑"
"""Before the first cell of an attempt the grader's audit flags (one cell: the left pad)."""

ATTEMPTS_TABLE_COMPONENTS: set[str] = {
    "attempts-table--header",
    "attempts-table--header-cursor",
    "attempts-table--odd-row",
    "attempts-table--cursor-row",
    "attempts-table--cursor",
    "attempts-table--struck",
    "attempts-table--null",
    "attempts-table--passed",
    "attempts-table--failed",
    "attempts-table--timeout",
    "attempts-table--error",
    "attempts-table--ungraded",
}

ATTEMPTS_TABLE_CSS = """
AttemptsTable {
    height: 1fr;
    width: 1fr;
    background: $surface;
    color: $foreground;

    & > .attempts-table--header {
        background: $panel;
        color: $foreground;
        text-style: bold;
    }
    & > .attempts-table--header-cursor {
        background: $panel-lighten-1;
        color: $foreground;
        text-style: bold underline;
    }
    & > .attempts-table--odd-row {
        background: $foreground 4%;
    }
    & > .attempts-table--cursor-row {
        background: $foreground 10%;
    }
    & > .attempts-table--cursor {
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
        text-style: $block-cursor-blurred-text-style;
    }
    &:focus > .attempts-table--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    & > .attempts-table--struck {
        color: $text-muted;
        text-style: strike;
    }
    & > .attempts-table--null {
        color: $text-muted;
    }
    & > .attempts-table--passed {
        color: $text-success;
    }
    & > .attempts-table--failed {
        color: $text-error;
    }
    & > .attempts-table--timeout {
        color: $text-warning;
    }
    & > .attempts-table--error {
        color: magenta;
    }
    & > .attempts-table--ungraded {
        color: $text-muted;
    }
}
"""


def only_foreground(style: Style) -> Style:
    """A style without its background, so the row's background shows through."""
    return Style(
        color=style.color,
        bold=style.bold,
        dim=style.dim,
        italic=style.italic,
        underline=style.underline,
        strike=style.strike,
        reverse=style.reverse,
    )


def only_background(style: Style) -> Style:
    """Only the background of a style."""
    return Style(bgcolor=style.bgcolor)
