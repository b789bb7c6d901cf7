"""`ledger-tui trace`: one attempt, step by step, headless; and `ledger-tui grader`: every
attempt's log read for the grader's signals (both read attempts' logs).

```
ledger-tui trace FILE... (--attempt FILTER | --row N) [--format text|json|md]
```

The files load as for `summary` (the same loading and price options); `--attempt` takes the
filter language and must match exactly one attempt, `--row N` is the attempt's 1-based position
in the loaded ledger (the order the app's table shows unsorted). The attempt is then opened by
its harness's reader (`tui_ledger.trajectory`) and printed by `trajectory.render`. A filter
that matches no attempt or several, a row out of range and a log that cannot be read each end
in one line and exit 2 (`cli.main` says it); a row with no log is no error: it prints the row
and what was looked for.

`trace --format json` carries the attempt's `signals` (`grader.signals.attempt_signals`).

```
ledger-tui grader FILE... [--format text|json|md] [--by COL[,COL]]
```

reads every attempt's logs (`grader.audit_ledger`) and prints the flagged attempts, the
grader's health and the figures as graded and as vouched (`grader.report`).

No textual and no `tui_ledger.cli` here: `cli` imports this module.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from tui_ledger.cli_options import (
    UsageError,
    add_load_options,
    add_price_options,
    check_paths,
    load_options,
    parse_arguments,
    price_table,
)

CANDIDATES_SHOWN = 5
"""At most this many matching rows are named on the line that asks to narrow `--attempt`."""

_NARROWING_COLUMNS = ("workflow", "task", "model", "run")


def trace_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ledger-tui trace",
        description="Print one attempt inside: its row, the grader's verdict, the "
        "instruction, every step with its own tokens, and whether the steps add up to the "
        "attempt's tokens in the ledger.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--attempt",
        metavar="FILTER",
        help='the attempt, in the filter language; it must match exactly one (e.g. "task:fix-'
        'login workflow:lean run:3")',
    )
    which.add_argument(
        "--row",
        type=int,
        metavar="N",
        help="the attempt's position in the loaded ledger (1 = the first; the app's table "
        "unsorted)",
    )
    parser.add_argument(
        "--format", dest="out_format", choices=("text", "json", "md"), default="text"
    )
    add_load_options(parser)
    add_price_options(parser)
    return parser


def run_trace(argv: Sequence[str]) -> int:
    """`ledger-tui trace`: find the attempt, read its logs, print them."""
    args = parse_arguments(trace_parser(), argv)
    from tui_ledger.accounting.prices import apply_prices
    from tui_ledger.load import load
    from tui_ledger.trajectory import openable, read_attempt
    from tui_ledger.trajectory.render import render_trace

    table = price_table(args.prices, args.flat_price)
    ledger = load(args.files, **load_options(args))
    attempts, _ = apply_prices(ledger.attempts, table)
    if args.attempt is not None:
        position = _matching_position(attempts, args.attempt)
    else:
        position = _row_position(attempts, args.row)
    row = openable(attempts.row(position, named=True), args.files)
    trajectory = read_attempt(row)  # TrajectoryError: one line, exit 2 (cli.main)
    from tui_ledger.grader.signals import attempt_signals

    found = attempt_signals(row, trajectory if trajectory.files else None)
    if args.out_format == "json":
        from tui_ledger.reports.report import json_text
        from tui_ledger.trajectory.render import trace_document

        document = trace_document(row, position + 1, trajectory)
        document["signals"] = [signal.as_json() for signal in found]
        sys.stdout.write(json_text(document))
        return 0
    sys.stdout.write(render_trace(row, position + 1, trajectory, args.out_format))
    if found:
        sys.stdout.write(_signals_text(found, markdown=args.out_format == "md"))
    return 0


def _signals_text(found: Sequence[Any], *, markdown: bool) -> str:
    """The grader's signals after the steps: each kind, its step and its evidence."""
    from tui_ledger.text.textsafe import safe_text

    lines = ["", "## Grader signals" if markdown else "Grader signals (ledger-tui grader):"]
    for signal in found:
        step = "no step" if signal.step is None else f"step {signal.step}"
        evidence = f"`{signal.evidence.replace('`', chr(39))}`" if markdown else signal.evidence
        lines.append(f"{'- ' if markdown else '  '}{signal.kind} ({step}): {evidence}")
    return "\n".join(safe_text(line) for line in lines) + "\n"


