"""Every colour of the app, in one place.

The palette is named once here. The stylesheet (`ledger.tcss`) reads it through the theme's
variables (`$keep`, `$drop`, `$accent`, ...); the widgets that draw Rich text in Python use the
named styles below. Keep is teal and drop is coral wherever a view is shown.
"""

from __future__ import annotations

from textual.theme import Theme

# --------------------------------------------------------------------------- the palette

KEEP = "#2ec4b6"  # KEEP FAILURES: every attempt counts (honest)
DROP = "#ff6b57"  # DROP FAILURES: only accepted attempts count (the trap); also errors
ACCENT = "#e3b341"  # what deserves a look: keys, warnings, matched tasks only, loading
PRIMARY = "#58a6ff"
SECONDARY = "#bc8cff"
MUTED = "#8b949e"  # labels, separators, hints
CALLOUT = "#ff9e64"  # the sentence that says what dropping failures hides
FOREGROUND = "#d7dde4"
BACKGROUND = "#0d1117"
SURFACE = "#111821"
PANEL = "#1b2430"
CURSOR = "#2f4a6d"
CURSOR_TEXT = "#ffffff"

SERIES: tuple[str, ...] = (
    "#58a6ff",
    "#f0883e",
    "#bc8cff",
    "#3fb950",
    "#e3b341",
    "#ff7b72",
    "#39c5cf",
    "#db61a2",
    "#a5d6ff",
    "#d2a8ff",
)
"""One colour per group in the Pareto chart, in group order (repeating past ten)."""

APP_VARIABLES: dict[str, str] = {"keep": KEEP, "drop": DROP}
"""The stylesheet's own variables, beyond Textual's: every theme gets them (the app's
`get_theme_variable_defaults`), so a theme from the command palette that does not name them
still draws keep in teal and drop in coral."""

LEDGER_THEME = Theme(
    name="ledger",
    primary=PRIMARY,
    secondary=SECONDARY,
    accent=ACCENT,
    warning=ACCENT,
    error=DROP,
    success=KEEP,
    foreground=FOREGROUND,
    background=BACKGROUND,
    surface=SURFACE,
    panel=PANEL,
    dark=True,
    variables={
        **APP_VARIABLES,
        "footer-key-foreground": ACCENT,
        "block-cursor-background": CURSOR,
        "block-cursor-foreground": CURSOR_TEXT,
        "block-cursor-text-style": "bold",
        "input-selection-background": CURSOR,
    },
)

# --------------------------------------------------------------------------- Rich styles

KEEP_STYLE = f"bold {KEEP}"
DROP_STYLE = f"bold {DROP}"
VIEW_STYLES: dict[str, str] = {"keep": KEEP_STYLE, "drop": DROP_STYLE}
LABEL_STYLE = MUTED
MISSING_STYLE = f"italic {MUTED}"
KEY_STYLE = f"bold {ACCENT}"
ATTENTION_STYLE = ACCENT
ERROR_STYLE = DROP
TITLE_STYLE = f"bold {PRIMARY}"
CALLOUT_STYLE = f"bold {CALLOUT}"
FRONTIER_STYLE = f"bold {FOREGROUND}"
