"""Issue 53, the core and headless half: what a new user's hour with the commands found.

Grouping by a column the accounting also derives, ranks of groups with no figure, an empty
selection, one warnings list, written ledgers that keep their trajectories, and the wording.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tui_ledger.accounting.ledger import compare
from tui_ledger.cli import main
from tui_ledger.load import load
from tui_ledger.text.wording import NO_ATTEMPTS_MATCH

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"
RUNS = SAMPLE / "runs.csv"
DEMO = SAMPLE / "demo.csv"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --------------------------------------------------------------------------- item 2: --by


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown"])
@pytest.mark.parametrize(
    ("path", "by"),
    [(DEMO, "outcome"), (DEMO, "tokens"), (RUNS, "passed"), (DEMO, "outcome,workflow")],
)
def test_summary_groups_by_a_column_the_accounting_derives(
    capsys: pytest.CaptureFixture[str], path: Path, by: str, fmt: str
) -> None:
    code, out, err = run(capsys, "summary", str(path), "--by", by, "--format", fmt)
    assert code == 0, err
    assert "Traceback" not in err and "DuplicateError" not in err
    if fmt == "json":
        assert json.loads(out)["by"] == by.split(",")


def test_groups_by_outcome_and_passed_count_what_they_should() -> None:
    ledger = load([DEMO])
    comparison = compare(ledger.attempts, ["outcome"], intervals="none")
    assert comparison.by == ("outcome",)
    counts = dict(zip(comparison.labels, comparison.keep["attempts"].to_list(), strict=True))
    expected = ledger.attempts.group_by("outcome").len()
    assert counts == {str(o): n for o, n in expected.iter_rows()}
    # The passed group accepted every attempt; the others none.
    accepted = dict(zip(comparison.labels, comparison.keep["accepted"].to_list(), strict=True))
    assert accepted["passed"] == counts["passed"] and accepted["failed"] == 0
    runs = compare(load([RUNS]).attempts, ["passed"], intervals="none")
    assert runs.labels == ["false", "true"]
    # `passed` the key and `passed` the view's count of passed attempts are two columns.
    assert runs.keep["passed"].to_list() == [0, 4]


def test_groups_by_tokens_are_one_group_a_value() -> None:
    attempts = pl.DataFrame(
        {
            "workflow": ["a", "a", "b", "b"],
            "outcome": ["passed", "failed", "passed", "passed"],
            "tokens": [10, 10, 20, None],
        },
        schema_overrides={"outcome": load([RUNS]).attempts.schema["outcome"]},
    )
    comparison = compare(attempts, ["tokens"], intervals="none")
    assert comparison.labels == ["10", "20", "—"]
    assert comparison.keep["attempts"].to_list() == [2, 1, 1]


def test_check_groups_by_outcome(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", str(DEMO), "--by", "outcome")
    assert code == 0, err
    assert "in 5 groups (by outcome)" in out


# --------------------------------------------------------------------------- item 3: ranks


def test_groups_with_no_accepted_attempt_anywhere_are_not_ranked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "summary", str(DEMO), "--where", "failed", "--format", "json")
    assert code == 0
    for view in ("keep", "drop"):
        for record in json.loads(out)["views"][view].values():
            assert record["tokens_per_accepted_result"] is None
            assert (record["rank"], record["rank_best"], record["rank_worst"]) == (None,) * 3
    _, table, _ = run(capsys, "summary", str(DEMO), "--where", "failed", "--view", "keep")
    rows = [line for line in table.splitlines() if "│ — (no accepted attempt)" in line]
    assert len(rows) == 4 and all(line.rstrip().endswith("—") for line in rows)


# --------------------------------------------------------------------------- item 4: empty


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_an_empty_selection_says_no_attempts_match(
    capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    code, out, _ = run(capsys, "summary", str(RUNS), "--where", "workflow=nope", "--format", fmt)
    assert code == 0  # an empty answer is an answer (README)
    assert NO_ATTEMPTS_MATCH in out
    assert "Every attempt here was accepted" not in out
    if fmt == "json":
        document = json.loads(out)
        assert document["callout"] == NO_ATTEMPTS_MATCH
        assert document["views"] == {"keep": {}, "drop": {}}


def test_check_on_an_empty_selection_says_no_attempts_match(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "check", str(RUNS), "--where", "workflow=nope")
    assert code == 0
    assert NO_ATTEMPTS_MATCH in out and "No fair-comparison issue found" not in out


# --------------------------------------------------------------------------- item 11: wording


def test_one_attempt_is_singular(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    one = tmp_path / "one.csv"
    one.write_text("workflow,task,tokens,passed\na,t1,10,true\na,t2,5,false\nb,t1,7,true\n")
    _, out, _ = run(capsys, "summary", str(one))
    assert "hides 5 tokens in 1 attempt;" in out
    _, out, err = run(capsys, "summary", str(one), "--matched-tasks")
    assert "1 attempt at other tasks is left out" in out + err
    assert "at the 1 task every group attempted" in out + err
    code, _, err = run(capsys, "convert", str(one), "-o", str(tmp_path / "out.csv"))
    assert code == 0 and "wrote 3 attempts" in err
    assert " 1 attempts" not in out + err


# --------------------------------------------------------------------------- item 5: warnings


def _cli_warnings(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, list[str]]:
    """The warnings' kinds (or count) as each headless output lists them."""
    _, checked, _ = run(capsys, "check", str(path))
    _, table, _ = run(capsys, "summary", str(path))
    _, markdown, _ = run(capsys, "summary", str(path), "--format", "markdown")
    _, document, _ = run(capsys, "summary", str(path), "--format", "json")
    kinds = [w["kind"] for w in json.loads(document)["warnings"]]
    count = str(len(kinds))
    noun = "warning" if len(kinds) == 1 else "warnings"
    return {
        "check": [
            line.split(" (")[1].split(",")[0]
            for line in checked.splitlines()
            if line.startswith("WARNING (")
        ],
        "json": kinds,
        "table": [count] if f"⚠ {count} {noun} (" in table else [],
        "markdown": [count] if f"**{count} {noun}:**" in markdown else [],
    }


