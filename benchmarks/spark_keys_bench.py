"""The app and `summary` on Spark as a user waits for them, with the Spark requests counted.

    python benchmarks/spark_keys_bench.py --url sc://127.0.0.1:PORT            # demo + 1M
    python benchmarks/spark_keys_bench.py --url URL --inputs demo --runs 3

For each input (the bundled demo, 360 rows as CSV; a generated 1M-row Parquet ledger,
`benchmarks/generate.py --rows 1000000`), each measurement in a process of its own (one Spark
Connect session per process, docs/SPARK.md):

- the app on Spark, headless (Textual's Pilot): seconds from the process's start until the
  first screen shows its figures (and until it settles), and from the last key of a filter
  (`/lea`, then `n`: `lean`) until that filter's figures are drawn (and until the screen
  settles: checks and pairs drawn); the Spark Connect requests (by gRPC method) of each;
- `ledger-tui summary --spark URL` and the local `ledger-tui summary`, end to end (process
  start to exit), and the summary's Spark requests.

Importable: `measure_app(url, path)`, `measure_summary(url, path)` and `run(url, inputs)`
return the figures as dicts (the lead's one-run report calls them); `report` prints them.
Wall-clock seconds of one run each (medians with `--runs`), on whatever else the machine is
doing (the load average is printed). The server is the caller's (`--url`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STARTED = time.perf_counter()
FILTER_KEYS = ("slash", "l", "e", "a")  # then the last key, "n": the filter `lean`
LAST_KEY = "n"
ROUND_TRIPS = ("ExecutePlan", "AnalyzePlan", "Config", "ReattachExecute")  # spark.requests'


def demo_path() -> Path:
    return ROOT / "tui_ledger" / "sample_data" / "demo.csv"


def million_path() -> Path:
    """The 1M-row Parquet ledger (seed 7), generated once into benchmarks/out/."""
    path = ROOT / "benchmarks" / "out" / "ledger-1000000-seed7.parquet"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        generate = [sys.executable, str(ROOT / "benchmarks" / "generate.py")]
        subprocess.run([*generate, "--rows", "1000000", "-o", str(path)], check=True)
    return path


def round_trips(counts: dict[str, int]) -> int:
    return sum(counts.get(name, 0) for name in ROUND_TRIPS)


# --------------------------------------------------------------------------- in the child


def _counting_connect(counters: list[Any]) -> Any:
    from tui_ledger.spark.requests import count_requests
    from tui_ledger.spark.session import connect

    def counted(url: str | None) -> Any:
        spark = connect(url)
        counters.append(count_requests(spark))
        return spark

    return counted


async def _drive_app(url: str, path: str) -> dict[str, Any]:
    from tui_ledger.spark.commands import open_input
    from tui_ledger.tui.app import LedgerApp

    counters: list[Any] = []
    opened = open_input(url, [path], load_options={}, connect_to=_counting_connect(counters))
    counter = counters[0]
    app = LedgerApp([path], spark=opened)
    figures: dict[str, Any] = {}

    async def until(condition: Any, pilot: Any, limit: float = 600) -> None:
        deadline = time.monotonic() + limit
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError("the app did not get there in time")
            await pilot.pause(0.01)

    def drawn() -> bool:
        pipeline: Any = app.pipeline
        snapshot = pipeline.snapshot
        return (
            snapshot is not None
            and snapshot.generation == pipeline.generation
            and not pipeline._recompute_running
            and app.comparison is not None
        )

    def settled() -> bool:
        return drawn() and not getattr(app, "unsettled", ())

    async with app.run_test(size=(160, 45)) as pilot:
        await until(drawn, pilot)
        figures["first screen"] = time.perf_counter() - STARTED
        await until(settled, pilot)
        figures["first screen settled"] = time.perf_counter() - STARTED
        figures["first screen requests"] = counter.counts()
        await pilot.press(*FILTER_KEYS)
        await until(settled, pilot)
        before = counter.counts()
        await pilot.press(LAST_KEY)
        pressed = time.perf_counter()
        await until(lambda: drawn() and app.filter_text == "lean", pilot)
        figures["keystroke figures"] = time.perf_counter() - pressed
        await until(settled, pilot)
        figures["keystroke settled"] = time.perf_counter() - pressed
        figures["keystroke requests"] = counter.since(before)
        assert app.comparison is not None
        figures["groups after the filter"] = app.comparison.keep["workflow"].to_list()
    opened.spark.stop()
    return figures


def _child_app(url: str, path: str) -> None:
    import warnings

    warnings.filterwarnings("ignore")
    print(json.dumps(asyncio.run(_drive_app(url, path))))


def _child_summary(url: str, path: str) -> None:
    """`ledger-tui summary --spark URL PATH` in this process, its requests counted."""
    import contextlib
    import io
    import warnings

    warnings.filterwarnings("ignore")
    from tui_ledger import cli
    from tui_ledger.spark import commands

    counters: list[Any] = []
    defaults = commands.open_input.__kwdefaults__
    assert defaults is not None
    defaults["connect_to"] = _counting_connect(counters)
    with contextlib.redirect_stdout(io.StringIO()):
        cli.main(["summary", "--spark", url, path])
    print(json.dumps({"requests": counters[0].counts() if counters else {}}))


# --------------------------------------------------------------------------- the parent


def _child(mode: str, url: str, path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--url", url, str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{mode} on {path.name} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure_app(url: str, path: Path) -> dict[str, Any]:
    """The app on Spark: first screen, a filter keystroke, their requests (one process)."""
    return _child("app", url, path)


def measure_summary(url: str, path: Path) -> dict[str, Any]:
    """`summary --spark` and the local `summary`, end to end, and the Spark requests."""
    command = [sys.executable, "-m", "tui_ledger.cli", "summary", str(path)]
    began = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
    local = time.perf_counter() - began
    began = time.perf_counter()
    subprocess.run([*command, "--spark", url], check=True, capture_output=True, cwd=ROOT)
    on_spark = time.perf_counter() - began
    counted = _child("summary", url, path)
    return {"summary": local, "summary --spark": on_spark, "requests": counted["requests"]}


def run(url: str, inputs: list[str], runs: int = 1) -> dict[str, dict[str, Any]]:
    """Every figure for each input (`demo`, `1m`): medians of `runs` runs, app and summary
    alternating."""
    paths = {"demo": demo_path, "1m": million_path}
    results: dict[str, dict[str, Any]] = {}
    for name in inputs:
        path = paths[name]()
        apps, summaries = [], []
        for _ in range(runs):
            apps.append(measure_app(url, path))
            summaries.append(measure_summary(url, path))
        merged: dict[str, Any] = {}
        for key in apps[0]:
            values = [found[key] for found in apps]
            merged[key] = statistics.median(values) if isinstance(values[0], float) else values[0]
        for key in ("summary", "summary --spark"):
            merged[key] = statistics.median(found[key] for found in summaries)
        merged["summary --spark requests"] = summaries[0]["requests"]
        results[name] = merged
    return results


def report(results: dict[str, dict[str, Any]]) -> str:
    lines = []
    for name, figures in results.items():
        lines.append(f"{name}:")
        for key, value in figures.items():
            if isinstance(value, float):
                lines.append(f"  {key:<34} {value:8.2f} s")
            elif isinstance(value, dict):
                kinds = ", ".join(f"{k} {v}" for k, v in sorted(value.items()))
                lines.append(f"  {key:<34} {round_trips(value):5d} round trips ({kinds})")
            else:
                lines.append(f"  {key:<34} {value}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("SPARK_REMOTE"))
    parser.add_argument("--inputs", default="demo,1m", help="comma-separated: demo, 1m")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--child", choices=("app", "summary"), help=argparse.SUPPRESS)
    parser.add_argument("path", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("give --url sc://HOST:PORT (or set SPARK_REMOTE): a running server")
    if args.child:
        sys.path.insert(0, str(ROOT))
        (_child_app if args.child == "app" else _child_summary)(args.url, args.path)
        return 0
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load average {load} on {os.cpu_count()} cores")
    print(report(run(args.url, [n for n in args.inputs.split(",") if n], args.runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
