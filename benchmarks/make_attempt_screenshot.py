"""Rebuilds docs/attempt-screen.svg, the README's picture of the attempt screen (Enter on an
attempt) at 120x40, once the attempt's log is read.

    python benchmarks/make_attempt_screenshot.py                  # an example attempt
    python benchmarks/make_attempt_screenshot.py --file L --row 3  # a ledger's fourth row

Without --file it writes a small example ledger with one attempt's trajectory in a temporary
folder and reads it with the tests' reader (`tests/trajectory_reader.py`), since the picture
should not wait for a harness's reader; with --file the app's own readers open the row.
It waits for the app to say its screen is final, never a clock.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEADLINE_SECONDS = 120.0


def _example_steps() -> list[dict[str, Any]]:
    """An agent fixing a login bug: reads, runs the tests, fails twice, fixes, passes. Each
    line: who, text, tool called, its argument (or a tool's observation), error, tokens."""
    script: list[tuple[str, str, str | None, str | None, bool, int]] = [
        ("user", "Fix the failing login test in auth/session.py.", None, None, False, 0),
        (
            "agent",
            "I'll start by running the failing test.",
            "bash",
            "pytest tests/test_login.py",
            False,
            5200,
        ),
        (
            "tool",
            "",
            None,
            "FAILED tests/test_login.py::test_refresh - KeyError: 'expires'",
            True,
            0,
        ),
        (
            "agent",
            "The refresh path reads a key the token no longer has.",
            "read_file",
            "auth/session.py",
            False,
            7400,
        ),
        ("tool", "", None, "def refresh(token):\n    return token['expires'] > now()", False, 0),
        ("agent", "", "bash", "grep -rn expires auth/", False, 7900),
        ("tool", "", None, "auth/tokens.py:12:    'expires_at': ts,", False, 0),
        (
            "agent",
            "The key was renamed to expires_at; fix the reader.",
            "edit_file",
            "auth/session.py",
            False,
            9800,
        ),
        ("tool", "", None, "edited 1 line", False, 0),
        ("agent", "", "bash", "pytest tests/", False, 10300),
        ("tool", "", None, "FAILED tests/test_logout.py::test_expired - TypeError", True, 0),
        (
            "agent",
            "Logout compares a string with a datetime; parse it first.",
            "edit_file",
            "auth/logout.py",
            False,
            12600,
        ),
        ("tool", "", None, "edited 2 lines", False, 0),
        ("agent", "", "bash", "pytest tests/", False, 13100),
        ("tool", "", None, "42 passed in 3.1s", False, 0),
        (
            "agent",
            "Both tests pass: the token's key was renamed in auth/tokens.py.",
            None,
            None,
            False,
            6100,
        ),
    ]
    steps = []
    for number, (who, text, call, argument, error, tokens) in enumerate(script):
        step: dict[str, Any] = {
            "source": who,
            "text": text,
            "timestamp": f"2025-06-01T09:{number * 37 // 60:02d}:{number * 37 % 60:02d}Z",
            "error": error,
        }
        if call:
            key = "command" if call == "bash" else "path"
            step["tool_calls"] = [{"name": call, "arguments": json.dumps({key: argument})}]
        if who == "tool":
            step["observation"] = argument  # a tool's step: what it returned
        if tokens:
            step["input_tokens"] = tokens - tokens // 12
            step["output_tokens"] = tokens // 12
            step["tokens"] = tokens
        steps.append(step)
    return steps


def _example(folder: Path) -> Path:
    sys.path.insert(0, str(ROOT))
    from tests import trajectory_reader
    from tui_ledger import trajectory

    trajectory.READERS["atif"] = trajectory_reader.MODULE
    steps = _example_steps()
    total = sum(step.get("tokens", 0) for step in steps)
    trace = {
        "instruction": "The login test fails since the token format changed.\nFix the code, "
        "not the tests.",
        "output": "tests/test_login.py ....\ntests/test_logout.py ..\n42 passed in 3.1s",
        "tests": [["test_login", "passed"], ["test_refresh", "passed"], ["test_expired", "passed"]],
        "steps": steps,
    }
    attempt = {
        "workflow": "careful-reviewer",
        "task": "fix-login",
        "tokens": total,
        "input_tokens": sum(step.get("input_tokens", 0) for step in steps),
        "output_tokens": sum(step.get("output_tokens", 0) for step in steps),
        "duration_s": 554.0,
        "passed": True,
        "trace": trace,
    }
    return trajectory_reader.write_attempts(folder, [attempt])


async def _shoot(ledger: Path, row: int, size: tuple[int, int], out: Path) -> None:
    from tui_ledger.tui.app import LedgerApp
    from tui_ledger.tui.screens.attempt_screen import AttemptScreen

    app = LedgerApp([str(ledger)])
    async with app.run_test(size=size) as pilot:
        deadline = time.monotonic() + DEADLINE_SECONDS

        async def until(condition: Any, what: str) -> None:
            while not condition():
                if time.monotonic() > deadline:
                    raise SystemExit(f"the app never showed {what}")
                await pilot.pause(0.05)

        await until(lambda: app.loaded and not app.unsettled, "the ledger")
        app.table.cursor_row = row
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, AttemptScreen) and app.screen.ended, "the log")
        await pilot.press("e")  # the cursor on the first step that failed
        await pilot.pause()
        app.save_screenshot(filename=out.name, path=str(out.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, help="a ledger (default: an example attempt)")
    parser.add_argument("--row", type=int, default=0, help="the row to open (from 0)")
    parser.add_argument("--size", default="120x40", help="COLUMNSxROWS (default 120x40)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "attempt-screen.svg")
    args = parser.parse_args()
    columns, rows = (int(part) for part in args.size.lower().split("x"))
    with tempfile.TemporaryDirectory() as folder:
        ledger = args.file if args.file else _example(Path(folder))
        asyncio.run(_shoot(ledger, args.row, (columns, rows), args.out.resolve()))
    print(f"wrote {args.out} ({columns}x{rows})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
