"""The "Millions of attempts" benchmark: every target of the issue, measured, with PASS or MISS.

    python benchmarks/bench.py                          # 100k, 1M and 10M rows, 3 repeats
    python benchmarks/bench.py --sizes 100k,1m --repeat 5
    python benchmarks/bench.py --sizes 1m --only first_screen,interactions

It generates seeded ledgers once (cached in `benchmarks/out/`, gitignored), then measures, each
measurement in a fresh process so that one cannot warm or bloat the next:

1. first screen: the real `ledger-tui FILE` in a 160x50 tmux pane, from the moment the process
   starts (a timestamp taken by the pane's shell just before `exec`) until the pane shows the
   attempts table with rows and a row of figures for every group in the summary;
2. interactions: the app under Pilot (`App.run_test(size=(160, 50))`), once loaded: the time
   from a key to the table and summary being updated (the app's recompute recorded, workers
   finished, the screen processed), median and p90; and the core alone (filter parse +
   `attempts.filter` + `compare`), in its own process;
3. paging: PageDown through Pilot and the table's own cost per page, at every size;
4. peak memory (VmHWM / ru_maxrss) of the app against the loaded frame's `estimated_size()`;
5. `ledger-tui summary FILE --format json` at every size, and on the big file under a memory
   limit smaller than the file (`prlimit --data`), with Python's faulthandler on so that a
   failed allocation says which line of ours asked for it;
6. start-up on `sample_data/runs.csv`: `summary` wall time, whether it imported textual, and
   the app's first screen;
7. side by side, in this run: a plain-Python summary (csv module + dicts), VisiData
   (`vd -b FILE -o out.tsv`, when `vd` is installed) and raw polars (read + group_by).

It prints one table of figures (each with its target and PASS/MISS) and the ratios, and writes
every raw sample to `benchmarks/out/bench-<time>.json`. Figures, never assertions: nothing here
is a test. See benchmarks/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import csv
import json
import math
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
SAMPLE = ROOT / "sample_data" / "runs.csv"
SEED = 7
WORKFLOWS = 8  # generate.py's default
SCREEN = (160, 50)
RESULT_PREFIX = "BENCH-RESULT "
SECTIONS = (
    "first_screen",
    "interactions",
    "core",
    "summary",
    "bounded",
    "startup",
    "side_by_side",
    "floor",
)
MB = 1_000_000
TIMINGS_VARIABLE = "LEDGER_TUI_TIMINGS"  # where the app appends its timing events

# The targets of issue 16 ("Instant at any size"), by the largest row count each applies to.
FIRST_ROWS = 0.5  # process start -> header, view and the table's first rows, at any size
FINAL_SUMMARY = ((1_000_000, 0.7), (10_000_000, 1.5), (100_000_000, 15.0))
# (rows, median, p90) for a toggle, a filter keystroke, a group change; PageDown at any size.
INTERACTION = ((1_000_000, 0.050, 0.080), (10_000_000, 0.250, None), (100_000_000, 2.5, None))
PAGE_DOWN = (0.050, 0.080)
SUMMARY_10M = 3.0  # `ledger-tui summary --format json` (the "Millions of attempts" issue)
TINY_APP = 0.45  # the article's fixture: the app's full first screen
TINY_SUMMARY = 0.35  # ... and `ledger-tui summary`
RAW_POLARS_RATIO = 1.2  # load() + compare() against polars' read_csv + a group_by
# Issue 29's memory budget: 2.5 x the frame + 200 MiB (209.7 MB; the tables print MB).
MEMORY_FACTOR = 2.5
MEMORY_SLACK = 200 * 2**20
# A size is measured only when the machine has room for it (`room_for`): the CSV (53 bytes a
# row) on disk, and the app's memory budget (2.5 x a 29-byte-a-row frame + 200 MiB, about 75
# bytes a row) plus this benchmark's own, in MemAvailable.
CSV_BYTES_PER_ROW = 53
MEMORY_BYTES_PER_ROW = 80
# "The same cost at any row count", allowing for a noisy shared machine.
PAGING_RATIO = 1.5
# Issue 29: the final summary on screen against polars' floor (a fresh process that imports
# polars, reads the same file and does the group-by with medians): <= 1.5 x floor + 0.3 s.
FLOOR_FACTOR = 1.5
FLOOR_SLACK = 0.3


# --------------------------------------------------------------------------- small helpers


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
    command = [sys.executable, str(Path(__file__).resolve()), "--child", mode, *args]
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


# --------------------------------------------------------------------------- 1. first screen


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


def _open_pane(prefix: str, script: Callable[[str, str], str]) -> tuple[str, Path, TmuxControl]:
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


def _close_pane(session: str, control: TmuxControl, *files: Path) -> None:
    """Quit the app in the pane, end the session and remove the files it used."""
    with contextlib.suppress(Exception):
        control.command(f"send-keys -t {session} q")
    control.close()
    subprocess.run(tmux("kill-session", "-t", session), check=False, cwd=ROOT)
    for file in files:
        file.unlink(missing_ok=True)


@dataclass
class FirstScreen:
    painted: float  # process start -> the frame (title) drawn
    rows: float  # process start -> header, view and the table's first rows
    full: float  # process start -> table rows and every group's figures
    vm_hwm: int  # peak RSS of the app when the full screen showed
    vm_rss: int
    ok: bool
    note: str = ""


def first_screen(path: Path, groups: Sequence[str], timeout: float) -> FirstScreen:
    """Start the real `ledger-tui FILE` in a tmux pane and watch for its first full screen."""

    # The pane's shell notes the time, then becomes ledger-tui (same pid): "process start".
    def script(session: str, ledger_tui: str) -> str:
        return (
            f"date +%s.%N > {shlex.quote(str(OUT / f'{session}.start'))}\n"
            f"exec {shlex.quote(ledger_tui)} {shlex.quote(str(path))}\n"
        )

    session, launcher, control = _open_pane("bench", script)
    stamp = OUT / f"{session}.start"
    try:
        deadline = time.time() + timeout
        painted_at = rows_at = math.nan
        lines: list[str] = []
        missing: list[str] = list(groups)
        while time.time() < deadline:
            lines = control.capture()
            now = time.time()
            painted, rows, full, missing = screen_state(lines, groups)
            if painted and math.isnan(painted_at):
                painted_at = now
            if rows and math.isnan(rows_at):
                rows_at = now
            if full:
                pid = int(control.command(f"display -p -t {session} '#{{pane_pid}}'")[0])
                hwm, rss = vm_hwm(pid)
                start = float(stamp.read_text())
                return FirstScreen(painted_at - start, rows_at - start, now - start, hwm, rss, True)
            time.sleep(0.005)
        start = float(stamp.read_text()) if stamp.exists() else math.nan
        dump = "\n".join(lines[-12:])
        return FirstScreen(
            painted_at - start,
            rows_at - start,
            math.nan,
            0,
            0,
            False,
            f"no full screen within {timeout:.0f} s; missing {missing}; last lines:\n{dump}",
        )
    finally:
        _close_pane(session, control, stamp, launcher)


@dataclass
class TerminalPhases:
    """The real app's memory in a tmux pane after each interaction: (VmHWM, VmRSS) by phase."""

    phases: dict[str, tuple[int, int]]
    ok: bool
    note: str = ""


