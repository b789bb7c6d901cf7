"""Rendering a comparison as a terminal table, JSON, CSV or markdown, and writing files safely.

What `ledger-tui summary` prints and what the app exports come from here, so a figure reads the
same everywhere. The callout sentence that explains the trap is computed here too.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import polars as pl

from tui_ledger.ledger import VIEW_GLOSSES, VIEW_TITLES, VIEWS, Comparison, View
from tui_ledger.numbers import (
    format_count,
    format_factor,
    format_rate,
    format_tokens,
    plain_number,
)
from tui_ledger.schema import OUTCOMES
from tui_ledger.textsafe import safe_text

SummaryFormat = Literal["table", "json", "csv", "markdown"]
SUMMARY_FORMATS: tuple[str, ...] = ("table", "json", "csv", "markdown")
ATTEMPT_FORMATS: tuple[str, ...] = ("csv", "parquet", "jsonl", "json")


class ExportError(Exception):
    """A file could not be written; the message is one line for people."""


def callout(comparison: Comparison) -> str:
    """One computed sentence: what dropping failures hides, and whether the ranking flips."""
    hidden = comparison.hidden_tokens
    hidden_attempts = comparison.hidden_attempts
    if hidden_attempts == 0:
        return "Every attempt here was accepted, so dropping failures changes nothing."
    hides = (
        f"Dropping failures hides {format_tokens(hidden)} tokens"
        if hidden is not None
        else "Dropping failures hides an unknown number of tokens"
    )
    hides += f" in {format_count(hidden_attempts)} attempts"
    keep_best, drop_best = comparison.best("keep"), comparison.best("drop")
    if not comparison.flips:
        return f"{hides}; the ranking does not change."
    if keep_best and drop_best and keep_best != drop_best:
        drop_value = comparison.per_accepted(drop_best, "drop")
        keep_value = comparison.per_accepted(keep_best, "keep")
        true_value = comparison.per_accepted(drop_best, "keep")
        return (
            f"{hides} and flips the ranking: {drop_best} looks cheapest "
            f"({format_tokens(drop_value)} per accepted result) but {keep_best} is cheaper "
            f"({format_tokens(keep_value)} vs {format_tokens(true_value)} "
            f"when failures are kept)."
        )
    moved = ", ".join(
        f"{move.group} #{move.keep_rank}→#{move.drop_rank}" for move in comparison.moves
    )
    return f"{hides} and reorders the ranking ({moved})."


# --------------------------------------------------------------------------- JSON


def _group_record(row: dict[str, Any], by: Sequence[str]) -> dict[str, Any]:
    record: dict[str, Any] = {}
    outcomes = {name: row[name] for name in OUTCOMES}
    for name, value in row.items():
        if name in by or name in OUTCOMES:
            continue
        if name == "lower_bound":
            record["tokens_per_accepted_result_is_lower_bound"] = bool(value)
            continue
        record[name] = plain_number(value) if isinstance(value, (int, float)) else value
        if name == "pass_rate":
            record["outcomes"] = outcomes
    return record


def view_json(comparison: Comparison, view: View) -> dict[str, dict[str, Any]]:
    """One view as an object keyed by group: the article script's key names and more."""
    frame = comparison.view(view)
    return {
        label: _group_record(row, comparison.by)
        for label, row in zip(comparison.labels, frame.iter_rows(named=True), strict=True)
    }


def summary_json(
    comparison: Comparison,
    view: View | None = None,
    warnings: Iterable[Any] = (),
) -> dict[str, Any]:
    """The JSON document of `summary`: one view keyed by group, or everything."""
    if view is not None:
        return view_json(comparison, view)
    trap = {
        label: {
            "hidden_tokens": plain_number(row["hidden_tokens"]),
            "hidden_attempts": row["hidden_attempts"],
            "trap_factor": plain_number(row["trap_factor"]),
            "keep_rank": row["keep_rank"],
            "drop_rank": row["drop_rank"],
        }
        for label, row in zip(comparison.labels, comparison.trap.iter_rows(named=True), strict=True)
    }
    return {
        "by": list(comparison.by),
        "views": {name: view_json(comparison, name) for name in VIEWS},
        "trap": trap,
        "hidden_tokens": comparison.hidden_tokens,
        "ranking_flips": comparison.flips,
        "moves": [
            {"group": m.group, "keep_rank": m.keep_rank, "drop_rank": m.drop_rank}
            for m in comparison.moves
        ],
        "callout": callout(comparison),
        "warnings": [_warning_json(w) for w in warnings],
    }


