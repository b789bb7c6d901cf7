"""The command answers --version, --help and usage errors without importing polars or textual
(issue 43: `ledger-tui --version` within 0.15 s; the imports are what it cost)."""

from __future__ import annotations

import subprocess
import sys

import pytest

_PROBE = """
import sys
from tui_ledger.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"polars", "textual", "numpy", "pyspark"})
print("HEAVY", ",".join(heavy))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["--help"],
        ["--no-such-option"],
        ["summary", "--help"],
        ["summary"],
        ["summary", "x.csv", "--view", "sideways"],
        ["check", "--help"],
        ["convert", "--help"],
        ["trace", "--help"],
        ["trace", "x.csv"],
    ],
)
def test_answers_without_the_heavy_imports(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=60
    )
    assert "HEAVY \n" in done.stdout, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_a_missing_file_still_gets_its_one_line() -> None:
    """Bad input's errors are classified after the fact: still one line and exit 2."""
    done = subprocess.run(
        [sys.executable, "-m", "tui_ledger.cli", "summary", "no-such-file.csv"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("ledger-tui: error: ")
    assert "Traceback" not in done.stderr
