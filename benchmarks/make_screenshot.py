"""Rebuilds docs/screenshot.svg, the README's picture: the app on the bundled demo (no file, as
`ledger-tui` opens it) at 160x45 in KEEP FAILURES, once its figures, intervals and checks are in.

    python benchmarks/make_screenshot.py            # writes docs/screenshot.svg
    python benchmarks/make_screenshot.py --size 120x40 --out /tmp/shot.svg

It waits for the app to say its screen is final (`LedgerApp.unsettled` empty), never a clock.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from importlib import resources
from pathlib import Path

from tui_ledger.tui.app import LedgerApp

ROOT = Path(__file__).resolve().parent.parent
DEADLINE_SECONDS = 120.0


async def _shoot(size: tuple[int, int], out: Path) -> None:
    demo = str(resources.files("tui_ledger.sample_data").joinpath("demo.csv"))
    app = LedgerApp([demo], demo=True)
    async with app.run_test(size=size) as pilot:
        deadline = time.monotonic() + DEADLINE_SECONDS
        await pilot.pause()
        while app.unsettled or app.workers:
            if time.monotonic() > deadline:
                raise SystemExit(f"the app never settled: {', '.join(app.unsettled)}")
            await pilot.pause(0.05)
        await pilot.pause()
        app.save_screenshot(filename=out.name, path=str(out.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="160x45", help="COLUMNSxROWS (default 160x45)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshot.svg")
    args = parser.parse_args()
    columns, rows = (int(part) for part in args.size.lower().split("x"))
    asyncio.run(_shoot((columns, rows), args.out))
    print(f"wrote {args.out} ({columns}x{rows})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
