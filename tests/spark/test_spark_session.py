"""A run leaves its Spark Connect session on the server, warm, for the next run of its kind
(`session.connect(keep=...)`, `session.leave`): the next run is in the same server-side
session; a session the server has ended is replaced by a new one; what a run cached there
goes at its end; a session not kept is released whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

SHUFFLE = "spark.sql.shuffle.partitions"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own; and, as in a process of its own (a command's, an
    app's), no session of the process set as pyspark's default or active one until the
    test's first `connect` (the client binds a checkpoint to the active session: the shared
    test session would be taken for it, docs/SPARK.md). Both as they were afterwards."""
    from pyspark.sql.connect.session import SparkSession

    monkeypatch.setenv("LEDGER_TUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(SparkSession, "_default_session", None)
    monkeypatch.setattr(SparkSession._active_session, "session", None, raising=False)
    return tmp_path / "cache"


def test_the_next_run_is_in_the_session_the_last_one_left(spark_url: str, cache: Path) -> None:
    from tui_ledger.spark.session import connect, leave

    first = connect(spark_url, keep="compiled")
    first.conf.set(SHUFFLE, "7")  # a setting of the server-side session
    leave(first)
    second = connect(spark_url, keep="compiled")
    try:
        assert second.conf.get(SHUFFLE) == "7"
        assert second.session_id == first.session_id
        other = connect(spark_url, keep="interpreted")  # another kind: a session of its own
        assert other.session_id != first.session_id
        leave(other)
    finally:
        second.conf.set(SHUFFLE, "4")
        leave(second)
    assert (cache / "spark-sessions.json").exists()


def test_a_session_the_server_ended_is_replaced(spark_url: str, cache: Path) -> None:
    from tui_ledger.spark.session import connect, kept_session, leave

    first = connect(spark_url, keep="compiled")
    ended = first.session_id
    first.stop()  # released: the server refuses this id from now on
    second = connect(spark_url, keep="compiled")
    try:
        assert second.session_id != ended
        assert second.range(3).count() == 3
        assert kept_session(spark_url, "compiled") == second.session_id
    finally:
        leave(second)


def test_a_run_s_checkpoint_goes_at_its_end(spark_url: str, cache: Path) -> None:
    """The session stays; the checkpoint of the parsed rows does not."""
    from pyspark.errors import PySparkException
    from pyspark.sql.connect.dataframe import DataFrame
    from pyspark.sql.connect.plan import CachedRemoteRelation

    from tui_ledger.spark.commands import open_input
    from tui_ledger.spark.session import connect, leave

    path = cache.parent / "runs.csv"
    path.write_text("workflow,tokens,passed\na,10,true\na,20,false\nb,5,true\n")
    opened = open_input(spark_url, [str(path)], load_options={})
    (kept,) = opened.ledger.cached()
    relation = kept._plan._relation_id
    assert kept.count() == 3
    opened.leave()
    again = connect(spark_url, keep="interpreted")  # (a 3-row file is a small input)
    try:
        assert again.session_id == opened.spark.session_id
        gone = DataFrame(CachedRemoteRelation(relation, again), again)
        with pytest.raises(PySparkException):
            gone.count()
    finally:
        leave(again)


def test_a_session_not_kept_is_released(spark_url: str, cache: Path) -> None:
    from pyspark.errors import PySparkException

    from tui_ledger.spark.session import connect, leave

    spark: Any = connect(spark_url)
    spark.range(1).count()
    leave(spark)
    assert spark.client.is_closed
    with pytest.raises(PySparkException):
        spark.range(1).count()
    assert not (cache / "spark-sessions.json").exists()
