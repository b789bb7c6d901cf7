"""What every figure of `bench.py` stands on: the seeded ledgers (generated once, reused) and
the room checks before a size is measured, fresh processes (wall time and peak RSS, `bench.py
--child MODE` and the JSON it reports), medians and p90, and the benchmark's private tmux
server with its panes (a control-mode client that captures a pane without a fork each)."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import csv
import json
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
SAMPLE = ROOT / "sample_data" / "runs.csv"
BENCH = ROOT / "benchmarks" / "bench.py"  # the entry point, which also runs every child
SEED = 7
WORKFLOWS = 8  # generate.py's default
SCREEN = (160, 50)
RESULT_PREFIX = "BENCH-RESULT "
MB = 1_000_000
TIMINGS_VARIABLE = "LEDGER_TUI_TIMINGS"  # where the app appends its timing events

# Issue 29's memory budget: 2.5 x the frame + 200 MiB (209.7 MB; the tables print MB).
MEMORY_FACTOR = 2.5
MEMORY_SLACK = 200 * 2**20
# A size is measured only when the machine has room for it (`room_for`): the CSV (53 bytes a
# row) on disk, and the app's memory budget (2.5 x a 29-byte-a-row frame + 200 MiB, about 75
# bytes a row) plus this benchmark's own, in MemAvailable.
CSV_BYTES_PER_ROW = 53
MEMORY_BYTES_PER_ROW = 80


# --------------------------------------------------------------------------- small helpers


def compile_bytecode() -> str:
    """Compile the package's modules before anything is timed, as `pip install` does.

    Run from a checkout (an editable install) with `PYTHONDONTWRITEBYTECODE=1`, as on the
    machines here, Python would compile ledger-tui's modules afresh in every process it starts:
    0.2 s of every start-up measured, which no installed copy pays.
    """
    package = ROOT / "tui_ledger"
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(package)],
        check=True,
        stdout=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )
    return (
        "bytecode of tui_ledger/ compiled before timing, as an install would have it "
        f"(PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', 'unset')} here)"
    )


def parse_rows(text: str) -> int:
    """`100k`, `1m`, `2.5m`, `10000` -> a row count."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmM]?)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a row count like 100k, 1m, 10m")
    scale = {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)


def parse_bytes(text: str) -> int:
    """`400M`, `1.5G`, `800000000` -> bytes (binary units: M = MiB)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgG]?)i?[bB]?\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a size like 400M or 1G")
    scale = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)


def rows_label(rows: int) -> str:
    """1_000_000 -> `1m`, 100_000 -> `100k`."""
    if rows >= 1_000_000 and rows % 100_000 == 0:
        return f"{rows / 1_000_000:g}m"
    if rows >= 1_000 and rows % 100 == 0:
        return f"{rows / 1_000:g}k"
    return str(rows)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def p90(values: Sequence[float]) -> float:
    """The 90th percentile (nearest rank), nan for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def seconds_text(value: float) -> str:
    if math.isnan(value):
        return "—"
    if value < 1.0:
        return f"{value * 1000:.1f} ms"
    return f"{value:.2f} s"


def mb_text(value: float) -> str:
    return "—" if math.isnan(value) else f"{value / MB:,.0f} MB"


def vm_hwm(pid: int) -> tuple[int, int]:
    """(VmHWM, VmRSS) of a live process, in bytes (0, 0 when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0, 0
    found = dict(re.findall(r"^(VmHWM|VmRSS):\s+(\d+) kB", text, re.M))
    return int(found.get("VmHWM", 0)) * 1024, int(found.get("VmRSS", 0)) * 1024


def tool(name: str) -> str | None:
    """A command from the venv this script runs in, else from PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    return shutil.which(name)


@dataclass
class Run:
    """One finished child process: wall seconds, peak RSS, exit code, the tails of its output."""

    seconds: float
    max_rss: int
    returncode: int
    stdout: str
    stderr: str


def run_measured(
    command: Sequence[str],
    *,
    stdout_path: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 900.0,
) -> Run:
    """Run a command; wall time from spawn to exit, and its own peak RSS (wait4's ru_maxrss)."""
    with tempfile.TemporaryFile() as err, contextlib.ExitStack() as stack:
        out: Any
        if stdout_path is not None:
            out = stack.enter_context(open(stdout_path, "wb"))
        else:
            out = stack.enter_context(tempfile.TemporaryFile())
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env, cwd=ROOT)
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.002)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
        text = ""
        if stdout_path is None:
            out.seek(0)
            text = out.read().decode("utf-8", "replace")
    return Run(seconds, usage.ru_maxrss * 1024, process.returncode, text, stderr)


