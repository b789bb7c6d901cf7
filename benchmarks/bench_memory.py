"""Figure 4, memory in a real terminal: the real `ledger-tui FILE` in a tmux pane driven by keys
as a person would, its own peak (`VmHWM`) after each interaction; and the memory figures of an
interactions run (first screen, Pilot, the real terminal) against 2.5 x the frame + 200 MiB."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench_harness import (
    MB,
    OUT,
    TIMINGS_VARIABLE,
    close_pane,
    expected_groups,
    open_pane,
    rows_label,
    screen_state,
    vm_hwm,
)
from bench_table import Bench, memory_figure


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

    session, launcher, control = open_pane("bench-keys", script)
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
        close_pane(session, control, timings, launcher)


def section_memory(
    bench: Bench, rows: int, path: Path, data: dict[str, Any], pilot_peak: int
) -> None:
    """Figure 4 after an interactions run (`data`, the Pilot child's report; `pilot_peak`, that
    process's ru_maxrss): the frame as loaded is the yardstick; the app's peak at its first
    screen (from figure 1, when it ran), after every interaction under Pilot, and after the
    same interactions in a real terminal, which it runs here."""
    label = rows_label(rows)
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
            "4 memory", label, "peak RSS, app after all interactions", pilot_peak, estimated
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