def _warning_json(warning: Any) -> dict[str, Any]:
    fields = ("kind", "message", "count", "lines")
    return {name: _jsonable(getattr(warning, name)) for name in fields if hasattr(warning, name)}


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


# --------------------------------------------------------------------------- tables

_COLUMNS: tuple[tuple[str, str], ...] = (
    ("attempts", "attempts"),
    ("accepted", "accepted"),
    ("pass_rate", "pass rate"),
    ("missing_usage", "missing usage"),
    ("median_tokens_per_attempt", "median / attempt"),
    ("total_tokens", "total tokens"),
    ("tokens_per_accepted_result", "per accepted"),
    ("rank", "rank"),
)


def _cells(row: dict[str, Any]) -> list[str]:
    per_accepted = row["tokens_per_accepted_result"]
    return [
        format_count(row["attempts"]),
        f"{row['accepted']}/{row['attempts']}",
        format_rate(row["pass_rate"]),
        format_count(row["missing_usage"]),
        format_tokens(row["median_tokens_per_attempt"]),
        format_tokens(row["total_tokens"]),
        format_tokens(per_accepted, lower_bound=bool(row["lower_bound"]))
        if per_accepted is not None
        else "— (no accepted attempt)",
        format_count(row["rank"]),
    ]


def _rows(comparison: Comparison, view: View) -> list[list[str]]:
    frame = comparison.view(view)
    return [
        [safe_text(label), *_cells(row)]
        for label, row in zip(comparison.labels, frame.iter_rows(named=True), strict=True)
    ]


def _group_title(comparison: Comparison) -> str:
    return " · ".join(comparison.by)


def _table_text(comparison: Comparison, views: Sequence[View], warnings: list[Any]) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system=None, legacy_windows=False)
    for view in views:
        table = Table(
            title=Text(f"{VIEW_TITLES[view]} ({VIEW_GLOSSES[view]})"),
            title_justify="left",
            show_edge=False,
        )
        table.add_column(Text(_group_title(comparison)))
        for _, heading in _COLUMNS:
            table.add_column(Text(heading), justify="right")
        for cells in _rows(comparison, view):
            table.add_row(*(Text(cell) for cell in cells))
        console.print(table)
        console.print()
    if len(views) == 2:
        console.print(Text(safe_text(callout(comparison))))
        trap = Table(show_edge=False, title=Text("What dropping failures hides"))
        trap.add_column(Text(_group_title(comparison)))
        for heading in ("hidden attempts", "hidden tokens", "trap factor", "rank keep→drop"):
            trap.add_column(Text(heading), justify="right")
        for label, row in zip(
            comparison.labels, comparison.trap.iter_rows(named=True), strict=True
        ):
            trap.add_row(
                Text(safe_text(label)),
                Text(format_count(row["hidden_attempts"])),
                Text(format_tokens(row["hidden_tokens"])),
                Text(format_factor(row["trap_factor"])),
                Text(f"{row['keep_rank']}→{row['drop_rank']}"),
            )
        console.print()
        console.print(trap)
    if warnings:
        console.print()
        console.print(Text(f"⚠ {len(warnings)} warning(s) (ledger-tui check explains them):"))
        for warning in warnings:
            console.print(Text(f"  - {safe_text(getattr(warning, 'message', warning))}"))
    return buffer.getvalue().rstrip() + "\n"


def _markdown_cell(text: str) -> str:
    return safe_text(text).replace("\\", "\\\\").replace("|", "\\|")


def _markdown_text(comparison: Comparison, views: Sequence[View], warnings: list[Any]) -> str:
    headings = [_group_title(comparison), *(heading for _, heading in _COLUMNS)]
    lines: list[str] = []
    for view in views:
        lines.append(f"### {VIEW_TITLES[view]} ({VIEW_GLOSSES[view]})")
        lines.append("")
        lines.append("| " + " | ".join(_markdown_cell(h) for h in headings) + " |")
        lines.append("|---|" + "---:|" * len(_COLUMNS))
        for cells in _rows(comparison, view):
            lines.append("| " + " | ".join(_markdown_cell(cell) for cell in cells) + " |")
        lines.append("")
    if len(views) == 2:
        lines.append(_markdown_cell(callout(comparison)))
        lines.append("")
    if warnings:
        lines.append(f"**{len(warnings)} warning(s):**")
        lines.append("")
        lines.extend(f"- {_markdown_cell(getattr(w, 'message', str(w)))}" for w in warnings)
        lines.append("")
    return "\n".join(lines)


