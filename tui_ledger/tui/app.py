"""The interactive ledger: attempts on the left, the summary per group on the right, one view key.

Data flows one way (docs/ARCHITECTURE.md): the loader gives a frame; the filter (query.py) narrows
it; `ledger.compare` computes both views at once; the widgets draw what they are given. Loading
and every recompute run in thread workers, one recompute at a time (a request made meanwhile
waits, the latest only, and the running one's result is not shown); a toggle between KEEP
FAILURES and DROP FAILURES needs no recompute at all, because the comparison already holds both
views. The same goes for the headline metric (tokens or cost per accepted result): the
comparison holds both. A recompute shows delta-method intervals first; the small groups'
bootstrap intervals follow in their own worker (`ledger.with_intervals`).

With a price table (`--prices`, `--flat-price`), the load worker prices every attempt
(`prices.apply_prices`) right after loading. The fair-comparison checks (`checks.run_checks`) run
in their own worker after each recompute, so they never delay the figures.

Run it with `ledger-tui FILE` (cli.py calls `run_app`), or `python -m tui_ledger.tui.app FILE`.
`LEDGER_TUI_TIMINGS=FILE` appends a JSON line per drawn first screen and recompute to FILE
(see `Timings`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import polars as pl
from rich.cells import cell_len
from rich.highlighter import Highlighter
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import CommandPalette
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.theme import Theme
from textual.widget import Widget
from textual.widgets import Footer, Input, Label, Static
from textual.worker import Worker, WorkerState, get_current_worker

from tui_ledger import query
from tui_ledger.ledger import (
    DEFAULT_BY,
    VIEW_GLOSSES,
    VIEW_TITLES,
    Comparison,
    ParetoMetric,
    View,
    compare,
    group_labels,
    in_view,
    per_task,
    with_intervals,
)
from tui_ledger.numbers import format_count, format_money, format_tokens
from tui_ledger.query import FilterError, TextValues, compact_text, filter_term, parse_filter
from tui_ledger.schema import LINE_COLUMN, SOURCE_COLUMN
from tui_ledger.textsafe import safe_text
from tui_ledger.tui import PROCESS_START, commands
from tui_ledger.tui.attempts_table import AttemptsTable
from tui_ledger.tui.summary_pane import DROP_STYLE, KEEP_STYLE, Metric, SummaryPane

# Imported on first use (the first frame must not wait for them): the loader, prices and checks
# (in the workers that use them), the dialogs, the audit screens, exports and --watch.
if TYPE_CHECKING:
    from tui_ledger.checks import Check
    from tui_ledger.load import Ledger
    from tui_ledger.prices import PriceTable
    from tui_ledger.tui.audit_screens import TaskChosen
    from tui_ledger.tui.screens import ExportRequest
    from tui_ledger.tui.watching import WatchUpdate

KEEP_COLOUR = "#2ec4b6"
DROP_COLOUR = "#ff6b57"
GG_SECONDS = 0.6  # the second `g` of `gg` must follow the first within this long
# Files this small (in all) load and compare in a few ms (20-30 ms at 16k rows, most of it fixed
# cost): the first load runs on the screen's thread before the first frame, which then shows the
# figures. A worker, the loading frames and a second full frame cost more than that (~0.1 s of
# a tiny file's start-up).
SMALL_LOAD_BYTES = 256 * 1024
# A group change recomputes on the screen's thread when the last recompute took less (a
# pause this short is less than the GIL contention a worker would meet; see action_group_by).
INLINE_RECOMPUTE_SECONDS = 0.1
SWITCH_INTERVAL_SECONDS = 0.001  # the GIL switch interval while the app runs (see on_mount)

LEDGER_THEME = Theme(
    name="ledger",
    primary="#58a6ff",
    secondary="#bc8cff",
    accent="#e3b341",
    warning="#e3b341",
    error=DROP_COLOUR,
    success=KEEP_COLOUR,
    foreground="#d7dde4",
    background="#0d1117",
    surface="#111821",
    panel="#1b2430",
    dark=True,
    variables={
        "keep": KEEP_COLOUR,
        "drop": DROP_COLOUR,
        "footer-key-foreground": "#e3b341",
        "block-cursor-background": "#2f4a6d",
        "block-cursor-foreground": "#ffffff",
        "block-cursor-text-style": "bold",
        "input-selection-background": "#2f4a6d",
    },
)


# --------------------------------------------------------------------------- state


@dataclass(frozen=True)
class MatchedNotice:
    """What "matched tasks only" left out: a note for the warnings panel (kind matched_tasks)."""

    kind: str
    message: str
    count: int


@dataclass(frozen=True)
class Snapshot:
    """One recompute's result: the filtered attempts (sorted), both views, the comparison.

    The DROP FAILURES rows are filtered only when that view is first shown (`drop_frame`), so a
    recompute in KEEP FAILURES holds no second copy of the attempts.
    """

    generation: int
    matching: pl.DataFrame  # the attempts the filter (and matched tasks only) keeps, file order
    keep_frame: pl.DataFrame  # the same, sorted as asked
    comparison: Comparison
    seconds: float = 0.0
    notice: MatchedNotice | None = None  # set when matched tasks only is on

    @functools.cached_property
    def drop_frame(self) -> pl.DataFrame:
        """The accepted attempts only, in the same order (computed on first use)."""
        return in_view(self.keep_frame, "drop")

    def frame(self, view: View) -> pl.DataFrame:
        """The rows the table shows in a view."""
        return self.keep_frame if view == "keep" else self.drop_frame


TIMINGS_ENV = "LEDGER_TUI_TIMINGS"


@dataclass
class Timings:
    """What the last operations cost, in seconds (read by benchmarks and tests).

    With the environment variable `LEDGER_TUI_TIMINGS=FILE`, the app also appends one JSON line
    per event to FILE: `{"event": "first_screen", "t": ...}` once the first full screen (the
    table and the summary of every group) has been drawn, and `{"event": "recompute", "t": ...,
    "seconds": ..., "rows": ..., "generation": ...}` each time a recompute has been drawn (its
    figures with delta-method intervals), then `{"event": "intervals", "t": ..., "seconds": ...}`
    when the small groups' bootstrap intervals have replaced those. `t` is
    seconds since the process started (`tui_ledger.tui.PROCESS_START`); `seconds` is the
    recompute's own work in its worker.
    """

    load: float = 0.0
    first_screen: float = 0.0
    recompute: float = 0.0
    toggle: float = 0.0
    checks: float = 0.0
    intervals: float = 0.0
    history: list[tuple[str, float]] = field(default_factory=list)

    def record(self, name: str, seconds: float) -> None:
        """Remember one measurement."""
        setattr(self, name, seconds)
        self.history.append((name, seconds))

    def emit(self, event: str, **fields: object) -> None:
        """Append `{"event": event, "t": seconds since process start, **fields}` to the file
        `LEDGER_TUI_TIMINGS` names (nothing without it; a failed write is ignored)."""
        target = os.environ.get(TIMINGS_ENV)
        if not target:
            return
        line = {"event": event, "t": round(time.perf_counter() - PROCESS_START, 6), **fields}
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(line) + "\n")
        except OSError:
            pass


# --------------------------------------------------------------------------- widgets

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

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._view: View = "keep"

    @property
    def view(self) -> View:
        """The view shown."""
        return self._view

    def show(self, view: View) -> None:
        """Switch the badge to a view."""
        self._view = view
        self.set_class(view == "drop", "-drop")
        self.refresh(layout=True)

    def _big(self) -> bool:
        return self.app.size.width >= 140

    def get_content_width(self, container: Any, viewport: Any) -> int:
        """Wide enough for the big letters and the gloss, or for the words alone."""
        words = VIEW_TITLES[self._view]
        gloss = max(cell_len(VIEW_TITLES[self._view]), cell_len(self._gloss()))
        if self._big():
            return cell_len(big_words(words)[0]) + 3 + gloss + 2
        return gloss + 4

    def _gloss(self) -> str:
        return f"{VIEW_GLOSSES[self._view]}: {VIEW_SENTENCES[self._view]}"

    def render(self) -> Text:
        """Big letters, then the name in words and what it means."""
        style = KEEP_STYLE if self._view == "keep" else DROP_STYLE
        words = VIEW_TITLES[self._view]
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


class ErrorSpan(Highlighter):
    """Underlines the part of the filter a parse error points at."""

    def __init__(self) -> None:
        self.span: tuple[int, int] | None = None

    def highlight(self, text: Text) -> None:
        """Mark `span` in red with a curly underline."""
        if self.span is not None:
            start, end = self.span
            end = max(end, start + 1)
            if start >= len(text.plain):
                text.append(" ")  # point past the end (e.g. a missing value)
            text.stylize("bold underline #ff6b57", start, end)


class FilterInput(Input):
    """The filter box: Esc clears it and returns to the table."""

    BINDINGS: ClassVar = [
        Binding("escape", "clear_and_leave", "clear filter", show=False),
        Binding("down", "leave", "to the table", show=False),
    ]

    class Left(Message):
        """The user left the filter box (Esc or ↓); the app puts focus back on the table."""

    def action_clear_and_leave(self) -> None:
        """Esc: clear the filter, back to the table."""
        self.value = ""
        self.post_message(self.Left())

    def action_leave(self) -> None:
        """↓: back to the table, keeping the filter."""
        self.post_message(self.Left())


# --------------------------------------------------------------------------- the app


def _nothing() -> None:
    """What a finished worker is left holding in place of its call."""


class LedgerApp(App[int]):
    """ledger-tui: a filterable table of attempts beside a live summary per workflow."""

    CSS_PATH = "ledger.tcss"
    TITLE = "ledger-tui"
    BINDINGS: ClassVar = commands.bindings()
    COMMANDS: ClassVar = {commands.LedgerCommands} | App.COMMANDS
    COMMAND_PALETTE_BINDING = "ctrl+p"

    def __init__(
        self,
        paths: Sequence[str],
        *,
        demo: bool = False,
        load_options: dict[str, Any] | None = None,
        watch_files: bool = False,
    ) -> None:
        super().__init__()
        self.paths = [str(path) for path in paths]
        self.demo = demo
        self.watch_files = watch_files
        """`--watch`: follow the files and show attempts as they are appended (tui/watching.py)."""
        options = {k: v for k, v in (load_options or {}).items() if v is not None}
        # Not a `load()` option: the load worker prices the attempts once they are read.
        self.prices: PriceTable | None = options.pop("prices", None)
        self.load_options = options
        self.register_theme(LEDGER_THEME)
        self.theme = "ledger"
        self.timings = Timings()
        self._started = time.perf_counter()
        self._switch_interval = sys.getswitchinterval()
        self._ledger: Ledger | None = None  # its `attempts` carry the costs, once priced
        self._price_warnings: list[Any] = []
        self._checks: list[Check] | None = None  # for the snapshot on screen, once computed
        self._checks_generation = -1
        self._metric: Metric = "tokens"
        self._matched_only = False
        self._workflow_count: int | None = 0  # None: until the first comparison counts them
        self._snapshot: Snapshot | None = None
        self._generation = 0
        self._view: View = "keep"
        self._by: tuple[str, ...] = DEFAULT_BY
        self._sort: tuple[str, bool] | None = None
        self._filter_text = ""
        self._filter_expr: pl.Expr | None = None
        self._filter_error: FilterError | None = None
        self._focus_label: str | None = None
        self._last_g = 0.0
        self._loading_since: float | None = None
        self._reload_error: str | None = None
        self._first_screen_done = False
        self._error_span = ErrorSpan()
        self._availability: tuple[bool, ...] = ()
        # The distinct values of the loaded attempts' repetitive text columns, for fast text
        # filters (`query.compact_text`); they belong to `_ledger.attempts`, and only to it.
        # `_compacting`: the frame being compacted in a worker, once its figures are drawn.
        self._text_values: TextValues | None = None
        self._compacting: pl.DataFrame | None = None
        self._compacted = False
        # At most one recompute runs at a time (a thread cannot be stopped, and each holds its
        # frames): a request made meanwhile waits here (the latest only; True = sort only).
        self._recompute_running = False
        self._pending: bool | None = None
        self._recompute_now = False  # the next recompute on this thread (`_load_now`)
        self._figures_stale = True
        self._intervals_for: Comparison | None = None  # its final intervals are being computed
        self.error_message: str | None = None
        """Why the app gave up (a load error), printed by `run_app` after the screen is gone."""
        # The widgets, kept by reference: `App.query_one` searches only the active screen, and
        # work finishing behind a dialog still has to reach them.
        self._title = Static(id="title")
        self._counts = Static(id="counts")
        self._badge = ViewBadge(id="view-badge")
        self._filter_input = FilterInput(
            id="filter",
            placeholder='type to filter: lean  tokens>1000  -failed  task:"fix login"',
            highlighter=self._error_span,
            compact=True,
            select_on_focus=False,
        )
        self._filter_status = Static(id="filter-status")
        self._table = AttemptsTable(id="attempts")
        self._summary = SummaryPane(id="summary")
        self._body = Horizontal(self._table, self._summary, id="body")

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        """Header, filter line, the two panes, footer."""
        with Horizontal(id="header"):
            with Vertical(id="title-block"):
                yield self._title
                yield self._counts
            yield self._badge
        with Horizontal(id="filter-bar"):
            yield Label("filter ▸ ", id="filter-label")
            yield self._filter_input
            yield self._filter_status
        yield self._body
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Draw the empty frame at once, then load in a worker."""
        self._show_title()
        self.table.border_title = "Attempts"
        self.summary.border_title = "Summary"
        self.table.focus()
        # Recomputes run in worker threads, and each makes a few dozen small polars calls that
        # need the GIL back when they return. While this thread draws (a dialog closing
        # repaints the whole screen), Python's default 5 ms switch interval makes every such
        # return wait: `compare` at 1M rows took 235 ms beside a busy thread instead of 56.
        # At 1 ms it takes 150 ms; drawing is not measurably slower. (`on_unmount` puts back
        # the interval read in `__init__`.)
        sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
        self._start_load(first=True)
        if self.watch_files:
            from tui_ledger.tui.watching import start_watching

            start_watching(
                self,
                self.paths,
                self.load_options,
                prepare=self._prepared,
                on_change=self._watched,
                on_error=self._watch_failed,
            )

    def on_unmount(self) -> None:
        sys.setswitchinterval(self._switch_interval)

    # ------------------------------------------------------------------ widgets

    @property
    def table(self) -> AttemptsTable:
        """The attempts table."""
        return self._table

    @property
    def summary(self) -> SummaryPane:
        """The summary pane."""
        return self._summary

    @property
    def filter_input(self) -> FilterInput:
        """The filter box."""
        return self._filter_input

    # ------------------------------------------------------------------ state for commands

    @property
    def loaded(self) -> bool:
        """Whether attempts are on screen."""
        return self._snapshot is not None

    @property
    def on_main_screen(self) -> bool:
        """No dialog is open over the ledger (the command palette does not count)."""
        return all(isinstance(screen, CommandPalette) for screen in self.screen_stack[1:])

    @property
    def view(self) -> View:
        """The current view."""
        return self._view

    @property
    def by(self) -> tuple[str, ...]:
        """The summary's group-by columns."""
        return self._by

    @property
    def filter_text(self) -> str:
        """The filter as typed."""
        return self._filter_text

    @property
    def filter_focused(self) -> bool:
        """Whether the filter box has the keyboard."""
        return self._filter_input.has_focus

    @property
    def comparison(self) -> Comparison | None:
        """The comparison on screen."""
        return self._snapshot.comparison if self._snapshot else None

    @property
    def ledger(self) -> Ledger | None:
        """The loaded ledger (its attempts priced, when a price table was given)."""
        return self._ledger

    @property
    def has_cost(self) -> bool:
        """Whether the comparison on screen has cost figures."""
        comparison = self.comparison
        return comparison is not None and comparison.has_cost

    @property
    def metric(self) -> Metric:
        """The summary's headline metric (per accepted result)."""
        return self._metric if self.has_cost else "tokens"

    @property
    def matched_only(self) -> bool:
        """Whether only the tasks every group attempted are compared."""
        return self._matched_only

    @property
    def has_task_column(self) -> bool:
        """Whether the attempts have a task column."""
        return self._ledger is not None and "task" in self._ledger.attempts.columns

    @property
    def grouped_by_task(self) -> bool:
        """Whether the summary groups by task."""
        return "task" in self._by

    @property
    def checks(self) -> list[Check] | None:
        """The fair-comparison checks of the attempts on screen (None until computed)."""
        return self._checks

    def cell_under_cursor(self) -> tuple[str, object] | None:
        """(column, value) under the attempts table's cursor."""
        if not self.loaded:
            return None
        return self.table.current_value()

    def column_under_cursor(self) -> str | None:
        """The attempts table's current column name."""
        if not self.loaded:
            return None
        names = self.table.column_names
        column = self.table.cursor_column
        return names[column] if 0 <= column < len(names) else None

    def collect_warnings(self) -> list[Any]:
        """Every warning the warnings panel lists.

        Once computed, the fair-comparison checks, which hold the load report's and the price
        table's warnings too (with a per-group breakdown); until then, those warnings as read.
        """
        if self._ledger is None:
            return []
        if self._checks is not None:
            return list(self._checks)
        found: list[Any] = [*self._ledger.report.warnings, *self._price_warnings]
        if self._snapshot is not None and self._snapshot.notice is not None:
            found.append(self._snapshot.notice)
        return found

    def warning_count(self) -> int:
        """How many warnings there are (informational notes not counted)."""
        from tui_ledger.checks import is_warning

        return sum(1 for item in self.collect_warnings() if is_warning(item))

    def note_count(self) -> int:
        """How many informational notes the warnings panel lists besides the warnings."""
        from tui_ledger.checks import is_warning

        return sum(1 for item in self.collect_warnings() if not is_warning(item))

    def _show_warning_count(self) -> None:
        """Redraw the summary's `⚠ N warnings (w)` line (the checks arrived)."""
        if self._snapshot is None:
            return
        self.summary.show_warnings(self.warning_count(), self.note_count(), self._keys_hint())

    def _keys_hint(self) -> str:
        """The audit keys that can run now, for the line under the summary (the footer is full)."""
        parts = []
        if self.has_task_column:
            parts.append("p per task")
        parts.append("c chart")
        if self.has_task_column and not self.grouped_by_task:
            parts.append("m matched tasks" + (" (on)" if self._matched_only else ""))
        if self.has_cost:
            parts.append("$ tokens ⇄ cost")
        return " · ".join(parts)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Registry predicates decide; an unavailable command is greyed out, not hidden."""
        return True if commands.is_available(self, action) else None

    # ------------------------------------------------------------------ loading

    def _start_load(self, *, first: bool) -> None:
        if first and self._small_files():
            self._load_now()
            return
        self._loading_since = time.perf_counter()
        if first:
            self._body.loading = True
        self._show_title()
        self.set_timer(0.2, self._tick_loading)
        self._load_worker(first)

    def _small_files(self) -> bool:
        """Whether the files are few and small enough to load before the first frame."""
        if self.watch_files or not all(os.path.isfile(path) for path in self.paths):
            return False
        return sum(_file_size(path) for path in self.paths) <= SMALL_LOAD_BYTES

    def _load_now(self) -> None:
        """The first load of small files, on the screen's thread (`SMALL_LOAD_BYTES`): what
        `_load_worker` does, then the first recompute, so the first frame shows the figures."""
        import tui_ledger.report  # noqa: F401  (the summary's callout)
        from tui_ledger.load import LoadError, load

        started = time.perf_counter()
        try:
            ledger, price_warnings = self._prepared(load(self.paths, **self.load_options))
            workflows = int(ledger.attempts.get_column("workflow").n_unique())
        except (LoadError, OSError) as error:
            self._load_failed(error, True)
            return
        self._recompute_now = True
        self._loaded(ledger, price_warnings, workflows, time.perf_counter() - started, True)

    def _tick_loading(self) -> None:
        if self._loading_since is None:
            return
        self._show_title()
        self.set_timer(0.2, self._tick_loading)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load_worker(self, first: bool) -> None:
        started = time.perf_counter()
        # What the first full screen needs besides the loader, imported here rather than on the
        # screen's thread: the summary's callout (report) and the warnings count (checks).
        import tui_ledger.checks
        import tui_ledger.report  # noqa: F401
        from tui_ledger.load import LoadError, load

        try:
            ledger, price_warnings = self._prepared(load(self.paths, **self.load_options))
            # A first load is grouped by workflow with no filter: its first comparison counts
            # the workflows (0.12 s saved at 10M rows); a reload counts them here.
            workflows = None if first else int(ledger.attempts.get_column("workflow").n_unique())
        except (LoadError, OSError) as error:
            self.call_from_thread(self._load_failed, error, first)
            return
        seconds = time.perf_counter() - started
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._loaded, ledger, price_warnings, workflows, seconds, first)

    def _prepared(self, ledger: Ledger) -> tuple[Ledger, list[Any]]:
        """The ledger with each attempt's cost (`--prices`, `--flat-price`, or a provider cost
        column), and the price warnings. Runs in a worker thread (the load's, or the watch's).
        """
        from tui_ledger.prices import apply_prices

        priced, price_warnings = apply_prices(ledger.attempts, self.prices)
        return dataclasses.replace(ledger, attempts=_cost_beside_tokens(priced)), list(
            price_warnings
        )

    def _watched(self, update: WatchUpdate[tuple[Ledger, list[Any]]]) -> None:
        """`--watch`: new attempts arrived (or the files were rewritten); filter, view, sort and
        cursor stay, as with `r`."""
        ledger, price_warnings = update.prepared
        # `first=True`: no "reloaded" toast for every appended line; the header counts update.
        self._loaded(ledger, price_warnings, update.workflows, update.seconds, first=True)

    def _watch_failed(self, message: str) -> None:
        """`--watch`: a change could not be read; keep what is shown and say why."""
        self._load_failed(RuntimeError(message), first=False)

    def _load_failed(self, error: Exception, first: bool) -> None:
        self._loading_since = None
        message = safe_text(str(error) or type(error).__name__)
        if first and not self.watch_files:
            # Nothing to show: leave, and let the CLI's caller read the reason on stderr.
            # `run_app` prints it once the screen is torn down: one unwrapped line on stderr
            # (Rich would wrap or crop it to the terminal's width).
            self.error_message = f"ledger-tui: error: {message}"
            self.exit(return_code=2)
            return
        self._reload_error = message
        self._show_title()
        self.say(message, title="reload failed; kept what was loaded", severity="error")

    def _loaded(
        self,
        ledger: Ledger,
        price_warnings: list[Any],
        workflows: int | None,
        seconds: float,
        first: bool,
    ) -> None:
        self.timings.record("load", seconds)
        self._loading_since = None
        self._reload_error = None
        self._ledger = ledger
        self._text_values = self._compacting = None
        self._compacted = False
        self._price_warnings = price_warnings
        self._workflow_count = workflows
        columns = set(ledger.attempts.columns)
        if not set(self._by) <= columns:
            self._by = DEFAULT_BY
        if self._matched_only and ("task" not in columns or "task" in self._by):
            self._matched_only = False
        if self._sort is not None and self._sort[0] not in columns:
            self._sort = None
        self._parse_filter(self._filter_text)
        self._show_title()
        self._recompute()
        if not first:
            self.say(
                f"{format_count(ledger.attempts.height)} attempts", title="reloaded", timeout=3
            )

    # ------------------------------------------------------------------ recompute

    @property
    def busy(self) -> bool:
        """Work for the screen is under way: a load, a recompute (running or waiting), or the
        checks of the figures on screen."""
        return (
            self._loading_since is not None
            or self._recompute_running
            or self._pending is not None
            or self._intervals_for is not None
            or self._compacting is not None
            or (
                self._snapshot is not None
                and self._checks is None
                and self._checks_generation == self._snapshot.generation
            )
        )

    def _recompute(self, *, sort_only: bool = False) -> None:
        """Filter, compare and sort again in a worker.

        One recompute runs at a time: a request made while one runs is remembered (the latest
        only) and starts when it ends; the running one's result is then not shown. So a key
        typed in the filter starts at once, and a fast typist costs at most one recompute
        whose result is dropped, never a queue of them (no debounce wait on every key).
        `sort_only`: the filter and grouping are those on screen, so the matching attempts and
        the comparison are reused and only the sort runs.
        """
        if self._ledger is None:
            return
        self._generation += 1
        if not sort_only:
            self._figures_stale = True  # the figures on screen no longer match the settings
        if self._recompute_running:
            self._pending = sort_only and self._pending is not False
            return
        self._start_recompute(sort_only)

    def _start_recompute(self, sort_only: bool) -> None:
        ledger = self._ledger
        if ledger is None:
            return
        snapshot = self._snapshot
        reuse = sort_only and snapshot is not None and not self._figures_stale
        self._recompute_running = True
        if self._recompute_now:  # `_load_now`, a quick group change: into the next frame
            self._recompute_now = False
            generation = self._generation
            try:
                done = self._recomputed(
                    generation,
                    ledger.attempts,
                    self._filter_expr,
                    self._by,
                    self._sort,
                    self._matched_only,
                    None,
                )
            except pl.exceptions.PolarsError:
                self._recompute_running = False
                self._start_recompute(sort_only)  # the worker, which says what went wrong
                return
            self._recompute_done(generation, done, None)
            return
        if reuse and snapshot is not None:
            self._recompute_worker(
                self._generation, snapshot.matching, None, self._by, self._sort, False, snapshot
            )
            return
        self._recompute_worker(
            self._generation,
            ledger.attempts,
            self._filter_expr,
            self._by,
            self._sort,
            self._matched_only,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Let a finished worker's arguments go now. Textual keeps each finished worker in a
        reference cycle (the worker, its task, the task's context naming the worker) until
        the cyclic garbage collector runs, and the worker keeps the call it ran, with its
        arguments: snapshots and filtered frames, 4 of them (100 MB) at 1M rows while
        someone types a filter."""
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            finished = event.worker
            if hasattr(finished, "_work"):
                finished._work = _nothing

    def _recompute_ended(self) -> None:
        """The running recompute has finished (shown or not): start the waiting one, if any."""
        self._recompute_running = False
        pending, self._pending = self._pending, None
        if pending is not None and self._ledger is not None:
            self._start_recompute(pending)

    @work(thread=True, group="recompute", exit_on_error=False)
    def _recompute_worker(
        self,
        generation: int,
        attempts: pl.DataFrame,
        expression: pl.Expr | None,
        by: tuple[str, ...],
        sort: tuple[str, bool] | None,
        matched_only: bool,
        previous: Snapshot | None = None,
    ) -> None:
        """Filter, restrict to matched tasks, compare and sort; `previous`: reuse its figures."""
        snapshot: Snapshot | None = None
        failure: str | None = None
        try:
            snapshot = self._recomputed(
                generation, attempts, expression, by, sort, matched_only, previous
            )
        except pl.exceptions.PolarsError as error:
            # A filter that parses but cannot run on these columns (e.g. a bad regex).
            failure = safe_text(str(error).strip().splitlines()[0] if str(error) else "error")
        finally:
            del attempts, previous  # let them go before the results are shown
            if not get_current_worker().is_cancelled:
                self.call_from_thread(self._recompute_done, generation, snapshot, failure)

    def _recomputed(
        self,
        generation: int,
        attempts: pl.DataFrame,
        expression: pl.Expr | None,
        by: tuple[str, ...],
        sort: tuple[str, bool] | None,
        matched_only: bool,
        previous: Snapshot | None,
    ) -> Snapshot | None:
        """The recompute itself (in the worker thread); None when a newer one was asked for."""
        started = time.perf_counter()
        notice = previous.notice if previous is not None else None
        comparison = previous.comparison if previous is not None else None
        matching = attempts.filter(expression) if expression is not None else attempts
        if matched_only:
            matching, notice = _matched_tasks_only(matching, by)
        if generation != self._generation:
            return None
        if comparison is None:
            # Delta-method intervals first (no extra pass); the small groups' bootstrap intervals
            # follow in their own worker once these figures are on screen.
            comparison = compare(matching, by, intervals="delta")
        if generation != self._generation:
            return None
        shown = matching
        if sort is not None:
            # Stable, from file order: ties keep the order of the file, whatever came before.
            column, descending = sort
            shown = matching.sort(
                column, descending=descending, nulls_last=True, maintain_order=True
            )
        snapshot = Snapshot(
            generation, matching, shown, comparison, time.perf_counter() - started, notice
        )
        if self._view == "drop":
            _ = snapshot.drop_frame  # the rows the table will show, filtered here, not on screen
        return snapshot

    def _recompute_done(
        self, generation: int, snapshot: Snapshot | None, failure: str | None
    ) -> None:
        """A recompute finished: show it (or its error) if still current, then start the next."""
        try:
            if failure is not None:
                self._filter_failed(generation, failure)
            elif snapshot is not None:
                shown = self._snapshot
                self._apply(snapshot, shown is None or snapshot.comparison is not shown.comparison)
        finally:
            self._recompute_ended()

    @work(thread=True, exclusive=True, group="checks", exit_on_error=False)
    def _checks_worker(self, generation: int, snapshot: Snapshot, by: tuple[str, ...]) -> None:
        """Every fair-comparison check of the attempts on screen, merged with the warnings."""
        ledger = self._ledger
        if ledger is None:
            return
        started = time.perf_counter()
        from tui_ledger.checks import run_checks

        extra: list[Any] = list(self._price_warnings)
        if snapshot.notice is not None:
            extra.append(snapshot.notice)
        try:
            found = run_checks(snapshot.matching, list(by), ledger.report, warnings=extra)
        except (pl.exceptions.PolarsError, ValueError) as error:
            message = str(error).strip().splitlines()[0] if str(error) else type(error).__name__
            self.call_from_thread(self._checks_failed, generation, message)
            return
        seconds = time.perf_counter() - started
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._checks_done, generation, found, seconds)

    def _checks_failed(self, generation: int, message: str) -> None:
        if generation == self._checks_generation:
            self._checks_generation = -1  # no checks for these figures; the warnings as read
        self.say(message, title="checks failed", severity="error")

    def _checks_done(self, generation: int, found: list[Check], seconds: float) -> None:
        if generation != self._checks_generation:
            return  # figures newer than these checks are on the way
        self.timings.record("checks", seconds)
        self._checks = found
        self._show_warning_count()
        from tui_ledger.tui.screens import WarningsScreen

        if isinstance(self.screen, WarningsScreen):
            self.screen.update_warnings(self.collect_warnings())

    def _filter_failed(self, generation: int, message: str) -> None:
        if generation != self._generation:
            return
        self._filter_error = FilterError(message, 0, len(self._filter_text))
        self._show_filter_status()

    def _apply(self, snapshot: Snapshot, new_figures: bool = True) -> None:
        """Show a finished recompute (unless a newer one was asked for meanwhile).

        `new_figures`: the attempts or grouping changed (not only the sort), so the checks
        are computed again, in their own worker, once the new figures have been drawn (so they
        do not compete with the drawing for the cores).
        """
        if snapshot.generation != self._generation:
            return
        self.timings.record("recompute", snapshot.seconds)
        first = self._snapshot is None
        self._snapshot = snapshot  # the previous one (and its frames) is let go here
        if self._workflow_count is None and self._ledger is not None:
            unfiltered = self._filter_expr is None and not self._matched_only
            if unfiltered and self._by == ("workflow",):
                self._workflow_count = snapshot.comparison.keep.height  # one row per workflow
            else:
                attempts = self._ledger.attempts
                self._workflow_count = int(attempts.get_column("workflow").n_unique())
        if new_figures or first:
            self._figures_stale = False
            self._checks = None
            self._checks_generation = snapshot.generation
        if first:
            self._body.loading = False
        self._show()
        self.call_after_refresh(self._drawn, snapshot, new_figures or first)

    def _drawn(self, snapshot: Snapshot, new_figures: bool) -> None:
        """A recompute's frame has been drawn: record it, then start its checks."""
        if self._snapshot is not snapshot:
            return
        rows = snapshot.keep_frame.height
        self.timings.emit(
            "recompute",
            seconds=round(snapshot.seconds, 6),
            rows=rows,
            generation=snapshot.generation,
        )
        if not self._first_screen_done:
            self._first_screen_done = True
            self.timings.record("first_screen", time.perf_counter() - self._started)
            self.timings.emit("first_screen", rows=rows)
        self._start_compacting()
        if not new_figures:
            return
        if snapshot.comparison.intervals.method == "delta":
            self._intervals_for = snapshot.comparison
            self._intervals_worker(snapshot.comparison, snapshot.matching)
        else:
            self._start_checks(snapshot)

    def _start_checks(self, snapshot: Snapshot) -> None:
        if self._checks_generation == snapshot.generation and self._checks is None:
            self._checks_worker(snapshot.generation, snapshot, self._by)

    def _start_compacting(self) -> None:
        """Once a ledger's figures are on screen, compact its frame in a worker (large ones
        only, `query.COMPACT_MIN_ROWS`): off the first screen's path, where it cost 0.7 s at
        10M rows; every recompute after it is faster (see `query.compact_text`)."""
        ledger = self._ledger
        if (
            ledger is None
            or self._compacted
            or self._compacting is not None
            or ledger.attempts.height < query.COMPACT_MIN_ROWS
        ):
            return
        self._compacting = ledger.attempts
        self._compact_worker(ledger.attempts)

    @work(thread=True, exclusive=True, group="compact", exit_on_error=False)
    def _compact_worker(self, attempts: pl.DataFrame) -> None:
        compact, values = compact_text(attempts)
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._compact_done, attempts, compact, values)

    def _compact_done(
        self, attempts: pl.DataFrame, compact: pl.DataFrame, values: TextValues | None
    ) -> None:
        """Adopt the compact frame: the same attempts, so the figures on screen stay; the rows
        shown are taken from it again (a recompute that reuses the comparison), so the text
        frame is let go. A frame the loader already read with Categorical keys (any CSV) comes
        back as it was: only its distinct values are new, and the rows on screen stay."""
        ledger = self._ledger
        if ledger is None or ledger.attempts is not attempts:
            return  # a reload came meanwhile
        self._compacting = None
        self._compacted = True
        self._ledger = dataclasses.replace(ledger, attempts=compact)
        self._text_values = values
        if self._filter_error is None:
            self._parse_filter(self._filter_text)
        snapshot = self._snapshot
        if compact is attempts:
            return  # the rows on screen are already the compact frame's
        if self._recompute_running or snapshot is None or self._figures_stale:
            return  # the recompute running or waiting reads the compact frame when it starts
        self._generation += 1
        self._recompute_running = True
        self._recompute_worker(
            self._generation,
            compact,
            self._filter_expr,
            self._by,
            self._sort,
            self._matched_only,
            snapshot,
        )

    @work(thread=True, exclusive=True, group="intervals", exit_on_error=False)
    def _intervals_worker(self, comparison: Comparison, attempts: pl.DataFrame) -> None:
        """The comparison with its final intervals (bootstrap for the small groups)."""
        started = time.perf_counter()
        final: Comparison | None
        try:
            final = with_intervals(comparison, attempts, "auto")
        except (pl.exceptions.PolarsError, ValueError):
            final = None  # the delta-method bounds stay
        seconds = time.perf_counter() - started
        del attempts
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._intervals_done, comparison, final, seconds)

    def _intervals_done(
        self, comparison: Comparison, final: Comparison | None, seconds: float
    ) -> None:
        """Show the final intervals if their figures are still on screen; then the checks."""
        if self._intervals_for is comparison:
            self._intervals_for = None
        snapshot = self._snapshot
        if snapshot is None or snapshot.comparison is not comparison:
            return
        if final is not None:
            updated = dataclasses.replace(snapshot, comparison=final)
            if "drop_frame" in snapshot.__dict__:  # already filtered: keep it
                updated.__dict__["drop_frame"] = snapshot.__dict__["drop_frame"]
            self._snapshot = snapshot = updated
            self.timings.record("intervals", seconds)
            self._show_summary()
            self.call_after_refresh(self.timings.emit, "intervals", seconds=round(seconds, 6))
        self._start_checks(snapshot)

    # ------------------------------------------------------------------ drawing

    def _show(self) -> None:
        """Draw the snapshot in the current view: table, counts, summary, header."""
        snapshot = self._snapshot
        if snapshot is None:
            return
        # Only the widgets the view colours change class: restyling the whole app costs ~20 ms.
        dropping = self._view == "drop"
        for widget in (self.table, self.summary):
            widget.set_class(dropping, "-drop")
        table = self.table
        table.sort_column = self._sort[0] if self._sort else None
        table.sort_descending = bool(self._sort and self._sort[1])
        table.set_frame(snapshot.frame(self._view), keep_cursor=True)
        self._focus_label = self._label_at_cursor() or self._focus_label
        self._show_table_titles()
        self._show_summary()
        self._show_title()
        self._show_filter_status()
        self._refresh_bindings_if_changed()

    def _show_summary(self) -> None:
        """Draw the summary pane for the snapshot in the current view."""
        snapshot = self._snapshot
        if snapshot is None:
            return
        self.summary.show(
            snapshot.comparison,
            self._view,
            self._focus_label,
            self.warning_count(),
            self.note_count(),
            metric=self.metric,
            hint=self._keys_hint(),
        )

    def _show_title(self) -> None:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("ledger-tui  ", style="bold #58a6ff")
        if self.demo:
            title.append("demo ledger (synthetic): ", style="italic #8b949e")
            title.append(f"sample_data/{Path(self.paths[0]).name}", style="bold")
        else:
            names = [safe_text(Path(path).name) for path in self.paths]
            shown = ", ".join(names[:3]) + (f" +{len(names) - 3} more" if len(names) > 3 else "")
            title.append(shown, style="bold")
        counts = Text(no_wrap=True, overflow="ellipsis")
        if self._ledger is not None:
            attempts = self._ledger.attempts.height
            counts.append(f"{format_count(attempts)} attempt{'s' if attempts != 1 else ''}")
            workflows = self._workflow_count
            if workflows is not None:
                counts.append(" · ", style="#8b949e")
                counts.append(f"{format_count(workflows)} workflow{'s' if workflows != 1 else ''}")
            if self._by != DEFAULT_BY:
                counts.append(" · grouped by ", style="#8b949e")
                counts.append(safe_text(" · ".join(self._by)), style="bold")
            if self.prices is not None:
                counts.append(" · priced", style="#8b949e")
            if self.watch_files:
                counts.append(" · watching", style="italic #8b949e")
            if self._matched_only:
                counts.append(" · ", style="#8b949e")
                counts.append("matched tasks only", style="bold #e3b341")
        if self._loading_since is not None:
            elapsed = time.perf_counter() - self._loading_since
            size = sum(_file_size(path) for path in self.paths)
            if counts.plain:
                counts.append("   ")
            counts.append(
                f"⟳ loading {_human_bytes(size)}… {elapsed:.1f} s", style="italic #e3b341"
            )
        if self._reload_error is not None:
            counts.append("   ✘ reload failed (r retries)", style="#ff6b57")
        self._title.update(title)
        self._counts.update(counts)
        self._badge.show(self._view)

    def _show_table_titles(self) -> None:
        snapshot = self._snapshot
        if snapshot is None or self._ledger is None:
            return
        shown = snapshot.frame(self._view).height
        total = self._ledger.attempts.height
        title = Text("Attempts", style="bold")
        comparison = snapshot.comparison
        if self._view == "drop":
            hidden = comparison.hidden_attempts
            tokens = comparison.hidden_tokens
            title.append("  ")
            hides = (
                # Failed, timed-out, errored and ungraded: everything not accepted.
                f"hides {format_count(hidden)} attempt{'s' if hidden != 1 else ''}"
                f" · {format_tokens(tokens)} tokens"
            )
            if comparison.has_cost:
                hides += f" · {format_money(comparison.hidden_cost)}"
            title.append(hides, style=DROP_STYLE)
        self.table.border_title = title
        subtitle = Text(f"{format_count(shown)} of {format_count(total)} attempts")
        if self._sort is not None:
            column, descending = self._sort
            subtitle.append(
                f" · sorted by {safe_text(column)} {'▼' if descending else '▲'}",
                style="#8b949e",
            )
        self.table.border_subtitle = subtitle

    def _show_filter_status(self) -> None:
        status = self._filter_status
        error = self._filter_error
        if error is not None:
            status.update(
                Text.assemble(
                    ("✘ ", "bold #ff6b57"),
                    (safe_text(error.message), "#ff6b57"),
                    (f"  (at {error.position + 1}; table unchanged)", "#8b949e"),
                )
            )
            return
        snapshot = self._snapshot
        if snapshot is None or self._ledger is None:
            status.update("")
            return
        # The same count as the table's: in DROP FAILURES the rows it hides are said, not counted.
        matching = snapshot.keep_frame.height
        shown = snapshot.frame(self._view).height
        total = self._ledger.attempts.height
        noun = "attempt" if total == 1 else "attempts"
        text = Text(f"{format_count(shown)} of {format_count(total)} {noun}", style="#8b949e")
        if self._view == "drop" and matching != shown:
            text.append(" · ", style="#8b949e")
            text.append(
                f"{format_count(matching - shown)} hidden by DROP FAILURES", style=DROP_STYLE
            )
        notice = snapshot.notice
        if notice is not None:
            tasks = snapshot.matching["task"].n_unique() if snapshot.matching.height else 0
            text = Text.assemble(
                ("matched tasks only ", "bold #e3b341"),
                (
                    f"({format_count(tasks)} tasks, {format_count(notice.count)} left out) ",
                    "#e3b341",
                ),
                text,
            )
        status.update(text)

    def _refresh_bindings_if_changed(self) -> None:
        """Ask the footer to redraw only when what can run has changed (it re-mounts its keys)."""
        state = tuple(command.available(self) for command in commands.COMMANDS)
        if state != self._availability:
            self._availability = state
            self.refresh_bindings()

    def _label_at_cursor(self) -> str | None:
        """The group (summary label) of the attempt under the table's cursor."""
        table = self.table
        frame = table.frame
        if frame.height == 0 or not set(self._by) <= set(frame.columns):
            return None
        row = frame.slice(table.cursor_row, 1).select(self._by)
        return group_labels(row, self._by)[0]

    # ------------------------------------------------------------------ events

    def on_attempts_table_cursor_moved(self, event: AttemptsTable.CursorMoved) -> None:
        """The summary follows the group of the attempt under the cursor."""
        label = self._label_at_cursor()
        if label is not None and label != self._focus_label:
            self._focus_label = label
            self.summary.focus_group(label)
        self._refresh_bindings_if_changed()

    def on_attempts_table_row_activated(self, event: AttemptsTable.RowActivated) -> None:
        """Enter on a row: its every field."""
        self.action_details()

    def on_summary_pane_group_selected(self, event: SummaryPane.GroupSelected) -> None:
        """A row picked in the summary puts that group under focus."""
        self._focus_label = event.label
        self.summary.focus_group(event.label)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        if event.value == self._filter_text:
            return
        self._filter_text = event.value
        if self._parse_filter(event.value):
            self._recompute()
        self._show_filter_status()

    @on(Input.Submitted, "#filter")
    @on(FilterInput.Left)
    def _filter_done(self) -> None:
        self.table.focus()

    def _parse_filter(self, text: str) -> bool:
        """Parse the filter; on an error keep the previous expression and say why."""
        if self._ledger is None:
            return False
        attempts = self._ledger.attempts
        try:
            expression = parse_filter(text, attempts.schema, self._text_values)
        except FilterError as error:
            self._filter_error = error
            self._error_span.span = (error.position, error.end)
            self.filter_input.refresh()
            return False
        self._filter_error = None
        self._error_span.span = None
        self.filter_input.refresh()
        self._filter_expr = expression
        return True

    def on_resize(self) -> None:
        """The badge picks big or plain letters by width."""
        self._badge.refresh(layout=True)

    def say(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> None:
        """A toast with literal text: file names and error messages are never read as markup."""
        self.notify(
            safe_text(message),
            title=safe_text(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    # ------------------------------------------------------------------ actions

    def run_action_now(self, action: str) -> None:
        """Run a registry action (the command palette's callback)."""
        self.call_later(self.run_action, action)

    def action_toggle_view(self) -> None:
        """t: KEEP FAILURES <-> DROP FAILURES, in one step (no recompute needed)."""
        started = time.perf_counter()
        self._view = "drop" if self._view == "keep" else "keep"
        self._show()
        self.timings.record("toggle", time.perf_counter() - started)

    def action_toggle_metric(self) -> None:
        """$: the summary's headline between tokens and cost per accepted result."""
        if not self.has_cost:
            self.say(
                "No cost figures: open the file with --prices FILE or --flat-price USD.",
                title="tokens ⇄ cost",
                timeout=4,
            )
            return
        started = time.perf_counter()
        self._metric = "cost" if self._metric == "tokens" else "tokens"
        self._show()
        self.timings.record("toggle", time.perf_counter() - started)

    def action_toggle_matched(self) -> None:
        """m: compare only the tasks every group attempted, or every task again."""
        if not self.has_task_column or self.grouped_by_task:
            return
        self._matched_only = not self._matched_only
        self._show_title()
        self._recompute()

    def action_per_task(self) -> None:
        """p: the focused group task by task."""
        snapshot = self._snapshot
        if snapshot is None or not self.has_task_column:
            return
        label = self._focus_label or self.summary.selected_label
        labels = snapshot.comparison.labels
        if label not in labels:
            label = labels[0] if labels else None
        if label is None:
            self.say("No group to show.", title="per task", timeout=3)
            return
        index = labels.index(label)
        keys = snapshot.comparison.keep.select(snapshot.comparison.by).row(index)
        self._per_task_worker(snapshot, label, tuple(keys))

    @work(thread=True, exclusive=True, group="per-task", exit_on_error=False)
    def _per_task_worker(self, snapshot: Snapshot, label: str, keys: tuple[Any, ...]) -> None:
        by = snapshot.comparison.by
        try:
            tasks = per_task(snapshot.matching, list(keys), by)
        except (pl.exceptions.PolarsError, ValueError) as error:
            self.call_from_thread(self.say, str(error), title="per task", severity="error")
            return
        if not get_current_worker().is_cancelled:
            self.call_from_thread(
                self._show_per_task, label, dict(zip(by, keys, strict=True)), tasks
            )

    def _show_per_task(self, label: str, keys: dict[str, Any], tasks: pl.DataFrame) -> None:
        if not self.on_main_screen:
            return
        from tui_ledger.tui.audit_screens import PerTaskScreen

        def chosen(choice: TaskChosen | None) -> None:
            if choice is None:
                return
            terms = [filter_term(column, value) for column, value in choice.keys.items()]
            terms.append(filter_term("task", choice.task))
            present = self.filter_input.value.split()
            added = [term for term in terms if term not in present]
            self.filter_input.value = " ".join([self.filter_input.value.strip(), *added]).strip()
            self.table.focus()

        self.push_screen(PerTaskScreen(label, keys, tasks, metric=self.metric), chosen)

    def action_pareto(self) -> None:
        """c: pass rate against spend per accepted result, both views, with the frontier."""
        comparison = self.comparison
        if comparison is None:
            return
        metric: ParetoMetric = "cost" if self.metric == "cost" else "tokens"
        from tui_ledger.tui.audit_screens import ParetoScreen

        self.push_screen(ParetoScreen(comparison, metric, save=self._save_chart))

    def _save_chart(self, comparison: Comparison, metric: ParetoMetric) -> None:
        """s in the chart: ask for a file name, then write the SVG (asking before replacing)."""

        from tui_ledger.tui.screens import SaveScreen

        def answered(path: str | None) -> None:
            if not path:
                return
            if Path(path).suffix.lower() != ".svg":
                self.say(
                    f"{path}: the chart is an SVG; name it .svg", title="chart", severity="error"
                )
                return

            placed = self._placed_exports([path], title="chart")
            if placed is None:
                return
            (target,) = placed

            def write(overwrite: bool) -> None:
                self._svg_worker(target, comparison, metric, overwrite)

            self._write_asking_first([target], write)

        self.push_screen(
            SaveScreen(
                "ledger-pareto.svg",
                title="save the chart",
                what=f"Pass rate against {metric} per accepted result, both views · .svg",
            ),
            answered,
        )

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _svg_worker(
        self, path: str, comparison: Comparison, metric: ParetoMetric, overwrite: bool
    ) -> None:
        from tui_ledger.report import ExportError, pareto_svg, write_text_atomic
        from tui_ledger.tui.served_exports import deliver_staged, discard_staged

        try:
            write_text_atomic(path, pareto_svg(comparison, metric), overwrite=overwrite)
        except (ExportError, OSError) as error:
            discard_staged([path])
            self.call_from_thread(self.say, str(error), title="chart", severity="error")
            return
        sent = self.call_from_thread(deliver_staged, self, [path])
        self.call_from_thread(self.say, sent or f"wrote {path}", title="chart")

    def _placed_exports(self, paths: list[str], *, title: str) -> list[str] | None:
        """Where to write `paths`: as typed in a terminal; served (`ledger-tui serve`), staged
        for the browser or inside the owner's --export-dir. None (and said) when refused."""
        from tui_ledger.tui.served_exports import place_exports

        placed = place_exports(paths, is_web=self.is_web, inputs=self.paths)
        if isinstance(placed, str):
            self.say(placed, title=title, severity="error")
            return None
        return placed

    def _write_asking_first(self, paths: list[str], write: Any) -> None:
        """Call `write(overwrite)`: at once when no file is in the way, else after a yes."""
        existing = [path for path in paths if path and Path(path).exists()]
        if not existing:
            write(False)
            return
        question = (
            f"{' and '.join(existing)} already exist{'s' if len(existing) == 1 else ''}. Replace?"
        )

        from tui_ledger.tui.screens import ConfirmScreen

        def confirmed(yes: bool | None) -> None:
            if yes:
                write(True)
            else:
                self.say("Nothing was written.", title="export", timeout=3)

        self.push_screen(ConfirmScreen(question), confirmed)

    def action_edit_filter(self) -> None:
        """/: into the filter box, cursor at the end."""
        box = self.filter_input
        # Focus now, not via `focus()` (which waits behind keys already queued): typing `/lean`
        # fast, or pasting it, must put `lean` in the box rather than run l, e, a, n as keys.
        self.screen.set_focus(box)
        box.cursor_position = len(box.value)

    def action_clear_filter(self) -> None:
        """Remove every filter term."""
        self.filter_input.value = ""

    def _add_term(self, negate: bool) -> None:
        cell = self.cell_under_cursor()
        if cell is None:
            return
        column, value = cell
        term = filter_term(column, value, exclude=negate)
        text = self.filter_input.value.rstrip()
        self.filter_input.value = f"{text} {term}".strip()

    def action_filter_cell(self) -> None:
        """f: keep only attempts with the value under the cursor."""
        self._add_term(negate=False)

    def action_exclude_cell(self) -> None:
        """F: drop the attempts with the value under the cursor."""
        self._add_term(negate=True)

    def action_group_by(self) -> None:
        """b: pick the group-by column(s)."""
        if self._ledger is None:
            return
        from tui_ledger.tui.screens import GroupByScreen

        def chosen(columns: list[str] | None) -> None:
            if columns and tuple(columns) != self._by:
                self._by = tuple(columns)
                self._focus_label = None
                if self._matched_only and "task" in self._by:
                    self._matched_only = False
                    self.say("Grouping by task: matched tasks only is off.", timeout=4)
                self._show_title()
                # Closing the dialog repaints the whole screen; a recompute in a worker at the
                # same moment waits for the GIL between its polars calls (1M rows: 70-90 ms
                # for a 45 ms compare). When the last one was quick, run it here instead, so
                # the one repaint shows the new groups.
                self._recompute_now = self.timings.recompute < INLINE_RECOMPUTE_SECONDS
                self._recompute()
                self._recompute_now = False

        self.push_screen(GroupByScreen(self._ledger.attempts.schema, self._by), chosen)

    def _sort_by_cursor(self, descending: bool) -> None:
        column = self.column_under_cursor()
        if column is None:
            return
        self._sort = (column, descending)
        self._recompute(sort_only=True)

    def action_sort_ascending(self) -> None:
        """[: sort by the current column, ascending, missing values last."""
        self._sort_by_cursor(descending=False)

    def action_sort_descending(self) -> None:
        """]: sort by the current column, descending, missing values last."""
        self._sort_by_cursor(descending=True)

    def action_move(self, where: str) -> None:
        """Arrows, h j k l, PgUp/PgDn, gg/Home, G/End: move in the focused pane."""
        groups = self.summary.groups_table
        if groups.has_focus:
            moves = {
                "down": groups.action_cursor_down,
                "up": groups.action_cursor_up,
                "left": groups.action_cursor_left,
                "right": groups.action_cursor_right,
                "page_up": groups.action_page_up,
                "page_down": groups.action_page_down,
                "top": lambda: groups.move_cursor(row=0),
                "bottom": lambda: groups.move_cursor(row=max(groups.row_count - 1, 0)),
            }
        else:
            table = self.table
            moves = {
                "down": table.action_cursor_down,
                "up": table.action_cursor_up,
                "left": table.action_cursor_left,
                "right": table.action_cursor_right,
                "page_up": table.action_page_up,
                "page_down": table.action_page_down,
                "top": table.action_scroll_home,
                "bottom": table.action_scroll_end,
            }
            if not table.has_focus and not self.filter_input.has_focus:
                table.focus()
        moves[where]()

    def action_g_prefix(self) -> None:
        """g: the first half of gg."""
        now = time.monotonic()
        if now - self._last_g <= GG_SECONDS:
            self._last_g = 0.0
            self.action_move("top")
        else:
            self._last_g = now

    def action_details(self) -> None:
        """Enter: the attempt's every field."""
        if not self.loaded:
            return
        row = self.table.current_row()
        if row is None:
            return
        source, line = row.get(SOURCE_COLUMN), row.get(LINE_COLUMN)
        if source is not None and line is not None:
            title = f"{Path(str(source)).name}, line {line}"
        else:
            title = f"row {self.table.cursor_row + 1}"
        from tui_ledger.tui.screens import DetailScreen

        self.push_screen(DetailScreen(row, title))

    def action_warnings(self) -> None:
        """w: the warnings panel."""
        from tui_ledger.tui.screens import WarningsScreen

        self.push_screen(WarningsScreen(self.collect_warnings()))

    def action_help(self) -> None:
        """? / F1: keys and views."""
        from tui_ledger.tui.screens import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)
            return
        self.push_screen(HelpScreen())

    def action_reload(self) -> None:
        """r: read the file(s) again; filter, view and cursor stay."""
        self._start_load(first=False)

    # ------------------------------------------------------------------ export

    def action_export(self) -> None:
        """e: ask for file names, then write (asking before replacing anything)."""
        snapshot = self._snapshot
        if snapshot is None:
            return
        from tui_ledger.tui.screens import ExportScreen

        screen = ExportScreen(
            "ledger-summary.md",
            "ledger-attempts.csv",
            rows=snapshot.keep_frame.height,
            filtered=self._filter_expr is not None,
        )

        def answered(request: ExportRequest | None) -> None:
            if request is None:
                return
            problem = _export_problem(request)
            if problem is not None:
                self.say(problem, title="export", severity="error")
                return
            placed = self._placed_exports(
                [request.summary_path, request.attempts_path], title="export"
            )
            if placed is None:
                return
            request = dataclasses.replace(request, summary_path=placed[0], attempts_path=placed[1])

            def write(overwrite: bool) -> None:
                self._export_worker(request, overwrite)

            self._write_asking_first([request.summary_path, request.attempts_path], write)

        self.push_screen(screen, answered)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _export_worker(self, request: ExportRequest, overwrite: bool) -> None:
        snapshot = self._snapshot
        if snapshot is None:
            return
        from tui_ledger.report import (
            SUMMARY_FORMATS,
            ExportError,
            format_for_path,
            render_summary,
            write_attempts,
            write_text_atomic,
        )
        from tui_ledger.tui.served_exports import deliver_staged, discard_staged

        paths = [request.summary_path, request.attempts_path]
        written: list[str] = []
        try:
            if request.summary_path:
                fmt = format_for_path(request.summary_path, SUMMARY_FORMATS)
                warnings = (
                    [*self._ledger.report.warnings, *self._price_warnings] if self._ledger else []
                )
                text = render_summary(
                    snapshot.comparison,
                    fmt,
                    view=None,
                    warnings=warnings,
                    checks=self._checks or (),
                )
                write_text_atomic(request.summary_path, text, overwrite=overwrite)
                written.append(request.summary_path)
            if request.attempts_path:
                write_attempts(snapshot.keep_frame, request.attempts_path, overwrite=overwrite)
                written.append(
                    f"{request.attempts_path} ({format_count(snapshot.keep_frame.height)} rows)"
                )
        except (ExportError, OSError) as error:
            discard_staged(paths)
            self.call_from_thread(self.say, str(error), title="export", severity="error")
            return
        sent = self.call_from_thread(deliver_staged, self, paths)
        self.call_from_thread(self.say, sent or "wrote " + ", ".join(written), title="export")


def _cost_beside_tokens(attempts: pl.DataFrame) -> pl.DataFrame:
    """The priced attempts with `cost` (and `table_cost`) right after `tokens`, where people
    look for them, instead of after `source` and `line`."""
    from tui_ledger.prices import COST_COLUMN, TABLE_COST_COLUMN

    moved = [name for name in (COST_COLUMN, TABLE_COST_COLUMN) if name in attempts.columns]
    if not moved or "tokens" not in attempts.columns:
        return attempts
    order: list[str] = []
    for name in attempts.columns:
        if name in moved:
            continue
        order.append(name)
        if name == "tokens":
            order.extend(moved)
    return attempts.select(order)


def _matched_tasks_only(
    attempts: pl.DataFrame, by: Sequence[str]
) -> tuple[pl.DataFrame, MatchedNotice]:
    """The attempts at tasks every group attempted, and a note of what was left out."""
    from tui_ledger.checks import restrict_to_matched_tasks

    matched = restrict_to_matched_tasks(attempts, list(by))
    dropped = attempts.height - matched.height
    tasks = matched["task"].n_unique() if matched.height else 0
    notice = MatchedNotice(
        "matched_tasks",
        f"Matched tasks only: {matched.height:,} attempts at the {tasks:,} tasks every group "
        f"attempted; {dropped:,} attempts at other tasks are left out.",
        dropped,
    )
    return matched, notice


def _export_problem(request: ExportRequest) -> str | None:
    """Why the file names cannot be used (their extensions), or None."""
    from tui_ledger.report import ATTEMPT_FORMATS, SUMMARY_FORMATS, ExportError, format_for_path

    try:
        if request.summary_path:
            format_for_path(request.summary_path, SUMMARY_FORMATS)
        if request.attempts_path:
            format_for_path(request.attempts_path, ATTEMPT_FORMATS)
    except ExportError as error:
        return str(error)
    return None


def _file_size(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def _human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def run_app(
    paths: list[str],
    *,
    demo: bool = False,
    load_options: dict[str, Any] | None = None,
    watch_files: bool = False,
) -> int:
    """Open the interactive ledger; returns the exit code (2 when the file could not be read).

    `watch_files` follows the files and shows appended attempts as they arrive (`--watch`).
    """
    app = LedgerApp(paths, demo=demo, load_options=load_options, watch_files=watch_files)
    app.run()
    if app.error_message:
        print(app.error_message, file=sys.stderr)
    return app.return_code or 0


def _main(argv: Sequence[str]) -> int:
    """`python -m tui_ledger.tui.app FILE...` (no FILE: the bundled demo)."""
    from importlib import resources

    paths = list(argv)
    demo = not paths
    if demo:
        paths = [str(resources.files("tui_ledger.sample_data").joinpath("demo.csv"))]
    return run_app(paths, demo=demo)


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
