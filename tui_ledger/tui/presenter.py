"""Presenter mode (`ledger-tui --present FILE`): one idea per screen, in large text, for a talk.

`PresentingApp` is the normal `LedgerApp` with `PresenterScreen` pushed over it: the app loads
and computes as it always does (its pipeline, its comparison, its options), and the presenter
draws that very comparison, step by step (`present_steps`, `present_slides`). Space or →
goes forward, ← back; on the last step Enter (or Space) pops the presenter and leaves the
app on the same file, already loaded; q quits at any step, ? shows the keys.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from tui_ledger.accounting.ledger import Comparison
from tui_ledger.text.textsafe import safe_text
from tui_ledger.trajectory.failure_walk import failure_walk
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.arrangement import NARROW_BELOW
from tui_ledger.tui.screens.present_slides import body, keys_hint, progress, title
from tui_ledger.tui.screens.present_steps import (
    STEPS,
    FailureStep,
    Presentation,
    failure_group,
    failure_step,
    noise_line,
    presentation,
)
from tui_ledger.tui.screens.present_vouched import VouchedStep
from tui_ledger.tui.theme import KEY_STYLE, LABEL_STYLE, MISSING_STYLE, TITLE_STYLE
from tui_ledger.tui.vouching import VouchedPipeline

_KEYS: tuple[tuple[str, str], ...] = (
    ("Space, →", "next step"),
    ("←", "previous step"),
    ("Enter", "next step; on the last, open the app on the same file"),
    ("q", "quit"),
    ("?", "these keys"),
)


class PresenterKeys(ModalScreen[None]):
    """The presenter's keys; any key closes it."""

    DEFAULT_CSS = """
    PresenterKeys { align: center middle; }
    PresenterKeys > Static {
        width: auto; max-width: 90%; height: auto; padding: 1 2;
        border: round $accent; background: $panel;
    }
    """

    def compose(self) -> ComposeResult:
        text = Text()
        text.append("Presenter keys\n\n", style=TITLE_STYLE)
        for key, what in _KEYS:
            text.append(f"{key:>9}  ", style=KEY_STYLE)
            text.append(f"{what}\n")
        text.append("\nany key closes this", style=LABEL_STYLE)
        yield Static(text)

    def on_key(self) -> None:
        self.dismiss()