def child(mode: str, *args: str, timeout: float = 900.0) -> tuple[dict[str, Any], Run]:
    """Run this script in `--child MODE` and return the JSON it reports, with its Run."""
    command = [sys.executable, str(BENCH), "--child", mode, *args]
    run = run_measured(command, timeout=timeout)
    for line in reversed(run.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX) :]), run
    tail = "\n".join(run.stderr.strip().splitlines()[-15:])
    raise RuntimeError(f"child {mode} {' '.join(args)} failed ({run.returncode}):\n{tail}")


def report(result: dict[str, Any]) -> None:
    """What a child prints for its parent."""
    print(RESULT_PREFIX + json.dumps(result), flush=True)


# --------------------------------------------------------------------------- data


def ledger_path(rows: int) -> Path:
    return OUT / f"ledger-{rows}-seed{SEED}.csv"


def room_for(rows: int) -> str | None:
    """Why this machine cannot measure `rows` rows now (None: it can): the file's disk space
    (when it is still to be generated) and the app's memory, against what is free."""
    needed_memory = rows * MEMORY_BYTES_PER_ROW
    available = _mem_available()
    if available is not None and available < needed_memory:
        return (
            f"{rows_label(rows)} skipped: the app may need {needed_memory / 1e9:.1f} GB and "
            f"{available / 1e9:.1f} GB is available (MemAvailable)"
        )
    if not ledger_path(rows).exists():
        OUT.mkdir(parents=True, exist_ok=True)
        needed_disk = rows * CSV_BYTES_PER_ROW * 1.05
        free = shutil.disk_usage(OUT).free
        if free < needed_disk:
            return (
                f"{rows_label(rows)} skipped: its CSV needs {needed_disk / 1e9:.1f} GB and "
                f"{free / 1e9:.1f} GB is free under {OUT.relative_to(ROOT)}"
            )
    return None


def _mem_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def ensure_ledger(rows: int) -> Path:
    """The seeded ledger of `rows` rows, generated once (by generate.py, in its own process,
    streamed to the file: a 100M-row ledger is 5.3 GB and is never held in memory whole)."""
    path = ledger_path(rows)
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.partial.csv")
    print(f"  generating {rows:,} rows -> {path.relative_to(ROOT)}", file=sys.stderr)
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "generate.py"),
            "--rows",
            str(rows),
            "--seed",
            str(SEED),
            "-o",
            str(partial),
        ],
        check=True,
        cwd=ROOT,
    )
    os.replace(partial, path)
    return path


def expected_groups(path: Path) -> list[str]:
    """The workflow names the summary must show (generated files: from the generator)."""
    if path.name.startswith("ledger-") and path.parent == OUT:
        sys.path.insert(0, str(ROOT))
        from benchmarks.generate import workflow_profiles

        return [profile.name for profile in workflow_profiles(WORKFLOWS, SEED)]
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        return sorted({(row.get("workflow") or "").strip() for row in reader} - {""})


# --------------------------------------------------------------------------- tmux panes


# A private tmux server (its own socket) for the whole run: other people's tmux sessions are
# not touched, and the server does not come and go between measurements.
TMUX_SOCKET = f"ledger-bench-{os.getpid()}"


_tmux_started = False


def tmux(*args: str) -> list[str]:
    """A tmux command line on the benchmark's own server."""
    return ["tmux", "-L", TMUX_SOCKET, *args]


def _tmux_server() -> None:
    """Start the private server once, held open by an idle session, and stop it at exit."""
    global _tmux_started
    if _tmux_started:
        return
    subprocess.run(tmux("new-session", "-d", "-s", "anchor", "sleep 86400"), check=True)
    socket = subprocess.run(
        tmux("display", "-p", "-t", "anchor", "#{socket_path}"), capture_output=True, text=True
    ).stdout.strip()

    def stop() -> None:
        subprocess.run(tmux("kill-server"), check=False)
        if socket:
            Path(socket).unlink(missing_ok=True)  # tmux leaves its socket file behind

    atexit.register(stop)
    _tmux_started = True


