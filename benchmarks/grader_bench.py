"""The grader's audit (`grader.audit_ledger`, issue 54): every attempt's log read once and judged,
at the demo's size and at N times it, with one reader thread and with the default pool.

    python benchmarks/grader_bench.py              # 360, 3,600 and 36,000 attempts
    python benchmarks/grader_bench.py --copies 10  # 360 and 3,600

The larger ledgers repeat the demo's rows (each a new attempt number) over copies of its
synthetic ATIF trajectories, so every attempt's log is a file of its own, read as any ledger's
`trace` column is. Prints the seconds of each audit (median of 3) and the signals it found
(six per copy of the demo: its gaming `lean-loop` attempts).
"""

from __future__ import annotations

import argparse
import csv
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEMO = ROOT / "sample_data" / "demo.csv"
TRACES = ROOT / "sample_data" / "demo_traces"


def ledger_of(copies: int, folder: Path) -> Path:
    """The demo `copies` times over, each copy's trajectories in a folder of their own."""
    rows = list(csv.DictReader(DEMO.open(encoding="utf-8", newline="")))
    path = folder / f"demo_x{copies}.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for copy in range(copies):
            traces = folder / f"traces_{copy}"
            if not traces.exists():
                shutil.copytree(TRACES, traces)
            for row in rows:
                name = row["trace"].split("/", 1)[1]
                writer.writerow(
                    {
                        **row,
                        "attempt": str(copy * 3 + int(row["attempt"])),
                        "trace": f"traces_{copy}/{name}",
                    }
                )
    return path


def measure(path: Path, threads: int | None) -> tuple[float, int, int]:
    from tui_ledger.grader import audit_ledger
    from tui_ledger.load import load

    ledger = load([str(path)])
    times = []
    found = 0
    for _ in range(3):
        started = time.perf_counter()
        audit = audit_ledger(ledger, [str(path)], threads=threads)
        times.append(time.perf_counter() - started)
        found = audit.signals.height
    return statistics.median(times), ledger.attempts.height, found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=100, help="the largest ledger's copies")
    args = parser.parse_args()
    sizes = [copies for copies in (1, 10, 100) if copies <= args.copies]
    with tempfile.TemporaryDirectory(prefix="grader_bench_") as folder:
        print(f"{'attempts':>9}  {'threads':>7}  {'seconds':>8}  {'per attempt':>11}  signals")
        for copies in sizes:
            path = ledger_of(copies, Path(folder))
            for threads in (1, None):
                seconds, rows, found = measure(path, threads)
                shown = "default" if threads is None else str(threads)
                print(
                    f"{rows:>9,}  {shown:>7}  {seconds:>8.2f}  "
                    f"{seconds / rows * 1000:>8.3f} ms  {found:,}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
