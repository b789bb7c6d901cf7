"""The accounting: both views and every metric of the contract, written once as polars expressions.

The TUI, `ledger-tui summary`, the exports and the benchmarks all call `compare` (or `summarize`);
nothing else computes a metric. Both views come out of one `group_by([*keys, "outcome"])` of
counts and sums (keep = every outcome's cell, drop = the `passed` cell) and, run beside it in
the same `collect_all`, one `group_by(keys)` of the two medians (that pass is `view_cells`),
so a toggle in the app costs nothing. The cells also hold the cost figures (when the attempts
carry a `cost` column, see `prices.apply_prices`) and the sums the delta-method intervals need;
only groups small enough for a bootstrap interval are read a second time (see `view_intervals`
and `stats`, and `with_intervals` to add those later to a comparison made with
`intervals="delta"`). Key columns may be String or Categorical: groups, labels and order are
those of their text either way. This module finishes the aggregates into the figures, ranks,
intervals and the trap.

`per_task` (one group's spend task by task) and `pareto` (pass rate against spend per accepted
result, both views) are built on the same definitions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from typing import Any

import polars as pl

# What `compare` returns, and the usage statuses, live in `comparison`; named here too, where
# the rest of the package has always found them.
from tui_ledger.accounting.comparison import (
    LOWER_BOUND as LOWER_BOUND,
)
from tui_ledger.accounting.comparison import (
    NOT_RECORDED as NOT_RECORDED,
)
from tui_ledger.accounting.comparison import (
    RECORDED as RECORDED,
)
from tui_ledger.accounting.comparison import (
    USAGE_STATUSES as USAGE_STATUSES,
)
from tui_ledger.accounting.comparison import (
    Comparison as Comparison,
)
from tui_ledger.accounting.comparison import (
    Metric as Metric,
)
from tui_ledger.accounting.comparison import (
    ParetoMetric as ParetoMetric,
)
from tui_ledger.accounting.comparison import (
    group_labels as group_labels,
)
from tui_ledger.accounting.frame_columns import (
    COST_METRICS as COST_METRICS,
)
from tui_ledger.accounting.frame_columns import (
    METRICS as METRICS,
)
from tui_ledger.accounting.frame_columns import (
    TRAP_COLUMNS as TRAP_COLUMNS,
)
from tui_ledger.accounting.frame_columns import (
    _group_keys,
    group_column,
    grouped,
    raw_names,
    view_columns,
)
from tui_ledger.accounting.ranking import rank_range_stages
from tui_ledger.accounting.stats import IntervalMethod, IntervalSettings

# The one pass (cells -> both views' raw aggregates) is `view_cells`; named here too, where the
# cube, the Spark engine and the app have always found them.
from tui_ledger.accounting.view_cells import (
    _aggregate,
)
from tui_ledger.accounting.view_cells import (
    _cell_aggregations as _cell_aggregations,
)
from tui_ledger.accounting.view_cells import (
    aggregate_frame as aggregate_frame,
)
from tui_ledger.accounting.view_cells import (
    pooled_cells as pooled_cells,
)
from tui_ledger.accounting.view_cells import (
    read_columns as read_columns,
)
from tui_ledger.accounting.view_cells import (
    view_aggregates as view_aggregates,
)
from tui_ledger.accounting.view_intervals import (
    INTERVAL_NOTES,
    BootstrapRows,
    delta_intervals,
    finish_intervals,
    interval_columns,
    interval_settings,
    interval_value_columns,
    with_view_intervals,
)
from tui_ledger.schema import ACCEPTED, COST_COLUMN, VIEWS, View

VIEW_TITLES: dict[str, str] = {"keep": "KEEP FAILURES", "drop": "DROP FAILURES"}
VIEW_GLOSSES: dict[str, str] = {"keep": "honest", "drop": "the trap"}

DEFAULT_BY: tuple[str, ...] = ("workflow",)


_outcome = pl.col("outcome")


def counted(view: View) -> pl.Expr:
    """Which attempts a view counts: every one (keep), or only the accepted ones (drop)."""
    if view == "keep":
        # Every attempt has an outcome (the loader guarantees it), so this is "every row",
        # as a column-shaped mask: a bare literal would aggregate as a single value.
        return _outcome.is_not_null()
    if view == "drop":
        return _outcome == ACCEPTED
    raise ValueError(f"unknown view {view!r}: expected 'keep' or 'drop'")


def has_cost(attempts: pl.DataFrame | pl.LazyFrame) -> bool:
    """Whether the attempts carry a cost column the accounting can sum."""
    schema = attempts.collect_schema()
    dtype = schema.get(COST_COLUMN)
    return dtype is not None and (dtype.is_numeric() or dtype == pl.String)


def usage_status(
    attempts: pl.Expr, known: pl.Expr, zeros: pl.Expr, recorded_in_keep: pl.Expr
) -> pl.Expr:
    """A group's usage in a view: `recorded`, `lower_bound` or `not_recorded` (SPEC.md 1, 3).

    `known` counts attempts whose usage (or cost) was read, `zeros` those of them that read a
    suspect 0. Usage is not recorded when no attempt holds more than 0; a group whose usage is
    not recorded at all (`recorded_in_keep` false) reads so in both views, even where the drop
    view leaves it no attempt, so no view ranks it. A view with no attempt of an otherwise
    recorded group spent exactly nothing: recorded.
    """
    return (
        pl.when(~recorded_in_keep)
        .then(pl.lit(NOT_RECORDED))
        .when(attempts == 0)
        .then(pl.lit(RECORDED))
        .when(known == zeros)
        .then(pl.lit(NOT_RECORDED))
        .when((attempts > known) | (zeros > 0))
        .then(pl.lit(LOWER_BOUND))
        .otherwise(pl.lit(RECORDED))
    )


@cache  # the same expressions every time: built once (a recompute is Python-bound)
def _finish(view: View) -> tuple[tuple[pl.Expr, ...], ...]:
    """Derived metrics of one view from its raw aggregates (column names without prefix), as
    stages: each `with_columns` may read the columns the stages before it made."""
    attempts, accepted = pl.col("attempts"), pl.col("accepted")
    usage = usage_status(
        attempts, pl.col("known_usage"), pl.col("suspect_zeros"), pl.col("__recorded_in_keep")
    ).alias("usage")
    not_recorded = pl.col("usage") == NOT_RECORDED
    total_tokens = (
        pl.when(not_recorded)
        .then(pl.lit(None, dtype=pl.Int128))
        .when(attempts == 0)
        .then(pl.lit(0, dtype=pl.Int128))
        .otherwise(pl.col("sum_known_tokens"))
        .alias("total_tokens")
    )
    per_accepted = (
        pl.when((accepted > 0) & pl.col("total_tokens").is_not_null())
        .then(pl.col("total_tokens").cast(pl.Float64) / accepted)
        .otherwise(None)
        .alias("tokens_per_accepted_result")
    )
    figure = pl.col("tokens_per_accepted_result")
    # A lower bound: some usage is missing or a suspect 0, so the true figure can only be higher.
    lower_bound = (figure.is_not_null() & (pl.col("usage") == LOWER_BOUND)).alias("lower_bound")
    return (
        (
            usage,
            pl.when(attempts > 0).then(accepted / attempts).alias("pass_rate"),
        ),
        (
            total_tokens,
            pl.when(~not_recorded)
            .then(pl.col("median_tokens_per_attempt"))
            .alias("median_tokens_per_attempt"),
        ),
        (per_accepted,),
        (lower_bound,),
    )


# Per metric: the ranked figure, whether it is a lower bound, the usage column, the prefix of
# its rank columns in a view frame.
_RANK_INPUTS: dict[str, tuple[str, str, str, str]] = {
    "tokens": ("tokens_per_accepted_result", "lower_bound", "usage", ""),
    "cost": ("cost_per_accepted_result", "cost_lower_bound", "cost_usage", "cost_"),
}


def _with_ranks(figures: pl.DataFrame, with_cost: bool) -> pl.LazyFrame:
    """A view's figures with the rank range of each metric (`ranking`). A metric none of whose
    figures is a lower bound is ranked by one rank instead of two searches."""
    frame = figures.lazy()
    for metric in ("tokens", "cost") if with_cost else ("tokens",):
        value, bound, usage, prefix = _RANK_INPUTS[metric]
        stages = rank_range_stages(
            pl.col(value),
            pl.col(bound),
            pl.col(usage) != NOT_RECORDED,
            prefix,
            bounded=bool(figures.get_column(bound).any()),
        )
        for stage in stages:
            frame = frame.with_columns(stage)
    return frame


@cache  # the same expressions every time: built once (a recompute is Python-bound)
def _finish_cost() -> tuple[tuple[pl.Expr, ...], ...]:
    """Cost metrics of one view, defined exactly as the token ones (float64 USD), in stages."""
    attempts, accepted = pl.col("attempts"), pl.col("accepted")
    missing = (attempts - pl.col("known_cost")).alias("missing_cost")
    usage = usage_status(
        attempts,
        pl.col("known_cost"),
        pl.col("suspect_zero_cost"),
        pl.col("__cost_recorded_in_keep"),
    ).alias("cost_usage")
    not_recorded = pl.col("cost_usage") == NOT_RECORDED
    total_cost = (
        pl.when(not_recorded)
        .then(pl.lit(None, dtype=pl.Float64))
        .when(attempts == 0)
        .then(pl.lit(0.0))
        .otherwise(pl.col("sum_known_cost"))
        .alias("total_cost")
    )
    per_accepted = (
        pl.when((accepted > 0) & pl.col("total_cost").is_not_null())
        .then(pl.col("total_cost") / accepted)
        .otherwise(None)
        .alias("cost_per_accepted_result")
    )
    figure = pl.col("cost_per_accepted_result")
    lower_bound = (figure.is_not_null() & (pl.col("cost_usage") == LOWER_BOUND)).alias(
        "cost_lower_bound"
    )
    return ((missing, usage), (total_cost,), (per_accepted,), (lower_bound,))


def _view_frame(
    raw: pl.DataFrame,
    keys: list[str],
    view: View,
    with_cost: bool,
    method: IntervalMethod,
) -> pl.LazyFrame:
    prefix = f"{view}__"
    columns = [pl.col(f"{prefix}{name}").alias(name) for name in raw_names(with_cost)]
    # Spend on accepted attempts, for the covariance term of the delta method: in either view
    # it is what the drop view sums, since the drop view counts exactly the accepted attempts.
    columns.append(pl.col("drop__sum_known_tokens").alias("sum_accepted_tokens"))
    if with_cost:
        columns.append(pl.col("drop__sum_known_cost").alias("sum_accepted_cost"))
    # Whether the group recorded any usage (or cost) at all: not, and it reads not recorded in
    # both views, ranked in neither.
    columns.append(
        (pl.col("keep__known_usage") > pl.col("keep__suspect_zeros")).alias("__recorded_in_keep")
    )
    if with_cost:
        columns.append(
            (pl.col("keep__known_cost") > pl.col("keep__suspect_zero_cost")).alias(
                "__cost_recorded_in_keep"
            )
        )
    frame = raw.lazy().select(*keys, *columns)
    for stage in _finish(view):
        frame = frame.with_columns(stage)
    if with_cost:
        for stage in _finish_cost():
            frame = frame.with_columns(stage)
    # The figures first (a few column operations), so the ranks know whether any is a bound.
    frame = _with_ranks(frame.collect(engine="in-memory"), with_cost)
    if method != "none":
        frame = frame.with_columns(delta_intervals(with_cost))
    else:
        frame = frame.with_columns(
            pl.lit(None, dtype=pl.Float64).alias(name) for name in interval_columns(with_cost)
        )
    return frame


def _collect_views(frames: list[pl.LazyFrame]) -> list[pl.DataFrame]:
    """The view frames, on polars' in-memory engine: they start from the aggregate frame, one
    row per group, already in memory, and their sorts and searches (the ranks) run in about
    half the time the default (streaming) engine takes at 200,000 groups."""
    return pl.collect_all(frames, engine="in-memory")


def _views(
    attempts: pl.DataFrame | pl.LazyFrame | None,
    keys: list[str],
    views: Sequence[View],
    with_cost: bool,
    settings: IntervalSettings,
    streaming: bool = False,
    *,
    raw: pl.DataFrame | None = None,
    rows_for: BootstrapRows | None = None,
) -> dict[View, pl.DataFrame]:
    """The summary frame of each view: one aggregation pass (or `raw`, the aggregate frame
    another engine computed), then the intervals."""
    if streaming and settings.method == "bootstrap":
        raise ValueError(
            "a bootstrap of every group needs every attempt in memory; streamed attempts "
            "take 'auto' (bootstrap under the cap, delta method above), 'delta' or 'none'"
        )
    if raw is None:
        assert attempts is not None
        raw = _aggregate(attempts, keys, with_cost, streaming)
    lazy = {view: _view_frame(raw, keys, view, with_cost, settings.method) for view in views}
    columns = view_columns(with_cost)
    if settings.method in ("delta", "none"):
        # Nothing to bootstrap: the notes and the final columns join the same query.
        values = interval_value_columns(with_cost)
        lazy = {
            view: finish_intervals(frame, values, pl.lit(False)).select(*keys, *columns)
            for view, frame in lazy.items()
        }
        return dict(zip(lazy, _collect_views(list(lazy.values())), strict=True))
    frames = dict(zip(lazy, _collect_views(list(lazy.values())), strict=True))
    frames = with_view_intervals(attempts, keys, frames, with_cost, settings, streaming, rows_for)
    return {view: frame.select(*keys, *columns) for view, frame in frames.items()}


def summarize(
    attempts: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str] = DEFAULT_BY,
    view: View = "keep",
    *,
    intervals: IntervalMethod | IntervalSettings = "auto",
) -> pl.DataFrame:
    """Every metric of one view, one row per group (every group, even one the view empties).

    Columns: the group keys (each under its `group_column`), `METRICS`, `COST_METRICS` when
    the attempts have a cost column, then the 95% interval columns, `ci_method` and `ci_note`
    (see `view_columns`).
    """
    if view not in VIEWS:
        counted(view)  # raises the error that names the views
    attempts, keys = grouped(attempts, by)
    frames = _views(attempts, keys, [view], has_cost(attempts), interval_settings(intervals))
    return frames[view]


def compare(
    attempts: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str] = DEFAULT_BY,
    *,
    intervals: IntervalMethod | IntervalSettings = "auto",
    streaming: bool = False,
) -> Comparison:
    """Both views and the trap figures (hidden tokens, trap factor, rank moves) in one pass.

    With a `cost` column the views also carry cost per accepted result (see COST_METRICS) and
    the trap its cost figures. `intervals` picks how 95% intervals are computed: "auto"
    (bootstrap for small groups, delta method above), "delta", "bootstrap" or "none"; or an
    `IntervalSettings` for the resample count, seed and thresholds.

    `streaming`: the attempts are a LazyFrame larger than memory (`load.scan`). The same
    figures come out, in bounded memory: every query runs on polars' streaming engine, medians
    are read from counts of each (group, token count) pair, and "auto" bootstraps only what
    its cap allows, reading those few rows again. "bootstrap" (every group) raises ValueError.
    """
    settings = interval_settings(intervals)
    with_cost = has_cost(attempts)
    attempts, keys = grouped(attempts, by)
    frames = _views(attempts, keys, VIEWS, with_cost, settings, streaming)
    return _comparison(frames, by, keys, with_cost, settings)


def compare_aggregates(
    raw: pl.DataFrame,
    by: Sequence[str],
    *,
    with_cost: bool,
    intervals: IntervalMethod | IntervalSettings = "auto",
    bootstrap_rows: BootstrapRows | None,
) -> Comparison:
    """`compare` from an aggregate frame another engine computed (the Spark engine's
    `aggregate_frame`, or `cube.Cube`'s: one row per group in key order, `keep__*` and
    `drop__*` raw aggregates as `_aggregate` returns them), so every figure past the
    aggregation has this one definition. `bootstrap_rows` fetches the attempts of the groups
    a bootstrap resamples; None with intervals that resample nothing ("delta", "none")."""
    by = _group_keys(by)
    keys = [group_column(name) for name in by]
    settings = interval_settings(intervals)
    if bootstrap_rows is None and settings.method not in ("delta", "none"):
        raise ValueError(f"intervals={settings.method!r} resample attempts: give bootstrap_rows")
    raw = raw.rename(dict(zip(by, keys, strict=True)))
    rows_for = bootstrap_rows
    if bootstrap_rows is not None and keys != by:
        # The engine finds a group's attempts by the keys' own names.
        names = dict(zip(keys, by, strict=True))
        rows_for = lambda groups: bootstrap_rows(groups.rename(names))  # noqa: E731
    frames = _views(None, keys, VIEWS, with_cost, settings, raw=raw, rows_for=rows_for)
    return _comparison(frames, by, keys, with_cost, settings)


def _comparison(
    frames: dict[View, pl.DataFrame],
    by: Sequence[str],
    keys: list[str],
    with_cost: bool,
    settings: IntervalSettings,
) -> Comparison:
    keep, drop = frames["keep"], frames["drop"]
    trap_columns = [
        (keep["total_tokens"] - drop["total_tokens"]).alias("hidden_tokens"),
        (keep["attempts"].cast(pl.Int64) - drop["attempts"].cast(pl.Int64)).alias(
            "hidden_attempts"
        ),
        *_trap_factor(keep, drop, "tokens_per_accepted_result", "lower_bound", "trap_factor"),
        *[
            frame[f"rank{end}"].alias(f"{view}_rank{end}")
            for view, frame in (("keep", keep), ("drop", drop))
            for end in ("", "_best", "_worst")
        ],
    ]
    if with_cost:
        trap_columns += [
            (keep["total_cost"] - drop["total_cost"]).alias("hidden_cost"),
            *_trap_factor(
                keep, drop, "cost_per_accepted_result", "cost_lower_bound", "cost_trap_factor"
            ),
            *[
                frame[f"cost_rank{end}"].alias(f"{view}_cost_rank{end}")
                for view, frame in (("keep", keep), ("drop", drop))
                for end in ("", "_best", "_worst")
            ],
        ]
    trap = keep.lazy().select(keys).with_columns(trap_columns).collect()
    return Comparison(
        by=tuple(by), keep=keep, drop=drop, trap=trap, key_columns=tuple(keys), intervals=settings
    )


def _trap_factor(
    keep: pl.DataFrame, drop: pl.DataFrame, value: str, bound: str, name: str
) -> list[pl.Series]:
    """keep / drop per accepted result, and whether that is only a lower bound.

    Both views divide by the same accepted attempts, so the factor is keep total / drop total.
    Unknown usage on failed attempts only (the drop figure exact) makes it a lower bound; unknown
    usage on an accepted attempt leaves it undetermined (null): both totals would grow.
    """
    frame = pl.DataFrame(
        {"keep": keep[value], "drop": drop[value], "kb": keep[bound], "db": drop[bound]}
    )
    out = frame.select(
        pl.when(~pl.col("db")).then(pl.col("keep") / pl.col("drop")).alias(name),
    ).with_columns(
        (pl.col(name).is_not_null() & frame["kb"] & ~frame["db"]).alias(f"{name}_lower_bound")
    )
    return [out[name], out[f"{name}_lower_bound"]]


def with_intervals(
    comparison: Comparison,
    attempts: pl.DataFrame | pl.LazyFrame,
    intervals: IntervalMethod | IntervalSettings = "auto",
) -> Comparison:
    """The same comparison with its interval columns computed by another method.

    `attempts` must be the attempts `comparison` was computed from. The fast path is a
    comparison made with `intervals="delta"` (the delta method costs nothing beyond the single
    pass): "auto" and "bootstrap" then only read the attempts of the groups they bootstrap,
    and every other figure is reused as is. "none" and "delta" never read the attempts. From
    a comparison made another way (its delta bounds are not all there any more), the whole
    comparison is recomputed.
    """
    settings = interval_settings(intervals)
    with_cost = comparison.has_cost
    names = [*interval_columns(with_cost), *INTERVAL_NOTES]
    if settings.method == "none":
        frames = {
            view: comparison.view(view).with_columns(
                pl.lit(None, dtype=comparison.view(view).schema[name]).alias(name) for name in names
            )
            for view in VIEWS
        }
        return same_groups(comparison, keep=frames["keep"], drop=frames["drop"], intervals=settings)
    if comparison.intervals.method != "delta":
        return compare(attempts, comparison.by, intervals=settings)
    if settings.method == "delta":
        return same_groups(comparison, intervals=settings)
    attempts, keys = grouped(attempts, comparison.by)
    frames = with_view_intervals(
        attempts, keys, {view: comparison.view(view) for view in VIEWS}, with_cost, settings
    )
    columns = view_columns(with_cost)
    keep, drop = (frames[view].select(*keys, *columns) for view in VIEWS)
    return same_groups(comparison, keep=keep, drop=drop, intervals=settings)


def same_groups(comparison: Comparison, **changes: Any) -> Comparison:
    """`replace(comparison, **changes)` keeping its labels once made, when the groups are the
    same in the same order (200,000 labels are made once per comparison, not per interval
    update)."""
    updated = replace(comparison, **changes)
    labels = comparison.__dict__.get("labels")
    keys = list(comparison.key_columns)
    if labels is not None and updated.keep.select(keys).equals(comparison.keep.select(keys)):
        updated.__dict__["labels"] = labels
    return updated


def in_view(attempts: pl.DataFrame, view: View) -> pl.DataFrame:
    """The attempts a view counts (the rows the table shows)."""
    return attempts if view == "keep" else attempts.filter(counted(view))
