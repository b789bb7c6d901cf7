"""The accounting on a ledger shaped like real runs (tests/real_shaped.py): unrecorded usage is
never 0, suspect zeros and missing usage make lower bounds, ranks are ranges (issue 13)."""

from __future__ import annotations

from pathlib import Path
from random import Random

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.real_shaped import (
    EXPECTED_DROP,
    EXPECTED_KEEP,
    GROUPS,
    NOT_RECORDED_GROUPS,
    attempts_frame,
    write_csv,
    write_terminal_bench,
)
from tui_ledger import load
from tui_ledger.accounting.ledger import Comparison, compare
from tui_ledger.schema import OUTCOME_DTYPE, OUTCOMES


def by_group(frame: pl.DataFrame) -> dict[str, dict[str, object]]:
    return {row["workflow"]: row for row in frame.iter_rows(named=True)}


def assert_expected(comparison: Comparison) -> None:
    for view, expected in (("keep", EXPECTED_KEEP), ("drop", EXPECTED_DROP)):
        actual = by_group(comparison.view(view))  # type: ignore[arg-type]
        assert set(actual) == set(GROUPS)
        for group, record in expected.items():
            got = {name: actual[group][name] for name in record}
            assert got == record, (view, group)
            best, worst = record["rank_best"], record["rank_worst"]
            assert actual[group]["rank"] == (best if best == worst else None)


def test_the_real_shaped_ledger_in_memory() -> None:
    assert_expected(compare(attempts_frame()))


def test_not_recorded_groups_have_no_figure_and_no_rank_in_either_view() -> None:
    comparison = compare(attempts_frame())
    for view in ("keep", "drop"):
        frame = comparison.view(view).filter(pl.col("workflow").is_in(NOT_RECORDED_GROUPS))
        assert frame["usage"].to_list() == ["not_recorded"] * 2
        for column in ("total_tokens", "median_tokens_per_attempt", "tokens_per_accepted_result"):
            assert frame[column].null_count() == 2, (view, column)
        assert frame["rank_best"].null_count() == 2
    hidden = comparison.trap.filter(pl.col("workflow").is_in(NOT_RECORDED_GROUPS))
    assert hidden["hidden_tokens"].null_count() == 2


def test_no_cheapest_and_an_undecided_flip() -> None:
    comparison = compare(attempts_frame())
    # Keep: SONNET (200,000) might be beaten by OPUS (>= 150,000): nobody is surely cheapest.
    assert comparison.best("keep") is None
    assert comparison.best("drop") == "20250923_droid_claude-4-opus"
    assert not comparison.flips()
    assert comparison.flip_undecided()
    moved = {move.group: move for move in comparison.possible_moves()}
    assert set(moved) == {
        "20250923_droid_claude-4-sonnet",
        "20250923_droid_claude-4-opus",
        "20250923_droid_claude-4-1-opus",
    }
    assert not any(move.certain for move in moved.values())


def test_the_same_figures_from_a_csv_file(tmp_path: Path) -> None:
    ledger = load.load([write_csv(tmp_path / "real.csv")])
    assert_expected(compare(ledger.attempts))


def test_the_same_figures_from_terminal_bench_folders(tmp_path: Path) -> None:
    ledger = load.load(write_terminal_bench(tmp_path))
    assert sorted(set(ledger.attempts["workflow"].cast(pl.String))) == sorted(GROUPS)
    assert_expected(compare(ledger.attempts))


@pytest.mark.parametrize("streaming", [False, True])
def test_streamed_and_in_memory_agree(tmp_path: Path, streaming: bool) -> None:
    path = write_csv(tmp_path / "real.csv")
    attempts = load.scan([path])[0] if streaming else load.load([path]).attempts
    assert_expected(compare(attempts, streaming=streaming))


# --------------------------------------------------------------------------- honest ranks


realistic_rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d", "e"]),
        st.one_of(st.none(), st.just(0), st.integers(min_value=1, max_value=10_000)),
        st.sampled_from(OUTCOMES),
    ),
    min_size=1,
    max_size=40,
)


def _realised_ranks(values: dict[str, float | None]) -> dict[str, int]:
    """Plain ranks of exact figures: 1 + the groups strictly cheaper; none accepted last."""
    inf = float("inf")

    def key(value: float | None) -> float:
        return inf if value is None else value

    return {
        name: 1 + sum(1 for other, v in values.items() if other != name and key(v) < key(value))
        for name, value in values.items()
    }


@settings(max_examples=150, deadline=None)
@given(realistic_rows, st.randoms(use_true_random=False))
def test_every_value_the_bounds_allow_ranks_inside_the_range(
    rows: list[tuple[str, int | None, str]], rng: Random
) -> None:
    """Fill each missing usage and suspect 0 with some real count: every group's rank then
    lies in its range, a decided rank is that rank, and a certain move really moves."""
    frame = pl.DataFrame(
        {"workflow": [r[0] for r in rows], "tokens": [r[1] for r in rows]},
        schema={"workflow": pl.String, "tokens": pl.Int64},
    ).with_columns(pl.Series("outcome", [r[2] for r in rows], dtype=OUTCOME_DTYPE))
    comparison = compare(frame, intervals="none")
    realised_tokens = [tokens if tokens else rng.randint(1, 50_000) for _, tokens, _ in rows]
    realised = compare(frame.with_columns(pl.Series("tokens", realised_tokens)), intervals="none")
    ranks: dict[str, dict[str, int]] = {}
    for view in ("keep", "drop"):
        bounded = by_group(comparison.view(view))  # type: ignore[arg-type]
        exact = by_group(realised.view(view))  # type: ignore[arg-type]
        ranked = [name for name, row in bounded.items() if row["rank_best"] is not None]
        ranks[view] = _realised_ranks(
            {name: exact[name]["tokens_per_accepted_result"] for name in ranked}
        )
        for name in ranked:
            row = bounded[name]
            assert row["rank_best"] <= ranks[view][name] <= row["rank_worst"], (view, name)
            if row["rank"] is not None:
                assert ranks[view][name] == row["rank"]
        for row in bounded.values():
            if row["usage"] == "not_recorded":
                assert row["total_tokens"] is None and row["rank_best"] is None
    for move in comparison.moves():
        assert ranks["keep"][move.group] != ranks["drop"][move.group]
    if not comparison.possible_moves():
        both = set(ranks["keep"]) & set(ranks["drop"])
        assert all(ranks["keep"][name] == ranks["drop"][name] for name in both)


def test_trap_factor_is_a_lower_bound_or_undetermined_where_usage_is_unknown() -> None:
    trap = by_group(compare(attempts_frame(), intervals="none").trap)
    # Failures' usage missing, accepted usage known: keep / drop can only be higher.
    assert trap["20250923_droid_claude-4-opus"]["trap_factor"] == 2.0
    assert trap["20250923_droid_claude-4-opus"]["trap_factor_lower_bound"] is True
    # An accepted attempt reads 0: both totals could grow, the factor is undetermined.
    assert trap["20250923_droid_claude-4-1-opus"]["trap_factor"] is None
    assert trap["20250923_droid_claude-4-sonnet"]["trap_factor"] == 2.0
    assert trap["20250923_droid_claude-4-sonnet"]["trap_factor_lower_bound"] is False
    for name in NOT_RECORDED_GROUPS:
        assert trap[name]["trap_factor"] is None and trap[name]["hidden_tokens"] is None
