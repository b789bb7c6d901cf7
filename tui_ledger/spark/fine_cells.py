"""The figures' cells and the pairs' per-task cells from one aggregation.

The figures read cells per (group, outcome) (`aggregate.cell_plan`) and the paired verdicts
read sums per (group, task) (`PairCells.tasks`): asked as two aggregations, the server
derived every row's columns twice and hashed it twice (cells 0.42 s and pairs 0.6-0.8 s of
the figures' query at 1M Parquet rows, local[2]). `aggregate.cells_and_pairs_plan` asks one, per
(group, task, outcome) (and, where the task is missing, per token count as well: a cluster
of its own in the pairs), and `split_cells_and_pairs` makes both frames of it here:

- the cells pool as ledger.py pools a finer grouping's (`pooled_cells`): counts and the exact
  sum add, means and `m2` pool (Chan et al.), so the variance may differ from one count over
  the rows in its last bits, as the engine's partial aggregates already do;
- the pairs' sums add: whole token counts, exact in float64 in any order.

Pure polars (no pyspark): the plan is `aggregate.cells_and_pairs_plan`; tests check the
split against the local definitions (tests/test_fine_cells.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from tui_ledger.accounting.ledger import pooled_cells
from tui_ledger.schema import ACCEPTED
from tui_ledger.spark.middles import BUCKET, HISTOGRAM_COLUMNS

__all__ = [
    "CELL_NAMES",
    "COUNTED",
    "PAIR_COLUMNS",
    "SPEND",
    "TASK",
    "TOKENS",
    "cell_names",
    "counted_sums",
    "empty_keys",
    "merged_histogram",
    "pair_tasks",
    "split_cells_and_pairs",
    "trimmed",
]

TASK, TOKENS, PASSED, SPEND = "__task", "__tokens", "__passed", "__spend_sum"
COUNTED = "__counted_"
CELL_NAMES = ("n", "known", "zeros", "sum_tokens", "mean_tokens", "m2_tokens")
COST_CELL_NAMES = ("known_cost", "zero_cost", "sum_cost", "mean_cost", "m2_cost")
PAIR_COLUMNS = (TASK, TOKENS, PASSED, "__n", "__spend", "__accepted", "__accepted_spend")


def cell_names(with_cost: bool) -> list[str]:
    """The columns of `aggregate.cell_aggregates`, in order."""
    return [*CELL_NAMES, *(COST_CELL_NAMES if with_cost else ())]


def counted_sums(found: pl.DataFrame) -> dict[str, int]:
    """The `counts` of `aggregate.cells_and_pairs_plan`, each added up over its rows."""
    names = [name for name in found.columns if name.startswith(COUNTED)]
    if not names:
        return {}
    sums = found.select(pl.col(names).cast(pl.Int64).sum()).row(0, named=True)
    return {name.removeprefix(COUNTED): int(value or 0) for name, value in sums.items()}


def trimmed(frame: pl.DataFrame, names: Sequence[str]) -> pl.DataFrame:
    """`frame` with the text of `names` trimmed of white space at both ends, as the loader
    trims a key (and the engine's `cells.stripped`): the groups of keys read as they are
    (`cells.RAW`), made the groups of the keys as the attempts hold them. Groups whose
    keys are now alike are added up by the frame's own reader (`split_cells_and_pairs`,
    `merged_histogram`)."""
    present = [name for name in names if name in frame.columns]
    return frame.with_columns(pl.col(present).str.strip_chars())


def merged_histogram(histogram: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """A usage histogram (`middles`) with one row per group and bucket again: counts add,
    the least and greatest values are the least and greatest of the rows'."""
    combine = {"n": pl.Expr.sum, "lo": pl.Expr.min, "hi": pl.Expr.max}
    return histogram.group_by(*keys, BUCKET).agg(
        combine[name.rsplit("_", 1)[1]](pl.col(name)) for name in HISTOGRAM_COLUMNS
    )


def empty_keys(found: pl.DataFrame, key: str) -> int:
    """The attempts whose `key` is missing or empty, from the rows of
    `aggregate.cells_and_pairs_plan` once `trimmed`: the validation's count of empty
    workflows."""
    empty = pl.col(key).is_null() | (pl.col(key) == "")
    return int(found.filter(empty).get_column("n").sum() or 0)


def split_cells_and_pairs(
    found: pl.DataFrame, keys: Sequence[str], with_cost: bool
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The cells (as `cell_plan` returns them) and `PairCells.tasks` (`pair_tasks`) from
    `aggregate.cells_and_pairs_plan`'s rows."""
    keys = list(keys)
    fine = found.with_columns(pl.col("sum_tokens").cast(pl.Int128))
    # A cell whose LONG sum overflowed is null there; its pooled sum must be too, so that
    # `aggregates_from` counts the sums again exactly (pooled, the nulls would be skipped).
    overflowed = fine.filter(pl.col("sum_tokens").is_null() & (pl.col("known") > 0)).height > 0
    cells = pooled_cells(fine.lazy(), keys, with_cost, count_dtype=pl.Int64).collect()
    if overflowed:
        cells = cells.with_columns(
            pl.when(pl.col("known") > 0)
            .then(None)
            .otherwise(pl.col("sum_tokens"))
            .alias("sum_tokens")
        )
    cells = cells.select(*keys, "outcome", *cell_names(with_cost))
    return cells, pair_tasks(fine, keys)


def pair_tasks(found: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """`PairCells.tasks` from `aggregate.cells_and_pairs_plan`'s rows: the sums per (group,
    task), or per (group, tokens, accepted) value where the task is missing."""
    accepted = pl.col("outcome") == ACCEPTED
    unnamed = pl.col(TASK).is_null()
    return (
        found.with_columns(pl.when(unnamed).then(accepted).alias(PASSED))
        .group_by(*keys, TASK, TOKENS, PASSED)
        .agg(
            pl.col("n").sum().cast(pl.Int64).alias("__n"),
            pl.col(SPEND).sum().cast(pl.Float64).alias("__spend"),
            pl.col("n").filter(accepted).sum().cast(pl.Int64).alias("__accepted"),
            pl.col(SPEND).filter(accepted).sum().cast(pl.Float64).alias("__accepted_spend"),
        )
        .with_columns(
            pl.col(TASK).cast(pl.String),
            pl.col(TOKENS).cast(pl.Float64),
            pl.col(PASSED).cast(pl.Boolean),
        )
        .select(*keys, *PAIR_COLUMNS)
    )
