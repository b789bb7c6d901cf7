"""Many groups (issue 14, item 8): 200,000 groups, a filter keystroke and the chart.

    python benchmarks/many_groups.py                     # 200,000 groups, 2 attempts each
    python benchmarks/many_groups.py --groups 50000 --reps 3
    python benchmarks/many_groups.py --file /tmp/many.csv --profile /tmp/many.prof

It writes a seeded ledger (polars only) of `--groups` workflows `wf-000000`... with two
attempts each (a task from 100, tokens, passed) to `benchmarks/out/` (gitignored) unless
`--file` names one, then prints, each a median of `--reps` runs in this process:

- compare: `ledger.compare(attempts, ["workflow"], intervals="delta")`, the recompute's figures;
- intervals: `ledger.with_intervals(..., "auto")`, the bootstrap that follows them;
- checks: `checks.run_checks(attempts, ["workflow"], report)`;
- figures: the app under Pilot (160x50), filter `tokens>10` typed, then one key (`0` or
  backspace, both keep every group) until the new figures are drawn (the table and the
  summary, with the delta-method intervals; the bootstrap and the checks follow);
- keystroke: the same key until `LedgerApp.unsettled` is empty: the screen final, with the
  bootstrap intervals and the checks;
- same rows: a key that keeps the rows on screen (`tokens>1` to `tokens>10` and back) until
  the screen is final;
- chart: `c` until the first frame composed with the Pareto screen on top.

Figures, never assertions: nothing here is a test. The load average is printed first: the
machine is shared, and only figures measured in the same run compare.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
SCREEN = (160, 50)


def generate(groups: int, path: Path) -> Path:
    """`groups` workflows, two attempts each: a task of 100, tokens 100..5,099, passed."""
    rows = groups * 2
    frame = (
        pl.DataFrame({"i": pl.int_range(0, rows, eager=True)})
        .with_columns(
            workflow=pl.format("wf-{}", (pl.col("i") // 2).cast(pl.String).str.zfill(6)),
            task=pl.format("task-{}", (pl.col("i").hash(1) % 100).cast(pl.String).str.zfill(3)),
            tokens=(pl.col("i").hash(2) % 5000 + 100).cast(pl.Int64),
            passed=pl.col("i").hash(3) % 2 == 0,
        )
        .drop("i")
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.write_csv(path)
    return path


def _timed(action: Callable[[], object], reps: int) -> list[float]:
    seconds = []
    for _ in range(reps):
        started = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - started)
    return seconds


def core(path: Path, reps: int) -> dict[str, list[float]]:
    from tui_ledger import load
    from tui_ledger.accounting import checks, ledger

    loaded = load.load([str(path)])
    attempts = loaded.attempts
    comparison = ledger.compare(attempts, ["workflow"], intervals="delta")
    return {
        "compare": _timed(lambda: ledger.compare(attempts, ["workflow"], intervals="delta"), reps),
        "intervals": _timed(lambda: ledger.with_intervals(comparison, attempts, "auto"), reps),
        "checks": _timed(lambda: checks.run_checks(attempts, ["workflow"], loaded.report), reps),
    }


async def _final(app: Any, pilot: Any, since: int, *, timeout: float = 300.0) -> float:
    """Wait until a recompute was recorded since `since` and nothing is unsettled; the time."""
    deadline = time.perf_counter() + timeout
    while True:
        recorded = any(name == "recompute" for name, _ in app.timings.history[since:])
        if recorded and not app.unsettled and app.filter_text == app.filter_input.value:
            return time.perf_counter()
        if time.perf_counter() > deadline:
            raise TimeoutError(f"not final after {timeout} s: {app.unsettled}")
        await asyncio.sleep(0.002)


async def app_figures(path: Path, reps: int) -> dict[str, list[float]]:
    from tui_ledger.tui.app import LedgerApp
    from tui_ledger.tui.screens.pareto_screen import ParetoScreen

    app = LedgerApp([str(path)])
    figures: dict[str, list[float]] = {
        "figures": [],
        "keystroke": [],
        "same rows": [],
        "chart": [],
    }
    async with app.run_test(size=SCREEN) as pilot:
        while not app.loaded or app.unsettled:
            await asyncio.sleep(0.01)
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("slash")
        since = len(app.timings.history)
        await pilot.press(*"tokens>10")
        await _final(app, pilot, since)
        pipeline = app.pipeline
        drawn_figures: list[float] = []
        original_drawn = pipeline.drawn

        def figures_drawn(snapshot: Any, new_figures: bool) -> None:
            if pipeline.snapshot is snapshot and new_figures:
                drawn_figures.append(time.perf_counter())
            original_drawn(snapshot, new_figures)

        pipeline.drawn = figures_drawn
        for index in range(reps):
            drawn_figures.clear()
            since = len(app.timings.history)
            started = time.perf_counter()
            # Not awaited before the wait: Pilot's press returns only once the screen has
            # been idle a while, which would add its own wait to the figure.
            press = asyncio.ensure_future(pilot.press("0" if index % 2 == 0 else "backspace"))
            figures["keystroke"].append(await _final(app, pilot, since) - started)
            await press
            figures["figures"].append(drawn_figures[0] - started)
        pipeline.drawn = original_drawn
        # `tokens>1` and `tokens>10` keep every row (tokens are 100 or more): the figures on
        # screen are shown again (`compute_snapshot`'s `shown`).
        since = len(app.timings.history)
        await pilot.press("ctrl+u", *"tokens>1")
        await _final(app, pilot, since)
        for index in range(reps):
            since = len(app.timings.history)
            started = time.perf_counter()
            press = asyncio.ensure_future(pilot.press("0" if index % 2 == 0 else "backspace"))
            figures["same rows"].append(await _final(app, pilot, since) - started)
            await press
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.table.focus()
        await pilot.pause()
        original = app._display
        drawn: list[float] = []

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            if renderable is not None and isinstance(app.screen, ParetoScreen) and not drawn:
                drawn.append(time.perf_counter())

        app._display = display
        for _ in range(reps):
            drawn.clear()
            started = time.perf_counter()
            await pilot.press("c")
            while not drawn:
                await asyncio.sleep(0.002)
            figures["chart"].append(drawn[0] - started)
            await pilot.press("escape")
            await pilot.pause()
        app._display = original
        await pilot.press("q")
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=200_000)
    parser.add_argument("--file", type=Path, help="an existing ledger instead of generating")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--only", default="core,app", help="core, app or both")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the whole run here")
    options = parser.parse_args(argv)
    path = options.file or generate(options.groups, OUT / f"many-groups-{options.groups}.csv")
    import tui_ledger

    print(f"load average {os.getloadavg()[0]:.2f}  cpus {os.cpu_count()}  ", end="")
    print(f"code {Path(tui_ledger.__file__).parent}  file {path}")
    profiler = None
    if options.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    figures: dict[str, list[float]] = {}
    if "core" in options.only:
        figures.update(core(path, options.reps))
    if "app" in options.only:
        figures.update(asyncio.run(app_figures(path, options.reps)))
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(options.profile)
    for name, seconds in figures.items():
        print(
            f"{name:<10} median {statistics.median(seconds):7.3f} s   "
            f"min {min(seconds):7.3f} s   max {max(seconds):7.3f} s   (n={len(seconds)})"
        )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