class TmuxControl:
    """A tmux control-mode client: run tmux commands and read their output without a fork each."""

    def __init__(self, session: str) -> None:
        self.session = session
        self.process = subprocess.Popen(
            tmux("-C", "attach", "-t", session),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._send("display -p BENCH-SYNC")
        while self._block() != ["BENCH-SYNC"]:
            pass

    def _send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def _block(self) -> list[str]:
        assert self.process.stdout is not None
        lines: list[str] | None = None
        while True:
            line = self.process.stdout.readline().decode("utf-8", "replace")
            if not line:
                raise EOFError("tmux control client ended")
            if line.startswith("%begin"):
                # Flags 1: the output of a command this client sent (0: the server's own).
                lines = [] if line.split()[-1] == "1" else None
            elif line.startswith(("%end", "%error")) and lines is not None:
                return lines
            elif lines is not None:
                lines.append(line.rstrip("\n"))

    def command(self, line: str) -> list[str]:
        self._send(line)
        return self._block()

    def capture(self) -> list[str]:
        return self.command(f"capture-pane -p -t {self.session}")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            assert self.process.stdin is not None
            self.process.stdin.close()
        with contextlib.suppress(Exception):
            self.process.wait(timeout=2)


def _panes(line: str) -> tuple[str, str]:
    """The attempts pane's part of a screen line and the summary pane's (split at `││`)."""
    left, sep, right = line.partition("││")
    return (left, right) if sep else (line, "")


_FIGURE = re.compile(r"[0-9][0-9,]*(?:\.[0-9]+)?")


def screen_state(lines: list[str], groups: Sequence[str]) -> tuple[bool, bool, bool, list[str]]:
    """(frame painted, first rows, full first screen, groups still missing) for a captured pane.

    First rows: the header, the view's name and at least one row of a known group in the
    attempts pane. Full: besides, the summary pane shows each group followed by figures on its
    line (the app shows none before they are final).
    """
    painted = any("ledger-tui" in line for line in lines[:3])
    view = any("FAILURES" in line for line in lines[:3])
    table_rows = 0
    missing = set(groups)
    for line in lines:
        left, right = _panes(line)
        body = left.lstrip("│ ")
        if any(body.startswith(name + " ") for name in groups):
            table_rows += 1
        summary = right.strip("│ ").lstrip("▸ ")
        for name in list(missing):
            if summary.startswith(name + " ") and _FIGURE.search(summary[len(name) :]):
                missing.discard(name)
    rows = painted and view and table_rows > 0
    return painted, rows, rows and not missing, sorted(missing)


def stamped_app(*args: str) -> Callable[[str, str], str]:
    """`open_pane`'s script for `ledger-tui ARGS...`: the pane's shell notes the time in
    `OUT/<session>.start`, then becomes ledger-tui (same pid), so that time is the process
    start."""

    def script(session: str, ledger_tui: str) -> str:
        command = " ".join(shlex.quote(part) for part in (ledger_tui, *args))
        return f"date +%s.%N > {shlex.quote(str(OUT / f'{session}.start'))}\nexec {command}\n"

    return script


def open_pane(prefix: str, script: Callable[[str, str], str]) -> tuple[str, Path, TmuxControl]:
    """A new session on the benchmark's tmux server whose pane runs `script(session,
    ledger_tui)` (a shell script written beside the ledgers) and stays when it ends, with a
    control client attached: (session, the script's path, the client)."""
    ledger_tui = tool("ledger-tui")
    if ledger_tui is None:
        raise RuntimeError("ledger-tui is not installed in this environment")
    session = f"{prefix}-{os.getpid()}-{time.monotonic_ns() % 10**9}"
    launcher = OUT / f"{session}.sh"
    launcher.write_text(script(session, ledger_tui))
    width, height = SCREEN
    _tmux_server()
    subprocess.run(
        tmux("new-session", "-d", "-s", session, "-x", str(width), "-y", str(height)),
        check=True,
        cwd=ROOT,
    )
    control = TmuxControl(session)
    control.command(f"set-option -t {session} remain-on-exit on")
    control.command(f"respawn-pane -k -t {session} 'sh {launcher}'")
    return session, launcher, control


def close_pane(session: str, control: TmuxControl, *files: Path) -> None:
    """Quit the app in the pane, end the session and remove the files it used."""
    with contextlib.suppress(Exception):
        control.command(f"send-keys -t {session} q")
    control.close()
    subprocess.run(tmux("kill-session", "-t", session), check=False, cwd=ROOT)
    for file in files:
        file.unlink(missing_ok=True)
