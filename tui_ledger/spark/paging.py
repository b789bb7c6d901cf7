"""What the app asks of the engine besides figures: a page of rows, one attempt, and a way to
cancel a query a newer keystroke has made stale.

A page is a bounded query: the filtered rows in a total order (the sort keys, then a
tiebreak that makes the order deterministic), `offset` past the earlier pages, `limit` one
page plus one row (to know whether there is more). Spark runs that as a top-K
(TakeOrderedAndProject), holding at most offset + limit rows per partition, never the table.

Cancellation uses Spark Connect's operation tags: a query runs under a tag of its own
(`SparkSession.addTag`, thread-local in the client), and `SparkSession.interruptTag(tag)`
from any thread interrupts every operation under it on the server. The interrupted call
raises `SparkQueryCancelled`. A tag names its process too: the session may be another run's
as well (`session.kept_session`).
"""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import polars as pl
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from tui_ledger.spark.batch import Part, run_parts
from tui_ledger.spark.engine import ORDER_COLUMNS, SparkLedger
from tui_ledger.spark.errors import SparkQueryCancelled
from tui_ledger.spark.filters import spark_filter
from tui_ledger.spark.inputs import column

__all__ = ["Page", "Queries", "attempt", "page", "page_from", "page_plan"]

Result = TypeVar("Result")
PAGE_ROWS = 100
_COUNTER = itertools.count()
# This process's mark in its tags: two runs of a kind share one server-side session
# (`session.kept_session`), and an interrupt stops every operation under its tag there.
_PROCESS = uuid.uuid4().hex[:12]


@dataclass(frozen=True)
class Page:
    """One page of attempts: `rows` (polars, with the tiebreak's columns last, so that
    `attempt` can fetch any of them again), its `number`, and whether more follow."""

    number: int
    size: int
    rows: pl.DataFrame
    has_more: bool
    tiebreak: tuple[str, ...]


def _filtered(ledger: SparkLedger, where: str | Column | None) -> tuple[DataFrame, list[str]]:
    frame, tiebreak = ledger.ordered_attempts()
    condition = spark_filter(where, ledger.schema()) if isinstance(where, str) else where
    if condition is not None:
        frame = frame.where(condition)
    return frame, tiebreak


def page_plan(
    ledger: SparkLedger,
    *,
    where: str | Column | None = None,
    sort: Sequence[str] = (),
    descending: bool | Sequence[bool] = False,
    number: int = 0,
    size: int = PAGE_ROWS,
    accepted_only: bool = False,
) -> Part:
    """The question `page` asks (its rows: `size` + 1 at most, the attempts' columns then
    the tiebreak's order columns), to ask it alone or beside others (`batch.run_parts`).
    `where`: the filter's text, or the filter already as a Spark column."""
    if number < 0 or size < 1:
        raise ValueError("a page has a number from 0 and at least one row")
    frame, tiebreak = _filtered(ledger, where)
    if accepted_only:
        from tui_ledger.schema import ACCEPTED

        frame = frame.where(column("outcome") == F.lit(ACCEPTED))
    directions = [descending] * len(sort) if isinstance(descending, bool) else list(descending)
    keys: list[Column] = [
        column(name).desc_nulls_last() if down else column(name).asc_nulls_last()
        for name, down in zip(sort, directions, strict=True)
    ]
    keys += [column(name).asc_nulls_last() for name in tiebreak if name not in sort]
    query = frame.orderBy(*keys).offset(number * size).limit(size + 1)
    names = [*ledger.columns, *[name for name in tiebreak if name not in ledger.columns]]
    return Part(query, names)


def page_from(rows: pl.DataFrame, ledger: SparkLedger, *, number: int, size: int) -> Page:
    """The `Page` of `page_plan`'s answer."""
    return Page(number, size, rows.head(size), rows.height > size, tuple(ledger.tiebreak))


