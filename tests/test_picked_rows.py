"""The DROP FAILURES rows picked as far as they are read (`rows.PickedRows`, issue 43): whatever
is read through them, in whatever order, is what `Rows.where` gives, and a first screen of
them does not look at every row.
"""

from __future__ import annotations

import threading
from random import Random
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal, assert_series_equal

from tui_ledger.accounting.ledger import counted
from tui_ledger.accounting.rows import PickedRows, Rows, matching_rows, sorted_rows

OUTCOMES = ("passed", "failed", "error")


def _attempt(random: Random) -> tuple[str, int | None, str]:
    """(outcome, tokens or None, source): ties in tokens, so a sort keeps some file order."""
    tokens = None if random.random() < 0.1 else random.randint(0, 50)
    return random.choice(OUTCOMES), tokens, random.choice(["a.csv", "b.csv"])


# What is read, in the order read: (what, a number, another).
access = st.one_of(
    st.tuples(st.just("slice"), st.integers(0, 320), st.integers(0, 40)),
    st.tuples(st.just("head"), st.integers(0, 30), st.just(0)),
    st.tuples(st.just("tail"), st.integers(0, 30), st.just(0)),
    st.tuples(st.sampled_from(["value", "row", "position"]), st.integers(0, 320), st.just(0)),
    st.tuples(st.just("find"), st.integers(0, 320), st.sampled_from(["", "b.csv"])),
    st.tuples(
        st.sampled_from(["frame", "height", "index", "where", "same_as"]), st.just(0), st.just(0)
    ),
)

CONDITIONS = {
    "accepted": counted("drop"),
    "tokens > 20": pl.col("tokens") > 20,  # null tokens: not picked
    "tokens null or b": pl.col("tokens").is_null() | (pl.col("source") == "b.csv"),
}


def _frame(rows: list[tuple[str, int | None, str]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "outcome": [outcome for outcome, _, _ in rows],
            "tokens": [tokens for _, tokens, _ in rows],
            "source": [source for _, _, source in rows],
            "line": list(range(2, len(rows) + 2)),
        },
        schema={"outcome": pl.String, "tokens": pl.Int64, "source": pl.String, "line": pl.Int64},
    )


def _parent(frame: pl.DataFrame, order: str) -> Rows:
    """The rows picked from: every one, a filter's, or either sorted (ties in file order)."""
    rows = (
        Rows(frame) if order.startswith("every") else matching_rows(frame, pl.col("line") % 3 != 0)
    )
    if order.endswith("sorted"):
        rows = sorted_rows(rows, "tokens", descending=True)
    return rows


def _read(rows: Rows, what: str, number: int, other: Any) -> Any:
    """One read of `rows`, as the table, the app or an export reads them."""
    if what == "slice":
        return rows.slice(number, other)
    if what == "head":
        return rows.head(number)
    if what == "tail":
        return rows.tail(number)
    if what == "frame":
        return rows.frame()
    if what == "height":
        return rows.height
    if what == "index":
        return rows.index
    if what == "where":
        return rows.where(pl.col("tokens") < 30).frame()
    if what == "same_as":
        return rows.same_as(Rows(rows.source, rows.index))
    if what == "find":  # an attempt by (source, line), as the table looks its cursor up
        line = number % (rows.source.height + 3)  # now and then none
        source = pl.col("source").eq_missing("a.csv") | pl.col("source").eq_missing(str(other))
        return rows.find(source & pl.col("line").eq_missing(line))
    if rows.height == 0:
        return None
    row = number % rows.height
    if what == "value":
        return rows.value("tokens", row)
    if what == "row":
        return rows.row(row)
    return rows.position(row)


def _same(got: Any, want: Any) -> None:
    if isinstance(want, pl.DataFrame):
        assert_frame_equal(got, want)
    elif isinstance(want, pl.Series):
        assert_series_equal(got, want, check_names=False)
    else:
        assert got == want


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(0, 300),
    random=st.randoms(use_true_random=False),
    order=st.sampled_from(["every", "every, sorted", "filtered", "filtered, sorted"]),
    condition=st.sampled_from(sorted(CONDITIONS)),
    first=st.sampled_from([1, 2, 3, 8, 32, 2**16]),
    reads=st.lists(access, max_size=12),
)
def test_picked_rows_read_as_the_rows_where_gives(
    size: int,
    random: Random,
    order: str,
    condition: str,
    first: int,
    reads: list[tuple[str, int, Any]],
) -> None:
    """On random frames, orders and reads in any order (a few rows looked at a time, so the
    reads stop and start within the picking): each read is what the eager rows give."""
    rows = [_attempt(random) for _ in range(size)]
    parent = _parent(_frame(rows), order)
    eager = parent.where(CONDITIONS[condition])
    picked = PickedRows(parent, CONDITIONS[condition], eager.height, chunks=(first, 2 * first))
    assert picked.height == eager.height
    for what, number, other in reads:
        _same(_read(picked, what, number, other), _read(eager, what, number, other))
        assert picked.height == eager.height
    assert_series_equal(picked.index, eager.index, check_names=False)  # every one, at last
    assert picked.resolved == picked.height


