"""Figure 1, the first screen: the real `ledger-tui FILE` in a 160x50 tmux pane, from the moment
its process starts until the frame, the first rows and every group's final figures show; and
figure 8, that final summary against polars' floor (a fresh process that reads the same file
and does the group-by), CSV and (with `--parquet`) Parquet, run by run."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from bench_core import raw_summary
from bench_harness import (
    OUT,
    ROOT,
    child,
    close_pane,
    expected_groups,
    median,
    open_pane,
    report,
    rows_label,
    screen_state,
    seconds_text,
    stamped_app,
    vm_hwm,
)
from bench_table import Bench, Figure, memory_figure

# The targets of issue 16 ("Instant at any size"), by the largest row count each applies to.
FIRST_ROWS = 0.5  # process start -> header, view and the table's first rows, at any size
FINAL_SUMMARY = ((1_000_000, 0.7), (10_000_000, 1.5), (100_000_000, 15.0))
# Issue 29: the final summary on screen against polars' floor (a fresh process that imports
# polars, reads the same file and does the group-by with medians): <= 1.5 x floor + 0.3 s.
FLOOR_FACTOR = 1.5
FLOOR_SLACK = 0.3


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

    session, launcher, control = open_pane("bench", stamped_app(str(path)))
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
        close_pane(session, control, stamp, launcher)


def final_summary_target(rows: int) -> float | None:
    return next((limit for most, limit in FINAL_SUMMARY if rows <= most), None)


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
