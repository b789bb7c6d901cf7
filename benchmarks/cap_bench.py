"""Time of a cap replayed (`cap.capped` + `compare`, `cap.cap_figures`) and of the cap sweep
(`cap_sweep.cap_sweep`) at 100k, 1M and 10M attempts in 15 groups.

Prints, per size, the median of three runs of each: the sweep is one sort of (group, tokens)
and cumulative sums, the replay one pass more than `compare`.

    python benchmarks/cap_bench.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import polars as pl

from tui_ledger.accounting.cap import Cap, cap_figures, capped
from tui_ledger.accounting.cap_sweep import cap_sweep
from tui_ledger.accounting.ledger import compare
from tui_ledger.schema import OUTCOME_DTYPE

GROUPS = 15


def ledger(rows: int) -> pl.DataFrame:
    index = pl.int_range(rows, eager=True)
    hashed = index.hash(7)
    return pl.DataFrame(
        {
            "workflow": (index % GROUPS).cast(pl.String),
            "outcome": pl.Series(["passed", "failed"], dtype=OUTCOME_DTYPE)[
                (hashed % 3 != 0).cast(pl.Int64)
            ],
            "tokens": (1_000 + (hashed % 3_000_000)).cast(pl.Int64),
        }
    )


def median_seconds(run: Callable[[pl.DataFrame], object], frame: pl.DataFrame) -> float:
    times = []
    for _ in range(3):
        started = time.perf_counter()
        run(frame)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    cap = Cap(1_000_000)
    by = ["workflow"]
    runs: list[Callable[[pl.DataFrame], object]] = [
        lambda frame: compare(frame, by, intervals="delta"),
        lambda frame: compare(capped(frame, cap), by, intervals="delta"),
        lambda frame: cap_figures(frame, cap, by),
        lambda frame: cap_sweep(frame, by),
    ]
    print(f"{'attempts':>11} {'compare s':>10} {'capped s':>9} {'figures s':>10} {'sweep s':>8}")
    for rows in (100_000, 1_000_000, 10_000_000):
        frame = ledger(rows)
        plain, under, figures, sweep = (median_seconds(run, frame) for run in runs)
        print(f"{rows:>11,} {plain:>10.3f} {under:>9.3f} {figures:>10.3f} {sweep:>8.3f}")


if __name__ == "__main__":
    main()
