"""Counting the Spark Connect requests a piece of work sends (`spark.requests`), by gRPC
method, on a real server."""

from __future__ import annotations

from typing import Any

import pytest

from tui_ledger.spark.requests import ROUND_TRIPS, count_requests

pytestmark = pytest.mark.spark


def round_trips(counts: dict[str, int]) -> int:
    return sum(counts.get(name, 0) for name in ROUND_TRIPS)


def test_counting_sees_each_kind_of_request(spark: Any) -> None:
    counter = count_requests(spark)
    assert count_requests(spark) is counter  # one counter per session
    before = counter.counts()
    frame = spark.range(3)
    assert frame.columns == ["id"]  # a schema: AnalyzePlan
    assert len(frame.collect()) == 3  # a query: ExecutePlan
    counts = counter.since(before)
    assert counts.get("AnalyzePlan") == 1
    assert counts.get("ExecutePlan") == 1
    # The client reads settings for a collect (Config); those are waited for, the background
    # ReleaseExecute is not.
    assert round_trips(counts) == 2 + counts.get("Config", 0)
    assert "ReleaseExecute" not in ROUND_TRIPS
    assert counter.round_trips() >= 2