def _events(path: Path) -> list[dict[str, Any]]:
    """The app's timing events so far (`LEDGER_TUI_TIMINGS`), one JSON object a line."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def terminal_interactions(
    path: Path, groups: Sequence[str], columns: Sequence[str], timeout: float, reps: int
) -> TerminalPhases:
    """The real `ledger-tui FILE` in a tmux pane, driven by keys as a person would: the toggle
    there and back, `tokens>2000` typed then `0` and Backspace `reps` times, the filter
    cleared, and the grouping changed to `model` and back through the dialog. The pane's
    process is the app alone (no test harness in it), so its VmHWM is the app's own peak.

    Each key waits for what it causes: a view change on screen, or a new recompute in the
    app's timing events followed by half a second with no event (its intervals, pairs and
    checks landed). Only memory is read here; the times are the Pilot figures'."""

    def script(session: str, ledger_tui: str) -> str:
        events = shlex.quote(str(OUT / f"{session}.events"))
        app = f"{shlex.quote(ledger_tui)} {shlex.quote(str(path))}"
        return f"exec env {TIMINGS_VARIABLE}={events} {app}\n"

    session, launcher, control = _open_pane("bench-keys", script)
    timings = OUT / f"{session}.events"
    deadline = time.time() + timeout
    phases: dict[str, tuple[int, int]] = {}

    def wait(condition: Callable[[], bool], what: str) -> None:
        while not condition():
            if time.time() > deadline:
                raise TimeoutError(f"{what} not seen within {timeout:.0f} s")
            time.sleep(0.01)

    def quiet() -> None:
        """No new timing event for half a second."""
        seen, since = len(_events(timings)), time.time()
        while time.time() - since < 0.5:
            time.sleep(0.05)
            count = len(_events(timings))
            if count != seen:
                seen, since = count, time.time()

    def recomputes() -> int:
        return sum(1 for event in _events(timings) if event["event"] == "recompute")

    def key(*keys: str, literal: bool = False, recompute: bool = True) -> None:
        before = recomputes()
        for name in keys:
            flag = "-l " if literal else ""
            control.command(f"send-keys -t {session} {flag}{shlex.quote(name)}")
        if recompute:
            wait(lambda: recomputes() > before, f"a recompute after {keys}")
            quiet()

    def last_rows() -> int | None:
        drawn = [event for event in _events(timings) if event["event"] == "recompute"]
        return drawn[-1]["rows"] if drawn else None

    def view_is(word: str) -> Callable[[], bool]:
        return lambda: any(word in line for line in control.capture()[:3])

    try:
        wait(lambda: screen_state(control.capture(), groups)[2], "the full first screen")
        wait(lambda: any(e["event"] == "pairs" for e in _events(timings)), "the pairs")
        quiet()
        pid = int(control.command(f"display -p -t {session} '#{{pane_pid}}'")[0])
        total = next(e["rows"] for e in _events(timings) if e["event"] == "first_screen")
        phases["load"] = vm_hwm(pid)
        key("t", recompute=False)
        wait(view_is("DROP"), "DROP FAILURES")
        key("t", recompute=False)
        wait(view_is("KEEP"), "KEEP FAILURES")
        phases["toggle"] = vm_hwm(pid)
        key("/", recompute=False)
        for character in "tokens>2000":
            key(character, literal=True, recompute=False)
            time.sleep(0.02)  # a person's typing; the app recomputes the latest text
        wait(lambda: recomputes() > 0, "the filter's recompute")
        quiet()
        for i in range(reps):
            key("0" if i % 2 == 0 else "BSpace", literal=i % 2 == 0)
        phases["filter"] = vm_hwm(pid)
        key(*["BSpace"] * len("tokens>2000" + "0" * (reps % 2)), recompute=False)
        wait(lambda: last_rows() == total, "every row again")
        quiet()
        key("Escape", recompute=False)
        time.sleep(0.3)  # an Escape followed at once by a key reads as Alt+key
        # The dialog opens on its first column (workflow, ticked): untick it, tick model,
        # Enter; the same keys tick workflow back and untick model.
        # Keys at a person's pace: a burst of them sent at once can reach the dialog before
        # it is ready for them (nothing in the events tells when it is).
        for _ in range(2):
            for name in ["b", "Space", *["Down"] * columns.index("model"), "Space"]:
                key(name, recompute=False)
                time.sleep(0.15)
            key("Enter")
        phases["group change"] = vm_hwm(pid)
        return TerminalPhases(phases, True)
    except (TimeoutError, EOFError, ValueError) as error:
        dump = "\n".join(control.capture()[-12:]) if control.process.poll() is None else ""
        return TerminalPhases(phases, False, f"{error}; last lines:\n{dump}")
    finally:
        _close_pane(session, control, timings, launcher)


# --------------------------------------------------------------------------- 2./3. Pilot child


class PaintProbe:
    """Notes when the screen is painted with a wanted state.

    Textual composes every update in `Screen._compositor_refresh` and hands it to
    `App._display` (which, headless, writes nothing). Wrapping that one method of the app
    instance tells when a frame was composed; `wait` arms a predicate on the app's state and
    returns the time of the first frame composed while it holds, so the figure is key -> the
    frame showing the result, without Pilot's own idle-waiting in it.
    """

    def __init__(self, app: Any) -> None:
        self._app = app
        self._original = app._display
        self._predicate: Callable[[], bool] | None = None
        self.painted_at: float | None = None
        self.frames = 0
        app._display = self._display

    def _display(self, screen: Any, renderable: Any) -> None:
        self._original(screen, renderable)
        if renderable is None:
            return
        self.frames += 1
        if self._predicate is not None and self._predicate():
            self.painted_at = time.perf_counter()
            self._predicate = None

    def arm(self, predicate: Callable[[], bool]) -> None:
        self.painted_at = None
        self._predicate = predicate

    async def wait(self, timeout: float = 300.0) -> float:
        deadline = time.perf_counter() + timeout
        while self.painted_at is None:
            if time.perf_counter() > deadline:
                self._predicate = None
                raise TimeoutError(f"no frame with the wanted state within {timeout} s")
            await asyncio.sleep(0.001)
        return self.painted_at


def _recorded(app: Any, since: int, name: str) -> Callable[[], bool]:
    """The app has recorded timing `name` (a recompute applied, a toggle shown) since `since`."""
    return lambda: any(entry == name for entry, _ in app.timings.history[since:])


async def _quiet(app: Any, pilot: Any) -> None:
    """Let the app finish everything (workers, messages, repaints) before the next key.

    A recompute overtaken by the next keystroke is cancelled by the app, which is not a
    failure: wait until no worker is running, however each one ended."""
    from textual.worker import WorkerState

    busy = (WorkerState.PENDING, WorkerState.RUNNING)
    while any(worker.state in busy for worker in app.workers):
        await asyncio.sleep(0.005)
    await pilot.pause()


async def _timed_key(
    app: Any, pilot: Any, probe: PaintProbe, key: str, done: Callable[[], bool]
) -> float:
    """Seconds from sending `key` to the first frame composed with `done()` true."""
    probe.arm(done)
    started = time.perf_counter()
    await pilot.press(key)
    painted = await probe.wait()
    await _quiet(app, pilot)
    return painted - started


async def _timed_update(app: Any, pilot: Any, probe: PaintProbe, key: str, name: str) -> float:
    return await _timed_key(app, pilot, probe, key, _recorded(app, len(app.timings.history), name))


async def _group_change(app: Any, pilot: Any, probe: PaintProbe, target: str) -> float:
    """`b`, tick `target` and untick the others in the dialog; time from Enter to the update."""
    await pilot.press("b")
    await pilot.pause()
    names = list(app.ledger.attempts.columns)
    current = set(app.by)
    position = 0
    for index, name in enumerate(names):
        if (name == target) != (name in current):
            await pilot.press(*(["down"] * (index - position)))
            position = index
            await pilot.press("space")
    await pilot.pause()
    elapsed = await _timed_update(app, pilot, probe, "enter", "recompute")
    if tuple(app.by) != (target,):
        raise RuntimeError(f"group change to {target} left the app grouped by {app.by}")
    return elapsed


