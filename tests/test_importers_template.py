"""The importer template: detection within a depth, the walk, the shared errors, the frame."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tui_ledger.importers._base import ImporterError
from tui_ledger.importers._template import (
    detect,
    find_below,
    first_file_decides,
    input_files,
    rows_frame,
    walk_files,
)


def _is_log(name: str) -> bool:
    return name.endswith(".log")


def _says_yes(path: Path) -> bool:
    return path.read_text() == "yes"


VERDICT = first_file_decides(_is_log, _says_yes)


def test_the_first_candidate_file_decides_and_depth_bounds_the_search(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "x.log").write_text("yes")
    assert find_below(tmp_path, 2, VERDICT)
    assert not find_below(tmp_path, 1, VERDICT)
    (tmp_path / "a" / "0.log").write_text("no")  # the first file of a folder decides
    assert not find_below(tmp_path, 2, VERDICT)


def test_detection_looks_at_no_more_than_the_fanout_and_skips_hidden(tmp_path: Path) -> None:
    for name in (".hidden", "s1", "s2", "s3", "s4"):
        (tmp_path / name).mkdir()
    (tmp_path / ".hidden" / "x.log").write_text("yes")
    (tmp_path / "s4" / "x.log").write_text("yes")
    assert not detect(tmp_path, _says_yes, VERDICT, 1)
    (tmp_path / "s3" / "x.log").write_text("yes")
    assert detect(tmp_path, _says_yes, VERDICT, 1)
    assert detect(tmp_path / "s3" / "x.log", _says_yes, VERDICT, 1)
    assert not detect(tmp_path / "missing", _says_yes, VERDICT, 1)


def test_input_files_walk_a_folder_or_name_what_is_wrong(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "z.log").write_text("")
    (tmp_path / "b" / "2.log").write_text("")
    (tmp_path / "1.log").write_text("")
    (tmp_path / "note.txt").write_text("")
    walk = lambda root: walk_files(root, _is_log)  # noqa: E731
    assert input_files(tmp_path, walk, "holds no log") == [
        tmp_path / "1.log",
        tmp_path / "b" / "2.log",
    ]
    assert input_files(tmp_path / "1.log", walk, "holds no log") == [tmp_path / "1.log"]
    with pytest.raises(ImporterError, match=r"b: holds no text$"):
        input_files(
            tmp_path / "b",
            lambda root: walk_files(root, lambda n: n.endswith(".txt")),
            "holds no text",
        )
    with pytest.raises(ImporterError, match=r"nowhere: does not exist$"):
        input_files(tmp_path / "nowhere", walk, "holds no log")


def test_rows_frame_keeps_the_schema_and_leaves_out_empty_optional_columns() -> None:
    schema = {"task": pl.String(), "cost": pl.Float64(), "source": pl.String(), "line": pl.Int64()}
    frame = rows_frame(
        [{"task": "t1", "source": "f", "line": 1}, {"task": "t2"}], schema, ("cost",)
    )
    assert frame.columns == ["task", "source", "line"]
    assert frame["task"].to_list() == ["t1", "t2"]
    assert frame["line"].to_list() == [1, None]
