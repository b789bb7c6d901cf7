"""Uncertainty: 95% intervals on pass rate and on tokens (and cost) per accepted result.

Everything here is polars expressions or vectorised polars frames (numpy serves only the pairwise
draws, in `pairs`).

- **Pass rate**: the Wilson score interval (`wilson_interval`), exact from the two counts.
- **Per accepted result** (a ratio: spend over accepted, per group and view), two methods:
  - the *delta method* for a ratio estimator (`delta_interval`), built from sums and one
    variance that `ledger.compare` already aggregates in its single group_by pass;
  - a *percentile bootstrap* over attempts (`bootstrap_intervals`) for groups under
    `BOOTSTRAP_MAX_ATTEMPTS` attempts, where the delta method's normal approximation is poor.
    Draws come from a splitmix64 counter hash written in polars expressions, so the same data,
    seed and resample count give the same interval on any machine and polars version.

See docs/ACCOUNTING.md ("Uncertainty") for the decisions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

# Two-sided 95%: the 0.975 quantile of the standard normal.
Z95 = 1.959963984540054

IntervalMethod = Literal["auto", "delta", "bootstrap", "none"]
INTERVAL_METHODS: tuple[str, ...] = ("auto", "delta", "bootstrap", "none")

BOOTSTRAP_MAX_ATTEMPTS = 5_000
"""Groups with fewer attempts (in the view) get a bootstrap interval under method "auto"."""
BOOTSTRAP_RESAMPLES = 1_000
BOOTSTRAP_SEED = 0
BOOTSTRAP_MAX_DRAWS = 2_000_000
"""Work cap: resamples x attempts over the bootstrapped groups of one view. Past it, the
largest of the small groups fall back to the delta method (each group names its method)."""

NOTE_WIDE = "small sample: the interval is wider than the value"
NOTE_UNBOUNDED = "small sample: upper bound unbounded (some resamples had no accepted attempt)"

_U64 = pl.UInt64
_DRAWS_AT_ONCE = 250_000


@dataclass(frozen=True)
class IntervalSettings:
    """How intervals were computed for one comparison (shown beside the figures)."""

    method: IntervalMethod = "auto"
    resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    bootstrap_below: int = BOOTSTRAP_MAX_ATTEMPTS
    max_draws: int = BOOTSTRAP_MAX_DRAWS

    def describe(self) -> str:
        """One line for people: the confidence level and the methods in play."""
        if self.method == "none":
            return "no intervals"
        bootstrap = f"bootstrap ({self.resamples:,} resamples, seed {self.seed})"
        if self.method == "delta":
            return "95% intervals: Wilson (pass rate), delta method (per accepted result)"
        if self.method == "bootstrap":
            return f"95% intervals: Wilson (pass rate), {bootstrap} (per accepted result)"
        return (
            f"95% intervals: Wilson (pass rate); per accepted result: {bootstrap} for groups "
            f"under {self.bootstrap_below:,} attempts, delta method above"
        )


def wilson_interval(
    accepted: pl.Expr, attempts: pl.Expr, z: float = Z95
) -> tuple[pl.Expr, pl.Expr]:
    """The Wilson score interval of accepted/attempts as (low, high); null when attempts = 0."""
    n = attempts.cast(pl.Float64)
    p = accepted.cast(pl.Float64) / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denominator
    half = z / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).clip(lower_bound=0).sqrt()
    valid = attempts > 0
    low = pl.when(valid).then((centre - half).clip(0.0, 1.0))
    high = pl.when(valid).then((centre + half).clip(0.0, 1.0))
    return low, high


def delta_interval(
    n: pl.Expr,
    sum_x: pl.Expr,
    sum_y: pl.Expr,
    var_x: pl.Expr,
    sum_xy: pl.Expr,
    z: float = Z95,
) -> tuple[pl.Expr, pl.Expr]:
    """A delta-method interval for the ratio R = sum(x) / sum(y) over n attempts.

    `y` is the 0/1 accepted indicator, so var(y) and cov(x, y) follow from the sums:
    Var(R) ~ (s_xx - 2 R s_xy + R^2 s_yy) / (n ybar^2). The low end is clipped at 0 (spend is
    never negative). Null when n < 2 or nothing was accepted.
    """
    nf = n.cast(pl.Float64)
    sx = sum_x.cast(pl.Float64)
    sy = sum_y.cast(pl.Float64)
    ratio = sx / sy
    y_bar = sy / nf
    x_bar = sx / nf
    s_yy = (sy - nf * y_bar * y_bar) / (nf - 1.0)
    s_xy = (sum_xy.cast(pl.Float64) - nf * x_bar * y_bar) / (nf - 1.0)
    variance = (var_x - 2.0 * ratio * s_xy + ratio * ratio * s_yy) / (nf * y_bar * y_bar)
    half = z * variance.clip(lower_bound=0.0).sqrt()
    valid = (n >= 2) & (sum_y > 0) & var_x.is_not_null() & sum_x.is_not_null()
    return (
        pl.when(valid).then((ratio - half).clip(lower_bound=0.0)),
        pl.when(valid).then(ratio + half),
    )


def _u64(value: int) -> pl.Expr:
    return pl.lit(value % 2**64, dtype=_U64)


def splitmix64(counter: pl.Expr) -> pl.Expr:
    """The splitmix64 finaliser over a UInt64 column (wrapping arithmetic, as in C)."""
    z = counter
    z = (z.xor(z // _u64(2**30))) * _u64(0xBF58476D1CE4E5B9)
    z = (z.xor(z // _u64(2**27))) * _u64(0x94D049BB133111EB)
    return z.xor(z // _u64(2**31))


def _splitmix64_steps(frame: pl.LazyFrame, column: str) -> pl.LazyFrame:
    """`splitmix64` over one UInt64 column, one step per `select` (same values).

    Written as a single nested expression, every step refers to the previous one twice, so
    polars evaluates the early steps many times over; step by step each runs once (4x faster
    on a million draws).
    """
    z = pl.col(column)
    return (
        frame.with_columns((z.xor(z // _u64(2**30)) * _u64(0xBF58476D1CE4E5B9)).alias(column))
        .with_columns((z.xor(z // _u64(2**27)) * _u64(0x94D049BB133111EB)).alias(column))
        .with_columns(z.xor(z // _u64(2**31)).alias(column))
    )


def _draws(sizes: pl.DataFrame, first: int, stop: int, seed: int) -> pl.Series:
    """Row numbers of the draws of resamples `first` to `stop - 1`, group by group and
    resample by resample (see `bootstrap_intervals`): `offset + splitmix64(seed + (k + 1) *
    gamma) mod n` for draw k (from `first * n`) of a group of `n` rows starting at `offset`."""
    # splitmix64's own sequence: state = seed + (counter + 1) * golden gamma, then the finaliser;
    # written k * gamma + (seed + gamma) (the same modulo 2**64, one pass fewer), all in UInt64.
    gamma = 0x9E3779B97F4A7C15
    counters = (
        sizes.lazy()
        .select(
            pl.col("n").cast(_U64),
            pl.col("offset").cast(_U64),
            pl.int_ranges(pl.col("n") * first, pl.col("n") * stop, dtype=_U64).alias("k"),
        )
        .explode("k")
        .with_columns((pl.col("k") * _u64(gamma) + _u64(seed + gamma)).alias("k"))
    )
    hashed = _splitmix64_steps(counters, "k")
    return hashed.select(pl.col("offset") + pl.col("k") % pl.col("n")).collect().to_series()


def bootstrap_intervals(
    frame: pl.DataFrame,
    group: str,
    values: Sequence[str],
    accepted: str,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> pl.DataFrame:
    """Percentile bootstrap intervals of sum(value) / sum(accepted), per group, vectorised.

    `frame` holds the attempts one view counts: an integer `group` id, one Float64 column per
    ratio numerator in `values` (missing already read as 0) and a 0/1 `accepted` column. Each
    group is resampled `resamples` times with replacement at its own size; draw j of resample
    b picks row splitmix64(seed, b * n + j) mod n of the group (in the frame's row order), so
    a group's interval depends only on its own rows, the seed and the resample count.

    Returns `group`, and `{value}_lo`, `{value}_hi` per value. A resample with no accepted
    attempt has an infinite ratio, so the high end can be infinite: it is left as inf.
    """
    if frame.height == 0:
        return pl.DataFrame(
            {group: [], **{f"{v}_{end}": [] for v in values for end in ("lo", "hi")}},
            schema={
                group: frame.schema[group],
                **{f"{v}_{end}": pl.Float64 for v in values for end in ("lo", "hi")},
            },
        )
    ordered = frame.select(group, *values, accepted).sort(group, maintain_order=True)
    # A group of one attempt draws that attempt in every resample: both ends are its own
    # ratio, with no draw made (the drop view of a wide ledger has thousands of them).
    alone = pl.col(group).is_first_distinct() & pl.col(group).is_last_distinct()
    single = ordered.filter(alone).select(
        group,
        *[
            expr
            for v in values
            for expr in (_ratio(v, accepted).alias(f"{v}_lo"), _ratio(v, accepted).alias(f"{v}_hi"))
        ],
    )
    if single.height:
        ordered = ordered.filter(~alone)
        if ordered.height == 0:
            return single
        several = _resampled(ordered, group, values, accepted, resamples, seed)
        return pl.concat([single, several]).sort(group, maintain_order=True)
    return _resampled(ordered, group, values, accepted, resamples, seed)


def _ratio(value: str, accepted: str) -> pl.Expr:
    """One resample's sum(value) / sum(accepted): infinite when it drew no accepted attempt."""
    return (
        pl.when(pl.col(accepted) > 0)
        .then(pl.col(value) / pl.col(accepted))
        .otherwise(float("inf"))
        .alias(value)
    )


def _resampled(
    ordered: pl.DataFrame,
    group: str,
    values: Sequence[str],
    accepted: str,
    resamples: int,
    seed: int,
) -> pl.DataFrame:
    """`bootstrap_intervals` of the rows `ordered` by group, by drawing the resamples."""
    sizes = (
        ordered.group_by(group, maintain_order=True)
        .agg(pl.len().cast(pl.Int64).alias("n"))
        .with_columns(pl.col("n").cum_sum().shift(1, fill_value=0).alias("offset"))
    )
    # The resamples in batches of about _DRAWS_AT_ONCE draws: the same draws and figures,
    # in a few MB rather than 170 MB for the 2M draws the cap allows (per draw, a row number
    # through four hashing steps, then one gathered value per column).
    step = max(1, _DRAWS_AT_ONCE // ordered.height)
    batches = []
    for first in range(0, resamples, step):
        stop = min(first + step, resamples)
        rows = _draws(sizes, first, stop, seed)
        # Draws come in blocks of n (group by group, resample by resample), so each
        # resample's sums are differences of a running sum at block ends: no group_by over
        # the draws.
        running = ordered.select(pl.col(*values, accepted).gather(rows).cum_sum())
        blocks = (
            sizes.select(group, "n", pl.int_ranges(first, stop).alias("b"))
            .explode("b")
            .select(group, (pl.col("n").cum_sum() - 1).alias("end"))
        )
        sums = running[blocks["end"]].select(pl.all().diff().fill_null(pl.all()))
        batches.append(
            pl.concat([blocks.select(group), sums], how="horizontal").select(
                group, *[_ratio(v, accepted) for v in values]
            )
        )
    ratios = pl.concat(batches)
    return ratios.group_by(group, maintain_order=True).agg(
        *[
            expr
            for v in values
            for expr in (
                pl.col(v).quantile(0.025, "nearest").alias(f"{v}_lo"),
                pl.col(v).quantile(0.975, "nearest").alias(f"{v}_hi"),
            )
        ]
    )


def interval_note(value: pl.Expr, low: pl.Expr, high: pl.Expr) -> pl.Expr:
    """A note where an interval says little: unbounded above, or wider than the value."""
    return (
        pl.when(high.is_infinite())
        .then(pl.lit(NOTE_UNBOUNDED))
        .when((high - low) > value)
        .then(pl.lit(NOTE_WIDE))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