async def _type(app: Any, pilot: Any, text: str) -> None:
    """Type into the focused filter box and wait for the recompute of the whole text."""
    since = len(app.timings.history)
    await pilot.press(*text)
    while not _recorded(app, since, "recompute")() or app.filter_text != app.filter_input.value:
        await asyncio.sleep(0.005)
    await _quiet(app, pilot)


async def _interact(path: str, reps: int, pages: int) -> dict[str, Any]:
    from tui_ledger.tui.app import LedgerApp

    result: dict[str, Any] = {}
    # As `ledger-tui FILE` starts it (cli.py): a file small enough is read beside the app's
    # start (load/early.py), not head first.
    from tui_ledger.load.early import EarlyLoad, worth_reading_early

    early = EarlyLoad([path], {}) if worth_reading_early([path]) else None
    result["early_load"] = early is not None
    app = LedgerApp([path], early=early)
    # The loaded frame's size, as the app first gets it: the memory target's yardstick (the app
    # later swaps in a compact copy of large frames, whose size is reported beside it).
    loaded_sizes: list[int] = []
    adopt = app.pipeline.loaded

    def loaded(message: Any, **options: Any) -> None:
        if not message.head:  # the file's first rows, shown while the whole is read
            loaded_sizes.append(message.ledger.attempts.estimated_size())
        adopt(message, **options)

    app.pipeline.loaded = loaded  # type: ignore[method-assign]
    started = time.perf_counter()
    async with app.run_test(size=SCREEN) as pilot:
        probe = PaintProbe(app)
        while not app.loaded or app.pipeline.partial is not None:
            await asyncio.sleep(0.005)
            if time.perf_counter() - started > 600:
                raise TimeoutError("the app did not load in 600 s")
        await _quiet(app, pilot)
        result["loaded_in_pilot"] = time.perf_counter() - started
        result["app_timings"] = {
            "load": app.timings.load,
            "first_screen": app.timings.first_screen,
            "recompute": app.timings.recompute,
        }
        assert app.ledger is not None
        attempts = app.ledger.attempts
        result["rows"] = attempts.height
        result["columns"] = list(attempts.columns)
        result["estimated_size"] = loaded_sizes[0]
        result["compact_size"] = attempts.estimated_size()
        result["hwm_after_load"] = vm_hwm(os.getpid())[0]
        phases: dict[str, tuple[int, int]] = {"load": vm_hwm(os.getpid())}
        result["memory_by_phase"] = phases  # (VmHWM, VmRSS) after each phase

        # Paging and scrolling (3.) first, on the freshly loaded app (before the filters churn
        # gigabytes through the allocator): each key to the frame showing the moved cursor.
        table = app.table
        table.focus()
        await pilot.pause()

        async def move(key: str) -> float:
            before = (table.cursor_row, table.scroll_offset.y)
            return await _timed_key(
                app, pilot, probe, key, lambda: (table.cursor_row, table.scroll_offset.y) != before
            )

        result["page_down"] = [await move("pagedown") for _ in range(pages)]
        result["scroll_down"] = [await move("down") for _ in range(pages)]
        result["end"] = [await move("end")]
        result["page_up"] = [await move("pageup") for _ in range(pages)]
        result["home"] = [await move("home")]
        # The table's own cost per page: the action and every visible line, called directly.
        direct = []
        for _ in range(pages):
            t = time.perf_counter()
            table.action_page_down()
            for y in range(table.size.height):
                table.render_line(y)
            direct.append(time.perf_counter() - t)
        result["page_direct"] = direct
        result["cursor_row"] = table.cursor_row
        result["frames"] = probe.frames
        phases["paging"] = vm_hwm(os.getpid())
        await pilot.press("home")
        await _quiet(app, pilot)

        # The view toggle (no recompute by design).
        result["toggle"] = [
            await _timed_update(app, pilot, probe, "t", "toggle") for _ in range(reps)
        ]
        if app.view != "keep":
            await _timed_update(app, pilot, probe, "t", "toggle")
        phases["toggle"] = vm_hwm(os.getpid())

        # Filter keystrokes, one key at a time: a number term, then a bare word.
        await pilot.press("slash")
        await _type(app, pilot, "tokens>2000")
        result["filter_number"] = [
            await _timed_update(app, pilot, probe, "0" if i % 2 == 0 else "backspace", "recompute")
            for i in range(reps)
        ]
        result["filter_number_rows"] = app.table.row_count
        phases["filter_number"] = vm_hwm(os.getpid())
        await pilot.press(*["backspace"] * len(app.filter_input.value))
        await _type(app, pilot, "lea")
        result["filter_word"] = [
            await _timed_update(app, pilot, probe, "n" if i % 2 == 0 else "backspace", "recompute")
            for i in range(reps)
        ]
        phases["filter_word"] = vm_hwm(os.getpid())
        await pilot.press(*["backspace"] * len(app.filter_input.value))
        while app.filter_text or (
            app.comparison is not None and app.table.row_count != attempts.height
        ):
            await asyncio.sleep(0.005)
        await _quiet(app, pilot)
        app.table.focus()
        await pilot.pause()

        # Group changes through the dialog: workflow <-> model.
        result["group_change"] = [
            await _group_change(app, pilot, probe, "model" if i % 2 == 0 else "workflow")
            for i in range(reps)
        ]
        if tuple(app.by) != ("workflow",):
            await _group_change(app, pilot, probe, "workflow")
        phases["group_change"] = vm_hwm(os.getpid())

        result["hwm_end"] = vm_hwm(os.getpid())[0]
    return result


def child_interact(path: str, reps: int, pages: int) -> None:
    # As `ledger-tui` runs the app: polars' allocator set up before polars loads.
    from tui_ledger.allocator import use_fewer_arenas

    if "polars" in sys.modules:
        raise RuntimeError("polars was loaded before the app's allocator settings")
    use_fewer_arenas()
    report(asyncio.run(_interact(path, reps, pages)))


# --------------------------------------------------------------------------- core child

CORE_FILTERS = ("tokens>20000", "lean", "-failed model:model-a")


def child_core(path: str, reps: int, repeat: int) -> None:
    """The core alone: load, and filter parse + filter + compare; raw polars beside it."""
    import polars as pl

    from tui_ledger.accounting.compact import compact_text
    from tui_ledger.accounting.ledger import compare
    from tui_ledger.filtering.query import parse_filter
    from tui_ledger.load import load

    result: dict[str, Any] = {
        "load": [],
        "compact": [],
        "compare_all": [],
        "raw_read": [],
        "raw_group_by": [],
    }
    ledger = None
    for _ in range(repeat):
        # Side by side, alternating: ledger-tui's load + compare, then polars' read + group_by.
        ledger = None
        t = time.perf_counter()
        ledger = load(path)
        result["load"].append(time.perf_counter() - t)
        t = time.perf_counter()
        compare(ledger.attempts, ["workflow"])
        result["compare_all"].append(time.perf_counter() - t)
        t = time.perf_counter()
        raw = pl.read_csv(path)
        result["raw_read"].append(time.perf_counter() - t)
        t = time.perf_counter()
        raw_summary(raw)
        result["raw_group_by"].append(time.perf_counter() - t)
        del raw
    assert ledger is not None
    result["estimated_size"] = ledger.attempts.estimated_size()
    result["n_chunks"] = ledger.attempts.n_chunks()
    # What the app filters and compares: the compact frame (Categorical text) and its values.
    for _ in range(repeat):
        t = time.perf_counter()
        attempts, values = compact_text(ledger.attempts)
        result["compact"].append(time.perf_counter() - t)
    result["compact_size"] = attempts.estimated_size()
    del ledger
    scenarios: dict[str, list[float]] = {}
    parse: dict[str, list[float]] = {}
    for text in CORE_FILTERS:
        times, parses = [], []
        for _ in range(reps):
            t = time.perf_counter()
            expression = parse_filter(text, attempts.schema, values)
            t_parse = time.perf_counter()
            matching = attempts.filter(expression) if expression is not None else attempts
            compare(matching, ["workflow"], intervals="delta")  # as the app's recompute
            times.append(time.perf_counter() - t)
            parses.append(t_parse - t)
        scenarios[text] = times
        parse[text] = parses
    for by in (["model"], ["task"]):
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            compare(attempts, by, intervals="delta")
            times.append(time.perf_counter() - t)
        scenarios["by " + ",".join(by)] = times
    result["scenarios"] = scenarios
    result["parse"] = parse
    report(result)


