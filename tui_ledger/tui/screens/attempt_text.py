"""What the attempt screen says, as text: its header (workflow, task, outcome, tokens by bucket,
cost, duration), the files read fitted to the width, the verdict test by test, the line that
says whether the steps' tokens add up to the ledger's, and the reader's notes. Pure functions
of the attempt's row and what its log held, no widget (`attempt_screen.py` lays them out);
every string from a log or the ledger is literal, terminal-safe text.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from rich.text import Text

from tui_ledger import trajectory
from tui_ledger.schema import COST_COLUMN, LINE_COLUMN, OUTCOME_SYMBOLS, SOURCE_COLUMN
from tui_ledger.text.numbers import MISSING, format_count, format_money, format_tokens
from tui_ledger.text.textsafe import safe_cell, safe_text
from tui_ledger.text.wording import plural
from tui_ledger.trajectory import BUCKETS, Step, Verdict
from tui_ledger.tui.screens.step_view import BUCKET_WORDS
from tui_ledger.tui.theme import ACCENT, DROP, KEEP, MUTED, TITLE_STYLE

OUTCOME_STYLES = {"passed": KEEP, "failed": DROP, "error": DROP, "timeout": ACCENT}


def _duration(seconds: object) -> str | None:
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds != seconds:
        return None
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"


def head_text(row: Mapping[str, Any], position: int, count: int, width: int = 200) -> Text:
    """Workflow, task, outcome and place in the view; tokens by bucket, cost, duration. The
    first line fits in `width` cells: the place said shorter, then workflow and task cut."""
    text = Text()
    outcome = str(row.get("outcome") or "")
    shown_outcome = f"{OUTCOME_SYMBOLS.get(outcome, '')} {outcome}".strip()
    place = f"   attempt {position + 1:,} of {count:,} in view"
    workflow = safe_text(row.get("workflow"))
    task = None if row.get("task") is None else safe_text(row.get("task"))
    fixed = (len(shown_outcome) + 3 if outcome else 0) + (3 if task is not None else 0)
    if min(len(workflow), 40) + min(len(task or ""), 50) + fixed + len(place) > width:
        place = f"   {position + 1:,}/{count:,}"
    room = max(width - fixed - len(place), 16)
    task_cells = min(len(task or ""), 50)
    workflow_cells = min(len(workflow), 40, max(room - task_cells, room // 2))
    task_cells = min(task_cells, max(room - workflow_cells, 8))
    text.append(safe_cell(row.get("workflow"), workflow_cells), style=TITLE_STYLE)
    if task is not None:
        text.append(" · ", style=MUTED)
        text.append(safe_cell(row.get("task"), task_cells), style="bold")
    if outcome:
        text.append(" · ", style=MUTED)
        text.append(shown_outcome, style=f"bold {OUTCOME_STYLES.get(outcome, '')}")
    text.append(place, style=MUTED)
    text.append("\n")
    # The figures: a line breaks between them, never inside one (`took 30m 00s` stays whole).
    tokens = row.get("tokens")
    figures = [
        Text.assemble(
            ("tokens ", MUTED),
            (format_tokens(tokens) if isinstance(tokens, int) else MISSING, "bold"),
        )
    ]
    buckets = [
        f"{BUCKET_WORDS[name]} {format_tokens(row[name])}"
        for name in BUCKETS
        if isinstance(row.get(name), int)
    ]
    for number, bucket in enumerate(buckets):
        opening = "(" if number == 0 else ""
        closing = ")" if number == len(buckets) - 1 else ""
        figures.append(Text(opening + bucket + closing))
    cost = row.get(COST_COLUMN)
    if isinstance(cost, float):
        figures.append(Text.assemble(("cost ", MUTED), format_money(cost)))
    duration = _duration(row.get("duration_s"))
    if duration:
        figures.append(Text.assemble(("took ", MUTED), duration))
    text.append_text(values_lines(figures, width, buckets=len(buckets)))
    return text


def values_lines(values: list[Text], width: int, *, buckets: int = 0) -> Text:
    """`values` joined by ` · ` (the first of the `buckets` that follow the first value by a
    space: they read as its parenthesis), on as many lines of `width` cells as they need: a
    line breaks between two values, never inside one."""
    text = Text()
    used = 0
    for number, value in enumerate(values):
        joiner = " " if number == 1 and buckets else " · "
        if number and used + len(joiner) + value.cell_len > width:
            text.append("\n")
            used = 0
        elif number:
            text.append(joiner, style="" if number <= buckets else MUTED)
            used += len(joiner)
        text.append_text(value)
        used += value.cell_len
    return text


def fit_path(path: str, room: int) -> str:
    """`path` in at most `room` cells: its start left out (`…/trial/file`) when it is longer,
    at a separator where one is near, so a long path never wraps onto a second line."""
    if room <= 1 or len(path) <= room:
        return path
    tail = path[-(room - 1) :]
    cut = tail.find(os.sep)
    if 0 < cut < len(tail) - 1:
        tail = tail[cut:]
    return "…" + tail


def files_text(files: list[str] | None, row: Mapping[str, Any], width: int | None = None) -> Text:
    """The file(s) read, or where the row came from while the log is being opened; in
    `width` cells when given (a long folder's start left out)."""
    text = Text()

    def room(used: int) -> int:
        return 10**9 if width is None else max(width - used, 20)

    if files is None:
        text.append("opening the log… ", style=f"italic {MUTED}")
    elif files:
        # A trial's files share its folder: name the folder once, then each file below it.
        folder = os.path.commonpath(files) if len(files) > 1 else ""
        names = [os.path.relpath(file, folder) for file in files] if folder else files
        text.append("read ", style=MUTED)
        listed = safe_text(", ".join(names))
        if not folder:
            text.append(fit_path(listed, room(len(text))))
            return text
        if room(len(text) + len(listed) + 4) < 30 and width is not None:
            listed = plural(len(names), "file")  # the folder matters more than the names
        text.append(listed)
        text.append(" in ", style=MUTED)
        text.append(fit_path(safe_text(folder), room(len(text))))
        return text
    source, line = row.get(SOURCE_COLUMN), row.get(LINE_COLUMN)
    if source is not None:
        where = f", line {format_count(line)}" if isinstance(line, int) else ""
        text.append("row from ", style=MUTED)
        shown = trajectory.file_path(str(source))  # a Spark row's `file:` URI as its path
        text.append(fit_path(safe_text(shown), room(len(text) + len(where))))
        text.append(where)
    return text


def verdict_text(verdict: Verdict | None) -> Text:
    """Each test ✔ or ✘ by name, in the harness's order."""
    text = Text()
    if verdict is None:
        return text
    if not verdict.tests:
        text.append("no tests recorded", style=f"italic {MUTED}")
        return text
    passed = sum(1 for test in verdict.tests if test.passed)
    text.append(f"tests {passed}/{len(verdict.tests)} ", style=MUTED)
    for test in verdict.tests:
        mark = ("✔ ", KEEP) if test.passed else ("✘ ", DROP)
        text.append(" ")
        text.append(mark[0], style=f"bold {mark[1]}")
        text.append(safe_cell(test.name, 60))
        if not test.passed and test.result.lower() not in ("failed", "fail", "false"):
            text.append(f" ({safe_cell(test.result, 20)})", style=MUTED)
    return text


def tokens_line(
    steps: list[Step],
    attempt_tokens: object,
    notes: list[str],
    *,
    ended: bool,
    broke: bool,
    so_far: int | None = None,
) -> Text:
    """Whether the steps' tokens add up to the attempt's tokens in the ledger (`so_far`: the
    steps' tokens read so far, while reading or after the log broke: no verdict yet)."""
    tokens = attempt_tokens if isinstance(attempt_tokens, int) else None
    text = Text()
    if ended and not broke and not steps:
        return text  # no steps: the status line says so
    if not ended or broke:
        shown = MISSING if so_far is None else format_tokens(so_far)
        what = "reading" if not ended else "the log broke"
        text.append(f"steps' tokens so far {shown} ({what}: no verdict on the sum)", style=MUTED)
    else:
        word, difference = trajectory.tokens_match(steps, tokens)
        ledger = MISSING if tokens is None else format_tokens(tokens)
        total = trajectory.steps_tokens(steps)
        if word == trajectory.EQUAL:
            text.append("✔ equal", style=f"bold {KEEP}")
            text.append(f": the steps' tokens add up to the ledger's {ledger}")
        elif word == trajectory.NOT_RECORDED:
            text.append("not recorded per step", style=f"bold {ACCENT}")
            text.append(f": the log keeps no tokens per step (the ledger says {ledger})")
        elif difference is None:
            text.append("differs", style=f"bold {ACCENT}")
            text.append(f": the steps add up to {format_tokens(total)}; the ledger has no usage")
        else:
            text.append(f"differs by {difference:+,}", style=f"bold {ACCENT}")
            text.append(f": the steps add up to {format_tokens(total)}, the ledger says {ledger}")
    for note in notes:
        text.append(" · ", style=MUTED)
        text.append(safe_text(note), style=MUTED)
    return text


def notes_text(notes: list[str]) -> Text:
    """The reader's notes on the tokens, one a line."""
    text = Text()
    for number, note in enumerate(notes):
        if number:
            text.append("\n")
        text.append("· ", style=MUTED)
        text.append(safe_text(note))
    return text
