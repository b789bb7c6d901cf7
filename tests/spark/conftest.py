"""The Spark Connect server the Spark tests run against: found, or started for the session.

- `LEDGER_TUI_SPARK_REMOTE=sc://...` (what `.ci/spark-server start` prints): use that server.
- Otherwise start one with `tests/spark/server.py` for this test session and stop it at the
  end (about 10-30 s to listen), when Java 17+ and the server are installed.
- Without the client (the `spark` extra), Java or the server, the tests skip with the
  reason; with `LEDGER_TUI_REQUIRE_SPARK=1` (CI) they fail instead, so CI cannot go green
  by skipping them.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.spark import server

REQUIRED = os.environ.get("LEDGER_TUI_REQUIRE_SPARK") == "1"
CLIENT = importlib.util.find_spec("pyspark") is not None

# These modules import the engine (and so pyspark) at the top: without the client they cannot
# even be collected. test_spark_boundary says so as a skip with its reason; where Spark is
# required (CI), they are collected and fail loudly.
ENGINE_TEST_FILES = ["test_spark_differential.py", "test_spark_engine.py"]
if not CLIENT and not REQUIRED:
    collect_ignore = ENGINE_TEST_FILES


def unavailable(reason: str) -> None:
    """Skip the test, or fail it where Spark is required (CI)."""
    if REQUIRED:
        pytest.fail(f"LEDGER_TUI_REQUIRE_SPARK=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def client() -> None:
    """The Spark Connect client is installed (a test that reaches no server still needs it)."""
    if not CLIENT:
        unavailable("the Spark Connect client is not installed (pip install -e '.[spark]')")


@pytest.fixture(scope="session")
def spark_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a Spark Connect server for the whole session."""
    # find_spec of a submodule imports its package: ask for the package first.
    if not CLIENT or importlib.util.find_spec("pyspark.sql.connect") is None:
        unavailable("the Spark Connect client is not installed (pip install -e '.[spark]')")
    given = os.environ.get("LEDGER_TUI_SPARK_REMOTE")
    if given:
        yield given
        return
    state = Path(tmp_path_factory.mktemp("spark-server"))
    try:
        started = server.start(state)
    except server.ServerUnavailable as error:
        unavailable(f"no Spark Connect server: {error}")
    try:
        yield started.url
    finally:
        server.stop(state)


@pytest.fixture(scope="session")
def spark(spark_url: str) -> Any:
    """A Spark Connect session (case-sensitive column names, few retries)."""
    warnings.filterwarnings("ignore", module="pyspark")
    from tui_ledger.spark.session import connect

    session = connect(spark_url)
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def compiled(request: pytest.FixtureRequest) -> None:
    """Each test on the shared session starts with its queries compiled, Spark's default: an
    app test that opens a small input switches the session to interpreted
    (`session.interpret`), and what a test measures must not depend on the tests before it."""
    if "spark" in request.fixturenames:
        from tui_ledger.spark.session import COMPILED, interpret

        assert interpret(request.getfixturevalue("spark"), COMPILED)
