"""`summary --cap`, `check --cap`, `summary --cap-sweep` and `--cap-svg`: the capped figures
from the one accounting, checked against a plain computation over the file's rows."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from tests.test_cli import run

# A: cheap when failures are dropped, dear when they are kept (two huge failures); B the other
# way. Under a cap of 1,000 tokens A's failures are cut short and A ranks first.
ROWS = [
    ("A", "t1", 100, "passed"),
    ("A", "t2", 10_000, "failed"),
    ("A", "t3", 10_000, "failed"),
    ("B", "t1", 500, "passed"),
    ("B", "t2", 3_000, "passed"),
    ("B", "t3", 3_000, "failed"),
    ("C", "t1", None, "passed"),
    ("C", "t2", 2_000, "passed"),
    ("C", "t3", 700, "failed"),
]


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["workflow", "task", "tokens", "status"])
        for workflow, task, tokens, status in ROWS:
            writer.writerow([workflow, task, "" if tokens is None else tokens, status])
    return path


def plain(cap: int) -> dict[str, dict[str, object]]:
    """Per workflow, from the rows: what the cap leaves and what it takes."""
    out: dict[str, dict[str, object]] = {}
    for workflow in sorted({row[0] for row in ROWS}):
        rows = [row for row in ROWS if row[0] == workflow]
        known = [(t, s) for _, _, t, s in rows if t is not None]
        total = sum(min(t, cap) for t, _ in known)
        accepted = sum(1 for _, _, t, s in rows if s == "passed" and (t is None or t <= cap))
        out[workflow] = {
            "accepted": accepted,
            "total_tokens": total,
            "tokens_per_accepted_result": total / accepted if accepted else None,
            "cap": {
                "tokens": total,
                "attempts_cut": sum(1 for t, _ in known if t > cap),
                "accepted_lost": sum(1 for t, s in known if t > cap and s == "passed"),
                "tokens_saved": sum(t - cap for t, _ in known if t > cap),
                "accepted_unknown": sum(1 for _, _, t, s in rows if t is None and s == "passed"),
            },
        }
    return out


@pytest.mark.parametrize("typed", ["1k", "1,000", "1e3", "1000"])
def test_summary_cap_is_exact_in_every_number_form(
    capsys: pytest.CaptureFixture[str], ledger: Path, typed: str
) -> None:
    code, out, err = run(capsys, "summary", str(ledger), "--cap", typed, "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert document["cap"]["amount"] == 1000 and document["cap"]["words"] == "1,000"
    keep = document["views"]["keep"]
    for workflow, expected in plain(1000).items():
        for name, value in expected.items():
            assert keep[workflow][name] == value, (workflow, name)
    # The ranks follow the capped figures: A above B under the cap, B above A without it.
    assert keep["A"]["rank_best"] == 1 and keep["B"]["rank_best"] == 2
    code, out, _ = run(capsys, "summary", str(ledger), "--format", "json")
    uncapped = json.loads(out)["views"]["keep"]
    assert uncapped["B"]["rank_best"] == 1 and uncapped["A"]["rank_best"] == 2


def test_summary_cap_table_says_the_cap_and_what_it_did(
    capsys: pytest.CaptureFixture[str], ledger: Path
) -> None:
    code, out, _ = run(capsys, "summary", str(ledger), "--cap", "1k")
    assert code == 0
    assert out.startswith("CAP 1,000 tokens per attempt")
    assert "What the cap of 1,000 did" in out and "18,000" in out  # A's tokens saved


def test_check_cap_follows_the_capped_ranking(
    capsys: pytest.CaptureFixture[str], ledger: Path
) -> None:
    code, out, _ = run(capsys, "check", str(ledger), "--fail-on", "flip")
    assert code == 1, out
    code, out, _ = run(capsys, "check", str(ledger), "--fail-on", "flip", "--cap", "1k")
    assert code == 0, out
    assert "CAP 1,000 tokens per attempt" in out


def test_cap_sweep_gives_each_groups_exact_best_cap(
    capsys: pytest.CaptureFixture[str], ledger: Path
) -> None:
    code, out, err = run(capsys, "summary", str(ledger), "--cap-sweep", "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert document["caps"] == [100, 500, 2000, 3000]
    best = {name: group["best"] for name, group in document["groups"].items()}
    # A: cap 100 keeps its one accepted at 300 tokens. B: cap 500: 1,500 / 1. C: the accepted
    # attempt with missing usage stays accepted: cap 2,000 gives 2,700 / 2.
    assert best["A"] == {
        "cap": 100,
        "tokens_per_accepted_result": 300.0,
        "accepted": 1,
        "accepted_lost": 0,
    }
    assert best["B"]["cap"] == 500 and best["B"]["tokens_per_accepted_result"] == 1500.0
    assert best["B"]["accepted_lost"] == 1
    assert best["C"]["cap"] == 2000 and best["C"]["tokens_per_accepted_result"] == 1350.0
    curve = document["groups"]["A"]["curve"]
    assert curve["accepted"] == [1, 1, 1, 1] and curve["tokens"] == [300, 1100, 4100, 6100]


def test_cap_svg_one_line_per_group_written_atomically(
    capsys: pytest.CaptureFixture[str], ledger: Path, tmp_path: Path
) -> None:
    chart = tmp_path / "cap.svg"
    code, _, err = run(capsys, "summary", str(ledger), "--cap-svg", str(chart))
    assert code == 0 and "cap sweep chart" in err
    svg = ElementTree.fromstring(chart.read_bytes())
    namespace = "{http://www.w3.org/2000/svg}"
    assert len(svg.findall(f"{namespace}polyline")) == 3
    assert len(svg.findall(f"{namespace}circle")) == 3  # each group's best cap
    chart.write_text("keep me")
    code, _, err = run(capsys, "summary", str(ledger), "--cap-svg", str(chart))
    assert code == 2 and "already exists" in err and chart.read_text() == "keep me"
    code, _, _ = run(capsys, "summary", str(ledger), "--cap-svg", str(chart), "--force")
    assert code == 0 and chart.read_text().startswith("<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cap.svg", "ledger.csv"]


@pytest.mark.parametrize(
    ("cap", "says"),
    [
        ("0", "more than 0"),
        ("-5", "more than 0"),
        ("lots", "not a number"),
        ("$2.50", "needs each attempt's cost"),
    ],
)
def test_bad_caps_are_one_line_exit_2_nothing_written(
    capsys: pytest.CaptureFixture[str], ledger: Path, tmp_path: Path, cap: str, says: str
) -> None:
    chart = tmp_path / "never.svg"
    for command in (["summary", "--cap-svg", str(chart)], ["check"]):
        code, out, err = run(capsys, command[0], str(ledger), "--cap", cap, *command[1:])
        assert code == 2 and out == ""
        assert says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not chart.exists()


def test_a_dollar_cap_with_a_flat_price(capsys: pytest.CaptureFixture[str], ledger: Path) -> None:
    # $1 per million tokens: a $0.001 cap is 1,000 tokens.
    code, out, err = run(
        capsys, "summary", str(ledger), "--flat-price", "1", "--cap", "$0.001", "--format", "json"
    )
    assert code == 0, err
    document = json.loads(out)
    assert document["cap"]["unit"] == "usd"
    for workflow, expected in plain(1000).items():
        assert document["views"]["keep"][workflow]["cap"] == expected["cap"], workflow


def test_summary_csv_carries_the_cap_on_every_row(
    capsys: pytest.CaptureFixture[str], ledger: Path
) -> None:
    code, out, _ = run(capsys, "summary", str(ledger), "--cap", "1k", "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(out.splitlines()))
    assert len(rows) == 6  # three groups, two views
    expected = plain(1000)
    for row in rows:
        assert (row["cap"], row["cap_unit"]) == ("1000", "tokens")
        assert int(row["cap_tokens_saved"]) == expected[row["workflow"]]["cap"]["tokens_saved"]
        assert int(row["cap_accepted_lost"]) == expected[row["workflow"]]["cap"]["accepted_lost"]


def test_one_views_json_stays_keyed_by_group_under_a_cap(
    capsys: pytest.CaptureFixture[str], ledger: Path
) -> None:
    code, out, _ = run(
        capsys, "summary", str(ledger), "--cap", "1k", "--view", "keep", "--format", "json"
    )
    assert code == 0
    document = json.loads(out)
    assert sorted(document) == ["A", "B", "C"]
    assert document["A"]["cap"] == plain(1000)["A"]["cap"]
