"""The Spark Connect session: reaching the server quickly, or saying in one line why not.

Imports pyspark: only the Spark path imports this module (see `tui_ledger.spark`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import uuid
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlparse

from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from tui_ledger.spark.errors import SparkUnreachable

CONNECT_TIMEOUT_S = 10.0


def connect(
    url: str | None = None, *, timeout: float = CONNECT_TIMEOUT_S, keep: str | None = None
) -> SparkSession:
    """A Spark Connect session at `url` (or $SPARK_REMOTE), checked to answer.

    An unreachable server is a `SparkUnreachable` within `timeout` seconds, not after the
    client's ten minutes of retries. The session reads column names case-sensitively, so
    `Tokens` and `tokens` are two columns, as they are in the file.

    `keep` (a name: "compiled", "interpreted"): the server-side session the last run of
    that name left on this server, warm (`kept_session`), and left there again by `leave`.
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
    kept = kept_session(url, keep) if keep is not None else None
    try:
        try:
            spark = _session(url, kept)
        except PySparkException as error:
            if kept is None or keep is None or "INVALID_HANDLE" not in str(error):
                raise
            # Released, or ended after its idle time: the server refuses its id for good.
            kept = kept_session(url, keep, fresh=True)
            spark = _session(url, kept)
    except PySparkException as error:
        raise SparkUnreachable(
            f"the server at {host}:{port} does not answer as Spark Connect: {first_line(error)}"
        ) from None
    if kept is not None or "session_id=" in url:  # (a session the URL names is its owner's)
        _KEPT.add(spark)
    return spark


def _session(url: str, session_id: str | None) -> SparkSession:
    if session_id is not None:
        url = with_session_id(url, session_id)
    spark = SparkSession.builder.remote(url).create()
    try:
        _few_retries(spark)
        _settle_settings(spark)  # (the first request: raises here)
    except PySparkException:
        with contextlib.suppress(Exception):
            spark.client.close()
        _forget(spark)  # (or it stays the default session, and pyspark's own calls use it)
        raise
    _no_call_sites()
    return spark


# The settings the client reads before its first plan (`_plan_compression_...`), and the
# value it assumes when the server has none of them (an older server).
_PLAN_COMPRESSION = {
    "spark.connect.session.planCompression.threshold": "-1",
    "spark.connect.session.planCompression.defaultAlgorithm": "NONE",
}
CASE_SENSITIVE = "spark.sql.caseSensitive"
# What `_settle_settings` found the session's settings to be, by session (`interpret` reads
# it to send nothing when a kept session already has them).
_SETTINGS: weakref.WeakKeyDictionary[SparkSession, dict[str, str]] = weakref.WeakKeyDictionary()


def _settle_settings(spark: SparkSession) -> None:
    """Column names read case-sensitively, in as few requests as the session allows: one
    request reads `spark.sql.caseSensitive`, the codegen settings `interpret` sets and the
    plan-compression settings the client would otherwise ask in a request of its own before
    its first plan; the case setting is then set only where it is not already (a session a
    run left warm has it). So a kept session's first plan costs one `Config` where it cost
    two, and a small input's `interpret` none where the session has its settings."""
    client: Any = spark.client
    asked = {CASE_SENSITIVE: "false", **dict.fromkeys(INTERPRETED), **_PLAN_COMPRESSION}
    if not hasattr(client, "get_config_with_defaults"):
        spark.conf.set(CASE_SENSITIVE, "true")
        return
    values = dict(zip(asked, client.get_config_with_defaults(*asked.items()), strict=True))
    if values.get(CASE_SENSITIVE) != "true":
        spark.conf.set(CASE_SENSITIVE, "true")
        values[CASE_SENSITIVE] = "true"
    threshold, algorithm = (values.get(key) for key in _PLAN_COMPRESSION)
    if (
        getattr(client, "_plan_compression_threshold", 0) is None
        and getattr(client, "_plan_compression_algorithm", "") is None
        and threshold is not None
        and algorithm is not None
    ):
        try:
            client._plan_compression_threshold = int(threshold)
            client._plan_compression_algorithm = algorithm
        except ValueError:
            pass  # (the client asks them itself)
    _SETTINGS[spark] = {key: value for key, value in values.items() if value is not None}


def with_session_id(url: str, session_id: str) -> str:
    """`url` (sc://HOST:PORT, with or without a path's `/` and `;key=value` parameters) naming
    the server-side session `session_id`."""
    if "/;" in url:
        return f"{url};session_id={session_id}"
    return f"{url.rstrip('/')}/;session_id={session_id}"


# ------------------------------------------------------------------ a session kept warm

# Sessions `connect(keep=...)` opened: `leave` leaves them on the server.
_KEPT: weakref.WeakSet[SparkSession] = weakref.WeakSet()
SESSIONS_FILE = "spark-sessions.json"
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC  # (with mode 0o600: its owner's alone)
DIGEST_LENGTH = 32  # hex digits of a key of the sessions file
_DIGEST = re.compile(f"[0-9a-f]{{{DIGEST_LENGTH}}}")


