"""The engine's errors, inputs, pages and cancellation, against a real Spark Connect server."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.spark import server
from tests.spark.reference import assert_same_aggregates, polars_aggregate_frame
from tui_ledger import load
from tui_ledger.spark import (
    SparkCellError,
    SparkInputError,
    SparkQueryCancelled,
    SparkUnreachable,
)

pytestmark = pytest.mark.spark

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def opened(spark: Any, path: str | Path, **options: Any) -> Any:
    from tui_ledger.spark.opening import open_ledger

    return open_ledger(spark, str(path), **options)


def write(tmp_path: Path, text: str, name: str = "ledger.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- bad cells


@pytest.mark.parametrize(
    ("cell", "words"),
    [
        ("12a", "is not a number"),
        ("1.5", "is not a whole number"),
        ("-3", "is negative"),
        ("inf", "is not a finite number"),
        ("1e30", "larger than the biggest count"),
    ],
)
def test_a_bad_count_names_column_value_and_row(
    spark: Any, tmp_path: Path, cell: str, words: str
) -> None:
    path = write(
        tmp_path,
        f"workflow,task,run,usage,passed\nlean,t1,r1,10,true\nlean,t2,r7,{cell},false\n",
    )
    with pytest.raises(SparkCellError) as raised:
        opened(spark, path).validate()
    message = str(raised.value)
    assert isinstance(raised.value, ValueError)
    assert "\n" not in message
    assert words in message
    assert f"column 'usage' holds {cell!r}" in message
    assert "workflow 'lean', task 't2', run 'r7'" in message
    assert raised.value.row == {"workflow": "lean", "task": "t2", "run": "r7"}


@pytest.mark.parametrize(
    ("header", "row", "words"),
    [
        ("workflow,tokens,status", "lean,5,wat", "is not an outcome"),
        ("workflow,tokens,passed", "lean,5,maybe", "is not a pass/fail value"),
        ("workflow,tokens,passed", " ,5,true", "is empty; every attempt needs a workflow"),
        (
            "workflow,input_tokens,output_tokens,passed",
            f"lean,{2**63 - 1},1,true",
            "input_tokens + output_tokens adds up to 9223372036854775808",
        ),
    ],
)
def test_other_bad_cells_are_one_line_errors(
    spark: Any, tmp_path: Path, header: str, row: str, words: str
) -> None:
    path = write(tmp_path, f"{header}\nlean,1,{'true' if 'passed' in header else 'ok'}\n{row}\n")
    if header.count(",") == 3:
        path = write(tmp_path, f"{header}\n{row}\n")
    with pytest.raises(SparkCellError) as raised:
        opened(spark, path).validate()
    assert words in str(raised.value)
    assert "\n" not in str(raised.value)


def test_the_loader_warnings_are_counted_with_examples_by_identity(spark: Any) -> None:
    ledger = opened(spark, SAMPLE / "demo.csv")
    report = ledger.validate()
    loaded = load.load(SAMPLE / "demo.csv")
    assert report.counts == {w.kind: w.count for w in loaded.report.warnings}
    assert report.rows == 360
    examples = ledger.warning_examples("missing_usage")
    assert len(examples) == 5
    missing = loaded.attempts.filter(pl.col("tokens").is_null()).select(
        pl.col("workflow").cast(pl.String), pl.col("task").cast(pl.String), "attempt"
    )
    assert all(example in missing.to_dicts() for example in examples)


# --------------------------------------------------------------------------- inputs


def test_a_missing_path_and_a_missing_table_are_input_errors(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(SparkInputError, match="no such file or folder"):
        opened(spark, tmp_path / "nothing.parquet")
    with pytest.raises(SparkInputError, match="no such table"):
        opened(spark, "table:default.no_such_ledger")


def test_missing_and_doubly_named_columns(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(SparkInputError, match="no workflow column"):
        opened(spark, write(tmp_path, "name,tokens,passed\na,1,true\n"))
    path = write(tmp_path, "workflow,tokens,usage,passed\na,1,2,true\n", "two.csv")
    with pytest.raises(SparkInputError, match="'tokens' and 'usage' both name tokens"):
        opened(spark, path)
    ledger = opened(spark, path, columns={"tokens": "usage"})
    assert ledger.mapping["tokens"] == "usage"
    assert "tokens_in_file" in ledger.columns


def test_an_unreachable_server_fails_fast_in_one_line() -> None:
    from tui_ledger.spark.session import connect

    began = time.monotonic()
    with pytest.raises(SparkUnreachable) as raised:
        connect(f"sc://127.0.0.1:{server.free_port()}", timeout=2)
    assert time.monotonic() - began < 10
    assert "cannot reach the Spark Connect server" in str(raised.value)
    with pytest.raises(SparkUnreachable, match="not a Spark Connect URL"):
        connect("http://127.0.0.1:15002")


def test_a_catalog_table_and_parquet_and_json_read_alike(spark: Any, tmp_path: Path) -> None:
    from tui_ledger.spark.aggregate import aggregate_frame

    attempts = load.load(SAMPLE / "demo.csv").attempts
    expected = polars_aggregate_frame(attempts, ["workflow"])
    raw = spark.read.options(header=True, inferSchema=True).csv(str(SAMPLE / "demo.csv"))
    raw.write.mode("overwrite").saveAsTable("ledger_demo")
    from_table = opened(spark, "table:ledger_demo")
    assert_same_aggregates(aggregate_frame(from_table.attempts(), ["workflow"]), expected)
    local = pl.read_csv(SAMPLE / "demo.csv")
    local.write_parquet(tmp_path / "demo.parquet")
    local.write_ndjson(tmp_path / "demo.jsonl")
    for name in ("demo.parquet", "demo.jsonl"):
        ours = aggregate_frame(opened(spark, tmp_path / name).attempts(), ["workflow"])
        assert_same_aggregates(ours, expected)


def test_the_rows_an_input_holds_at_most_are_read_from_its_local_files(
    client: None, tmp_path: Path
) -> None:
    from tui_ledger.spark.inputs import local_rows_at_most, resolve_input

    def at_most(location: str | Path, fmt: str | None = None) -> int | None:
        return local_rows_at_most(resolve_input(str(location), fmt))

    csv = write(tmp_path, "workflow,tokens,passed\n" + "lean,10,true\n" * 99)
    size = csv.stat().st_size
    assert at_most(csv) == size // 40 + 1  # text: at least 40 bytes an attempt
    parquet = tmp_path / "runs" / "part-0.parquet"
    parquet.parent.mkdir()
    load.load(csv).attempts.write_parquet(parquet)
    (parquet.parent / "part-1.parquet").write_bytes(parquet.read_bytes())
    both = 2 * parquet.stat().st_size
    assert at_most(parquet) == parquet.stat().st_size // 4 + 1  # Parquet: at least 4
    assert at_most(parquet.parent) == at_most(tmp_path / "runs" / "*.parquet") == both // 4 + 1
    packed = tmp_path / "ledger.csv.gz"
    packed.write_bytes(b"x" * 400)
    assert at_most(packed) == 101  # compressed text is taken as densely as Parquet
    # Nothing this machine can measure: the cluster's to resolve, and no guess is made.
    for elsewhere in ("table:main.evals.runs", "s3a://bucket/runs.csv", tmp_path / "no.csv"):
        assert at_most(elsewhere) is None


def test_a_small_local_input_runs_interpreted_and_a_large_one_compiled(
    spark: Any, tmp_path: Path
) -> None:
    """A small input's queries are interpreted (no Java compiled for them); an input that may
    hold `INTERPRET_BELOW_ROWS` attempts or more keeps Spark's compiling; both give the
    figures the loader's do."""
    from tui_ledger.accounting.ledger import compare
    from tui_ledger.accounting.stats import IntervalSettings
    from tui_ledger.spark.commands import open_input, spark_comparison, spark_figures
    from tui_ledger.spark.session import COMPILED, INTERPRET_BELOW_ROWS, interpret

    def factory_mode() -> str | None:
        return spark.conf.get("spark.sql.codegen.factoryMode")

    settings = IntervalSettings(method="delta")
    rows = "".join(f"lean,t{i % 7},{i},{str(i % 3 == 0).lower()}\n" for i in range(3_000))
    large = write(tmp_path, "workflow,task,tokens,passed\n" + rows * 16, "large.csv")
    assert large.stat().st_size // 40 >= INTERPRET_BELOW_ROWS
    for path, mode in ((SAMPLE / "demo.csv", "NO_CODEGEN"), (large, "FALLBACK")):
        assert interpret(spark, COMPILED)  # as a new session starts (the app's, a command's)
        opened_input = open_input(None, [str(path)], load_options={}, connect_to=lambda _url: spark)
        assert factory_mode() == mode, path.name
        assert spark.conf.get("spark.sql.codegen.wholeStage") == str(mode != "NO_CODEGEN").lower()
        figures = spark_figures(opened_input, ["workflow"], intervals=settings)
        got = spark_comparison(opened_input, ["workflow"], settings, figures)
        want = compare(load.load(path).attempts.lazy(), ["workflow"], intervals=settings)
        assert got.keep.equals(want.keep) and got.drop.equals(want.drop), path.name


