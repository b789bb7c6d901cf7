"""The Spark Connect session: reaching the server quickly, or saying in one line why not.

Imports pyspark: only the Spark path imports this module (see `tui_ledger.spark`).
"""

from __future__ import annotations

import os
import socket
from typing import Any
from urllib.parse import urlparse

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from tui_ledger.spark.errors import SparkUnreachable

CONNECT_TIMEOUT_S = 10.0


def connect(url: str | None = None, *, timeout: float = CONNECT_TIMEOUT_S) -> SparkSession:
    """A Spark Connect session at `url` (or $SPARK_REMOTE), checked to answer.

    An unreachable server is a `SparkUnreachable` within `timeout` seconds, not after the
    client's ten minutes of retries. The session reads column names case-sensitively, so
    `Tokens` and `tokens` are two columns, as they are in the file.
    """
    url = url or os.environ.get("SPARK_REMOTE")
    if not url:
        raise SparkUnreachable(
            "no Spark Connect URL: pass --spark sc://HOST:PORT or set SPARK_REMOTE."
        )
    parsed = urlparse(url)
    if parsed.scheme != "sc" or not parsed.hostname:
        raise SparkUnreachable(
            f"{url!r} is not a Spark Connect URL; write it as sc://HOST:PORT (e.g. "
            "sc://127.0.0.1:15002)."
        )
    host, port = parsed.hostname, parsed.port or 15002
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise SparkUnreachable(
            f"cannot reach the Spark Connect server at {host}:{port} ({reason.lower()}); "
            "check the URL and that the server is running."
        ) from None
    try:
        spark = SparkSession.builder.remote(url).create()
        _few_retries(spark)
        spark.conf.set("spark.sql.caseSensitive", "true")
        _no_call_sites()
    except PySparkException as error:
        raise SparkUnreachable(
            f"the server at {host}:{port} does not answer as Spark Connect: {first_line(error)}"
        ) from None
    return spark


def _no_call_sites() -> None:
    """Stop the client walking the Python stack at every DataFrame and Column call.

    It does so to name the caller in the server's errors (ours name the input and the row
    instead): about 0.33 ms a call, 0.4 s of `summary --spark` on the demo, more for an app
    keystroke's plans. The switch, `spark.python.sql.dataFrameDebugging.enabled`, is a static
    setting of the server (a session cannot change it), which the client reads once per
    process into `pyspark.errors.utils._enable_debugging_cache`: set here first. (A client
    without that cache keeps its own behaviour.)"""
    from pyspark.errors import utils

    if hasattr(utils, "_enable_debugging_cache"):
        setattr(utils, "_enable_debugging_cache", False)  # noqa: B010 (typed None there)


# Below this many attempts a query costs less interpreted than compiled (`interpret`).
INTERPRET_BELOW_ROWS = 20_000
# The settings of `interpret`, and Spark's own values of them (for a test to go back).
INTERPRETED = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
COMPILED = {"spark.sql.codegen.wholeStage": "true", "spark.sql.codegen.factoryMode": "FALLBACK"}


def interpret(spark: SparkSession, settings: dict[str, str] = INTERPRETED) -> bool:
    """Have the session evaluate its queries' expressions as they are, not compiled to Java.

    Spark compiles each query's operators and expressions to Java classes (Janino) and
    caches them per session: a new session (every `summary --spark`, every app) compiles
    them all again, about 40 classes and 2-3 s on a local[2] server for the demo's queries,
    where running them takes a tenth of that. Interpreted, the demo's first query took 0.6 s
    against 1.2-1.8 s, and its figures 1.2 s against 1.8-2.9 s; at 1M rows interpreted costs
    twice as much (31-37 s against 15-20 s), so only inputs known to be small are run so
    (`inputs.local_rows_at_most` below `INTERPRET_BELOW_ROWS`). One `Config` request; a
    server that refuses the settings (a managed cluster may) keeps compiling: False."""
    conf: Any = spark.conf
    try:
        if hasattr(conf, "_set_all"):
            conf._set_all(settings, silent=False)  # one request for both
        else:
            for key, value in settings.items():
                conf.set(key, value)
    except PySparkException:
        return False
    return True


def _few_retries(spark: SparkSession) -> None:
    """Retry a dropped call a few times over seconds, not 15 times over ten minutes."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    client = getattr(spark, "client", None)
    if client is not None and hasattr(client, "set_retry_policies"):
        client.set_retry_policies([DefaultPolicy(max_retries=3, max_backoff=2000)])


def first_line(error: BaseException) -> str:
    """The first line of an engine error, without its JVM stack or error-class boilerplate."""
    text = str(error).strip().splitlines()
    line = text[0] if text else type(error).__name__
    return line.removeprefix("[").split("] ", 1)[-1] if line.startswith("[") else line
