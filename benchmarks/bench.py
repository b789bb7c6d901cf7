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

This file is the entry point (options, the order of the sections, the children it starts as
`bench.py --child MODE`); each figure lives in its own module beside it: `bench_first_screen`
(1, and 8: polars' floor), `bench_interactions` (2 and 3, under Pilot), `bench_memory` (4: the
same interactions in a real terminal), `bench_core` (2, without UI), `bench_summary` (5),
`bench_startup` (6), `bench_side_by_side` (7), on `bench_harness` (ledgers, room checks,
fresh processes, tmux panes, medians) and `bench_table` (the figures, the printed table, the
run's JSON record).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench_core import child_core, section_core
from bench_first_screen import child_floor, child_frame, section_first_screen, section_floor
from bench_harness import (
    ROOT,
    compile_bytecode,
    ensure_ledger,
    parse_bytes,
    parse_rows,
    room_for,
    rows_label,
)
from bench_interactions import child_interact, section_interactions, section_paging_ratio
from bench_side_by_side import child_plain, raw_polars_ratios, section_side_by_side
from bench_startup import section_startup
from bench_summary import child_probe, section_bounded, section_summary
from bench_table import Bench, machine, print_table, write_record

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


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    record = write_record(bench, info, total)
    print(f"raw samples: {record.relative_to(ROOT)}")
    return 0


def _bind(function: Callable[..., None], *args: Any) -> Callable[[], None]:
    return lambda: function(*args)


if __name__ == "__main__":
    raise SystemExit(main())