def _same_everywhere(capsys: pytest.CaptureFixture[str], path: Path) -> list[str]:
    seen = _cli_warnings(capsys, path)
    assert seen["check"] == seen["json"], seen
    assert seen["table"] == seen["markdown"] == [str(len(seen["json"]))], seen
    return seen["json"]


def test_one_warnings_list_on_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    kinds = _same_everywhere(capsys, DEMO)
    assert "mixed_models" in kinds and len(kinds) == 4


def test_one_warnings_list_on_terminal_bench_logs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tests import real_shaped

    root = tmp_path / "runs"
    real_shaped.write_terminal_bench(root)
    kinds = _same_everywhere(capsys, root)
    # The fair-comparison checks are warnings too: more than the loader said.
    assert len(kinds) > len(load([root]).report.warnings)


def test_an_export_lists_the_checks_warnings_not_only_the_loaders() -> None:
    from tui_ledger.accounting.checks import run_checks
    from tui_ledger.reports.report import render_summary

    ledger = load([DEMO])
    comparison = compare(ledger.attempts, ["workflow"], intervals="none")
    checks = run_checks(ledger.attempts, ["workflow"], ledger.report)
    text = render_summary(comparison, "markdown", warnings=ledger.report.warnings, checks=checks)
    assert "**4 warnings:**" in text and "More than one model inside a group" in text


# --------------------------------------------------------------------------- item 6: traces


