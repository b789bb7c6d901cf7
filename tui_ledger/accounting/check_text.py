"""What a fair-comparison check is and how it reads: the `Check` (a finding: kind, severity,
words, count, details, example places), which checks are warnings proper, the group and task
names a sentence shows (terminal-safe, cut, only the few it names made), and the lines and
JSON `check` and the reports print. The checks themselves are in checks.py (from the cells)
and duplicate_checks.py (from the rows).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from tui_ledger.accounting.detail_lines import DetailLines
from tui_ledger.findings import Finding
from tui_ledger.schema import LINE_COLUMN, SOURCE_COLUMN
from tui_ledger.text.textsafe import safe_label
from tui_ledger.text.wording import listing

Severity = Literal["warning", "info"]
SEVERITIES: tuple[str, ...] = ("warning", "info")
EXAMPLES = 5


def is_warning(item: object) -> bool:
    """A warning proper (counted in `⚠ N warnings`), not an informational note: a `Check` of
    severity info is a note; anything without a severity (a load or price warning) is a warning.

    Here rather than with the warnings panel so that counting them imports no screen."""
    return getattr(item, "severity", "warning") != "info"


def warnings_of(checks: Iterable[Finding]) -> list[Finding]:
    """The one warnings list: the checks that are warnings proper (`is_warning`), in order.
    `summary` (every format), `check`, every export and the app's `w` panel count these."""
    return [check for check in checks if is_warning(check)]


@dataclass(frozen=True)
class Check:
    """One finding: what kind, how serious, in plain words, how many rows, and examples."""

    kind: str
    severity: Severity
    message: str
    count: int
    details: Sequence[str] = field(default_factory=list)  # often `DetailLines`, made when read
    lines: tuple[int, ...] = ()
    sources: tuple[str, ...] = ()


def _label(keys: Sequence[str]) -> pl.Expr:
    """A group's name as people read it (as `ledger.group_labels`), as an expression."""
    parts = [pl.col(name).cast(pl.String).fill_null("—") for name in keys]
    return pl.concat_str(parts, separator=" · ") if len(parts) > 1 else parts[0]


def _examples(rows: pl.DataFrame) -> tuple[tuple[int, ...], tuple[str, ...]]:
    if LINE_COLUMN not in rows.columns:
        return (), ()
    head = rows.head(EXAMPLES)
    lines = tuple(int(v) for v in head[LINE_COLUMN].to_list() if v is not None)
    if SOURCE_COLUMN not in rows.columns or len(lines) != head.height:
        return lines, ()
    return lines, tuple(str(v) for v in head[SOURCE_COLUMN].to_list())


def _name(text: object) -> str:
    """A group's or task's name as a sentence shows it: terminal-safe, cut (`safe_label`)."""
    if isinstance(text, str) and len(text) <= _PLAIN_NAME and text.isascii() and text.isprintable():
        return text  # the common case, 200,000 times over: nothing to escape or cut
    return safe_label(text)


_PLAIN_NAME = 40  # printable ASCII this short is shown as it is


def _names(labels: pl.Series | Sequence[object]) -> str:
    """The first few labels in a sentence, `and N more` for the rest (only those few made)."""
    head = labels.head(EXAMPLES) if isinstance(labels, pl.Series) else labels[:EXAMPLES]
    return listing([_name(label) for label in head], limit=EXAMPLES, total=len(labels))


_PLAIN_PATTERN = rf"^[ -~]{{0,{_PLAIN_NAME}}}$"  # printable ASCII, `_PLAIN_NAME` at most


def _name_column(texts: pl.Series) -> pl.Series:
    """`_name` of every text in a column: the plain ones (`_name`'s common case) are kept as
    they are in one polars pass; only the others go through `_name` one by one."""
    texts = texts.cast(pl.String)
    plain = texts.str.contains(_PLAIN_PATTERN).fill_null(False)
    others = (~plain).arg_true()
    if len(others) == 0:
        return texts
    return texts.scatter(others, [_name(text) for text in texts.gather(others).to_list()])


def _details(frame: pl.DataFrame, *parts: pl.Expr | str) -> DetailLines:
    """One detail line per row of `frame`: its `name` column through `_name`, then `parts`
    (expressions, or literal text), concatenated in one polars pass over the rows read."""
    pieces = [pl.lit(part) if isinstance(part, str) else part for part in parts]

    def write(rows: pl.DataFrame) -> pl.Series:
        return (
            rows.with_columns(_name_column(rows.get_column("name")).alias("name"))
            .select(pl.concat_str(pl.col("name"), *pieces))
            .to_series()
        )

    return DetailLines(frame, write)


NO_ISSUE = "No fair-comparison issue found."


def check_lines(checks: Sequence[Check], units: Mapping[str, str] | None = None) -> list[str]:
    """The checks as `ledger-tui check` prints them: one line each, details indented.

    `units` (the load report's) names the sources that hold one attempt ("file"): their
    examples are the file alone, a line number would say nothing."""
    if not checks:
        return [NO_ISSUE]
    lines: list[str] = []
    for check in checks:
        lines.append(f"{check.severity.upper()} ({check.kind}, {check.count:,}): {check.message}")
        lines.extend(f"    {detail}" for detail in check.details)
        if check.lines:
            lines.append(f"    e.g. {_places(check.lines, check.sources, units or {})}")
    return lines


def _places(lines: Sequence[int], sources: Sequence[str], units: Mapping[str, str]) -> str:
    """Example places: `lines 2, 5` in one file; `file:line` where the rows span several files;
    a file that holds one attempt by its name alone."""
    if sources and all(units.get(source) == "file" for source in sources):
        return ", ".join(dict.fromkeys(sources))
    if not sources or len(set(sources)) <= 1:
        where = f" of {sources[0]}" if sources else ""
        return f"lines {', '.join(map(str, lines))}{where}"
    return ", ".join(f"{source}:{line}" for source, line in zip(sources, lines, strict=False))


def check_json(check: Check) -> dict[str, Any]:
    """A check as a JSON object."""
    return {
        "kind": check.kind,
        "severity": check.severity,
        "message": check.message,
        "count": check.count,
        "details": list(check.details),
        "lines": list(check.lines),
        "sources": list(check.sources),
    }