def raw_summary(frame: Any, *, medians: bool = True) -> Any:
    """What a person would write in polars: both views' counts, sums and medians per workflow.

    Medians cannot stream (polars gathers each group's values for them), so the bounded-memory
    probe runs it both with and without them.
    """
    import polars as pl

    tokens, accepted = pl.col("tokens"), pl.col("passed").fill_null(False)
    aggregates = [
        pl.len().alias("attempts"),
        accepted.sum().alias("accepted"),
        tokens.null_count().alias("missing"),
        tokens.sum().alias("total_tokens"),
        tokens.filter(accepted).sum().alias("accepted_tokens"),
        tokens.filter(accepted).null_count().alias("accepted_missing"),
    ]
    if medians:
        aggregates += [
            tokens.median().alias("median"),
            tokens.filter(accepted).median().alias("accepted_median"),
        ]
    return frame.group_by("workflow").agg(aggregates)


# --------------------------------------------------------------------------- plain Python child


def child_plain(path: str) -> None:
    """The whole summary in plain Python: csv module and dicts, both views, medians included."""
    started = time.perf_counter()
    # Per workflow: [attempts, accepted, missing, known tokens list, accepted tokens list,
    # accepted missing].
    groups: dict[str, list[Any]] = {}
    with open(path, newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        i_workflow, i_tokens, i_passed = (header.index(n) for n in ("workflow", "tokens", "passed"))
        for row in reader:
            group = groups.get(row[i_workflow])
            if group is None:
                group = groups[row[i_workflow]] = [0, 0, 0, [], [], 0]
            group[0] += 1
            passed = row[i_passed] == "true"
            cell = row[i_tokens]
            if passed:
                group[1] += 1
            if cell == "":
                group[2] += 1
                if passed:
                    group[5] += 1
            else:
                tokens = int(cell)
                group[3].append(tokens)
                if passed:
                    group[4].append(tokens)
    summary = {}
    for name, (attempts, accepted, missing, known, known_accepted, missing_accepted) in sorted(
        groups.items()
    ):
        total, total_accepted = sum(known), sum(known_accepted)
        summary[name] = {
            "keep": {
                "attempts": attempts,
                "accepted": accepted,
                "missing_usage": missing,
                "total_tokens": total,
                "median": statistics.median(known) if known else None,
                "per_accepted": total / accepted if accepted else None,
            },
            "drop": {
                "attempts": accepted,
                "missing_usage": missing_accepted,
                "total_tokens": total_accepted,
                "median": statistics.median(known_accepted) if known_accepted else None,
                "per_accepted": total_accepted / accepted if accepted else None,
            },
        }
    report({"seconds": time.perf_counter() - started, "summary": summary})


# --------------------------------------------------------------------------- bounded memory child

BOUNDED_PROBES = ("summary", "scan", "scan_compare", "polars_streaming", "polars_streaming_median")


def child_probe(probe: str, path: str) -> None:
    """One way of answering the summary, run under a memory limit by the parent."""
    import faulthandler

    faulthandler.enable(all_threads=True)
    started = time.perf_counter()
    if probe == "summary":
        from tui_ledger.cli import main

        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            code = main(["summary", path, "--format", "json"])
        report({"seconds": time.perf_counter() - started, "code": code})
        return
    import polars as pl

    if probe.startswith("polars_streaming"):
        raw_summary(pl.scan_csv(path), medians=probe.endswith("median")).collect(engine="streaming")
    else:
        from tui_ledger.accounting.ledger import compare
        from tui_ledger.load import scan

        lazy, _ = scan(path)
        if probe == "scan_compare":
            compare(lazy, ["workflow"], streaming=True)
    report({"seconds": time.perf_counter() - started, "code": 0})


def crash_site(stderr: str) -> str:
    """The innermost frames of ours (tui_ledger, benchmarks) in a faulthandler dump."""
    frames = re.findall(r'File "([^"]+)", line (\d+) in (\S+)', stderr)
    ours = [
        f"{Path(file).name}:{line} {function}"
        for file, line, function in frames
        if "tui_ledger" in file or "bench.py" in file
    ]
    # faulthandler prints the innermost frame first, per thread; keep the first thread with ours.
    if ours:
        return " <- ".join(ours[:6])
    for marker in ("memory allocation of", "MemoryError", "Killed"):
        if marker in stderr:
            return next(line for line in stderr.splitlines() if marker in line)
    return stderr.strip().splitlines()[-1] if stderr.strip() else "(no output)"


# --------------------------------------------------------------------------- 8. polars' floor


def parquet_copy(path: Path) -> Path:
    """The same rows as Parquet beside the CSV (written once, streamed: `sink_parquet`)."""
    target = path.with_suffix(".parquet")
    if not target.exists():
        partial = target.with_name(f"{target.stem}.partial.parquet")
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys, polars as pl; pl.scan_csv(sys.argv[1]).sink_parquet(sys.argv[2])",
                str(path),
                str(partial),
            ],
            check=True,
            cwd=ROOT,
        )
        os.replace(partial, target)
    return target


def child_floor(path: str) -> None:
    """Polars' floor: import polars, read the file, both views' figures with medians, exit."""
    import polars as pl

    frame = pl.read_parquet(path) if path.endswith(".parquet") else pl.read_csv(path)
    raw_summary(frame)
    report({"rows": frame.height})


def child_frame(path: str) -> None:
    """The frame the app holds once loaded: its `estimated_size()` (the memory budget's base)."""
    from tui_ledger.load import load

    report({"estimated_size": load(path).attempts.estimated_size()})


