"""A cap's words and numbers in the reports: what `summary --cap`, `check --cap` and
`summary --cap-sweep` add to the summary they print.

The figures themselves are the accounting's (`accounting.cap`: the summary beside them is
already the capped one); this module only says them: per group `cap: {tokens, attempts_cut,
accepted_lost, tokens_saved}` in the JSON beside the usual figures, a short table in the text
formats, and the sweep's best caps and curves.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import polars as pl

from tui_ledger.accounting.cap import Cap
from tui_ledger.accounting.cap_sweep import Sweep
from tui_ledger.accounting.comparison import Comparison, group_labels
from tui_ledger.schema import VIEWS
from tui_ledger.text.numbers import format_count
from tui_ledger.text.textsafe import safe_text


def cap_headline(cap: Cap) -> str:
    """The line every capped output starts with, so no one reads capped figures as recorded."""
    return (
        f"CAP {cap.words}{' tokens' if cap.unit == 'tokens' else ''} per attempt: every "
        "figure below is as if each attempt had been stopped at the cap (an accepted attempt "
        "above it counts as failed; missing usage stays missing)."
    )


def _by_label(figures: pl.DataFrame, by: Sequence[str]) -> dict[str, dict[str, Any]]:
    labels = group_labels(figures, by)
    names = [name for name in figures.columns if name not in by]
    return {
        label: {name: _plain(row[name]) for name in names}
        for label, row in zip(labels, figures.iter_rows(named=True), strict=True)
    }


def _plain(value: Any) -> Any:
    """A figure for JSON: Int128 sums as int, floats as they are, None as null."""
    return int(value) if isinstance(value, int) else value


def cap_json(
    document: dict[str, Any], comparison: Comparison, cap: Cap, figures: pl.DataFrame
) -> dict[str, Any]:
    """The summary's JSON document with the cap: `cap` at the top (the rule, and the totals;
    not in one view's document, which is keyed by group) and, per group in each view,
    `cap: {tokens, attempts_cut, accepted_lost, tokens_saved, accepted_unknown}` beside the
    (capped) figures."""
    per_group = _by_label(figures, comparison.by)
    totals = {
        name: _plain(figures.get_column(name).sum())
        for name in ("attempts_cut", "accepted_lost", "tokens_saved", "accepted_unknown")
    }
    views = document.get("views")
    if isinstance(views, dict):
        document["cap"] = {**cap.as_json(), **totals}
        targets = [views[name] for name in VIEWS]
    else:  # one view, keyed by group: the cap is said in each group's own `cap`
        targets = [document]
    for records in targets:
        for label, record in records.items():
            if isinstance(record, dict) and label in per_group:
                record["cap"] = per_group[label]
    return document


def cap_text(comparison: Comparison, cap: Cap, figures: pl.DataFrame, markdown: bool) -> str:
    """What the cap did per group, as a short table (or a markdown one)."""
    per_group = _by_label(figures, comparison.by)
    headings = ["group", "capped tokens", "attempts cut", "accepted lost", "tokens saved"]
    rows = [
        [
            safe_text(label),
            format_count(record["tokens"]),
            format_count(record["attempts_cut"]),
            format_count(record["accepted_lost"]),
            format_count(record["tokens_saved"]),
        ]
        for label, record in per_group.items()
    ]
    unknown = int(figures.get_column("accepted_unknown").sum() or 0)
    note = (
        f"{format_count(unknown)} accepted attempt(s) have missing usage: the cap could have "
        "cut them too, so their groups' figures stay lower bounds."
        if unknown
        else ""
    )
    if markdown:
        lines = [
            f"**What the cap of {cap.words} did**",
            "",
            "| " + " | ".join(headings) + " |",
            "|" + "---|" * len(headings),
            *["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows],
        ]
        return "\n".join([*lines, *(["", note] if note else [])]) + "\n"
    return _plain_table(f"What the cap of {cap.words} did", headings, rows, note)


def _plain_table(title: str, headings: list[str], rows: list[list[str]], note: str) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, width=160, color_system=None, legacy_windows=False)
    table = Table(title=Text(title), title_justify="left", show_edge=False)
    for index, heading in enumerate(headings):
        table.add_column(Text(heading), justify="left" if index == 0 else "right", no_wrap=True)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)
    if note:
        console.print(Text(note))
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def sweep_json(sweep: Sweep) -> dict[str, Any]:
    """The sweep as JSON: `caps` (shared, ascending) and per group `best: {cap,
    tokens_per_accepted_result, accepted, accepted_lost}` and the curve at `caps`."""
    by = list(sweep.by)
    labels = group_labels(sweep.best, by)
    curves: dict[str, dict[str, list[Any]]] = {}
    curve_labels = group_labels(sweep.curve, by)
    for label, row in zip(curve_labels, sweep.curve.iter_rows(named=True), strict=True):
        curve = curves.setdefault(
            label, {"tokens_per_accepted_result": [], "accepted": [], "tokens": []}
        )
        curve["tokens_per_accepted_result"].append(row["tokens_per_accepted_result"])
        curve["accepted"].append(row["accepted"])
        curve["tokens"].append(_plain(row["tokens"]))
    groups = {
        label: {
            "best": None
            if row["cap"] is None
            else {
                "cap": int(row["cap"]),
                "tokens_per_accepted_result": row["tokens_per_accepted_result"],
                "accepted": row["accepted"],
                "accepted_lost": row["accepted_lost"],
            },
            "curve": curves.get(label, {}),
        }
        for label, row in zip(labels, sweep.best.iter_rows(named=True), strict=True)
    }
    return {"by": by, "caps": sweep.caps, "groups": groups}


def sweep_text(sweep: Sweep) -> str:
    """The best cap of each group as a table (the curve is in the JSON and the chart)."""
    from tui_ledger.text.numbers import format_tokens

    labels = group_labels(sweep.best, list(sweep.by))
    rows = []
    for label, row in zip(labels, sweep.best.iter_rows(named=True), strict=True):
        best = row["cap"] is not None
        rows.append(
            [
                safe_text(label),
                format_count(row["cap"]) if best else "—",
                format_tokens(row["tokens_per_accepted_result"]) if best else "—",
                format_count(row["accepted"]) if best else "—",
                format_count(row["accepted_lost"]) if best else "—",
            ]
        )
    headings = ["group", "best cap", "tokens/accepted", "accepted kept", "accepted lost"]
    note = (
        "The best cap makes tokens per accepted result smallest; it is always one of the "
        "group's accepted attempts' token counts (exact, not sampled)."
    )
    return _plain_table("Best token cap per group", headings, rows, note)


def capped_summary(
    comparison: Comparison,
    cap: Cap | None,
    uncapped: pl.DataFrame | pl.LazyFrame,
    *,
    fmt: str,
    view: Any,
    warnings: Sequence[Any],
    checks: Sequence[Any],
    width: int | None,
    spreadsheet_safe: bool,
    sweep: bool,
    svg: tuple[str, bool, Sequence[str]] | None,
) -> str:
    """`summary` with `--cap` (the summary of the capped attempts, `comparison`, with what the
    cap did), `--cap-sweep` (the sweep of `uncapped` instead of the summary) and `--cap-svg`
    (`svg`: the path, whether to replace it, the inputs it must never overwrite)."""
    import sys

    from tui_ledger.accounting.cap import cap_figures
    from tui_ledger.accounting.cap_sweep import cap_sweep
    from tui_ledger.reports.report import json_text, render_summary

    by = list(comparison.by)
    swept = cap_sweep(uncapped, by) if sweep or svg is not None else None
    if svg is not None and swept is not None:
        from tui_ledger.exports.cap_svg import cap_svg
        from tui_ledger.exports.export_files import write_text_atomic

        path, overwrite, protected = svg
        target = write_text_atomic(path, cap_svg(swept), overwrite=overwrite, protected=protected)
        print(f"wrote the cap sweep chart to {target}", file=sys.stderr)
    if sweep and swept is not None:
        return json_text(sweep_json(swept)) if fmt == "json" else sweep_text(swept)
    if cap is None:
        return render_summary(
            comparison,
            fmt,
            view,
            warnings,
            checks,
            spreadsheet_safe=spreadsheet_safe,
            width=width,
        )
    figures = cap_figures(uncapped, cap, by)
    return render_capped(
        comparison,
        cap,
        figures,
        fmt=fmt,
        view=view,
        warnings=warnings,
        checks=checks,
        width=width,
        spreadsheet_safe=spreadsheet_safe,
    )


def render_capped(
    comparison: Comparison,
    cap: Cap,
    figures: pl.DataFrame,
    *,
    fmt: str,
    view: Any = None,
    warnings: Sequence[Any] = (),
    checks: Sequence[Any] = (),
    width: int | None = None,
    spreadsheet_safe: bool = False,
) -> str:
    """The summary of a capped comparison in `fmt` with what the cap did (`figures`:
    `cap.cap_figures`): the JSON with `cap` blocks, the text formats headed by the cap and
    followed by its table; the CSV with the cap and its figures as columns of every row (what
    `summary --cap` and the app's export write)."""
    from tui_ledger.reports.report import json_text, render_summary, summary_json

    if fmt == "json":
        document = summary_json(comparison, view, warnings, checks)
        return json_text(cap_json(document, comparison, cap, figures))
    text = render_summary(
        comparison, fmt, view, warnings, checks, spreadsheet_safe=spreadsheet_safe, width=width
    )
    if fmt == "csv":
        return _csv_with_cap(text, cap, figures, comparison.by)
    markdown = fmt == "markdown"
    head = f"**{cap_headline(cap)}**\n\n" if markdown else f"{cap_headline(cap)}\n\n"
    return head + text + "\n" + cap_text(comparison, cap, figures, markdown)


def _csv_with_cap(text: str, cap: Cap, figures: pl.DataFrame, by: Sequence[str]) -> str:
    """The summary's CSV with `cap` and `cap_unit` (the rule: 1000000 tokens, 2.5 usd) and
    `cap_*` (what it did to the row's group) appended to every row. Rows are each view's
    groups in key order, as `figures`."""
    import csv

    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return text
    names = [name for name in figures.columns if name not in by]
    values = figures.select(names).rows()
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*rows[0], "cap", "cap_unit", *(f"cap_{name}" for name in names)])
    seen: dict[str, int] = {}
    for row in rows[1:]:
        index = seen.get(row[0], 0)
        seen[row[0]] = index + 1
        extra = values[index] if index < len(values) else (None,) * len(names)
        cells = ("" if value is None else value for value in extra)
        writer.writerow([*row, cap.amount, cap.unit, *cells])
    return out.getvalue()
