"""A local Spark Connect server for the Spark tests: find it, start it, wait for it, stop it.

Standard library only, so `.ci/spark-server` can run it with any `python3`, before a virtual
environment exists. The server is the one the full `pyspark` wheel ships
(`sbin/start-connect-server.sh` and the connect jar), run on a Java 17+ runtime, bound to
127.0.0.1 on a free port, and tuned for a small shared machine (two local cores, a 2 GB
driver, four shuffle partitions, no web UI). Nothing is installed here: where the server or
Java is missing, `ServerUnavailable` says what to install.

    python3 tests/spark/server.py start [--state DIR]   # prints the sc:// URL once listening
    python3 tests/spark/server.py stop [--state DIR]    # stops the server that start started
    python3 tests/spark/server.py status [--state DIR]

The state folder (default `.spark-server/` at the repository root) holds `url`, `pid` (the
process group leader), `server.log`, and the server's scratch space; `stop` removes them.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
DEFAULT_STATE = REPOSITORY / ".spark-server"
# Where the documented install command puts the server (see docs/SPARK.md):
#   python3 -m pip install --no-deps --target ~/.cache/ledger-tui/spark-server-4.3.0 pyspark==4.3.0
SERVER_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ledger-tui"
INSTALL_HINT = (
    "install a server with: python3 -m pip install --no-deps --target "
    f"{SERVER_CACHE}/spark-server-4.3.0 pyspark==4.3.0 (or set SPARK_HOME to a Spark 4 "
    "distribution)"
)
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 30.0
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"

# Small-machine settings: every one is a --conf of the server, so a real cluster is unaffected.
SETTINGS: dict[str, str] = {
    "spark.connect.grpc.binding.address": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.ui.enabled": "false",
    # Two cores: a few shuffle partitions, not 200 tiny ones (AQE coalesces further).
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "2",
    "spark.sql.session.timeZone": "UTC",
    # Answers are small (per-group rows, one page); a large result is a bug, not a workload.
    "spark.driver.maxResultSize": "512m",
    # Heap spent on execution rather than on caching, which the tests never do.
    "spark.memory.fraction": "0.7",
    "spark.memory.storageFraction": "0.2",
}


class ServerUnavailable(RuntimeError):
    """No server can be started here: what is missing, and how to install it."""


@dataclass(frozen=True)
class Server:
    """A running server this module started: its URL and its process group."""

    url: str
    pid: int
    state: Path
    seconds_to_listen: float


def find_spark_home() -> Path:
    """A Spark 4 distribution with the Connect server script: $LEDGER_TUI_SPARK_HOME,
    $SPARK_HOME, or the newest `spark-server-*` under ~/.cache/ledger-tui."""
    candidates: list[Path] = []
    for variable in ("LEDGER_TUI_SPARK_HOME", "SPARK_HOME"):
        if os.environ.get(variable):
            home = Path(os.environ[variable])
            candidates += [home, home / "pyspark"]
    cached = sorted(glob.glob(str(SERVER_CACHE / "spark-server-*" / "pyspark")), reverse=True)
    candidates += [Path(path) for path in cached]
    for home in candidates:
        script = home / "sbin" / "start-connect-server.sh"
        if script.is_file() and any((home / "jars").glob("spark-connect_*.jar")):
            return home
    raise ServerUnavailable(f"no Spark Connect server found; {INSTALL_HINT}")


def find_java() -> str:
    """The `java` of $JAVA_HOME or the PATH, when it is version 17 or later."""
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        raise ServerUnavailable(
            "no Java runtime found; install one with: apt-get install -y openjdk-17-jre-headless"
        )
    result = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    match = re.search(r'version "(\d+)', result.stderr + result.stdout)
    if not match or int(match.group(1)) < 17:
        raise ServerUnavailable(
            f"{java} is not Java 17 or later; install one with: "
            "apt-get install -y openjdk-17-jre-headless"
        )
    return java


def free_port() -> int:
    """A TCP port nobody listens on at 127.0.0.1 right now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped) is not a server.
    with contextlib.suppress(OSError):
        status = Path(f"/proc/{pid}/stat").read_text()
        if status.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def _log_tail(log: Path, lines: int = 15) -> str:
    try:
        text = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def start(
    state: Path = DEFAULT_STATE,
    *,
    driver_memory: str = "2g",
    cores: int = 2,
    timeout: float = START_TIMEOUT_S,
) -> Server:
    """Start a server bound to 127.0.0.1 on a free port; return once it accepts connections.

    Waits on a condition (the port accepting a TCP connection while the process lives), never
    a fixed sleep; a server that dies first raises `ServerUnavailable` with its log's tail.
    """
    spark_home = find_spark_home()
    java = find_java()
    if (state / "pid").exists() and _alive(int((state / "pid").read_text())):
        raise ServerUnavailable(f"a server started from {state} is still running; stop it first")
    state.mkdir(parents=True, exist_ok=True)
    for name in ("scratch", "warehouse", "conf"):
        (state / name).mkdir(exist_ok=True)
    port = free_port()
    settings = {
        **SETTINGS,
        "spark.connect.grpc.binding.port": str(port),
        "spark.local.dir": str(state / "scratch"),
        "spark.sql.warehouse.dir": str(state / "warehouse"),
    }
    command = [
        "bash",
        str(spark_home / "sbin" / "start-connect-server.sh"),
        "--wait",  # in the foreground: this process group is the server, and stop kills it
        "--master",
        f"local[{cores}]",
        "--driver-memory",
        driver_memory,
    ]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    environment = {
        **os.environ,
        "SPARK_HOME": str(spark_home),
        "JAVA_HOME": str(Path(java).resolve().parents[1]),
        # Private pid, log and configuration folders: another engineer's server on this
        # machine (spark-daemon.sh keys its pid file by user alone) is never touched.
        "SPARK_PID_DIR": str(state),
        "SPARK_LOG_DIR": str(state),
        "SPARK_CONF_DIR": str(state / "conf"),
        "SPARK_IDENT_STRING": f"ledger-tui-{port}",
    }
    log = state / "server.log"
    began = time.monotonic()
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=state,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so stop reaches the JVM too
        )
    (state / "pid").write_text(str(process.pid))
    deadline = began + timeout
    while not _listening(port):
        if process.poll() is not None:
            _cleanup(state)
            raise ServerUnavailable(
                f"the Spark Connect server exited ({process.returncode}) before listening:\n"
                + _log_tail(log)
            )
        if time.monotonic() > deadline:
            stop(state)
            raise ServerUnavailable(
                f"the Spark Connect server was not listening after {timeout:.0f} s:\n"
                + _log_tail(log)
            )
        time.sleep(0.2)
    url = f"sc://127.0.0.1:{port}"
    (state / "url").write_text(url + "\n")
    return Server(url, process.pid, state, time.monotonic() - began)