class Slide(Widget):
    """The step's body, laid out for the cells it has."""

    DEFAULT_CSS = """
    Slide { height: 1fr; }
    """

    def __init__(self, presenter: PresenterScreen, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._presenter = presenter

    def render(self) -> RenderableType:
        shown = self._presenter.shown
        if shown is None:
            return Text(self._presenter.waiting_text(), style=MISSING_STYLE)
        presenter = self._presenter
        return body(
            presenter.step,
            shown,
            self.size.width,
            self.size.height,
            presenter.source,
            presenter.failure,
            presenter.vouched,
        )


class PresenterScreen(Screen[None]):
    """The steps of the talk over the app; reads the app's comparison."""

    DEFAULT_CSS = """
    PresenterScreen { layout: vertical; background: $background; padding: 0 1; }
    PresenterScreen #present-top { height: 1; }
    PresenterScreen #present-source { width: 1fr; color: $text-muted; }
    PresenterScreen #present-progress { width: auto; }
    PresenterScreen #present-title { height: auto; margin: 1 0 1 0; }
    PresenterScreen #present-keys { height: 1; }
    """

    BINDINGS: ClassVar = [
        Binding("space", "forward", "next", show=False),
        Binding("right", "next", "next", show=False),
        Binding("left", "back", "back", show=False),
        Binding("enter", "forward", "open the app", show=False),
        Binding("q", "app.quit", "quit", show=False),
        Binding("question_mark,f1", "keys", "keys", show=False),
    ]

    index: reactive[int] = reactive(0)
    """Which step is shown (an index into `present_steps.STEPS`)."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: Presentation | None = None
        self._figures_of: object = None  # the comparison `_shown` was made from
        self.failure: FailureStep | str | None = None
        """The failure step's content (text while its attempt is read; None before figures)."""
        self._failure_of: object = None  # the comparison `failure` is read for

    @property
    def step(self) -> str:
        return STEPS[self.index]

    @property
    def ledger_app(self) -> LedgerApp:
        app = self.app
        assert isinstance(app, LedgerApp)
        return app

    @property
    def source(self) -> str:
        """The file (or files) the talk is about, as given."""
        app = self.ledger_app
        if app.demo:
            return "the bundled demo"
        return safe_text(", ".join(app.paths))

    @property
    def shown(self) -> Presentation | None:
        """The steps' content, from the app's comparison as it is now (None before the first
        figures); made again only when the comparison is another one."""
        comparison = self.ledger_app.comparison
        if comparison is None or self.ledger_app.pipeline.partial is not None:
            return None
        if comparison is not self._figures_of:
            self._shown, self._figures_of = presentation(comparison, noise_line), comparison
        if comparison is not self._failure_of:
            self._read_failure(comparison)
        return self._shown

    def _read_failure(self, comparison: Comparison) -> None:
        """Read one failure of the group the talk is about, through the trajectory reader, in a
        thread (a harness's log may be large); the step shows it once read."""
        self._failure_of = comparison
        group = failure_group(comparison)
        ledger = self.ledger_app.ledger
        if group is None or ledger is None:
            self.failure = failure_step(None, group)
            return
        self.failure = f"Reading one of {safe_text(group)}'s failures…"
        attempts, by, inputs = ledger.attempts, comparison.by, list(self.ledger_app.paths)

        def read() -> tuple[object, FailureStep | str]:
            # A reader's unforeseen failure leaves this step saying so; the talk goes on (and
            # the worker ends well: nothing else is wrong with the app).
            try:
                walk = failure_walk(attempts, by, group, inputs)
            except Exception as error:
                return comparison, f"Could not read the failed attempt: {safe_text(error)}"
            return comparison, failure_step(walk, group)

        self.run_worker(
            read, thread=True, exclusive=True, group="present-failure", exit_on_error=False
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != "present-failure":
            return
        if event.state == WorkerState.ERROR:
            self.failure = f"Could not read the failed attempt: {safe_text(worker.error)}"
            if self.is_mounted:
                self.redraw()
            return
        if event.state != WorkerState.SUCCESS:
            return
        result = worker.result
        if isinstance(result, tuple) and result[0] is self._failure_of:
            self.failure = result[1]
            if self.is_mounted:
                self.redraw()

    @property
    def vouched(self) -> VouchedStep | str:
        """The vouched step's content, from the app's audit (text until it is in)."""
        pipeline = self.ledger_app.pipeline
        if not isinstance(pipeline, VouchedPipeline):
            return "The grader's audit runs on a local ledger (not on Spark)."
        audit, ranking = pipeline.audit, pipeline.ranking
        if audit is None or ranking is None:
            if pipeline.audit_error:
                return f"The grader's audit could not run: {pipeline.audit_error}"
            return "The grader's audit is reading every attempt's log…"
        return VouchedStep(ranking, len(audit.tampered), audit.note)

    def waiting_text(self) -> str:
        return f"Reading {self.source}…"

    def compose(self) -> ComposeResult:
        with Horizontal(id="present-top"):
            yield Static(id="present-source")
            yield Static(id="present-progress")
        with Vertical():
            yield Static(id="present-title")
            yield Slide(self, id="present-body")
        yield Static(id="present-keys")

    def on_mount(self) -> None:
        self.redraw()

    def watch_index(self) -> None:
        if self.is_mounted:
            self.redraw()

    def on_resize(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Draw the step again (a step moved, new figures arrived, the terminal resized)."""
        step = self.step
        source = Text.assemble(("ledger-tui", TITLE_STYLE), (f"  {self.source}", LABEL_STYLE))
        self.query_one("#present-source", Static).update(source)
        self.query_one("#present-progress", Static).update(progress(step))
        width = max(self.size.width - 2, 1)
        self.query_one("#present-title", Static).update(title(step, self.shown, width))
        self.query_one("#present-keys", Static).update(keys_hint(step))
        self.query_one(Slide).refresh(layout=True)

    def action_next(self) -> None:
        """Forward one step (not past the last)."""
        self.index = min(self.index + 1, len(STEPS) - 1)

    def action_forward(self) -> None:
        """Forward one step; from the last, into the app."""
        if self.index == len(STEPS) - 1:
            self.open_app()
        else:
            self.action_next()

    def action_back(self) -> None:
        self.index = max(self.index - 1, 0)

    def action_keys(self) -> None:
        self.app.push_screen(PresenterKeys())

    def open_app(self) -> None:
        """Leave the talk for the app, on the same file with the same options."""
        self.dismiss()


class PresentingApp(LedgerApp):
    """The app with the presenter over it (`--present`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.presenter: PresenterScreen | None = PresenterScreen()

    def on_mount(self) -> None:
        # After LedgerApp's own on_mount (which loads a small file before the first frame).
        self.call_later(self._present)

    def _present(self) -> None:
        if self.presenter is not None:
            self.push_screen(self.presenter, callback=self._presented)

    def _presented(self, _result: None) -> None:
        self.presenter = None
        narrow = self.size.width < NARROW_BELOW  # the summary's turn first (arrangement)
        (self.turns.first() if narrow else self.table).focus()

    def show_snapshot(self, first: bool) -> None:
        """New figures are in: the app draws them, and so does the presenter."""
        super().show_snapshot(first)
        if self.presenter is not None and self.presenter.is_mounted:
            self.presenter.redraw()

    def show_summary(self) -> None:
        """Figures changed in place (final intervals, the pairwise verdicts): the presenter
        draws them too."""
        super().show_summary()
        if self.presenter is not None and self.presenter.is_mounted:
            self.presenter.redraw()
