"""The 95% intervals of the views: delta-method bounds in the single pass, bootstrap ones after.

`ledger.py` adds `delta_intervals` to every view frame it builds; `with_view_intervals` then
resamples the small groups of each view (one extra read of their attempts, or `BootstrapRows`
when another engine holds them, see `spark.aggregate.bootstrap_rows`) and writes the
`ci_method` and `ci_note` columns. The interval statistics themselves are in `stats`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TypeVar

import polars as pl

from tui_ledger.accounting import stats
from tui_ledger.accounting.stats import IntervalMethod, IntervalSettings
from tui_ledger.schema import ACCEPTED, COST_COLUMN, View

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)

# 95% intervals (see `stats`); the cost pair only with a cost column.
INTERVAL_METRICS: tuple[str, ...] = (
    "pass_rate_lo",
    "pass_rate_hi",
    "tokens_per_accepted_result_lo",
    "tokens_per_accepted_result_hi",
)
COST_INTERVAL_METRICS: tuple[str, ...] = (
    "cost_per_accepted_result_lo",
    "cost_per_accepted_result_hi",
)
INTERVAL_NOTES: tuple[str, ...] = ("ci_method", "ci_note")

# The attempts' columns as ledger.py reads them.
_outcome = pl.col("outcome")
_tokens = pl.col("tokens")
_cost = pl.col(COST_COLUMN).cast(pl.Float64, strict=False)
GROUP_ID = "__group_id"  # a group's row in a view frame, while its intervals are made


def interval_settings(intervals: IntervalMethod | IntervalSettings) -> IntervalSettings:
    """The interval settings a method name (or settings) stands for."""
    if isinstance(intervals, IntervalSettings):
        return intervals
    if intervals not in stats.INTERVAL_METHODS:
        raise ValueError(
            f"unknown interval method {intervals!r}: expected one of "
            f"{', '.join(stats.INTERVAL_METHODS)}"
        )
    return IntervalSettings(method=intervals)


@cache  # the same expressions every time: built once (a recompute is Python-bound)
def delta_intervals(with_cost: bool) -> tuple[pl.Expr, ...]:
    """Wilson on pass rate and delta-method intervals on the per-accepted ratios."""
    attempts, accepted = pl.col("attempts"), pl.col("accepted")
    pass_lo, pass_hi = stats.wilson_interval(accepted, attempts)
    tokens_lo, tokens_hi = stats.delta_interval(
        attempts,
        pl.col("total_tokens"),
        accepted,
        pl.col("var_tokens"),
        pl.col("sum_accepted_tokens"),
    )
    known = pl.col("tokens_per_accepted_result").is_not_null()
    columns = [
        pass_lo.alias("pass_rate_lo"),
        pass_hi.alias("pass_rate_hi"),
        pl.when(known).then(tokens_lo).alias("tokens_per_accepted_result_lo"),
        pl.when(known).then(tokens_hi).alias("tokens_per_accepted_result_hi"),
    ]
    if with_cost:
        cost_lo, cost_hi = stats.delta_interval(
            attempts,
            pl.col("total_cost"),
            accepted,
            pl.col("var_cost"),
            pl.col("sum_accepted_cost"),
        )
        known_cost = pl.col("cost_per_accepted_result").is_not_null()
        columns += [
            pl.when(known_cost).then(cost_lo).alias("cost_per_accepted_result_lo"),
            pl.when(known_cost).then(cost_hi).alias("cost_per_accepted_result_hi"),
        ]
    return tuple(columns)


def interval_columns(with_cost: bool) -> tuple[str, ...]:
    return INTERVAL_METRICS + (COST_INTERVAL_METRICS if with_cost else ())


def interval_value_columns(with_cost: bool) -> list[str]:
    """The per-accepted figures that carry intervals."""
    return ["tokens_per_accepted_result", *(["cost_per_accepted_result"] if with_cost else [])]


def _small_groups(frame: pl.DataFrame, settings: IntervalSettings, value: str) -> pl.DataFrame:
    """The groups of one view frame that get a bootstrap interval: `GROUP_ID` and `attempts`."""
    candidates = frame.filter(pl.col(value).is_not_null(), pl.col("attempts") >= 1)
    if settings.method == "bootstrap":
        return candidates.select(GROUP_ID, "attempts")
    small = candidates.filter(pl.col("attempts") < settings.bootstrap_below).sort(
        "attempts", GROUP_ID
    )
    # Smallest groups first, while the total work stays under the cap.
    within = (pl.col("attempts").cast(pl.Int64) * settings.resamples).cum_sum()
    return small.filter(within <= settings.max_draws).select(GROUP_ID, "attempts")


def bootstrap_rows(
    attempts: pl.DataFrame | pl.LazyFrame,
    keys: list[str],
    groups: pl.DataFrame,
    with_cost: bool,
    streaming: bool = False,
) -> pl.DataFrame:
    """The attempts of the chosen groups (one extra read), with `GROUP_ID` and numerators.

    `groups` holds `GROUP_ID`, the keys and `__every_row`: false for a group only the drop
    view bootstraps, which needs only its accepted attempts. So the rows read are at most the
    attempts the bootstrap cap allows in each view (`IntervalSettings.max_draws`), however
    large the groups are in the other view: `streaming` reads them in bounded memory.
    """
    wanted = groups.select(pl.struct(keys).alias("__key"))["__key"].implode()
    numerators = {"tokens_per_accepted_result": _tokens}
    if with_cost:
        numerators["cost_per_accepted_result"] = _cost
    return (
        attempts.lazy()
        .filter(pl.struct(keys).is_in(wanted, nulls_equal=True))
        .join(groups.lazy(), on=keys, how="inner", nulls_equal=True, maintain_order="left")
        .filter(pl.col("__every_row") | (_outcome == ACCEPTED))
        .select(
            GROUP_ID,
            *[expr.fill_null(0).cast(pl.Float64).alias(name) for name, expr in numerators.items()],
            (_outcome == ACCEPTED).cast(pl.Int64).alias("__accepted"),
        )
        .collect(engine="streaming" if streaming else "auto")
    )


BootstrapRows = Callable[[pl.DataFrame], pl.DataFrame]
"""The engine seam of the bootstrap: the groups to resample (`__group_id`, the keys,
`__every_row`) -> their attempts as `bootstrap_rows` returns them, in the input's order."""


