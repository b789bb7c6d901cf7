"""`summary` (json, table, csv, markdown) and `check` on a ledger shaped like real runs
(tests/real_shaped.py, as Terminal-Bench folders): unrecorded usage reads `not recorded` and
gets no rank, ranks are ranges, labels that share long prefixes stay distinct (issue 13)."""

from __future__ import annotations

import csv
import io
import json
import re

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.real_shaped import (
    EXPECTED_DROP,
    EXPECTED_KEEP,
    GROUPS,
    NOT_RECORDED_GROUPS,
    OPUS,
    OPUS_1,
    SONNET,
    UNMETERED,
    attempts_frame,
    write_terminal_bench,
)
from tui_ledger.accounting.ledger import compare
from tui_ledger.cli import main
from tui_ledger.reports.report import callout, render_summary
from tui_ledger.schema import OUTCOME_DTYPE


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return [str(p) for p in write_terminal_bench(tmp_path_factory.mktemp("tb"))]


def test_json_gives_unmetered_groups_null_not_recorded_and_no_rank(
    capsys: pytest.CaptureFixture[str], folders: list[str]
) -> None:
    code, out, _ = run(capsys, "summary", *folders, "--format", "json", "--intervals", "none")
    assert code == 0
    document = json.loads(out)
    for view, expected in (("keep", EXPECTED_KEEP), ("drop", EXPECTED_DROP)):
        groups = document["views"][view]
        assert set(groups) == set(GROUPS)
        for name in NOT_RECORDED_GROUPS:
            record = groups[name]
            assert record["usage"] == "not_recorded"
            for key in (
                "total_tokens",
                "median_tokens_per_attempt",
                "tokens_per_accepted_result",
                "rank",
                "rank_best",
                "rank_worst",
            ):
                assert record[key] is None, (view, name, key)
            assert record["tokens_per_accepted_result_is_lower_bound"] is False
        for name, figures in expected.items():
            assert groups[name]["rank_best"] == figures["rank_best"]
            assert groups[name]["rank_worst"] == figures["rank_worst"]
            decided = figures["rank_best"] == figures["rank_worst"]
            assert groups[name]["rank"] == (figures["rank_best"] if decided else None)
    # Keep ranks are ranges, drop ranks are decided: whether the ranking flips is undecided.
    assert document["ranking_flips"] is None
    assert OPUS in document["ranking_undecided"]
    assert "2 of 6 attempts without usage" in document["ranking_undecided"]
    assert sorted(document["usage_not_recorded"]) == sorted(NOT_RECORDED_GROUPS)
    assert {m["group"] for m in document["moves"]} == {SONNET, OPUS, OPUS_1}
    assert not any(m["certain"] for m in document["moves"])
    assert "≥ 0" not in out