def cache_folder() -> Path:
    """Where ledger-tui keeps what it may lose: $LEDGER_TUI_CACHE_DIR, else
    $XDG_CACHE_HOME/ledger-tui, else ~/.cache/ledger-tui."""
    given = os.environ.get("LEDGER_TUI_CACHE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ledger-tui"


def kept_session(url: str, name: str, *, fresh: bool = False) -> str | None:
    """The id of the server-side session kept for runs named `name` on `url` (a new one
    when there is none yet, or `fresh`), as `cache_folder()/spark-sessions.json` holds it;
    None where that file cannot be read and written, or no home folder is known (then every
    run has a session of its own, released at its end, as before), or where `url` names a
    session itself. A file that is not such JSON, or holds no id where one belongs, is
    written anew.

    Why: Spark compiles a query's operators to Java classes and caches them per session,
    and a Spark Connect session lives on the server past the client's process unless it is
    released. Each `summary --spark` of 1M Parquet rows in a new session spent 8.6-9.6 s in
    its figures' query, against 4.0-4.7 s in the session the last run left (local[2]).
    Sessions are the server's to end (after its idle timeout, an hour by default); a run
    then starts another. Runs on inputs of both kinds keep one each: their settings differ
    (`interpret`), and two runs at once may share one."""
    if "session_id=" in url:
        return None
    # The file keys by a digest: a URL may carry a token (sc://HOST/;token=...).
    key = hashlib.sha256(f"{url} {name}".encode()).hexdigest()[:DIGEST_LENGTH]
    try:
        path = cache_folder() / SESSIONS_FILE
        known = _known_sessions(path)
        session_id = known.get(key)
        if fresh or not _is_uuid(session_id):
            session_id = str(uuid.uuid4())
            known[key] = session_id
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
            with os.fdopen(os.open(partial, _NEW_FILE, 0o600), "w", encoding="utf-8") as out:
                out.write(json.dumps(known, indent=1))
            partial.replace(path)
    except (OSError, RuntimeError):  # (RuntimeError: no home folder to be found)
        return None
    return str(session_id)


def _known_sessions(path: Path) -> dict[str, Any]:
    """The ids `path` holds by key; none where it does not exist or is not such a file
    (it is then written anew). Keys that are not digests (ae4df12 keyed by the URL itself,
    token and all) are dropped, so the next write leaves none."""
    if not path.exists():
        return {}
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {}
    if not isinstance(known, dict):
        return {}
    return {key: value for key, value in known.items() if _DIGEST.fullmatch(key)}


def _is_uuid(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def leave(spark: SparkSession, cached: Iterable[Any] = ()) -> None:
    """This run is done with `spark`: a kept session (`connect(keep=...)`) stays on the
    server for the next run once the `cached` frames (`localCheckpoint`s) are released there;
    any other session is released whole, with what it cached. Best effort: a server already
    gone has nothing left to release."""
    if spark not in _KEPT:
        with contextlib.suppress(Exception):
            spark.stop()
        return
    release(spark, cached)
    with contextlib.suppress(Exception):
        spark.client.close()  # the channel only: `stop` would release the session
    _forget(spark)


def release(spark: SparkSession, cached: Iterable[Any]) -> None:
    """Drop the `cached` frames (`localCheckpoint`s) on the server now, as far as it
    answers (pyspark does it when a frame is collected, which a process's exit may never
    do)."""
    for frame in cached:
        with contextlib.suppress(Exception):
            _release(spark, frame)


def _forget(spark: SparkSession) -> None:
    """As `stop` does: `spark` is no longer the process's default or active session (the
    client makes a new session either only where none is set)."""
    owner: Any = type(spark)
    if getattr(owner, "_default_session", None) is spark:
        owner._default_session = None
    active = getattr(owner, "_active_session", None)
    if active is not None and getattr(active, "session", None) is spark:
        active.session = None


def _release(spark: SparkSession, frame: Any) -> None:
    from pyspark.sql.connect.plan import CachedRemoteRelation, RemoveRemoteCachedRelation

    plan = getattr(frame, "_plan", None)
    if isinstance(plan, CachedRemoteRelation) and plan._relation_id is not None:
        client: Any = spark.client
        client.execute_command(RemoveRemoteCachedRelation(plan).command(session=client))
        cast(Any, plan)._relation_id = None  # (so that its collection asks nothing more)


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
    known = _SETTINGS.get(spark, {})
    if all(known.get(key) == value for key, value in settings.items()):
        return True  # (a session a run left warm has them: nothing to send)
    conf: Any = spark.conf
    try:
        if hasattr(conf, "_set_all"):
            conf._set_all(settings, silent=False)  # one request for both
        else:
            for key, value in settings.items():
                conf.set(key, value)
    except PySparkException:
        return False
    _SETTINGS.setdefault(spark, {}).update(settings)
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
