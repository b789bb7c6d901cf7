"""Pass rate against spend per accepted result, per group and view, with the frontier: the data
of both Pareto charts (the app's `c`, and `pareto_svg` for slides)."""

from __future__ import annotations

import polars as pl

from tui_ledger.accounting.ledger import VIEWS, Comparison, ParetoMetric


def pareto_points(comparison: Comparison, metric: ParetoMetric = "tokens") -> pl.DataFrame:
    """Pass rate against spend per accepted result, per group and view, with the frontier.

    Columns: `group` (label), `view`, `pass_rate`, `per_accepted`, `lower_bound`, `usage`,
    `frontier`. Keep rows are the real points; drop rows are the ghosts the trap shows.
    `frontier` is true for a point no other point of its view beats on both axes (higher pass
    rate and lower spend). Groups with no accepted attempt have a null `per_accepted` and
    cannot be plotted; nor can groups whose usage (`usage` "not_recorded") was never recorded,
    which a chart leaves out with a note. A `lower_bound` point is only the least its spend
    can be (a chart draws it open to the right); the frontier is taken at the figures as read.
    """
    if metric == "cost" and not comparison.has_cost:
        raise ValueError("no cost figures: load prices (--prices) or a cost column first")
    value, bound, usage = (
        ("tokens_per_accepted_result", "lower_bound", "usage")
        if metric == "tokens"
        else ("cost_per_accepted_result", "cost_lower_bound", "cost_usage")
    )
    frames = []
    groups = pl.Series("group", comparison.labels, dtype=pl.String)  # made once, both views
    for view in VIEWS:
        frame = comparison.view(view)
        points = pl.DataFrame(
            {
                "group": groups,
                "view": pl.repeat(view, frame.height, dtype=pl.String, eager=True),
                "pass_rate": frame["pass_rate"].cast(pl.Float64),
                "per_accepted": frame[value].cast(pl.Float64),
                "lower_bound": frame[bound].cast(pl.Boolean),
                "usage": frame[usage].cast(pl.String),
            }
        ).with_row_index("__order")
        ranked = points.filter(pl.col("per_accepted").is_not_null()).sort(
            ["per_accepted", "pass_rate", "__order"], descending=[False, True, False]
        )
        # Cheapest first: a point is on the frontier when it passes more than every cheaper one.
        best_before = pl.col("pass_rate").cum_max().shift(1).fill_null(-1.0)
        frontier = ranked.select("__order", (pl.col("pass_rate") > best_before).alias("frontier"))
        frames.append(
            points.join(frontier, on="__order", how="left", maintain_order="left")
            .with_columns(pl.col("frontier").fill_null(False))
            .drop("__order")
        )
    return pl.concat(frames)
