"""The same ledgers through Spark (local, Spark Connect) beside polars, in one run: printed figures.

    python benchmarks/spark_bench.py                        # 1M and 10M, a server of its own
    python benchmarks/spark_bench.py --url sc://127.0.0.1:15002 --sizes 1m
    python benchmarks/spark_bench.py --big 100m             # also 100M rows through Spark only
    python benchmarks/spark_bench.py --sizes 1m,10m --big 100m --only command,polars
    python benchmarks/spark_bench.py --url sc://127.0.0.1:15002 --requests sample_data/demo.csv

Ledgers are generated once into `benchmarks/out/` by `benchmarks/generate.py` (seed 7, with a
status column), as Parquet (the format a cluster keeps them in) and, with `--csv`, as CSV too.
For each one it times:

- polars: `load.load` and `ledger.compare(intervals="delta")`, what `ledger-tui summary`
  does in memory; at `--big` sizes, `load.scan` and `compare(streaming=True)` instead;
- the command, end to end in a process of its own: `ledger-tui summary --format json`,
  without and with `--spark URL` (start, connect, validate, figures, checks, JSON);
- Spark: `open_ledger` (reading the schema), `validate` (the loader's checks and warnings,
  one pass), `aggregate_frame` by workflow (the cells and the medians of both views, two
  queries; run twice, cold then warm), `check_cells` (one pass), the aggregate under a
  filter (`failed tokens>20000`, as a keystroke in the app), and pages 0 and 1,000 of the
  rows sorted by tokens;

and checks that both engines give the same aggregate frame (tests/spark/reference.py).
`--only` keeps some of the three sides (`polars`, `spark`, `command`): `command,polars` times
what a user waits for at every size (the command end to end, and polars beside it) without
the Spark side's separate queries, which at 100M rows take most of an hour here.
`--requests FILE` only counts the Spark Connect requests of the app on FILE (opening, first
screen, one filter keystroke: `requests_per_keystroke`, which a benchmark may call).
Without `--url` (or SPARK_REMOTE) it starts a local server (tests/spark/server.py: two cores,
a 2 GB driver) and stops it at the end, printing its resident memory after the run.
Figures are wall-clock seconds of one run each, on whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from benchmarks.generate import ledger_plan  # noqa: E402
from tests.spark import server  # noqa: E402
from tests.spark.reference import assert_same_aggregates, polars_aggregate_frame  # noqa: E402
from tui_ledger import load  # noqa: E402
from tui_ledger.accounting import ledger  # noqa: E402
from tui_ledger.filtering.query import parse_filter  # noqa: E402

Result = TypeVar("Result")
SIZES = {"1m": 1_000_000, "10m": 10_000_000, "100m": 100_000_000}
WHERE = "failed tokens>20000"  # a keystroke's filter: an outcome word and a number
BIG_PARTS = 10  # a 100M-row ledger is written as a folder of this many Parquet files


def timed(work: Callable[[], Result]) -> tuple[Result, float]:
    began = time.perf_counter()
    result = work()
    return result, time.perf_counter() - began


def ledger_path(rows: int, fmt: str) -> Path:
    """Generate (once) the ledger of `rows` rows; a big one as a folder of Parquet parts."""
    OUT.mkdir(parents=True, exist_ok=True)
    if rows > 10_000_000:
        folder = OUT / f"ledger-{rows}-seed7-status.parquet.d"
        if not folder.exists():
            partial = folder.with_suffix(".partial")
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir()
            per_part = rows // BIG_PARTS
            for part in range(BIG_PARTS):
                # Each part its own seed: the same workflows and tasks, different draws.
                plan = ledger_plan(per_part, seed=7 + part, status=True)
                plan.sink_parquet(partial / f"part-{part:02d}.parquet")
            partial.rename(folder)
        return folder
    path = OUT / f"ledger-{rows}-seed7-status.{fmt}"
    if not path.exists():
        plan = ledger_plan(rows, seed=7, status=True)
        if fmt == "csv":
            plan.sink_csv(path)
        else:
            plan.sink_parquet(path)
    return path


def disk_free(path: Path) -> int:
    return shutil.disk_usage(path).free


@contextlib.contextmanager
def spark_server(url: str | None) -> Iterator[tuple[str, Path | None]]:
    if url:
        yield url, None
        return
    state = Path(tempfile.mkdtemp(prefix="ledger-tui-spark-bench-"))
    started = server.start(state)
    print(f"Spark Connect server listening after {started.seconds_to_listen:.1f} s")
    try:
        yield started.url, state
    finally:
        server.stop(state)
        shutil.rmtree(state, ignore_errors=True)


def group_rss_mb(state: Path | None) -> float | None:
    """Resident memory of the server's process group (the JVM), in MB."""
    if state is None or not (state / "pid").exists():
        return None
    group = int((state / "pid").read_text())
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == group:
                total += int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    return total / 2**20