# --------------------------------------------------------------------------- pages


def test_pages_follow_the_sort_then_the_files_order(spark: Any) -> None:
    from tui_ledger.spark.paging import attempt, page

    attempts = load.load(SAMPLE / "demo.csv").attempts
    ledger = opened(spark, SAMPLE / "demo.csv")
    ordered = attempts.sort("tokens", descending=True, nulls_last=True, maintain_order=True)
    shown = ["workflow", "task", "tokens", "outcome"]
    for number in (0, 1, 89):
        found = page(ledger, sort=["tokens"], descending=True, number=number, size=4)
        expected = ordered.slice(number * 4, 4).select(shown)
        assert (
            found.rows.select(shown)
            .with_columns(pl.col("outcome").cast(pl.String))
            .equals(expected.with_columns(pl.col("outcome").cast(pl.String)))
        )
        assert found.has_more == (number < 89)
    first = page(ledger, size=3)
    assert first.rows["task"].to_list() == attempts["task"].head(3).to_list()
    key = first.rows.select(first.tiebreak).row(1, named=True)
    one = attempt(ledger, key)
    assert one is not None
    assert one["task"] == attempts["task"][1] and one["notes"] == attempts["notes"][1]


def test_a_filtered_page(spark: Any) -> None:
    from tui_ledger.spark.paging import page

    attempts = load.load(SAMPLE / "demo.csv").attempts
    ledger = opened(spark, SAMPLE / "demo.csv")
    found = page(ledger, where="lean failed duration_s>20", size=500)
    expected = attempts.filter(
        pl.col("workflow").cast(pl.String).str.contains("lean"),
        pl.col("outcome") == "failed",
        pl.col("duration_s") > 20,
    )
    assert found.rows["task"].to_list() == expected["task"].cast(pl.String).to_list()
    assert not found.has_more


