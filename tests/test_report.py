"""Rendering with cost and intervals, the per-task view, Pareto points and the SVG chart."""

from __future__ import annotations

import csv
import json
import os
import xml.etree.ElementTree as ElementTree
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.corpus.guard import unchanged
from tui_ledger.accounting.ledger import compare
from tui_ledger.accounting.pareto import pareto_points
from tui_ledger.accounting.per_task import never_passed_spend, per_task
from tui_ledger.exports import export_files
from tui_ledger.exports.export_files import ExportError, write_attempts, write_text_atomic
from tui_ledger.exports.pareto_svg import pareto_svg
from tui_ledger.reports.report import render_summary, summary_json
from tui_ledger.schema import OUTCOME_DTYPE
from tui_ledger.text.numbers import (
    exact_per_accepted,
    format_compact,
    format_interval,
    format_money,
)
from tui_ledger.text.textsafe import UNSAFE_CODEPOINTS

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
    from tui_ledger.accounting.prices import apply_prices, load_prices
    from tui_ledger.load import load

    with unchanged([demo, prices]):
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


# --- exact figures past 2**53 -------------------------------------------------------------------


def big(tokens: list[int], outcomes: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"workflow": ["w"] * len(tokens), "tokens": tokens, "outcome": outcomes},
        schema_overrides={"outcome": OUTCOME_DTYPE, "tokens": pl.Int64},
    )


def test_per_accepted_result_is_exact_past_2_53() -> None:
    comparison = compare(big([2**53 + 1], ["passed"]), intervals="none")
    record = json.loads(render_summary(comparison, "json", "keep"))["w"]
    # A float64 division reads 9,007,199,254,740,992: one token short of the total.
    assert record["total_tokens"] == record["tokens_per_accepted_result"] == 2**53 + 1
    assert "9,007,199,254,740,993 " in render_summary(comparison, "table", "keep")


def test_a_fraction_past_2_53_keeps_its_digits() -> None:
    comparison = compare(big([2**63 - 1] * 3, ["passed", "passed", "failed"]), intervals="none")
    text = render_summary(comparison, "json", "keep")
    assert '"tokens_per_accepted_result": 13835058055282163710.5' in text
    assert exact_per_accepted(comparison.view("keep").row(0, named=True)) == Decimal(
        "13835058055282163710.5"
    )
    assert "13,835,058,055,282,163,710.5" in render_summary(comparison, "markdown", "keep")


def test_a_median_past_2_53_keeps_every_digit_in_every_format() -> None:
    # An odd count: the middle value itself; an even count: the mean of the two middle
    # values, which ends in .5 (a Float64 would read ...992 and ...994 for both).
    odd = compare(big([2**53 + 1], ["passed"]), intervals="none")
    even = compare(big([2**53 + 1, 2**53 + 4], ["passed", "failed"]), intervals="none")
    assert '"median_tokens_per_attempt": 9007199254740993,' in render_summary(odd, "json", "keep")
    assert "9,007,199,254,740,993" in render_summary(odd, "table", "keep")
    assert ",9007199254740993," in render_summary(odd, "csv")
    assert '"median_tokens_per_attempt": 9007199254740994.5,' in render_summary(
        even, "json", "keep"
    )
    assert "9,007,199,254,740,994.5" in render_summary(even, "markdown", "keep")
    assert ",9007199254740994.5," in render_summary(even, "csv")
    # The drop view's median is over the accepted attempt alone.
    assert even.view("drop")["median_tokens_per_attempt"].to_list() == [2**53 + 1]


def test_medians_below_2_52_stay_float64() -> None:
    comparison = compare(big([2**52 - 1, 2**52 - 2], ["passed", "failed"]), intervals="none")
    medians = comparison.view("keep")["median_tokens_per_attempt"]
    assert medians.dtype == pl.Float64
    assert medians.to_list() == [2**52 - 1.5]


# --- output that reaches a terminal ----------------------------------------------------------


def test_json_escapes_what_could_act_on_a_terminal_and_keeps_the_data() -> None:
    name = "c1\x9b31m del\x7f bidi\u202e zw\u200b esc\x1b]0;t\x07 tag\U000e0041"
    frame = article().with_columns(pl.col("workflow").replace("lean", name))
    text = render_summary(compare(frame), "json")
    assert all(ord(char) not in UNSAFE_CODEPOINTS for char in text.replace("\n", ""))
    assert "\\u009b" in text and "\\u202e" in text and "\\udb40\\udc41" in text
    assert name in json.loads(text)["views"]["keep"]


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_text_formats_show_escapes_in_labels_and_titles(fmt: str) -> None:
    frame = (
        article()
        .rename({"workflow": "arm\x1b[2J"})
        .with_columns(pl.col("arm\x1b[2J").replace("lean", "le\x1b]52;c;eA==\x07an"))
    )
    text = render_summary(compare(frame, ["arm\x1b[2J"]), fmt)
    assert all(ord(char) not in UNSAFE_CODEPOINTS for char in text.replace("\n", ""))
    assert "\\x1b]52;c;eA==\\x07" in text.replace("\\\\", "\\")


