"""One group task by task: where its spend went, and the tasks it never passed (the spend the
drop-failures view hides entirely). Built on the accounting's own definitions (`ledger`);
the app's `p` shows it (`tui.audit_screens.PerTaskScreen`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from tui_ledger.accounting.ledger import DEFAULT_BY, has_cost, summarize
from tui_ledger.schema import OUTCOMES

GroupSelector = pl.Expr | Mapping[str, Any] | Sequence[Any] | str | None

PER_TASK_COLUMNS: tuple[str, ...] = (
    "task",
    "attempts",
    "accepted",
    "pass_rate",
    *OUTCOMES,
    "missing_usage",
    "suspect_zeros",
    "usage",
    "total_tokens",
    "tokens_per_accepted_result",
    "lower_bound",
    "never_passed",
)


def group_filter(group: GroupSelector, by: Sequence[str] = DEFAULT_BY) -> pl.Expr | None:
    """The attempts of one group as a filter expression.

    `group` is an expression (used as is), a mapping column -> value, the group's key values
    in `by` order (a single value for a single key), or None for every attempt. A None value
    matches a null key (the group shown as `—`).
    """
    if group is None or isinstance(group, pl.Expr):
        return group
    if isinstance(group, Mapping):
        pairs = list(group.items())
    else:
        values = [group] if isinstance(group, str) else list(group)
        if len(values) != len(by):
            raise ValueError(f"group {group!r} does not match the group columns {list(by)}")
        pairs = list(zip(by, values, strict=True))
    conditions = [
        pl.col(name).is_null() if value is None else pl.col(name) == value for name, value in pairs
    ]
    return pl.all_horizontal(conditions) if conditions else None


def per_task(
    attempts: pl.DataFrame | pl.LazyFrame,
    group: GroupSelector = None,
    by: Sequence[str] = DEFAULT_BY,
    *,
    sort_by: str = "total_tokens",
    descending: bool = True,
) -> pl.DataFrame:
    """One group's attempts task by task (keep view): where the spend went, what passed.

    Columns: `PER_TASK_COLUMNS`, plus `missing_cost`, `cost_usage`, `total_cost` and
    `cost_per_accepted_result` with a cost column. A task whose usage is not recorded
    (`usage`) has null figures, as a group does. `never_passed` marks tasks with no accepted
    attempt, whose whole spend is what the drop-failures view hides. Sorted by `sort_by`
    (nulls last). Raises ValueError when the attempts have no `task` column.
    """
    frame = attempts.lazy()
    if "task" not in frame.collect_schema():
        raise ValueError("per-task figures need a task column")
    condition = group_filter(group, by)
    if condition is not None:
        frame = frame.filter(condition)
    summary = summarize(frame, ["task"], "keep", intervals="none")
    return per_task_from_summary(summary, has_cost(frame), sort_by=sort_by, descending=descending)


def per_task_from_summary(
    summary: pl.DataFrame,
    with_cost: bool,
    *,
    sort_by: str = "total_tokens",
    descending: bool = True,
) -> pl.DataFrame:
    """`per_task` from the keep view's summary by task, however it was computed (the Spark
    engine computes it from its aggregate frame: `spark.commands.spark_per_task`)."""
    cost = (
        ["missing_cost", "cost_usage", "total_cost", "cost_per_accepted_result"]
        if with_cost
        else []
    )
    result = summary.with_columns((pl.col("accepted") == 0).alias("never_passed")).select(
        *PER_TASK_COLUMNS, *cost
    )
    return result.sort(sort_by, "task", descending=[descending, False], nulls_last=True)


@dataclass(frozen=True)
class NeverPassed:
    """What the tasks a group never passed cost: the spend the trap hides entirely."""

    tasks: int
    attempts: int
    tokens: int | None
    cost: float | None
    # Some of those tasks' usage is missing, a suspect 0 or not recorded: `tokens` is a least.
    tokens_lower_bound: bool = False


def never_passed_spend(tasks: pl.DataFrame) -> NeverPassed:
    """Totals over the `never_passed` rows of a `per_task` frame."""
    unpassed = tasks.filter(pl.col("never_passed"))
    known_tokens = unpassed["total_tokens"].drop_nulls()
    cost: float | None = None
    if "total_cost" in unpassed.columns:
        known_cost = unpassed["total_cost"].drop_nulls()
        cost = float(known_cost.sum()) if len(known_cost) else None
    return NeverPassed(
        tasks=unpassed.height,
        attempts=int(unpassed["attempts"].sum()),
        tokens=int(known_tokens.sum()) if len(known_tokens) else None,
        cost=cost,
        tokens_lower_bound=bool(len(known_tokens))
        and bool((unpassed["usage"] != "recorded").any()),
    )