# --------------------------------------------------------------------------- cancellation


def _hours_long(spark: Any) -> Callable[[], object]:
    """A query that runs for hours unless interrupted: one stage, no shuffle (a shuffle lets
    adaptive execution submit a map stage from its own thread, which an interrupt landing
    just before it misses: that stage then runs to its end and holds the cores)."""
    return lambda: spark.range(0, 10**12, 1, 2).where("id % 7 = 9").collect()


def _in_a_thread(queries: Any, tag: str, work: Callable[[], object]) -> tuple[Any, dict]:
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["result"] = queries.run(work, tag)
        except BaseException as error:  # the thread reports what it got
            outcome["error"] = error

    worker = threading.Thread(target=run)
    worker.start()
    return worker, outcome


def test_a_running_query_is_cancelled_by_its_tag(spark: Any) -> None:
    from tui_ledger.spark.paging import Queries

    queries = Queries(spark)
    tag = queries.new_tag()
    worker, outcome = _in_a_thread(queries, tag, _hours_long(spark))
    try:
        # Interrupt until the server says it stopped an operation of the tag (a condition:
        # until the query reaches the server there is nothing under the tag to stop).
        deadline = time.monotonic() + 60
        stopped: list[str] = []
        while not stopped and worker.is_alive() and time.monotonic() < deadline:
            stopped = queries.cancel(tag)
            time.sleep(0.05)
        began = time.monotonic()
        worker.join(timeout=60)
        assert stopped, "the query never ran under its tag on the server"
        assert not worker.is_alive()
        assert isinstance(outcome.get("error"), SparkQueryCancelled), outcome
        assert time.monotonic() - began < 30
    finally:
        spark.interruptAll()  # nothing of this test runs on after it


def test_work_cancelled_before_its_query_started_is_stopped_again(spark: Any) -> None:
    """`cancel` reaches only what runs on the server when it is sent; `cancel_again` stops the
    query the cancelled work starts after it (the app calls it every 0.2 s)."""
    from tui_ledger.spark.paging import Queries

    queries = Queries(spark)
    tag = queries.new_tag()
    go = threading.Event()
    query = _hours_long(spark)

    def work() -> object:
        go.wait(60)
        return query()

    worker, outcome = _in_a_thread(queries, tag, work)
    try:
        deadline = time.monotonic() + 60
        while tag not in queries.running and time.monotonic() < deadline:
            time.sleep(0.01)
        assert queries.cancel(tag) == []  # nothing of the work is on the server yet
        go.set()  # now its query starts, already cancelled on this side
        deadline = time.monotonic() + 60
        while worker.is_alive() and time.monotonic() < deadline:
            queries.cancel_again()
            worker.join(timeout=0.2)
        assert not worker.is_alive(), "the query started after its cancel ran on"
        assert isinstance(outcome.get("error"), SparkQueryCancelled), outcome
        assert tag not in queries.running
    finally:
        spark.interruptAll()
