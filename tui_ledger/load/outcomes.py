"""The outcome vocabularies: `passed` and `status` words -> the outcome Enum, read on the
distinct values, and which statuses contradict `passed`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from tui_ledger import schema
from tui_ledger.load.errors import LoadError, shown
from tui_ledger.load.helper_columns import CONTRADICTING, FRAME, STATUS_WORD, Engine
from tui_ledger.load.prepare import Prepared, place_of


def _replaced(
    column: pl.Expr,
    table: Mapping[str, object],
    default: Any,
    dtype: pl.DataType | type[pl.DataType],
    *,
    by_row: bool,
) -> pl.Expr:
    """Each raw word's value from `table` (`default` for anything else, nulls included).

    `by_row`: `replace_strict` (one hash lookup per row), for text in memory. Streamed, polars
    runs `replace_strict` beside the stream and zips it back (buffering rows), and on
    Categorical it looks up a text copy of every row, so there it is the same lookup written
    per value: one `is_in` per distinct value, a handful at most.
    """
    if by_row:
        return column.replace_strict(dict(table), default=default, return_dtype=dtype)
    by_value: dict[object, list[str]] = {}
    for raw, value in table.items():
        by_value.setdefault(value, []).append(raw)
    result: pl.Expr = pl.lit(default, dtype=dtype)
    for value, raws in by_value.items():
        result = pl.when(column.is_in(raws)).then(pl.lit(value, dtype=dtype)).otherwise(result)
    return result


def _read_passed(raw: str) -> bool | str | None:
    word = raw.strip().lower()
    if word in schema.TRUE_WORDS:
        return True
    if word in schema.FALSE_WORDS:
        return False
    if word in schema.MISSING_WORDS:
        return None
    return "unknown"


def _read_status(raw: str) -> str:
    if raw.strip().lower() in schema.MISSING_WORDS:
        return "ungraded"
    return schema.STATUS_WORDS.get(schema.normalise_word(raw), "unknown")


def _reject_unknown(
    staged: pl.LazyFrame,
    by_frame: dict[int, Prepared],
    column: str,
    table: Mapping[str, object],
    engine: Engine,
) -> None:
    unknown = [raw for raw, value in table.items() if value == "unknown"]
    if not unknown:
        return
    first = (
        staged.filter(pl.col(column).is_in(unknown))
        .select(FRAME, schema.SOURCE_COLUMN, schema.LINE_COLUMN, column)
        .head(1)
        .collect(engine=engine)
        .row(0, named=True)
    )
    prepared = by_frame[first[FRAME]]
    where = place_of(prepared, first[schema.SOURCE_COLUMN], first[schema.LINE_COLUMN], column)
    value = shown(first[column])
    if column == "passed":
        what = f"{value} is not a pass/fail value; accepted: {_passed_vocabulary()}"
    else:
        what = f"{value} is not an outcome; accepted: {status_vocabulary()}"
    raise LoadError(
        f"{where}: {what}. Fix the cell, or map another column with --col {column}=COLUMN.",
        source=first[schema.SOURCE_COLUMN],
        line=first[schema.LINE_COLUMN],
        column=prepared.mapping[column],
    )


def _passed_vocabulary() -> str:
    true = ", ".join(sorted(schema.TRUE_WORDS))
    false = ", ".join(sorted(schema.FALSE_WORDS))
    return f"true = {true}; false = {false} (any case); empty or NA = ungraded"


def status_vocabulary() -> str:
    by_outcome: dict[str, list[str]] = {}
    for word, outcome in schema.STATUS_WORDS.items():
        by_outcome.setdefault(outcome, []).append(word or "empty")
    return (
        "; ".join(f"{outcome} = {', '.join(words)}" for outcome, words in by_outcome.items())
        + " (any case; spaces and dashes read as _)"
    )


def _outcome(passed: pl.Expr | None, status: pl.Expr | None) -> tuple[pl.Expr, pl.Expr]:
    """SPEC section 1: the outcome from `passed`, `status` (an outcome already), or both; and
    which rows' status contradicts their `passed`. Everything stays in the outcome Enum."""

    def word(name: str) -> pl.Expr:
        return pl.lit(name, dtype=schema.OUTCOME_DTYPE)

    if passed is not None and status is not None:
        outcome = (
            pl.when(passed)
            .then(word("passed"))
            .when(~passed)
            .then(
                pl.when(status.is_in(["timeout", "error"])).then(status).otherwise(word("failed"))
            )
            .otherwise(status)
        )
        contradicting = (passed & status.is_in(["failed", "timeout", "error"])) | (
            ~passed & (status == "passed")
        )
        return outcome, contradicting.fill_null(False)
    if passed is not None:
        outcome = (
            pl.when(passed)
            .then(word("passed"))
            .when(~passed)
            .then(word("failed"))
            .otherwise(word("ungraded"))
        )
        return outcome, pl.lit(False)
    assert status is not None
    return status, pl.lit(False)


