"""The rows the Spark pipeline brings to the screen beyond the figures (`SparkRows`, the base of
`spark_pipeline.SparkPipeline`): `SparkSnapshot` holds, per view, the pages fetched so far;
when the cursor comes within `PREFETCH_ROWS` of their end the next page of that view is fetched
(one bounded query: offset, limit, `PAGE_ROWS` rows) and appended. `e` (export) and `p` (per
task) are queries on the same filtered input, counted on the state line (`_other_query`).

Imports pyspark (through the engine): only `spark_pipeline` imports this module.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import polars as pl
from pyspark.errors import PySparkException

from tui_ledger.accounting.ledger import View
from tui_ledger.accounting.rows import Rows
from tui_ledger.spark.commands import (
    SparkFigures,
    SparkInput,
    filtered_by,
    on_engine,
    spark_per_task,
    spark_rows,
)
from tui_ledger.spark.errors import SparkEngineError, SparkQueryCancelled
from tui_ledger.spark.paging import Queries, page
from tui_ledger.spark.session import first_line
from tui_ledger.text.textsafe import safe_text
from tui_ledger.tui.messages import PageFetched, Said
from tui_ledger.tui.pipeline import Pipeline
from tui_ledger.tui.snapshot import Snapshot

if TYPE_CHECKING:
    from collections.abc import Mapping

PAGE_ROWS = 200  # rows a page query brings back
PREFETCH_ROWS = 50  # the next page is fetched when the cursor comes this close to the end
HELPER_PREFIX = "__ledger_"  # the engine's order columns: kept out of the table


@dataclass(frozen=True)
class SparkSnapshot(Snapshot):
    """A recompute on Spark: the comparison, and per view the pages fetched so far (the
    table's rows), whether more follow, and how many attempts the view holds (the count
    from the comparison, not the rows fetched)."""

    where: str = ""  # the filter text the figures and pages were computed for
    sort: tuple[str, bool] | None = None  # the pages' sort (then the input's order)
    # The input under that filter, and the one query's answer (checks' and pairs' cells).
    # Not in the repr: a worker describes its work by its repr, and a Spark plan's repr
    # asks the server (a setting and a schema: three round trips a keystroke, measured).
    filtered: SparkInput | None = field(default=None, repr=False)
    counts: dict[View, int] = field(default_factory=dict)
    pages: dict[View, pl.DataFrame] = field(default_factory=dict)  # appended to as fetched
    fetched: dict[View, int] = field(default_factory=dict)  # pages fetched per view
    more: dict[View, bool] = field(default_factory=dict)
    workflows: int | None = None
    figures: SparkFigures | None = field(default=None, repr=False)

    @property
    def drop_rows(self) -> Rows:
        return Rows(self.pages["drop"])

    def frame(self, view: View) -> Rows:
        return Rows(self.pages[view])

    def rows(self, view: View) -> int:
        return self.counts[view]

    def rows_note(self, view: View) -> str | None:
        fetched = self.pages[view].height
        if self.more[view]:
            return f"first {fetched:,} fetched · Spark"
        return "all fetched · Spark"


def without_helpers(rows: pl.DataFrame) -> pl.DataFrame:
    """A page's rows as the table shows them: without the engine's order columns."""
    return rows.select([name for name in rows.columns if not name.startswith(HELPER_PREFIX)])


class SparkRows(Pipeline):
    """The pages, the export's rows and the per-task queries; the Spark pipeline that inherits
    them owns the state they read (made in `SparkPipeline.__init__`) and the state line."""

    page_rows = PAGE_ROWS
    prefetch_rows = PREFETCH_ROWS

    opened: SparkInput
    page_queries: Queries
    query_seconds: list[tuple[str, float]]
    _fetching: set[View]
    _other_queries: int

    if TYPE_CHECKING:

        def _query_started(self) -> None: ...

        def _query_ended(self) -> None: ...

        def _on_screen(self, callback: Any, *args: Any) -> None: ...

    def _page(self, where: str, sort: tuple[str, bool] | None, view: View, number: int) -> Any:
        condition = filtered_by(self.opened, where).where if where.strip() else None
        return page(
            self.opened.ledger,
            where=condition,
            sort=[sort[0]] if sort else [],
            descending=bool(sort and sort[1]),
            number=number,
            size=self.page_rows,
            accepted_only=view == "drop",
        )

    # ------------------------------------------------------------------ pages

    def cursor_moved(self, row: int) -> None:
        """Fetch the next page of the view on screen when the cursor nears the rows' end."""
        snapshot = self.snapshot
        if not isinstance(snapshot, SparkSnapshot) or self._recompute_running:
            return
        view: View = self.inputs.settings().view
        if view in self._fetching or not snapshot.more.get(view):
            return
        if row < snapshot.pages[view].height - self.prefetch_rows:
            return
        self._fetching.add(view)
        self._query_started()
        number = snapshot.fetched[view]
        self.app.run_worker(
            partial(self._page_worker, snapshot, view, number),
            name="_page_worker",
            group=f"page-{view}",
            thread=True,
            exit_on_error=False,
        )

    def _page_worker(self, snapshot: SparkSnapshot, view: View, number: int) -> None:
        started = time.perf_counter()
        rows: pl.DataFrame | None = None
        more = False
        failure: str | None = None
        try:
            fetched = self.page_queries.run(
                lambda: self._page(snapshot.where, snapshot.sort, view, number)
            )
            rows, more = without_helpers(fetched.rows), fetched.has_more
            self.query_seconds.append(("page", time.perf_counter() - started))
        except SparkQueryCancelled:
            pass
        except (SparkEngineError, PySparkException) as error:
            failure = safe_text(first_line(error))
        self._on_screen(self._page_fetched, snapshot, view, rows, more, failure)

    def _page_fetched(
        self,
        snapshot: SparkSnapshot,
        view: View,
        rows: pl.DataFrame | None,
        more: bool,
        failure: str | None,
    ) -> None:
        self._fetching.discard(view)
        self._query_ended()
        if failure is not None:
            self._post(Said(failure, "Spark page failed", "error"))
        if rows is None or self.snapshot is not snapshot:
            return
        snapshot.pages[view] = pl.concat([snapshot.pages[view], rows], how="vertical_relaxed")
        snapshot.fetched[view] += 1
        snapshot.more[view] = more
        self._post(PageFetched(view))  # the app draws it if the table shows `view`

    # ------------------------------------------------------------------ export

    def export_rows(self, snapshot: Snapshot) -> pl.DataFrame:
        """`e` on Spark (in its worker): every attempt the filter keeps, as the cluster returns
        them in the input's order (`commands.spark_rows`, what `convert --spark` writes: an
        export brings the rows here), then sorted as the table is (stable, nulls last)."""
        filtered = snapshot.filtered if isinstance(snapshot, SparkSnapshot) else None
        self._on_screen(self._other_query, 1)
        started = time.perf_counter()
        try:
            rows = self.page_queries.run(
                lambda: on_engine(lambda: spark_rows(filtered or self.opened))
            )
        finally:
            self.query_seconds.append(("export", time.perf_counter() - started))
            self._on_screen(self._other_query, -1)
        sort = snapshot.sort if isinstance(snapshot, SparkSnapshot) else None
        if sort is not None:
            rows = rows.sort(sort[0], descending=sort[1], nulls_last=True, maintain_order=True)
        return rows

    # ------------------------------------------------------------------ per task

    def per_task(self, snapshot: Snapshot, keys: Mapping[str, Any]) -> pl.DataFrame:
        """`p` on Spark (in its worker): the engine's aggregate by task of the group's
        filtered attempts (`commands.spark_per_task`), shown as the state line says."""
        filtered = snapshot.filtered if isinstance(snapshot, SparkSnapshot) else None
        self._on_screen(self._other_query, 1)
        started = time.perf_counter()
        try:
            return self.page_queries.run(
                lambda: on_engine(lambda: spark_per_task(filtered or self.opened, keys))
            )
        finally:
            self.query_seconds.append(("per task", time.perf_counter() - started))
            self._on_screen(self._other_query, -1)

    def _other_query(self, change: int) -> None:
        self._other_queries += change
        if change > 0:
            self._query_started()
        else:
            self._query_ended()