def polars_side(path: Path, big: bool) -> tuple[dict[str, float], pl.DataFrame | None]:
    figures: dict[str, float] = {}
    if big:
        (lazy, _), figures["polars scan"] = timed(lambda: load.scan(str(path)))
        _, figures["polars compare (streaming)"] = timed(
            lambda: ledger.compare(lazy, intervals="delta", streaming=True)
        )
        return figures, None
    loaded, figures["polars load"] = timed(lambda: load.load(path))
    _, figures["polars compare"] = timed(lambda: ledger.compare(loaded.attempts, intervals="delta"))
    condition = parse_filter(WHERE, loaded.attempts.schema)
    assert condition is not None
    _, figures[f"polars compare where {WHERE}"] = timed(
        lambda: ledger.compare(loaded.attempts.filter(condition), intervals="delta")
    )
    reference, _ = timed(lambda: polars_aggregate_frame(loaded.attempts, ["workflow"]))
    return figures, reference


def spark_side(spark: Any, path: Path) -> tuple[dict[str, float], pl.DataFrame]:
    from tui_ledger.spark.aggregate import aggregate_frame
    from tui_ledger.spark.check_figures import check_cells
    from tui_ledger.spark.engine import polars_schema
    from tui_ledger.spark.filters import spark_filter
    from tui_ledger.spark.opening import open_ledger
    from tui_ledger.spark.paging import page

    figures: dict[str, float] = {}
    opened, figures["spark open"] = timed(lambda: open_ledger(spark, str(path)))
    _, figures["spark validate"] = timed(opened.validate)
    attempts = opened.attempts()
    frame, figures["spark aggregate (cold)"] = timed(
        lambda: aggregate_frame(attempts, ["workflow"])
    )
    _, figures["spark aggregate (warm)"] = timed(lambda: aggregate_frame(attempts, ["workflow"]))
    _, figures["spark check cells"] = timed(lambda: check_cells(attempts, ["workflow"]))
    typed, figures["spark typed attempts (CSV: parsed once, kept)"] = timed(opened.typed_attempts)
    condition = spark_filter(WHERE, polars_schema(typed))
    assert condition is not None
    _, figures[f"spark aggregate where {WHERE}"] = timed(
        lambda: aggregate_frame(typed.where(condition), ["workflow"])
    )
    _, figures["spark page 0 by tokens (100 rows)"] = timed(
        lambda: page(opened, sort=["tokens"], descending=True)
    )
    _, figures["spark page 1,000 by tokens"] = timed(
        lambda: page(opened, sort=["tokens"], descending=True, number=1000)
    )
    figures["spark summary (open+validate+aggregate)"] = (
        figures["spark open"] + figures["spark validate"] + figures["spark aggregate (cold)"]
    )
    return figures, frame


def command_side(url: str, path: Path, big: bool) -> dict[str, float]:
    """The user's view, end to end: `ledger-tui summary --format json` in a process of its
    own (start, load or connect, validate, figures, checks, JSON), locally and with --spark."""
    figures: dict[str, float] = {}
    command = [sys.executable, "-m", "tui_ledger.cli", "summary", str(path), "--format", "json"]
    if not big:
        _, figures["ledger-tui summary --format json"] = timed(
            lambda: subprocess.run(command, check=True, capture_output=True)
        )
    _, figures["ledger-tui summary --spark URL --format json"] = timed(
        lambda: subprocess.run([*command, "--spark", url], check=True, capture_output=True)
    )
    return figures


