"""The accounting contract (SPEC.md sections 2-3) on small ledgers built in the test."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.oracle import Attempt, oracle_summary
from tui_ledger.accounting.ledger import compare, in_view, summarize
from tui_ledger.schema import OUTCOME_DTYPE, OUTCOMES


def attempts_frame(rows: list[Attempt], **extra: list[object]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "workflow": [r[0] for r in rows],
            "tokens": [r[1] for r in rows],
            "outcome": [r[2] for r in rows],
            **extra,
        },
        schema_overrides={"workflow": pl.String, "tokens": pl.Int64, "outcome": OUTCOME_DTYPE},
    )


ARTICLE: list[Attempt] = [
    ("lean", 1000, "passed"),
    ("lean", 1000, "failed"),
    ("lean", 1000, "failed"),
    ("steady", 1600, "passed"),
    ("steady", 1600, "passed"),
    ("steady", 1600, "passed"),
]


def by_group(frame: pl.DataFrame) -> dict[str, dict[str, object]]:
    return {row["workflow"]: row for row in frame.iter_rows(named=True)}


def test_article_fixture_keep_view() -> None:
    keep = by_group(summarize(attempts_frame(ARTICLE), view="keep"))
    assert keep["lean"]["attempts"] == 3
    assert keep["lean"]["accepted"] == 1
    assert keep["lean"]["median_tokens_per_attempt"] == 1000
    assert keep["lean"]["total_tokens"] == 3000
    assert keep["lean"]["tokens_per_accepted_result"] == 3000
    assert keep["steady"]["total_tokens"] == 4800
    assert keep["steady"]["tokens_per_accepted_result"] == 1600
    assert (keep["steady"]["rank"], keep["lean"]["rank"]) == (1, 2)


def test_article_fixture_drop_view() -> None:
    drop = by_group(summarize(attempts_frame(ARTICLE), view="drop"))
    assert (drop["lean"]["attempts"], drop["lean"]["accepted"]) == (1, 1)
    assert drop["lean"]["total_tokens"] == 1000
    assert drop["lean"]["tokens_per_accepted_result"] == 1000
    assert drop["steady"]["tokens_per_accepted_result"] == 1600
    assert (drop["lean"]["rank"], drop["steady"]["rank"]) == (1, 2)


def test_article_trap_figures_and_flip() -> None:
    comparison = compare(attempts_frame(ARTICLE))
    trap = by_group(comparison.trap)
    assert trap["lean"]["hidden_tokens"] == 2000
    assert trap["lean"]["trap_factor"] == 3.0
    assert trap["steady"]["hidden_tokens"] == 0
    assert comparison.hidden_tokens == 2000
    assert comparison.flips()
    assert comparison.best("keep") == "steady"
    assert comparison.best("drop") == "lean"
    assert {m.group for m in comparison.moves()} == {"lean", "steady"}


def test_zero_accepted_group_is_null_never_zero() -> None:
    rows = [*ARTICLE, ("doomed", 500, "failed")]
    comparison = compare(attempts_frame(rows))
    keep, drop = by_group(comparison.keep), by_group(comparison.drop)
    assert keep["doomed"]["tokens_per_accepted_result"] is None
    assert keep["doomed"]["total_tokens"] == 500
    assert keep["doomed"]["rank"] == 3  # null ranks last
    # The group stays visible in the trap view, with nothing left to count.
    assert drop["doomed"]["attempts"] == 0
    assert drop["doomed"]["total_tokens"] == 0
    assert drop["doomed"]["tokens_per_accepted_result"] is None
    assert drop["doomed"]["pass_rate"] is None


def test_group_with_no_known_usage_has_unknown_total() -> None:
    keep = by_group(
        summarize(attempts_frame([("blind", None, "passed"), ("blind", None, "failed")]))
    )
    assert keep["blind"]["total_tokens"] is None
    assert keep["blind"]["tokens_per_accepted_result"] is None
    assert keep["blind"]["missing_usage"] == 2
    assert keep["blind"]["median_tokens_per_attempt"] is None


def test_missing_usage_makes_a_lower_bound() -> None:
    rows: list[Attempt] = [("w", 100, "passed"), ("w", None, "timeout"), ("w", 300, "failed")]
    keep = by_group(summarize(attempts_frame(rows)))["w"]
    assert keep["total_tokens"] == 400
    assert keep["tokens_per_accepted_result"] == 400
    assert keep["lower_bound"] is True
    assert keep["missing_usage"] == 1
    assert (keep["timeout"], keep["failed"], keep["passed"]) == (1, 1, 1)


def test_median_of_even_count_is_mean_of_middle_values() -> None:
    rows: list[Attempt] = [("w", t, "passed") for t in (1, 2, 10, 20)]
    assert by_group(summarize(attempts_frame(rows)))["w"]["median_tokens_per_attempt"] == 6


def test_totals_never_wrap_past_int64() -> None:
    big = 2**62
    rows: list[Attempt] = [("w", big, "passed")] * 4
    keep = by_group(summarize(attempts_frame(rows)))["w"]
    assert keep["total_tokens"] == 4 * big


def test_group_by_several_columns() -> None:
    frame = attempts_frame(ARTICLE, model=["a", "b", "a", "a", "a", "b"])
    comparison = compare(frame, by=["workflow", "model"])
    assert comparison.labels == ["lean · a", "lean · b", "steady · a", "steady · b"]
    keep = comparison.keep.filter(pl.col("workflow") == "lean", pl.col("model") == "a")
    assert keep["total_tokens"].item() == 2000


def test_in_view_drop_leaves_only_accepted_attempts() -> None:
    frame = attempts_frame(ARTICLE)
    assert in_view(frame, "keep").height == 6
    assert set(in_view(frame, "drop")["outcome"].to_list()) == {"passed"}


def test_empty_group_by_is_refused() -> None:
    with pytest.raises(ValueError):
        summarize(attempts_frame(ARTICLE), by=[])


attempt_rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d", "e"]),
        st.one_of(st.none(), st.integers(min_value=0, max_value=2**40)),
        st.sampled_from(OUTCOMES),
    ),
    min_size=1,
    max_size=60,
)


def assert_matches_oracle(rows: list[Attempt]) -> None:
    comparison = compare(attempts_frame(rows))
    for view in ("keep", "drop"):
        expected = oracle_summary(rows, view)
        actual = by_group(comparison.view(view))
        assert set(actual) == set(expected)
        for group, record in expected.items():
            for name, value in record.items():
                got = actual[group][name]
                if isinstance(value, float) and got is not None:
                    assert got == pytest.approx(value, rel=1e-12), (view, group, name)
                else:
                    assert got == value, (view, group, name, got, value)


@settings(max_examples=300, deadline=None)
@given(attempt_rows)
def test_summary_matches_plain_python_oracle(rows: list[Attempt]) -> None:
    assert_matches_oracle(rows)


@settings(max_examples=5, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=5_000, max_value=20_000))
def test_summary_matches_oracle_on_large_generated_ledgers(seed: int, size: int) -> None:
    import random

    rng = random.Random(seed)
    workflows = [f"w{i}" for i in range(rng.randint(1, 40))]
    rows: list[Attempt] = [
        (
            rng.choice(workflows),
            None if rng.random() < 0.03 else rng.randint(0, 200_000),
            rng.choices(OUTCOMES, weights=(5, 3, 1, 1, 1))[0],
        )
        for _ in range(size)
    ]
    assert_matches_oracle(rows)


def test_categorical_keys_read_sort_and_label_as_text() -> None:
    # Physical category order (first seen) differs from text order on purpose.
    rows: list[Attempt] = [
        ("zeta", 5, "passed"),
        *ARTICLE[::-1],
        (None, 7, "failed"),  # type: ignore[list-item]
    ]
    text = attempts_frame(rows, model=["m2", "m1", "m2", "m1", "m2", "m1", "m2", "m1"])
    categorical = text.with_columns(pl.col("workflow", "model").cast(pl.Categorical))
    for by in (["workflow"], ["workflow", "model"], ["model"]):
        expected, got = compare(text, by), compare(categorical, by)
        assert got.labels == expected.labels
        for view in ("keep", "drop", "trap"):
            frame = getattr(got, view)
            assert frame.schema[by[0]] == pl.Categorical
            assert frame.with_columns(pl.col(by).cast(pl.String)).equals(getattr(expected, view))
