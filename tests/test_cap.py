"""A cap replayed (accounting/cap.py) and swept (accounting/cap_sweep.py), against a plain-Python
reading of SPEC.md section 6 that shares nothing with them."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracle import Attempt
from tui_ledger.accounting.cap import Cap, cap_figures, capped
from tui_ledger.accounting.cap_sweep import cap_sweep
from tui_ledger.accounting.ledger import compare
from tui_ledger.filtering.cap_value import CapError, parse_cap
from tui_ledger.schema import OUTCOME_DTYPE, OUTCOMES


def frame(rows: list[Attempt]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "workflow": [r[0] for r in rows],
            "tokens": pl.Series([r[1] for r in rows], dtype=pl.Int64),
            "outcome": pl.Series([r[2] for r in rows], dtype=OUTCOME_DTYPE),
        }
    )


def oracle_cap(rows: list[Attempt], cap: int) -> dict[str, dict[str, Any]]:
    """Per workflow, row by row: what SPEC.md section 6 says a cap does."""
    out: dict[str, dict[str, Any]] = defaultdict(
        lambda: dict.fromkeys(
            ("tokens", "attempts_cut", "accepted_lost", "tokens_saved", "accepted_unknown", "acc"),
            0,
        )
    )
    for workflow, tokens, outcome in rows:
        group = out[workflow]
        if tokens is None:
            group["accepted_unknown"] += outcome == "passed"
            group["acc"] += outcome == "passed"
            continue
        group["tokens"] += min(tokens, cap)
        if tokens > cap:
            group["attempts_cut"] += 1
            group["tokens_saved"] += tokens - cap
            group["accepted_lost"] += outcome == "passed"
        else:
            group["acc"] += outcome == "passed"
    return dict(out)


def oracle_best(rows: list[Attempt]) -> dict[str, tuple[int, Fraction, int, int] | None]:
    """Per workflow, by trying every cap from its smallest accepted count > 0 up to its largest
    count: the smallest tokens per accepted result (ties: the smaller cap), as (cap, figure,
    accepted, accepted lost)."""
    best: dict[str, tuple[int, Fraction, int, int] | None] = {}
    for workflow in {r[0] for r in rows}:
        mine = [r for r in rows if r[0] == workflow]
        accepted_known = [t for _, t, o in mine if o == "passed" and t is not None and t > 0]
        found: tuple[int, Fraction, int, int] | None = None
        if accepted_known:
            largest = max(t for _, t, _ in mine if t is not None)
            for cap in range(min(accepted_known), largest + 1):
                figures = oracle_cap(mine, cap)[workflow]
                figure = Fraction(figures["tokens"], figures["acc"])
                if found is None or figure < found[1]:
                    found = (cap, figure, figures["acc"], figures["accepted_lost"])
        best[workflow] = found
    return best


rows_strategy = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),
        st.one_of(st.none(), st.integers(min_value=0, max_value=400)),
        st.sampled_from(OUTCOMES),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(rows_strategy, st.integers(min_value=1, max_value=450))
def test_cap_figures_and_capped_comparison_match_the_oracle(rows: list[Attempt], cap: int) -> None:
    expected = oracle_cap(rows, cap)
    got = {
        row["workflow"]: row for row in cap_figures(frame(rows), Cap(cap), ["workflow"]).to_dicts()
    }
    keep = {row["workflow"]: row for row in compare(capped(frame(rows), Cap(cap))).keep.to_dicts()}
    for workflow, figures in expected.items():
        for name in ("tokens", "attempts_cut", "accepted_lost", "tokens_saved", "accepted_unknown"):
            assert got[workflow][name] == figures[name], (workflow, name)
        assert keep[workflow]["accepted"] == figures["acc"]
        per = keep[workflow]["tokens_per_accepted_result"]
        known = any(r[0] == workflow and r[1] for r in rows)
        if figures["acc"] and known:
            assert per == pytest.approx(figures["tokens"] / figures["acc"], rel=1e-12)
        else:
            assert per is None


@settings(max_examples=200, deadline=None)
@given(rows_strategy)
def test_sweep_best_cap_is_the_exhaustive_best(rows: list[Attempt]) -> None:
    sweep = cap_sweep(frame(rows), ["workflow"])
    got = {row["workflow"]: row for row in sweep.best.to_dicts()}
    for workflow, found in oracle_best(rows).items():
        row = got[workflow]
        if found is None:
            assert row["cap"] is None
            continue
        cap, figure, accepted, lost = found
        assert (row["cap"], row["accepted"], row["accepted_lost"]) == (cap, accepted, lost)
        assert row["tokens_per_accepted_result"] == pytest.approx(float(figure), rel=1e-12)


@settings(max_examples=100, deadline=None)
@given(rows_strategy)
def test_sweep_curve_is_the_replay_at_each_cap(rows: list[Attempt]) -> None:
    sweep = cap_sweep(frame(rows), ["workflow"])
    for row in sweep.curve.to_dicts():
        figures = oracle_cap(rows, row["cap"])[row["workflow"]]
        assert (row["tokens"], row["accepted"]) == (figures["tokens"], figures["acc"])


def test_sweep_of_a_large_ledger_thins_the_shared_caps_not_the_best_ones() -> None:
    # 200,000 attempts, 15 groups: far more candidate caps than the curve keeps; each group's
    # best cap is still found among all of its own (benchmarks/cap_bench.py times 1M rows).
    n = 200_000
    index = pl.int_range(0, n, eager=True)
    attempts = pl.DataFrame(
        {
            "workflow": (index % 15).cast(pl.String),
            "tokens": (index * 7919) % 3_000_000 + 1,
            "outcome": pl.Series(["passed", "failed"] * (n // 2), dtype=OUTCOME_DTYPE),
        }
    )
    sweep = cap_sweep(attempts, ["workflow"])
    assert sweep.best.height == 15 and sweep.best["cap"].null_count() == 0
    assert 1_000 < len(sweep.caps) <= 2_000
    assert sweep.curve.height == 15 * len(sweep.caps)
    one = attempts.filter(pl.col("workflow") == "0")
    rows = list(zip(one["workflow"], one["tokens"], one["outcome"].cast(pl.String), strict=True))
    best = sweep.best.filter(pl.col("workflow") == "0").row(0, named=True)
    # The figure at the best cap is the replay's (the exhaustive search is on small ledgers).
    figures = oracle_cap(rows, best["cap"])["0"]
    assert best["tokens_per_accepted_result"] == pytest.approx(figures["tokens"] / figures["acc"])


def test_capped_keeps_missing_usage_and_its_outcome() -> None:
    rows: list[Attempt] = [("a", None, "passed"), ("a", 500, "passed"), ("a", 50, "failed")]
    out = capped(frame(rows), Cap(100))
    assert out["tokens"].to_list() == [None, 100, 50]
    assert out["outcome"].to_list() == ["passed", "failed", "failed"]
    keep = compare(out).keep.row(0, named=True)
    assert keep["lower_bound"] is True and keep["accepted"] == 1


def test_a_token_cap_scales_a_known_cost_and_a_dollar_cap_needs_one() -> None:
    attempts = frame([("a", 1000, "passed"), ("a", 100, "passed")]).with_columns(
        cost=pl.Series([2.0, 0.2])
    )
    out = capped(attempts, Cap(500))
    assert out["cost"].to_list() == pytest.approx([1.0, 0.2])
    dollars = capped(attempts, Cap(0.5, "usd"))
    assert dollars["tokens"].to_list() == [250, 100]
    assert dollars["cost"].to_list() == pytest.approx([0.5, 0.2])
    assert dollars["outcome"].to_list() == ["failed", "passed"]
    with pytest.raises(ValueError, match="needs each attempt's cost"):
        capped(frame([("a", 1, "passed")]), Cap(0.5, "usd"))


@pytest.mark.parametrize(
    ("text", "amount", "unit"),
    [
        ("1m", 1_000_000, "tokens"),
        ("250k", 250_000, "tokens"),
        ("1,000,000", 1_000_000, "tokens"),
        ("1e6", 1_000_000, "tokens"),
        ("$2.50", 2.5, "usd"),
    ],
)
def test_caps_read_as_the_filter_language_reads_numbers(text: str, amount: Any, unit: str) -> None:
    cap = parse_cap(text)
    assert (cap.amount, cap.unit) == (amount, unit)
    assert type(cap.amount) is type(amount)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("0", "more than 0"),
        ("-5k", "more than 0"),
        ("lots", "not a number"),
        ("1.5", "whole number"),
        ("$0", "more than 0"),
    ],
)
def test_bad_caps_say_what_and_how(text: str, says: str) -> None:
    with pytest.raises(CapError, match=says) as raised:
        parse_cap(text)
    assert "\n" not in str(raised.value) and "1m" in str(raised.value)


def test_stop_position_is_the_first_step_past_the_cap() -> None:
    from tui_ledger.accounting.cap import stop_position

    assert stop_position([100, 300, 300, 900], 300) == 3
    assert stop_position([100, 300, 300, 900], 299) == 1
    assert stop_position([100, 300], 300) is None
    assert stop_position([], 1) is None
