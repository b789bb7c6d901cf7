"""`ledger-tui summary` and `ledger-tui check` with prices, intervals, checks and the chart."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from tui_ledger.cli import main

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"
RUNS = SAMPLE / "runs.csv"
DEMO = SAMPLE / "demo.csv"
PRICES = SAMPLE / "prices.toml"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def needs(*paths: Path) -> None:
    for path in paths:
        if not path.exists():
            pytest.skip(f"{path.name} not present")


def test_summary_json_article_with_intervals(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "summary", str(RUNS), "--format", "json")
    assert code == 0
    document = json.loads(out)
    lean = document["views"]["keep"]["lean"]
    assert lean["tokens_per_accepted_result"] == 3000
    assert lean["pass_rate_ci"] and lean["ci_method"] == "bootstrap"
    assert document["views"]["drop"]["lean"]["tokens_per_accepted_result"] == 1000
    assert {c["kind"] for c in document["checks"]} == {"small_sample"}


def test_summary_one_view_json_is_keyed_by_group(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "summary", str(RUNS), "--view", "keep", "--format", "json")
    assert code == 0
    assert set(json.loads(out)) == {"lean", "steady"}


def test_summary_demo_with_prices_has_cost_in_both_views(
    capsys: pytest.CaptureFixture[str],
) -> None:
    needs(DEMO, PRICES)
    code, out, _ = run(capsys, "summary", str(DEMO), "--prices", str(PRICES), "--format", "json")
    assert code == 0
    document = json.loads(out)
    for view in ("keep", "drop"):
        for record in document["views"][view].values():
            assert record["cost_per_accepted_result"] > 0
            assert len(record["cost_per_accepted_result_ci"]) == 2
            assert len(record["tokens_per_accepted_result_ci"]) == 2
            assert len(record["pass_rate_ci"]) == 2
            assert record["ci_method"] in ("bootstrap", "delta")
    assert "mixed_models" in {c["kind"] for c in document["checks"]}
    assert document["hidden_cost"] > 0


def test_summary_is_the_same_twice(capsys: pytest.CaptureFixture[str]) -> None:
    needs(DEMO)
    first = run(capsys, "summary", str(DEMO), "--format", "json", "--seed", "3")[1]
    again = run(capsys, "summary", str(DEMO), "--format", "json", "--seed", "3")[1]
    assert first == again


def test_summary_table_names_the_interval_method(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "summary", str(RUNS), "--intervals", "delta")
    assert code == 0
    assert "delta method" in out
    code, out, _ = run(capsys, "summary", str(RUNS), "--intervals", "none")
    # No line names an interval method (a small-sample note may still say "read the 95% ...").
    assert "95% intervals:" not in out.split("What dropping failures hides")[1]


def test_flat_price_for_a_tokens_only_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "summary", str(RUNS), "--flat-price", "2", "--view", "keep", "--format", "json"
    )
    assert code == 0
    # lean: 3,000 tokens at $2 per million, one accepted result.
    assert json.loads(out)["lean"]["cost_per_accepted_result"] == pytest.approx(0.006)


def test_unpriced_model_is_reported_not_zero(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ledger = tmp_path / "runs.csv"
    ledger.write_text("workflow,tokens,passed,model\na,100,true,mystery\na,100,false,mystery\n")
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."known"]\nflat = 1.0\nsource = "t"\ndate = "2026-01-01"\n')
    code, out, _ = run(capsys, "summary", str(ledger), "--prices", str(prices), "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["views"]["keep"]["a"]["cost_per_accepted_result"] is None
    assert document["views"]["keep"]["a"]["total_cost"] is None
    assert "unpriced_model" in {w["kind"] for w in document["warnings"]}


def test_bad_price_file_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."a"]\ninput = -3\n')
    code, out, err = run(capsys, "summary", str(RUNS), "--prices", str(prices))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and "prices.toml" in err and "input" in err


def test_pareto_svg_written_atomically_and_never_overwritten_unasked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    chart = tmp_path / "chart.svg"
    code, _, err = run(capsys, "summary", str(RUNS), "--pareto-svg", str(chart))
    assert code == 0 and "chart" in err
    ElementTree.fromstring(chart.read_bytes())
    chart.write_text("keep me")
    code, _, err = run(capsys, "summary", str(RUNS), "--pareto-svg", str(chart))
    assert code == 2 and "already exists" in err
    assert chart.read_text() == "keep me"
    code, _, _ = run(capsys, "summary", str(RUNS), "--pareto-svg", str(chart), "--force")
    assert code == 0 and chart.read_text().startswith("<?xml")
    assert [p.name for p in tmp_path.iterdir()] == ["chart.svg"]  # no temporary left behind


def test_pareto_cost_without_prices_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(
        capsys,
        "summary",
        str(RUNS),
        "--pareto-svg",
        str(tmp_path / "c.svg"),
        "--pareto-metric",
        "cost",
    )
    assert code == 2 and "--prices" in err


def test_matched_tasks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ledger = tmp_path / "runs.csv"
    ledger.write_text(
        "workflow,task,tokens,passed\n"
        "a,t1,100,true\na,t2,100,false\nb,t1,300,true\nb,t3,900,false\n"
    )
    code, out, _ = run(capsys, "summary", str(ledger), "--format", "json")
    assert "unmatched_tasks" in {c["kind"] for c in json.loads(out)["checks"]}
    code, out, _ = run(capsys, "summary", str(ledger), "--format", "json", "--matched-tasks")
    document = json.loads(out)
    assert document["views"]["keep"]["a"]["attempts"] == 1
    assert document["views"]["keep"]["b"]["total_tokens"] == 300
    # What was done is a note among the checks, not a warning (as the app's panel lists it).
    assert ("matched_tasks", "info") in {(c["kind"], c["severity"]) for c in document["checks"]}
    code, _, err = run(capsys, "summary", str(RUNS), "--matched-tasks")
    assert code == 2 and "task column" in err


def test_check_lists_every_check_and_the_load_report(capsys: pytest.CaptureFixture[str]) -> None:
    needs(DEMO, PRICES)
    code, out, _ = run(capsys, "check", str(DEMO), "--prices", str(PRICES))
    assert code == 0
    assert "Read " in out and "360 attempts." in out
    assert "Prices (USD per million tokens):" in out and "model-a:" in out
    assert "WARNING (mixed_models" in out and "careful-reviewer: model-" in out
    assert "WARNING (missing_usage, 10)" in out
    assert "retry-storm: 10 of 90 (11.1%)" in out
    assert "WARNING (suspect_zero, 1)" in out and "retry-storm: 1 of 90 (1.1%)" in out


def test_check_with_nothing_to_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ledger = tmp_path / "fair.csv"
    rows = [
        f"{w},t{t},{100 + t},{'true' if r else 'false'}"
        for w in "ab"
        for t in range(4)
        for r in range(3)
    ]
    ledger.write_text("workflow,task,tokens,passed\n" + "\n".join(rows) + "\n")
    code, out, _ = run(capsys, "check", str(ledger))
    assert code == 0
    assert "No fair-comparison issue found." in out


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
@pytest.mark.parametrize(
    "text",
    [
        "workflow,tokens,passed\nlean,100,true\nlean,200,\nsteady,300,false\n",
        "workflow,tokens,status\nlean,100,passed\nlean,,agent_timeout\nsteady,300,\n",
        "workflow,tokens,passed,status\nlean,100,true,ok\nlean,200,false,crash\nsteady,3,,\n",
    ],
    ids=["passed", "status", "both"],
)
def test_convert_output_loads_back_to_the_same_figures(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, suffix: str, text: str
) -> None:
    """What `convert` writes, ungraded attempts and a status column included, is a ledger
    that loads (and summarises) exactly as the input did: every figure, and the same warnings
    and checks by kind and count (their lines are the new file's)."""
    original = tmp_path / "runs.csv"
    original.write_text(text, encoding="utf-8")
    converted = tmp_path / f"converted{suffix}"
    assert run(capsys, "convert", str(original), "-o", str(converted))[0] == 0

    summaries = []
    for path in (original, converted):
        code, out, err = run(capsys, "summary", str(path), "--format", "json")
        assert code == 0, err
        summary = json.loads(out)
        for said in ("warnings", "checks"):
            summary[said] = [(item["kind"], item["count"]) for item in summary[said]]
        summaries.append(summary)
    assert summaries[0] == summaries[1]
