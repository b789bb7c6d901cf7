"""The figures of a `bench.py` run and what becomes of them: a `Figure` (median, spread,
target, PASS or MISS), the `Bench` that gathers them (with ratios, notes and raw samples),
the memory budget's figure, the machine's description, the printed table and the run's JSON
record (`benchmarks/out/bench-<time>.json`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench_harness import (
    MEMORY_FACTOR,
    MEMORY_SLACK,
    OUT,
    ROOT,
    mb_text,
    median,
    p90,
    parse_rows,
    seconds_text,
)


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


def write_record(bench: Bench, info: dict[str, str], total: float) -> Path:
    """Every figure, ratio, note and raw sample of the run: `benchmarks/out/bench-<time>.json`."""
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
    return record
