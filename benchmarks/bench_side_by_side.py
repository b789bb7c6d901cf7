"""Figure 7, side by side in one run: `ledger-tui summary` against a plain-Python summary (csv
module and dicts; its totals checked against ledger-tui's JSON) and VisiData (`vd -b`), and,
from the core child's samples, `load()` + `compare()` against polars' read and group-by."""

from __future__ import annotations

import csv
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_harness import (
    child,
    ensure_ledger,
    median,
    report,
    rows_label,
    run_measured,
    seconds_text,
    tool,
)
from bench_table import Bench, Figure

RAW_POLARS_RATIO = 1.2  # load() + compare() against polars' read_csv + a group_by


def child_plain(path: str) -> None:
    """The whole summary in plain Python: csv module and dicts, both views, medians included."""
    started = time.perf_counter()
    # Per workflow: [attempts, accepted, missing, known tokens list, accepted tokens list,
    # accepted missing].
    groups: dict[str, list[Any]] = {}
    with open(path, newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        i_workflow, i_tokens, i_passed = (header.index(n) for n in ("workflow", "tokens", "passed"))
        for row in reader:
            group = groups.get(row[i_workflow])
            if group is None:
                group = groups[row[i_workflow]] = [0, 0, 0, [], [], 0]
            group[0] += 1
            passed = row[i_passed] == "true"
            cell = row[i_tokens]
            if passed:
                group[1] += 1
            if cell == "":
                group[2] += 1
                if passed:
                    group[5] += 1
            else:
                tokens = int(cell)
                group[3].append(tokens)
                if passed:
                    group[4].append(tokens)
    summary = {}
    for name, (attempts, accepted, missing, known, known_accepted, missing_accepted) in sorted(
        groups.items()
    ):
        total, total_accepted = sum(known), sum(known_accepted)
        summary[name] = {
            "keep": {
                "attempts": attempts,
                "accepted": accepted,
                "missing_usage": missing,
                "total_tokens": total,
                "median": statistics.median(known) if known else None,
                "per_accepted": total / accepted if accepted else None,
            },
            "drop": {
                "attempts": accepted,
                "missing_usage": missing_accepted,
                "total_tokens": total_accepted,
                "median": statistics.median(known_accepted) if known_accepted else None,
                "per_accepted": total_accepted / accepted if accepted else None,
            },
        }
    report({"seconds": time.perf_counter() - started, "summary": summary})


def section_side_by_side(bench: Bench, rows: int) -> None:
    """ledger-tui against plain Python, VisiData and raw polars, interleaved in one run."""
    label = rows_label(rows)
    path = ensure_ledger(rows)
    ledger_tui = tool("ledger-tui")
    vd = tool("vd")
    assert ledger_tui is not None
    section = "7 side by side"
    summary, plain, visidata = [], [], []
    plain_data: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(bench.args.repeat):
            run = run_measured([ledger_tui, "summary", str(path), "--format", "json"])
            summary.append(run.seconds)
            ledger_json = run.stdout
            data, run = child("plain", str(path))
            plain.append(run.seconds)
            plain_data = data
            if vd is not None and not bench.args.no_visidata:
                out = Path(scratch) / "out.tsv"
                env = {**os.environ, "HOME": scratch}
                run = run_measured([vd, "-b", str(path), "-o", str(out)], env=env)
                if run.returncode == 0:
                    visidata.append(run.seconds)
                else:
                    bench.notes.append(f"VisiData failed: {run.stderr.strip()[-300:]}")
                out.unlink(missing_ok=True)
    agree = _plain_agrees(plain_data.get("summary", {}), ledger_json)
    bench.add(Figure.timed(section, label, "ledger-tui summary (wall)", summary, use_p90=False))
    bench.add(
        Figure.timed(
            section,
            label,
            "plain Python: csv + dicts (wall)",
            plain,
            use_p90=False,
            note=f"figures agree: {agree}",
        )
    )
    if visidata:
        bench.add(
            Figure.timed(
                section, label, "VisiData vd -b FILE -o out.tsv (wall)", visidata, use_p90=False
            )
        )
    elif vd is None:
        bench.notes.append("VisiData: `vd` is not installed (pip install visidata); skipped")
    core = bench.raw.get("core", {}).get(label)
    ours = median(summary)
    bench.ratios.append(
        f"{label}: plain Python {seconds_text(median(plain))} ÷ ledger-tui summary "
        f"{seconds_text(ours)} = {median(plain) / ours:.1f}× (ledger-tui faster when > 1)"
    )
    if visidata:
        bench.ratios.append(
            f"{label}: VisiData load+write {seconds_text(median(visidata))} ÷ ledger-tui summary "
            f"{seconds_text(ours)} = {median(visidata) / ours:.1f}×"
        )
        screens = [r["full"] for r in bench.raw.get("first_screen", {}).get(label, []) if r["ok"]]
        if screens:
            bench.ratios.append(
                f"{label}: VisiData load+write {seconds_text(median(visidata))} ÷ ledger-tui "
                f"first screen {seconds_text(median(screens))} = "
                f"{median(visidata) / median(screens):.1f}×"
            )
    bench.raw["side_by_side"] = {
        "rows": rows,
        "summary": summary,
        "plain": plain,
        "plain_inner": plain_data.get("seconds"),
        "visidata": visidata,
        "agree": agree,
    }
    del core


def _plain_agrees(plain: dict[str, Any], ledger_json: str) -> str:
    """Whether plain Python's per-workflow totals equal ledger-tui's (both views)."""
    try:
        views = json.loads(ledger_json)["views"]
    except (ValueError, KeyError):
        return "unknown (no JSON from ledger-tui)"
    problems = []
    for name, ours in plain.items():
        for view in ("keep", "drop"):
            theirs = views[view].get(name, {})
            for key in ("attempts", "missing_usage", "total_tokens"):
                if theirs.get(key) != ours[view][key]:
                    problems.append(f"{name}/{view}/{key}: {theirs.get(key)} vs {ours[view][key]}")
    return "yes" if not problems else "NO (" + "; ".join(problems[:3]) + ")"


def raw_polars_ratios(bench: Bench) -> None:
    for label, data in bench.raw.get("core", {}).items():
        ours = median(data["load"]) + median(data["compare_all"])
        theirs = median(data["raw_read"]) + median(data["raw_group_by"])
        bench.add(
            Figure.timed(
                "7 side by side",
                label,
                "raw polars read_csv (in process)",
                data["raw_read"],
                use_p90=False,
            )
        )
        bench.add(
            Figure.timed(
                "7 side by side",
                label,
                "raw polars group_by, both views",
                data["raw_group_by"],
                use_p90=False,
            )
        )
        bench.add(
            Figure(
                "7 side by side",
                label,
                "load()+compare() ÷ polars read_csv+group_by",
                f"{ours / theirs:.2f}×",
                f"{seconds_text(ours)} vs {seconds_text(theirs)}",
                f"≤ {RAW_POLARS_RATIO}×",
                "PASS" if ours / theirs <= RAW_POLARS_RATIO else "MISS",
            )
        )
        bench.ratios.append(
            f"{label}: ledger-tui load()+compare() {seconds_text(ours)} ÷ raw polars "
            f"read_csv+group_by {seconds_text(theirs)} = {ours / theirs:.1f}× "
            f"(load {seconds_text(median(data['load']))} vs read "
            f"{seconds_text(median(data['raw_read']))}; compare "
            f"{seconds_text(median(data['compare_all']))} vs group_by "
            f"{seconds_text(median(data['raw_group_by']))})"
        )
