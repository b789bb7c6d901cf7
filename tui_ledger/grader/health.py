"""The grader's health per task and per test, over the tasks two or more groups attempted.

- `tests_never_passed`: each test (by task) that no attempt passed, with how many attempts ran
  it: a test nobody can pass is a test to read before any figure that counts it.
- `tasks_all_failed`, `tasks_all_passed`: tasks every attempt failed, or every attempt passed;
  either way they cannot separate the groups.
- `infrastructure`: per task, the attempts the harness failed before the agent acted, and
  their share of the task's attempts.

Outcomes as graded (the verdicts as given); tests as the verdicts list them (`Audit.tests`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from tui_ledger.grader.audit import Audit
from tui_ledger.schema import ACCEPTED


@dataclass(frozen=True)
class Health:
    """The grader's health (each a DataFrame sorted by task, then test)."""

    tests_never_passed: pl.DataFrame
    """task, test, attempts (how many attempts ran it)."""
    tasks_all_failed: pl.DataFrame
    """task, attempts."""
    tasks_all_passed: pl.DataFrame
    """task, attempts."""
    infrastructure: pl.DataFrame
    """task, attempts, infrastructure_errors, share (0..1); tasks with at least one."""
    tasks: int
    """Tasks attempted by two or more groups (the ones looked at)."""


def grader_health(
    attempts: pl.DataFrame, audit: Audit, by: Sequence[str] = ("workflow",)
) -> Health:
    """The grader's health over the tasks attempted by two or more groups (`by`)."""
    empty_tasks = pl.DataFrame(schema={"task": pl.String(), "attempts": pl.UInt32()})
    if "task" not in attempts.columns:
        return Health(
            pl.DataFrame(
                schema={"task": pl.String(), "test": pl.String(), "attempts": pl.UInt32()}
            ),
            empty_tasks,
            empty_tasks,
            pl.DataFrame(
                schema={
                    "task": pl.String(),
                    "attempts": pl.UInt32(),
                    "infrastructure_errors": pl.UInt32(),
                    "share": pl.Float64(),
                }
            ),
            0,
        )
    keys = [pl.col(name).cast(pl.String) for name in by]
    frame = attempts.select(
        pl.int_range(pl.len(), dtype=pl.UInt32).alias("row"),
        pl.col("task").cast(pl.String),
        pl.concat_str(keys, separator="\x1f", ignore_nulls=False).alias("__group"),
        (pl.col("outcome") == ACCEPTED).alias("__accepted"),
    ).filter(pl.col("task").is_not_null())
    shared = (
        frame.group_by("task")
        .agg(pl.col("__group").n_unique().alias("groups"))
        .filter(pl.col("groups") >= 2)
        .get_column("task")
    )
    frame = frame.filter(pl.col("task").is_in(shared.implode()))
    per_task = (
        frame.group_by("task")
        .agg(
            pl.len().cast(pl.UInt32).alias("attempts"),
            pl.col("__accepted").sum().alias("accepted"),
            pl.col("row")
            .is_in(pl.Series(audit.infrastructure, dtype=pl.UInt32).implode())
            .sum()
            .alias("infrastructure_errors"),
        )
        .sort("task")
    )
    tests = (
        audit.tests.join(frame.select("row", "task"), on="row")
        .group_by("task", "test")
        .agg(pl.len().cast(pl.UInt32).alias("attempts"), pl.col("passed").any().alias("ever"))
        .filter(~pl.col("ever"))
        .select("task", "test", "attempts")
        .sort("task", "test")
    )
    return Health(
        tests_never_passed=tests,
        tasks_all_failed=per_task.filter(pl.col("accepted") == 0).select("task", "attempts"),
        tasks_all_passed=per_task.filter(pl.col("accepted") == pl.col("attempts")).select(
            "task", "attempts"
        ),
        infrastructure=per_task.filter(pl.col("infrastructure_errors") > 0).select(
            "task",
            "attempts",
            pl.col("infrastructure_errors").cast(pl.UInt32),
            (pl.col("infrastructure_errors") / pl.col("attempts")).alias("share"),
        ),
        tasks=shared.len(),
    )