def page(
    ledger: SparkLedger,
    *,
    where: str | Column | None = None,
    sort: Sequence[str] = (),
    descending: bool | Sequence[bool] = False,
    number: int = 0,
    size: int = PAGE_ROWS,
    accepted_only: bool = False,
) -> Page:
    """Page `number` (from 0) of `size` attempts matching the filter `where`, in the order of
    `sort` (nulls last) and then the input's own order (`SparkLedger.ordered_attempts`);
    `accepted_only`: the accepted attempts only (the rows DROP FAILURES shows). One query."""
    plan = page_plan(
        ledger,
        where=where,
        sort=sort,
        descending=descending,
        number=number,
        size=size,
        accepted_only=accepted_only,
    )
    rows = run_parts({"page": plan})["page"]
    return page_from(rows, ledger, number=number, size=size)


def attempt(ledger: SparkLedger, key: dict[str, object]) -> dict[str, object] | None:
    """One attempt's every field, found by its tiebreak values (a row of a `Page`'s
    `tiebreak` columns); None when no row has them. A bounded query (limit 1)."""
    frame, tiebreak = ledger.ordered_attempts()
    condition = F.lit(True)
    for name in tiebreak:
        value = key.get(name)
        condition = condition & (
            column(name).isNull() if value is None else column(name) == F.lit(value)
        )
    rows = frame.where(condition).limit(1).collect()
    if not rows:
        return None
    found = rows[0].asDict()
    return {name: value for name, value in found.items() if name not in ORDER_COLUMNS[1:]}


class Queries:
    """Runs each query of one session under a tag of its own, so a stale one can be stopped.

    `run(work)` runs `work()` (any engine calls) under a fresh tag in the calling thread;
    `cancel(tag)` from any thread interrupts it, and `run` then raises
    `SparkQueryCancelled`. `cancel_all_but(tag)` is the app's "a newer keystroke arrived".
    """

    def __init__(self, spark: SparkSession, prefix: str = "ledger-tui") -> None:
        self.spark = spark
        self.prefix = prefix
        self._running: set[str] = set()
        self._cancelled: set[str] = set()
        self._lock = threading.Lock()

    def new_tag(self) -> str:
        return f"{self.prefix}-{_PROCESS}-{next(_COUNTER)}"

    def run(self, work: Callable[[], Result], tag: str | None = None) -> Result:
        tag = tag or self.new_tag()
        with self._lock:
            self._running.add(tag)
        self.spark.addTag(tag)
        try:
            return work()
        except PySparkException as error:
            if _was_interrupted(error):
                raise SparkQueryCancelled(f"query {tag} was cancelled") from None
            raise
        finally:
            self.spark.removeTag(tag)
            with self._lock:
                self._running.discard(tag)
                self._cancelled.discard(tag)

    def cancel(self, tag: str) -> list[str]:
        """Interrupt every operation under `tag`; returns the ids of those interrupted."""
        with self._lock:
            if tag in self._running:
                self._cancelled.add(tag)
        return list(self.spark.interruptTag(tag))

    def cancel_again(self) -> None:
        """Interrupt again the cancelled tags whose work still runs. An interrupt reaches only
        the operations running on the server when it is sent: work cancelled between two
        queries (or before its first one reached the server) would otherwise run its next
        query to the end. Call it every so often while such work runs (the app: every 0.2 s)."""
        with self._lock:
            stale = self._running & self._cancelled
        for tag in stale:
            self.spark.interruptTag(tag)

    def cancel_all_but(self, keep: str | None = None) -> None:
        with self._lock:
            stale = [tag for tag in self._running if tag != keep]
        for tag in stale:
            self.cancel(tag)

    @property
    def running(self) -> set[str]:
        with self._lock:
            return set(self._running)


def _was_interrupted(error: BaseException) -> bool:
    text = str(error)
    return any(
        word in text for word in ("OPERATION_CANCELED", "INTERRUPTED", "cancelled", "canceled")
    )