def requests_per_keystroke(url: str, path: str | Path, word: str = "lean") -> dict[str, Any]:
    """The Spark Connect requests (by gRPC method, `spark.requests`) the app on `url` sends
    for `path`: opening the input, its first screen, and one filter keystroke (the last
    letter of `word`, typed after the others have settled), with each one's seconds. Runs the
    app headless (Textual's test pilot) on a session of its own, stopped at the end."""
    import asyncio

    from tests.pilot_helpers import press, settle
    from tui_ledger.spark.commands import open_input
    from tui_ledger.spark.requests import ROUND_TRIPS, count_requests
    from tui_ledger.spark.session import connect
    from tui_ledger.tui.app import LedgerApp

    spark = connect(url)
    counter = count_requests(spark)
    result: dict[str, Any] = {}

    def step(name: str, before: dict[str, int], began: float) -> None:
        counts = counter.since(before)
        trips = sum(counts.get(method, 0) for method in ROUND_TRIPS)
        result[name] = {"requests": counts, "round trips": trips}
        result[name]["seconds"] = round(time.perf_counter() - began, 2)

    async def drive() -> None:
        began, before = time.perf_counter(), counter.counts()
        opened = open_input(None, [str(path)], load_options={}, connect_to=lambda _url: spark)
        step("open", before, began)
        app = LedgerApp([str(path)], spark=opened)
        async with app.run_test(size=(160, 45)) as pilot:
            began, before = time.perf_counter(), counter.counts()
            await settle(pilot, seconds=600)
            step("first screen", before, began)
            await press(pilot, "slash", *word[:-1])
            await settle(pilot, seconds=600)
            began, before = time.perf_counter(), counter.counts()
            await press(pilot, word[-1])
            await settle(pilot, seconds=600)
            step("keystroke", before, began)

    try:
        asyncio.run(drive())
    finally:
        spark.stop()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("SPARK_REMOTE"))
    parser.add_argument("--sizes", default="1m,10m", help="comma-separated: 1m, 10m")
    parser.add_argument("--csv", action="store_true", help="CSV ledgers too, beside Parquet")
    parser.add_argument("--big", default="", help="e.g. 100m: Spark and streamed polars only")
    parser.add_argument(
        "--only", default="polars,spark,command", help="sides to time: polars, spark, command"
    )
    parser.add_argument(
        "--requests", default="", help="a file: only count the app's requests on it (--url)"
    )
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.requests:
        for name, found in requests_per_keystroke(args.url, args.requests).items():
            print(f"{name:<13} {found}")
        return 0
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    runs: list[tuple[int, str, bool]] = []
    for size in filter(None, args.sizes.split(",")):
        runs.append((SIZES[size], "parquet", False))
        if args.csv:
            runs.append((SIZES[size], "csv", False))
    for size in filter(None, args.big.split(",")):
        rows = SIZES[size]
        needed = rows * 12  # about 6 bytes a row as Parquet, twice over for headroom
        if disk_free(OUT.parent) < needed:
            print(f"skipping {size}: {disk_free(OUT.parent) / 2**30:.1f} GiB free on disk")
            continue
        runs.append((rows, "parquet", True))

    # Ctrl+C or SIGTERM stops the server this run started: the work runs in a thread, since a
    # signal reaches Python only between bytecodes of the main thread, never inside a gRPC wait.
    signal.signal(signal.SIGTERM, _interrupt)
    with spark_server(args.url) as (url, state):
        sides = set(args.only.split(","))
        worker = threading.Thread(target=run_all, args=(url, state, runs, sides), daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.5)
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_all(
    url: str, state: Path | None, runs: list[tuple[int, str, bool]], sides: set[str]
) -> None:
    from tui_ledger.spark.session import connect

    spark = connect(url)
    for rows, fmt, big in runs:
        path, generated = timed(lambda rows=rows, fmt=fmt: ledger_path(rows, fmt))
        size_mb = sum(f.stat().st_size for f in [path, *path.glob("*")] if f.is_file())
        busy = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(
            f"\n{rows:,} attempts, {fmt} ({size_mb / 2**20:,.0f} MB, ready in "
            f"{generated:.1f} s): {path.name}; load average {busy} on {os.cpu_count()} cores"
        )
        spark_figures, ours = spark_side(spark, path) if "spark" in sides else ({}, None)
        polars_figures, reference = polars_side(path, big) if "polars" in sides else ({}, None)
        command_figures = command_side(url, path, big) if "command" in sides else {}
        for name, seconds in {**polars_figures, **spark_figures, **command_figures}.items():
            print(f"  {name:<44} {seconds:8.2f} s")
        if reference is not None and ours is not None:
            assert_same_aggregates(ours, reference)
            print("  same aggregate frame from both engines:    yes")
        rss = group_rss_mb(state)
        if rss is not None:
            print(f"  Spark server resident memory:               {rss:,.0f} MB")
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
