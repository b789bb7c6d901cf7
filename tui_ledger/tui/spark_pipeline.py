"""The app's pipeline on Spark (`ledger-tui --spark URL PATH`): the same stages as `Pipeline`,
each a query on a Spark Connect server instead of polars work on a local frame.

- **load**: the input was opened before the app started (`spark.commands.open_input`:
  connected, mapped, validated; an error there is one line and exit 2, as a load error is).
  The load worker only reads the typed schema (the filter and the group-by dialog need the
  columns and their types); the app's `Ledger` holds an empty frame of that schema and the
  validation report, never the rows.
- **recompute** (every filter keystroke, group change, sort): one worker runs, under one
  Spark Connect tag (`paging.Queries`), one query (`commands.spark_figures`) for the
  engine's aggregate frame, the bootstrap's candidate rows and the first page of each view
  (a top-K), then ledger.py's comparison (`commands.spark_comparison`, intervals `auto`).
  A newer request interrupts the running tag on the server (`Queries.cancel`), and
  the interrupted worker's figures are never shown: the superseding of `Pipeline`, with the
  stale query stopped on the cluster rather than left to finish. The toggle needs no query:
  the comparison holds both views and both first pages are fetched.
- **pages**, in `spark_rows.SparkRows` (with the export's rows and `p`'s queries): the table
  holds the pages fetched so far (`SparkSnapshot`); when the cursor comes within
  `PREFETCH_ROWS` of their end the next page of that view is fetched (one bounded query:
  offset, limit) and appended. Nothing collects the whole table.
- **checks**: `commands.spark_checks` on the same filtered input, under its own tags; new
  checks interrupt stale ones.
- **the state**: while any of these runs, the summary's frame says `computing on Spark · 3.2 s`
  (elapsed, redrawn every 0.2 s), and `waiting()` names "computing on Spark" (so
  `LedgerApp.unsettled` waits for it); after, `Spark · 1.4 s`, what the last query took.

Imports pyspark (through the engine): only `LedgerApp(spark=...)` imports this module.
"""

from __future__ import annotations

import contextlib
import threading
import time
from functools import partial
from typing import TYPE_CHECKING, Any

import polars as pl
from pyspark.errors import PySparkException
from pyspark.sql import functions as F
from textual.worker import get_current_worker

from tui_ledger.accounting.ledger import Comparison, View
from tui_ledger.accounting.rows import Rows
from tui_ledger.accounting.stats import IntervalSettings
from tui_ledger.filtering.query import FilterError
from tui_ledger.load.load_report import Ledger
from tui_ledger.spark.batch import Part, run_parts
from tui_ledger.spark.commands import (
    SparkFigures,
    SparkInput,
    filtered_by,
    on_engine,
    spark_checks,
    spark_comparison,
    spark_figures,
    spark_pair_cells,
)
from tui_ledger.spark.errors import SparkEngineError, SparkQueryCancelled
from tui_ledger.spark.paging import Queries, page_from, page_plan
from tui_ledger.spark.session import first_line
from tui_ledger.text.textsafe import safe_text
from tui_ledger.tui.follow_ups import Stopped
from tui_ledger.tui.host import Inputs, PipelineHost
from tui_ledger.tui.messages import (
    ChecksFailed,
    ChecksReady,
    GaveUp,
    Loaded,
    LoadFailed,
    LoadingChanged,
    PairsReady,
    Recomputed,
    Said,
    StateChanged,
    TitleChanged,
)
from tui_ledger.tui.snapshot import Request, Snapshot
from tui_ledger.tui.spark_rows import SparkRows, SparkSnapshot, without_helpers

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tui_ledger.accounting.checks import Check
    from tui_ledger.accounting.pairs import PairCells
    from tui_ledger.findings import Finding
    from tui_ledger.load import LoadReport

TICK_SECONDS = 0.2  # how often the elapsed time is redrawn while a query runs
VIEWS: tuple[View, View] = ("keep", "drop")


def _figures_for(snapshot: Snapshot, by: list[str]) -> SparkFigures | None:
    """The snapshot's one-query figures, if they were asked for the groups `by`."""
    figures = snapshot.figures if isinstance(snapshot, SparkSnapshot) else None
    return figures if figures is not None and list(figures.by) == by else None


