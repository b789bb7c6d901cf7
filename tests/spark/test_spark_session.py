"""A run leaves its Spark Connect session on the server, warm, for the next run of its kind
(`session.connect(keep=...)`, `session.leave`): the next run is in the same server-side
session; a session the server has ended is replaced by a new one; what a run cached there
goes at its end; a session not kept is released whole."""

from __future__ import annotations

import json
import uuid
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


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("sc://h:15002", "sc://h:15002/;session_id=S"),
        ("sc://h:15002/", "sc://h:15002/;session_id=S"),
        ("sc://h:15002/;use_ssl=true", "sc://h:15002/;use_ssl=true;session_id=S"),
    ],
)
def test_a_kept_session_is_named_in_any_url(client: None, url: str, named: str) -> None:
    from pyspark.sql.connect.client import DefaultChannelBuilder

    from tui_ledger.spark.session import with_session_id

    assert with_session_id(url, "S") == named
    DefaultChannelBuilder(with_session_id(url, str(uuid.uuid4())))  # (raises on a bad URL)


def test_the_sessions_file_keeps_no_url_and_mends_itself(client: None, cache: Path) -> None:
    """A URL may carry a token: the file holds a digest of it, readable by its owner only. A
    file that is not the sessions' JSON, or holds no id where one belongs, is written anew."""
    from tui_ledger.spark.session import SESSIONS_FILE, kept_session

    url = "sc://h:15002/;token=SECRET"
    first = kept_session(url, "compiled")
    assert first is not None and kept_session(url, "compiled") == first
    path = cache / SESSIONS_FILE
    assert "SECRET" not in path.read_text() and "h:15002" not in path.read_text()
    assert path.stat().st_mode & 0o077 == 0
    assert kept_session(url, "interpreted") not in (None, first)
    path.write_text("{not json")
    mended = kept_session(url, "compiled")
    assert mended is not None and mended != first and kept_session(url, "compiled") == mended
    known = json.loads(path.read_text())
    path.write_text(json.dumps(dict.fromkeys(known, "not an id")))
    assert kept_session(url, "compiled") not in (None, mended)


def test_no_home_folder_means_a_session_of_the_run_s_own(
    client: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui_ledger.spark import session

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("LEDGER_TUI_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", no_home)
    assert session.kept_session("sc://h:15002", "compiled") is None


def test_two_runs_tag_their_queries_apart(client: None) -> None:
    """Two runs of a kind share a session, and an interrupt stops every operation under its
    tag there: one app's stale keystroke must not stop another's figures."""
    import subprocess
    import sys

    first_tag = "from tui_ledger.spark.paging import Queries; print(Queries(None).new_tag())"
    tags = {
        subprocess.run(
            [sys.executable, "-c", first_tag], capture_output=True, text=True, check=True
        ).stdout.strip()
        for _ in range(2)
    }
    assert len(tags) == 2 and all(tag.startswith("ledger-tui-") for tag in tags)


def test_a_run_that_fails_on_a_bad_cell_leaves_nothing_cached(
    spark_url: str, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CSV's checkpoint is made before its validation finds the bad cell: it goes with
    the failed run, as it would at a good run's end."""
    from tui_ledger.spark import commands
    from tui_ledger.spark.errors import SparkEngineError

    left: list[Any] = []

    def leave(spark: Any, cached: Any = ()) -> None:
        left.extend(cached)
        real_leave(spark, cached)

    real_leave = commands.leave
    monkeypatch.setattr(commands, "leave", leave)
    path = cache.parent / "bad.csv"
    path.write_text("workflow,tokens,passed\na,10,true\na,ten,false\n")
    with pytest.raises(SparkEngineError):
        commands.open_input(spark_url, [str(path)], load_options={})
    assert left, "the failed run left nothing to release"
    assert all(frame._plan._relation_id is None for frame in left)  # (released)


def test_a_session_the_url_names_is_left_as_found(spark_url: str, cache: Path) -> None:
    from tui_ledger.spark.session import connect, leave, with_session_id

    named = with_session_id(spark_url, str(uuid.uuid4()))
    first = connect(named)
    first.conf.set(SHUFFLE, "5")
    leave(first)
    again = connect(named)
    try:
        assert again.conf.get(SHUFFLE) == "5"  # the same session, not released
    finally:
        again.stop()  # (the test's own session: released)
    assert not (cache / "spark-sessions.json").exists()


def test_a_sessions_file_keyed_by_urls_loses_them_at_its_next_write(
    client: None, cache: Path
) -> None:
    """The file ae4df12 wrote kept each URL as its key, a token with it."""
    from tui_ledger.spark.session import SESSIONS_FILE, kept_session

    url = "sc://h:15002/;token=SECRET"
    path = cache / SESSIONS_FILE
    cache.mkdir(parents=True)
    path.write_text(json.dumps({f"{url} compiled": str(uuid.uuid4())}))
    assert kept_session(url, "compiled") is not None
    assert "SECRET" not in path.read_text()


def test_a_kept_session_is_joined_with_one_settings_request(
    spark_url: str, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Joining the session the last run left: one `Config` request reads the case setting,
    the codegen settings and the client's plan-compression settings at once; nothing is set
    that the session already has, and the first plan asks no settings of its own (three
    `Config` requests before: the case setting, `interpret`'s, the plan compression's)."""
    from pyspark.sql import SparkSession

    from tui_ledger.spark.requests import count_requests
    from tui_ledger.spark.session import connect, interpret, leave

    first = connect(spark_url, keep="interpreted")
    assert interpret(first)
    leave(first)
    counters: list[Any] = []
    create = SparkSession.Builder.create

    def counted(self: Any) -> Any:
        made = create(self)
        counters.append(count_requests(made))
        return made

    monkeypatch.setattr(SparkSession.Builder, "create", counted)
    second = connect(spark_url, keep="interpreted")
    try:
        assert second.session_id == first.session_id
        assert interpret(second)
        assert second.range(3).columns == ["id"]
        counts = counters[0].counts()
        assert counts == {"Config": 1, "AnalyzePlan": 1}, counts
        assert second.conf.get("spark.sql.caseSensitive") == "true"
        assert second.conf.get("spark.sql.codegen.factoryMode") == "NO_CODEGEN"
    finally:
        leave(second)
