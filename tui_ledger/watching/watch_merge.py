"""How `watch` adds appended rows to what it loaded: the rows merged after their file's last
row in the loaded columns' types (or None: a full reload is needed), the load report with
them counted in, and a small file's messages said of the real file and line."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

import polars as pl

from tui_ledger import schema
from tui_ledger.load import Ledger, LoadReport, LoadWarning
from tui_ledger.load.warning_rules import WARNING_KINDS, warning_message

__all__ = ["merge_appended", "merge_reports", "relocate", "same_mapping"]

_TOTAL_COLUMNS = frozenset({"tokens", *schema.BUCKETS})


def relocate(message: str, small: str, display: str, offset: int) -> str:
    """A message about the small file, said of the real file and its real line."""
    where = re.compile(re.escape(small) + r" (line|record|row) (\d+)")
    message = where.sub(lambda m: f"{display} {m.group(1)} {int(m.group(2)) + offset}", message)
    return message.replace(small, display)


def same_mapping(appended: Mapping[str, str], loaded: Mapping[str, str]) -> bool:
    """Whether the appended rows' columns were read as the loaded file's were.

    Every column the appended rows map must be mapped from the same file column; the columns
    a total is made of (tokens and the buckets) must be exactly the same, or tokens would be
    derived differently.
    """
    for canonical, name in appended.items():
        if canonical not in loaded or name not in loaded[canonical].split(" / "):
            return False
    return _TOTAL_COLUMNS & set(appended) == _TOTAL_COLUMNS & set(loaded)


def merge_appended(
    ledger: Ledger, appended: pl.DataFrame, report: LoadReport, source: str
) -> Ledger | None:
    """The ledger with `appended` after the last row of `source`; None when a full reload is
    needed to keep the columns as the loader would make them."""
    attempts = ledger.attempts
    missing = [name for name in appended.columns if name not in attempts.columns]
    if missing:
        return None
    columns: list[pl.Expr] = []
    for name, dtype in attempts.schema.items():
        if name not in appended.columns:
            columns.append(pl.lit(None, dtype).alias(name))
            continue
        found = appended.schema[name]
        column = appended.get_column(name)
        if found == dtype:
            columns.append(pl.col(name))
        elif (
            column.null_count() == column.len()
            or (dtype == pl.Float64 and found.is_integer())
            or _both_text(found, dtype)
        ):
            columns.append(pl.col(name).cast(dtype))
        else:
            return None  # the column's type would change: the loader decides it on all rows
    rows = appended.select(columns)
    sources = attempts.get_column(schema.SOURCE_COLUMN)
    if attempts.height == 0 or sources[-1] == source:
        merged = pl.concat([attempts, rows], rechunk=False)
    else:
        mine = (sources == source).arg_true()
        at = int(mine[-1]) + 1 if mine.len() else attempts.height
        merged = pl.concat([attempts.slice(0, at), rows, attempts.slice(at)], rechunk=False)
    if merged.n_chunks() > 64:
        merged = merged.rechunk()
    return Ledger(attempts=merged, report=merge_reports(ledger.report, report))


def _both_text(one: pl.DataType, other: pl.DataType) -> bool:
    """Text and Categorical: the same values, kept one way or the other (the loader reads a
    CSV's keys as Categorical, other formats' as they come, and a CSV that fails the typed
    read, say with a ragged row, all as text)."""
    return {type(one), type(other)} <= {pl.String, pl.Categorical}


def merge_reports(loaded: LoadReport, appended: LoadReport) -> LoadReport:
    """The load report with the appended rows counted in."""
    warnings: dict[str, LoadWarning] = {warning.kind: warning for warning in loaded.warnings}
    for warning in appended.warnings:
        known = warnings.get(warning.kind)
        if known is None:
            warnings[warning.kind] = warning
            continue
        count = known.count + warning.count
        lines = (known.lines + warning.lines)[:5]
        sources = (known.sources + warning.sources)[:5]
        message = warning_message(warning.kind, count)
        warnings[warning.kind] = LoadWarning(warning.kind, message, count, lines, sources)
    order = list(WARNING_KINDS)  # the order the loader lists them
    ranked = sorted(
        warnings.values(),
        key=lambda w: order.index(w.kind) if w.kind in order else len(order),
    )
    return replace(loaded, rows=loaded.rows + appended.rows, warnings=ranked)
