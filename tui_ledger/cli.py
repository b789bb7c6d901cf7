"""The `ledger-tui` command: the interactive app, and the headless `summary`, `check`, `convert`,
`trace` (its own module, `cli_trace`).

The headless commands never import textual (the app is imported only when it is opened), so
`ledger-tui summary` starts fast and runs where no terminal UI could. The options the commands
share (and `serve` too) are in `cli_options`.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, NoReturn

from tui_ledger import __version__
from tui_ledger.allocator import use_fewer_arenas
from tui_ledger.cli_options import (
    UsageError,
    add_accepted_option,
    add_cap_options,
    add_load_options,
    add_price_options,
    add_query_options,
    add_spark_option,
    add_watch_option,
    cap_from_args,
    check_paths,
    demo_path,
    load_options,
    parse_arguments,
    price_table,
    spark_url,
)
from tui_ledger.cli_trace import run_grader, run_trace
from tui_ledger.findings import Finding, Notice

COMMANDS = ("summary", "check", "convert", "trace", "grader", "serve")
EXIT_BAD_INPUT = 2


def _parser(prog: str, description: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=prog, description=description)


def _app_parser() -> argparse.ArgumentParser:
    parser = _parser(
        "ledger-tui",
        "Open attempt ledgers in the interactive ledger (no FILE: the bundled demo). "
        f"Headless commands: {', '.join(COMMANDS)} (ledger-tui COMMAND --help).",
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="files or folders of attempts")
    parser.add_argument("--version", action="version", version=f"ledger-tui {__version__}")
    parser.add_argument(
        "--present",
        action="store_true",
        help="presenter mode: one idea per screen in large text (keep, drop, the flip, what "
        "dropping hides); Space/→ next, ← back, Enter on the last opens the app, q quits",
    )
    add_watch_option(parser)
    add_load_options(parser)
    add_price_options(parser)
    add_spark_option(parser)
    return parser


def _summary_parser() -> argparse.ArgumentParser:
    parser = _parser(
        "ledger-tui summary",
        "Print the accounting of both views (or one) per group, with the trap figures.",
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


def _check_parser() -> argparse.ArgumentParser:
    parser = _parser(
        "ledger-tui check",
        "Load the files and explain, in plain words, what was read and every warning. "
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


def _convert_parser() -> argparse.ArgumentParser:
    parser = _parser(
        "ledger-tui convert",
        "Write any input in the canonical schema (csv, parquet, jsonl), atomically. The "
        "derived outcome is written too, unless the input has a status column: a column named "
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


def _load(args: argparse.Namespace) -> Any:
    from tui_ledger.load import load

    return load(args.files, **load_options(args))


def _column_named(name: str, available: Sequence[str]) -> str | None:
    """The column `name` names as a filter term reads it: exactly, in any case, normalised, or
    by alias (`agent` is workflow); None when none or several do."""
    from tui_ledger.schema import canonical_for, normalise_name

    tests = (str.__eq__, lambda a, b: a.casefold() == b.casefold())
    for same in (*tests, lambda a, b: normalise_name(a) == normalise_name(b)):
        hits = [column for column in available if same(column, name)]
        if hits:
            return hits[0] if len(hits) == 1 else None
    canonical = canonical_for(name)
    return canonical if canonical in available else None


def _group_columns(text: str, available: Sequence[str]) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise UsageError("--by needs at least one column name")
    columns = []
    for name in names:
        # As a filter names a column: any case, or another name (`--by agent` is workflow).
        column = _column_named(name, available)
        if column is None:
            raise UsageError(f"--by {name!r}: no such column; columns are: {', '.join(available)}")
        columns.append(column)
    for name in columns:
        if columns.count(name) > 1:
            raise UsageError(f"--by {name!r}: named twice; name each column once")
    return columns


def _filtered(attempts: Any, where: str) -> Any:
    from tui_ledger.filtering.query import parse_filter

    expression = parse_filter(where, attempts.collect_schema())
    return attempts if expression is None else attempts.filter(expression)


@dataclass
class _Prepared:
    report: Any  # the loader's LoadReport
    attempts: Any  # a DataFrame; a LazyFrame when `streamed`
    by: list[str]
    table: Any
    warnings: list[Finding]
    streamed: bool = False  # too large for memory: summarised in bounded memory
    audit: Any = None  # the grader's audit (grader.Audit), when --accepted vouched ran it
    cap: Any = None  # --cap (accounting.cap.Cap): `attempts` are the capped ones
    uncapped: Any = None  # the attempts before the cap (what the cap figures and sweep read)


def _prepare(args: argparse.Namespace, ledger: Any = None) -> _Prepared:
    """Load (unless `ledger` is given), price, filter and (on request) match tasks: what summary
    and check both need."""
    from tui_ledger.accounting.prices import apply_prices

    table = price_table(args.prices, args.flat_price)
    if ledger is None:
        ledger = _load(args)
    by = _group_columns(args.by, ledger.attempts.columns)
    attempts, notices, audit = _accepted(args, ledger)
    attempts, price_warnings = apply_prices(attempts, table)
    attempts = _filtered(attempts, args.where)
    warnings: list[Finding] = [*ledger.report.warnings, *price_warnings, *notices]
    if args.matched_tasks:
        attempts, notice = _matched_only(attempts, by)
        warnings.append(notice)
    return _capped(_Prepared(ledger.report, attempts, by, table, warnings, audit=audit), args)


def _accepted(args: argparse.Namespace, ledger: Any) -> tuple[Any, list[Finding], Any]:
    """The attempts as graded, or as vouched (`--accepted`), before any filter (the audit's rows
    are the ledger's); the audit runs for `vouched` and `--fail-on tampering` only."""
    if args.accepted == "graded" and "tampering" not in (getattr(args, "fail_on", None) or ""):
        return ledger.attempts, [], None
    from tui_ledger.grader.audit import audit_ledger, vouched_notice

    audit = audit_ledger(ledger, args.files)
    if args.accepted == "graded":
        return ledger.attempts, [], audit
    return audit.apply(ledger.attempts, "vouched"), [vouched_notice(audit)], audit


def _capped(prepared: _Prepared, args: argparse.Namespace) -> _Prepared:
    """The prepared attempts under `--cap` (the root: every figure read from them is the
    capped one), the uncapped ones kept beside them."""
    from tui_ledger.accounting.cap import capped

    cap = cap_from_args(args, prepared.attempts.collect_schema().names())
    prepared.uncapped = prepared.attempts
    if cap is not None:
        prepared.cap, prepared.attempts = cap, capped(prepared.attempts, cap)
    return prepared


def _prepare_summary(args: argparse.Namespace) -> _Prepared:
    """What `summary` reads: the attempts in memory when they fit (faster), else streamed.

    The choice is made before reading, from the files' sizes and the memory left (free
    memory, a cgroup's limit, RLIMIT_DATA), by the loader's cautious estimate (6x a CSV's
    size; see `load.memory._PEAK_OVER_LOWER_BOUND`): an eager load that does not fit would be
    killed halfway. Streamed, the figures are the same.
    """
    from tui_ledger.load import too_large_to_load

    why = too_large_to_load(args.files, fmt=args.fmt)
    return _prepare(args) if why is None else _prepare_streamed(args, why)


def _prepare_streamed(args: argparse.Namespace, why: str) -> _Prepared:
    """`load.scan` + filter: the attempts as a LazyFrame that `compare(streaming=True)` reads
    in bounded memory. What needs every attempt in memory is refused in one line."""
    from tui_ledger.accounting.ledger import has_cost
    from tui_ledger.load import scan

    in_memory_only = {
        "--prices": args.prices is not None,
        "--flat-price": args.flat_price is not None,
        "--matched-tasks": args.matched_tasks,
        "--intervals bootstrap": args.intervals == "bootstrap",
    }
    in_memory_only["--accepted vouched"] = args.accepted == "vouched"
    refused = [option for option, given in in_memory_only.items() if given]
    if refused:
        raise UsageError(
            f"{why}, so it is streamed, and {refused[0]} needs every attempt in memory; "
            "leave it out (--intervals auto bootstraps small groups even when streaming), "
            "or filter the file first."
        )
    attempts, report = scan(args.files, **load_options(args))
    if has_cost(attempts):
        raise UsageError(
            f"{why}, so it is streamed, and its cost column can only be read with every "
            "attempt in memory; drop that column (or filter the file) first."
        )
    by = _group_columns(args.by, attempts.collect_schema().names())
    attempts = _filtered(attempts, args.where)
    notice = Notice(
        "streamed",
        f"{why}: read in bounded memory instead (the same figures); the fair-comparison "
        "checks were not run, since they need every attempt in memory.",
        report.rows,
    )
    prepared = _Prepared(report, attempts, by, None, [*report.warnings, notice], streamed=True)
    return _capped(prepared, args)


def _matched_only(attempts: Any, by: list[str]) -> tuple[Any, Notice]:
    from tui_ledger.accounting.matched import matched_tasks_only

    if "task" not in attempts.columns:
        raise UsageError("--matched-tasks needs a task column; the input has none")
    if "task" in by:
        raise UsageError("--matched-tasks cannot be used when grouping by task")
    return matched_tasks_only(attempts, by)


def run_summary(argv: Sequence[str]) -> int:
    """`ledger-tui summary`: print the comparison in the asked format (`--watch`: again and
    again, as the files grow)."""
    args = parse_arguments(_summary_parser(), argv)
    url = spark_url(args)
    if url is not None and (args.cap or args.cap_sweep or args.cap_svg):
        raise UsageError("--cap, --cap-sweep and --cap-svg are not available with --spark yet")
    if url is not None:
        # The validation pass runs in the figures' query (`_spark_summary`).
        return _on_spark(args, url, _spark_summary, validate=False)
    if args.watch:
        return _watch_summary(args)
    prepared = _prepare_summary(args)
    if prepared.streamed:
        from tui_ledger.text.textsafe import safe_text

        print(f"ledger-tui: {safe_text(prepared.warnings[-1].message)}", file=sys.stderr)
    sys.stdout.write(_summary_text(args, prepared, overwrite_chart=args.force))
    return 0


def _summary_text(
    args: argparse.Namespace,
    prepared: _Prepared,
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
    comparison: Any, prepared: _Prepared, engine: Any, seed: int, figures: Any = None
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
        text = _summary_text(args, _prepare(args, ledger), overwrite_chart=args.force or not first)
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


def run_check(argv: Sequence[str]) -> int:
    """`ledger-tui check`: the load report, the prices, and every check in plain words."""
    args = parse_arguments(_check_parser(), argv)
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
        return _on_spark(args, url, _spark_check)
    prepared = _prepare(args)
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


def run_convert(argv: Sequence[str]) -> int:
    """`ledger-tui convert`: any input to the canonical schema."""
    args = parse_arguments(_convert_parser(), argv)
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
        return _on_spark(args, url, _spark_convert)
    if args.where:
        raise UsageError("convert --where needs --spark; locally, filter in the app and export")
    problem = input_problem(args.output, args.files)
    if problem is not None:
        raise UsageError(f"--output {problem}")
    ledger = _load(args)
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


# --------------------------------------------------------------------------- --spark


def _on_spark(args: argparse.Namespace, url: str, command: Any, *, validate: bool = True) -> int:
    """Open the input on a Spark Connect server and run `command(args, opened)`; every
    engine error is one line (exit 2), as a load error is."""
    from tui_ledger.spark import require_spark

    require_spark()
    from tui_ledger.spark.commands import on_engine, open_input

    def run() -> int:
        opened = open_input(
            url or None,
            args.files,
            load_options=load_options(args),
            where=args.where,
            validate=validate,
        )
        try:
            result: int = command(args, opened)
        finally:
            opened.leave()  # what it cached goes; the session stays warm for the next run
        return result

    return on_engine(run)


def _spark_summary(args: argparse.Namespace, opened: Any) -> int:
    """The summary from one query: the figures, and as the format asks, the bootstrap's
    rows, the checks' cells and the pairs' cells (`spark.commands.spark_figures`)."""
    from tui_ledger.accounting.stats import IntervalSettings
    from tui_ledger.spark.commands import spark_figures

    by = _group_columns(args.by, opened.columns)
    settings = IntervalSettings(method=args.intervals, seed=args.seed)
    figures = spark_figures(
        opened,
        by,
        intervals=settings,
        checks=args.out_format != "csv",  # every other format lists the checks' warnings
        pairs=args.out_format != "csv" and args.intervals != "none",
    )
    prepared = _Prepared(opened.report, None, by, None, list(opened.report.warnings))
    text = _summary_text(args, prepared, overwrite_chart=args.force, engine=opened, figures=figures)
    sys.stdout.write(text)
    return 0


def _spark_check(args: argparse.Namespace, opened: Any) -> int:
    from tui_ledger.accounting.checks import check_lines
    from tui_ledger.spark.commands import spark_checks
    from tui_ledger.text.textsafe import safe_text
    from tui_ledger.text.wording import plural

    by = _group_columns(args.by, opened.columns)
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


def run_app(argv: Sequence[str]) -> int:
    """`ledger-tui [FILE...]`: the interactive ledger (the demo when no file is given)."""
    args = _app_parser().parse_args(argv)
    url = spark_url(args)
    if url is not None:
        return _spark_app(args, url)
    demo = not args.files
    paths = [str(demo_path())] if demo else list(args.files)
    check_paths(paths)
    # The price table is not a `load()` argument: the app applies it after loading.
    prices = price_table(args.prices, args.flat_price)
    options = load_options(args)
    # A file the app reads whole in about the time its interface takes to start is read
    # beside that start (load/early.py): the first frame then shows its final figures.
    from tui_ledger.load.early import EarlyLoad, worth_reading_early

    early = EarlyLoad(paths, options) if not args.watch and worth_reading_early(paths) else None
    from tui_ledger.tui.run import run_app as run_interactive

    return run_interactive(
        paths,
        demo=demo,
        load_options=options,
        prices=prices,
        watch_files=args.watch,
        present=args.present,
        early=early,
    )


def _spark_app(args: argparse.Namespace, url: str) -> int:
    """`ledger-tui --spark URL INPUT`: open (connect, map, validate) the input on the server
    before the screen appears, so an unreachable server, a missing table or a bad cell is one
    line and exit 2, as with the headless commands; then the app computes on it."""
    if not args.files:
        raise UsageError("--spark needs an input: a path, glob or folder, or table:NAME")
    from tui_ledger.spark import require_spark

    require_spark()
    from tui_ledger.spark.commands import on_engine, open_input
    from tui_ledger.tui.run import run_app as run_interactive

    opened = on_engine(lambda: open_input(url or None, args.files, load_options=load_options(args)))
    try:
        return run_interactive(
            list(args.files), load_options=load_options(args), spark=opened, present=args.present
        )
    finally:
        # What it cached goes; the session stays warm for the next run (`session.leave`;
        # a server already gone has nothing left to release).
        opened.leave()


def _fail(message: str) -> NoReturn:
    from tui_ledger.text.textsafe import safe_text

    print(f"ledger-tui: error: {safe_text(message)}", file=sys.stderr)
    sys.exit(EXIT_BAD_INPUT)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `ledger-tui` console script.

    Nothing here imports polars or textual before the arguments are read: `--version`,
    `--help` and a usage error answer at once, and each command imports what it needs.
    """
    use_fewer_arenas()  # before polars loads: nothing above this line imports it
    arguments = list(sys.argv[1:] if argv is None else argv)
    handlers = {
        "summary": run_summary,
        "check": run_check,
        "convert": run_convert,
        "trace": run_trace,
        "grader": run_grader,
    }
    try:
        if arguments and arguments[0] == "serve":
            from tui_ledger.tui.serve.serve import run_serve

            return run_serve(arguments[1:])
        if arguments and arguments[0] in handlers:
            return handlers[arguments[0]](arguments[1:])
        return run_app(arguments)
    except BrokenPipeError:
        # `ledger-tui summary big.csv | head` is fine; say nothing.
        return 0
    except KeyboardInterrupt:
        # A second Ctrl+C (polars raises its own after ours) must not become a traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("ledger-tui: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        message = _bad_input_message(error)
        if message is None:
            raise
        _fail(message)


def _bad_input_message(error: Exception) -> str | None:
    """The one line for an error that bad input causes (a file, a filter, an option), or None
    for a bug. Its classes are imported here, once an error is raised: a module that raised
    one is loaded already, and `--version` never pays for them."""
    if isinstance(error, UsageError):
        return str(error)
    from tui_ledger.accounting.prices import PriceError
    from tui_ledger.exports.export_files import ExportError, TargetExists
    from tui_ledger.filtering.query import FilterError
    from tui_ledger.load import LoadError
    from tui_ledger.spark.errors import SparkEngineError
    from tui_ledger.trajectory import TrajectoryError

    if isinstance(error, FilterError):
        return f"--where: {error.message} (at character {error.position + 1})"
    if isinstance(error, TargetExists):  # convert -o, summary --pareto-svg: both take --force
        return f"{error.target}: already exists; choose another name, or --force to replace it"
    if isinstance(error, (LoadError, ExportError, PriceError, SparkEngineError, TrajectoryError)):
        return str(error)
    return None


if __name__ == "__main__":
    sys.exit(main())
