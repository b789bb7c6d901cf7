"""Time of the pairwise verdicts (`pairs.with_pairs`) at 9, 200 and 2,000 groups.

Each group runs the same 100 tasks once (a paired ledger); prints, per size, the groups, the
pairs compared per view and the median of three runs of `with_pairs` (cells and draws).

    python benchmarks/pairs_bench.py
"""

from __future__ import annotations

import statistics
import time

import polars as pl

from tui_ledger.accounting.ledger import compare
from tui_ledger.accounting.pairs import with_pairs

TASKS = 100


def ledger(groups: int) -> pl.DataFrame:
    rows = pl.int_range(groups * TASKS, eager=True)
    hashed = rows.hash(3)
    return pl.DataFrame(
        {
            "workflow": (rows // TASKS).cast(pl.String).str.zfill(5),
            "task": (rows % TASKS).cast(pl.String),
            "outcome": pl.Series(["passed", "failed"])[(hashed % 3 == 0).cast(pl.Int64)],
            "tokens": (1_000 + (hashed % 50_000)).cast(pl.Int64),
        }
    )


def main() -> None:
    print(f"{'groups':>7} {'attempts':>9} {'pairs (keep)':>13} {'median s':>9}")
    for groups in (9, 200, 2_000):
        frame = ledger(groups)
        comparison = compare(frame, ["workflow"], intervals="delta")
        times = []
        for _ in range(3):
            started = time.perf_counter()
            paired = with_pairs(comparison, frame)
            times.append(time.perf_counter() - started)
        assert paired.pairs is not None
        count = len(paired.pairs.keep)
        print(f"{groups:>7,} {frame.height:>9,} {count:>13,} {statistics.median(times):>9.3f}")


if __name__ == "__main__":
    main()
