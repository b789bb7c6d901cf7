"""The eager load's fast lanes give exactly the figures of the plain path.

`load` reads a CSV with its counts and keys typed by the parser, a Parquet file with its text
keys cast to Categorical in the read, and validates from one materialised frame; `scan`
reads the same rows as text, lazily, file by file. On random ledgers, written both ways,
every path must give the same attempts (as text) and the same figures in both views."""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_ledger.accounting.ledger import compare
from tui_ledger.load import load, scan

Row = tuple[str, str, int | None, bool | None, str]

_rows = st.lists(
    st.tuples(
        st.sampled_from(["lean", "retry", "plan then patch", "ä-wf"]),
        st.sampled_from(["t1", "t2", "t3"]),
        st.one_of(st.none(), st.integers(min_value=0, max_value=2**40)),
        st.one_of(st.none(), st.booleans()),
        st.sampled_from(["model-a", "model-b"]),
    ),
    min_size=1,
    max_size=40,
)


def _as_text(frame: pl.DataFrame) -> pl.DataFrame:
    """Every text-like column as String, so Categorical and String read alike; `source` and
    `line` (a CSV counts its header line, Parquet counts rows) differ by design."""
    return frame.drop("source", "line").with_columns(
        pl.col(name).cast(pl.String)
        for name, dtype in frame.schema.items()
        if dtype == pl.Categorical and name != "source"
    )


@settings(max_examples=60, deadline=None)
@given(_rows)
def test_csv_parquet_and_scan_agree(rows: list[Row]) -> None:
    frame = pl.DataFrame(
        rows,
        schema={
            "workflow": pl.String,
            "task": pl.String,
            "tokens": pl.Int64,
            "passed": pl.Boolean,
            "model": pl.String,
        },
        orient="row",
    )
    with tempfile.TemporaryDirectory() as folder:
        csv_path = Path(folder) / "runs.csv"
        parquet_path = Path(folder) / "runs.parquet"
        frame.write_csv(csv_path)
        frame.write_parquet(parquet_path)
        from_csv = load(csv_path).attempts
        from_parquet = load(parquet_path).attempts
        lazy, _ = scan(csv_path)
        scanned = lazy.collect()
        # A Boolean `passed` is read as it is; beside a file whose `passed` is text (or
        # scanned), the same words give the same outcomes.
        both = load([parquet_path, csv_path]).attempts
        parquet_scanned = scan(parquet_path)[0].collect()
    half = both.height // 2
    assert both["outcome"].head(half).equals(both["outcome"].tail(half))
    assert both["outcome"].head(half).equals(from_parquet["outcome"])
    assert both["passed"].head(half).equals(both["passed"].tail(half))
    assert _as_text(parquet_scanned).equals(_as_text(scanned))
    # The Parquet lane types its keys as the CSV lane does: Categorical, not String.
    assert from_parquet.schema["workflow"] == from_csv.schema["workflow"] == pl.Categorical
    assert _as_text(from_csv).equals(_as_text(from_parquet))
    assert _as_text(from_csv).equals(_as_text(scanned))
    plain = compare(scanned, ["workflow"])
    for attempts in (from_csv, from_parquet):
        fast = compare(attempts, ["workflow"])
        for view in ("keep", "drop"):
            assert fast.view(view).equals(plain.view(view)), view
    by_model = compare(scanned, ["model", "task"])
    assert compare(from_parquet, ["model", "task"]).keep.equals(by_model.keep)
