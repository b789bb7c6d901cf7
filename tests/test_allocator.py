"""`ledger-tui` sets polars' allocator up before polars loads (`allocator.use_fewer_arenas`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tui_ledger.allocator import ALLOCATOR_VARIABLE

RUNS = Path(__file__).resolve().parent.parent / "sample_data" / "runs.csv"

PROBE = """
import os, sys
import tui_ledger.cli as cli
assert "polars" not in sys.modules, "importing the command line loaded polars"
code = cli.main(["summary", sys.argv[1], "--format", "json"])
assert "polars" in sys.modules
print("\\nALLOCATOR=" + os.environ.get("{variable}", ""), code)
""".replace("{variable}", ALLOCATOR_VARIABLE)


def _run(environment: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(RUNS)],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    return result.stdout.rsplit("ALLOCATOR=", 1)[1].strip()


def test_the_command_line_asks_for_one_arena_per_core_before_polars_loads() -> None:
    environment = {k: v for k, v in os.environ.items() if k != ALLOCATOR_VARIABLE}
    # polars appends what it finds to its own settings when it loads
    assert _run(environment).endswith(f",narenas:{os.cpu_count()} 0")


def test_a_setting_of_the_users_own_is_kept() -> None:
    environment = {**os.environ, ALLOCATOR_VARIABLE: "narenas:7"}
    assert _run(environment).endswith(",narenas:7 0")
