"""One step of an attempt, whole: its text, its tool calls, what they returned; and the search.

Log text is shown as `rich.text.Text` built from plain strings, a line at a time through
`textsafe.safe_text`: a newline breaks the line, every other control character (ESC, CR, BEL,
a bidi override) is made visible, and `[bold]` in a log reads `[bold]`. A part longer than
`MAX_LINES` lines shows its first and last `MAX_LINES // 2` (a test run's verdict is at its
end), and says how many lines it leaves out between them.
"""

from __future__ import annotations

import re
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from tui_ledger.text.numbers import format_tokens
from tui_ledger.text.textsafe import safe_cell, safe_text
from tui_ledger.trajectory import BUCKETS, Step
from tui_ledger.tui.theme import ACCENT, BACKGROUND, DROP, MUTED, SECONDARY

MAX_LINES = 1200
"""Lines of one part of a step (its text, a call's arguments, an observation) shown at most:
opening a step of 1,200 lines takes a few hundred milliseconds, of 4,000 over a second."""
CALL_ID_CELLS = 40
"""Cells of a tool call's id shown at most (it is there to tell calls apart, not to read)."""
MAX_LINE_CHARS = 2000
"""Characters of one line shown at most (a minified JSON blob is one line)."""

BUCKET_WORDS = {
    "input_tokens": "input",
    "cached_input_tokens": "cached input",
    "cache_write_tokens": "cache write",
    "output_tokens": "output",
}


def safe_block(text: str, *, style: str = "", limit: int = MAX_LINES) -> Text:
    """Multi-line log text, terminal-safe, its newlines kept: at most `limit` lines, the first
    and the last half of them when there are more."""
    lines = text.split("\n")
    block = Text(style=style)
    if len(lines) > limit:
        half = limit // 2
        left_out = len(lines) - 2 * half
        _append_lines(block, lines[:half])
        block.append(f"\n… {left_out:,} lines not shown …\n", style=f"italic {MUTED}")
        _append_lines(block, lines[-half:])
    else:
        _append_lines(block, lines)
    return block


def _append_lines(block: Text, lines: list[str]) -> None:
    for number, line in enumerate(lines):
        if number:
            block.append("\n")
        line = line.removesuffix("\r").expandtabs(4)
        if len(line) > MAX_LINE_CHARS:
            cut = len(line) - MAX_LINE_CHARS
            block.append(safe_text(line[:MAX_LINE_CHARS]))
            block.append(f" … ({cut:,} more characters)", style=f"italic {MUTED}")
        else:
            block.append(safe_text(line))


def step_matches(step: Step, needle: str) -> bool:
    """Whether `needle` (case-folded) is in the step's text, its tool calls or its observation."""
    if needle in step.text.casefold():
        return True
    for call in step.tool_calls:
        if needle in call.name.casefold() or needle in call.arguments.casefold():
            return True
    return step.observation is not None and needle in step.observation.casefold()


def tokens_text(step: Step) -> str:
    """`1,234 tokens (input 1,000 · output 234)`, or `tokens not recorded`."""
    if step.tokens is None:
        return "tokens not recorded"
    buckets = [
        f"{BUCKET_WORDS[name]} {format_tokens(value)}"
        for name in BUCKETS
        if (value := getattr(step, name)) is not None
    ]
    inside = f" ({' · '.join(buckets)})" if buckets else ""
    return f"{format_tokens(step.tokens)} tokens{inside}"


def step_title(step: Step) -> str:
    """The frame's title: `step 12 · agent · 1,234 tokens (…)`."""
    parts = [f"step {step.index}", step.source]
    if step.agent:
        parts.append(f"sub-agent {step.agent}")
    if step.kind:
        parts.append(step.kind)
    if step.error:
        parts.append("✘ error")
    parts.append(tokens_text(step))
    if step.timestamp:
        parts.append(step.timestamp)
    return safe_text(" · ".join(parts))


def step_body(step: Step, query: str = "") -> Text:
    """The step whole: its text, each tool call with its arguments, the observation."""
    body = Text()
    if step.text:
        body.append_text(safe_block(step.text))
    for call in step.tool_calls:
        if body:
            body.append("\n\n")
        body.append("▶ tool call ", style=f"bold {SECONDARY}")
        body.append(safe_text(call.name), style="bold")
        if call.id:
            # Some ids carry a whole signature (Gemini's `call_…__thought__<base64>`).
            body.append(f"  {safe_cell(call.id, CALL_ID_CELLS)}", style=MUTED)
        body.append("\n")
        body.append_text(safe_block(_pretty(call.arguments)))
    if step.observation is not None:
        if body:
            body.append("\n\n")
        body.append("◀ observation", style=f"bold {DROP if step.error else SECONDARY}")
        body.append("\n")
        body.append_text(safe_block(step.observation))
    if not body:
        body.append("(this step records no text)", style=f"italic {MUTED}")
    if query:
        body.highlight_regex(
            re.compile(re.escape(safe_text(query)), re.IGNORECASE),
            style=f"bold {BACKGROUND} on {ACCENT}",
        )
    return body


def _pretty(arguments: str) -> str:
    """JSON arguments indented, when they are JSON; else as written."""
    stripped = arguments.strip()
    if not stripped.startswith(("{", "[")) or len(stripped) > 1_000_000:
        return arguments
    import json

    try:
        return json.dumps(json.loads(stripped), indent=2, ensure_ascii=False)
    except ValueError:
        return arguments


class StepScreen(ModalScreen[None]):
    """One step whole, scrollable; Esc, Enter or q closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter,q", "close", "close", show=False),
    ]

    def __init__(self, step: Step, query: str = "") -> None:
        super().__init__()
        self.step = step
        self._query = query

    def compose(self) -> ComposeResult:
        """The step's parts in one scrolling body."""
        with Vertical(id="step-dialog", classes="dialog"):
            with VerticalScroll(id="step-body"):
                yield Static(step_body(self.step, self._query), id="step-text")
            yield Label(
                Text("Esc or Enter closes · ↑↓ PgUp PgDn scroll", style=MUTED),
                classes="dialog-hint",
            )

    def on_mount(self) -> None:
        """Title the frame with the step's number, who acted and its tokens."""
        self.query_one("#step-dialog").border_title = Text(step_title(self.step))
        self.query_one("#step-body").focus()

    def action_close(self) -> None:
        """Back to the steps."""
        self.dismiss(None)