def with_view_intervals(
    attempts: pl.DataFrame | pl.LazyFrame | None,
    keys: list[str],
    frames: dict[View, pl.DataFrame],
    with_cost: bool,
    settings: IntervalSettings,
    streaming: bool = False,
    rows_for: BootstrapRows | None = None,
) -> dict[View, pl.DataFrame]:
    """Bootstrap intervals for the small groups of each view (one read of their attempts for
    every view, by `rows_for` when another engine holds them), then the `ci_method` and
    `ci_note` columns."""
    value_columns = interval_value_columns(with_cost)
    frames = {view: frame.with_row_index(GROUP_ID) for view, frame in frames.items()}
    chosen: dict[View, pl.DataFrame] = {}
    if settings.method in ("auto", "bootstrap"):
        chosen = {
            view: _small_groups(frame, settings, "tokens_per_accepted_result")
            for view, frame in frames.items()
        }
    chosen = {view: ids for view, ids in chosen.items() if ids.height}
    rows: pl.DataFrame | None = None
    if chosen:
        any_frame = next(iter(frames.values()))
        wanted = pl.concat([ids.select(GROUP_ID) for ids in chosen.values()]).unique()
        every_row = chosen["keep"][GROUP_ID] if "keep" in chosen else pl.Series([], dtype=pl.UInt32)
        groups = any_frame.join(wanted, on=GROUP_ID).select(
            GROUP_ID, *keys, pl.col(GROUP_ID).is_in(every_row.implode()).alias("__every_row")
        )
        if rows_for is not None:
            rows = rows_for(groups)
        else:
            assert attempts is not None
            rows = bootstrap_rows(attempts, keys, groups, with_cost, streaming)
    finished: dict[View, pl.DataFrame] = {}
    for view, frame in frames.items():
        bootstrapped = pl.lit(False)
        if rows is not None and view in chosen:
            group_ids = chosen[view][GROUP_ID].implode()
            in_view = rows.filter(pl.col(GROUP_ID).is_in(group_ids))
            if view == "drop":
                in_view = in_view.filter(pl.col("__accepted") == 1)
            intervals = stats.bootstrap_intervals(
                in_view,
                GROUP_ID,
                value_columns,
                "__accepted",
                resamples=settings.resamples,
                seed=settings.seed,
            )
            frame = _replace_intervals(frame, intervals, value_columns)
            bootstrapped = pl.col(GROUP_ID).is_in(group_ids)
        finished[view] = finish_intervals(frame, value_columns, bootstrapped).drop(GROUP_ID)
    return finished


def _replace_intervals(
    frame: pl.DataFrame, intervals: pl.DataFrame, value_columns: list[str]
) -> pl.DataFrame:
    """Put bootstrap bounds in place of the delta-method ones, where a group has them."""
    ends = [f"{name}_{end}" for name in value_columns for end in ("lo", "hi")]
    boot = intervals.rename({name: f"{name}_boot" for name in ends})
    frame = frame.join(boot, on=GROUP_ID, how="left", maintain_order="left")
    return frame.with_columns(
        pl.when(pl.col(f"{name}_{end}_boot").is_not_null() & pl.col(name).is_not_null())
        .then(pl.col(f"{name}_{end}_boot"))
        .otherwise(pl.col(f"{name}_{end}"))
        .alias(f"{name}_{end}")
        for name in value_columns
        for end in ("lo", "hi")
    ).drop(f"{name}_boot" for name in ends)


def finish_intervals(frame: FrameT, value_columns: list[str], bootstrapped: pl.Expr) -> FrameT:
    has_interval = (
        pl.col("tokens_per_accepted_result_lo").is_not_null()
        | pl.col("tokens_per_accepted_result_hi").is_not_null()
    )
    notes = [
        stats.interval_note(pl.col(name), pl.col(f"{name}_lo"), pl.col(f"{name}_hi"))
        for name in value_columns
    ]
    return frame.with_columns(
        pl.when(bootstrapped)
        .then(pl.lit("bootstrap"))
        .when(has_interval)
        .then(pl.lit("delta"))
        .otherwise(pl.lit(None, dtype=pl.String))
        .alias("ci_method"),
        pl.coalesce(*notes).alias("ci_note"),
    )
