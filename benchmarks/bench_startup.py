"""Figure 6, start-up on `sample_data/runs.csv`: `ledger-tui summary`'s wall time, whether it
imported any textual module (`python -X importtime`) and the heaviest imports, the floor of
bare `import polars` (and textual), and the app's full first screen through tmux."""

from __future__ import annotations

import re
import sys
from dataclasses import asdict

from bench_first_screen import first_screen
from bench_harness import SAMPLE, expected_groups, run_measured, tool
from bench_table import Bench, Figure

TINY_APP = 0.45  # the article's fixture: the app's full first screen
TINY_SUMMARY = 0.35  # ... and `ledger-tui summary`


def section_startup(bench: Bench) -> None:
    ledger_tui = tool("ledger-tui")
    assert ledger_tui is not None
    section = "6 start-up"
    runs = [
        run_measured([ledger_tui, "summary", str(SAMPLE)]) for _ in range(max(5, bench.args.repeat))
    ]
    bench.add(
        Figure.timed(
            section,
            "tiny",
            "ledger-tui summary sample_data/runs.csv",
            [r.seconds for r in runs],
            TINY_SUMMARY,
            use_p90=False,
        )
    )
    traced = run_measured([sys.executable, "-X", "importtime", ledger_tui, "summary", str(SAMPLE)])
    imported = sorted(
        {
            match.split(".")[0]
            for match in re.findall(r"\|\s+(textual[\w.]*)\s*$", traced.stderr, re.M)
        }
    )
    bench.add(
        Figure(
            section,
            "tiny",
            "summary imports textual",
            "yes" if imported else "no",
            "",
            "no",
            "MISS" if imported else "PASS",
        )
    )
    own = re.findall(r"import time:\s+\d+\s+\|\s+(\d+)\s+\|\s+(\S+)\s*$", traced.stderr, re.M)
    heavy = sorted(((int(us), name) for us, name in own if "." not in name), reverse=True)[:4]
    bench.notes.append(
        "start-up, summary on runs.csv: heaviest top-level imports (cumulative µs): "
        + ", ".join(f"{name} {us:,}" for us, name in heavy)
    )
    # The floor under every start-up figure: the interpreter and the two base libraries.
    for name, code in (
        ("floor: python -c 'import polars'", "import polars"),
        ("floor: python -c 'import polars, textual.app'", "import polars, textual.app"),
    ):
        floors = [run_measured([sys.executable, "-c", code]).seconds for _ in range(5)]
        bench.add(Figure.timed(section, "tiny", name, floors, None, use_p90=False))
    groups = expected_groups(SAMPLE)
    shown = [
        first_screen(SAMPLE, groups, timeout=bench.args.timeout)
        for _ in range(max(3, bench.args.repeat))
    ]
    good = [s.full for s in shown if s.ok]
    if not good:
        bench.notes.append(f"first screen on runs.csv: {shown[0].note}")
    bench.add(
        Figure.timed(
            section,
            "tiny",
            "app: process start → full first screen",
            good,
            TINY_APP,
            use_p90=False,
        )
    )
    bench.raw["startup"] = {
        "summary": [r.seconds for r in runs],
        "textual_imported": imported,
        "first_screen": [asdict(s) for s in shown],
    }
