"""`summary`, `check` and `convert --spark URL`: the local command's output, computed by Spark.

Differential: `summary --spark ... --format json` must print the JSON `summary ... --format
json` prints (the article's fixture, the demo ledger, a generated million-row Parquet file,
a filter), with the one difference docs/SPARK.md names: warnings and checks carry no example
lines (a distributed table has none). Errors: one line on stderr, exit 2.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.spark import server
from tui_ledger import load

pytestmark = pytest.mark.spark

REPOSITORY = Path(__file__).resolve().parents[2]
SAMPLE = REPOSITORY / "sample_data"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The command in a process of its own, as people run it: a Spark Connect session per
    process (several sessions in one process lose each other's checkpoints on the server:
    `DATAFRAME_NOT_FOUND`, seen when these ran in the test process)."""
    command = [sys.executable, "-m", "tui_ledger.cli", *argv]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    return done.returncode, done.stdout, done.stderr


def without_places(document: dict[str, Any]) -> dict[str, Any]:
    """The JSON with the example lines and files of warnings and checks left out: the one
    thing a distributed table cannot give (docs/SPARK.md)."""
    for key in ("warnings", "checks"):
        for item in document.get(key, []):
            item["lines"], item["sources"] = [], []
    return document


def same_summary(
    capsys: pytest.CaptureFixture[str], url: str, path: Path, *options: str
) -> dict[str, Any]:
    code, local, error = run(capsys, "summary", str(path), "--format", "json", *options)
    assert (code, error) == (0, "")
    code, remote, error = run(
        capsys, "summary", "--spark", url, str(path), "--format", "json", *options
    )
    assert code == 0, error
    expected, got = without_places(json.loads(local)), without_places(json.loads(remote))
    assert same_but_interval_rounding(got, expected)
    return got


