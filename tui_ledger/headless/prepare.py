"""What the headless commands share: the input loaded (or streamed), priced, filtered, matched
and capped (`prepare`), the `--by` columns read as a filter reads them, and the input opened
on a Spark Connect server (`on_spark`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui_ledger.cli_options import (
    UsageError,
    cap_from_args,
    load_options,
    price_table,
)
from tui_ledger.findings import Finding, Notice


def load_input(args: argparse.Namespace) -> Any:
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


def group_columns(text: str, available: Sequence[str]) -> list[str]:
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


def filtered(attempts: Any, where: str) -> Any:
    from tui_ledger.filtering.query import parse_filter

    expression = parse_filter(where, attempts.collect_schema())
    return attempts if expression is None else attempts.filter(expression)


@dataclass
class Prepared:
    report: Any  # the loader's LoadReport
    attempts: Any  # a DataFrame; a LazyFrame when `streamed`
    by: list[str]
    table: Any
    warnings: list[Finding]
    streamed: bool = False  # too large for memory: summarised in bounded memory
    audit: Any = None  # the grader's audit (grader.Audit), when --accepted vouched ran it
    cap: Any = None  # --cap (accounting.cap.Cap): `attempts` are the capped ones
    uncapped: Any = None  # the attempts before the cap (what the cap figures and sweep read)


def prepare(args: argparse.Namespace, ledger: Any = None) -> Prepared:
    """Load (unless `ledger` is given), price, filter and (on request) match tasks: what summary
    and check both need."""
    from tui_ledger.accounting.prices import apply_prices

    table = price_table(args.prices, args.flat_price)
    if ledger is None:
        ledger = load_input(args)
    by = group_columns(args.by, ledger.attempts.columns)
    attempts, notices, audit = _accepted(args, ledger)
    attempts, price_warnings = apply_prices(attempts, table)
    attempts = filtered(attempts, args.where)
    warnings: list[Finding] = [*ledger.report.warnings, *price_warnings, *notices]
    if args.matched_tasks:
        attempts, notice = _matched_only(attempts, by)
        warnings.append(notice)
    return _capped(Prepared(ledger.report, attempts, by, table, warnings, audit=audit), args)


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


def _capped(prepared: Prepared, args: argparse.Namespace) -> Prepared:
    """The prepared attempts under `--cap` (the root: every figure read from them is the
    capped one), the uncapped ones kept beside them."""
    from tui_ledger.accounting.cap import capped

    cap = cap_from_args(args, prepared.attempts.collect_schema().names())
    prepared.uncapped = prepared.attempts
    if cap is not None:
        prepared.cap, prepared.attempts = cap, capped(prepared.attempts, cap)
    return prepared


def prepare_summary(args: argparse.Namespace) -> Prepared:
    """What `summary` reads: the attempts in memory when they fit (faster), else streamed.

    The choice is made before reading, from the files' sizes and the memory left (free
    memory, a cgroup's limit, RLIMIT_DATA), by the loader's cautious estimate (6x a CSV's
    size; see `load.memory._PEAK_OVER_LOWER_BOUND`): an eager load that does not fit would be
    killed halfway. Streamed, the figures are the same.
    """
    from tui_ledger.load import too_large_to_load

    why = too_large_to_load(args.files, fmt=args.fmt)
    return prepare(args) if why is None else _prepare_streamed(args, why)


def _prepare_streamed(args: argparse.Namespace, why: str) -> Prepared:
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
    by = group_columns(args.by, attempts.collect_schema().names())
    attempts = filtered(attempts, args.where)
    notice = Notice(
        "streamed",
        f"{why}: read in bounded memory instead (the same figures); the fair-comparison "
        "checks were not run, since they need every attempt in memory.",
        report.rows,
    )
    prepared = Prepared(report, attempts, by, None, [*report.warnings, notice], streamed=True)
    return _capped(prepared, args)


def _matched_only(attempts: Any, by: list[str]) -> tuple[Any, Notice]:
    from tui_ledger.accounting.matched import matched_tasks_only

    if "task" not in attempts.columns:
        raise UsageError("--matched-tasks needs a task column; the input has none")
    if "task" in by:
        raise UsageError("--matched-tasks cannot be used when grouping by task")
    return matched_tasks_only(attempts, by)


def on_spark(args: argparse.Namespace, url: str, command: Any, *, validate: bool = True) -> int:
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
