"""Matched tasks only: the attempts at tasks every group attempted (`summary --matched-tasks`,
`check --matched-tasks`, the app's `m`), and how many such tasks there are."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from tui_ledger.accounting.ledger import DEFAULT_BY
from tui_ledger.findings import Notice
from tui_ledger.text.wording import plural

__all__ = [
    "matched_tasks",
    "matched_tasks_only",
    "matched_tasks_where",
    "restrict_to_matched_tasks",
]


def _group_keys(by: Sequence[str]) -> list[str]:
    if not by:
        raise ValueError("group by needs at least one column")
    return list(by)


def matched_tasks(attempts: pl.DataFrame | pl.LazyFrame, by: Sequence[str] = DEFAULT_BY) -> int:
    """How many tasks every group attempted."""
    return (
        _matched(attempts.lazy(), _group_keys(by))
        .select(pl.col("task").n_unique())
        .collect()
        .item()
    )


def _matched(attempts: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    groups = pl.struct(keys).n_unique()
    return attempts.filter(
        pl.col("task").is_not_null(),
        pl.struct(keys).n_unique().over("task") == groups,
    )


def _matchable_keys(columns: Sequence[str], by: Sequence[str]) -> list[str]:
    """The group keys, if these attempts can be matched by task (ValueError if not)."""
    keys = _group_keys(by)
    if "task" not in columns:
        raise ValueError("matching tasks needs a task column")
    if "task" in keys:
        raise ValueError("cannot match tasks when grouping by task")
    return keys


def restrict_to_matched_tasks(
    attempts: pl.DataFrame, by: Sequence[str] = DEFAULT_BY
) -> pl.DataFrame:
    """Only the attempts at tasks that every group attempted (rows with no task are left out).

    Without a `task` column there is nothing to match on: raises ValueError.
    """
    return _matched(attempts.lazy(), _matchable_keys(attempts.columns, by)).collect()


def matched_tasks_only(
    attempts: pl.DataFrame, by: Sequence[str] = DEFAULT_BY
) -> tuple[pl.DataFrame, Notice]:
    """The attempts at tasks every group attempted, and a note of what was left out (the
    `--matched-tasks` of `summary` and `check`, the app's `m`)."""
    matched = restrict_to_matched_tasks(attempts, by)
    tasks = matched["task"].n_unique() if matched.height else 0
    return matched, _notice(matched.height, attempts.height - matched.height, tasks)


def matched_tasks_where(
    attempts: pl.LazyFrame, by: Sequence[str] = DEFAULT_BY
) -> tuple[pl.Expr, Notice, int]:
    """What `matched_tasks_only` keeps, as a condition on the same frame (the app holds
    positions of the rows it keeps, not a copy), with its note and the count of tasks."""
    keys = _matchable_keys(attempts.collect_schema().names(), by)
    matched, total = pl.collect_all(
        [
            _matched(attempts, keys).select(pl.col("task").unique(), pl.len().alias("kept")),
            attempts.select(pl.len()),
        ]
    )
    tasks = matched.get_column("task")
    kept = int(matched.get_column("kept")[0]) if matched.height else 0
    condition = pl.col("task").is_in(tasks.implode())
    return condition, _notice(kept, int(total.item()) - kept, tasks.len()), tasks.len()


def _notice(kept: int, dropped: int, tasks: int) -> Notice:
    return Notice(
        "matched_tasks",
        f"Matched tasks only: {plural(kept, 'attempt')} at the {plural(tasks, 'task')} every "
        f"group attempted; {plural(dropped, 'attempt')} at other tasks "
        f"{'is' if dropped == 1 else 'are'} left out.",
        dropped,
    )