@settings(max_examples=100, deadline=None)
@given(
    size=st.integers(0, 300),
    random=st.randoms(use_true_random=False),
    order=st.sampled_from(["every", "every, sorted", "filtered, sorted"]),
    condition=st.sampled_from(sorted(CONDITIONS)),
    reads=st.lists(access, max_size=8),
)
def test_rows_picked_from_picked_rows_read_as_where_twice(
    size: int, random: Random, order: str, condition: str, reads: list[tuple[str, int, Any]]
) -> None:
    """The accepted rows of a filter's rows picked as read (the cube's path, then the toggle):
    picked from the first rows with both conditions, they read as `where` twice gives."""
    frame = _frame([_attempt(random) for _ in range(size)])
    parent = _parent(frame, order)
    first = pl.col("line") % 4 != 1
    outer = parent.where(first)
    eager = outer.where(CONDITIONS[condition])
    picked = PickedRows(parent, first, outer.height, chunks=(2, 8)).picked(
        CONDITIONS[condition], eager.height
    )
    for what, number, other in reads:
        _same(_read(picked, what, number, other), _read(eager, what, number, other))
    assert_series_equal(picked.index, eager.index, check_names=False)


def test_the_accepted_rows_of_picked_rows_pick_neither_all() -> None:
    """A first screen of the accepted rows among a filter's picked rows looks at the frame's
    first rows only, and picks none of the filter's rows it does not read."""
    frame = _frame([(OUTCOMES[i % 3], i % 50, "a.csv") for i in range(10_000)])
    matching = PickedRows(Rows(frame), pl.col("tokens") > 5, 8_800)
    accepted = matching.picked(counted("drop"), 2_934)
    assert isinstance(accepted, PickedRows)
    assert_frame_equal(
        accepted.head(10), frame.filter(pl.col("tokens") > 5, counted("drop")).head(10)
    )
    assert matching.resolved == 0 and accepted.resolved < 2**17


def test_a_first_screen_picks_only_the_first_rows() -> None:
    """The first rows of 1,000 are read having looked at the first chunk only; the last ones
    pick the rest."""
    frame = _frame([(OUTCOMES[i % 3], i % 50, "a.csv") for i in range(1_000)])
    parent = sorted_rows(Rows(frame), "tokens", descending=False)
    eager = parent.where(counted("drop"))
    picked = PickedRows(parent, counted("drop"), eager.height, chunks=(64, 256))

    assert_frame_equal(picked.head(10), eager.head(10))
    assert 10 <= picked.resolved < picked.height  # the first 64 rows looked at: 22 picked
    assert_frame_equal(picked.tail(5), eager.tail(5))
    assert picked.resolved == picked.height


def test_a_find_among_rows_the_pick_drops_looks_at_no_more_rows() -> None:
    """A failed attempt (never among the accepted rows) is not found, and nothing more is
    picked to say so; an accepted one far down is found, having picked as far as it."""
    frame = _frame([(OUTCOMES[i % 3], i, "a.csv") for i in range(1_000)])
    eager = Rows(frame).where(counted("drop"))
    picked = PickedRows(Rows(frame), counted("drop"), eager.height, chunks=(16, 16))

    def at_line(line: int) -> pl.Expr:
        return pl.col("source").eq_missing("a.csv") & pl.col("line").eq_missing(line)

    assert picked.find(at_line(3)) is None  # row 1: failed
    assert picked.resolved == 0
    assert picked.find(at_line(602)) == eager.find(at_line(602)) == 200  # row 600: passed
    assert 200 < picked.resolved < picked.height


def test_threads_reading_at_once_read_the_same_rows() -> None:
    """Several threads reading different parts at once (the screen and a worker): each gets
    the rows `where` gives, and the positions come out once, whole."""
    frame = _frame([(OUTCOMES[(i * 7) % 3], i % 97, "a.csv") for i in range(5_000)])
    parent = sorted_rows(Rows(frame), "tokens", descending=True)
    eager = parent.where(counted("drop"))
    picked = PickedRows(parent, counted("drop"), eager.height, chunks=(8, 64))
    starts = [0, 40, 700, 1_200, 1_600, eager.height - 3]
    lines = [4_001, 2_501, 4_000]  # looked up as the cursor's attempt: accepted twice, failed
    results: dict[int, pl.DataFrame] = {}
    found: dict[int, int | None] = {}
    go = threading.Barrier(len(starts) + len(lines))

    def at_line(line: int) -> pl.Expr:
        return pl.col("line").eq_missing(line)

    def read(start: int) -> None:
        go.wait()
        results[start] = picked.slice(start, 25)

    def find(line: int) -> None:
        go.wait()
        found[line] = picked.find(at_line(line))

    threads = [threading.Thread(target=read, args=(start,)) for start in starts]
    threads += [threading.Thread(target=find, args=(line,)) for line in lines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for start in starts:
        assert_frame_equal(results[start], eager.slice(start, 25))
    for line in lines:
        assert found[line] == eager.find(at_line(line))
    assert_series_equal(picked.index, eager.index, check_names=False)


def test_a_count_that_is_not_the_rows_picked_says_so() -> None:
    """Rows counted wrong (a bug, never a state shown): picking every one raises."""
    frame = _frame([("passed", 1, "a.csv"), ("failed", 2, "a.csv")])
    picked = PickedRows(Rows(frame), counted("drop"), 2)
    with pytest.raises(RuntimeError, match="picked 1 rows where 2 were counted"):
        picked.frame()
