"""Rendering a comparison as a terminal table, JSON, CSV or markdown, and writing files safely.

What `ledger-tui summary` prints and what the app exports come from here, so a figure reads the
same everywhere. The callout sentence that explains the trap is computed here too.

Decisions:

- Every rendering is safe to print. Table, markdown and CSV show text from files (group
  labels, column names, warnings) through `safe_text`: `\\x1b`, `<U+202E>`. JSON is data: it
  keeps the exact strings, with every character that could act on a terminal written as a
  `\\uXXXX` escape (`json_text`), which any JSON reader turns back into the same string.
- Token figures are exact. `total_tokens` is an exact integer; a median past 2**52 comes
  from the ledger as an exact Decimal. `tokens_per_accepted_result` is recomputed from the
  exact total (`exact_per_accepted`): a whole quotient is an integer, a fraction past 2**53
  keeps its digits (a Decimal, six places). A float that is not exact (an interval end past
  2**53) prints as a float in JSON, never as an integer it is not.
- Files are written atomically (`_write_atomic`): a temporary file in the target's folder,
  flushed to disk, then moved into place; a failure leaves the target as it was and no
  temporary file. An existing file is replaced only with `overwrite` (the CLI's `--force`, the
  app's confirmation); without it the final move itself refuses (a hard link).
- CSV exports keep the data exactly; with `spreadsheet_safe` (`--spreadsheet-safe`), text
  cells and column names that start with = + - @ (or their full-width forms), a tab or a CR
  get a leading apostrophe, so a spreadsheet shows them instead of running them.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import secrets
import tempfile
import textwrap
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from tui_ledger.findings import Finding
from tui_ledger.ledger import (
    VIEW_GLOSSES,
    VIEW_TITLES,
    VIEWS,
    Comparison,
    ParetoMetric,
    View,
    pareto_points,
)
from tui_ledger.numbers import (
    format_compact,
    format_count,
    format_factor,
    format_interval,
    format_money,
    format_rate,
    format_tokens,
    plain_number,
)
from tui_ledger.schema import OUTCOMES
from tui_ledger.textsafe import UNSAFE_CODEPOINTS, safe_text

if TYPE_CHECKING:
    from tui_ledger.checks import Check

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


# Interval columns (`X_lo`, `X_hi`) become one `X_ci: [lo, hi]` entry; flags get clear names.
_INTERVALS = ("pass_rate", "tokens_per_accepted_result", "cost_per_accepted_result")
_RENAMED = {
    "lower_bound": "tokens_per_accepted_result_is_lower_bound",
    "cost_lower_bound": "cost_per_accepted_result_is_lower_bound",
}


_FLOAT_EXACT = 2**53  # every integer below this is exactly a float64


def json_number(value: Any) -> Any:
    """`plain_number`, except that a float past 2**53 stays a float (`9007199254740992.0`):
    written as an integer it would pass for an exact count it is not."""
    if isinstance(value, float) and math.isfinite(value) and abs(value) >= _FLOAT_EXACT:
        return value
    return plain_number(value)


_DECIMALS = Decimal("0.000001")


def exact_per_accepted(row: dict[str, Any], name: str = "tokens_per_accepted_result") -> Any:
    """`total_tokens / accepted` exactly, where the Float64 figure cannot be trusted.

    The accounting divides an exact Int128 total as a float; past 2**53 that rounds the last
    digits (9,007,199,254,740,993 tokens for one accepted result read 9,007,199,254,740,992).
    Here the division is redone on Python integers: a whole quotient is an `int`; a fraction
    past 2**53 a `Decimal` to six places. Anything else is the row's own figure.
    """
    value = row.get(name)
    total, accepted = row.get("total_tokens"), row.get("accepted")
    if value is None or total is None or not accepted:
        return value
    ratio = Fraction(int(total), int(accepted))
    if ratio.denominator == 1:
        return int(ratio)
    if abs(ratio) < _FLOAT_EXACT:
        return value
    with localcontext() as context:
        context.prec = 60
        quotient = Decimal(ratio.numerator) / Decimal(ratio.denominator)
        return quotient.quantize(_DECIMALS, rounding=ROUND_HALF_EVEN).normalize()


def _group_record(row: dict[str, Any], by: Sequence[str]) -> dict[str, Any]:
    row = {**row, "tokens_per_accepted_result": exact_per_accepted(row)}
    record: dict[str, Any] = {}
    outcomes = {name: row[name] for name in OUTCOMES}
    for name, value in row.items():
        if name in by or name in OUTCOMES:
            continue
        if name in _RENAMED:
            record[_RENAMED[name]] = bool(value)
            continue
        base, _, end = name.rpartition("_")
        if base in _INTERVALS and end in ("lo", "hi"):
            if end == "lo":
                pair = [row[f"{base}_lo"], row[f"{base}_hi"]]
                record[f"{base}_ci"] = (
                    None if pair == [None, None] else [json_number(v) for v in pair]
                )
            continue
        record[name] = (
            json_number(value)
            if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)
            else value
        )
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
    warnings: Iterable[Finding] = (),
    checks: Iterable[Check] = (),
) -> dict[str, Any]:
    """The JSON document of `summary`: one view keyed by group, or everything.

    Everything: `views` (keep and drop, keyed by group), `trap`, the totals, `callout`,
    `warnings` (what the loader and the price table said), `checks` (every fair-comparison
    check, those warnings included) and `intervals` (how the 95% intervals were computed).
    """
    if view is not None:
        return view_json(comparison, view)
    from tui_ledger.checks import check_json  # the checks' own JSON (imported when needed)

    trap = {
        label: {
            name: json_number(value) for name, value in row.items() if name not in comparison.by
        }
        for label, row in zip(comparison.labels, comparison.trap.iter_rows(named=True), strict=True)
    }
    document: dict[str, Any] = {
        "by": list(comparison.by),
        "views": {name: view_json(comparison, name) for name in VIEWS},
        "trap": trap,
        "hidden_tokens": comparison.hidden_tokens,
    }
    if comparison.has_cost:
        document["hidden_cost"] = plain_number(comparison.hidden_cost)
    document.update(
        {
            "ranking_flips": comparison.flips,
            "moves": [
                {"group": m.group, "keep_rank": m.keep_rank, "drop_rank": m.drop_rank}
                for m in comparison.moves
            ],
            "callout": callout(comparison),
            "intervals": {
                "level": 0.95,
                "method": comparison.intervals.method,
                "description": comparison.intervals.describe(),
                "bootstrap_resamples": comparison.intervals.resamples,
                "bootstrap_seed": comparison.intervals.seed,
                "bootstrap_below_attempts": comparison.intervals.bootstrap_below,
            },
            "warnings": [_warning_json(w) for w in warnings],
            "checks": [check_json(c) for c in checks],
        }
    )
    return document


def _warning_json(warning: Finding) -> dict[str, Any]:
    return {
        "kind": warning.kind,
        "message": warning.message,
        "count": warning.count,
        "lines": list(warning.lines),
        "sources": list(warning.sources),
    }


# --------------------------------------------------------------------------- tables

_COLUMNS: tuple[tuple[str, str], ...] = (
    ("attempts", "attempts"),
    ("accepted", "accepted"),
    ("pass_rate", "pass rate [95%]"),
    ("missing_usage", "missing usage"),
    ("median_tokens_per_attempt", "median / attempt"),
    ("total_tokens", "total tokens"),
    ("tokens_per_accepted_result", "per accepted [95%]"),
    ("rank", "rank"),
)
_COST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("total_cost", "total cost"),
    ("cost_per_accepted_result", "$ per accepted [95%]"),
)
NOTE_MARK = "†"


def _columns(comparison: Comparison) -> tuple[tuple[str, str], ...]:
    return _COLUMNS + (_COST_COLUMNS if comparison.has_cost else ())


def _with_interval(text: str, row: dict[str, Any], name: str, kind: str) -> str:
    interval = format_interval(row.get(f"{name}_lo"), row.get(f"{name}_hi"), kind)
    return f"{text} {interval}" if interval else text


def _cells(row: dict[str, Any], with_cost: bool = False) -> list[str]:
    per_accepted = exact_per_accepted(row)
    note = NOTE_MARK if row.get("ci_note") else ""
    cells = [
        format_count(row["attempts"]),
        f"{row['accepted']}/{row['attempts']}",
        _with_interval(format_rate(row["pass_rate"]), row, "pass_rate", "rate"),
        format_count(row["missing_usage"]),
        format_tokens(row["median_tokens_per_attempt"]),
        format_tokens(row["total_tokens"]),
        _with_interval(
            format_tokens(per_accepted, lower_bound=bool(row["lower_bound"])),
            row,
            "tokens_per_accepted_result",
            "count",
        )
        + note
        if per_accepted is not None
        else "— (no accepted attempt)",
        format_count(row["rank"]),
    ]
    if with_cost:
        cost = row["cost_per_accepted_result"]
        cells += [
            format_money(row["total_cost"]),
            _with_interval(
                format_money(cost, lower_bound=bool(row["cost_lower_bound"])),
                row,
                "cost_per_accepted_result",
                "money",
            )
            if cost is not None
            else MISSING_TEXT,
        ]
    return cells


MISSING_TEXT = "—"


def _rows(comparison: Comparison, view: View) -> list[list[str]]:
    frame = comparison.view(view)
    return [
        [safe_text(label), *_cells(row, comparison.has_cost)]
        for label, row in zip(comparison.labels, frame.iter_rows(named=True), strict=True)
    ]


def interval_notes(comparison: Comparison, views: Sequence[View] = VIEWS) -> list[str]:
    """The method line, then one line per group whose interval says little (marked †)."""
    if comparison.intervals.method == "none":
        return []
    notes = [comparison.intervals.describe() + "."]
    for view in views:
        frame = comparison.view(view)
        for label, note in zip(comparison.labels, frame["ci_note"], strict=True):
            if note:
                notes.append(f"{NOTE_MARK} {label} ({VIEW_TITLES[view].lower()}): {note}.")
    return notes


def _group_title(comparison: Comparison) -> str:
    return safe_text(" · ".join(comparison.by))  # column names are the file's own text


def _table_text(comparison: Comparison, views: Sequence[View], warnings: list[Finding]) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, width=_TABLE_WIDTH, color_system=None, legacy_windows=False)

    def say(text: str, indent: str = "") -> None:
        # Prose wraps at a reading width; only the tables may be wider.
        wrapped = textwrap.fill(
            text, width=_PROSE_WIDTH, subsequent_indent=indent + "  " if indent else ""
        )
        console.print(Text(indent + wrapped if indent else wrapped), soft_wrap=True)

    for view in views:
        table = Table(
            title=Text(f"{VIEW_TITLES[view]} ({VIEW_GLOSSES[view]})"),
            title_justify="left",
            show_edge=False,
        )
        table.add_column(Text(_group_title(comparison)))
        for _, heading in _columns(comparison):
            table.add_column(Text(heading), justify="right")
        for cells in _rows(comparison, view):
            table.add_row(*(Text(cell) for cell in cells))
        console.print(table)
        console.print()
    if len(views) == 2:
        say(safe_text(callout(comparison)))
        trap = Table(show_edge=False, title=Text("What dropping failures hides"))
        trap.add_column(Text(_group_title(comparison)))
        headings = ["hidden attempts", "hidden tokens", "trap factor", "rank keep→drop"]
        if comparison.has_cost:
            headings += ["hidden cost", "cost trap factor"]
        for heading in headings:
            trap.add_column(Text(heading), justify="right")
        for label, row in zip(
            comparison.labels, comparison.trap.iter_rows(named=True), strict=True
        ):
            cells = [
                safe_text(label),
                format_count(row["hidden_attempts"]),
                format_tokens(row["hidden_tokens"]),
                format_factor(row["trap_factor"]),
                f"{row['keep_rank']}→{row['drop_rank']}",
            ]
            if comparison.has_cost:
                cells += [format_money(row["hidden_cost"]), format_factor(row["cost_trap_factor"])]
            trap.add_row(*(Text(cell) for cell in cells))
        console.print()
        console.print(trap)
    notes = interval_notes(comparison, views)
    if notes:
        console.print()
        for note in notes:
            say(safe_text(note))
    if warnings:
        console.print()
        console.print(Text(f"⚠ {len(warnings)} warning(s) (ledger-tui check explains them):"))
        for warning in warnings:
            say(f"- {safe_text(warning.message)}", indent="  ")
    lines = [line.rstrip() for line in buffer.getvalue().splitlines()]
    return "\n".join(lines).rstrip() + "\n"


_TABLE_WIDTH = 220  # tables take their natural width up to this
_PROSE_WIDTH = 110


def _markdown_cell(text: str) -> str:
    return safe_text(text).replace("\\", "\\\\").replace("|", "\\|")


def _markdown_text(comparison: Comparison, views: Sequence[View], warnings: list[Finding]) -> str:
    columns = _columns(comparison)
    headings = [_group_title(comparison), *(heading for _, heading in columns)]
    lines: list[str] = []
    for view in views:
        lines.append(f"### {VIEW_TITLES[view]} ({VIEW_GLOSSES[view]})")
        lines.append("")
        lines.append("| " + " | ".join(_markdown_cell(h) for h in headings) + " |")
        lines.append("|---|" + "---:|" * len(columns))
        for cells in _rows(comparison, view):
            lines.append("| " + " | ".join(_markdown_cell(cell) for cell in cells) + " |")
        lines.append("")
    if len(views) == 2:
        lines.append(_markdown_cell(callout(comparison)))
        lines.append("")
    notes = interval_notes(comparison, views)
    if notes:
        lines.extend(f"{_markdown_cell(note)}  " for note in notes)
        lines.append("")
    if warnings:
        lines.append(f"**{len(warnings)} warning(s):**")
        lines.append("")
        lines.extend(f"- {_markdown_cell(w.message)}" for w in warnings)
        lines.append("")
    return "\n".join(lines)


def _csv_text(
    comparison: Comparison, views: Sequence[View], *, spreadsheet_safe: bool = False
) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    frame = comparison.keep
    metric_names = [name for name in frame.columns if name not in comparison.by]

    def label(value: Any) -> Any:
        # Group keys and column names are the file's text, printed where a terminal reads.
        text = safe_text(_csv_value(value))
        return neutralise_text(text) if spreadsheet_safe else text

    writer.writerow(["view", *(label(key) for key in comparison.by), *metric_names])
    for view in views:
        for row in comparison.view(view).iter_rows(named=True):
            row["tokens_per_accepted_result"] = exact_per_accepted(row)
            writer.writerow(
                [
                    view,
                    *(label(row[key]) for key in comparison.by),
                    *(_csv_value(row[name]) for name in metric_names),
                ]
            )
    return buffer.getvalue()


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (float, Decimal)):
        number = json_number(value)
        return format(number, "f") if isinstance(number, Decimal) else number
    return value


# Characters JSON may carry raw but a terminal could act on (C1 controls, DEL, bidi and
# zero-width characters); JSON itself already escapes C0 controls.
_JSON_ESCAPES = {
    codepoint: "".join(
        f"\\u{unit:04x}"
        for unit in (
            [codepoint]
            if codepoint < 0x10000
            else [0xD800 + ((codepoint - 0x10000) >> 10), 0xDC00 + ((codepoint - 0x10000) & 0x3FF)]
        )
    )
    for codepoint in UNSAFE_CODEPOINTS
    if codepoint >= 0x20  # json.dumps escapes C0 in strings; outside them, \n is layout
}


def json_text(document: Any) -> str:
    """`document` as indented JSON that is safe to print and exact to read back.

    Non-ASCII text stays readable, but every character `safe_text` would escape is written as
    a `\\uXXXX` escape (valid JSON, read back as the same string), so printing the JSON
    cannot act on a terminal. A `Decimal` (an exact ratio past 2**53) is written with all
    its digits, never through a float.
    """
    exact: list[str] = []
    nonce = secrets.token_hex(8)  # no string from a file can forge a marker

    def encode(value: Any) -> Any:
        if isinstance(value, Decimal):
            exact.append(format(value, "f"))
            return f"\x00{nonce}:{len(exact) - 1}\x00"
        raise TypeError(f"{type(value).__name__} is not JSON")

    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False, default=encode)
    text = text.translate(_JSON_ESCAPES)
    for index, digits in enumerate(exact):
        # The marker's NULs are `\u0000` escapes now; the quoted marker becomes a number.
        text = text.replace(f'"\\u0000{nonce}:{index}\\u0000"', digits, 1)
    return text + "\n"


def render_summary(
    comparison: Comparison,
    fmt: str = "table",
    view: View | None = None,
    warnings: Iterable[Finding] = (),
    checks: Iterable[Check] = (),
    *,
    spreadsheet_safe: bool = False,
) -> str:
    """The summary as text in one of SUMMARY_FORMATS; one view, or both with the trap.

    `checks` (from `checks.run_checks`) go into the JSON document; the text formats list the
    `warnings` and point at `ledger-tui check`.

    Every format is safe to print on a terminal. Table, markdown and CSV show a file's text
    through `safe_text` (escapes visible, as `\\x1b`); JSON keeps the exact strings (it is
    data) with every character that could act on a terminal written as a `\\uXXXX` escape,
    which any JSON reader turns back into the same string. `spreadsheet_safe` neutralises
    formulas in the CSV's group labels (see `neutralise_formulas`).
    """
    warning_list = list(warnings)
    views: tuple[View, ...] = (view,) if view is not None else VIEWS
    if fmt == "json":
        return json_text(summary_json(comparison, view, warning_list, list(checks)))
    if fmt == "csv":
        return _csv_text(comparison, views, spreadsheet_safe=spreadsheet_safe)
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
    """Write attempts as csv, parquet, jsonl or json, atomically, never overwriting unasked.

    The data is written exactly (CSV carries lists and objects as their JSON text).
    `spreadsheet_safe` (CSV only) neutralises every cell, and column name, that a
    spreadsheet would run as a formula: see `neutralise_formulas`.
    """
    target = Path(path)
    chosen = fmt or format_for_path(target, ATTEMPT_FORMATS)
    writers = {
        "csv": lambda handle: _csv_file_ready(frame, spreadsheet_safe).write_csv(handle),
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


def _csv_file_ready(frame: pl.DataFrame, spreadsheet_safe: bool) -> pl.DataFrame:
    """CSV holds no nested values: lists and objects become their JSON text."""
    ready = _csv_ready(frame)
    nested = [name for name, dtype in ready.schema.items() if dtype.is_nested()]
    if nested:
        ready = ready.with_columns(
            pl.when(pl.col(name).is_not_null())
            .then(
                pl.struct(pl.col(name).alias("v"))
                .struct.json_encode()
                .str.strip_prefix('{"v":')
                .str.strip_suffix("}")
            )
            .alias(name)
            for name in nested
        )
    binary = [name for name, dtype in ready.schema.items() if dtype == pl.Binary]
    if binary:
        ready = ready.with_columns(pl.col(name).bin.encode("hex") for name in binary)
    return neutralise_formulas(ready) if spreadsheet_safe else ready


# A spreadsheet runs a cell as a formula when it starts with one of these (OWASP's list, and
# the full-width forms some spreadsheets also accept); tab and CR hide a formula after them.
_FORMULA_STARTS = "=+-@\t\r\uff1d\uff0b\uff0d\uff20"
_FORMULA_PATTERN = "^[" + "".join(f"\\x{{{ord(char):x}}}" for char in _FORMULA_STARTS) + "]"


def neutralise_text(text: str) -> str:
    """`text` with a leading apostrophe if a spreadsheet would run it as a formula."""
    return "'" + text if text[:1] and text[0] in _FORMULA_STARTS else text


def neutralise_formulas(frame: pl.DataFrame) -> pl.DataFrame:
    """Text cells, and column names, a spreadsheet would run as formulas get a leading
    apostrophe (`=HYPERLINK(...)` -> `'=HYPERLINK(...)`): the documented `--spreadsheet-safe`.

    Cells that start with = + - @ (or their full-width forms), a tab or a carriage return
    are text to a person but code to a spreadsheet. Numbers stay numbers: a negative number
    in a numeric column is not text. Category columns are neutralised as text.
    """
    text = frame.with_columns(
        pl.col(name).cast(pl.String)
        for name, dtype in frame.schema.items()
        if isinstance(dtype, (pl.Enum, pl.Categorical))
    )
    text = text.with_columns(
        pl.when(pl.col(name).str.contains(_FORMULA_PATTERN))
        .then(pl.lit("'") + pl.col(name))
        .otherwise(pl.col(name))
        .alias(name)
        for name, dtype in text.schema.items()
        if dtype == pl.String
    )
    renamed = {name: neutralise_text(name) for name in text.columns}
    if any(new != old for old, new in renamed.items()):
        text = text.rename(renamed)
    return text


def _write_atomic(target: Path, write: Any, overwrite: bool) -> Path:
    """Write through a temporary file in the target's folder, then move it into place.

    A reader never sees a half-written file, and a failure leaves the target as it was.
    Without `overwrite` the move itself refuses an existing file (a hard link, which fails
    if the name exists), so a file that appears meanwhile is not replaced either.
    """
    if target.is_dir():
        raise ExportError(f"{target}: is a folder; name a file to write")
    if (target.exists() or target.is_symlink()) and not overwrite:
        raise ExportError(f"{target}: already exists; choose another name or allow overwriting")
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise ExportError(f"{target}: folder {directory} does not exist")
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    except OSError as error:
        raise ExportError(f"{target}: cannot write in {directory} ({error.strerror})") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file private (0600); give it the mode a new file would have.
        os.chmod(temporary, _new_file_mode())
        if overwrite:
            os.replace(temporary, target)
        else:
            _link_new(Path(temporary), target)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            reason = error.strerror or str(error)
            raise ExportError(f"{target}: could not be written ({reason})") from None
        raise
    return target


def _link_new(temporary: Path, target: Path) -> None:
    """Move `temporary` to `target` only if `target` does not exist, atomically."""
    try:
        os.link(temporary, target)
    except FileExistsError:
        raise ExportError(f"{target}: appeared while writing; nothing was replaced") from None
    except OSError:
        # A filesystem without hard links: check, then rename (a narrow race remains).
        if target.exists():
            raise ExportError(f"{target}: appeared while writing; nothing was replaced") from None
        os.replace(temporary, target)
        return
    temporary.unlink()


def _new_file_mode() -> int:
    """0o666 less the process's umask, read without changing it (`os.umask` would, for a
    moment, for every thread)."""
    mask = 0o022
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for row in status:
                if row.startswith("Umask:"):
                    mask = int(row.split()[1], 8)
                    break
    except (OSError, ValueError, IndexError):
        pass
    return 0o666 & ~mask


# --------------------------------------------------------------------------- Pareto SVG

_PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
_FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
_WIDTH, _HEIGHT = 880, 560
_LEFT, _RIGHT, _TOP, _BOTTOM = 84, 40, 92, 96
_LABEL_LIMIT = 30  # past this many groups only frontier points are labelled


def _svg_text(value: object) -> str:
    """Text for an SVG element: visible escapes for control characters, then XML-escaped."""
    # Imported here: xml.sax pulls in urllib (about 5 ms on every start, `summary` included).
    from xml.sax.saxutils import escape

    return escape(safe_text(value))


def _nice_step(span: float, target: int = 6) -> float:
    raw = span / max(target, 1)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def log_axis_bounds(values: Sequence[float]) -> tuple[float, float] | None:
    """The decades a spend axis spans when it should be log scale, or None for linear.

    Both Pareto charts (this SVG and the app's) use it, so they agree on when spend per
    accepted result spans enough (more than 20x) to need a log axis.
    """
    positive = [v for v in values if v > 0]
    if not positive or max(positive) / min(positive) <= 20:
        return None
    return 10 ** math.floor(math.log10(min(positive))), 10 ** math.ceil(math.log10(max(positive)))


class _Axis:
    """Maps spend per accepted result to x: linear from 0, or log10 for wide ranges."""

    def __init__(self, values: Sequence[float]) -> None:
        bounds = log_axis_bounds(values)
        self.log = bounds is not None
        if bounds is not None:
            self.low, self.high = bounds
        else:
            self.low = 0.0
            top = max(values) if values else 1.0
            step = _nice_step(top * 1.1 if top > 0 else 1.0)
            self.high = step * math.ceil((top * 1.1 if top > 0 else 1.0) / step)
            self.step = step

    def x(self, value: float) -> float:
        span = _WIDTH - _LEFT - _RIGHT
        if self.log:
            value = max(value, self.low)
            share = (math.log10(value) - math.log10(self.low)) / (
                math.log10(self.high) - math.log10(self.low)
            )
        else:
            share = (value - self.low) / (self.high - self.low) if self.high > self.low else 0
        return _LEFT + share * span

    def ticks(self) -> list[float]:
        if self.log:
            ticks: list[float] = []
            power = self.low
            while power <= self.high * 1.0001:
                ticks.extend(t for t in (power, 2 * power, 5 * power) if t <= self.high * 1.0001)
                power *= 10
            return ticks
        count = round((self.high - self.low) / self.step)
        return [self.low + i * self.step for i in range(count + 1)]


def _y(rate: float) -> float:
    return _TOP + (1.0 - rate) * (_HEIGHT - _TOP - _BOTTOM)


def pareto_svg(comparison: Comparison, metric: ParetoMetric = "tokens") -> str:
    """A standalone SVG for a slide: pass rate against spend per accepted result.

    Filled points are the honest figures (failures kept); hollow dashed ghosts are where the
    same groups land when failures are dropped, joined to their real point. The line joins
    the keep-view frontier (no group is both cheaper and more often accepted). Groups with
    no accepted attempt cannot be placed and are named below the chart. All text is escaped.
    """
    from xml.sax.saxutils import quoteattr

    points = pareto_points(comparison, metric)
    fmt = format_money if metric == "cost" else format_compact
    unit = "cost (USD)" if metric == "cost" else "tokens"
    plotted = points.filter(
        pl.col("per_accepted").is_not_null() & pl.col("per_accepted").is_finite()
    )
    axis = _Axis(plotted["per_accepted"].to_list())
    colours = {label: _PALETTE[i % len(_PALETTE)] for i, label in enumerate(comparison.labels)}
    by_view = {
        view: {
            row["group"]: row
            for row in plotted.filter(pl.col("view") == view).iter_rows(named=True)
        }
        for view in VIEWS
    }
    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" font-family={quoteattr(_FONT)} font-size="13">',
        f"<title>{_svg_text(f'Pass rate vs {unit} per accepted result')}</title>",
        f'<rect width="{_WIDTH}" height="{_HEIGHT}" fill="#ffffff"/>',
        f'<text x="{_LEFT}" y="34" font-size="20" font-weight="600" fill="#222">'
        f"{_svg_text(f'Pass rate vs {unit} per accepted result')}</text>",
        f'<text x="{_LEFT}" y="58" fill="#555">'
        f"{_svg_text('● failures kept (honest)    ○ failures dropped (the trap)    ')}"
        f"{_svg_text('— frontier with failures kept')}</text>",
    ]
    # Axes and grid.
    bottom, right = _HEIGHT - _BOTTOM, _WIDTH - _RIGHT
    for rate in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(rate)
        out.append(f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#e6e6e6"/>')
        out.append(
            f'<text x="{_LEFT - 8}" y="{y + 4:.1f}" text-anchor="end" fill="#555">'
            f"{rate * 100:.0f}%</text>"
        )
    for tick in axis.ticks():
        x = axis.x(tick)
        out.append(f'<line x1="{x:.1f}" y1="{_TOP}" x2="{x:.1f}" y2="{bottom}" stroke="#f0f0f0"/>')
        out.append(
            f'<text x="{x:.1f}" y="{bottom + 18}" text-anchor="middle" fill="#555">'
            f"{_svg_text(fmt(tick))}</text>"
        )
    out.append(
        f'<line x1="{_LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#888"/>'
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{bottom}" stroke="#888"/>'
    )
    scale = " (log scale)" if axis.log else ""
    x_title = f"{unit[0].upper()}{unit[1:]} per accepted result{scale}; lower is better"
    out.append(
        f'<text x="{(_LEFT + right) / 2:.1f}" y="{bottom + 42}" text-anchor="middle" '
        f'fill="#333">{_svg_text(x_title)}</text>'
    )
    out.append(
        f'<text transform="translate(22 {(_TOP + bottom) / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" fill="#333">{_svg_text("Pass rate (higher is better)")}</text>'
    )
    # The keep-view frontier.
    frontier = sorted(
        (row for row in by_view["keep"].values() if row["frontier"]),
        key=lambda row: row["per_accepted"],
    )
    if len(frontier) > 1:
        path = " ".join(
            f"{axis.x(row['per_accepted']):.1f},{_y(row['pass_rate']):.1f}" for row in frontier
        )
        out.append(f'<polyline points="{path}" fill="none" stroke="#333" stroke-width="1.5"/>')
    # Ghost -> real, then the points, then the labels on top.
    for label in comparison.labels:
        real, ghost = by_view["keep"].get(label), by_view["drop"].get(label)
        if real is not None and ghost is not None:
            out.append(
                f'<line x1="{axis.x(ghost["per_accepted"]):.1f}" y1="{_y(ghost["pass_rate"]):.1f}" '
                f'x2="{axis.x(real["per_accepted"]):.1f}" y2="{_y(real["pass_rate"]):.1f}" '
                f'stroke={quoteattr(colours[label])} stroke-opacity="0.45" stroke-dasharray="3 3"/>'
            )
    labelled = len(comparison.labels) <= _LABEL_LIMIT
    for label in comparison.labels:
        colour = quoteattr(colours[label])
        ghost = by_view["drop"].get(label)
        if ghost is not None:
            tip = f"{label}, failures dropped: {fmt(ghost['per_accepted'])} per accepted result"
            gx, gy = axis.x(ghost["per_accepted"]), _y(ghost["pass_rate"])
            out.append(
                f'<circle cx="{gx:.1f}" cy="{gy:.1f}" r="6" fill="none" stroke={colour} '
                'stroke-width="1.5" stroke-dasharray="2 2">'
                f"<title>{_svg_text(tip)}</title></circle>"
            )
        real = by_view["keep"].get(label)
        if real is None:
            continue
        value = fmt(real["per_accepted"])
        shown = f"≥ {value}" if real["lower_bound"] else value
        out.append(
            f'<circle cx="{axis.x(real["per_accepted"]):.1f}" cy="{_y(real["pass_rate"]):.1f}" '
            f'r="6.5" fill={colour} stroke="#ffffff" stroke-width="1">'
            f"<title>{_svg_text(f'{label}, failures kept: {shown} per accepted result')}"
            "</title></circle>"
        )
        if labelled or real["frontier"]:
            out.append(
                f'<text x="{axis.x(real["per_accepted"]) + 10:.1f}" '
                f'y="{_y(real["pass_rate"]) - 8:.1f}" fill="#222">'
                f"{_svg_text(f'{label} ({shown})')}</text>"
            )
    unplaced = [
        label
        for label in comparison.labels
        if label not in by_view["keep"] and label not in by_view["drop"]
    ]
    footer = []
    if unplaced:
        footer.append("Not plotted (no accepted attempt): " + ", ".join(unplaced))
    if any(row["lower_bound"] for row in by_view["keep"].values()):
        footer.append("≥: some usage or cost is missing, so the figure is a lower bound")
    for index, line in enumerate(footer):
        out.append(
            f'<text x="{_LEFT}" y="{_HEIGHT - 24 + index * 16 - 16 * (len(footer) - 1)}" '
            f'fill="#666" font-size="12">{_svg_text(line)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