class SparkPipeline(SparkRows):
    """`Pipeline` with every stage a query on the Spark Connect server `opened` is on."""

    on_spark = True

    def __init__(self, app: PipelineHost, inputs: Inputs, opened: SparkInput) -> None:
        super().__init__(app, inputs)
        self.opened = opened
        self.figure_queries = Queries(opened.spark, "ledger-tui-figures")
        self.check_queries = Queries(opened.spark, "ledger-tui-checks")
        self.page_queries = Queries(opened.spark, "ledger-tui-page")
        self.pair_queries = Queries(opened.spark, "ledger-tui-pairs")
        self.computing_since: float | None = None
        self.last_seconds: float | None = None  # what the last query (all of it) took
        self._fetching: set[View] = set()
        self._checks_running = False
        self._other_queries = 0  # per-task queries running
        self._failure: str | None = None  # why the last figures query failed (not cancelled)
        # The figures (their origin) whose checks and pairs a newer request stopped.
        self._stopped_for: Comparison | None = None
        # For tests and the docs: every state line shown, and the figure queries interrupted.
        self.states: list[str] = []
        self.interrupted = 0
        self.query_seconds: list[tuple[str, float]] = []

    # ------------------------------------------------------------------ seams

    @contextlib.contextmanager
    def _turn(self) -> Iterator[bool]:
        """On Spark the follow-ups are queries on the server, each cancelled by its own
        group when newer figures come (`Stopped`): they run at once, not in turns."""
        yield True

    def total_attempts(self) -> int | None:
        return self.opened.report.rows if self.ledger is not None else None

    def waiting(self) -> list[str]:
        waiting = super().waiting()
        if self._busy():
            waiting.append("computing on Spark")
        return waiting

    def close(self) -> None:
        """Interrupt every query still running (the app is leaving)."""
        for queries in (
            self.figure_queries,
            self.check_queries,
            self.page_queries,
            self.pair_queries,
        ):
            # The server may be gone: then nothing runs there any more.
            with contextlib.suppress(PySparkException, SparkEngineError, OSError):
                queries.cancel_all_but(None)

    # ------------------------------------------------------------------ the state line

    def _busy(self) -> bool:
        return (
            self._recompute_running
            or self._settings_unchecked  # the figures of the schema just read: asked next
            or bool(self._fetching)
            or self._checks_running
            or self._other_queries > 0
            or self._follow_ups_due()
        )

    def _follow_ups_due(self) -> bool:
        """The figures on screen still wait for their checks or pairs: their queries start
        once the frame that draws the figures is painted (`drawn`), so between the two
        nothing runs yet, and the state line would say the work was done just before the
        checks' and the pairs' queries begin."""
        return self.checks_due() or self._pairs_for is not None

    def _query_started(self) -> None:
        if self.computing_since is None:
            self.computing_since = time.perf_counter()
            self._show_state()
            self.app.set_timer(TICK_SECONDS, self._tick)

    def _query_ended(self) -> None:
        if self.computing_since is not None and not self._busy():
            self.last_seconds = time.perf_counter() - self.computing_since
            self.computing_since = None
            self._show_state()

    def _tick(self) -> None:
        """While a query runs, every `TICK_SECONDS`: the state line's time. (While the app
        leaves, the app's handlers drop what this posts; `close` interrupted the queries.)"""
        if self.computing_since is None:
            return
        if not self._busy():  # what ended last said so before its state was updated
            self._query_ended()
            return
        for queries in (
            self.figure_queries,
            self.check_queries,
            self.page_queries,
            self.pair_queries,
        ):
            with contextlib.suppress(PySparkException, SparkEngineError, OSError):
                queries.cancel_again()  # stale work that started a query since its cancel
        self._show_state()
        self.app.set_timer(TICK_SECONDS, self._tick)

    def _show_state(self) -> None:
        if self.computing_since is not None:
            text = f"computing on Spark · {time.perf_counter() - self.computing_since:.1f} s"
        elif self.last_seconds is not None:
            text = f"Spark · {self.last_seconds:.1f} s"
        else:
            text = "Spark"
        if not self.states or self.states[-1] != text:
            self.states.append(text)
        self._post(StateChanged(text))

    # ------------------------------------------------------------------ load

    def start_load(self, *, first: bool) -> None:
        """First: read the typed schema in a worker (the input is open and validated). Again
        (`r`): compute the figures again; the cluster reads the input as it is now."""
        if not first:
            self.recompute()
            return
        self.loading_since = time.perf_counter()
        self._post(LoadingChanged(True))
        self._post(TitleChanged())
        self._query_started()
        self.app.run_worker(
            self._schema_worker,
            name="_schema_worker",
            group="load",
            exclusive=True,
            thread=True,
            exit_on_error=False,
        )

    def _schema_worker(self) -> None:
        started = time.perf_counter()
        opened = self.opened
        try:
            schema = self.figure_queries.run(opened.ledger.schema)
        except (SparkEngineError, PySparkException) as error:
            self.app.post_message(LoadFailed(SparkEngineError(first_line(error)), True))
            return
        ledger = Ledger(pl.DataFrame(schema=schema), opened.report)
        seconds = time.perf_counter() - started
        self.query_seconds.append(("schema", seconds))
        if not get_current_worker().is_cancelled:
            self.app.post_message(Loaded(ledger, [], None, seconds, True))

    def loaded(self, loaded: Loaded, *, inline: bool = False) -> None:
        super().loaded(loaded, inline=False)
        self._query_ended()

    def load_failed(self, failed: LoadFailed) -> None:
        super().load_failed(failed)
        self._query_ended()

    # ------------------------------------------------------------------ recompute

    def _next_generation(self) -> None:
        """A new request: the running figure and page queries are stale; stop them on the
        server (their workers then end without showing anything)."""
        super()._next_generation()
        self.figure_queries.cancel_all_but(None)
        self.page_queries.cancel_all_but(None)

    def recompute(self, *, sort_only: bool = False, inline: bool = False) -> None:
        """As `Pipeline.recompute`; new figures (not a sort of those on screen) also stop the
        checks' and the pairs' queries of the figures they replace, at once: left to run,
        they share the cluster with the new figures' query until those are drawn (on the
        demo, a filter typed just after the first screen drew its figures in 1.6-1.9 s
        beside them, against 0.6-0.7 s alone). The new figures ask for their own."""
        if not sort_only and self.ledger is not None and not self._settings_unchecked:
            stopped = self._follow_ups_due()
            for queries in (self.check_queries, self.pair_queries):
                stopped = stopped or bool(queries.running)
                with contextlib.suppress(PySparkException, SparkEngineError, OSError):
                    queries.cancel_all_but(None)
            if stopped:
                self._stopped_for = self._figures_origin
        super().recompute(sort_only=sort_only, inline=inline)

    def _follow_up(self, snapshot: Snapshot) -> None:
        """As `FollowUps._follow_up`, unless newer figures were asked for before these were
        drawn: their checks and pairs would only share the cluster with the newer query, and
        the newer figures ask for their own (`_resume_follow_ups` if they never come)."""
        if self._figures_stale:
            self._stopped_for = self._figures_origin
            return
        super()._follow_up(snapshot)

    def _resume_follow_ups(self) -> None:
        """The figures whose checks or pairs a newer request stopped are still on screen and
        nothing newer is coming (that request failed): ask for their checks and pairs again."""
        snapshot, stopped = self.snapshot, self._stopped_for
        if stopped is None or self._recompute_running or self._pending is not None:
            return
        self._stopped_for = None
        if snapshot is None or stopped is not self._figures_origin:
            return  # newer figures are on screen, with follow-ups of their own
        if self.checks_due():
            self._start_checks(snapshot)
        if snapshot.comparison.pairs is None and self._pairs_for is None:
            self._start_pairs(snapshot)

    def _start_recompute(self, sort_only: bool, *, inline: bool = False) -> None:
        if self.ledger is None:
            return
        snapshot = self.snapshot
        reuse = sort_only and snapshot is not None and not self._figures_stale
        request = self.inputs.settings()
        where = request.text if request.expression is not None else ""
        previous = snapshot if reuse and isinstance(snapshot, SparkSnapshot) else None
        self._recompute_running = True
        self._superseded = threading.Event()
        self._query_started()
        self.app.run_worker(
            partial(
                self._figures_worker,
                self.generation,
                where,
                request,
                previous,
                self.workflow_count,
                self._superseded,
            ),
            name="_recompute_worker",
            group="recompute",
            thread=True,
            exit_on_error=False,
        )

    def _figures_worker(
        self,
        generation: int,
        where: str,
        request: Request,
        previous: SparkSnapshot | None,
        workflows: int | None,
        superseded: threading.Event,
    ) -> None:
        """The comparison (or `previous`'s) and the first page of each view, under one tag."""
        snapshot: SparkSnapshot | None = None
        failure: str | None = None
        said: str | None = None
        title = "Spark query failed"
        started = time.perf_counter()
        try:
            if not superseded.is_set():
                snapshot = self.figure_queries.run(
                    lambda: self._figures(
                        generation, where, request, previous, workflows, superseded
                    )
                )
                self.query_seconds.append(("figures", time.perf_counter() - started))
        except SparkQueryCancelled:
            self.interrupted += 1
        except FilterError as error:
            failure = safe_text(error.message)
        except (SparkEngineError, PySparkException) as error:
            if superseded.is_set():
                self.interrupted += 1  # interrupted, in words the client did not classify
            else:
                said = safe_text(first_line(error))
        except Exception as error:  # a fault of ours: said, never stale figures (as Pipeline)
            reason = safe_text(f"{type(error).__name__}: {first_line(error)}")
            said = (
                f"the figures could not be computed ({reason}); the screen still shows the "
                "last ones. Please report this."
            )
            title = "recompute failed"
        finally:
            if said is not None:
                self._failure = said
                self.app.post_message(Said(said, title, "error"))
            # Always: the pipeline starts the waiting request when this one has ended.
            self.app.post_message(Recomputed(generation, snapshot, failure))

    def _figures(
        self,
        generation: int,
        where: str,
        request: Request,
        previous: SparkSnapshot | None,
        workflows: int | None,
        superseded: threading.Event,
    ) -> SparkSnapshot:
        """The figures and first pages; stops between queries once `superseded` (an
        interrupt reaches only the query running on the server when it is sent)."""

        def go_on() -> None:
            if superseded.is_set():
                raise SparkQueryCancelled("a newer request came")

        go_on()
        started = time.perf_counter()
        opened = self.opened
        filtered = filtered_by(opened, where) if where.strip() else opened
        sort = [request.sort[0]] if request.sort else []
        descending = bool(request.sort and request.sort[1])
        pages_asked: dict[str, Part] = {
            view: page_plan(
                opened.ledger,
                where=filtered.where,
                sort=sort,
                descending=descending,
                size=self.page_rows,
                accepted_only=view == "drop",
            )
            for view in VIEWS
        }
        figures: SparkFigures | None = None
        if previous is not None:
            comparison: Comparison = previous.comparison
            filtered = previous.filtered or filtered
            figures = previous.figures
            found = run_parts(dict(pages_asked))
        else:
            extra: dict[str, Part] = {}
            if workflows is None and not (not where.strip() and request.by == ("workflow",)):
                distinct = opened.attempts.select("workflow").distinct()
                extra["workflows"] = Part(distinct.agg(F.count(F.lit(1)).alias("n")), ["n"])
            # One query: both views' cells, the bootstrap's rows, both first pages (and the
            # workflows, the first time). Not the checks' and the pairs' cells: each follows
            # in a query of its own once the figures are drawn, side by side (on the demo,
            # a keystroke's figures in 0.45 s and settled in 1.07 s, against 1.70 s and
            # 1.77 s with every part in one query: docs/SPARK.md, "One query a keystroke's
            # figures").
            figures = spark_figures(
                filtered,
                request.by,
                intervals=IntervalSettings(),
                pages=dict(pages_asked),
                extra=extra,
            )
            found = dict(figures.pages)
            if "workflows" in figures.extra:
                workflows = int(figures.extra["workflows"].item(0, "n"))
            comparison = spark_comparison(filtered, request.by, IntervalSettings(), figures)
            go_on()
        counts: dict[View, int] = {
            view: int(comparison.view(view).get_column("attempts").sum()) for view in VIEWS
        }
        pages: dict[View, pl.DataFrame] = {}
        more: dict[View, bool] = {}
        for view in VIEWS:
            first = page_from(found[view], opened.ledger, number=0, size=self.page_rows)
            pages[view], more[view] = without_helpers(first.rows), first.has_more
        if workflows is None:  # unfiltered, by workflow: one group per workflow
            workflows = comparison.keep.height
        return SparkSnapshot(
            generation,
            Rows(pages["keep"]),
            Rows(pages["keep"]),
            comparison,
            time.perf_counter() - started,
            None,
            where=where,
            sort=request.sort,
            filtered=filtered,
            counts=counts,
            pages=pages,
            fetched=dict.fromkeys(VIEWS, 1),
            more=more,
            workflows=workflows,
            figures=figures,
        )

    def recomputed(self, recomputed: Recomputed) -> None:
        """As `Pipeline.recomputed`; a failure before any figure was shown (the server went
        away after the input was opened) ends the app as a load error does: one line, exit 2."""
        snapshot = recomputed.snapshot
        failure, self._failure = self._failure, None
        if snapshot is None and failure is not None and self.snapshot is None:
            self._recompute_running = False
            self._query_ended()
            self._post(GaveUp(failure))
            return
        if isinstance(snapshot, SparkSnapshot) and snapshot.generation == self.generation:
            self.workflow_count = snapshot.workflows
        try:
            super().recomputed(recomputed)
        finally:
            self._resume_follow_ups()
            self._query_ended()
            if self._recompute_running:
                self._query_started()  # the waiting request started

    # ------------------------------------------------------------------ pairs

    def _start_pairs(self, snapshot: Snapshot) -> None:
        with contextlib.suppress(PySparkException, SparkEngineError, OSError):
            self.pair_queries.cancel_all_but(None)  # the pairs of older figures
        super()._start_pairs(snapshot)

    def pair_cells(self, snapshot: Snapshot) -> PairCells:
        """The pairs' cells counted on the engine (`commands.spark_pair_cells`), each query
        cancelled with newer figures; the draws are then made here, as `summary --spark`
        makes them (docs/SPARK.md, "Pairs")."""
        filtered = snapshot.filtered if isinstance(snapshot, SparkSnapshot) else None
        by = list(snapshot.comparison.by)
        figures = _figures_for(snapshot, by)
        return spark_pair_cells(filtered or self.opened, by, run=self._pair_query, figures=figures)

    def _pair_query(self, work: Callable[[], pl.DataFrame]) -> pl.DataFrame:
        self._on_screen(self._other_query, 1)
        started = time.perf_counter()
        try:
            return self.pair_queries.run(lambda: on_engine(work))
        except PySparkException as error:
            raise SparkEngineError(first_line(error)) from error
        finally:
            self.query_seconds.append(("pairs", time.perf_counter() - started))
            self._on_screen(self._other_query, -1)

    def _on_screen(self, callback: Any, *args: Any) -> None:
        """Run `callback(*args)` on the screen's thread (from a worker), unless the app left.
        The callbacks only count the queries and post what the app should draw (which the
        app's handlers drop while it leaves)."""
        with contextlib.suppress(RuntimeError):  # the app has left
            self.app.call_from_thread(callback, *args)

    # ------------------------------------------------------------------ checks

    def _start_checks(self, snapshot: Snapshot) -> None:
        if self.checks_generation == snapshot.generation and self.checks is None:
            self.check_queries.cancel_all_but(None)  # checks of older figures
            self._checks_running = True
            self._query_started()
        super()._start_checks(snapshot)

    def find_checks(
        self, snapshot: Snapshot, by: tuple[str, ...], report: LoadReport, extra: list[Finding]
    ) -> list[Check]:
        """Every fair-comparison check of the filtered input, from the engine's cells (the
        engine's checks word the load's warnings themselves: `report` and `extra` unused)."""
        started = time.perf_counter()
        filtered = snapshot.filtered if isinstance(snapshot, SparkSnapshot) else None
        try:
            figures = _figures_for(snapshot, list(by))
            found = self.check_queries.run(
                lambda: spark_checks(filtered or self.opened, list(by), figures=figures)
            )
        except SparkQueryCancelled:
            raise Stopped from None
        except PySparkException as error:
            raise SparkEngineError(first_line(error)) from None
        self.query_seconds.append(("checks", time.perf_counter() - started))
        return found

    def checks_ready(self, ready: ChecksReady) -> None:
        super().checks_ready(ready)
        self._query_ended()  # the figures' checks came: maybe nothing else is due

    def checks_failed(self, failed: ChecksFailed) -> None:
        super().checks_failed(failed)
        self._query_ended()

    def pairs_ready(self, ready: PairsReady) -> None:
        super().pairs_ready(ready)
        self._query_ended()

    def checks_worker_ended(self) -> None:
        self._on_screen(self._checks_ended)

    def _checks_ended(self) -> None:
        self._checks_running = False
        self._query_ended()
