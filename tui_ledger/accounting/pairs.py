"""The draws behind the pairwise verdicts (`verdicts`): a bootstrap of the ratio of two groups'
tokens per accepted result, paired and clustered by task where the groups share tasks.

Miller ("Adding Error Bars to Evals", 2024, arXiv:2411.00640) shows why: the spread between
tasks dwarfs the difference between agents, so two groups that ran the same tasks are compared
on the same task draw, every attempt of a task drawn together. Each draw gives every task a
Poisson(1) weight (the Poisson bootstrap: the same law as resampling the tasks with
replacement, and the same weights serve every group); a group's tokens and accepted attempts in
the draw are its per-task sums weighted so. Groups that share no task (or a ledger without a
task column) are drawn on their own attempts, each group independently, with Poisson weights
per attempt: the attempts are first counted per distinct (tokens, accepted) value, and a value
seen n times gets one Poisson(n) weight, which is the same law. A group with more distinct
values than `EXACT_VALUES` (or once `EXACT_BUDGET` values have been drawn one by one) is drawn
from the normal limit of those sums (the law the delta method rests on), which at that size is
the bootstrap's own.

Every number is numpy over small matrices (groups x draws); see docs/ACCOUNTING.md ("Pairs").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np
import polars as pl

from tui_ledger.accounting.comparison import LOWER_BOUND, NOT_RECORDED, Comparison
from tui_ledger.accounting.ledger import same_groups
from tui_ledger.accounting.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from tui_ledger.accounting.verdicts import PAIRED, UNPAIRED, Pair, Pairs, verdict
from tui_ledger.schema import ACCEPTED, VIEWS, View

ALL_PAIRS_UP_TO = 50
"""Groups (with a figure, per view) up to which every pair is compared."""
NEIGHBOURS = 3
"""Past `ALL_PAIRS_UP_TO`: each group is compared with the cheapest and this many next to it."""
GROUPS_UP_TO = 2_000
"""Groups per view (the cheapest) that are compared at all: past it, the dearer ones are left
out (a ledger grouped by task can have 200,000 groups; 2,000 groups' pairs take about a
second, `benchmarks/pairs_bench.py`)."""
EXACT_VALUES = 5_000
"""Unpaired draws: distinct (tokens, accepted) values per group drawn one by one; above, the
normal limit."""
EXACT_BUDGET = 20_000
"""Unpaired draws: distinct values drawn one by one over all the groups of one comparison (at
1,000 resamples, 20 million Poisson draws, about a second here); the groups drawn after it is
spent use the normal limit (a ledger grouped by workflow and task at 1M rows has 4,000 groups
of 250 values: 24 s drawn one by one)."""
_CELLS_AT_ONCE = 4_000_000  # task x group cells per matrix product (32 MB of float64)


@dataclass(frozen=True)
class PairCells:
    """What the draws read, counted from the attempts (by `task_cells`, or on another engine):

    - `tasks`: one row per (group, task): `__n` attempts, `__spend` their tokens, `__accepted`
      the accepted ones and `__accepted_spend` their tokens. Where the task is missing (or the
      attempts have no task column), one row per (group, tokens, accepted) value instead, each
      a cluster of its own (`__tokens`, `__passed` keep those values apart; null elsewhere).
      A few rows per group and task: what the paired draws, the sizes and the shared tasks read.
    - `values()`: one row per (group, tokens, accepted) value, `__n` attempts, for the groups
      drawn on their own attempts. About one row per attempt where token counts are distinct,
      so it is counted only when some pair is drawn unpaired (most ledgers with a task column
      never need it).

    Tokens missing count as 0 (the figures' own rule: a lower bound); every sum is of whole
    token counts, exact in float64 in any order, so every engine gives the same cells."""

    tasks: pl.DataFrame
    values: Callable[[], pl.DataFrame]


def with_pairs(
    comparison: Comparison,
    attempts: pl.DataFrame | pl.LazyFrame | None = None,
    *,
    cells: PairCells | None = None,
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> Comparison:
    """The comparison with its `pairs` (see `compare_pairs`), drawn from the attempts it was
    made of or from their `task_cells` (another engine counted them); every other figure as
    it was."""
    if cells is None:
        if attempts is None:
            raise ValueError("with_pairs needs the attempts or their cells")
        cells = task_cells(attempts, comparison.by)
    return same_groups(
        comparison, pairs=pairs_from_cells(comparison, cells, seed=seed, resamples=resamples)
    )


def compare_pairs(
    comparison: Comparison,
    attempts: pl.DataFrame | pl.LazyFrame,
    *,
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> Pairs:
    """Every pairwise verdict of both views, from the attempts `comparison` was made of."""
    return pairs_from_cells(
        comparison, task_cells(attempts, comparison.by), seed=seed, resamples=resamples
    )


def task_cells(attempts: pl.DataFrame | pl.LazyFrame, by: Sequence[str]) -> PairCells:
    """The attempts' `PairCells`: the per-task sums now, the per-value counts when asked."""
    frame = attempts.lazy()
    has_task = "task" in frame.collect_schema()
    # a LazyFrame is a scan, maybe larger than memory: its cells are counted streaming
    engine: Literal["streaming", "auto"] = (
        "streaming" if isinstance(attempts, pl.LazyFrame) else "auto"
    )
    tokens = pl.col("tokens").fill_null(0).cast(pl.Float64)
    accepted = (pl.col("outcome") == ACCEPTED).fill_null(False)
    unnamed = pl.col("task").is_null() if has_task else pl.lit(True)
    tasks = (
        frame.select(
            *by,
            # cast after the sums (a few rows), not before them (one text per attempt)
            (pl.col("task") if has_task else pl.lit(None, pl.String)).alias("__task"),
            pl.when(unnamed).then(tokens).alias("__tokens"),
            pl.when(unnamed).then(accepted).alias("__passed"),
            tokens.alias("__value"),
            accepted.alias("__accepted"),
        )
        .group_by([*by, "__task", "__tokens", "__passed"])
        .agg(
            pl.len().cast(pl.Int64).alias("__n"),
            pl.col("__value").sum().alias("__spend"),
            pl.col("__accepted").sum().cast(pl.Int64).alias("__accepted"),
            pl.col("__value").filter(pl.col("__accepted")).sum().alias("__accepted_spend"),
        )
        .with_columns(pl.col("__task").cast(pl.String))
        .collect(engine=engine)
    )

    def values() -> pl.DataFrame:
        return (
            frame.select(*by, tokens.alias("__tokens"), accepted.alias("__accepted"))
            .group_by([*by, "__tokens", "__accepted"])
            .agg(pl.len().cast(pl.Int64).alias("__n"))
            .collect(engine=engine)
        )

    return PairCells(tasks, values)


def pairs_from_cells(
    comparison: Comparison, cells: PairCells, *, seed: int, resamples: int
) -> Pairs:
    """`compare_pairs` from `task_cells`' cells (whichever engine counted them)."""
    keys = list(comparison.by)
    orders = {view: _ranked(comparison, view) for view in VIEWS}
    # Only the groups some pair needs are drawn, renumbered densely in label order (so a
    # ledger of 200,000 groups does not make 200,000 x draws sums for 2,000 compared ones).
    compared = sorted({group for order in orders.values() for group in order[:GROUPS_UP_TO]})
    index = (
        comparison.keep.select(comparison.key_columns)
        .rename(dict(zip(comparison.key_columns, keys, strict=True)))
        .with_row_index("__group")
        .filter(pl.col("__group").is_in(compared))
        .with_row_index("__dense")
        .drop("__group")
    )

    def numbered(frame: pl.DataFrame, order: list[str]) -> pl.DataFrame:
        """The cells of the compared groups, numbered densely, in one order whichever engine
        counted them (a draw's weights go to cells in order)."""
        return (
            frame.join(index, on=keys, how="inner", nulls_equal=True)
            .select(
                pl.col("__dense").cast(pl.Int64).alias("__group"),
                pl.exclude(*keys, "__dense"),
            )
            .sort("__group", *order, nulls_last=True)
        )

    task_order = ["__task", "__tokens", "__passed"]
    tasks = numbered(cells.tasks, task_order).select(
        "__group", "__task", "__n", "__spend", "__accepted", "__accepted_spend"
    )
    draws = _Draws(
        tasks,
        lambda: numbered(cells.values(), ["__tokens", "__accepted", "__n"]),
        compared,
        seed,
        resamples,
    )
    dense = {group: position for position, group in enumerate(compared)}
    chosen: dict[View, tuple[Pair, ...]] = {}
    ranked: dict[View, int] = {}
    possible: dict[View, int] = {}
    capped = False
    for view in VIEWS:
        order = orders[view]
        ranked[view] = len(order)
        possible[view] = len(order) * (len(order) - 1) // 2
        if len(order) > ALL_PAIRS_UP_TO:
            capped = True
        order = order[:GROUPS_UP_TO]
        frame = comparison.view(view)  # read once per view, not once per pair
        figures = frame["tokens_per_accepted_result"].to_list()
        bounds = (frame["usage"] == LOWER_BOUND).to_list()
        chosen[view] = tuple(
            _pair(comparison.labels, figures, bounds, view, draws, dense, order[i], order[j])
            for i, j in _chosen(len(order))
        )
    return Pairs(
        keep=chosen["keep"],
        drop=chosen["drop"],
        ranked=ranked,
        possible=possible,
        capped=capped,
        resamples=resamples,
        seed=seed,
        group_limit=GROUPS_UP_TO,
    )


def _ranked(comparison: Comparison, view: View) -> list[int]:
    """The groups of a view with a figure to compare, cheapest first (ties by label order)."""
    frame = comparison.view(view).with_row_index("__group")
    return (
        frame.filter(
            pl.col("tokens_per_accepted_result").is_not_null()
            & (pl.col("accepted") > 0)
            & (pl.col("usage") != NOT_RECORDED)
        )
        .sort("tokens_per_accepted_result", "__group")
        .get_column("__group")
        .to_list()
    )


def _chosen(count: int) -> list[tuple[int, int]]:
    """The pairs compared among `count` groups in figure order: all of them up to
    `ALL_PAIRS_UP_TO`; past it, each against the cheapest and its `NEIGHBOURS` next ones."""
    if count <= ALL_PAIRS_UP_TO:
        return list(combinations(range(count), 2))
    chosen = {(0, j) for j in range(1, count)}
    chosen |= {(i, j) for i in range(count) for j in range(i + 1, min(count, i + 1 + NEIGHBOURS))}
    return sorted(chosen)


def _pair(
    labels: list[str],
    figures: list[float],
    bounds: list[bool],
    view: View,
    draws: _Draws,
    dense: dict[int, int],
    a: int,
    b: int,
) -> Pair:
    """Groups `a` and `b` (rows of the comparison, whose `labels`, per accepted `figures` and
    lower `bounds` are the view's; `dense` their rows in the draws)."""
    da, db = dense[a], dense[b]
    paired = draws.share_tasks(view, da, db)
    with np.errstate(divide="ignore", invalid="ignore"):  # inf / inf: nan, left out below
        ratio_draws = draws.rates(view, da, paired) / draws.rates(view, db, paired)
    low, high = _percentiles(ratio_draws)
    return Pair(
        a=labels[a],
        b=labels[b],
        ratio=figures[a] / figures[b],
        low=low,
        high=high,
        method=PAIRED if paired else UNPAIRED,
        verdict=verdict(low, high, bounds[a], bounds[b]),
        a_size=draws.size(view, da, paired),
        b_size=draws.size(view, db, paired),
    )


def _percentiles(ratios: np.ndarray) -> tuple[float, float]:
    """The 2.5% and 97.5% points of the draws (nearest rank), leaving out the draws where
    neither group had an accepted attempt (0/0: no reading). Under half the draws left, the
    interval is [0, inf): the sample says nothing."""
    valid = np.sort(ratios[~np.isnan(ratios)])
    if valid.size * 2 < ratios.size or valid.size == 0:
        return 0.0, float("inf")
    last = valid.size - 1
    return float(valid[round(0.025 * last)]), float(valid[round(0.975 * last)])


class _Draws:
    """Each group's bootstrap sums (tokens, accepted) per view, made once and shared by every
    pair: by task (one weight matrix for every group) and by attempt (drawn per group, only
    for the groups some pair needs so)."""

    def __init__(
        self,
        tasks: pl.DataFrame,
        values: Callable[[], pl.DataFrame],
        rows: list[int],
        seed: int,
        resamples: int,
    ) -> None:
        """`tasks`: `PairCells.tasks` numbered by dense group (the position in `rows`, the
        comparison's rows); `values`: `PairCells.values`, numbered so, counted on first use."""
        self._tasks_cells = tasks
        self._values = values
        self._rows = rows
        self._groups = len(rows)
        self._seed = seed
        self._resamples = resamples
        self._tasks: dict[View, list[frozenset[str]]] | None = None
        self._paired: dict[View, tuple[np.ndarray, np.ndarray]] | None = None
        self._unpaired: dict[int, dict[View, tuple[np.ndarray, np.ndarray]]] = {}
        self._rates: dict[tuple[View, int, bool], np.ndarray] = {}
        self._attempts: dict[View, dict[int, int]] = {}
        self._exact_left = EXACT_BUDGET  # distinct values still to be drawn one by one
        self._by_group: dict[tuple[object, ...], pl.DataFrame] | None = None

    def share_tasks(self, view: View, a: int, b: int) -> bool:
        if self._tasks is None:
            self._tasks = {}
            named = self._tasks_cells.filter(pl.col("__task").is_not_null())
            for name in VIEWS:
                sets: list[frozenset[str]] = [frozenset()] * self._groups
                seen = named if name == "keep" else named.filter(pl.col("__accepted") > 0)
                per_group = seen.group_by("__group").agg(pl.col("__task").unique())
                for group, tasks in per_group.iter_rows():
                    sets[group] = frozenset(tasks)
                self._tasks[name] = sets
        return not self._tasks[view][a].isdisjoint(self._tasks[view][b])

    def size(self, view: View, group: int, paired: bool) -> int:
        if paired:
            assert self._tasks is not None
            return len(self._tasks[view][group])
        if view not in self._attempts:
            count = pl.col("__n") if view == "keep" else pl.col("__accepted")
            counts = self._tasks_cells.group_by("__group").agg(count.sum())
            self._attempts[view] = dict(counts.iter_rows())
        return self._attempts[view].get(group, 0)

    def rates(self, view: View, group: int, paired: bool) -> np.ndarray:
        """The group's tokens per accepted result in every draw: inf where a draw has spend
        and no accepted attempt, nan where it has neither (made once per group and view)."""
        key = (view, group, paired)
        if key not in self._rates:
            self._rates[key] = self._rate(view, group, paired)
        return self._rates[key]

    def _rate(self, view: View, group: int, paired: bool) -> np.ndarray:
        if paired:
            if self._paired is None:
                self._paired = self._draw_paired()
            tokens, accepted = (sums[group] for sums in self._paired[view])
        else:
            if group not in self._unpaired:
                self._unpaired[group] = self._draw_unpaired(group)
            tokens, accepted = self._unpaired[group][view]
        with np.errstate(divide="ignore", invalid="ignore"):
            return tokens / accepted

    def _draw_paired(self) -> dict[View, tuple[np.ndarray, np.ndarray]]:
        """Per view, (tokens, accepted) sums of every group in every draw: groups x draws.

        Tasks with no name (a missing task) are each their own cluster, one per attempt value
        cell; the weights come from one generator per seed, in task name order."""
        cells = self._tasks_cells.with_columns(
            pl.when(pl.col("__task").is_null())
            .then(pl.format("\x00{}", pl.int_range(pl.len())))
            .otherwise(pl.col("__task"))
            .alias("__task")
        )
        tasks = cells.get_column("__task").unique().sort()
        task_index = cells.select(
            pl.col("__task").replace_strict(tasks, pl.int_range(len(tasks), eager=True))
        ).to_series()
        weights = np.random.default_rng([self._seed, 1]).poisson(
            1.0, size=(self._resamples, len(tasks))
        )
        weights = weights.astype(np.float64)
        group = cells["__group"].to_numpy()
        task = task_index.to_numpy()
        accepted = cells["__accepted"].to_numpy().astype(np.float64)
        accepted_sums = _weighted_sums(weights, task, group, accepted, self._groups)
        result: dict[View, tuple[np.ndarray, np.ndarray]] = {}
        for view in VIEWS:
            spend = cells["__spend" if view == "keep" else "__accepted_spend"].to_numpy()
            result[view] = (
                _weighted_sums(weights, task, group, spend, self._groups),
                accepted_sums,
            )
        return result

    def _draw_unpaired(self, group: int) -> dict[View, tuple[np.ndarray, np.ndarray]]:
        """One group's (tokens, accepted) sums per draw, drawn on its own attempts."""
        if self._by_group is None:
            # each group's value cells, split once (not filtered again per group)
            self._by_group = self._values().partition_by(
                "__group", as_dict=True, maintain_order=True
            )
        cells = self._by_group[(group,)]
        rng = np.random.default_rng([self._seed, 2, self._rows[group]])
        n = cells["__n"].to_numpy().astype(np.float64)
        tokens = cells["__tokens"].to_numpy()
        accepted = cells["__accepted"].to_numpy().astype(np.float64)
        result: dict[View, tuple[np.ndarray, np.ndarray]] = {}
        if cells.height <= min(EXACT_VALUES, self._exact_left):
            self._exact_left -= cells.height
            counts = rng.poisson(n, size=(self._resamples, cells.height)).astype(np.float64)
            for view in VIEWS:
                spend = tokens if view == "keep" else tokens * accepted
                result[view] = (counts @ spend, counts @ accepted)
            return result
        for view in VIEWS:
            spend = tokens if view == "keep" else tokens * accepted
            result[view] = _normal_sums(rng, n, spend, accepted, self._resamples)
        return result


def _weighted_sums(
    weights: np.ndarray, task: np.ndarray, group: np.ndarray, values: np.ndarray, groups: int
) -> np.ndarray:
    """sum over tasks of weight[draw, task] * value[task, group]: groups x draws, by dense
    task x group blocks of at most `_CELLS_AT_ONCE` cells."""
    tasks = weights.shape[1]
    out = np.zeros((groups, weights.shape[0]))
    step = max(1, _CELLS_AT_ONCE // max(tasks, 1))
    for first in range(0, groups, step):
        stop = min(groups, first + step)
        inside = (group >= first) & (group < stop)
        block = np.zeros((tasks, stop - first))
        np.add.at(block, (task[inside], group[inside] - first), values[inside])
        out[first:stop] = (weights @ block).T
    return out


def _normal_sums(
    rng: np.random.Generator,
    n: np.ndarray,
    spend: np.ndarray,
    accepted: np.ndarray,
    resamples: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Draws of (sum of spend, sum of accepted) over a group's attempts from their normal
    limit: mean and covariance of the attempt-level Poisson bootstrap (sum n x, sum n x x')."""
    mean = np.array([n @ spend, n @ accepted])
    cov = np.array(
        [[n @ (spend * spend), n @ (spend * accepted)], [n @ (spend * accepted), n @ accepted]]
    )
    drawn = rng.multivariate_normal(mean, cov, size=resamples, method="eigh")
    return drawn[:, 0], np.clip(drawn[:, 1], 0.0, None)