def _csv_text(comparison: Comparison, views: Sequence[View]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    frame = comparison.keep
    metric_names = [name for name in frame.columns if name not in comparison.by]
    writer.writerow(["view", *comparison.by, *metric_names])
    for view in views:
        for row in comparison.view(view).iter_rows(named=True):
            writer.writerow(
                [
                    view,
                    *(_csv_value(row[key]) for key in comparison.by),
                    *(_csv_value(row[name]) for name in metric_names),
                ]
            )
    return buffer.getvalue()


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return plain_number(value)
    return value


def render_summary(
    comparison: Comparison,
    fmt: str = "table",
    view: View | None = None,
    warnings: Iterable[Any] = (),
) -> str:
    """The summary as text in one of SUMMARY_FORMATS; one view, or both with the trap."""
    warning_list = list(warnings)
    views: tuple[View, ...] = (view,) if view is not None else VIEWS
    if fmt == "json":
        document = summary_json(comparison, view, warning_list)
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return _csv_text(comparison, views)
    if fmt == "markdown":
        return _markdown_text(comparison, views, warning_list)
    if fmt == "table":
        return _table_text(comparison, views, warning_list)
    raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(SUMMARY_FORMATS)}")


# --------------------------------------------------------------------------- files


def format_for_path(path: str | Path, choices: Sequence[str]) -> str:
    """The format a file name asks for (`.md` -> markdown, `.jsonl` -> jsonl, ...)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    name = {"md": "markdown", "markdown": "markdown", "ndjson": "jsonl", "txt": "table"}.get(
        suffix, suffix
    )
    if name not in choices:
        raise ExportError(
            f"{path}: cannot tell the format from the extension .{suffix}; "
            f"use one of: {', '.join('.' + c for c in choices)}"
        )
    return name


def write_text_atomic(path: str | Path, text: str, *, overwrite: bool = False) -> Path:
    """Write text through a temporary file and a rename; refuse to replace a file unasked."""
    return _write_atomic(Path(path), lambda handle: handle.write(text.encode()), overwrite)


def write_attempts(
    frame: pl.DataFrame,
    path: str | Path,
    fmt: str | None = None,
    *,
    overwrite: bool = False,
    spreadsheet_safe: bool = False,
) -> Path:
    """Write attempts as csv, parquet, jsonl or json, atomically, never overwriting unasked."""
    target = Path(path)
    chosen = fmt or format_for_path(target, ATTEMPT_FORMATS)
    if spreadsheet_safe and chosen == "csv":
        frame = neutralise_formulas(frame)
    writers = {
        "csv": lambda handle: _csv_ready(frame).write_csv(handle),
        "parquet": lambda handle: frame.write_parquet(handle),
        "jsonl": lambda handle: _csv_ready(frame).write_ndjson(handle),
        "json": lambda handle: _csv_ready(frame).write_json(handle),
    }
    if chosen not in writers:
        raise ExportError(f"{target}: unknown attempts format {chosen!r}")
    return _write_atomic(target, writers[chosen], overwrite)


def _csv_ready(frame: pl.DataFrame) -> pl.DataFrame:
    # Text formats carry the outcome as its word and 128-bit sums as text-safe integers.
    return frame.with_columns(
        pl.col(name).cast(pl.String)
        for name, dtype in frame.schema.items()
        if isinstance(dtype, (pl.Enum, pl.Categorical)) or dtype == pl.Int128
    )


def neutralise_formulas(frame: pl.DataFrame) -> pl.DataFrame:
    """Text cells a spreadsheet would run as formulas (= + - @ ...) get a leading apostrophe."""
    pattern = r"^[=+\-@\t\r]"
    return frame.with_columns(
        pl.when(pl.col(name).str.contains(pattern))
        .then(pl.lit("'") + pl.col(name))
        .otherwise(pl.col(name))
        .alias(name)
        for name, dtype in frame.schema.items()
        if dtype == pl.String
    )


def _write_atomic(target: Path, write: Any, overwrite: bool) -> Path:
    if target.exists() and not overwrite:
        raise ExportError(f"{target}: already exists; choose another name or allow overwriting")
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise ExportError(f"{target}: folder {directory} does not exist")
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
        if not overwrite and target.exists():
            raise ExportError(f"{target}: appeared while writing; nothing was replaced")
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
