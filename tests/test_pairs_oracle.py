"""The pairwise draws against a plain oracle: on random ledgers, every pair's interval is the
one drawn straight from the attempts, with the same seeds, by sums written out per task (paired)
or per distinct (tokens, accepted) value (unpaired). The draws read `pairs.task_cells`' per-task
sums and count the per-value cells only when a pair needs them; this says that shortcut changes
no figure, not by one bit."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_ledger.accounting.ledger import compare
from tui_ledger.accounting.pairs import PairCells, task_cells, with_pairs
from tui_ledger.accounting.verdicts import PAIRED, UNPAIRED

RESAMPLES = 200
SEED = 11

Row = tuple[str, str, bool, int | None]  # workflow, task, accepted, tokens


def _percentiles(ratios: np.ndarray) -> tuple[float, float]:
    valid = np.sort(ratios[~np.isnan(ratios)])
    if valid.size * 2 < ratios.size or valid.size == 0:
        return 0.0, float("inf")
    last = valid.size - 1
    return float(valid[round(0.025 * last)]), float(valid[round(0.975 * last)])


def _paired_sums(rows: list[Row], groups: set[str], view: str) -> dict[str, np.ndarray]:
    """Per group, (tokens, accepted) in every draw: Poisson(1) weights per task, in task name
    order over the compared groups' tasks."""
    tasks = sorted({task for workflow, task, _, _ in rows if workflow in groups})
    weights = np.random.default_rng([SEED, 1]).poisson(1.0, size=(RESAMPLES, len(tasks)))
    at = {task: i for i, task in enumerate(tasks)}
    sums = {}
    for group in groups:
        spend = np.zeros(len(tasks))
        accepted = np.zeros(len(tasks))
        for workflow, task, passed, tokens in rows:
            if workflow == group:
                accepted[at[task]] += passed
                if view == "keep" or passed:
                    spend[at[task]] += tokens or 0
        w = weights.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            sums[group] = (w @ spend) / (w @ accepted)
    return sums


def _unpaired_sums(rows: list[Row], row_of: dict[str, int]) -> dict[tuple[str, str], np.ndarray]:
    """Per (group, view), the rate in every draw: one Poisson(n) count per distinct (tokens,
    accepted) value seen n times, in value order, from the group's own generator."""
    rates = {}
    for group, row in row_of.items():
        seen: dict[tuple[float, bool], int] = defaultdict(int)
        for workflow, _, passed, tokens in rows:
            if workflow == group:
                seen[(float(tokens or 0), passed)] += 1
        values = sorted(seen)
        n = np.array([seen[value] for value in values], dtype=np.float64)
        tokens = np.array([value[0] for value in values])
        accepted = np.array([float(value[1]) for value in values])
        counts = np.random.default_rng([SEED, 2, row]).poisson(n, size=(RESAMPLES, len(values)))
        counts = counts.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            rates[(group, "keep")] = (counts @ tokens) / (counts @ accepted)
            rates[(group, "drop")] = (counts @ (tokens * accepted)) / (counts @ accepted)
    return rates


ROWS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d"]),
        st.sampled_from(["t1", "t2", "t3", "t4", "t5", "t6"]),
        st.booleans(),
        st.one_of(st.none(), st.integers(0, 5_000)),
    ),
    min_size=2,
    max_size=60,
)


@given(rows=ROWS, tasks=st.booleans())
@settings(max_examples=150, deadline=None)
def test_every_pair_is_the_one_drawn_straight_from_the_attempts(rows: list[Row], tasks: bool):
    frame = pl.DataFrame(
        [(w, t, "passed" if ok else "failed", tokens) for w, t, ok, tokens in rows],
        schema={"workflow": pl.String, "task": pl.String, "outcome": pl.String, "tokens": pl.Int64},
        orient="row",
    )
    if not tasks:
        frame = frame.drop("task")
    comparison = compare(frame, ["workflow"], intervals="delta")
    pairs = with_pairs(comparison, frame, seed=SEED, resamples=RESAMPLES).pairs
    assert pairs is not None
    compared = {name for pair in (*pairs.keep, *pairs.drop) for name in (pair.a, pair.b)}
    row_of = {label: comparison.labels.index(label) for label in compared}
    unpaired = _unpaired_sums(rows, row_of)
    for view, chosen in (("keep", pairs.keep), ("drop", pairs.drop)):
        paired = _paired_sums(rows, compared, view) if tasks else {}
        for pair in chosen:
            shared = tasks and any(
                {t for w, t, ok, _ in rows if w == pair.a and (view == "keep" or ok)}
                & {t for w, t, ok, _ in rows if w == pair.b and (view == "keep" or ok)}
            )
            assert pair.method == (PAIRED if shared else UNPAIRED)
            if shared:
                a, b = paired[pair.a], paired[pair.b]
            else:
                a, b = unpaired[(pair.a, view)], unpaired[(pair.b, view)]
            with np.errstate(divide="ignore", invalid="ignore"):
                assert (pair.low, pair.high) == _percentiles(a / b), (view, pair)


def test_the_per_value_cells_are_counted_only_when_a_pair_is_drawn_unpaired():
    frame = pl.DataFrame(
        {
            "workflow": ["a", "a", "b", "b", "c"],
            "task": ["t1", "t2", "t1", "t2", "t9"],
            "outcome": ["passed", "failed", "passed", "passed", "passed"],
            "tokens": [100, 200, 150, 250, 400],
        }
    )
    for rows, expected in ((frame.filter(pl.col("workflow") != "c"), 0), (frame, 1)):
        cells = task_cells(rows, ["workflow"])
        asked: list[int] = []

        def values(cells: PairCells = cells, asked: list[int] = asked) -> pl.DataFrame:
            asked.append(1)
            return cells.values()

        comparison = compare(rows, ["workflow"], intervals="delta")
        with_pairs(comparison, cells=PairCells(cells.tasks, values))
        assert len(asked) == expected  # c shares no task with a or b: drawn on its attempts
    assert comparison.labels == ["a", "b", "c"]
