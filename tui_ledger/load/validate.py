"""Across files: stack them, derive the outcome, stop at the first bad cell, count every
warning, and lay out the columns (`finish`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from tui_ledger import schema
from tui_ledger.load.counts import COUNT_PROBLEMS
from tui_ledger.load.csv_errors import check_ragged
from tui_ledger.load.helper_columns import (
    BAD,
    EXAMPLES,
    FRAME,
    LOSSY,
    REPLACEMENT,
    SHORT,
    WHY,
    Engine,
)
from tui_ledger.load.load_report import WHOLE_FILE, Counted, LoadError, shown
from tui_ledger.load.outcomes import derive_outcome, outcome_sentence
from tui_ledger.load.prepare import Prepared, place_of
from tui_ledger.load.warning_rules import row_flags
from tui_ledger.text.polars_text import as_text


def concat(frames: list[pl.LazyFrame]) -> pl.LazyFrame:
    """Stack the files' frames; a column whose type differs between files (other than one
    number type against another) is kept as text, nested values as their JSON."""
    if len(frames) == 1:
        return frames[0]
    schemas = [frame.collect_schema() for frame in frames]
    types: dict[str, set[pl.DataType]] = {}
    for types_of_frame in schemas:
        for name, dtype in types_of_frame.items():
            if dtype != pl.Null:
                types.setdefault(name, set()).add(dtype)
    mixed = {
        name
        for name, found in types.items()
        if len(found) > 1 and not all(dtype.is_numeric() for dtype in found)
    }
    if mixed:
        frames = [
            frame.with_columns(
                as_text(name, dtype) for name, dtype in frame_types.items() if name in mixed
            )
            for frame, frame_types in zip(frames, schemas, strict=True)
        ]
    return pl.concat(frames, how="diagonal_relaxed")


@dataclass
class Validated:
    """What `finish` gives back: the attempts, and what the report says about them."""

    frame: pl.LazyFrame  # the attempts, their columns in the final order
    counted: list[Counted]  # every warning, counted
    derived: list[tuple[str, str]]  # (what was derived, in which file)
    units: dict[str, str]  # per source, what its line numbers count
    rows: int


def finish(staged: pl.LazyFrame, frames: list[Prepared], *, in_memory: bool) -> Validated:
    """Outcomes, the checks that stop a load, the warnings, and the final column layout.

    `in_memory` materialises the outcomes once, so the checks and the result share them.
    Otherwise (`scan`) every query here is one the streaming engine runs natively, so a file
    larger than memory is validated in bounded memory: no `implode` and no `unique` inside a
    select (polars runs those in memory), and the example lines of each warning are a
    `filter().head()` of their own, which stops reading once it has them.
    """
    engine: Engine = "auto" if in_memory else "streaming"
    by_frame = {frame.index: frame for frame in frames}
    _check_short_rows(staged, staged.collect_schema().names(), by_frame, engine)
    staged = derive_outcome(staged, by_frame, in_memory=in_memory)
    if in_memory:
        # Once: the checks below and the attempts frame then read the same columns, instead
        # of each evaluating the outcomes, keys and helper columns again from the file's.
        staged = staged.collect().lazy()

    # Everything else in one pass: the first bad cell of each kind, and every warning.
    names = staged.collect_schema().names()
    query = _problem_query(names, frames, in_memory=in_memory)
    if in_memory:
        summary = _collect_in_memory(staged, query)
    else:
        summary = _collect_streamed(staged, query, frames)
    _raise_first_problem(summary, query, frames, by_frame)
    counted = _counted(summary, query, by_frame)
    derived, units = _derived_and_units(staged, frames, engine)
    return Validated(staged.select(column_order(names)), counted, derived, units, summary["rows"])


def _check_short_rows(
    staged: pl.LazyFrame, names: list[str], by_frame: dict[int, Prepared], engine: Engine
) -> None:
    """A short row first: its cells sit under the wrong names, so every other check would
    misreport it (`csv_errors.check_ragged` names it)."""
    if SHORT not in names:
        return
    short = staged.filter(pl.col(SHORT)).select(FRAME, schema.LINE_COLUMN).collect(engine=engine)
    for frame_index in short[FRAME].unique().to_list():
        lines = short.filter(pl.col(FRAME) == frame_index)[schema.LINE_COLUMN]
        check_ragged(by_frame[frame_index].opened, lines)


# name -> (a row's fields, which rows, how many): the first rows where something holds.
# (Fields, not a struct: a struct over every row would be built before its filter.)
_WantedRows = dict[str, tuple[list[pl.Expr], pl.Expr, int]]


@dataclass
class _ProblemQuery:
    """The one pass over the rows: counts, and which rows to bring back as examples."""

    aggregates: list[pl.Expr]
    wanted_rows: _WantedRows
    checks: list[str]  # the columns whose first bad cell stops the load
    flags: dict[str, pl.Expr]  # the warnings counted by row (`warning_rules`)
    unterminated: list[int]  # the files whose last line has no line end


def _problem_query(names: list[str], frames: list[Prepared], *, in_memory: bool) -> _ProblemQuery:
    checks = [c for c in ("workflow", *schema.INTEGER_COLUMNS) if WHY + c in names]
    aggregates: list[pl.Expr] = [pl.len().alias("rows")]
    if in_memory:
        aggregates.append(pl.col(FRAME).unique().implode().alias("frames"))
    else:
        aggregates += [(pl.col(FRAME) == f.index).any().alias(f"has_{f.index}") for f in frames]
    wanted_rows: _WantedRows = {}
    for column in checks:
        fields = [
            pl.col(FRAME),
            pl.col(schema.SOURCE_COLUMN),
            pl.col(schema.LINE_COLUMN),
            pl.col(WHY + column).alias("why"),
            (pl.col(BAD + column) if BAD + column in names else pl.lit(None, pl.String)).alias(
                "bad"
            ),
        ]
        wanted_rows[f"first_{column}"] = (fields, pl.col(WHY + column).is_not_null(), 1)
    flags = row_flags(names)
    example = [pl.col(schema.SOURCE_COLUMN), pl.col(schema.LINE_COLUMN)]
    for kind, flag in flags.items():
        aggregates.append(flag.sum().alias(f"count_{kind}"))
        wanted_rows[f"examples_{kind}"] = (example, flag, EXAMPLES)
    unterminated = [frame.index for frame in frames if frame.opened.unterminated]
    for frame_index in unterminated:
        in_frame = pl.col(FRAME) == frame_index
        line = pl.col(schema.LINE_COLUMN)
        # Lines only grow within a file: the last is the largest (a plain reduction, streamed).
        last = line.filter(in_frame).last() if in_memory else pl.when(in_frame).then(line).max()
        aggregates.append(last.alias(f"last_line_{frame_index}"))
    if LOSSY in names:
        wanted_rows["first_lossy_workflow"] = (
            [pl.col(FRAME), pl.col(schema.SOURCE_COLUMN), pl.col(schema.LINE_COLUMN)],
            pl.col(LOSSY).fill_null(False)
            & pl.col("workflow").str.contains(REPLACEMENT, literal=True),
            1,
        )
    return _ProblemQuery(aggregates, wanted_rows, checks, flags, unterminated)


def _collect_in_memory(staged: pl.LazyFrame, query: _ProblemQuery) -> dict[str, Any]:
    """The pass in memory: the wanted rows come back inside the same query."""
    aggregates = list(query.aggregates)
    for name, (fields, condition, count) in query.wanted_rows.items():
        matching = pl.struct([field.filter(condition).head(count) for field in fields])
        aggregates.append((matching.first() if count == 1 else matching.implode()).alias(name))
    return staged.select(aggregates).collect(engine="auto").row(0, named=True)


def _collect_streamed(
    staged: pl.LazyFrame, query: _ProblemQuery, frames: list[Prepared]
) -> dict[str, Any]:
    """The pass streamed, in bounded memory.

    A filtered reduction makes polars split the stream in two (a multiplexer, which buffers),
    so streamed, each wanted row is a plain count here and its rows come from a
    filter().head() query of its own, run only when there are some, stopping once found.
    """
    wanted_rows = query.wanted_rows
    aggregates = [
        *query.aggregates,
        *(condition.any().alias(f"any_{name}") for name, (_, condition, _) in wanted_rows.items()),
    ]
    summary = staged.select(aggregates).collect(engine="streaming").row(0, named=True)
    summary["frames"] = [f.index for f in frames if summary[f"has_{f.index}"]]
    present = [name for name in wanted_rows if summary[f"any_{name}"]]
    queries = [
        staged.filter(wanted_rows[name][1])
        .select(pl.struct(wanted_rows[name][0]).alias("row"))
        .head(wanted_rows[name][2])
        for name in present
    ]
    # One after another: run together, each would hold its own stream's buffers.
    results = {
        name: query.collect(engine="streaming")
        for name, query in zip(present, queries, strict=True)
    }
    for name, (_, _, count) in wanted_rows.items():
        found_rows = results[name]["row"].to_list() if name in results else []
        summary[name] = (found_rows[0] if found_rows else None) if count == 1 else found_rows
    return summary


def _raise_first_problem(
    summary: dict[str, Any],
    query: _ProblemQuery,
    frames: list[Prepared],
    by_frame: dict[int, Prepared],
) -> None:
    """Stop at a file with no attempts, the first bad cell, or a workflow name with bytes
    that are not UTF-8."""
    for prepared in frames:
        if prepared.index not in summary["frames"]:
            display = prepared.opened.item.display
            raise LoadError(
                f"{display}: no attempts in it (a header, or blank rows, and nothing else); "
                "check it is the right file.",
                source=display,
            )

    for column in query.checks:
        first = summary[f"first_{column}"]
        if first is not None:
            raise _cell_error(by_frame[first[FRAME]], column, first)
    lossy_workflow = summary.get("first_lossy_workflow")
    if lossy_workflow is not None:
        prepared = by_frame[lossy_workflow[FRAME]]
        where = place_of(
            prepared,
            lossy_workflow[schema.SOURCE_COLUMN],
            lossy_workflow[schema.LINE_COLUMN],
            "workflow",
        )
        raise LoadError(
            f"{where}: the workflow name has bytes that are not UTF-8, so two names could "
            "merge; re-encode the file as UTF-8 (for example iconv -f cp1252 -t utf-8).",
            source=lossy_workflow[schema.SOURCE_COLUMN],
            line=lossy_workflow[schema.LINE_COLUMN],
            column=prepared.mapping["workflow"],
        )


def _counted(
    summary: dict[str, Any], query: _ProblemQuery, by_frame: dict[int, Prepared]
) -> list[Counted]:
    """Every warning the pass counted, with its example lines."""
    counted = []
    for kind in query.flags:
        if not summary[f"count_{kind}"]:
            continue
        examples = tuple(
            (example[schema.SOURCE_COLUMN], example[schema.LINE_COLUMN])
            for example in summary[f"examples_{kind}"]
        )
        counted.append(Counted(kind, summary[f"count_{kind}"], examples))
    for frame_index in query.unterminated:
        last_line = summary[f"last_line_{frame_index}"]
        if last_line is not None:
            display = by_frame[frame_index].opened.item.display
            counted.append(Counted("unterminated_last_line", 1, ((display, last_line),)))
    return counted


def _derived_and_units(
    staged: pl.LazyFrame, frames: list[Prepared], engine: Engine
) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """What each file had derived (for the report), and what each source's lines count."""
    derived: list[tuple[str, str]] = []
    for prepared in frames:
        display = prepared.opened.item.display
        derived += [(sentence, display) for sentence in prepared.derived]
        derived.append((outcome_sentence(prepared.mapping), display))
    units: dict[str, str] = {}
    for prepared in frames:
        opened = prepared.opened
        if not opened.has_source:
            units[opened.item.display] = opened.unit
            continue
        # Importers name a source per row; their frames are small. A source holding one
        # attempt (a trial's own file) is named alone: its line number would say nothing.
        found = staged.filter(pl.col(FRAME) == prepared.index).select(
            pl.col(schema.SOURCE_COLUMN).unique()
        )
        for source in found.collect(engine=engine).to_series().to_list():
            units[source] = WHOLE_FILE if source in opened.whole_files else opened.unit
    return derived, units


