"""How many Spark Connect requests a piece of work sends: the round trips a user waits for.

`count_requests(spark)` wraps the session's gRPC stub so that every call through it is
counted by method (`ExecutePlan`: a query; `AnalyzePlan`: a schema, `.columns` or an
explain; `Config`: a setting read or written; `ReattachExecute`; `Interrupt`; and
`ReleaseExecute`, which the client sends in the background after a query, so it is counted
apart from the round trips). The benchmark prints the counts per first screen and per
keystroke, and the tests hold the app to a few requests per keystroke.

Imports nothing from pyspark: it works on whatever stub the session's client holds.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

__all__ = ["ROUND_TRIPS", "RequestCounter", "count_requests"]

# Requests the caller waits for; `ReleaseExecute` and `ReleaseSession` are sent after the
# answer (the client frees a finished query's results on the server in the background).
ROUND_TRIPS = ("ExecutePlan", "AnalyzePlan", "Config", "ReattachExecute")


class RequestCounter:
    """Counts the requests sent through one session's stub, by gRPC method."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def add(self, method: str) -> None:
        with self._lock:
            self._counts[method] += 1

    def counts(self) -> dict[str, int]:
        """Every method called so far and how often."""
        with self._lock:
            return dict(self._counts)

    def round_trips(self) -> int:
        """The requests a caller waited for (`ROUND_TRIPS`) so far."""
        with self._lock:
            return sum(self._counts[name] for name in ROUND_TRIPS)

    def since(self, before: dict[str, int]) -> dict[str, int]:
        """The requests sent since `before` (an earlier `counts()`), by method."""
        now = self.counts()
        return {
            name: now[name] - before.get(name, 0)
            for name in now
            if now[name] != before.get(name, 0)
        }


class _CountingStub:
    """The client's stub, every call counted (the calls and their answers unchanged)."""

    def __init__(self, stub: Any, counter: RequestCounter) -> None:
        self._stub = stub
        self._counter = counter

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._stub, name)
        if not callable(method) or name.startswith("_"):
            return method
        counter = self._counter

        def counted(*args: Any, **kwargs: Any) -> Any:
            counter.add(name)
            return method(*args, **kwargs)

        return counted


def count_requests(spark: Any) -> RequestCounter:
    """Count every request `spark` (a Spark Connect session) sends from now on; calling it
    again on the same session returns the same counter."""
    client = spark.client
    stub = client._stub
    if isinstance(stub, _CountingStub):
        return stub._counter
    counter = RequestCounter()
    client._stub = _CountingStub(stub, counter)  # the client's own seam ("for testing")
    return counter