def section_floor(bench: Bench, rows: int, path: Path) -> None:
    """The final summary on screen (tmux, process start) beside polars' floor, run by run.

    Both are whole processes, interpreter start included, alternated so that a change in the
    machine's load falls on both. The ratio is of the medians; the target is issue 29's
    <= 1.5 x floor + 0.3 s, and the app's peak at that moment against 2.5 x its frame + 200 MiB.
    """
    label = rows_label(rows)
    inputs = [("CSV", path)]
    if bench.args.parquet:
        inputs.append(("Parquet", parquet_copy(path)))
    groups = expected_groups(path)
    finals: dict[str, list[float]] = {}
    for _ in range(bench.args.repeat):
        for kind, source in inputs:
            shown = first_screen(source, groups, timeout=bench.args.timeout)
            if not shown.ok:
                bench.notes.append(f"floor {label} {kind}: {shown.note}")
                continue
            _, run = child("floor", str(source), timeout=bench.args.timeout)
            raw = bench.raw.setdefault("floor", {}).setdefault(f"{label} {kind}", [])
            raw.append({"final": shown.full, "hwm": shown.vm_hwm, "floor": run.seconds})
            finals.setdefault(kind, []).append(shown.full)
    estimated = int(child("frame", str(path), timeout=bench.args.timeout)[0]["estimated_size"])
    for kind, _ in inputs:
        samples = bench.raw.get("floor", {}).get(f"{label} {kind}", [])
        if not samples:
            continue
        final = median([s["final"] for s in samples])
        floor = median([s["floor"] for s in samples])
        limit = FLOOR_FACTOR * floor + FLOOR_SLACK
        size = f"{label} {kind}"
        for key, what in (
            ("final", "final summary on screen (tmux)"),
            ("floor", "polars floor (read + group_by, medians)"),
        ):
            bench.add(Figure.timed("8 floor", size, what, [s[key] for s in samples], use_p90=False))
        bench.add(
            Figure(
                "8 floor",
                size,
                "final ÷ floor",
                f"{final / floor:.2f}×",
                f"{seconds_text(final)} against {seconds_text(floor)}",
                f"≤ {seconds_text(limit)}",
                "PASS" if final <= limit else "MISS",
            )
        )
        peak = max(s["hwm"] for s in samples)
        bench.add(memory_figure("8 floor", size, "peak RSS at the final summary", peak, estimated))
    if "CSV" in finals and "Parquet" in finals:
        csv_final, parquet_final = median(finals["CSV"]), median(finals["Parquet"])
        verdict = "PASS" if parquet_final <= csv_final else "MISS"
        bench.ratios.append(
            f"{label}: Parquet's final summary {seconds_text(parquet_final)} against the CSV's "
            f"{seconds_text(csv_final)} ({parquet_final / csv_final:.2f}×; ≤ 1×: {verdict})"
        )


# --------------------------------------------------------------------------- the table


@dataclass
class Figure:
    section: str
    size: str
    name: str
    value: str
    spread: str = ""
    target: str = ""
    verdict: str = ""  # PASS, MISS, or "" (information)

    @classmethod
    def timed(
        cls,
        section: str,
        size: str,
        name: str,
        samples: Sequence[float],
        limit: float | None = None,
        *,
        note: str = "",
        use_p90: bool = True,
        p90_limit: float | None = None,
    ) -> Figure:
        value = median(samples)
        spread = f"p90 {seconds_text(p90(samples))}" if use_p90 else ""
        if len(samples) > 1:
            spread += f"{', ' if spread else ''}min {seconds_text(min(samples))}, n={len(samples)}"
        if note:
            spread = f"{spread}; {note}" if spread else note
        target, verdict = "", ""
        if limit is not None:
            target = f"≤ {seconds_text(limit)}"
            verdict = "PASS" if value <= limit else "MISS"
        if p90_limit is not None:
            target += f"{', ' if target else ''}p90 ≤ {seconds_text(p90_limit)}"
            if p90(samples) > p90_limit:
                verdict = "MISS"
            elif not verdict:
                verdict = "PASS"
        return cls(section, size, name, seconds_text(value), spread, target, verdict)


@dataclass
class Bench:
    args: argparse.Namespace
    figures: list[Figure] = field(default_factory=list)
    ratios: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)

    def add(self, figure: Figure) -> None:
        self.figures.append(figure)
        line = f"  {figure.section:<14} {figure.size:>5}  {figure.name:<44} {figure.value:>10}"
        if figure.verdict:
            line += f"  {figure.target} {figure.verdict}"
        print(line, file=sys.stderr, flush=True)

    def wants(self, section: str) -> bool:
        return section in self.args.only


def final_summary_target(rows: int) -> float | None:
    return next((limit for most, limit in FINAL_SUMMARY if rows <= most), None)


def interaction_target(rows: int) -> float | None:
    return next((limit for most, limit, _ in INTERACTION if rows <= most), None)


def interaction_p90_target(rows: int) -> float | None:
    return next((limit for most, _, limit in INTERACTION if rows <= most), None)


def memory_figure(section: str, size: str, name: str, peak: int, estimated: int) -> Figure:
    limit = MEMORY_FACTOR * estimated + MEMORY_SLACK
    return Figure(
        section,
        size,
        name,
        mb_text(peak),
        f"frame {mb_text(estimated)}; {peak / max(estimated, 1):.1f}× the frame",
        f"≤ {mb_text(limit)}",
        "PASS" if peak <= limit else "MISS",
    )


# --------------------------------------------------------------------------- sections


def section_first_screen(bench: Bench, rows: int, path: Path) -> None:
    label = rows_label(rows)
    groups = expected_groups(path)
    results = []
    for _ in range(bench.args.repeat):
        shown = first_screen(path, groups, timeout=bench.args.timeout)
        results.append(shown)
        if not shown.ok:
            bench.notes.append(f"first screen {label}: {shown.note}")
            break
    bench.raw.setdefault("first_screen", {})[label] = [asdict(r) for r in results]
    full = [r.full for r in results if r.ok]
    painted = [r.painted for r in results if not math.isnan(r.painted)]
    first_rows = [r.rows for r in results if not math.isnan(r.rows)]
    bench.add(
        Figure.timed("1 first screen", label, "process start → frame drawn", painted, use_p90=False)
    )
    if first_rows:
        bench.add(
            Figure.timed(
                "1 first screen",
                label,
                "process start → header, view, first rows",
                first_rows,
                FIRST_ROWS,
                use_p90=False,
            )
        )
    if full:
        bench.add(
            Figure.timed(
                "1 first screen",
                label,
                "process start → every group, final (tmux)",
                full,
                final_summary_target(rows),
                use_p90=False,
            )
        )
        hwm = max(r.vm_hwm for r in results if r.ok)
        bench.raw.setdefault("first_screen_hwm", {})[label] = hwm
    else:
        bench.add(
            Figure(
                "1 first screen",
                label,
                "process start → every group, final (tmux)",
                "none",
                "see notes",
                f"≤ {seconds_text(final_summary_target(rows) or 0)}",
                "MISS",
            )
        )


def section_interactions(bench: Bench, rows: int, path: Path) -> None:
    label = rows_label(rows)
    data, run = child(
        "interact", str(path), str(bench.args.reps), str(bench.args.pages), timeout=1800
    )
    data["max_rss"] = run.max_rss
    data["wall"] = run.seconds
    bench.raw.setdefault("interactions", {})[label] = data
    limit, limit_p90 = interaction_target(rows), interaction_p90_target(rows)
    section = "2 interaction"
    for key, name in (
        ("toggle", "t: toggle KEEP/DROP → table+summary"),
        ("filter_number", "filter key `tokens>2000`±`0` → updated"),
        ("filter_word", "filter key `lea`±`n` → updated"),
        ("group_change", "group change workflow↔model (Enter) → updated"),
    ):
        bench.add(Figure.timed(section, label, name, data[key], limit, p90_limit=limit_p90))
    section = "3 paging"
    bench.add(
        Figure.timed(
            section,
            label,
            "PageDown through Pilot",
            data["page_down"],
            PAGE_DOWN[0],
            p90_limit=PAGE_DOWN[1],
        )
    )
    bench.add(Figure.timed(section, label, "↓ one row through Pilot", data["scroll_down"]))
    bench.add(
        Figure.timed(section, label, "End (last row) through Pilot", data["end"], use_p90=False)
    )
    bench.add(
        Figure.timed(section, label, "page: action + render_line × screen", data["page_direct"])
    )
    estimated = int(data["estimated_size"])
    bench.raw.setdefault("estimated_size", {})[label] = estimated
    if data.get("compact_size"):
        bench.notes.append(
            f"frame {label}: {estimated / MB:,.0f} MB as loaded (the memory yardstick), "
            f"{int(data['compact_size']) / MB:,.0f} MB once the app has compacted it"
        )
    hwm = bench.raw.get("first_screen_hwm", {}).get(label)
    if hwm:
        bench.add(
            memory_figure("4 memory", label, "peak RSS, app to first screen (tmux)", hwm, estimated)
        )
    bench.add(
        memory_figure(
            "4 memory", label, "peak RSS, app after all interactions", run.max_rss, estimated
        )
    )
    phases = data.get("memory_by_phase", {})
    if phases:
        bench.notes.append(
            f"app memory {label} after each phase, peak/now: "
            + ", ".join(
                f"{name} {hwm / MB:,.0f}/{rss / MB:,.0f} MB" for name, (hwm, rss) in phases.items()
            )
        )
    # The same interactions in a real terminal: the app's process alone, without Pilot and
    # this benchmark in it (at 1M rows they add 20-50 MB to the figure above).
    keys = terminal_interactions(
        path, expected_groups(path), data["columns"], timeout=max(600.0, rows / 100_000), reps=4
    )
    bench.raw.setdefault("terminal_interactions", {})[label] = asdict(keys)
    if not keys.ok:
        bench.notes.append(f"interactions in tmux {label}: {keys.note}")
        return
    peak = max(hwm for hwm, _ in keys.phases.values())
    bench.add(
        memory_figure(
            "4 memory", label, "peak RSS, app after the interactions (tmux)", peak, estimated
        )
    )
    bench.notes.append(
        f"app memory {label} in tmux after each phase, peak/now: "
        + ", ".join(
            f"{name} {hwm / MB:,.0f}/{rss / MB:,.0f} MB" for name, (hwm, rss) in keys.phases.items()
        )
    )


