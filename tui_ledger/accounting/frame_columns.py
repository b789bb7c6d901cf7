"""The names of the accounting's columns: the metrics a view frame holds, the raw aggregates
they are made of, the trap frame's columns; and the columns group keys are held under, so a
key named like one of them (`--by outcome`, `--by tokens`, `--by passed`) groups as any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import polars as pl

from tui_ledger.accounting.view_intervals import INTERVAL_NOTES, interval_columns
from tui_ledger.schema import COST_COLUMN, OUTCOMES, VIEWS

# The per-group metrics, in the order reports show them.
METRICS: tuple[str, ...] = (
    "attempts",
    "accepted",
    "pass_rate",
    *OUTCOMES,
    "missing_usage",
    "suspect_zeros",
    "usage",
    "median_tokens_per_attempt",
    "total_tokens",
    "tokens_per_accepted_result",
    "lower_bound",
    "rank_best",
    "rank_worst",
    "rank",
)

# Cost metrics, present only when the attempts carry a `cost` column (USD, float64).
COST_METRICS: tuple[str, ...] = (
    "missing_cost",
    "suspect_zero_cost",
    "cost_usage",
    "total_cost",
    "cost_per_accepted_result",
    "cost_lower_bound",
    "cost_rank_best",
    "cost_rank_worst",
    "cost_rank",
)


# The raw per-group aggregates of one view, as `_view_frame` reads them (`{view}__{name}`).
RAW_NAMES: tuple[str, ...] = (
    "attempts",
    "accepted",
    *OUTCOMES,
    "missing_usage",
    "known_usage",
    "suspect_zeros",
    "median_tokens_per_attempt",
    "sum_known_tokens",
    "var_tokens",
)
RAW_COST_NAMES: tuple[str, ...] = ("known_cost", "suspect_zero_cost", "sum_known_cost", "var_cost")


def raw_names(with_cost: bool = False) -> list[str]:
    return [*RAW_NAMES, *(RAW_COST_NAMES if with_cost else ())]


def view_columns(with_cost: bool) -> tuple[str, ...]:
    """The metric columns of a view frame, in order (after the group keys)."""
    cost = COST_METRICS if with_cost else ()
    return METRICS + cost + interval_columns(with_cost) + INTERVAL_NOTES


def _group_keys(by: Sequence[str]) -> list[str]:
    if not by:
        raise ValueError("group by needs at least one column")
    return list(by)


# The trap frame's columns beside the keys (`_comparison`).
TRAP_COLUMNS: tuple[str, ...] = (
    "hidden_tokens",
    "hidden_attempts",
    "trap_factor",
    "trap_factor_lower_bound",
    *(f"{view}_rank{end}" for view in VIEWS for end in ("", "_best", "_worst")),
    "hidden_cost",
    "cost_trap_factor",
    "cost_trap_factor_lower_bound",
    *(f"{view}_cost_rank{end}" for view in VIEWS for end in ("", "_best", "_worst")),
)


@cache
def _taken_names() -> frozenset[str]:
    """Names the accounting gives columns of its own: what it reads of the attempts beside the
    keys (`read_columns`), and every column of a view or trap frame."""
    return frozenset(
        (
            "outcome",
            "tokens",
            COST_COLUMN,
            "sum_accepted_tokens",
            "sum_accepted_cost",
            *view_columns(True),
            *TRAP_COLUMNS,
            *raw_names(True),
        )
    )


def group_column(name: str) -> str:
    """The column a group key is held under while the accounting groups by it, and in the
    comparison's frames: its own name, unless the accounting derives a column of that name
    (`--by outcome`, `--by tokens`, `--by passed`: a view counts `passed` attempts), then
    `__by_<name>`. `Comparison.by` keeps the names people gave; `Comparison.key_columns` holds
    these."""
    return f"__by_{name}" if name in _taken_names() else name


def grouped(
    attempts: pl.DataFrame | pl.LazyFrame, by: Sequence[str]
) -> tuple[pl.DataFrame | pl.LazyFrame, list[str]]:
    """The attempts with each key under its `group_column` (a copy of the column where its
    name is taken), and those columns: what every grouping of the accounting reads."""
    keys = _group_keys(by)
    columns = [group_column(name) for name in keys]
    pairs = zip(keys, columns, strict=True)
    copies = [pl.col(name).alias(column) for name, column in pairs if name != column]
    return (attempts.with_columns(copies) if copies else attempts), columns
