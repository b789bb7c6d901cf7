"""One failed attempt, step by step, with where its tokens went: what presenter mode shows of
the group whose failures dropping hides (`tui/screens/present_steps.py`).

`failure_walk(attempts, by, label, inputs)` picks a failed attempt of the group `label` (its
rows in ledger order, those with recorded usage first, failed before timeout, error or
ungraded) and reads it through the same
reader as `ledger-tui trace` (`open_attempt`), preferring the first whose steps run the same
failing tool call more than once; `retries(steps)` finds that call and what its reruns cost.
Nothing is estimated: a step's tokens are what its log records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from tui_ledger.trajectory import (
    Step,
    TokensMatch,
    ToolCall,
    Trajectory,
    TrajectoryError,
    openable,
    read_attempt,
    tokens_match,
)

TRIES = 8
"""At most this many failed attempts are read looking for one that reruns a failing call."""

_FAILED_FIRST = ("failed", "timeout", "error", "ungraded")


@dataclass(frozen=True)
class Retries:
    """The tool call the attempt ran again after it failed, and what the reruns cost."""

    call: ToolCall
    error: str | None
    """What it returned when it failed (its first line)."""
    runs: tuple[int, ...]
    """The indexes of the steps that ran it and failed, the first run included."""
    tokens: int | None
    """The reruns' tokens (every run but the first); None where no rerun records any."""

    @property
    def reruns(self) -> tuple[int, ...]:
        return self.runs[1:]


@dataclass(frozen=True)
class FailureWalk:
    """A failed attempt read to the end, with its row and where its tokens went."""

    row: Mapping[str, Any]
    position: int
    """The row's 0-based position in the ledger (`ledger-tui trace --row position+1`)."""
    trajectory: Trajectory
    match: TokensMatch
    retries: Retries | None

    @property
    def steps_tokens(self) -> int | None:
        return self.trajectory.steps_tokens

    @property
    def retry_share(self) -> float | None:
        """The reruns' share of the steps' tokens (None without both)."""
        total = self.steps_tokens
        if self.retries is None or self.retries.tokens is None or not total:
            return None
        return self.retries.tokens / total


def retries(steps: Sequence[Step]) -> Retries | None:
    """The failing tool call run most often (at least twice, failing each time), if any."""
    failing: Counter[tuple[str, str]] = Counter()
    for step in steps:
        if step.error and step.tool_calls:
            failing[_key(step.tool_calls[0])] += 1
    if not failing:
        return None
    key, count = failing.most_common(1)[0]
    if count < 2:
        return None
    runs = [
        step for step in steps if step.error and step.tool_calls and _key(step.tool_calls[0]) == key
    ]
    recorded = [step.tokens for step in runs[1:] if step.tokens is not None]
    observation = runs[0].observation
    first_line = next(
        (line.strip() for line in (observation or "").splitlines() if line.strip()), None
    )
    return Retries(
        call=runs[0].tool_calls[0],
        error=first_line,
        runs=tuple(step.index for step in runs),
        tokens=sum(recorded) if recorded else None,
    )


def _key(call: ToolCall) -> tuple[str, str]:
    return call.name, call.arguments


def failure_walk(
    attempts: pl.DataFrame, by: Sequence[str], label: str, inputs: Sequence[str]
) -> FailureWalk | None:
    """A failed attempt of the group `label` (grouped by `by`, labelled as `Comparison.labels`
    labels them) with a trajectory to read; None when none of the first `TRIES` has one."""
    if attempts.height == 0 or "outcome" not in attempts.columns:
        return None
    if not by or any(name not in attempts.columns for name in by):
        return None
    # The label as `comparison.group_labels` writes it, compared in polars (no list of labels).
    keys = [pl.col(name).cast(pl.String).fill_null("—") for name in by]
    labelled = pl.concat_str(keys, separator=" · ") if len(keys) > 1 else keys[0]
    outcome = pl.col("outcome").cast(pl.String)
    # Attempts with recorded usage first: where its tokens went needs tokens to tell.
    recorded = pl.col("tokens").is_not_null() if "tokens" in attempts.columns else pl.lit(True)
    positions: list[int] = []
    for usage in (recorded, ~recorded):
        for wanted in _FAILED_FIRST:
            found = attempts.select(pl.arg_where((labelled == label) & (outcome == wanted) & usage))
            positions += found.to_series().head(TRIES - len(positions)).to_list()
            if len(positions) >= TRIES:
                break
        if len(positions) >= TRIES:
            break
    first: FailureWalk | None = None
    for position in positions:
        row = openable(attempts.row(position, named=True), inputs)
        try:
            trajectory = read_attempt(row)
        except TrajectoryError:
            continue
        if not trajectory.steps:
            continue
        tokens = row.get("tokens")
        match, _ = tokens_match(trajectory.steps, tokens if isinstance(tokens, int) else None)
        walk = FailureWalk(row, position, trajectory, match, retries(trajectory.steps))
        if walk.retries is not None:
            return walk
        first = first or walk
    return first