def test_summary_csv_can_neutralise_formulas_in_labels() -> None:
    frame = article().with_columns(pl.col("workflow").replace("lean", "=1+1"))
    plain = render_summary(compare(frame), "csv")
    safe = render_summary(compare(frame), "csv", spreadsheet_safe=True)
    assert "\nkeep,=1+1," in plain
    assert "\nkeep,'=1+1," in safe


# --- writing files -------------------------------------------------------------------------------


def attempts_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "workflow": ["=cmd|' /C calc'!A0", "+1+1", "-lean", "@SUM(A1)", "\tTAB", "\rCR", "ok"],
            "tokens": [-1, 2, 3, 4, 5, 6, 7],
            "notes": ["＝HYPERLINK()", "a", "b", None, "c", "d", "-2"],
            "outcome": ["passed"] * 7,
            "tags": [["x", "y"], [], None, ["z"], [], [], []],
        },
        schema_overrides={"outcome": OUTCOME_DTYPE},
    ).with_columns(pl.col("notes").cast(pl.Categorical), pl.lit(1).alias("=header"))


def test_spreadsheet_safe_csv_neutralises_every_formula_start(tmp_path: Path) -> None:
    target = write_attempts(attempts_frame(), tmp_path / "a.csv", spreadsheet_safe=True)
    rows = list(csv.reader(target.open(newline="")))
    assert rows[0] == ["workflow", "tokens", "notes", "outcome", "tags", "'=header"]
    assert [row[0] for row in rows[1:]] == [
        "'=cmd|' /C calc'!A0",
        "'+1+1",
        "'-lean",
        "'@SUM(A1)",
        "'\tTAB",
        "'\rCR",
        "ok",
    ]
    assert [row[1] for row in rows[1:]][:2] == ["-1", "2"]  # numbers stay numbers
    assert rows[1][2] == "'＝HYPERLINK()"  # full-width, in a category column
    assert rows[7][2] == "-2"  # a plain number, even as text, is read as a number: kept
    assert rows[1][4] == '["x","y"]'  # lists as their JSON


def test_a_plain_csv_export_keeps_the_data_exactly(tmp_path: Path) -> None:
    target = write_attempts(attempts_frame(), tmp_path / "a.csv")
    rows = list(csv.reader(target.open(newline="")))
    assert [row[0] for row in rows[1:]] == attempts_frame()["workflow"].to_list()
    assert rows[0][-1] == "=header"


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl", ".json"])
def test_exports_never_replace_a_file_unasked(tmp_path: Path, suffix: str) -> None:
    target = tmp_path / f"attempts{suffix}"
    target.write_bytes(b"keep me")
    with pytest.raises(ExportError, match="already exists"):
        write_attempts(attempts_frame(), target)
    assert target.read_bytes() == b"keep me"
    write_attempts(attempts_frame(), target, overwrite=True)
    assert target.read_bytes() != b"keep me"
    assert sorted(path.name for path in tmp_path.iterdir()) == [target.name]  # no temp files


def test_a_failed_write_leaves_the_target_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_text("the old summary")

    def explode(handle: object) -> None:
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        export_files.write_atomic(target, explode, overwrite=True)
    assert target.read_text() == "the old summary"
    assert [path.name for path in tmp_path.iterdir()] == ["summary.md"]


def test_a_file_that_appears_while_writing_is_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.md"

    def write_and_race(handle: Any) -> None:
        handle.write(b"new")
        target.write_text("someone else's")  # appears meanwhile

    with pytest.raises(ExportError, match="appeared while writing"):
        export_files.write_atomic(target, write_and_race, overwrite=False)
    assert target.read_text() == "someone else's"
    assert [path.name for path in tmp_path.iterdir()] == ["out.md"]


def test_writing_problems_are_export_errors(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="is a folder"):
        write_text_atomic(tmp_path, "x", overwrite=True)
    with pytest.raises(ExportError, match="does not exist"):
        write_text_atomic(tmp_path / "nope" / "a.md", "x")
    written = write_text_atomic(tmp_path / "a.md", "x")
    assert written.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_the_median_past_2_53_is_exact() -> None:
    comparison = compare(big([2**53 + 1], ["passed"]), intervals="none")
    assert comparison.view("keep")["median_tokens_per_attempt"].to_list() == [2**53 + 1]
