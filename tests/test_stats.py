"""Uncertainty: Wilson on pass rate, delta method and seeded bootstrap on per accepted result."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from statistics import variance
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_ledger.accounting import stats
from tui_ledger.accounting.ledger import compare, summarize
from tui_ledger.accounting.stats import IntervalSettings
from tui_ledger.schema import OUTCOME_DTYPE

ARTICLE: dict[str, list[Any]] = {
    "workflow": ["lean"] * 3 + ["steady"] * 3,
    "tokens": [1000] * 3 + [1600] * 3,
    "outcome": ["passed", "failed", "failed", "passed", "passed", "passed"],
}


def frame(data: Mapping[str, Sequence[Any]]) -> pl.DataFrame:
    return pl.DataFrame(data, schema_overrides={"outcome": OUTCOME_DTYPE, "tokens": pl.Int64})


def wilson(accepted: int, attempts: int) -> tuple[float | None, float | None]:
    low, high = stats.wilson_interval(pl.col("a"), pl.col("n"))
    data = pl.DataFrame({"a": [accepted], "n": [attempts]})
    row = data.select(low.alias("low"), high.alias("high")).row(0)
    return row[0], row[1]


@pytest.mark.parametrize(
    ("accepted", "attempts", "expected"),
    [
        # Reference values of the Wilson score interval at 95% (z = 1.959964).
        (5, 10, (0.2366, 0.7634)),
        (0, 10, (0.0, 0.2775)),
        (10, 10, (0.7225, 1.0)),
        (1, 3, (0.0615, 0.7923)),
        (81, 263, (0.2553, 0.3662)),
    ],
)
def test_wilson_matches_known_values(
    accepted: int, attempts: int, expected: tuple[float, float]
) -> None:
    low, high = wilson(accepted, attempts)
    assert low == pytest.approx(expected[0], abs=1e-4)
    assert high == pytest.approx(expected[1], abs=1e-4)


def test_wilson_is_null_without_attempts() -> None:
    assert wilson(0, 0) == (None, None)


def test_delta_interval_matches_the_ratio_estimator_formula() -> None:
    tokens = [100.0, 250.0, 80.0, 300.0, 120.0, 90.0, 400.0, 60.0]
    accepted = [1, 0, 1, 1, 0, 1, 0, 1]
    n = len(tokens)
    ratio = sum(tokens) / sum(accepted)
    s_xx = variance(tokens)
    s_yy = variance(accepted)
    x_bar, y_bar = sum(tokens) / n, sum(accepted) / n
    s_xy = sum((x - x_bar) * (y - y_bar) for x, y in zip(tokens, accepted, strict=True)) / (n - 1)
    half = stats.Z95 * math.sqrt((s_xx - 2 * ratio * s_xy + ratio**2 * s_yy) / (n * y_bar**2))

    attempts = frame(
        {
            "workflow": ["w"] * n,
            "tokens": [int(t) for t in tokens],
            "outcome": ["passed" if a else "failed" for a in accepted],
        }
    )
    keep = summarize(attempts, intervals="delta").row(0, named=True)
    assert keep["ci_method"] == "delta"
    assert keep["tokens_per_accepted_result"] == pytest.approx(ratio)
    assert keep["tokens_per_accepted_result_lo"] == pytest.approx(max(ratio - half, 0.0))
    assert keep["tokens_per_accepted_result_hi"] == pytest.approx(ratio + half)


def _splitmix64(state: int) -> int:
    mask = 2**64 - 1
    z = state & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def _plain_bootstrap(
    values: list[float], accepted: list[int], resamples: int, seed: int
) -> tuple[float, float]:
    """The documented draw rule, row by row: draw j of resample b is row h(b * n + j) mod n."""
    n = len(values)
    ratios = []
    for b in range(resamples):
        total, passed = 0.0, 0
        for j in range(n):
            k = b * n + j
            row = _splitmix64(seed + (k + 1) * 0x9E3779B97F4A7C15) % n
            total += values[row]
            passed += accepted[row]
        ratios.append(total / passed if passed else math.inf)
    ratios.sort()

    def nearest(q: float) -> float:
        return ratios[round(q * (len(ratios) - 1))]

    return nearest(0.025), nearest(0.975)


def test_bootstrap_follows_the_documented_draws_exactly() -> None:
    values = [10.0, 20.0, 35.0, 5.0, 50.0, 12.0, 7.0]
    accepted = [1, 0, 1, 1, 0, 1, 0]
    data = pl.DataFrame({"g": [0] * len(values), "x": values, "a": accepted})
    result = stats.bootstrap_intervals(data, "g", ["x"], "a", resamples=200, seed=42)
    expected = _plain_bootstrap(values, accepted, 200, 42)
    assert result.row(0) == (0, pytest.approx(expected[0]), pytest.approx(expected[1]))


@given(
    groups=st.lists(
        st.lists(
            st.tuples(st.integers(0, 5_000).map(float), st.integers(0, 1)), min_size=1, max_size=4
        ),
        min_size=1,
        max_size=6,
    ),
    seed=st.integers(0, 2**32),
)
@settings(max_examples=60, deadline=None)
def test_bootstrap_of_groups_with_one_attempt_follows_the_draws(
    groups: list[list[tuple[float, int]]], seed: int
) -> None:
    """Groups of one attempt skip the draws; every group reads as the documented draws give."""
    rows = [(g, value, passed) for g, members in enumerate(groups) for value, passed in members]
    data = pl.DataFrame(rows, schema={"g": pl.Int64, "x": pl.Float64, "a": pl.Int64}, orient="row")
    shuffled = data.sort("g", descending=True, maintain_order=True)  # each group in its order
    result = stats.bootstrap_intervals(shuffled, "g", ["x"], "a", resamples=50, seed=seed)
    expected = [
        (g, *_plain_bootstrap([v for v, _ in members], [a for _, a in members], 50, seed))
        for g, members in enumerate(groups)
    ]
    assert result.rows() == [
        (g, pytest.approx(low), pytest.approx(high)) for g, low, high in expected
    ]


def test_bootstrap_interval_is_deterministic_with_the_seed() -> None:
    rows = 40
    attempts = frame(
        {
            "workflow": ["w"] * rows,
            "tokens": [1000 + 37 * (i % 11) for i in range(rows)],
            "outcome": ["passed" if i % 3 else "failed" for i in range(rows)],
        }
    )
    first = summarize(attempts, intervals=IntervalSettings(seed=7)).row(0, named=True)
    again = summarize(attempts, intervals=IntervalSettings(seed=7)).row(0, named=True)
    other = summarize(attempts, intervals=IntervalSettings(seed=8)).row(0, named=True)
    assert first["ci_method"] == "bootstrap"
    ends = ("tokens_per_accepted_result_lo", "tokens_per_accepted_result_hi")
    assert [first[e] for e in ends] == [again[e] for e in ends]
    assert [first[e] for e in ends] != [other[e] for e in ends]
    assert first[ends[0]] <= first["tokens_per_accepted_result"] <= first[ends[1]]


def test_a_groups_interval_does_not_depend_on_other_groups() -> None:
    alone = compare(frame({k: v[:3] for k, v in ARTICLE.items()}))
    together = compare(frame(ARTICLE))
    ends = ["tokens_per_accepted_result_lo", "tokens_per_accepted_result_hi", "ci_method"]
    for view in ("keep", "drop"):
        assert alone.view(view).select(ends).row(0) == together.view(view).select(ends).row(0)


def test_auto_uses_bootstrap_below_the_threshold_and_delta_above() -> None:
    rows = 30
    attempts = frame(
        {
            "workflow": ["small"] * 8 + ["large"] * rows,
            "tokens": [100 + i for i in range(8 + rows)],
            "outcome": ["passed", "failed"] * ((8 + rows) // 2),
        }
    )
    settings = IntervalSettings(bootstrap_below=10)
    keep = {r["workflow"]: r for r in summarize(attempts, intervals=settings).iter_rows(named=True)}
    assert keep["small"]["ci_method"] == "bootstrap"
    assert keep["large"]["ci_method"] == "delta"


def test_bootstrap_work_cap_falls_back_to_delta_for_the_largest_small_groups() -> None:
    attempts = frame(
        {
            "workflow": ["a"] * 4 + ["b"] * 6,
            "tokens": list(range(100, 110)),
            "outcome": ["passed", "failed"] * 5,
        }
    )
    settings = IntervalSettings(resamples=100, max_draws=500)  # room for a (400), not b (600)
    keep = {r["workflow"]: r for r in summarize(attempts, intervals=settings).iter_rows(named=True)}
    assert (keep["a"]["ci_method"], keep["b"]["ci_method"]) == ("bootstrap", "delta")


def test_small_sample_note_when_interval_is_unbounded_or_wider_than_value() -> None:
    keep = {r["workflow"]: r for r in compare(frame(ARTICLE)).keep.iter_rows(named=True)}
    # lean: 1 accepted of 3, so some resamples have no accepted attempt at all.
    assert math.isinf(keep["lean"]["tokens_per_accepted_result_hi"])
    assert keep["lean"]["ci_note"] == stats.NOTE_UNBOUNDED
    # steady: every attempt the same, so the interval is a point.
    assert keep["steady"]["tokens_per_accepted_result_lo"] == 1600
    assert keep["steady"]["tokens_per_accepted_result_hi"] == 1600
    assert keep["steady"]["ci_note"] is None


def test_no_interval_where_there_is_no_figure() -> None:
    attempts = frame({"workflow": ["doomed"] * 3, "tokens": [5, 6, 7], "outcome": ["failed"] * 3})
    row = summarize(attempts).row(0, named=True)
    assert row["tokens_per_accepted_result"] is None
    assert row["tokens_per_accepted_result_lo"] is None
    assert row["ci_method"] is None
    assert row["pass_rate_lo"] == 0.0


def test_intervals_none_leaves_null_columns() -> None:
    row = summarize(frame(ARTICLE), intervals="none").row(0, named=True)
    assert row["pass_rate_lo"] is None
    assert row["ci_method"] is None


def test_unknown_interval_method_is_refused() -> None:
    with pytest.raises(ValueError, match="interval method"):
        compare(frame(ARTICLE), intervals="magic")  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["auto", "bootstrap", "delta", "none"])
def test_with_intervals_on_a_delta_comparison_equals_a_full_compare(method: str) -> None:
    from polars.testing import assert_frame_equal

    from tui_ledger.accounting.ledger import with_intervals

    data = frame(
        {
            "workflow": ["lean"] * 3 + ["steady"] * 3 + ["big"] * 40,
            "tokens": [1000] * 3 + [1600] * 3 + [100 + 7 * i for i in range(40)],
            "outcome": ARTICLE["outcome"] + ["passed", "failed"] * 20,
        }
    )
    settings = IntervalSettings(method=method, bootstrap_below=10)  # type: ignore[arg-type]
    full = compare(data, intervals=settings)
    fast = with_intervals(compare(data, intervals="delta"), data, settings)
    for view in ("keep", "drop"):
        assert_frame_equal(full.view(view), fast.view(view))
    assert_frame_equal(full.trap, fast.trap)
    assert fast.intervals == settings
    # From a comparison that is not delta-only, the whole comparison is recomputed.
    again = with_intervals(full, data, "delta")
    assert_frame_equal(again.keep, compare(data, intervals="delta").keep)