def same_but_interval_rounding(got: Any, expected: Any, name: str = "") -> bool:
    """Equal, except that delta-method interval bounds (`*_ci`) may differ in their last
    digits: the spread feeding them is a float sum, added in another order by each engine
    (docs/SPARK.md). Everything else, ranks, counts, sums, medians, per accepted result and
    bootstrap bounds included, must be equal."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys(), name
        return all(same_but_interval_rounding(got[k], v, k) for k, v in expected.items())
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), name
        return all(
            same_but_interval_rounding(g, e, name) for g, e in zip(got, expected, strict=True)
        )
    if name.endswith("_ci") and isinstance(expected, float):
        assert got == pytest.approx(expected, rel=1e-12), name
        return True
    assert got == expected, name
    return True


def test_the_article_fixture_prints_the_same_json(
    capsys: pytest.CaptureFixture[str], spark_url: str
) -> None:
    document = same_summary(capsys, spark_url, SAMPLE / "runs.csv")
    assert document["hidden_tokens"] == 2000
    assert document["ranking_flips"] is True


@pytest.mark.parametrize(
    "options",
    [
        (),
        ("--by", "workflow,model", "--where", "-task:smoke tokens>1k"),
        ("--intervals", "bootstrap", "--seed", "3"),
    ],
)
def test_the_demo_ledger_prints_the_same_json(
    capsys: pytest.CaptureFixture[str], spark_url: str, options: tuple[str, ...]
) -> None:
    document = same_summary(capsys, spark_url, SAMPLE / "demo.csv", *options)
    assert document["checks"], "the demo ledger has checks to compare"


def test_a_key_with_a_dot_in_its_name_prints_the_same_json(
    capsys: pytest.CaptureFixture[str], spark_url: str, tmp_path: Path
) -> None:
    """`--by agent.version` names a column, not a field of a struct `agent`, in every
    query (the bootstrap's candidate rows and the medians' join on the keys included)."""
    path = tmp_path / "dotted.csv"
    rows = [f"w{n % 2},t{n % 5},v{n % 3},{1000 + 37 * n % 400},{n % 4 != 0}" for n in range(60)]
    path.write_text("workflow,task,agent.version,tokens,passed\n" + "\n".join(rows) + "\n")
    document = same_summary(capsys, spark_url, path, "--by", "agent.version")
    assert document["by"] == ["agent.version"] and len(document["views"]["keep"]) == 3


def test_a_generated_million_row_parquet_file_prints_the_same_json(
    capsys: pytest.CaptureFixture[str], spark_url: str, tmp_path: Path
) -> None:
    sys.path.insert(0, str(REPOSITORY))
    try:
        from benchmarks.generate import generate_ledger
    finally:
        sys.path.remove(str(REPOSITORY))
    path = tmp_path / "ledger_1m.parquet"
    generate_ledger(1_000_000, seed=7, status=True).write_parquet(path)
    document = same_summary(capsys, spark_url, path)
    assert sum(row["attempts"] for row in document["views"]["keep"].values()) == 1_000_000


def test_a_boolean_passed_with_nulls_and_its_summary_validation_read_alike(
    capsys: pytest.CaptureFixture[str], spark_url: str, tmp_path: Path
) -> None:
    """A Parquet file's BOOLEAN `passed` is read as it is (a null: ungraded), and the
    summary's validation, counted with its cells, says what the local loader says: the same
    JSON; a bad cell is still the one-line error, before any figure is printed."""
    rows = 90
    frame = pl.DataFrame(
        {
            "workflow": [f"w{n % 3}" for n in range(rows)],
            "task": [None if n % 11 == 0 else f"t{n % 7}" for n in range(rows)],
            "tokens": [
                None if n % 13 == 0 else (0 if n % 17 == 0 else 100 + 7 * n) for n in range(rows)
            ],
            "passed": [None if n % 5 == 0 else n % 3 != 0 for n in range(rows)],
        }
    )
    path = tmp_path / "booleans.parquet"
    frame.write_parquet(path)
    document = same_summary(capsys, spark_url, path)
    assert {w["kind"] for w in document["warnings"]} >= {"ungraded", "missing_usage"}
    bad = tmp_path / "bad.parquet"
    frame.with_columns(
        pl.when(pl.int_range(rows) == 40).then(-3).otherwise(pl.col("tokens")).alias("tokens")
    ).write_parquet(bad)
    code, out, error = run(capsys, "summary", "--spark", spark_url, str(bad))
    one_line_error(code, out, error, "-3", "is negative")


@pytest.mark.parametrize("by", ["workflow", "task", "workflow,task", "model"])
def test_keys_with_white_space_group_as_the_loader_trims_them(
    capsys: pytest.CaptureFixture[str], spark_url: str, tmp_path: Path, by: str
) -> None:
    """A typed input's text keys are grouped as read and trimmed after (`fine_cells`):
    " lean", "lean " and "lean" are one workflow, a task of spaces is the empty task, as
    the loader reads them; a workflow of white space alone is still the one-line error."""
    rows = 120
    words = [" lean", "lean ", "lean", "\u3000steady\t", "steady"]
    tasks = [" t1", "t1", "t2 ", "  ", None]
    frame = pl.DataFrame(
        {
            "workflow": [words[n % 5] for n in range(rows)],
            "task": [tasks[n % 7 % 5] for n in range(rows)],
            "model": [f" m{n % 2}" for n in range(rows)],
            # Values a bucket apart at most: each key read three ways fills the same buckets,
            # and a middle lies inside one (the medians' second query reads them).
            "tokens": [None if n % 9 == 0 else 1_000_000 + 7 * (n % 50) for n in range(rows)],
            "passed": [n % 4 != 0 for n in range(rows)],
        }
    )
    path = tmp_path / "spaced.parquet"
    frame.write_parquet(path)
    document = same_summary(capsys, spark_url, path, "--by", by)
    if by == "workflow":
        assert sorted(document["views"]["keep"]) == ["lean", "steady"]
    blank = tmp_path / "blank.parquet"
    frame.with_columns(
        pl.when(pl.int_range(rows) == 7)
        .then(pl.lit(" \t "))
        .otherwise(pl.col("workflow"))
        .alias("workflow")
    ).write_parquet(blank)
    code, out, error = run(capsys, "summary", "--spark", spark_url, str(blank), "--by", by)
    one_line_error(code, out, error, "is empty; every attempt needs a workflow")


def test_check_prints_the_local_report_without_lines(
    capsys: pytest.CaptureFixture[str], spark_url: str
) -> None:
    path = str(SAMPLE / "demo.csv")
    code, local, _ = run(capsys, "check", path)
    assert code == 0
    code, remote, error = run(capsys, "check", "--spark", spark_url, path)
    assert code == 0, error

    def unplaced(text: str) -> list[str]:  # "e.g. lines 4, 9 of FILE" is the difference
        return [line for line in text.splitlines() if not line.startswith("    e.g. line")]

    assert unplaced(remote) == unplaced(local)


def test_convert_writes_what_the_cluster_returns(
    capsys: pytest.CaptureFixture[str], spark_url: str, tmp_path: Path
) -> None:
    source = SAMPLE / "demo.csv"
    code, _, error = run(
        capsys,
        "convert",
        "--spark",
        spark_url,
        str(source),
        "-o",
        str(tmp_path / "kept.parquet"),
        "--where",
        "passed",
    )
    assert code == 0, error
    written = pl.read_parquet(tmp_path / "kept.parquet")
    local = load.load(source).attempts.filter(pl.col("outcome") == "passed")
    assert written.height == local.height > 0
    assert "outcome" not in written.columns  # beside a status column, as convert writes it
    for name in ("workflow", "task", "tokens"):
        assert written[name].to_list() == local[name].cast(written.schema[name]).to_list()


# --------------------------------------------------------------------------- errors


def one_line_error(code: int, out: str, error: str, *words: str) -> None:
    assert code == 2
    assert out == ""
    assert error.startswith("ledger-tui: error: ") and error.count("\n") == 1, error
    for word in words:
        assert word in error


def test_an_unreachable_server_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], client: None
) -> None:
    url = f"sc://127.0.0.1:{server.free_port()}"
    code, out, error = run(capsys, "summary", "--spark", url, str(SAMPLE / "runs.csv"))
    one_line_error(code, out, error, "cannot reach the Spark Connect server")


def test_a_missing_table_and_a_bad_cell_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], spark_url: str, tmp_path: Path
) -> None:
    code, out, error = run(capsys, "summary", "--spark", spark_url, "table:default.no_such")
    one_line_error(code, out, error, "no such table")
    bad = tmp_path / "bad.csv"
    bad.write_text("workflow,task,run,tokens,passed\nlean,t1,r1,10,true\nlean,t2,r7,12a,false\n")
    code, out, error = run(capsys, "check", "--spark", spark_url, str(bad))
    one_line_error(code, out, error, "run 'r7'", "'12a'", "not a number")
    # `summary` validates in its figures' query (`spark_figures`): the same line.
    code, out, error = run(capsys, "summary", "--spark", spark_url, str(bad))
    one_line_error(code, out, error, "run 'r7'", "'12a'", "not a number")


def test_options_the_engine_lacks_are_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], client: None
) -> None:
    path = str(SAMPLE / "demo.csv")
    code, out, error = run(capsys, "summary", "--spark", "sc://h:1", path, "--matched-tasks")
    one_line_error(code, out, error, "--matched-tasks is not computed on Spark")
    code, out, error = run(capsys, "summary", "--spark", "sc://h:1", path, path)
    one_line_error(code, out, error, "--spark reads one input")