def test_one_view_json_is_keyed_by_group_with_the_reason(
    capsys: pytest.CaptureFixture[str], folders: list[str]
) -> None:
    code, out, _ = run(capsys, "summary", *folders, "--view", "keep", "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document[UNMETERED]["tokens_per_accepted_result"] is None
    assert document[UNMETERED]["usage"] == "not_recorded"
    assert document[OPUS]["usage"] == "lower_bound"
    assert document[SONNET]["usage"] == "recorded"


def _table_rows(text: str) -> dict[str, list[str]]:
    """First-line cells of each group row of a rich table: label -> cells."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "│" in line and line.lstrip().startswith("2025"):
            cells = [cell.strip() for cell in line.split("│")]
            rows.setdefault(cells[0], cells[1:])
    return rows


@pytest.mark.parametrize("columns", ["80", "120", "160"])
def test_table_labels_stay_distinct_at_terminal_widths(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    folders: list[str],
    columns: str,
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    code, out, _ = run(
        capsys, "summary", *folders, "--view", "keep", "--format", "table", "--intervals", "none"
    )
    assert code == 0
    labels = [
        line.split("│")[0].strip()
        for line in out.splitlines()
        if "│" in line and line.split("│")[0].strip()
    ]
    assert len(labels) == len(GROUPS)
    assert len(set(labels)) == len(GROUPS)  # no two groups read the same
    assert all(len(line) <= int(columns) for line in out.splitlines())


def test_table_shows_not_recorded_and_rank_ranges() -> None:
    text = render_summary(compare(attempts_frame(), intervals="none"), "table")
    rows = _table_rows(text)
    assert rows[UNMETERED][5:9] == ["not recorded", "not recorded", "not recorded", "—"]
    assert rows[SONNET][-1] == "1–2"
    assert rows[OPUS][-2:] == ["≥ 150,000", "1–3"]
    assert rows[OPUS_1][-3:] == ["≥ 1,294,100", "≥ 647,050", "2–3"]
    assert rows[OPUS_1][4] == "1"  # the one suspect 0
    assert "≥ 0" not in text
    assert "whether the ranking changes is undecided" in text
    # The trap table: hidden usage of an unmetered group is not recorded either.
    assert re.search(r"20250924_terminus_qwen-3-coder-480B\s+│\s+2\s+│\s+not recorded", text)


def test_markdown_and_csv(folders: list[str]) -> None:
    comparison = compare(attempts_frame(), intervals="none")
    markdown = render_summary(comparison, "markdown", "keep")
    line = next(row for row in markdown.splitlines() if row.startswith(f"| {UNMETERED} |"))
    assert line.endswith("| not recorded | not recorded | not recorded | — |")
    assert "| 1–3 |" in markdown and "≥ 0" not in markdown
    table = list(csv.DictReader(io.StringIO(render_summary(comparison, "csv"))))
    unmetered = [row for row in table if row["workflow"] == UNMETERED]
    assert [row["usage"] for row in unmetered] == ["not_recorded"] * 2
    assert all(row["tokens_per_accepted_result"] == "" for row in unmetered)
    assert all(row["rank_best"] == "" and row["rank"] == "" for row in unmetered)
    opus = next(row for row in table if row["workflow"] == OPUS and row["view"] == "keep")
    assert (opus["rank_best"], opus["rank_worst"], opus["rank"]) == ("1", "3", "")


def test_callout_says_why_the_ranking_is_undecided() -> None:
    sentence = callout(compare(attempts_frame(), intervals="none"))
    assert sentence.startswith("Dropping failures hides at least ")
    assert "undecided" in sentence and "flips" not in sentence
    assert f"{OPUS} (2 of 6 attempts without usage)" in sentence
    assert f"{OPUS_1} (1 of 6 attempts reading 0 tokens)" in sentence
    assert f"{UNMETERED}" in sentence and "usage not recorded" in sentence
    assert "cheapest" not in sentence


def test_check_names_unrecorded_usage_and_counts_in_the_singular(
    capsys: pytest.CaptureFixture[str], folders: list[str]
) -> None:
    unmetered = next(folder for folder in folders if folder.endswith(UNMETERED))
    code, out, _ = run(capsys, "check", unmetered)
    assert code == 0
    assert "Checks for 6 attempts in 1 group (by workflow):" in out
    assert "usage_not_recorded" in out
    assert "1 groups" not in out
    code, out, _ = run(capsys, "check", *folders)
    assert f"in {len(GROUPS)} groups" in out
    assert re.search(r"WARNING \(usage_not_recorded, 2\)", out)


zero_heavy_rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),
        st.one_of(st.none(), st.just(0), st.integers(min_value=1, max_value=5_000)),
        st.sampled_from(["passed", "failed", "timeout"]),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(zero_heavy_rows)
def test_no_output_ever_reads_at_least_zero_or_ranks_an_unrecorded_group(
    rows: list[tuple[str, int | None, str]],
) -> None:
    frame = pl.DataFrame(
        {"workflow": [r[0] for r in rows], "tokens": [r[1] for r in rows]},
        schema={"workflow": pl.String, "tokens": pl.Int64},
    ).with_columns(pl.Series("outcome", [r[2] for r in rows], dtype=OUTCOME_DTYPE))
    comparison = compare(frame, intervals="none")
    for fmt in ("table", "markdown"):
        text = render_summary(comparison, fmt)
        assert not re.search(r"≥ 0(?![.\d])", text), text
    document = json.loads(render_summary(comparison, "json"))
    for view in ("keep", "drop"):
        for name, record in document["views"][view].items():
            if record["usage"] == "not_recorded":
                assert record["tokens_per_accepted_result"] is None
                assert record["total_tokens"] is None and record["rank_best"] is None
            if name in document["usage_not_recorded"]:
                assert record["usage"] == "not_recorded"
