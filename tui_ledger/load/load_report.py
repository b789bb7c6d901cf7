"""What a load gives back and says: `LoadWarning`, `LoadReport`, `Ledger`, and the report built
from what every file's validation counted (`LoadError` is `errors`', re-exported here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from tui_ledger import schema
from tui_ledger.load.errors import LoadError, shown
from tui_ledger.load.helper_columns import EXAMPLES
from tui_ledger.load.warning_rules import WARNING_KINDS, warning_message
from tui_ledger.text.textsafe import safe_text
from tui_ledger.text.wording import listing, plural

__all__ = ["WHOLE_FILE", "Counted", "Ledger", "LoadError", "LoadReport", "LoadWarning", "shown"]

if TYPE_CHECKING:
    from tui_ledger.load.inputs import Input
    from tui_ledger.load.prepare import Prepared


@dataclass(frozen=True)
class LoadWarning:
    """Something loaded but suspicious, counted: `count` rows, up to 5 example `lines`.

    `sources` names the file of each example line (same length as `lines`).
    """

    kind: str
    message: str
    count: int
    lines: tuple[int, ...] = ()
    sources: tuple[str, ...] = ()


@dataclass
class LoadReport:
    """What a load read, mapped, derived and warned about; `lines()` says it in plain words.

    `units` tells, per source, what its line numbers count: "line", "record" or "row".
    """

    files: list[str]
    rows: int
    mapping: dict[str, str]
    derived: list[str]
    warnings: list[LoadWarning]
    units: dict[str, str] = field(default_factory=dict)
    conventions: list[str] = field(default_factory=list)
    """Which token-bucket convention each importer read, and why (one sentence each)."""

    def lines(self) -> list[str]:
        """The report `ledger-tui check` prints, one sentence per line."""
        out: list[str] = []
        if len(self.files) == 1:
            out.append(f"Read {self.files[0]}.")
        else:
            out.append(f"Read {len(self.files)} files: {', '.join(self.files)}.")
        out.append(f"{plural(self.rows, 'attempt')}.")
        if self.mapping:
            pairs = [
                canonical if canonical == source else f"{canonical} from {source}"
                for canonical, source in self.mapping.items()
            ]
            out.append(f"Columns: {'; '.join(pairs)}.")
        out.extend(f"Derived: {sentence}." for sentence in self.derived)
        out.extend(f"Convention: {sentence}." for sentence in self.conventions)
        if not self.warnings:
            out.append("No warnings.")
        for warning in self.warnings:
            where = self._where(warning)
            out.append(f"Warning ({warning.kind}, {warning.count}): {warning.message}{where}")
        # File and column names are the file's own text: shown, never obeyed by a terminal.
        return [safe_text(line) for line in out]

    def _where(self, warning: LoadWarning) -> str:
        if not warning.lines:
            return ""
        by_source: dict[str, list[int]] = {}
        sources = warning.sources or ("",) * len(warning.lines)
        for source, line in zip(sources, warning.lines, strict=True):
            by_source.setdefault(source, []).append(line)
        parts = []
        for source, numbers in by_source.items():
            unit = self.units.get(source, "line")
            if unit == WHOLE_FILE and source:
                parts.append(source)  # one attempt per file: a line number would say nothing
                continue
            label = unit if len(numbers) == 1 else f"{unit}s"
            several = len(self.files) > 1 or len(self.units) > 1
            prefix = f"{source} " if source and several else ""
            parts.append(f"{prefix}{label} {', '.join(map(str, numbers))}")
        more = " and more" if warning.count > len(warning.lines) else ""
        return f" (e.g. {'; '.join(parts)}{more})"


WHOLE_FILE = "file"
"""The unit of a source that holds one attempt (a harness's trial file): examples name the
file alone, since its line number says nothing."""


@dataclass
class Ledger:
    """The validated attempts (layout in docs/ARCHITECTURE.md) and the report of their load."""

    attempts: pl.DataFrame
    report: LoadReport


@dataclass(frozen=True)
class Counted:
    """A warning as one validation pass counted it: how many rows, and (source, line) examples.
    `build_report` adds up those of every file and words them."""

    kind: str
    count: int
    examples: tuple[tuple[str, int], ...]


def build_report(
    inputs: list[Input],
    frames: list[Prepared],
    findings: list[Counted],
    derived: list[tuple[str, str]],
    units: dict[str, str],
    rows: int,
) -> LoadReport:
    """The report of a load: the files, the columns mapped, what was derived, the warnings."""
    files = [
        item.display if item.importer is None else f"{item.display} ({item.importer.name})"
        for item in inputs
    ]
    mapping: dict[str, list[str]] = {}
    for prepared in frames:
        for canonical, name in prepared.mapping.items():
            heading = prepared.opened.duplicates.get(name, name)
            if heading not in mapping.setdefault(canonical, []):
                mapping[canonical].append(heading)
    ordered = {
        canonical: " / ".join(mapping[canonical])
        for canonical in schema.CANONICAL_ORDER
        if canonical in mapping
    }
    sentences: dict[str, list[str]] = {}
    for sentence, display in derived:
        if display not in sentences.setdefault(sentence, []):
            sentences[sentence].append(display)
    everyone = len(inputs)
    said = [
        sentence if len(where) == everyone else f"{sentence} (in {listing(where, limit=3)})"
        for sentence, where in sentences.items()
    ]
    merged: dict[str, tuple[int, list[tuple[str, int]]]] = {}
    for finding in findings:
        count, examples = merged.get(finding.kind, (0, []))
        merged[finding.kind] = (count + finding.count, examples + list(finding.examples))
    warnings = []
    for kind in WARNING_KINDS:
        if kind not in merged:
            continue
        count, examples = merged[kind]
        examples = examples[:EXAMPLES]
        warnings.append(
            LoadWarning(
                kind=kind,
                message=warning_message(kind, count),
                count=count,
                lines=tuple(line for _, line in examples),
                sources=tuple(source for source, _ in examples),
            )
        )
    conventions: list[str] = []
    for prepared in frames:
        opened = prepared.opened
        name = opened.item.importer.name if opened.item.importer is not None else ""
        for sentence in opened.conventions:
            said_once = f"{name}: {sentence}" if name else sentence
            if said_once not in conventions:
                conventions.append(said_once)
        for kind, sentence in opened.notes:
            warnings.append(
                LoadWarning(kind=kind, message=_sentence(sentence), count=_leading_count(sentence))
            )
    return LoadReport(
        files=files,
        rows=rows,
        mapping=ordered,
        derived=said,
        warnings=warnings,
        units=units,
        conventions=conventions,
    )


def _sentence(text: str) -> str:
    """An importer's note as a report sentence: capitalised, one full stop."""
    text = text.strip().rstrip(".")
    return text[:1].upper() + text[1:] + "."


def _leading_count(text: str) -> int:
    """The count an importer's or a join's note starts with ("3 trials ..." -> 3); every note
    counts what it is about first (`importers._base.counted`, `wording.plural`)."""
    digits = ""
    for char in text.lstrip():
        if char.isdigit():
            digits += char
        elif char != "," or not digits:
            break
    return int(digits) if digits else 0
