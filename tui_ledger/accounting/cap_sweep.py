"""Every token cap at once: per group, tokens per accepted result and accepted results against
the cap, and the cap that makes tokens per accepted result smallest (`cap_sweep`).

Under a cap c a group's capped total is T(c) = (sum of known t <= c) + c * (known t > c) and
its accepted results A(c) = (accepted with known t <= c) + (accepted with missing usage, which
keep their outcome; `cap.py`). Between two consecutive token counts of accepted attempts A is
constant and T grows with c, so the smallest T/A is always at one of the group's accepted
attempts' token counts: the best cap is found exactly, among those, not sampled (at or above
the smallest of them: below it only accepted attempts with missing or 0 usage would count).
Ties go to the smaller cap: the smallest cap that gives the best figure.

Vectorised: the known usage sorted by (group, tokens), cumulative counts and sums, and an
as-of join for the curve at the caps every group shares (`caps`: every group's candidates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from tui_ledger.accounting.key_order import sorted_by_text
from tui_ledger.schema import ACCEPTED

# The curve's points at most (the caps every group is drawn at): a 1M-row ledger has up to
# 1M candidate caps; past this many the shared caps are the candidates' quantiles (the best
# caps stay exact: they are found on each group's own candidates).
MAX_CURVE_POINTS = 2_000


@dataclass(frozen=True)
class Sweep:
    """`best`: per group (key order) `cap`, `tokens_per_accepted_result`, `accepted`,
    `accepted_lost` (null where no cap keeps an accepted result with known usage);
    `caps`: the shared caps, ascending; `curve`: per group and cap, `tokens`,
    `accepted` and `tokens_per_accepted_result`."""

    by: tuple[str, ...]
    best: pl.DataFrame
    caps: list[int]
    curve: pl.DataFrame


def _steps(attempts: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """One row per (group, distinct known token count > 0): the cumulative count, sum and
    accepted of the known usage at or under it, with the group's totals beside them."""
    accepted = (pl.col("outcome") == ACCEPTED).cast(pl.Int64)
    known = attempts.filter(pl.col("tokens").is_not_null()).select(
        *keys, pl.col("tokens").cast(pl.Int64), accepted.alias("acc")
    )
    steps = (
        known.group_by([*keys, "tokens"])
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("tokens").cast(pl.Int128).sum().alias("s"),
            pl.col("acc").sum().alias("a"),
        )
        .sort([*keys, "tokens"])
        .with_columns(
            pl.col("n").cum_sum().over(keys).alias("cum_n"),
            pl.col("s").cum_sum().over(keys).alias("cum_s"),
            pl.col("a").cum_sum().over(keys).alias("cum_a"),
            pl.col("n").sum().over(keys).alias("known"),
            pl.col("a").sum().over(keys).alias("known_accepted"),
        )
    )
    return steps


def _groups(attempts: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    accepted = pl.col("outcome") == ACCEPTED
    return attempts.group_by(keys).agg(
        (accepted & pl.col("tokens").is_null()).sum().cast(pl.Int64).alias("unknown_accepted")
    )


def _figure(cap: pl.Expr) -> list[pl.Expr]:
    """T (`capped_total`), A and T/A at `cap`, from the cumulative columns of the step at or
    under it."""
    below_n = pl.col("cum_n").fill_null(0)
    below_s = pl.col("cum_s").fill_null(0)
    below_a = pl.col("cum_a").fill_null(0)
    total = below_s + cap.cast(pl.Int128) * (pl.col("known").fill_null(0) - below_n)
    accepted = below_a + pl.col("unknown_accepted")
    return [
        total.alias("capped_total"),
        accepted.alias("accepted"),
        pl.when(accepted > 0)
        .then(total.cast(pl.Float64) / accepted)
        .alias("tokens_per_accepted_result"),
    ]


def cap_sweep(attempts: pl.DataFrame | pl.LazyFrame, by: Sequence[str]) -> Sweep:
    """The sweep of every cap, per group of `by` (see the module's docstring)."""
    keys = list(by)
    frame = attempts.lazy().select(*keys, "outcome", "tokens")
    groups = _groups(frame, keys)
    steps = _steps(frame, keys).join(groups, on=keys, how="left", nulls_equal=True)
    candidates = (
        steps.filter((pl.col("a") > 0) & (pl.col("tokens") > 0))
        .with_columns(_figure(pl.col("tokens")))
        .with_columns(
            (pl.col("known_accepted") - pl.col("cum_a")).alias("accepted_lost"),
        )
    )
    best_rows = (
        candidates.sort(
            [*keys, "tokens_per_accepted_result", "tokens"],
            nulls_last=True,
        )
        .group_by(keys, maintain_order=True)
        .first()
        .select(
            *keys,
            pl.col("tokens").alias("cap"),
            "tokens_per_accepted_result",
            "accepted",
            "accepted_lost",
        )
    )
    best = groups.join(best_rows, on=keys, how="left", nulls_equal=True).drop("unknown_accepted")
    best_frame, steps_frame = pl.collect_all([best, steps])
    best_frame = sorted_by_text(best_frame, keys)
    caps = _shared_caps(steps_frame)
    unknown = best_frame.select(keys).join(groups.collect(), on=keys, how="left", nulls_equal=True)
    curve = _curve(steps_frame, unknown, caps, keys)
    return Sweep(tuple(keys), best_frame, caps, curve)


def _shared_caps(steps: pl.DataFrame) -> list[int]:
    """The caps every group's curve is drawn at: every group's candidates (its accepted
    attempts' token counts), thinned to their quantiles past `MAX_CURVE_POINTS`."""
    values = (
        steps.filter((pl.col("a") > 0) & (pl.col("tokens") > 0))
        .get_column("tokens")
        .unique()
        .sort()
    )
    if values.len() > MAX_CURVE_POINTS:
        index = pl.int_range(0, MAX_CURVE_POINTS, eager=True) * (values.len() - 1)
        values = values.gather(index // (MAX_CURVE_POINTS - 1)).unique().sort()
    return [int(value) for value in values.to_list()]


def _curve(
    steps: pl.DataFrame, groups: pl.DataFrame, caps: list[int], keys: list[str]
) -> pl.DataFrame:
    """Per group (`groups`: keys and unknown_accepted, in order) and shared cap: the capped
    total, accepted results and their ratio."""
    grid = groups.join(pl.DataFrame({"cap": caps}, schema={"cap": pl.Int64}), how="cross")
    known = steps.group_by(keys).agg(pl.col("known").first())
    at = (
        grid.sort("cap")
        .join_asof(
            steps.select(*keys, "tokens", "cum_n", "cum_s", "cum_a").sort("tokens"),
            left_on="cap",
            right_on="tokens",
            by=keys,
            strategy="backward",
            check_sortedness=False,  # sorted by tokens within each group (a whole sort)
        )
        .join(known, on=keys, how="left", nulls_equal=True)
        .with_columns(_figure(pl.col("cap")))
        .select(
            *keys,
            "cap",
            pl.col("capped_total").alias("tokens"),
            "accepted",
            "tokens_per_accepted_result",
        )
    )
    return _in_order(at, groups.select(keys), keys)


def _in_order(curve: pl.DataFrame, groups: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The curve in the groups' order, each group's caps ascending."""
    order = groups.with_row_index("__order")
    return (
        curve.join(order, on=keys, how="left", nulls_equal=True)
        .sort(["__order", "cap"])
        .drop("__order")
    )
