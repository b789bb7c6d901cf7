"""`ledger-tui summary`: the accounting of both views per group, with the trap figures, in
the asked format; again and again with `--watch`; on Spark with `--spark`."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from tui_ledger.cli_options import (
    UsageError,
    add_accepted_option,
    add_cap_options,
    add_load_options,
    add_price_options,
    add_query_options,
    add_spark_option,
    add_watch_option,
    check_paths,
    load_options,
    parse_arguments,
    spark_url,
)
from tui_ledger.headless.prepare import Prepared, group_columns, on_spark, prepare, prepare_summary


def summary_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ledger-tui summary",
        description="Print the accounting of both views (or one) per group, with the trap figures.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--view", choices=("keep", "drop", "both"), default="both")
    parser.add_argument(
        "--format", dest="out_format", choices=("table", "json", "csv", "markdown"), default="table"
    )
    parser.add_argument(
        "--intervals",
        choices=("auto", "delta", "bootstrap", "none"),
        default="auto",
        help="95%% intervals on per accepted result: bootstrap for small groups and the "
        "delta method for large ones (auto), one method for all, or none",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="bootstrap seed (same seed, same intervals)"
    )
    parser.add_argument(
        "--pareto-svg",
        metavar="OUT.svg",
        help="also write a chart of pass rate against spend per accepted result, both views",
    )
    parser.add_argument(
        "--pareto-metric",
        choices=("tokens", "cost"),
        help="what the chart's x axis shows (default: cost when prices are known, else tokens)",
    )
    parser.add_argument("--force", action="store_true", help="replace OUT.svg if it exists")
    parser.add_argument(
        "--csv-raw",
        action="store_true",
        help="with --format csv: write labels exactly, even those a spreadsheet would run as "
        "formulas (by default a label starting with = + - @ gets a leading apostrophe)",
    )
    add_accepted_option(parser)
    add_watch_option(parser)
    add_query_options(parser)
    add_cap_options(parser, sweep=True)
    add_load_options(parser)
    add_price_options(parser)
    add_spark_option(parser)
    return parser


def run_summary(argv: Sequence[str]) -> int:
    """`ledger-tui summary`: print the comparison in the asked format (`--watch`: again and
    again, as the files grow)."""
    args = parse_arguments(summary_parser(), argv)
    url = spark_url(args)
    if url is not None and (args.cap or args.cap_sweep or args.cap_svg):
        raise UsageError("--cap, --cap-sweep and --cap-svg are not available with --spark yet")
    if url is not None:
        # The validation pass runs in the figures' query (`_spark_summary`).
        return on_spark(args, url, _spark_summary, validate=False)
    if args.watch:
        return _watch_summary(args)
    prepared = prepare_summary(args)
    if prepared.streamed:
        from tui_ledger.text.textsafe import safe_text

        print(f"ledger-tui: {safe_text(prepared.warnings[-1].message)}", file=sys.stderr)
    sys.stdout.write(_summary_text(args, prepared, overwrite_chart=args.force))
    return 0


def _summary_text(
    args: argparse.Namespace,
    prepared: Prepared,
    *,
    overwrite_chart: bool,
    engine: Any = None,
    figures: Any = None,
) -> str:
    """The summary `ledger-tui summary` prints; writes the chart too when asked. `engine`:
    the input opened on Spark (`spark.commands.SparkInput`), which then computes the
    aggregates and check cells (`figures`: asked of it in one query beforehand); everything
    else is this path's own."""
    from tui_ledger.accounting.ledger import compare
    from tui_ledger.accounting.stats import IntervalSettings
    from tui_ledger.reports.report import render_summary

    settings = IntervalSettings(method=args.intervals, seed=args.seed)
    if engine is not None:
        from tui_ledger.spark.commands import spark_comparison

        comparison = spark_comparison(engine, prepared.by, settings, figures)
    else:
        comparison = compare(
            prepared.attempts, prepared.by, intervals=settings, streaming=prepared.streamed
        )
        comparison = replace(comparison, accepted=args.accepted)
    # Pairs are intervals too (none with --intervals none); a streamed scan is summed in
    # bounded memory, and its per-task cells may not fit: no pairs there yet.
    if args.out_format != "csv" and args.intervals != "none" and not prepared.streamed:
        comparison = _with_pairs(comparison, prepared, engine, args.seed, figures)
    metric: Literal["tokens", "cost"] = args.pareto_metric or (
        "cost" if comparison.has_cost else "tokens"
    )
    if args.pareto_svg and metric == "cost" and not comparison.has_cost:
        raise UsageError("--pareto-metric cost needs prices (--prices) or a cost column")
    view = None if args.view == "both" else args.view
    # Every format but CSV (the figures only) lists the checks' warnings (`checks.warnings_of`),
    # as `check` and the app do.
    checks: list[Any] = []
    if args.out_format == "csv":
        pass
    elif engine is not None:
        from tui_ledger.spark.commands import spark_checks

        checks = spark_checks(engine, prepared.by, figures=figures)
    elif not prepared.streamed:
        from tui_ledger.accounting.checks import run_checks

        checks = run_checks(
            prepared.attempts,
            prepared.by,
            prepared.report,
            warnings=prepared.warnings[len(prepared.report.warnings) :],
        )
    if engine is None and (prepared.cap is not None or args.cap_sweep or args.cap_svg):
        from tui_ledger.reports.cap_report import capped_summary

        text = capped_summary(
            comparison,
            prepared.cap,
            prepared.uncapped,
            fmt=args.out_format,
            view=view,
            warnings=prepared.warnings,
            checks=checks,
            width=_terminal_width() if args.out_format == "table" else None,
            spreadsheet_safe=not args.csv_raw,
            sweep=args.cap_sweep,
            svg=(args.cap_svg, overwrite_chart, args.files) if args.cap_svg else None,
        )
    else:
        text = render_summary(
            comparison,
            args.out_format,
            view,
            warnings=prepared.warnings,
            checks=checks,
            width=_terminal_width() if args.out_format == "table" else None,
            spreadsheet_safe=not args.csv_raw,
        )
    if args.pareto_svg:
        from tui_ledger.exports.export_files import write_text_atomic
        from tui_ledger.exports.pareto_svg import pareto_svg

        target = write_text_atomic(
            args.pareto_svg,
            pareto_svg(comparison, metric),
            overwrite=overwrite_chart,
            protected=args.files,
        )
        print(f"wrote the {metric} chart to {target}", file=sys.stderr)
    return str(text)