def column_order(names: Sequence[str]) -> list[str]:
    """The attempts frame's columns in order: canonical, the file's others, source, line."""
    canonical = [name for name in schema.CANONICAL_ORDER if name in names]
    others = [
        name
        for name in names
        if name not in schema.RESERVED_NAMES and not name.startswith("__ledger_")
    ]
    return [*canonical, *others, schema.SOURCE_COLUMN, schema.LINE_COLUMN]


def _cell_error(prepared: Prepared, column: str, first: Mapping[str, object]) -> LoadError:
    source = str(first[schema.SOURCE_COLUMN])
    line = first[schema.LINE_COLUMN]
    assert isinstance(line, int)
    why = str(first["why"])
    if column == "workflow":
        where = place_of(prepared, source, line, column)
        return LoadError(
            f"{where}: the workflow is empty; every attempt needs one: fill it in or delete "
            "the row.",
            source=source,
            line=line,
            column=prepared.mapping["workflow"],
        )
    if column == "tokens" and "tokens" not in prepared.mapping:
        buckets = " + ".join(b for b in schema.BUCKETS if b in prepared.mapping)
        where = f"{source} {prepared.opened.unit} {line}"
        return LoadError(
            f"{where}: {buckets} adds up to {first['bad']}, more than the biggest count stored "
            "exactly (9,223,372,036,854,775,807); check the bucket columns hold token counts.",
            source=source,
            line=line,
        )
    where = place_of(prepared, source, line, column)
    return LoadError(
        f"{where}: {shown(first['bad'])} {COUNT_PROBLEMS[why]}; fix the cell, or leave it "
        "empty (or write NA) if the usage is unknown.",
        source=source,
        line=line,
        column=prepared.mapping[column],
    )