@pytest.mark.parametrize("name", ["attempts.csv", "attempts.parquet", "attempts.jsonl"])
def test_a_converted_ledger_keeps_its_trajectories(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    out = tmp_path / "out" / "deeper"
    out.mkdir(parents=True)
    target = out / name
    code, _, err = run(capsys, "convert", str(DEMO), "-o", str(target))
    assert code == 0, err
    code, shown, err = run(capsys, "trace", str(target), "--row", "1")
    assert code == 0, err
    assert "Steps: 6" in shown and "no such file" not in shown + err
    # Converted again, from the copy: still the same file.
    again = tmp_path / "again.csv"
    assert run(capsys, "convert", str(target), "-o", str(again))[0] == 0
    code, shown, err = run(capsys, "trace", str(again), "--row", "1")
    assert code == 0 and "Steps: 6" in shown, err


def test_the_apps_export_of_attempts_writes_traces_for_its_folder(tmp_path: Path) -> None:
    from tui_ledger.exports.export_files import write_attempts
    from tui_ledger.exports.trace_paths import trace_file

    ledger = load([DEMO])
    target = write_attempts(ledger.attempts, tmp_path / "export.csv")
    written = pl.read_csv(target)
    first = written.row(0, named=True)
    original = ledger.attempts.row(0, named=True)
    assert trace_file(target, first["trace"]).resolve() == (
        trace_file(original["source"], original["trace"]).resolve()
    )
    assert trace_file(target, first["trace"]).is_file()


# --------------------------------------------------------------------------- item 11


def test_convert_onto_an_existing_file_names_force(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "out.csv"
    target.write_text("keep me\n")
    code, out, err = run(capsys, "convert", str(RUNS), "-o", str(target))
    assert code == 2 and "--force" in err and len(err.strip().splitlines()) == 1
    assert target.read_text() == "keep me\n" and out == ""
    chart = tmp_path / "chart.svg"
    chart.write_text("mine")
    code, _, err = run(capsys, "summary", str(RUNS), "--pareto-svg", str(chart))
    assert code == 2 and "--force" in err and chart.read_text() == "mine"


def test_a_count_near_2_63_has_a_sane_interval(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tui_ledger.text.numbers import format_compact

    assert format_compact(2**63 - 1) == "9.2e18"
    assert format_compact(340e12) == "340T" and format_compact(1200) == "1.2k"
    big = tmp_path / "big.csv"
    big.write_text(f"workflow,tokens,passed\na,{2**63 - 1},true\nb,5,true\n")
    code, out, _ = run(capsys, "summary", str(big), "--view", "keep")
    assert code == 0
    assert "9,223,372,036,854,775,807 [9.2e18–9.2e18]" in out
    assert "9223372T" not in out


def test_trace_several_match_names_only_the_files_columns(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    twice = tmp_path / "twice.csv"
    twice.write_text("workflow,tokens,passed\na,1,true\na,1,true\n")
    code, _, err = run(capsys, "trace", str(twice), "--attempt", "a")
    assert code == 2
    assert "they share their workflow: use --row N" in err
    assert "model" not in err and "run" not in err.replace("--row", "")


# --------------------------------------------------------------------------- the walk


def test_a_column_named_twice_in_by_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("summary", "check"):
        code, out, err = run(capsys, command, str(DEMO), "--by", "workflow,workflow")
        assert (code, out) == (2, "")
        assert "named twice" in err and "Traceback" not in err and err.count("\n") == 1


def test_one_warning_and_groups_with_no_accepted_read_in_number(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    one = tmp_path / "one.csv"
    one.write_text("workflow,tokens,passed\na,10,true\n")
    _, out, _ = run(capsys, "summary", str(one))
    assert "⚠ 1 warning (ledger-tui check explains it):" in out
    failed = tmp_path / "failed.csv"
    failed.write_text("workflow,tokens,passed\na,10,false\nb,5,false\n")
    _, out, _ = run(capsys, "check", str(failed))
    assert "a, b have no accepted attempt" in out and "every one of their attempts" in out


def test_no_shared_task_reads_as_words(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    apart = tmp_path / "apart.csv"
    apart.write_text("workflow,task,tokens,passed\na,t1,10,true\nb,t2,5,true\nb,t3,5,true\n")
    _, out, _ = run(capsys, "check", str(apart))
    assert "no task was attempted by every group" in out and "only 0 tasks" not in out
    apart.write_text(apart.read_text() + "a,t2,4,true\n")
    _, out, _ = run(capsys, "check", str(apart))
    assert "only 1 task was attempted by every group" in out


@pytest.mark.parametrize(
    ("where", "said"),
    [("nope", "No attempts match the filter."), ("failed", "Nothing to plot")],
)
def test_a_chart_of_nothing_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, where: str, said: str
) -> None:
    chart = tmp_path / "chart.svg"
    code, _, _ = run(capsys, "summary", str(DEMO), "--where", where, "--pareto-svg", str(chart))
    assert code == 0
    svg = chart.read_text()
    assert said in svg
    # No x axis of an empty range: every tick label below the plot would read 0 or 1.
    assert 'text-anchor="middle" fill="#555">0</text>' not in svg


def test_fail_on_warnings_counts_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", str(DEMO), "--fail-on", "warnings")
    assert code == 1
    assert "fail-on warnings: 4 warnings (ledger-tui check lists them)" in out
    assert "check(s)" not in out


def test_another_engines_aggregates_group_by_a_derived_name_too() -> None:
    # The Spark engine hands `compare_aggregates` its aggregate frame keyed by the names given
    # and finds a bootstrap's attempts by them: `--by passed` works there as here.
    from tui_ledger.accounting.ledger import _aggregate, compare_aggregates, grouped
    from tui_ledger.accounting.view_intervals import bootstrap_rows

    attempts = load([RUNS]).attempts
    aliased, keys = grouped(attempts, ["passed"])
    raw = _aggregate(aliased, keys, False).rename({keys[0]: "passed"})
    asked: list[list[str]] = []

    def rows_for(groups: pl.DataFrame) -> pl.DataFrame:
        asked.append(groups.columns)
        return bootstrap_rows(attempts, ["passed"], groups, False)

    engine = compare_aggregates(
        raw, ["passed"], with_cost=False, intervals="bootstrap", bootstrap_rows=rows_for
    )
    here = compare(attempts, ["passed"], intervals="bootstrap")
    assert asked and "passed" in asked[0]
    assert engine.keep.equals(here.keep) and engine.labels == here.labels == ["false", "true"]


def test_by_reads_column_names_as_the_filter_does(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "summary", str(DEMO), "--by", "Agent,MODEL", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["by"] == ["workflow", "model"]
    code, _, err = run(capsys, "summary", str(DEMO), "--by", "nope")
    assert code == 2 and "--by 'nope': no such column" in err


def test_a_streamed_scan_groups_by_derived_names_as_memory_does() -> None:
    from tui_ledger.load import scan

    for path, by in ((DEMO, ["outcome"]), (DEMO, ["tokens"]), (RUNS, ["passed"])):
        streamed = compare(scan([path])[0], by, intervals="delta", streaming=True)
        eager = compare(load([path]).attempts, by, intervals="delta")
        assert streamed.labels == eager.labels
        for name in ("attempts", "accepted", "total_tokens", "rank"):
            assert streamed.keep[name].to_list() == eager.keep[name].to_list(), (by, name)


@pytest.mark.parametrize("columns", [60, 80, 100, 120, 160])
def test_a_narrow_table_leaves_columns_out_rather_than_split_numbers(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    columns: int,
) -> None:
    import re

    from tests import real_shaped

    monkeypatch.setenv("COLUMNS", str(columns))
    path = real_shaped.write_csv(tmp_path / "runs.csv")
    code, out, _ = run(capsys, "summary", str(path), "--view", "keep")
    assert code == 0
    table = out.split("\n\n")[0]
    assert all(len(line) <= columns for line in out.splitlines())
    header = next(line for line in table.splitlines() if "workflow" in line)
    assert header.rstrip().endswith("rank")  # the rank is never cropped
    # No figure is split inside a number (`43,7` over `78`): no cell ends mid-number.
    for line in table.splitlines():
        for cell in line.split("│")[1:]:
            assert not re.search(r"\d,\d{0,2}$", cell.strip()), (columns, line)
    if columns <= 80:
        assert "Not shown (narrow terminal):" in out


def test_the_trap_table_never_splits_a_number_either(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import re

    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "summary", str(DEMO), "--prices", str(SAMPLE / "prices.toml"))
    assert code == 0
    trap = out.split("What dropping failures hides")[1].split("\n\n")[0]
    assert "1,336,226" in trap and "1,081,341" in trap
    for line in trap.splitlines():
        assert len(line) <= 80
        for cell in line.split("│")[1:]:
            assert not re.search(r"\d,\d{0,2}$", cell.strip()), line
