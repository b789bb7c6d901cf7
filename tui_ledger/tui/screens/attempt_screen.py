"""Inside one attempt: what it was, how it was judged, and its steps (Enter or `o` on the ledger).

`AttemptScreen` covers the ledger, which stays as it was underneath (cursor, scroll, filter,
view): Esc goes back to it. The header says the attempt's workflow, task, outcome, tokens by
bucket, cost, duration and the files read; the verdict lists each test ✔/✘ in the harness's
order, with the grader's output and the task's instruction folded; then the steps, one a line
(`widgets.steps_table.StepsTable`), and whether their tokens add up to the ledger's (the reader's
notes on them in a fold, open on a tall terminal). The header and the files' line are fitted to
the width; the count of steps sits below the top, so a short terminal never hides it.

The log is read in a thread worker (`tui_ledger.trajectory.open_attempt`, then its steps one by
one), which posts the steps in batches: the first as soon as it is read, so a large log shows
its first steps at once while the rest is read, and the steps are held once, by the table. A
log that breaks (`TrajectoryError`, possibly after some steps) is one line on the screen; the
app stays up. The worker is cancelled when the screen closes or `[` / `]` move to another
attempt of the ledger's view (through `walk`, which the app gives: the screen never reads the
app). Every string from a log or the ledger is shown as literal, terminal-safe text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Collapsible, Footer, Input, Label, Static
from textual.worker import get_current_worker

from tui_ledger import trajectory
from tui_ledger.text.textsafe import safe_cell, safe_text
from tui_ledger.text.wording import first_line, plural
from tui_ledger.trajectory import Step
from tui_ledger.tui import commands
from tui_ledger.tui.screens.attempt_text import (
    files_text,
    head_text,
    notes_text,
    tokens_line,
    verdict_text,
)
from tui_ledger.tui.screens.detail_screen import DetailScreen, FieldList
from tui_ledger.tui.screens.screens import HelpScreen
from tui_ledger.tui.screens.step_view import StepScreen, safe_block, step_matches
from tui_ledger.tui.theme import ACCENT, DROP, ERROR_STYLE, KEY_STYLE, MUTED
from tui_ledger.tui.widgets.steps_table import StepsTable

Walk = Callable[[int], "tuple[dict[str, Any], int, int] | None"]
"""The app's walk through its view: `walk(delta)` moves the ledger's cursor `delta` attempts
and returns (the attempt's fields, its row, the rows in the view), or None past either end."""

BATCH_SECONDS = 0.1
"""After the first batch (posted as soon as its first step is read), a batch at most this often."""
BATCH_STEPS = 2000
"""...or as soon as it holds this many steps."""

TALL = 40
"""Terminal rows from which the reader's notes on the tokens show unfolded."""


# --------------------------------------------------------------------------- what the worker posts


class _Report(Message):
    """Something the reading worker found, for the read numbered `read`."""

    def __init__(self, read: int) -> None:
        self.read = read
        super().__init__()


class AttemptOpened(_Report):
    """The log's header: the files, the instruction, the verdict, what was looked for."""

    def __init__(self, read: int, opened: trajectory.Opened) -> None:
        super().__init__(read)
        self.files = list(opened.files)
        self.instruction = opened.instruction
        self.verdict = opened.verdict
        self.looked_for = list(opened.looked_for)
        self.notes = list(opened.notes)


class StepsRead(_Report):
    """A batch of steps, in the log's order."""

    def __init__(self, read: int, steps: list[Step]) -> None:
        super().__init__(read)
        self.steps = steps


class ReadEnded(_Report):
    """The log is read to its end, or broke (`error`: one line); `notes`: the reader's notes
    as they stand then (a reader says what it found about the tokens once every step is read)."""

    def __init__(self, read: int, error: str | None, notes: list[str] | None = None) -> None:
        super().__init__(read)
        self.error = error
        self.notes = notes


# --------------------------------------------------------------------------- the screen


class AttemptHelpScreen(ModalScreen[None]):
    """The attempt screen's keys, from the registry."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "close", "close", show=False)
    ]

    def compose(self) -> ComposeResult:
        """The keys, each with what it does."""
        sections = dict(commands.help_entries())
        moves = Text.assemble(
            ("\nMove  ", "bold underline"),
            ("↑↓ j k", KEY_STYLE),
            " a step · ",
            ("PgUp PgDn", KEY_STYLE),
            " a screen · ",
            ("g Home  G End", KEY_STYLE),
            " the first and last · ",
            ("Tab", KEY_STYLE),
            " the folded grader output and instruction (Enter unfolds)",
        )
        with Vertical(id="attempt-help-dialog", classes="dialog"):
            with VerticalScroll(id="attempt-help-body"):
                yield Static(HelpScreen.keys_table(sections, [commands.ATTEMPT]), id="attempt-keys")
                yield Static(moves, id="attempt-moves")
            yield Label(Text("Esc, q or ? closes", style=MUTED), classes="dialog-hint")

    def on_mount(self) -> None:
        """Title the frame."""
        self.query_one("#attempt-help-dialog").border_title = "the attempt screen's keys"

    def action_close(self) -> None:
        """Back to the attempt."""
        self.dismiss(None)


class AttemptScreen(Screen[None]):
    """One attempt: header, verdict, its steps read in a worker; Esc back to the ledger."""

    BINDINGS: ClassVar[list[BindingType]] = commands.bindings(commands.ATTEMPT_SCOPE)
    is_attempt_screen = True

    def __init__(
        self,
        row: Mapping[str, Any],
        position: int,
        count: int,
        walk: Walk,
        inputs: Sequence[str] = (),
        cap: int | None = None,
    ) -> None:
        """`row`: the attempt's fields, at `position` of the `count` rows of the ledger's view;
        `inputs`: the paths the ledger was loaded from (its sources are named below them);
        `cap`: the token budget on (`B`), whose stopping step is marked."""
        super().__init__()
        self._cap = cap
        self.row: dict[str, Any] = dict(row)
        self._inputs = list(inputs)
        self.position = position
        self.count = count
        self._walk = walk
        self._read = 0  # which read the worker's reports belong to (`[` and `]` start another)
        self.files: list[str] | None = None
        self.notes: list[str] = []
        self.looked_for: list[str] = []
        self.ended = False
        self.error: str | None = None
        self.query_text = ""
        self._needle = ""
        self._matches = 0  # steps read so far that match the search
        self._head = Static(id="attempt-head")
        self._files = Static(id="attempt-files")
        self._verdict = Static(id="attempt-verdict")
        self._output = Static(id="attempt-output-text")
        self._instruction = Static(id="attempt-instruction-text")
        self._tokens = Static(id="attempt-tokens")
        self._notes = Static(id="attempt-notes-text")
        self._notes_shown: list[str] | None = None
        self._status = Static(id="attempt-status")
        self.steps = StepsTable(id="attempt-steps")
        self._search = Input(placeholder="search the steps (Enter; Esc cancels)", id="step-search")

    def compose(self) -> ComposeResult:
        """Header, verdict, the folded texts, the honest-tokens line, the steps, the footer."""
        with Vertical(id="attempt-top"):
            yield self._head
            yield self._files
            yield self._verdict
            with Collapsible(title="grader output", collapsed=True, id="attempt-output"):
                yield self._output
            with Collapsible(title="instruction", collapsed=True, id="attempt-instruction"):
                yield self._instruction
            yield self._tokens
            with Collapsible(title="notes", collapsed=True, id="attempt-notes"):
                yield self._notes
        # Below the top, which may be cut on a small terminal: the count of steps always shows.
        yield self._status
        yield self.steps
        yield Vertical(id="attempt-fields")
        yield self._search
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Show what the row says at once, then read the log."""
        self._start()

    def on_unmount(self) -> None:
        """Stop reading: nobody will look at these steps."""
        self.workers.cancel_node(self)

    # ------------------------------------------------------------------ reading

    def _start(self) -> None:
        """Show the row's attempt and start reading its log (cancelling any read under way)."""
        self._read += 1
        self.files, self.notes, self.looked_for = None, [], []
        self.ended, self.error = False, None
        self.query_text = self._needle = ""
        self._search.display = False
        tokens = self.row.get("tokens")
        self.steps.reset(tokens if isinstance(tokens, int) and tokens > 0 else None)
        self.steps.cap = self._cap
        self.steps.display = True
        self.query_one("#attempt-fields").remove_children()
        self.query_one("#attempt-fields").display = False
        self._notes_shown = None
        for fold in ("#attempt-output", "#attempt-instruction", "#attempt-notes"):
            self.query_one(fold, Collapsible).display = False
            self.query_one(fold, Collapsible).collapsed = True
        self._verdict.update(Text(""))
        self._verdict.display = False
        self._show_head()
        self._show_progress()
        self.steps.focus()
        self._read_log(trajectory.openable(self.row, self._inputs), self._read)

    @work(thread=True, exclusive=True, group="attempt-log", exit_on_error=False)
    def _read_log(self, row: dict[str, Any], read: int) -> None:
        """Open the log, then post its steps in batches (the first at once) until its end."""
        worker = get_current_worker()
        steps: Iterator[Step] | None = None
        batch: list[Step] = []
        error: str | None = None
        opened: trajectory.Opened | None = None
        try:
            opened = trajectory.open_attempt(row)
            steps = opened.steps
            opened.steps = iter(())  # the steps travel in batches, never with the header
            self.post_message(AttemptOpened(read, opened))
            posted = False
            last = time.monotonic()
            for step in steps:
                if worker.is_cancelled:
                    return
                batch.append(step)
                now = time.monotonic()
                if not posted or len(batch) >= BATCH_STEPS or now - last >= BATCH_SECONDS:
                    self.post_message(StepsRead(read, batch))
                    batch, posted, last = [], True, now
        except trajectory.TrajectoryError as broke:
            error = first_line(broke)
        except Exception as bug:  # a reader's bug must not take the ledger down
            error = f"could not read this attempt's log: {type(bug).__name__}: {first_line(bug)}"
        finally:
            close = getattr(steps, "close", None)
            if callable(close):
                close()
        if batch:  # the steps read before the end, or before the log broke
            self.post_message(StepsRead(read, batch))
        self.post_message(ReadEnded(read, error, None if opened is None else list(opened.notes)))

    @on(AttemptOpened)
    def _opened(self, report: AttemptOpened) -> None:
        if report.read != self._read:
            return
        self.files, self.notes, self.looked_for = report.files, report.notes, report.looked_for
        self._show_files()
        if self.files or report.verdict.tests:
            self._verdict.update(verdict_text(report.verdict))
            self._verdict.display = True
        output = report.verdict.output
        if output and output.strip():
            fold = self.query_one("#attempt-output", Collapsible)
            fold.title = f"grader output ({plural(output.count(chr(10)) + 1, 'line')})"
            self._output.update(safe_block(output))
            fold.display = True
        if report.instruction and report.instruction.strip():
            fold = self.query_one("#attempt-instruction", Collapsible)
            lines = report.instruction.count("\n") + 1
            fold.title = f"instruction ({plural(lines, 'line')})"
            self._instruction.update(safe_block(report.instruction))
            fold.display = True

    @on(StepsRead)
    def _got_steps(self, report: StepsRead) -> None:
        if report.read != self._read:
            return
        self.steps.add_steps(report.steps)
        if self._needle:
            self._matches += sum(1 for step in report.steps if step_matches(step, self._needle))
        self._show_progress()

    @on(ReadEnded)
    def _ended(self, report: ReadEnded) -> None:
        if report.read != self._read:
            return
        self.ended, self.error = True, report.error
        if report.notes is not None:
            self.notes = report.notes
        if self.files is None:
            self.files = []
            self._show_files()
        self._show_progress()
        if not self.steps.row_count:
            self._show_fields()

    def _show_head(self) -> None:
        width = self._head.size.width
        self._head.update(head_text(self.row, self.position, self.count, width or 200))
        self._show_files()

    def _show_files(self) -> None:
        width = self._files.size.width
        self._files.update(files_text(self.files, self.row, width if width > 0 else None))

    def on_resize(self) -> None:
        """The header and the files' line are fitted to the width."""
        self.call_after_refresh(self._show_head)

    def _show_progress(self) -> None:
        """The honest-tokens line, and how far the reading is (or why it stopped)."""
        table = self.steps
        broke = self.error is not None
        self._show_notes()
        self._tokens.update(
            line := tokens_line(
                table.steps,
                self.row.get("tokens"),
                [],
                ended=self.ended,
                broke=broke,
                so_far=table.recorded_total(),
            )
        )
        self._tokens.display = bool(line)
        status = Text()
        count = table.row_count
        if broke:
            status.append("✘ ", style=f"bold {DROP}")
            status.append(safe_text(self.error), style=ERROR_STYLE)
            if count:
                status.append(f" (after {plural(count, 'step')})", style=MUTED)
        elif not self.ended:
            status.append(f"reading… {plural(count, 'step')} so far", style=f"italic {MUTED}")
        elif not count:
            if self.looked_for:
                status.append("No log found for this attempt: looked for ", style=ACCENT)
                status.append(safe_text("; ".join(self.looked_for)))
            else:
                status.append("This log keeps no steps.", style=ACCENT)
        else:
            status.append(plural(count, "step"), style="bold")
            errors = table.error_count
            if errors:
                status.append(f" · {plural(errors, 'error')} (e)", style=DROP)
            if table.costliest_first:
                status.append(" · costliest first (c: the log's order)", style=MUTED)
            stop = table.stop_position()
            if stop is not None and self._cap is not None:
                index = table.steps[stop].index
                status.append(f" · ✂ the cap of {self._cap:,} stops it at step {index}", style=DROP)
        if self.query_text:
            said = f"{self._matches:,} match{'es' if self._matches != 1 else ''}"
            status.append(f" · {said} for ", style=MUTED)
            status.append(safe_cell(self.query_text, 30), style=ACCENT)
            status.append(" (n N)", style=MUTED)
        self._status.update(status)

    def _show_notes(self) -> None:
        """The reader's notes on the tokens, folded under the tokens line: open on a tall
        terminal, closed on a short one (where they would push the steps off the screen)."""
        if self.notes == self._notes_shown:
            return
        self._notes_shown = list(self.notes)
        fold = self.query_one("#attempt-notes", Collapsible)
        if not self.notes:
            fold.display = False
            return
        fold.title = f"{plural(len(self.notes), 'note')} on the tokens"
        self._notes.update(notes_text(self.notes))
        if not fold.display:
            fold.collapsed = self.app.size.height < TALL
            fold.display = True

    def _show_fields(self) -> None:
        """No steps: the row's every field where the steps would be."""
        self.steps.display = False
        holder = self.query_one("#attempt-fields")
        holder.remove_children()
        fields = FieldList(self.row, id="attempt-fields-list")
        holder.mount(fields)
        holder.display = True
        fields.focus()

    # ------------------------------------------------------------------ keys

    def action_step_open(self) -> None:
        """Enter: the step under the cursor, whole."""
        step = self.steps.current_step()
        if step is not None:
            self.app.push_screen(StepScreen(step, self.query_text))

    @on(StepsTable.Chosen)
    def _chosen(self, event: StepsTable.Chosen) -> None:
        self.app.push_screen(StepScreen(event.step, self.query_text))

    def action_step_search(self) -> None:
        """/: search the steps' text, tool calls and observations."""
        self._search.display = True
        self._search.value = self.query_text
        self.set_focus(self._search)

    @on(Input.Submitted, "#step-search")
    def _searched(self, event: Input.Submitted) -> None:
        self.query_text = event.value.strip()
        self._needle = self.query_text.casefold()
        self._search.display = False
        self.steps.focus()
        if not self._needle:
            self.steps.mark(None)
            self._show_progress()
            return
        needle = self._needle
        self._matches = sum(1 for step in self.steps.steps if step_matches(step, needle))
        self.steps.mark(lambda step: step_matches(step, needle))
        current = self.steps.current_step()
        if current is None or not step_matches(current, needle):
            self._next_match(forward=True)
        self._show_progress()

    def _next_match(self, *, forward: bool) -> None:
        if not self._needle:
            self.notify("Search first: / then a word.", timeout=3, markup=False)
            return
        needle = self._needle
        if self.steps.find(lambda step: step_matches(step, needle), forward=forward) is None:
            self.notify(
                f"No step mentions {safe_cell(self.query_text, 40)}.", timeout=3, markup=False
            )

    def action_step_next_match(self) -> None:
        """n: the next step that matches the search."""
        self._next_match(forward=True)

    def action_step_previous_match(self) -> None:
        """N: the previous step that matches the search."""
        self._next_match(forward=False)

    def action_step_next_error(self) -> None:
        """e: the next step that failed."""
        if self.steps.find(lambda step: step.error) is None:
            self.notify("No step failed.", timeout=3, markup=False)

    def action_step_order(self) -> None:
        """c: costliest steps first, or the log's order again."""
        self.steps.set_costliest_first(not self.steps.costliest_first)
        self._show_progress()

    def _go(self, delta: int) -> None:
        found = self._walk(delta)
        if found is None:
            where = "first" if delta < 0 else "last"
            self.notify(f"This is the {where} attempt of the view.", timeout=3, markup=False)
            return
        self.workers.cancel_group(self, "attempt-log")
        self.row, self.position, self.count = found
        self._start()

    def action_attempt_previous(self) -> None:
        """[: the previous attempt of the ledger's view."""
        self._go(-1)

    def action_attempt_next(self) -> None:
        """]: the next attempt of the ledger's view."""
        self._go(+1)

    def action_attempt_fields(self) -> None:
        """i: the row's every field (the detail panel)."""
        self.app.push_screen(DetailScreen.of_attempt(self.row, self.position))

    def action_attempt_help(self) -> None:
        """?: the attempt screen's keys."""
        self.app.push_screen(AttemptHelpScreen())

    def action_attempt_close(self) -> None:
        """Esc: back to the ledger (or out of the search box)."""
        if self._search.has_focus:
            self._search.display = False
            self.steps.focus()
            return
        self.dismiss(None)
