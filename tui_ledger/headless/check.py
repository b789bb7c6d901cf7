"""`ledger-tui check`: what was read, the prices, and every check in plain words; with
`--fail-on`, exit 1 when a condition holds."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from tui_ledger.cli_options import (
    UsageError,
    add_accepted_option,
    add_cap_options,
    add_load_options,
    add_price_options,
    add_query_options,
    add_spark_option,
    parse_arguments,
    spark_url,
)
from tui_ledger.headless.prepare import group_columns, on_spark, prepare


def check_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ledger-tui check",
        description="Load the files and explain, in plain words, what was read and every warning. "
        "Exit 0 when the input loads, 2 when it cannot; with --fail-on, 1 when a condition "
        "holds.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument(
        "--fail-on",
        metavar="CONDITION[,CONDITION]",
        help="exit 1 when any holds: flip (dropping failures changes the ranking), warnings "
        "(a fair-comparison check fires), not-recorded (a group has no usage), noise (the "
        "cheapest group is not decided against the second), tampering (an accepted attempt "
        "touched the grader or looked up the answer; reads every attempt's log)",
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed of the pairs")
    add_accepted_option(parser)
    add_query_options(parser)
    add_cap_options(parser)
    add_load_options(parser)
    add_price_options(parser)
    add_spark_option(parser)
    return parser


def run_check(argv: Sequence[str]) -> int:
    """`ledger-tui check`: the load report, the prices, and every check in plain words."""
    args = parse_arguments(check_parser(), argv)
    from tui_ledger.accounting.checks import NO_ISSUE, check_lines, run_checks
    from tui_ledger.text.textsafe import safe_text

    conditions: tuple[str, ...] = ()
    if args.fail_on is not None:
        from tui_ledger.reports.fail_on import parse_fail_on

        try:
            conditions = parse_fail_on(args.fail_on)
        except ValueError as error:
            raise UsageError(str(error)) from None
    url = spark_url(args)
    if url is not None:
        if args.cap:
            raise UsageError("--cap is not available with --spark yet; run check locally")
        if conditions:
            raise UsageError("--fail-on is not available with --spark yet; run check locally")
        return on_spark(args, url, _spark_check)
    prepared = prepare(args)
    for line in prepared.report.lines():
        # The loader's warnings are restated below as checks, with a per-group breakdown.
        if not line.startswith(("Warning (", "No warnings")):
            print(safe_text(line))
    if prepared.table is not None:
        print("Prices (USD per million tokens):")
        for line in prepared.table.describe():
            print(safe_text(f"  {line}"))
    from tui_ledger.text.wording import NO_ATTEMPTS_MATCH, plural

    groups = prepared.attempts.select(prepared.by).n_unique()
    print(
        safe_text(
            f"Checks for {plural(prepared.attempts.height, 'attempt')} in "
            f"{plural(groups, 'group')} (by {', '.join(prepared.by)}):"
        )
    )
    if prepared.cap is not None:
        from tui_ledger.reports.cap_report import cap_headline

        print(safe_text(cap_headline(prepared.cap)))
    extra = prepared.warnings[len(prepared.report.warnings) :]
    checks = run_checks(prepared.attempts, prepared.by, prepared.report, warnings=extra)
    if prepared.attempts.height == 0:
        print(NO_ATTEMPTS_MATCH)  # not "no issue found": there is nothing to check
    for line in check_lines(checks, prepared.report.units):
        if prepared.attempts.height == 0 and line == NO_ISSUE:
            continue
        print(safe_text(line))
    if not conditions:
        return 0
    from tui_ledger.accounting.ledger import compare
    from tui_ledger.accounting.pairs import with_pairs
    from tui_ledger.reports.fail_on import conditions_met

    comparison = compare(prepared.attempts, prepared.by, intervals="delta")
    comparison = with_pairs(comparison, prepared.attempts, seed=args.seed)
    tampered: list[str] = []
    if prepared.audit is not None and "tampering" in conditions:
        from tui_ledger.grader.report import tampered_lines

        tampered = tampered_lines(prepared.audit)
        if prepared.audit.note:  # no log was read: say what the gate could see
            print(safe_text(f"tampering: {prepared.audit.note}"))
    met = conditions_met(conditions, comparison, checks, tampered=tampered)
    for line in met:
        print(safe_text(f"fail-on {line}"))
    if not met:
        print(safe_text(f"fail-on: none of {', '.join(conditions)} holds"))
    return 1 if met else 0


def _spark_check(args: argparse.Namespace, opened: Any) -> int:
    from tui_ledger.accounting.checks import check_lines
    from tui_ledger.spark.commands import spark_checks
    from tui_ledger.text.textsafe import safe_text
    from tui_ledger.text.wording import plural

    by = group_columns(args.by, opened.columns)
    for line in opened.report.lines():
        if not line.startswith(("Warning (", "No warnings")):
            print(safe_text(line))
    checks = spark_checks(opened, by)
    counts = opened.attempts.select(*by).distinct().count()
    rows = opened.attempts.count() if opened.where is not None else opened.report.rows
    print(
        safe_text(
            f"Checks for {plural(rows, 'attempt')} in {plural(counts, 'group')} "
            f"(by {', '.join(by)}):"
        )
    )
    for line in check_lines(checks):
        print(safe_text(line))
    return 0
