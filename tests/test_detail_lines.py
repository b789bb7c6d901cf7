"""`DetailLines`: a check's lines read as a list reads, and only the lines read are made."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui_ledger.accounting.detail_lines import DetailLines


def _lines(names: list[str], made: list[int] | None = None) -> DetailLines:
    def write(rows: pl.DataFrame) -> pl.Series:
        if made is not None:
            made.append(rows.height)
        return rows.select(pl.concat_str(pl.col("name"), pl.lit(": "), pl.col("n"))).to_series()

    frame = pl.DataFrame({"name": names, "n": list(range(len(names)))})
    return DetailLines(frame, write)


@given(
    names=st.lists(st.text(max_size=5), max_size=30),
    start=st.integers(-40, 40) | st.none(),
    stop=st.integers(-40, 40) | st.none(),
    step=st.sampled_from([None, 1, 2, -1]),
)
def test_lines_read_as_the_list_of_lines_does(
    names: list[str], start: int | None, stop: int | None, step: int | None
) -> None:
    expected = [f"{name}: {n}" for n, name in enumerate(names)]
    lines = _lines(names)
    assert len(lines) == len(expected)
    assert lines[start:stop:step] == expected[start:stop:step]
    for index in (0, 1, -1, len(names) - 1, -len(names)):
        if -len(names) <= index < len(names):
            assert lines[index] == expected[index]
    assert lines == expected
    assert list(lines) == expected
    assert lines == tuple(expected)
    assert lines[start:stop:step] == expected[start:stop:step]  # once the whole list is made


def test_an_index_past_the_end_is_an_index_error() -> None:
    lines = _lines(["a", "b"])
    with pytest.raises(IndexError):
        lines[2]
    with pytest.raises(IndexError):
        lines[-3]


def test_reading_the_first_lines_makes_only_those() -> None:
    made: list[int] = []
    lines = _lines([f"wf-{i}" for i in range(200_000)], made)
    assert lines[:20][-1] == "wf-19: 19"
    assert lines[150_000] == "wf-150000: 150000"
    assert made == [20, 1]
    assert len(list(lines)) == 200_000
    assert lines[5] == "wf-5: 5"
    assert made == [20, 1, 200_000]  # the whole list made once, then read from
    assert lines != ["wf-0: 0"]
    assert bool(_lines([])) is False
