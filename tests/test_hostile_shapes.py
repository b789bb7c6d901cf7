"""No input shape multiplies memory, and long labels are cut where people read them (issue 14,
item 6).

A 5 MB group label once drove `check` past 5 GB (a cross join of labels with tasks in the
unmatched-tasks check): the checks now work on group ids and read only the labels a sentence
names, cut to `textsafe.LABEL_WIDTH` cells.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import polars as pl

from tui_ledger.accounting.checks import run_checks
from tui_ledger.accounting.ledger import compare
from tui_ledger.load import load
from tui_ledger.reports.report import render_summary
from tui_ledger.text.textsafe import LABEL_WIDTH

BIG = 5 * 1024 * 1024


def big_label_ledger(path: Path, tasks: int = 300) -> Path:
    """Two groups on every task, and a third with a 5 MB name on two tasks only."""
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["workflow", "task", "tokens", "passed"])
        for task in range(tasks):
            writer.writerow(["a", f"task-{task:03}", 1000, "true"])
            writer.writerow(["b", f"task-{task:03}", 1200, "false"])
        writer.writerow(["W" * BIG, "task-000", 1000, "true"])
        writer.writerow(["W" * BIG, "task-001", 1000, "false"])
    return path


def peak_of(*args: str) -> tuple[int, str]:
    """Run `ledger-tui ARGS` in a child; its peak resident memory in bytes, and its stdout."""
    script = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run([sys.executable, '-m', 'tui_ledger.cli', *sys.argv[1:]],"
        " capture_output=True, text=True)\n"
        "assert done.returncode == 0, done.stderr\n"
        "sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) + '\\n')\n"
        "sys.stdout.write(done.stdout)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    first, _, rest = done.stdout.partition("\n")
    return int(first) * 1024, rest


def test_check_on_a_5_mb_label_stays_far_under_a_gigabyte(tmp_path: Path) -> None:
    path = big_label_ledger(tmp_path / "big.csv")
    peak, out = peak_of("check", str(path))
    assert peak < 1 << 30, f"check peaked at {peak / 2**20:.0f} MiB"
    assert "skipped 298 tasks of 300" in out
    # Every line names the group by its cut label: no line holds the whole name.
    assert max(len(line) for line in out.splitlines()) < 2_000
    assert "W" * (LABEL_WIDTH - 1) + "…" in out


def test_summary_cuts_a_long_label_in_the_table_and_the_sentences(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "workflow": ["W" * 100_000] * 3 + ["short"] * 3,
            "tokens": [10, 10, 10, 1000, 1000, 1000],
            "passed": [True, False, False, True, True, True],
        }
    )
    source = tmp_path / "wide.csv"
    frame.write_csv(source)
    attempts = load([str(source)]).attempts
    comparison = compare(attempts)
    for fmt in ("table", "markdown"):
        text = render_summary(comparison, fmt)
        assert max(len(line) for line in text.splitlines()) < 2_000, fmt
    # Data formats keep the label whole.
    assert "W" * 100_000 in render_summary(comparison, "csv", spreadsheet_safe=True)
    checks = run_checks(attempts)
    assert all(len(check.message) < 2_000 for check in checks)
    assert all(len(line) < 2_000 for check in checks for line in check.details)