def _is_our_server(pid: int) -> bool:
    """Whether `pid` still leads the process group of a server we started (not a reused pid)."""
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


def stop(state: Path = DEFAULT_STATE, *, timeout: float = STOP_TIMEOUT_S) -> bool:
    """Stop the server `start` left in `state` (SIGTERM to its group, SIGKILL after
    `timeout`), and remove the state folder. False when there was none to stop."""
    pid_file = state / "pid"
    if not pid_file.exists():
        return False
    pid = int(pid_file.read_text())
    stopped = False
    if _alive(pid) and _is_our_server(pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _group_alive(pid) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.2)
        if _group_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        _reap(pid)
        stopped = True
    _cleanup(state)
    return stopped


def _group_alive(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _cleanup(state: Path) -> None:
    shutil.rmtree(state, ignore_errors=True)


def status(state: Path = DEFAULT_STATE) -> str | None:
    """The URL of the server started from `state`, when it is still running."""
    pid_file, url_file = state / "pid", state / "url"
    if not pid_file.exists() or not url_file.exists():
        return None
    return url_file.read_text().strip() if _alive(int(pid_file.read_text())) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("start", "stop", "status"))
    parser.add_argument("--state", type=Path, default=DEFAULT_STATE, help="state folder")
    parser.add_argument("--driver-memory", default="2g")
    args = parser.parse_args(argv)
    if args.action == "start":
        try:
            server = start(args.state, driver_memory=args.driver_memory)
        except ServerUnavailable as error:
            print(f"spark-server: {error}", file=sys.stderr)
            return 1
        print(server.url)
        print(f"listening after {server.seconds_to_listen:.1f} s", file=sys.stderr)
        return 0
    if args.action == "stop":
        print("stopped" if stop(args.state) else "no server to stop", file=sys.stderr)
        return 0
    url = status(args.state)
    print(url or "not running")
    return 0 if url else 1


if __name__ == "__main__":
    sys.exit(main())