def grader_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ledger-tui grader",
        description="Read every attempt's log and say what the grader cannot vouch for: "
        "attempts that touched the grader's files, looked up the answer in the repository's "
        "history or contradict their verdict, and those the harness failed before the agent "
        "acted; the grader's health (tests no attempt passed, tasks that cannot separate the "
        "groups); and each group's figures with acceptances as graded and as vouched.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument(
        "--format", dest="out_format", choices=("text", "json", "md"), default="text"
    )
    parser.add_argument(
        "--by", default="workflow", metavar="COL[,COL]", help="group by these columns"
    )
    add_load_options(parser)
    return parser


def run_grader(argv: Sequence[str]) -> int:
    """`ledger-tui grader`: audit every attempt's log, print the report."""
    args = grader_parser().parse_args(argv)
    from tui_ledger.grader import audit_ledger
    from tui_ledger.grader.report import grader_report, render_grader
    from tui_ledger.load import load

    check_paths(args.files)
    ledger = load(args.files, **load_options(args))
    by = [name.strip() for name in args.by.split(",") if name.strip()]
    missing = [name for name in by if name not in ledger.attempts.columns]
    if not by or missing:
        what = f"{missing[0]!r}: no such column" if missing else "give at least one column"
        raise UsageError(f"--by {what}; columns are: {', '.join(ledger.attempts.columns)}")
    audit = audit_ledger(ledger, args.files)
    report = grader_report(ledger.attempts, audit, by)
    sys.stdout.write(render_grader(report, args.out_format))
    return 0


def _row_position(attempts: Any, row: int) -> int:
    """`--row N` as a 0-based position, or a one-line refusal."""
    from tui_ledger.text.wording import plural

    height = attempts.height
    if not 1 <= row <= height:
        span = "none to give" if height == 0 else f"give 1 to {height:,}"
        raise UsageError(f"--row {row}: the ledger has {plural(height, 'attempt')}; {span}")
    return int(row - 1)


def _matching_position(attempts: Any, text: str) -> int:
    """The one attempt `--attempt` matches, or a one-line refusal saying how many did."""
    import polars as pl

    from tui_ledger.filtering.query import FilterError, parse_filter
    from tui_ledger.text.wording import plural

    try:
        expression = parse_filter(text, attempts.collect_schema())
    except FilterError as error:
        raise UsageError(
            f"--attempt: {error.message} (at character {error.position + 1})"
        ) from None
    if expression is None:
        raise UsageError("--attempt: give a filter that matches one attempt, e.g. task:NAME")
    positions: list[int] = (
        attempts.select(pl.arg_where(expression.fill_null(False))).to_series().to_list()
    )
    if len(positions) == 1:
        return positions[0]
    if not positions:
        raise UsageError(
            f"no attempt matches '{text}' among {plural(attempts.height, 'attempt')}; "
            f"loosen the filter or use --row N (1 to {attempts.height:,})"
        )
    _too_many(attempts, text, positions)


def _too_many(attempts: Any, text: str, positions: list[int]) -> NoReturn:
    """Several attempts match: say how many, which columns tell them apart, a few rows."""
    matched = attempts[positions]
    differing = [
        name
        for name in _NARROWING_COLUMNS
        if name in matched.columns and matched.get_column(name).n_unique() > 1
    ]
    if differing:
        adds = " or ".join(f"{name}:..." for name in differing)
        advice = f"narrow the filter (add {adds}) or use --row N"
    else:
        shared = [name for name in _NARROWING_COLUMNS if name in matched.columns]
        advice = f"they share their {', '.join(shared)}: use --row N"
    rows = [f"{position + 1:,}" for position in positions[:CANDIDATES_SHOWN]]
    more = len(positions) - len(rows)
    listed = ", ".join(rows) + (f" and {more:,} more" if more else "")
    raise UsageError(f"{len(positions):,} attempts match '{text}'; {advice} (rows {listed})")