def section_paging_ratio(bench: Bench) -> None:
    runs = bench.raw.get("interactions", {})
    if len(runs) < 2:
        return
    ordered = sorted(runs.items(), key=lambda item: item[1]["rows"])
    (small, first), (large, last) = ordered[0], ordered[-1]
    for key, name in (
        ("page_down", "PageDown (Pilot)"),
        ("page_direct", "page (direct)"),
        ("scroll_down", "↓ one row (Pilot)"),
    ):
        ratio = median(last[key]) / median(first[key])
        bench.add(
            Figure(
                "3 paging",
                f"{large}/{small}",
                f"{name}: cost at {large} ÷ cost at {small}",
                f"{ratio:.2f}×",
                f"{seconds_text(median(last[key]))} vs {seconds_text(median(first[key]))}",
                f"≤ {PAGING_RATIO}×",
                "PASS" if ratio <= PAGING_RATIO else "MISS",
            )
        )


def section_core(bench: Bench, rows: int, path: Path) -> None:
    label = rows_label(rows)
    data, run = child("core", str(path), str(bench.args.core_reps), str(bench.args.repeat))
    data["max_rss"] = run.max_rss
    bench.raw.setdefault("core", {})[label] = data
    section = "2 core"
    bench.add(
        Figure.timed(section, label, "load() (validate + frame)", data["load"], use_p90=False)
    )
    bench.add(
        Figure.timed(
            section, label, "compare(all attempts, by workflow)", data["compare_all"], use_p90=False
        )
    )
    if data.get("compact"):
        bench.add(
            Figure.timed(
                section, label, "compact_text (the app's frame)", data["compact"], use_p90=False
            )
        )
    limit = interaction_target(rows)
    for name, samples in data["scenarios"].items():
        what = (
            f"parse+filter+compare `{name}`" if not name.startswith("by ") else (f"compare {name}")
        )
        bench.add(Figure.timed(section, label, what, samples, limit))
    parse_all = [t for samples in data["parse"].values() for t in samples]
    bench.add(Figure.timed(section, label, "parse_filter alone", parse_all))


def section_summary(bench: Bench, rows: int, path: Path) -> None:
    label = rows_label(rows)
    ledger_tui = tool("ledger-tui")
    assert ledger_tui is not None
    runs = [
        run_measured([ledger_tui, "summary", str(path), "--format", "json"])
        for _ in range(bench.args.repeat)
    ]
    failed = [run for run in runs if run.returncode != 0]
    if failed:
        bench.notes.append(f"summary {label} failed: {failed[0].stderr.strip()[-400:]}")
    bench.raw.setdefault("summary", {})[label] = [
        {"seconds": r.seconds, "max_rss": r.max_rss, "code": r.returncode} for r in runs
    ]
    limit = SUMMARY_10M if rows <= 10_000_000 else None
    bench.add(
        Figure.timed(
            "5 summary",
            label,
            "ledger-tui summary --format json (wall)",
            [r.seconds for r in runs],
            limit,
            use_p90=False,
        )
    )
    peak = max(r.max_rss for r in runs)
    estimated = bench.raw.get("estimated_size", {}).get(label) or bench.raw.get("core", {}).get(
        label, {}
    ).get("estimated_size")
    if estimated:
        bench.add(memory_figure("4 memory", label, "peak RSS, summary", peak, int(estimated)))
    else:
        bench.add(Figure("4 memory", label, "peak RSS, summary", mb_text(peak)))


def section_bounded(bench: Bench) -> None:
    rows = bench.args.bounded_rows
    label = rows_label(rows)
    path = ensure_ledger(rows)
    limit = bench.args.bounded_limit
    size = path.stat().st_size
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        bench.notes.append("bounded memory: prlimit is not installed; skipped")
        return
    section = "5 bounded"
    results = {}
    for probe in BOUNDED_PROBES:
        command = [
            prlimit,
            f"--data={limit}",
            sys.executable,
            "-X",
            "faulthandler",
            str(Path(__file__).resolve()),
            "--child",
            "probe",
            probe,
            str(path),
        ]
        run = run_measured(command, timeout=bench.args.timeout * 3)
        answered = run.returncode == 0 and RESULT_PREFIX in run.stdout
        site = "" if answered else crash_site(run.stderr)
        results[probe] = {
            "seconds": run.seconds,
            "max_rss": run.max_rss,
            "code": run.returncode,
            "site": site,
            "stderr_tail": run.stderr[-3000:],
        }
        names = {
            "summary": "ledger-tui summary under the limit",
            "scan": "load.scan() alone under the limit",
            "scan_compare": "load.scan() + compare(lazy, streaming=True) under the limit",
            "polars_streaming": "polars scan_csv + group_by, streaming",
            "polars_streaming_median": "the same with both medians",
        }
        verdict = "PASS" if answered else "MISS"
        bench.add(
            Figure(
                section,
                label,
                names[probe],
                seconds_text(run.seconds) if answered else "failed",
                f"peak {mb_text(run.max_rss)}" + ("" if answered else f"; at {site}"),
                "answers" if probe == "summary" else "",
                verdict if probe == "summary" else ("" if answered else "(fails)"),
            )
        )
    bench.raw["bounded"] = {
        "rows": rows,
        "file_bytes": size,
        "limit": limit,
        "results": results,
    }
    bench.notes.append(
        f"bounded memory: {path.name} is {size / MB:,.0f} MB on disk; every probe ran under "
        f"`prlimit --data={limit}` ({limit / 1024**2:,.0f} MiB; RLIMIT_DATA: heap and anonymous "
        "mappings; --as would also count address space reserved but never used)."
    )


