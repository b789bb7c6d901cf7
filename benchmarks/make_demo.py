"""Build `sample_data/demo.csv`, the synthetic ledger `ledger-tui` opens when given no file.

    python benchmarks/make_demo.py            # (re)write sample_data/demo.csv, print the check
    python benchmarks/make_demo.py --check    # fail if the committed file differs from a rebuild

Everything in the demo is invented: the workflows, the tasks, the models, the numbers. It is
built, with the standard library only and a fixed seed, to show what the ledger is for:

- 4 workflows x 30 tasks x 3 attempts = 360 attempts, on two models (`careful-reviewer` mixes
  both, for the fair-comparison check);
- every outcome appears: passed, failed, timeout, error, and ungraded (an empty status);
- some usage is missing (empty bucket cells), mostly on timeouts, as in the wild, and one
  attempt reports a suspect 0 tokens: both only in `retry-storm`, the most expensive workflow
  whatever the unknown usage was, so its figure is a lower bound (`>= N`) that decides its rank
  (last) and every other rank is exact: no rank is a range, in either view;
- **dropping failures flips the ranking, for certain and beyond noise**: `lean-loop` is the
  cheapest per attempt and fails most; it is the cheapest per accepted result when failures
  are dropped, and `steady-planner` is when they are kept, by at least 30%, with a paired
  bootstrap over tasks (SPEC.md section 3) whose 95% interval of their ratio stays clear of 1
  in both views. The script checks all this with plain Python (no polars, no project code) and
  refuses to write a demo that does not show it;
- a few `notes` cells hold what a hostile harness might write (markup, a formula, quotes and
  commas, non-ASCII), never a raw control byte.

Tokens are `input_tokens + cached_input_tokens + output_tokens`; a row missing any bucket has
missing usage and counts in no sum (SPEC.md section 1); a row whose buckets are all 0 is the
suspect zero.

The demo's world and its rows are in demo_plan.py, the check in demo_check.py; this script
builds, checks and writes (or compares) the file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Its parts beside it, also when it is imported by path (tests/test_demo.py): benchmarks/ is not
# a package.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from demo_check import DemoError, check
from demo_plan import build_rows, render_csv

DEMO_PATH = Path(__file__).resolve().parent.parent / "sample_data" / "demo.csv"


def main(argv: list[str] | None = None) -> int:
    """Rebuild the demo, check it, and write it (or, with --check, compare it)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("-o", "--output", type=Path, default=DEMO_PATH)
    args = parser.parse_args(argv)
    rows = build_rows()
    try:
        report = check(rows)
    except DemoError as error:
        print(f"make_demo.py: {error}", file=sys.stderr)
        return 1
    print("\n".join(report))
    text = render_csv(rows)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else None
        if current != text:
            print(f"{args.output} differs from a rebuild", file=sys.stderr)
            return 1
        print(f"{args.output} is up to date")
        return 0
    args.output.write_text(text, encoding="utf-8", newline="")
    print(f"wrote {args.output} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
