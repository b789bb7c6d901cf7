"""Rendering with cost and intervals, the per-task view, Pareto points and the SVG chart."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import polars as pl
import pytest

from tui_ledger.ledger import compare, never_passed_spend, pareto_points, per_task
from tui_ledger.numbers import format_compact, format_interval, format_money
from tui_ledger.report import pareto_svg, render_summary, summary_json
from tui_ledger.schema import OUTCOME_DTYPE

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"


def article(**extra: list[object]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "workflow": ["lean"] * 3 + ["steady"] * 3,
            "task": ["t1", "t2", "t3"] * 2,
            "tokens": [1000] * 3 + [1600] * 3,
            "outcome": ["passed", "failed", "failed", "passed", "passed", "passed"],
            **extra,
        },
        schema_overrides={"outcome": OUTCOME_DTYPE, "tokens": pl.Int64},
    )


def test_json_has_intervals_and_article_figures() -> None:
    document = summary_json(compare(article()))
    lean = document["views"]["keep"]["lean"]
    assert lean["tokens_per_accepted_result"] == 3000
    assert lean["pass_rate_ci"][0] == pytest.approx(0.0615, abs=1e-4)
    assert lean["tokens_per_accepted_result_ci"] == [1000, None]  # unbounded above
    assert lean["ci_method"] == "bootstrap"
    assert "upper bound unbounded" in lean["ci_note"]
    assert document["intervals"]["level"] == 0.95
    assert "cost_per_accepted_result" not in lean  # no cost column, no cost figures
    assert document["checks"] == []
    json.dumps(document, allow_nan=False)  # strictly valid JSON: no NaN or Infinity


def test_json_cost_per_accepted_result_in_both_views() -> None:
    comparison = compare(article(cost=[0.1, 0.1, 0.1, 0.2, 0.2, 0.2]))
    document = summary_json(comparison)
    keep, drop = document["views"]["keep"], document["views"]["drop"]
    assert keep["lean"]["cost_per_accepted_result"] == pytest.approx(0.3)
    assert drop["lean"]["cost_per_accepted_result"] == pytest.approx(0.1)
    assert keep["steady"]["cost_per_accepted_result"] == pytest.approx(0.2)
    assert keep["lean"]["cost_per_accepted_result_ci"] is not None
    assert document["trap"]["lean"]["hidden_cost"] == pytest.approx(0.2)
    assert document["hidden_cost"] == pytest.approx(0.2)


def test_demo_with_sample_prices_json() -> None:
    demo, prices = SAMPLE / "demo.csv", SAMPLE / "prices.toml"
    if not (demo.exists() and prices.exists()):
        pytest.skip("sample_data/demo.csv or prices.toml not present")
    from tui_ledger.load import load
    from tui_ledger.prices import apply_prices, load_prices

    loaded = load(demo)
    attempts, _ = apply_prices(loaded.attempts, load_prices(prices))
    document = summary_json(compare(attempts))
    for view in ("keep", "drop"):
        for record in document["views"][view].values():
            assert record["cost_per_accepted_result"] is not None
            low, high = record["cost_per_accepted_result_ci"]
            assert low <= record["cost_per_accepted_result"] <= high
            assert record["tokens_per_accepted_result_ci"] is not None
            assert record["pass_rate_ci"] is not None
            assert record["ci_method"] in ("bootstrap", "delta")


def test_table_shows_intervals_compactly_and_the_method() -> None:
    text = render_summary(compare(article()), "table")
    assert "33% [6–79%]" in text
    assert "3,000 [1.0k–∞]†" in text
    assert "bootstrap (1,000 resamples, seed 0)" in text
    assert "† lean (keep failures): small sample" in text


def test_markdown_and_csv_carry_cost_columns() -> None:
    comparison = compare(article(cost=[0.1] * 6))
    markdown = render_summary(comparison, "markdown")
    assert "$ per accepted [95%]" in markdown
    header = render_summary(comparison, "csv").splitlines()[0].split(",")
    for name in ("cost_per_accepted_result", "pass_rate_lo", "ci_method"):
        assert name in header


def test_one_view_json_stays_drop_in_compatible() -> None:
    document = summary_json(compare(article()), "keep")
    assert set(document) == {"lean", "steady"}
    for key in (
        "attempts",
        "accepted",
        "median_tokens_per_attempt",
        "total_tokens",
        "tokens_per_accepted_result",
    ):
        assert key in document["lean"]


def test_per_task_view_shows_the_spend_the_trap_hides() -> None:
    tasks = per_task(article(), "lean")
    assert tasks["task"].to_list() == ["t1", "t2", "t3"]  # equal spend: by task name
    assert tasks.filter(pl.col("never_passed"))["task"].to_list() == ["t2", "t3"]
    spend = never_passed_spend(tasks)
    assert (spend.tasks, spend.attempts, spend.tokens, spend.cost) == (2, 2, 2000, None)
    by_mapping = per_task(article(), {"workflow": "steady"})
    assert by_mapping["never_passed"].to_list() == [False] * 3
    everything = per_task(article(), None, sort_by="accepted", descending=False)
    assert everything["accepted"].to_list() == [1, 1, 2]


def test_per_task_with_cost_and_a_filter_expression() -> None:
    tasks = per_task(article(cost=[0.1] * 6), pl.col("workflow") == "lean")
    assert never_passed_spend(tasks).cost == pytest.approx(0.2)


def test_per_task_needs_a_task_column() -> None:
    with pytest.raises(ValueError, match="task column"):
        per_task(article().drop("task"), "lean")


def test_pareto_points_both_views_and_frontier() -> None:
    points = pareto_points(compare(article()))
    keep = {r["group"]: r for r in points.filter(pl.col("view") == "keep").iter_rows(named=True)}
    drop = {r["group"]: r for r in points.filter(pl.col("view") == "drop").iter_rows(named=True)}
    # Kept: steady is cheaper and passes more, so lean is dominated.
    assert (keep["steady"]["frontier"], keep["lean"]["frontier"]) == (True, False)
    # Dropped: lean looks cheapest at a 100% pass rate, and dominates steady.
    assert (drop["lean"]["frontier"], drop["steady"]["frontier"]) == (True, False)
    assert drop["lean"]["per_accepted"] == 1000


def test_pareto_cost_needs_cost() -> None:
    with pytest.raises(ValueError, match="cost"):
        pareto_points(compare(article()), "cost")


def test_pareto_svg_is_well_formed_and_escapes_text() -> None:
    frame = article().with_columns(
        pl.when(pl.col("workflow") == "lean")
        .then(pl.lit('<script>alert("x")</script> & co'))
        .otherwise(pl.col("workflow"))
        .alias("workflow")
    )
    doomed = pl.DataFrame(
        {"workflow": ["doomed\x1b[31m"], "task": ["t1"], "tokens": [5], "outcome": ["failed"]},
        schema_overrides={"outcome": OUTCOME_DTYPE, "tokens": pl.Int64},
    )
    svg = pareto_svg(compare(pl.concat([frame, doomed])), "tokens")
    root = ElementTree.fromstring(svg.encode())
    assert root.tag.endswith("svg")
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg
    assert "\x1b" not in svg
    assert "Not plotted (no accepted attempt): doomed" in svg
    circles = [el for el in root.iter() if el.tag.endswith("circle")]
    assert len(circles) == 4  # two groups x (real point + ghost)


def test_pareto_svg_of_cost_uses_money_ticks() -> None:
    svg = pareto_svg(compare(article(cost=[0.1, 0.1, 0.1, 0.2, 0.2, 0.2])), "cost")
    ElementTree.fromstring(svg.encode())
    assert "cost (USD) per accepted result" in svg
    assert "$0." in svg


def test_number_formats() -> None:
    assert format_money(0.0432) == "$0.043"
    assert format_money(12.345) == "$12.35"
    assert format_money(12345.6) == "$12,346"
    assert format_money(0.5, lower_bound=True) == "≥ $0.50"
    assert format_money(None) == "—"
    assert format_compact(1234) == "1.2k"
    assert format_compact(9999) == "10k"
    assert format_compact(float("inf")) == "∞"
    assert format_interval(0.0615, 0.7923, "rate") == "[6–79%]"
    assert format_interval(None, None) == ""