def section_startup(bench: Bench) -> None:
    ledger_tui = tool("ledger-tui")
    assert ledger_tui is not None
    section = "6 start-up"
    runs = [
        run_measured([ledger_tui, "summary", str(SAMPLE)]) for _ in range(max(5, bench.args.repeat))
    ]
    bench.add(
        Figure.timed(
            section,
            "tiny",
            "ledger-tui summary sample_data/runs.csv",
            [r.seconds for r in runs],
            TINY_SUMMARY,
            use_p90=False,
        )
    )
    traced = run_measured([sys.executable, "-X", "importtime", ledger_tui, "summary", str(SAMPLE)])
    imported = sorted(
        {
            match.split(".")[0]
            for match in re.findall(r"\|\s+(textual[\w.]*)\s*$", traced.stderr, re.M)
        }
    )
    bench.add(
        Figure(
            section,
            "tiny",
            "summary imports textual",
            "yes" if imported else "no",
            "",
            "no",
            "MISS" if imported else "PASS",
        )
    )
    own = re.findall(r"import time:\s+\d+\s+\|\s+(\d+)\s+\|\s+(\S+)\s*$", traced.stderr, re.M)
    heavy = sorted(((int(us), name) for us, name in own if "." not in name), reverse=True)[:4]
    bench.notes.append(
        "start-up, summary on runs.csv: heaviest top-level imports (cumulative µs): "
        + ", ".join(f"{name} {us:,}" for us, name in heavy)
    )
    # The floor under every start-up figure: the interpreter and the two base libraries.
    for name, code in (
        ("floor: python -c 'import polars'", "import polars"),
        ("floor: python -c 'import polars, textual.app'", "import polars, textual.app"),
    ):
        floors = [run_measured([sys.executable, "-c", code]).seconds for _ in range(5)]
        bench.add(Figure.timed(section, "tiny", name, floors, None, use_p90=False))
    groups = expected_groups(SAMPLE)
    shown = [
        first_screen(SAMPLE, groups, timeout=bench.args.timeout)
        for _ in range(max(3, bench.args.repeat))
    ]
    good = [s.full for s in shown if s.ok]
    if not good:
        bench.notes.append(f"first screen on runs.csv: {shown[0].note}")
    bench.add(
        Figure.timed(
            section,
            "tiny",
            "app: process start → full first screen",
            good,
            TINY_APP,
            use_p90=False,
        )
    )
    bench.raw["startup"] = {
        "summary": [r.seconds for r in runs],
        "textual_imported": imported,
        "first_screen": [asdict(s) for s in shown],
    }


def section_side_by_side(bench: Bench, rows: int) -> None:
    """ledger-tui against plain Python, VisiData and raw polars, interleaved in one run."""
    label = rows_label(rows)
    path = ensure_ledger(rows)
    ledger_tui = tool("ledger-tui")
    vd = tool("vd")
    assert ledger_tui is not None
    section = "7 side by side"
    summary, plain, visidata = [], [], []
    plain_data: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(bench.args.repeat):
            run = run_measured([ledger_tui, "summary", str(path), "--format", "json"])
            summary.append(run.seconds)
            ledger_json = run.stdout
            data, run = child("plain", str(path))
            plain.append(run.seconds)
            plain_data = data
            if vd is not None and not bench.args.no_visidata:
                out = Path(scratch) / "out.tsv"
                env = {**os.environ, "HOME": scratch}
                run = run_measured([vd, "-b", str(path), "-o", str(out)], env=env)
                if run.returncode == 0:
                    visidata.append(run.seconds)
                else:
                    bench.notes.append(f"VisiData failed: {run.stderr.strip()[-300:]}")
                out.unlink(missing_ok=True)
    agree = _plain_agrees(plain_data.get("summary", {}), ledger_json)
    bench.add(Figure.timed(section, label, "ledger-tui summary (wall)", summary, use_p90=False))
    bench.add(
        Figure.timed(
            section,
            label,
            "plain Python: csv + dicts (wall)",
            plain,
            use_p90=False,
            note=f"figures agree: {agree}",
        )
    )
    if visidata:
        bench.add(
            Figure.timed(
                section, label, "VisiData vd -b FILE -o out.tsv (wall)", visidata, use_p90=False
            )
        )
    elif vd is None:
        bench.notes.append("VisiData: `vd` is not installed (pip install visidata); skipped")
    core = bench.raw.get("core", {}).get(label)
    ours = median(summary)
    bench.ratios.append(
        f"{label}: plain Python {seconds_text(median(plain))} ÷ ledger-tui summary "
        f"{seconds_text(ours)} = {median(plain) / ours:.1f}× (ledger-tui faster when > 1)"
    )
    if visidata:
        bench.ratios.append(
            f"{label}: VisiData load+write {seconds_text(median(visidata))} ÷ ledger-tui summary "
            f"{seconds_text(ours)} = {median(visidata) / ours:.1f}×"
        )
        screens = [r["full"] for r in bench.raw.get("first_screen", {}).get(label, []) if r["ok"]]
        if screens:
            bench.ratios.append(
                f"{label}: VisiData load+write {seconds_text(median(visidata))} ÷ ledger-tui "
                f"first screen {seconds_text(median(screens))} = "
                f"{median(visidata) / median(screens):.1f}×"
            )
    bench.raw["side_by_side"] = {
        "rows": rows,
        "summary": summary,
        "plain": plain,
        "plain_inner": plain_data.get("seconds"),
        "visidata": visidata,
        "agree": agree,
    }
    del core


def _plain_agrees(plain: dict[str, Any], ledger_json: str) -> str:
    """Whether plain Python's per-workflow totals equal ledger-tui's (both views)."""
    try:
        views = json.loads(ledger_json)["views"]
    except (ValueError, KeyError):
        return "unknown (no JSON from ledger-tui)"
    problems = []
    for name, ours in plain.items():
        for view in ("keep", "drop"):
            theirs = views[view].get(name, {})
            for key in ("attempts", "missing_usage", "total_tokens"):
                if theirs.get(key) != ours[view][key]:
                    problems.append(f"{name}/{view}/{key}: {theirs.get(key)} vs {ours[view][key]}")
    return "yes" if not problems else "NO (" + "; ".join(problems[:3]) + ")"


def raw_polars_ratios(bench: Bench) -> None:
    for label, data in bench.raw.get("core", {}).items():
        ours = median(data["load"]) + median(data["compare_all"])
        theirs = median(data["raw_read"]) + median(data["raw_group_by"])
        bench.add(
            Figure.timed(
                "7 side by side",
                label,
                "raw polars read_csv (in process)",
                data["raw_read"],
                use_p90=False,
            )
        )
        bench.add(
            Figure.timed(
                "7 side by side",
                label,
                "raw polars group_by, both views",
                data["raw_group_by"],
                use_p90=False,
            )
        )
        bench.add(
            Figure(
                "7 side by side",
                label,
                "load()+compare() ÷ polars read_csv+group_by",
                f"{ours / theirs:.2f}×",
                f"{seconds_text(ours)} vs {seconds_text(theirs)}",
                f"≤ {RAW_POLARS_RATIO}×",
                "PASS" if ours / theirs <= RAW_POLARS_RATIO else "MISS",
            )
        )
        bench.ratios.append(
            f"{label}: ledger-tui load()+compare() {seconds_text(ours)} ÷ raw polars "
            f"read_csv+group_by {seconds_text(theirs)} = {ours / theirs:.1f}× "
            f"(load {seconds_text(median(data['load']))} vs read "
            f"{seconds_text(median(data['raw_read']))}; compare "
            f"{seconds_text(median(data['compare_all']))} vs group_by "
            f"{seconds_text(median(data['raw_group_by']))})"
        )


# --------------------------------------------------------------------------- machine and output


