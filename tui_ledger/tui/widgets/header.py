"""The header: the app and file names, the counts line, and the view in large words.

`LedgerHeader.show(title, counts)` draws the lines, and its `view` (bound to the app's) the
badge; `title_text` and `counts_text` say what the lines hold, from what the app passes them
(the header reads no app state).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive, var
from textual.widget import Widget
from textual.widgets import Static

from tui_ledger.accounting.ledger import DEFAULT_BY, VIEW_GLOSSES, VIEW_TITLES, View
from tui_ledger.text.numbers import format_bytes
from tui_ledger.text.textsafe import safe_text
from tui_ledger.text.wording import plural
from tui_ledger.tui.theme import (
    ACCENT,
    DROP_STYLE,
    ERROR_STYLE,
    KEEP_STYLE,
    KEY_STYLE,
    LABEL_STYLE,
    MISSING_STYLE,
    TITLE_STYLE,
)

# A two-row block font for the view's name: big enough to read from the back of a room.
_BIG_LETTERS: dict[str, tuple[str, str]] = {
    "K": ("█▄▀", "█ █"),
    "E": ("█▀▀", "██▄"),
    "P": ("█▀█", "█▀▀"),
    "F": ("█▀▀", "█▀ "),
    "A": ("▄▀█", "█▀█"),
    "I": ("█", "█"),
    "L": ("█  ", "█▄▄"),
    "U": ("█ █", "█▄█"),
    "R": ("█▀█", "█▀▄"),
    "S": ("█▀▀", "▄▄█"),
    "D": ("█▀▄", "█▄▀"),
    "O": ("█▀█", "█▄█"),
    " ": ("  ", "  "),
}


def big_words(words: str) -> tuple[str, str]:
    """`words` in the two-row block font (letters of the two view names only)."""
    top = " ".join(_BIG_LETTERS[char][0] for char in words)
    bottom = " ".join(_BIG_LETTERS[char][1] for char in words)
    return top, bottom


VIEW_SENTENCES: dict[str, str] = {
    "keep": "every attempt counts",
    "drop": "only accepted attempts count",
}


class ViewBadge(Widget):
    """The current view, in large words and its own colour; plain words when space is short."""

    DEFAULT_CSS = """
    ViewBadge { width: auto; height: 2; }
    """

    view: reactive[View] = reactive("keep", layout=True)
    """The view shown (bound to the header's, and so to the app's)."""

    def watch_view(self, view: View) -> None:
        """Take the view's colour."""
        self.set_class(view == "drop", "-drop")

    def _big(self) -> bool:
        return self.app.size.width >= 140

    def get_content_width(self, container: Any, viewport: Any) -> int:
        """Wide enough for the big letters and the gloss, or for the words alone."""
        words = VIEW_TITLES[self.view]
        gloss = max(cell_len(VIEW_TITLES[self.view]), cell_len(self._gloss()))
        if self._big():
            return cell_len(big_words(words)[0]) + 3 + gloss + 2
        return gloss + 4

    def _gloss(self) -> str:
        return f"{VIEW_GLOSSES[self.view]}: {VIEW_SENTENCES[self.view]}"

    def render(self) -> Text:
        """Big letters, then the name in words and what it means."""
        style = KEEP_STYLE if self.view == "keep" else DROP_STYLE
        words = VIEW_TITLES[self.view]
        text = Text(no_wrap=True)
        if self._big():
            top, bottom = big_words(words)
            text.append(f" {top}  ", style=style)
            text.append(f" {words} ", style=f"{style} reverse")
            text.append("\n")
            text.append(f" {bottom}  ", style=style)
            text.append(f" {self._gloss()}", style=style.replace("bold ", "italic "))
        else:
            text.append(f" {words} ", style=f"{style} reverse")
            text.append("\n")
            text.append(f" {self._gloss()}", style=style.replace("bold ", "italic "))
        return text


class LedgerHeader(Horizontal):
    """The title and counts lines on the left, the view's badge on the right."""

    view: var[View] = var("keep")
    """The view (bound to the app's), passed on to the badge."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        # Kept by reference: work finishing behind a dialog still updates them.
        self._title = Static(id="title")
        self._counts = Static(id="counts")
        self.badge = ViewBadge(id="view-badge")

    def compose(self) -> ComposeResult:
        """Title and counts, one above the other; the badge beside them."""
        with Vertical(id="title-block"):
            yield self._title
            yield self._counts
        yield self.badge.data_bind(LedgerHeader.view)

    def show(self, title: Text, counts: Text) -> None:
        """Draw the two lines."""
        self._title.update(title)
        self._counts.update(counts)


def title_text(paths: Sequence[str], demo: bool) -> Text:
    """`ledger-tui  runs.csv` (up to three file names), or the demo's."""
    title = Text(no_wrap=True, overflow="ellipsis")
    title.append("ledger-tui  ", style=TITLE_STYLE)
    if demo:
        title.append("demo ledger (synthetic): ", style=MISSING_STYLE)
        title.append(f"sample_data/{Path(paths[0]).name}", style="bold")
    else:
        names = [safe_text(Path(path).name) for path in paths]
        shown = ", ".join(names[:3]) + (f" +{len(names) - 3} more" if len(names) > 3 else "")
        title.append(shown, style="bold")
    return title


def counts_text(
    *,
    attempts: int | None,
    workflows: int | None,
    by: tuple[str, ...],
    priced: bool,
    watching: bool,
    matched_only: bool,
    loading: tuple[float, int] | None,
    reload_failed: bool,
    cap: str | None = None,
    accepted: str | None = None,
) -> Text:
    """`1,204 attempts · 4 workflows · grouped by model · priced ...`: what is loaded (`attempts`
    None: nothing yet), and a load under way (`loading`: seconds so far, bytes) or failed.
    `accepted`: what accepted means when not as graded (`VOUCHED`, first, in words)."""
    counts = Text(no_wrap=True, overflow="ellipsis")
    if accepted:
        counts.append(accepted, style=KEY_STYLE)
        counts.append(" · ", style=LABEL_STYLE)
    if cap is not None:  # first, so no width hides it: every figure is the capped one
        counts.append(f"CAP {cap}", style=f"bold {KEY_STYLE}")
        counts.append(" · ", style=LABEL_STYLE)
    if attempts is not None:
        counts.append(plural(attempts, "attempt"))
        if workflows is not None:
            counts.append(" · ", style=LABEL_STYLE)
            counts.append(plural(workflows, "workflow"))
        if by != DEFAULT_BY:
            counts.append(" · grouped by ", style=LABEL_STYLE)
            counts.append(safe_text(" · ".join(by)), style="bold")
        if priced:
            counts.append(" · priced", style=LABEL_STYLE)
        if watching:
            counts.append(" · watching", style=MISSING_STYLE)
        if matched_only:
            counts.append(" · ", style=LABEL_STYLE)
            counts.append("matched tasks only", style=KEY_STYLE)
    if loading is not None:
        elapsed, size = loading
        if counts.plain:
            counts.append("   ")
        counts.append(f"⟳ loading {format_bytes(size)}… {elapsed:.1f} s", style=f"italic {ACCENT}")
    if reload_failed:
        counts.append("   ✘ reload failed (r retries)", style=ERROR_STYLE)
    return counts


def files_size(paths: Sequence[str]) -> int:
    """The bytes of the files named (0 for a folder or a path that cannot be read)."""
    return sum(_file_size(path) for path in paths)


def _file_size(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0
