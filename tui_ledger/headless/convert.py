"""`ledger-tui convert`: any input written in the canonical schema (csv, parquet, jsonl),
atomically; on Spark, optionally only the attempts `--where` keeps."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from tui_ledger.cli_options import (
    UsageError,
    add_load_options,
    add_spark_option,
    parse_arguments,
    spark_url,
)
from tui_ledger.headless.prepare import load_input, on_spark


def convert_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ledger-tui convert",
        description="Write any input in the canonical schema (csv, parquet, jsonl), atomically. "
        "The derived outcome is written too, unless the input has a status column: a column named "
        "outcome reads as a status, so the file would not load back; loading derives it again.",
    )
    parser.add_argument("files", nargs="+", metavar="IN")
    parser.add_argument("-o", "--output", required=True, metavar="OUT")
    parser.add_argument("--force", action="store_true", help="replace OUT if it exists")
    parser.add_argument(
        "--spreadsheet-safe",
        action="store_true",
        help="prefix text cells starting with = + - @ with an apostrophe (CSV for spreadsheets)",
    )
    add_load_options(parser)
    add_spark_option(parser)
    parser.add_argument(
        "--where",
        default="",
        metavar="EXPR",
        help="with --spark: write only the attempts matching the filter language",
    )
    return parser


def run_convert(argv: Sequence[str]) -> int:
    """`ledger-tui convert`: any input to the canonical schema."""
    args = parse_arguments(convert_parser(), argv)
    from tui_ledger.exports.export_files import (
        ATTEMPT_FORMATS,
        format_for_path,
        input_problem,
        write_attempts,
    )
    from tui_ledger.text.wording import plural

    fmt = format_for_path(args.output, ATTEMPT_FORMATS)
    url = spark_url(args)
    if url is not None:
        return on_spark(args, url, _spark_convert)
    if args.where:
        raise UsageError("convert --where needs --spark; locally, filter in the app and export")
    problem = input_problem(args.output, args.files)
    if problem is not None:
        raise UsageError(f"--output {problem}")
    ledger = load_input(args)
    # Canonical: without the derived outcome beside a raw status (`canonical_attempts`).
    target = write_attempts(
        ledger.attempts,
        args.output,
        fmt,
        overwrite=args.force,
        spreadsheet_safe=args.spreadsheet_safe,
        protected=args.files,
    )
    print(f"wrote {plural(ledger.report.rows, 'attempt')} to {target}", file=sys.stderr)
    return 0


def _spark_convert(args: argparse.Namespace, opened: Any) -> int:
    from tui_ledger.exports.export_files import ATTEMPT_FORMATS, format_for_path, write_attempts
    from tui_ledger.spark.commands import spark_rows
    from tui_ledger.text.wording import plural

    attempts = spark_rows(opened)
    if "status" in attempts.columns:  # as run_convert: loading derives the outcome again
        attempts = attempts.drop("outcome")
    target = write_attempts(
        attempts,
        args.output,
        format_for_path(args.output, ATTEMPT_FORMATS),
        overwrite=args.force,
        spreadsheet_safe=args.spreadsheet_safe,
    )
    print(f"wrote {plural(attempts.height, 'attempt')} to {target}", file=sys.stderr)
    return 0
