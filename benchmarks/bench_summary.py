"""Figure 5: `ledger-tui summary FILE --format json` at every size (wall time, and its peak in
figure 4), and the bounded-memory probes: a file larger than the limit summarised under
`prlimit --data`, each probe with Python's faulthandler on so that a failed allocation names
the line of ours that asked for it."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import time
from pathlib import Path

from bench_core import raw_summary
from bench_harness import (
    BENCH,
    MB,
    RESULT_PREFIX,
    ensure_ledger,
    mb_text,
    report,
    rows_label,
    run_measured,
    seconds_text,
    tool,
)
from bench_table import Bench, Figure, memory_figure

SUMMARY_10M = 3.0  # `ledger-tui summary --format json` (the "Millions of attempts" issue)
BOUNDED_PROBES = ("summary", "scan", "scan_compare", "polars_streaming", "polars_streaming_median")


def child_probe(probe: str, path: str) -> None:
    """One way of answering the summary, run under a memory limit by the parent."""
    import faulthandler

    faulthandler.enable(all_threads=True)
    started = time.perf_counter()
    if probe == "summary":
        from tui_ledger.cli import main

        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            code = main(["summary", path, "--format", "json"])
        report({"seconds": time.perf_counter() - started, "code": code})
        return
    import polars as pl

    if probe.startswith("polars_streaming"):
        raw_summary(pl.scan_csv(path), medians=probe.endswith("median")).collect(engine="streaming")
    else:
        from tui_ledger.accounting.ledger import compare
        from tui_ledger.load import scan

        lazy, _ = scan(path)
        if probe == "scan_compare":
            compare(lazy, ["workflow"], streaming=True)
    report({"seconds": time.perf_counter() - started, "code": 0})


def crash_site(stderr: str) -> str:
    """The innermost frames of ours (tui_ledger, benchmarks) in a faulthandler dump."""
    frames = re.findall(r'File "([^"]+)", line (\d+) in (\S+)', stderr)
    ours = [
        f"{Path(file).name}:{line} {function}"
        for file, line, function in frames
        if "tui_ledger" in file or Path(file).name.startswith("bench")  # bench.py, bench_*.py
    ]
    # faulthandler prints the innermost frame first, per thread; keep the first thread with ours.
    if ours:
        return " <- ".join(ours[:6])
    for marker in ("memory allocation of", "MemoryError", "Killed"):
        if marker in stderr:
            return next(line for line in stderr.splitlines() if marker in line)
    return stderr.strip().splitlines()[-1] if stderr.strip() else "(no output)"


def section_summary(bench: Bench, rows: int, path: Path) -> None:
    label = rows_label(rows)
    ledger_tui = tool("ledger-tui")
    assert ledger_tui is not None
    runs = [
        run_measured([ledger_tui, "summary", str(path), "--format", "json"])
        for _ in range(bench.args.repeat)
    ]
    failed = [run for run in runs if run.returncode != 0]
    if failed:
        bench.notes.append(f"summary {label} failed: {failed[0].stderr.strip()[-400:]}")
    bench.raw.setdefault("summary", {})[label] = [
        {"seconds": r.seconds, "max_rss": r.max_rss, "code": r.returncode} for r in runs
    ]
    limit = SUMMARY_10M if rows <= 10_000_000 else None
    bench.add(
        Figure.timed(
            "5 summary",
            label,
            "ledger-tui summary --format json (wall)",
            [r.seconds for r in runs],
            limit,
            use_p90=False,
        )
    )
    peak = max(r.max_rss for r in runs)
    estimated = bench.raw.get("estimated_size", {}).get(label) or bench.raw.get("core", {}).get(
        label, {}
    ).get("estimated_size")
    if estimated:
        bench.add(memory_figure("4 memory", label, "peak RSS, summary", peak, int(estimated)))
    else:
        bench.add(Figure("4 memory", label, "peak RSS, summary", mb_text(peak)))


def section_bounded(bench: Bench) -> None:
    rows = bench.args.bounded_rows
    label = rows_label(rows)
    path = ensure_ledger(rows)
    limit = bench.args.bounded_limit
    size = path.stat().st_size
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        bench.notes.append("bounded memory: prlimit is not installed; skipped")
        return
    section = "5 bounded"
    results = {}
    for probe in BOUNDED_PROBES:
        command = [
            prlimit,
            f"--data={limit}",
            sys.executable,
            "-X",
            "faulthandler",
            str(BENCH),
            "--child",
            "probe",
            probe,
            str(path),
        ]
        run = run_measured(command, timeout=bench.args.timeout * 3)
        answered = run.returncode == 0 and RESULT_PREFIX in run.stdout
        site = "" if answered else crash_site(run.stderr)
        results[probe] = {
            "seconds": run.seconds,
            "max_rss": run.max_rss,
            "code": run.returncode,
            "site": site,
            "stderr_tail": run.stderr[-3000:],
        }
        names = {
            "summary": "ledger-tui summary under the limit",
            "scan": "load.scan() alone under the limit",
            "scan_compare": "load.scan() + compare(lazy, streaming=True) under the limit",
            "polars_streaming": "polars scan_csv + group_by, streaming",
            "polars_streaming_median": "the same with both medians",
        }
        verdict = "PASS" if answered else "MISS"
        bench.add(
            Figure(
                section,
                label,
                names[probe],
                seconds_text(run.seconds) if answered else "failed",
                f"peak {mb_text(run.max_rss)}" + ("" if answered else f"; at {site}"),
                "answers" if probe == "summary" else "",
                verdict if probe == "summary" else ("" if answered else "(fails)"),
            )
        )
    bench.raw["bounded"] = {
        "rows": rows,
        "file_bytes": size,
        "limit": limit,
        "results": results,
    }
    bench.notes.append(
        f"bounded memory: {path.name} is {size / MB:,.0f} MB on disk; every probe ran under "
        f"`prlimit --data={limit}` ({limit / 1024**2:,.0f} MiB; RLIMIT_DATA: heap and anonymous "
        "mappings; --as would also count address space reserved but never used)."
    )
