"""Which reader opens a row, and what a row no reader opens says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_ledger.trajectory import TrajectoryError, open_attempt, openable


def test_a_plain_row_opens_to_nothing_and_says_what_was_looked_for(tmp_path: Path) -> None:
    ledger = tmp_path / "runs.csv"
    ledger.write_text("workflow,tokens,passed\na,1,true\n", encoding="utf-8")
    opened = open_attempt({"workflow": "a", "source": str(ledger), "line": 2})
    assert list(opened.steps) == []
    assert opened.files == []
    assert any("trace" in looked for looked in opened.looked_for)


def test_a_source_gone_since_the_load_is_one_line(tmp_path: Path) -> None:
    gone = tmp_path / "result.json"
    with pytest.raises(TrajectoryError, match=r"result\.json: no such file"):
        open_attempt({"workflow": "a", "source": str(gone), "line": 1})


def test_openable_joins_a_source_named_below_the_one_folder_opened(tmp_path: Path) -> None:
    trial = tmp_path / "job" / "t1__abc" / "result.json"
    trial.parent.mkdir(parents=True)
    trial.write_text("{}", encoding="utf-8")
    row = {"source": "t1__abc/result.json"}
    assert openable(row, [str(tmp_path / "job")])["source"] == str(trial)
    # Several inputs, or a file named: the source is already a path from here.
    assert openable(row, [str(tmp_path), str(tmp_path)])["source"] == "t1__abc/result.json"


def test_a_spark_source_uri_opens_as_the_path_it_names(tmp_path: Path) -> None:
    """The Spark engine names a row's file by its URI (`_metadata.file_path`): a `file:` URI
    is the file here (a space in it percent-encoded); another scheme's file is said to be the
    cluster's, not "no such file"."""
    ledger = tmp_path / "my runs.csv"
    ledger.write_text("workflow,tokens,passed\na,1,true\n", encoding="utf-8")
    row = {"workflow": "a", "source": "file:" + str(tmp_path / "my%20runs.csv"), "line": 2}
    assert openable(row, [str(ledger)])["source"] == str(ledger)
    opened = open_attempt(openable(row, [str(ledger)]))
    assert opened.files == [] and any(str(ledger) in looked for looked in opened.looked_for)
    with pytest.raises(TrajectoryError, match=r"hdfs://nn/runs\.csv: a file of the cluster"):
        open_attempt(openable({"workflow": "a", "source": "hdfs://nn/runs.csv"}, []))