def machine() -> dict[str, str]:
    import polars
    import textual

    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = "unknown"
    with contextlib.suppress(OSError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f"{kb / 1024**2:.1f} GiB"
    load = os.getloadavg()
    code = "unknown"
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "tui_ledger"],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout.splitlines()
        code = commit + (
            f" + uncommitted changes in {len(changed)} tui_ledger files" if changed else ""
        )
    return {
        "code": code,
        "cpus": str(os.cpu_count()),
        "cpu": cpu,
        "memory": memory,
        "python": platform.python_version(),
        "polars": polars.__version__,
        "textual": textual.__version__,
        "load_average": " ".join(f"{value:.2f}" for value in load),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def print_table(bench: Bench, info: dict[str, str]) -> None:
    print()
    print(
        f"ledger-tui benchmark — {info['cpus']} CPUs ({info['cpu']}), {info['memory']}, "
        f"Python {info['python']}, polars {info['polars']}, textual {info['textual']}, "
        f"load average at start {info['load_average']}, {info['date']}"
    )
    print(f"code: {info['code']}")
    print(f"repeat {bench.args.repeat} (medians), {bench.args.reps} repetitions per interaction")
    headers = ("section", "size", "figure", "median", "spread", "target", "")

    def size_key(label: str) -> int:
        try:
            return parse_rows(label.split("/")[0]) if label != "tiny" else 0
        except argparse.ArgumentTypeError:
            return 10**12

    figures = sorted(bench.figures, key=lambda f: (f.section, size_key(f.size)))
    rows = [(f.section, f.size, f.name, f.value, f.spread, f.target, f.verdict) for f in figures]
    widths = [max(len(str(row[i])) for row in [headers, *rows]) for i in range(len(headers))]
    widths[4] = min(widths[4], 60)

    def line(row: Sequence[str]) -> str:
        cells = []
        for i, cell in enumerate(row):
            text = str(cell)
            if i == 4 and len(text) > widths[4]:
                text = text[: widths[4] - 1] + "…"
            cells.append(text.rjust(widths[i]) if i == 3 else text.ljust(widths[i]))
        return "  ".join(cells).rstrip()

    print(line(headers))
    print(line(["-" * w for w in widths]))
    previous = None
    for row in rows:
        if previous is not None and row[0] != previous:
            print()
        previous = row[0]
        print(line(row))
    misses = sum(1 for f in bench.figures if f.verdict == "MISS")
    passes = sum(1 for f in bench.figures if f.verdict == "PASS")
    print(f"\n{passes} PASS, {misses} MISS")
    if bench.ratios:
        print("\nratios (measured side by side in this run):")
        for text in bench.ratios:
            print(f"  {text}")
    if bench.notes:
        print("\nnotes:")
        for text in bench.notes:
            print(f"  - {text}")


# --------------------------------------------------------------------------- main


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="100k,1m,10m,100m",
        help="comma-separated row counts (default 100k,1m,10m,100m; a size the machine has "
        "no room for is skipped, saying why)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per process-level figure")
    parser.add_argument("--reps", type=int, default=20, help="repetitions per interaction")
    parser.add_argument("--pages", type=int, default=30, help="PageDown presses per size")
    parser.add_argument(
        "--core-reps", type=int, default=5, help="repetitions per core (no UI) scenario"
    )
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run (default all: {','.join(SECTIONS)})",
    )
    parser.add_argument(
        "--bounded-rows", type=parse_rows, default=30_000_000, help="rows of the bounded test"
    )
    parser.add_argument(
        "--bounded-limit",
        type=parse_bytes,
        default=parse_bytes("1G"),
        help="prlimit --data for the bounded test (default 1G: below the 30M-row file's size)",
    )
    parser.add_argument(
        "--side-by-side-rows", type=parse_rows, default=1_000_000, help="rows for section 7"
    )
    parser.add_argument("--no-visidata", action="store_true", help="skip VisiData")
    parser.add_argument(
        "--parquet",
        action="store_true",
        help="section 8 also measures a Parquet copy of each ledger (written once beside it)",
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="per first screen, seconds")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.rows = [parse_rows(item) for item in args.sizes.split(",") if item.strip()]
    args.only = {item.strip() for item in args.only.split(",") if item.strip()}
    unknown = args.only - set(SECTIONS)
    if unknown:
        parser.error(f"--only: unknown sections {sorted(unknown)}; use {','.join(SECTIONS)}")
    return args


def run_child(arguments: Sequence[str]) -> int:
    mode, *rest = arguments
    if mode == "interact":
        child_interact(rest[0], int(rest[1]), int(rest[2]))
    elif mode == "core":
        child_core(rest[0], int(rest[1]), int(rest[2]))
    elif mode == "plain":
        child_plain(rest[0])
    elif mode == "probe":
        child_probe(rest[0], rest[1])
    elif mode == "floor":
        child_floor(rest[0])
    elif mode == "frame":
        child_frame(rest[0])
    else:
        raise SystemExit(f"unknown child mode {mode}")
    return 0


@contextlib.contextmanager
def _stage(name: str) -> Iterator[None]:
    started = time.perf_counter()
    print(f"[{name}]", file=sys.stderr, flush=True)
    yield
    print(f"[{name}] {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)


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


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    if args.child:
        return run_child(args.child)
    if shutil.which("tmux") is None and ({"first_screen", "startup"} & args.only):
        print("bench.py: tmux is needed for the first-screen figures", file=sys.stderr)
        return 2
    bench = Bench(args)
    bench.notes.append(compile_bytecode())
    info = machine()
    started = time.perf_counter()
    paths: dict[int, Path] = {}
    for rows in args.rows:
        reason = room_for(rows)
        if reason is not None:
            print(f"bench.py: {reason}", file=sys.stderr)
            bench.notes.append(reason)
            continue
        paths[rows] = ensure_ledger(rows)
    steps: list[tuple[str, Callable[[], None]]] = []
    if bench.wants("startup"):
        steps.append(("start-up on runs.csv", lambda: section_startup(bench)))
    for rows, path in paths.items():
        label = rows_label(rows)
        if bench.wants("first_screen"):
            steps.append((f"first screen {label}", _bind(section_first_screen, bench, rows, path)))
        if bench.wants("interactions"):
            steps.append((f"interactions {label}", _bind(section_interactions, bench, rows, path)))
        if bench.wants("core"):
            steps.append((f"core {label}", _bind(section_core, bench, rows, path)))
        if bench.wants("summary"):
            steps.append((f"summary {label}", _bind(section_summary, bench, rows, path)))
        if bench.wants("floor"):
            steps.append((f"floor {label}", _bind(section_floor, bench, rows, path)))
    if bench.wants("interactions"):
        steps.append(("paging ratio", lambda: section_paging_ratio(bench)))
    if bench.wants("bounded"):
        steps.append(("bounded memory", lambda: section_bounded(bench)))
    if bench.wants("side_by_side"):
        steps.append(("side by side", lambda: section_side_by_side(bench, args.side_by_side_rows)))
        steps.append(("raw polars ratios", lambda: raw_polars_ratios(bench)))
    for name, step in steps:
        with _stage(name):
            try:
                step()
            except Exception as error:  # one failed measurement must not lose the others
                bench.notes.append(f"{name}: {type(error).__name__}: {error}")
                print(f"  {name} failed: {error}", file=sys.stderr)
    print_table(bench, info)
    total = time.perf_counter() - started
    load_end = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"\ntotal {total:.0f} s; load average at the end {load_end}")
    OUT.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    record = OUT / f"bench-{stamp}.json"
    record.write_text(
        json.dumps(
            {
                "machine": info,
                "argv": sys.argv[1:],
                "figures": [asdict(f) for f in bench.figures],
                "ratios": bench.ratios,
                "notes": bench.notes,
                "raw": bench.raw,
                "total_seconds": total,
            },
            indent=1,
            default=str,
        )
    )
    print(f"raw samples: {record.relative_to(ROOT)}")
    return 0


def _bind(function: Callable[..., None], *args: Any) -> Callable[[], None]:
    return lambda: function(*args)


if __name__ == "__main__":
    raise SystemExit(main())
