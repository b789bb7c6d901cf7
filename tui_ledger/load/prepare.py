"""One file made ready for the cross-file validation: its columns mapped and selected, blank
rows dropped, its helper columns added, its counts parsed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from tui_ledger import schema
from tui_ledger.load.columns import already_typed, free_name, infer_types, map_columns, require
from tui_ledger.load.counts import parse_accounting
from tui_ledger.load.helper_columns import (
    FILLED,
    FRAME,
    LINE,
    LOSSY,
    REPLACEMENT,
    SHORT,
    TEXT_KEYS,
    VALIDATED,
)
from tui_ledger.load.opened import Opened
from tui_ledger.text.polars_text import as_text


@dataclass
class Prepared:
    """One opened file, mapped and parsed, waiting for the validation across files."""

    opened: Opened
    index: int
    lazy: pl.LazyFrame
    mapping: dict[str, str]  # canonical -> the file's column name
    derived: list[str]
    kept_as: dict[str, str]  # the file's column -> the name it is kept under
    typed: bool = False  # counts arrived as Int64 and keys as Categorical: cheap to recompute


def prepare(
    opened: Opened,
    index: int,
    explicit: Mapping[str, str] | None,
    zero_usage_is_missing: bool,
) -> Prepared:
    """One opened file mapped onto the canonical columns (`explicit` first), its blank rows
    dropped, its helper columns added and its counts parsed; `index` is its place in the load."""
    item = opened.item
    mapping = map_columns(opened, explicit or {})
    require(opened, mapping)
    source_of = {name: canonical for canonical, name in mapping.items()}
    taken = set(schema.RESERVED_NAMES)
    taken |= set(opened.columns)
    kept_as: dict[str, str] = {}
    selected: list[pl.Expr] = []
    types = opened.frame.collect_schema()
    for name in opened.columns:
        canonical = source_of.get(name)
        if canonical is not None:
            expr = pl.col(name)
            validated = canonical in VALIDATED or canonical in TEXT_KEYS
            if validated and not already_typed(canonical, types[name]):
                # Validated as text: a nested value (a list or an object) as its JSON, so it
                # is refused by name like any other unreadable cell, or named as written.
                expr = as_text(name, types[name])
            selected.append(expr.alias(canonical))
        elif name in schema.RESERVED_NAMES:
            new = free_name(f"{name}_in_file", taken)
            kept_as[name] = new
            selected.append(pl.col(name).alias(new))
        else:
            selected.append(pl.col(name))
    # One file's name on every row: Categorical holds it once (4 bytes a row, not 16+).
    source = (
        pl.col(schema.SOURCE_COLUMN)
        if opened.has_source
        else pl.lit(item.display, pl.String).cast(pl.Categorical)
    )
    frame = opened.frame
    # A row whose every cell is empty is a blank line, not an attempt. (In memory, look
    # before filtering: a filter copies every column.)
    if opened.columns:
        filled = pl.any_horizontal(pl.col(opened.columns).is_not_null())
        if not opened.in_memory or not frame.select(filled.all()).collect().item():
            # Filter on a helper column: polars' predicate pushdown of a horizontal
            # expression over thousands of columns takes time quadratic in their number.
            frame = frame.with_columns(filled.alias(FILLED)).filter(pl.col(FILLED))
            frame = frame.drop(FILLED)
    helpers = [
        source.alias(schema.SOURCE_COLUMN),
        pl.col(LINE).alias(schema.LINE_COLUMN),
        pl.lit(index, pl.Int32).alias(FRAME),
    ]
    if opened.fmt in ("csv", "tsv") and len(opened.columns) > 1:
        helpers.append(pl.col(opened.columns[-1]).is_null().alias(SHORT))
    if opened.lossy:
        text_columns = [
            name for name, dtype in frame.collect_schema().items() if dtype == pl.String
        ]
        helpers.append(
            pl.any_horizontal(
                pl.col(text_columns).str.contains(REPLACEMENT, literal=True).fill_null(False)
            ).alias(LOSSY)
        )
    frame = frame.select(*selected, *helpers)
    typed = all(
        already_typed(canonical, types[name])
        for canonical, name in mapping.items()
        if canonical in schema.INTEGER_COLUMNS or canonical in TEXT_KEYS
    )
    if opened.infer:
        frame = infer_types(
            frame,
            [name for name in opened.columns if name not in mapping.values()],
            mapping,
            kept_as,
            engine="auto" if opened.in_memory else "streaming",
        )
    frame, derived = parse_accounting(
        frame, mapping, zero_usage_is_missing, in_memory=opened.in_memory
    )
    derived.extend(opened.joined)
    if kept_as:
        pairs = ", ".join(f"{old!r} as {new!r}" for old, new in kept_as.items())
        derived.append(f"kept the file's unmapped {pairs}")
    return Prepared(opened, index, frame, mapping, derived, kept_as, typed)


def place_of(prepared: Prepared, source: str, line: int, column: str) -> str:
    """Where a cell is, in words: `runs.csv line 7, column 'tokens'`; a file that holds one
    attempt (a harness's trial) by its name alone: `a/results.json, column 'status'`."""
    if source in prepared.opened.whole_files:
        return f"{source}, column {prepared.mapping[column]!r}"
    return f"{source} {prepared.opened.unit} {line}, column {prepared.mapping[column]!r}"