def _with_pairs(
    comparison: Any, prepared: Prepared, engine: Any, seed: int, figures: Any = None
) -> Any:
    """The comparison with its pairwise verdicts, from the attempts or the Spark engine's
    cells (counted there, drawn here: see docs/SPARK.md)."""
    from tui_ledger.accounting.pairs import with_pairs

    if engine is not None:
        from tui_ledger.spark.commands import spark_pair_cells

        cells = spark_pair_cells(engine, prepared.by, figures=figures)
        return with_pairs(comparison, cells=cells, seed=seed)
    return with_pairs(comparison, prepared.attempts, seed=seed)


def _terminal_width() -> int | None:
    """The width the table format fits: the terminal's (or `COLUMNS`), None when piped."""
    import os
    import shutil

    if "COLUMNS" not in os.environ and not sys.stdout.isatty():
        return None
    return max(shutil.get_terminal_size().columns, 40)


def _watch_summary(args: argparse.Namespace) -> int:
    """`summary --watch`: print the summary, then again whenever the data changes.

    On a terminal each summary replaces the last one; piped, they follow one another. A change
    that cannot be read is said on stderr and the watching goes on. Ctrl+C ends it (exit 0).
    """
    from tui_ledger.exports.export_files import ExportError
    from tui_ledger.filtering.query import FilterError
    from tui_ledger.load import LoadError
    from tui_ledger.text.textsafe import safe_text
    from tui_ledger.text.wording import plural
    from tui_ledger.watching.watch import Watcher

    check_paths(args.files)
    on_terminal = sys.stdout.isatty()
    watcher = Watcher(args.files, **load_options(args))
    names = ", ".join(safe_text(Path(path).name or path) for path in args.files)

    def show(ledger: Any, what: str, *, first: bool) -> None:
        # The chart is ours to replace after the first write (which --force governs).
        text = _summary_text(args, prepare(args, ledger), overwrite_chart=args.force or not first)
        if on_terminal:
            sys.stdout.write("\x1b[H\x1b[2J")  # home, clear: the new summary replaces the old
        elif not first:
            sys.stdout.write("\n")  # piped: one summary after another, a blank line between
        sys.stdout.write(text)
        if on_terminal:
            stamp = time.strftime("%H:%M:%S")
            sys.stdout.write(f"\nwatching {names} · {what} at {stamp} · Ctrl+C stops\n")
        sys.stdout.flush()

    def say(message: str) -> None:
        print(f"ledger-tui: {safe_text(message)}", file=sys.stderr, flush=True)

    try:
        try:
            ledger = watcher.load()
        except LoadError as error:
            say(f"error: {error}")
            say("waiting for the files to change")
        else:
            rows = ledger.attempts.height
            show(ledger, plural(rows, "attempt"), first=True)
        shown = watcher.ledger is not None
        for change in watcher.follow():
            if change.ledger is not None:
                try:
                    show(change.ledger, change.describe(), first=not shown)
                except (UsageError, FilterError, ExportError) as error:
                    say(f"error: {getattr(error, 'message', None) or error}")
                else:
                    shown = True
            if change.error is not None:
                say(f"error: {change.error} (showing the last attempts that could be read)")
    except KeyboardInterrupt:
        return 0
    return 0


def _spark_summary(args: argparse.Namespace, opened: Any) -> int:
    """The summary from one query: the figures, and as the format asks, the bootstrap's
    rows, the checks' cells and the pairs' cells (`spark.commands.spark_figures`)."""
    from tui_ledger.accounting.stats import IntervalSettings
    from tui_ledger.spark.commands import spark_figures

    by = group_columns(args.by, opened.columns)
    settings = IntervalSettings(method=args.intervals, seed=args.seed)
    figures = spark_figures(
        opened,
        by,
        intervals=settings,
        checks=args.out_format != "csv",  # every other format lists the checks' warnings
        pairs=args.out_format != "csv" and args.intervals != "none",
    )
    prepared = Prepared(opened.report, None, by, None, list(opened.report.warnings))
    text = _summary_text(args, prepared, overwrite_chart=args.force, engine=opened, figures=figures)
    sys.stdout.write(text)
    return 0