def outcome_sentence(mapping: Mapping[str, str]) -> str:
    """How a file's outcomes were derived, for the report."""
    if "passed" in mapping and "status" in mapping:
        return (
            "outcome from passed and status (passed decides; a false passed takes timeout "
            "or error from the status)"
        )
    if "passed" in mapping:
        return "outcome from passed (true = passed, false = failed, empty = ungraded)"
    return "outcome from status"


def derive_outcome(
    staged: pl.LazyFrame, by_frame: dict[int, Prepared], *, in_memory: bool
) -> pl.LazyFrame:
    """Every row's outcome from its `passed` and `status` words (SPEC section 1), beside which
    statuses contradict `passed`; a word in neither vocabulary stops the load, naming its cell.

    The vocabularies are checked on the distinct values, never row by row: one query of the
    distinct (passed, status) pairs, a handful for any file that loads.
    """
    engine: Engine = "auto" if in_memory else "streaming"
    types = staged.collect_schema()
    has_passed = "passed" in types
    has_status = "status" in types

    def by_row(column: str) -> bool:
        # replace_strict on Categorical goes through a text copy of every row (160 MB at 10M).
        return in_memory and types[column] != pl.Categorical

    # A Boolean `passed` (Parquet, JSON) is read as it is: true, false or empty (ungraded), no
    # word to look up. (As text it was a string per row, 160 MB at 10M rows, made twice.)
    boolean = has_passed and types["passed"] == pl.Boolean
    wanted = [c for c in ("passed", "status") if c in types and not (c == "passed" and boolean)]
    pairs = staged.select(wanted).unique().collect(engine=engine) if wanted else pl.DataFrame()
    distinct = {c: pairs[c].unique().to_list() for c in wanted}
    words: list[pl.Expr] = []
    if has_passed and not boolean:
        table = {raw: _read_passed(raw) for raw in distinct["passed"] if raw is not None}
        _reject_unknown(staged, by_frame, "passed", table, engine)
        known = {raw: value for raw, value in table.items() if value != "unknown"}
        passed = _replaced(pl.col("passed"), known, None, pl.Boolean, by_row=by_row("passed"))
        words.append(passed.alias("passed"))
    if has_status:
        table = {raw: _read_status(raw) for raw in distinct["status"] if raw is not None}
        _reject_unknown(staged, by_frame, "status", table, engine)
        status = _replaced(
            pl.col("status"), table, "ungraded", schema.OUTCOME_DTYPE, by_row=by_row("status")
        )
        words.append(status.fill_null("ungraded").alias(STATUS_WORD))
    outcome, contradicting = _outcome(
        pl.col("passed") if has_passed else None, pl.col(STATUS_WORD) if has_status else None
    )
    return staged.with_columns(words).with_columns(
        outcome.cast(schema.OUTCOME_DTYPE).alias("outcome"),
        contradicting.alias(CONTRADICTING),
    )
