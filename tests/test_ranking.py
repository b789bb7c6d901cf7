"""Honest ranks (SPEC.md section 3): a rank only as far as the bounds prove it, checked by
example and against a plain-Python reading of the rule."""

from __future__ import annotations

import math

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_ledger.accounting.ranking import rank_range_stages, rank_ranges, rank_text


def ranks(rows: list[tuple[float | None, bool, bool]]) -> list[tuple[int | None, int | None]]:
    """(best, worst) per group from (per-accepted figure, lower bound, ranked)."""
    frame = pl.DataFrame(
        rows, schema={"value": pl.Float64, "lower": pl.Boolean, "ranked": pl.Boolean}, orient="row"
    )
    out = frame.with_columns(rank_ranges(pl.col("value"), pl.col("lower"), pl.col("ranked")))
    return list(zip(out["rank_best"].to_list(), out["rank_worst"].to_list(), strict=True))


def oracle(rows: list[tuple[float | None, bool, bool]]) -> list[tuple[int | None, int | None]]:
    """The rule as SPEC.md words it, one pair of groups at a time."""

    def interval(value: float | None, lower: bool) -> tuple[float, float]:
        if value is None:  # no accepted attempt: after every group with a figure
            return (math.inf, math.inf)
        return (value, math.nextafter(math.inf, 0) if lower else value)

    result: list[tuple[int | None, int | None]] = []
    # "After every group that has one": where no ranked group has a figure, none comes after.
    some_figure = any(ranked and value is not None for value, _, ranked in rows)
    for i, (value, lower, ranked) in enumerate(rows):
        ranked = ranked and (value is not None or some_figure)
        rows_ranked = [r and (v is not None or some_figure) for v, _, r in rows]
        if not ranked:
            result.append((None, None))
            continue
        low, high = interval(value, lower)
        others = [interval(v, lb) for j, (v, lb, _) in enumerate(rows) if rows_ranked[j] and j != i]
        certainly = sum(1 for _, other_high in others if other_high < low)
        possibly = sum(1 for other_low, _ in others if other_low < high)
        result.append((1 + certainly, 1 + possibly))
    return result


def test_the_article_ranks_are_decided() -> None:
    # keep: lean 3,000, steady 1,600; both exact
    assert ranks([(3000.0, False, True), (1600.0, False, True)]) == [(2, 2), (1, 1)]


def test_a_lower_bound_is_a_range_and_nothing_accepted_comes_last() -> None:
    rows = [
        (1000.0, False, True),  # exact, cheapest
        (3000.0, True, True),  # ≥ 3,000: could be anywhere above
        (5000.0, False, True),
        (None, False, True),  # spent and got nothing
        (10.0, False, False),  # usage not recorded: outside the ranking
    ]
    # ≥ 3,000 might be cheaper than 5,000 or not: both read 2–3; neither can pass 1,000's
    # group, and neither falls behind the group with nothing accepted.
    assert ranks(rows) == [(1, 1), (2, 3), (2, 3), (4, 4), (None, None)]
    assert [rank_text(*pair) for pair in ranks(rows)] == ["1", "2–3", "2–3", "4", "—"]


def test_a_lower_bound_above_a_figure_is_still_decided() -> None:
    # ≥ 647,050 is more than 5,000 whatever the missing usage was: 3rd of 3, no doubt.
    assert ranks([(1000.0, False, True), (647_050.0, True, True), (5000.0, False, True)]) == [
        (1, 1),
        (3, 3),
        (2, 2),
    ]


def test_exact_ties_share_the_better_place() -> None:
    assert ranks([(5.0, False, True), (5.0, False, True), (9.0, False, True)]) == [
        (1, 1),
        (1, 1),
        (3, 3),
    ]


def test_groups_without_usage_recorded_change_nobody_elses_rank() -> None:
    with_them = ranks([(1.0, False, True), (None, False, False), (0.0, False, False)])
    assert with_them == [(1, 1), (None, None), (None, None)]


def test_no_figure_anywhere_ranks_nobody() -> None:
    # Every group spent and got nothing: there is no group with a figure to come after, so
    # none is ranked (not all 1st), in both forms of the one rule.
    rows = [(None, False, True), (None, False, True), (5.0, False, False)]
    assert ranks(rows) == [(None, None)] * 3
    frame = pl.DataFrame(
        rows, schema={"value": pl.Float64, "lower": pl.Boolean, "ranked": pl.Boolean}, orient="row"
    )
    for bounded in (True, False):
        for stage in rank_range_stages(
            pl.col("value"), pl.col("lower"), pl.col("ranked"), bounded=bounded
        ):
            frame = frame.with_columns(stage)
        assert frame["rank"].to_list() == [None] * 3
    # One group with a figure: the others come after it.
    assert ranks([(None, False, True), (7.0, False, True)]) == [(2, 2), (1, 1)]


figures = st.one_of(st.none(), st.integers(0, 50).map(float))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(figures, st.booleans(), st.booleans()), max_size=12))
def test_ranks_agree_with_the_rule_read_pair_by_pair(
    rows: list[tuple[float | None, bool, bool]],
) -> None:
    # A lower bound needs a figure; a group with no figure is never a lower bound.
    rows = [(value, lower and value is not None, ranked) for value, lower, ranked in rows]
    assert ranks(rows) == oracle(rows)
    for best, worst in ranks(rows):
        assert (best is None) == (worst is None)
        if best is not None and worst is not None:
            assert 1 <= best <= worst <= len(rows)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(figures, st.booleans()), max_size=12))
def test_without_lower_bounds_one_rank_gives_the_same_ranges(
    rows: list[tuple[float | None, bool]],
) -> None:
    # `bounded=False` (the caller found no lower bound) ranks by one rank, not two searches:
    # the same places, ties and nulls as the rule read pair by pair.
    full = [(value, False, ranked) for value, ranked in rows]
    frame = pl.DataFrame(
        full, schema={"value": pl.Float64, "lower": pl.Boolean, "ranked": pl.Boolean}, orient="row"
    )
    staged = frame
    for stage in rank_range_stages(
        pl.col("value"), pl.col("lower"), pl.col("ranked"), bounded=False
    ):
        staged = staged.with_columns(stage)
    got = list(zip(staged["rank_best"].to_list(), staged["rank_worst"].to_list(), strict=True))
    assert got == oracle(full) == ranks(full)
    assert staged["rank"].to_list() == staged["rank_best"].to_list()
    assert staged.schema["rank_best"] == staged.schema["rank"] == pl.UInt32
