"""A file's way through the loader: what every input shares (its size, whether it is gzip, its
first bytes, the format they say) is read once, when the input is found, and each reader and
the memory check use that reading instead of opening the file's start again."""

from __future__ import annotations

import gzip
import json
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import tui_ledger.load.columns
import tui_ledger.load.inputs
import tui_ledger.load.opened
import tui_ledger.load.read_csv
import tui_ledger.load.readers
from tui_ledger.load import LoadError, expand, load, scan
from tui_ledger.load.formats import Head, head_of

ROWS = [
    {"workflow": "lean", "task": f"t{index}", "tokens": 100 + index, "passed": index % 2 == 0}
    for index in range(5)
]


def _csv(path: Path) -> Path:
    target = path / "runs.csv"
    pl.DataFrame(ROWS).write_csv(target)
    return target


def _gzip_csv(path: Path) -> Path:
    target = path / "runs.csv.gz"
    target.write_bytes(gzip.compress(pl.DataFrame(ROWS).write_csv().encode()))
    return target


def _json(path: Path) -> Path:
    target = path / "runs.json"
    target.write_text(json.dumps(ROWS))
    return target


def _lines_as_json(path: Path) -> Path:
    target = path / "runs.json"  # JSON Lines under a .json name
    target.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return target


def _parquet(path: Path) -> Path:
    target = path / "runs.parquet"
    pl.DataFrame(ROWS).write_parquet(target)
    return target


def _no_extension(path: Path) -> Path:
    target = path / "runs"
    pl.DataFrame(ROWS).write_csv(target, separator="\t")
    return target


def _rows_read(path: Path, how: str) -> int:
    """The attempts `load` (or `scan`, collected) reads from `path`."""
    if how == "load":
        return load(path).attempts.height
    return scan(path)[0].collect().height


WRITERS: dict[str, Callable[[Path], Path]] = {
    "csv": _csv,
    "gzip csv": _gzip_csv,
    "json": _json,
    "json lines as .json": _lines_as_json,
    "parquet": _parquet,
    "tsv without extension": _no_extension,
}


@pytest.mark.parametrize("kind", list(WRITERS))
def test_each_input_is_found_with_its_head(tmp_path: Path, kind: str) -> None:
    path = WRITERS[kind](tmp_path)
    [item] = expand(path, None)
    assert item.head is not None
    assert item.head.size == path.stat().st_size
    assert item.head.compressed is (kind == "gzip csv")
    expected = {
        "csv": "csv",
        "gzip csv": "csv",
        "json": "json",
        "json lines as .json": "ndjson",
        "parquet": "parquet",
        "tsv without extension": "tsv",
    }
    assert item.fmt == expected[kind]


@pytest.mark.parametrize("kind", list(WRITERS))
@pytest.mark.parametrize("how", ["load", "scan"])
def test_a_file_start_is_read_once_per_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, how: str
) -> None:
    path = WRITERS[kind](tmp_path)
    reads: list[Path] = []

    def counted(where: Path) -> Head:
        reads.append(where)
        return head_of(where)

    # Wherever the loader may read a file's start, it goes through `head_of`.
    monkeypatch.setattr(tui_ledger.load.inputs, "head_of", counted)
    monkeypatch.setattr(tui_ledger.load.opened, "head_of", counted)
    assert _rows_read(path, how) == len(ROWS)
    assert reads == [path]


# What the loader's own code opens a file for, by the function opening it: its head once,
# then only what one reader needs of its own format (a CSV: whether it holds a quote, its last
# byte; gzip: the memory check reads the trailer's size). Polars' own reads are not counted.
OPENS = {
    "csv": {"head_of": 1, "_contains_byte": 1, "_ends_without_line_end": 1},
    "gzip csv": {"head_of": 1, "_memory_needed": 1},
    "parquet": {"head_of": 1},
}


@pytest.mark.parametrize("kind", list(OPENS))
@pytest.mark.parametrize("how", ["load", "scan"])
def test_the_loader_opens_a_file_only_for_what_is_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, how: str
) -> None:
    path = WRITERS[kind](tmp_path)
    opens: Counter[str] = Counter()
    original = Path.open
    loader = str(Path(tui_ledger.load.inputs.__file__).parent)

    def counted(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == path:
            for frame in reversed(traceback.extract_stack()[:-1]):
                if frame.filename.startswith(loader):
                    opens[frame.name] += 1
                    break
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counted)
    assert _rows_read(path, how) == len(ROWS)
    assert dict(opens) == OPENS[kind]


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_columns_typed_as_read_are_mapped_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """An eager CSV/Parquet read maps the columns to type them; the rest of the load takes
    that mapping (`Opened.mapping`) instead of mapping the same names again."""
    path = WRITERS[kind](tmp_path)
    original = tui_ledger.load.columns.map_names
    asked: list[list[str]] = []

    def counted(names: Any, *args: Any, **kwargs: Any) -> dict[str, str]:
        asked.append(list(names))
        return original(names, *args, **kwargs)

    for module in (tui_ledger.load.columns, tui_ledger.load.read_csv, tui_ledger.load.readers):
        monkeypatch.setattr(module, "map_names", counted, raising=False)
    ledger = load(path, columns={"tokens": "tokens"})
    assert ledger.attempts["tokens"].to_list() == [row["tokens"] for row in ROWS]
    assert ledger.attempts["task"].dtype == pl.Categorical  # typed as it was read
    assert len(asked) == 1


@pytest.mark.parametrize("how", ["load", "scan"])
def test_a_cut_gzip_stream_is_one_line_not_a_traceback(tmp_path: Path, how: str) -> None:
    """Finding the place of a CSV error reads the file again; a gzip stream cut short cannot
    be, and polars' own words are said instead of the decompressor's EOFError escaping."""
    whole = gzip.compress(pl.DataFrame(ROWS).write_csv().encode())
    path = tmp_path / "runs.csv.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(LoadError) as raised:
        _rows_read(path, how)
    message = str(raised.value)
    assert message.startswith(f"{path}: cannot be read as CSV (")
    assert message.endswith("check the file is complete and in that format.")
    assert "\n" not in message
