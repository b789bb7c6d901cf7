"""The one pass of the accounting: the attempts counted into (group, outcome) cells, and both
views' raw aggregates per group summed from those cells (keep = every outcome's cell, drop =
the `passed` cell), with the medians read beside them.

`ledger.compare` finishes these aggregates into the figures, ranks, intervals and the trap;
the cube (`cube.Cube`) and the Spark engine count the same cells their own way and hand them
to the same tail (`pooled_cells`, `view_aggregates`, `aggregate_frame`), so each figure has
one definition whoever counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import polars as pl

from tui_ledger.accounting.frame_columns import _group_keys
from tui_ledger.accounting.key_order import sorted_by_text
from tui_ledger.accounting.medians import medians_in_memory, streamed_medians
from tui_ledger.schema import ACCEPTED, COST_COLUMN, NEVER_ACTED, OUTCOMES, View, known_zeros

_tokens = pl.col("tokens")
_cost = pl.col(COST_COLUMN).cast(pl.Float64, strict=False)
# A cost of 0 on an attempt whose usage was not recorded (missing or 0 tokens) is suspect in the
# same way as a 0 token count: it may only mean nothing was metered (SPEC.md section 1).
_suspect_zero_cost = (_cost == 0) & (_tokens.is_null() | (_tokens == 0))


@cache  # the same expressions every time: built once (a recompute is Python-bound)
def _cell_aggregations(with_cost: bool, with_known_zeros: bool = False) -> tuple[pl.Expr, ...]:
    """Per (group, outcome) cell: the counts and sums both views are made of.

    `with_known_zeros`: a 0 on an attempt marked NEVER_ACTED is no suspect 0.

    `mean_*` and `m2_*` (sum of squared deviations) are of spend with missing read as 0, so the
    cells combine into a group's variance exactly as one pass over its rows would (Chan et al.).
    """
    spend = _tokens.fill_null(0).cast(pl.Float64)
    known = [~pl.col(NEVER_ACTED).fill_null(False)] if with_known_zeros else []
    several = pl.len() > 1
    aggregates = [
        pl.len().cast(pl.UInt32).alias("n"),
        _tokens.count().cast(pl.UInt32).alias("known"),
        (_tokens == 0).and_(*known).sum().cast(pl.UInt32).alias("zeros"),
        # Int128: a sum of Int64 token counts can pass 2**63; it must never wrap.
        _tokens.cast(pl.Int128).sum().alias("sum_tokens"),
        spend.mean().alias("mean_tokens"),
        pl.when(several).then(spend.var() * (pl.len() - 1)).otherwise(0.0).alias("m2_tokens"),
    ]
    if with_cost:
        cost = _cost.fill_null(0.0)
        aggregates += [
            _cost.count().cast(pl.UInt32).alias("known_cost"),
            _suspect_zero_cost.sum().cast(pl.UInt32).alias("zero_cost"),
            _cost.sum().alias("sum_cost"),
            cost.mean().alias("mean_cost"),
            pl.when(several).then(cost.var() * (pl.len() - 1)).otherwise(0.0).alias("m2_cost"),
        ]
    return tuple(aggregates)


def _view_mask(view: View) -> pl.Expr:
    """The cells a view sums: every outcome (keep), the accepted one (drop)."""
    outcome = pl.col("outcome")
    return outcome.is_not_null() if view == "keep" else outcome == ACCEPTED


def _in_view(mask: pl.Expr, name: str, empty: float = 0) -> pl.Expr:
    """A cell column where `mask` holds, `empty` elsewhere: summed per group it is the sum over
    the view's cells (an added 0 changes no sum), and polars sums it on its fast path (a
    `filter` inside a 200,000-group aggregation is evaluated group by group)."""
    return pl.when(mask).then(pl.col(name)).otherwise(pl.lit(empty))


# The views whose cells' means can differ (several outcomes): keep. The drop view counts one
# cell per group, so its variance is that cell's own.
_SPREAD_VIEWS: tuple[View, ...] = ("keep",)


def _deviation(view: View, measure: str) -> str:
    return f"__{view}_deviation_{measure}"


def _with_deviations(cells: pl.LazyFrame, keys: list[str], with_cost: bool) -> pl.LazyFrame:
    """The cells (sorted by outcome) with, per measure, each cell's term of the keep view's
    combined variance: n * (its mean - the group's mean)^2.

    The group's mean is a window over the cells (`over(keys)`), so the variance's sums stay
    plain column sums in the aggregation (`_combined_variance`). The drop view sums one cell
    (the accepted one), whose term is 0: it has no window."""
    measures = ["tokens", "cost"] if with_cost else ["tokens"]
    frame = cells.sort("outcome")  # a group's float sums add up in the same order every run
    terms = []
    for view in _SPREAD_VIEWS:
        mask = _view_mask(view)
        for measure in measures:
            n = _in_view(mask, "n").cast(pl.Float64)
            mean = _in_view(mask, f"mean_{measure}", 0.0)
            terms.append(
                pl.when(mask)
                .then(_spread(n, mean, keys))
                .otherwise(pl.lit(0.0))
                .alias(_deviation(view, measure))
            )
    return frame.with_columns(terms)


def _spread(n: pl.Expr, mean: pl.Expr, over: list[str]) -> pl.Expr:
    """A part's term of its group's pooled `m2` (Chan et al.): n * (its mean - the group's
    mean)^2, the group's mean a window over `over`. The pooled `m2` is the parts' own `m2`
    plus these terms: exact in the reals, its last bits those of another order of sums."""
    grand = (n * mean).sum().over(over) / n.sum().over(over)
    return n * (mean - grand) ** 2


def pooled_cells(
    cells: pl.LazyFrame,
    keys: list[str],
    with_cost: bool,
    *,
    count_dtype: type[pl.DataType] = pl.UInt32,
) -> pl.LazyFrame:
    """Cells of a finer grouping (`_cell_aggregations`' columns, grouped by more columns than
    `keys`) combined into those of `[*keys, "outcome"]`, as if counted from the rows: counts
    and sums add, means and `m2` pool (`_spread`). The float columns may differ from a count
    over the rows in their last bits (another order of additions); `sum_tokens` (Int128) and
    the counts (`count_dtype`: Int64 for a cluster's cells) are exact."""
    measures = ["tokens", "cost"] if with_cost else ["tokens"]
    cell_keys = [*keys, "outcome"]
    n = pl.col("n").cast(pl.Float64)
    counts = ["n", "known", "zeros", *(["known_cost", "zero_cost"] if with_cost else [])]
    return (
        cells.with_columns(
            _spread(n, pl.col(f"mean_{measure}"), cell_keys).alias(f"__spread_{measure}")
            for measure in measures
        )
        .group_by(cell_keys)
        .agg(
            *[pl.col(name).sum().cast(count_dtype) for name in counts],
            pl.col("sum_tokens").sum().cast(pl.Int128),
            *([pl.col("sum_cost").sum()] if with_cost else []),
            *[
                ((pl.col(f"mean_{measure}") * n).sum() / n.sum()).alias(f"mean_{measure}")
                for measure in measures
            ],
            *[
                (pl.col(f"m2_{measure}").sum() + pl.col(f"__spread_{measure}").sum()).alias(
                    f"m2_{measure}"
                )
                for measure in measures
            ],
        )
    )


def _combined_variance(view: View, measure: str) -> pl.Expr:
    """The sample variance of a group's spend from its cells (null under two attempts), the
    cells' own `m2` plus the spread of their means (`_with_deviations`)."""
    mask = _view_mask(view)
    total = _in_view(mask, "n").cast(pl.Float64).sum()
    m2 = _in_view(mask, f"m2_{measure}", 0.0).sum()
    if view in _SPREAD_VIEWS:
        m2 = m2 + pl.col(_deviation(view, measure)).sum()
    return pl.when(total > 1).then(m2 / (total - 1.0))


def view_aggregates(cells: pl.LazyFrame, keys: list[str], with_cost: bool) -> pl.LazyFrame:
    """Both views' raw aggregates per group (`keep__*`, `drop__*`) from the (group, outcome)
    cells, whichever engine counted them (`_cell_aggregations`' columns)."""
    return (
        _with_deviations(cells, keys, with_cost)
        .group_by(keys)
        .agg(*_view_aggregations("keep", with_cost), *_view_aggregations("drop", with_cost))
    )


@cache  # the same expressions every time: built once (a recompute is Python-bound)
def _view_aggregations(view: View, with_cost: bool) -> tuple[pl.Expr, ...]:
    """One view's raw aggregates from the cells (group_by keys, over `_with_deviations`'
    frame), prefixed with the view."""
    outcome = pl.col("outcome")
    mask = _view_mask(view)

    def total(name: str, condition: pl.Expr | None = None) -> pl.Expr:
        return _in_view(mask if condition is None else mask & condition, name).sum()

    aggregates = [
        total("n").cast(pl.UInt32).alias("attempts"),
        total("n", outcome == ACCEPTED).cast(pl.UInt32).alias("accepted"),
        *[total("n", outcome == name).cast(pl.UInt32).alias(name) for name in OUTCOMES],
        (total("n") - total("known")).cast(pl.UInt32).alias("missing_usage"),
        total("known").cast(pl.UInt32).alias("known_usage"),
        total("zeros").cast(pl.UInt32).alias("suspect_zeros"),
        total("sum_tokens").cast(pl.Int128).alias("sum_known_tokens"),
        _combined_variance(view, "tokens").alias("var_tokens"),
    ]
    if with_cost:
        aggregates += [
            total("known_cost").cast(pl.UInt32).alias("known_cost"),
            total("zero_cost").cast(pl.UInt32).alias("suspect_zero_cost"),
            total("sum_cost").cast(pl.Float64).alias("sum_known_cost"),
            _combined_variance(view, "cost").alias("var_cost"),
        ]
    return tuple(expr.alias(f"{view}__{expr.meta.output_name()}") for expr in aggregates)


def _aggregate(
    attempts: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str],
    with_cost: bool,
    streaming: bool = False,
) -> pl.DataFrame:
    """Both views' raw aggregates per group (`keep__*`, `drop__*`), sorted by the keys.

    The one big pass is a `group_by([*keys, "outcome"])` of counts and sums: both views are
    sums over those few cells (keep: every outcome; drop: the `passed` cell). Medians need the
    rows, so a second query (keep median, and the median over accepted attempts) runs beside
    it in the same `collect_all`. `streaming` (attempts larger than memory): both queries run
    on polars' streaming engine, and the medians are read from value counts instead
    (`_value_counts`, `_medians_from_counts`), since a median gathers every row of its group.
    """
    keys = _group_keys(by)
    frame = attempts.lazy()
    schema = frame.collect_schema()
    known = known_zeros(schema)
    # Text keys are grouped as Categorical: each distinct text is hashed once, not every row's
    # (the groups come back as String below, so labels and order are the same).
    text = [name for name in keys if schema[name] == pl.String]
    frame = frame.select(
        pl.col(name).cast(pl.Categorical) if name in text else pl.col(name)
        for name in read_columns(keys, with_cost, known)
    )
    cells = frame.group_by([*keys, "outcome"]).agg(_cell_aggregations(with_cost, known))
    if streaming:
        # One pass at a time (two at once hold two streams' buffers); the cells also carry
        # their range of known usage, where the medians' narrowing starts.
        ranged = frame.group_by([*keys, "outcome"]).agg(
            *_cell_aggregations(with_cost, known),
            _tokens.min().cast(pl.Int128).alias("__lo"),
            _tokens.max().cast(pl.Int128).alias("__hi"),
        )
        cell_frame = ranged.collect(engine="streaming")
        median_frame = streamed_medians(frame, keys, cell_frame)
        cell_frame = cell_frame.drop("__lo", "__hi")
    else:
        cell_frame, median_frame = medians_in_memory(frame, keys, cells)
    raw = aggregate_frame(cell_frame.lazy(), median_frame, keys, with_cost)
    return raw.with_columns(pl.col(name).cast(pl.String) for name in text)


def aggregate_frame(
    cells: pl.LazyFrame, medians: pl.DataFrame, keys: list[str], with_cost: bool
) -> pl.DataFrame:
    """The aggregate frame `_views` reads, from the (group, outcome) cells and both views'
    medians per group (a group with no known usage may be missing: its medians read null),
    sorted by the keys' text: the one tail of `_aggregate` and of `cube.Cube.compare`."""
    # Cells in outcome order, so a group's float sums add up in the same order on every run.
    # One small lazy query from here (each eager step would be a query of its own, and each
    # has to take the GIL back: costly beside a thread that is drawing).
    raw = (
        view_aggregates(cells, keys, with_cost)
        .join(medians.lazy(), on=keys, how="left", nulls_equal=True)
        .collect()
    )
    return sorted_by_text(raw, keys)


def read_columns(by: Sequence[str], with_cost: bool, with_known_zeros: bool = False) -> list[str]:
    """The only columns `compare` reads of the attempts (grouped by `by`; the cost column when
    they have one, `has_cost`; NEVER_ACTED where it marks known zeros, `known_zeros`): whoever
    hands it a part of a frame need gather no others."""
    extra = [*([COST_COLUMN] if with_cost else []), *([NEVER_ACTED] if with_known_zeros else [])]
    return list(dict.fromkeys([*by, "outcome", "tokens", *extra]))
