"""The cube's figures are `ledger.compare`'s on the filtered rows (`accounting/cube.py`).

Random frames (null keys, empty views, suspect zeros, missing usage, one-row groups, huge
values whose medians pass 2**52, a cost column or none), filters of the app's language over
the key columns (words, `col:value`, negations, outcome shortcuts, combinations) and
groupings: counts, token sums and medians must be equal, float columns within 1e-9
(relative; pooled cells add their floats in another order). The medians are also checked
against a plain-Python median, with median indexes of a few edges (so the search crosses
buckets) and values many attempts share.
"""

from __future__ import annotations

import threading

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracle import median
from tui_ledger.accounting.compact import text_values
from tui_ledger.accounting.comparison import Comparison
from tui_ledger.accounting.cube import Cube, TokenRange, build_cube, cube_for, remember_cube
from tui_ledger.accounting.ledger import compare
from tui_ledger.filtering.query import parse_filter
from tui_ledger.filtering.token_range import on_cube
from tui_ledger.schema import ACCEPTED, OUTCOME_DTYPE, OUTCOMES
from tui_ledger.tui.snapshot import Request, compute_snapshot

TEXT_KEYS = ("workflow", "task", "model")

small_tokens = st.one_of(st.none(), st.integers(0, 3), st.integers(0, 2**20))
huge_tokens = st.one_of(st.none(), st.integers(2**53 - 4, 2**53 + 4))

FILTERS = [
    "",
    "lean",
    "issue",
    "issue-1",
    "-lean",
    "workflow:lean-loop",
    "model:b",
    "-model:a",
    "failed",
    "passed",
    "lean failed",
    "issue -lean",
    "ü",
    "nothing-matches-this",
    # Ranges of tokens (`Cube.ranged`), alone and with key terms; and terms that are no range.
    "tokens>2000",
    "tokens>=3",
    "tokens<3",
    "tokens<=0",
    "tokens:0",
    "tokens=2",
    "tokens>1 tokens<1000",
    "tokens>=9007199254740988",
    "tokens<9007199254740990",
    "lean tokens>1",
    "-model:a tokens<=2",
    "failed tokens>0",
    "tokens>2.5",
    "tokens<1e6",
    "tokens>5 tokens<5",
    "-tokens>2",
    "tokens!=0",
    "tokens:null",
]
GROUPINGS = [("workflow",), ("model",), ("workflow", "model"), ("task",), ("task", "model")]


def _rows(tokens: st.SearchStrategy[int | None]) -> st.SearchStrategy[list[tuple]]:
    return st.lists(
        st.tuples(
            st.sampled_from(["lean-loop", "one-shot", "ü-flow", None]),
            st.sampled_from(["issue-1", "issue-10", "docs-2"]),
            st.sampled_from(["a", "b", None]),
            st.sampled_from(OUTCOMES),
            tokens,
            st.one_of(st.none(), st.floats(0, 5, allow_nan=False)),
        ),
        min_size=1,
        max_size=60,
    )


def _frame(rows: list[tuple], with_cost: bool) -> pl.DataFrame:
    frame = pl.DataFrame(
        rows,
        schema={
            "workflow": pl.String,
            "task": pl.String,
            "model": pl.String,
            "outcome": OUTCOME_DTYPE,
            "tokens": pl.Int64,
            "cost": pl.Float64,
        },
        orient="row",
    ).with_columns(
        pl.col(TEXT_KEYS).cast(pl.Categorical),
        (pl.col("outcome") == ACCEPTED).alias("passed"),
    )
    return frame if with_cost else frame.drop("cost")


def _no_range(text: str, cube: Cube) -> bool:
    """Whether `text`'s term on tokens is one the cube never counts as a range: negated, `!=`,
    a null word, a float against values past 2**53, or a frame with a cost column."""
    if "tokens" not in text:
        return False
    floats = "." in text or "e6" in text
    return (
        cube.with_cost
        or any(part in text for part in ("-tokens", "!=", "null"))
        or (floats and cube.medians.high >= 2**53)
    )


def _cube(frame: pl.DataFrame, edges: int) -> Cube:
    cube = build_cube(frame, min_rows=0, rows_per_cell=1, max_edges=edges)
    assert cube is not None
    return cube


def assert_cube_is_compare(
    cube: Cube, frame: pl.DataFrame, where: pl.Expr | None, by: tuple[str, ...]
) -> None:
    filtered = frame.lazy() if where is None else frame.lazy().filter(where)
    request = on_cube(cube, where, by)
    assert request is not None
    assert_same_figures(
        cube.compare(request[0], by, request[1]), compare(filtered, by, intervals="delta")
    )


BOUND_TOLERANCE = 1e-7
"""A delta-method bound is the estimate R less or plus 1.96 sqrt(V), V a difference of terms
the size of R squared: where V is near 0 (every accepted attempt spends alike), its rounding
(2**-52 of R squared) shows through the square root as about 1.5e-8 of R. So bounds are
equal within 1e-7 of their estimate, not of themselves."""


def assert_same_figures(got: Comparison, want: Comparison) -> None:
    """Equal frames, float columns within 1e-9 relative (or 1e-12 absolute near 0), interval
    bounds within `BOUND_TOLERANCE` of their estimate."""
    assert got.by == want.by
    for name in ("keep", "drop", "trap"):
        mine, theirs = getattr(got, name), getattr(want, name)
        assert mine.columns == theirs.columns, name
        assert mine.schema == theirs.schema, name
        for column in mine.columns:
            a, b = mine.get_column(column), theirs.get_column(column)
            if a.dtype.is_float():
                assert a.is_null().equals(b.is_null()), (name, column)
                estimate = column.removesuffix("_lo").removesuffix("_hi")
                scales = (
                    theirs.get_column(estimate).filter(b.is_not_null()).abs().to_list()
                    if estimate != column and estimate in theirs.columns
                    else [0.0] * b.drop_nulls().len()
                )
                a, b = a.drop_nulls().to_list(), b.drop_nulls().to_list()
                for x, y, scale in zip(a, b, scales, strict=True):
                    slack = BOUND_TOLERANCE * (scale or 0.0)
                    assert x == pytest.approx(y, rel=1e-9, abs=max(1e-12, slack)), (name, column)
            else:
                assert a.equals(b, check_names=True), (name, column, a, b)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=_rows(st.one_of(small_tokens, huge_tokens)),
    text=st.sampled_from(FILTERS),
    by=st.sampled_from(GROUPINGS),
    with_cost=st.booleans(),
    edges=st.sampled_from([2, 4, 1024]),
)
def test_the_cubes_comparison_is_compares_on_the_filtered_rows(
    rows: list[tuple], text: str, by: tuple[str, ...], with_cost: bool, edges: int
) -> None:
    frame = _frame(rows, with_cost)
    # Small and huge values in one frame: the packing needs fewer keys (or has no room).
    cube = build_cube(frame, min_rows=0, rows_per_cell=1, max_edges=edges)
    low, high = frame.select(pl.col("tokens").min().alias("a"), pl.col("tokens").max()).row(0)
    if cube is not None and low is not None:
        assert (cube.medians.low, cube.medians.high) == (low, high)  # (float bounds read it)
    where = parse_filter(text, frame.schema, text_values(frame))
    if cube is None or on_cube(cube, where, by) is None:
        if cube is not None and _no_range(text, cube):
            return  # a term on tokens that is no range, or a float past 2**53
        spread = frame.select(pl.col("tokens").max() - pl.col("tokens").min()).item()
        assert spread is not None and spread >= 2**40  # only a range that wide leaves keys out
        return
    assert_cube_is_compare(cube, frame, where, by)


@settings(max_examples=150, deadline=None)
@given(
    rows=_rows(st.one_of(st.none(), st.integers(0, 3), st.integers(0, 2**30))),
    text=st.sampled_from(FILTERS),
    by=st.sampled_from(GROUPINGS),
    edges=st.sampled_from([2, 3, 6, 1024]),
)
def test_every_key_is_kept_and_the_figures_are_compares(
    rows: list[tuple], text: str, by: tuple[str, ...], edges: int
) -> None:
    """Within a 2**30 range every key fits: every such request is covered, and answered."""
    frame = _frame(rows, with_cost=False)
    cube = _cube(frame, edges)
    assert set(cube.keys) == {"outcome", "passed", *TEXT_KEYS}
    where = parse_filter(text, frame.schema, text_values(frame))
    assert (on_cube(cube, where, by) is not None) != _no_range(text, cube)
    if not _no_range(text, cube):
        assert_cube_is_compare(cube, frame, where, by)


@settings(max_examples=150, deadline=None)
@given(
    rows=_rows(
        st.one_of(
            st.none(),
            st.just(7),  # many attempts share a value
            st.integers(0, 2),
            st.integers(0, 2**40),
            st.integers(2**52, 2**52 + 3),  # medians at 2**52 and past: exact (Decimal)
        )
    ),
    text=st.sampled_from(FILTERS),
    by=st.sampled_from(GROUPINGS),
    edges=st.sampled_from([2, 3, 5, 1024]),
)
def test_the_medians_are_the_plain_median_of_the_filtered_rows(
    rows: list[tuple], text: str, by: tuple[str, ...], edges: int
) -> None:
    frame = _frame(rows, with_cost=False)
    cube = _cube(frame, edges)
    where = parse_filter(text, frame.schema, text_values(frame))
    request = on_cube(cube, where, by)
    if request is None:
        return  # a key left out for width, or no range: the previous tests cover the rest
    got = cube.compare(request[0], by, request[1])
    kept = frame if where is None else frame.filter(where)
    for view in ("keep", "drop"):
        counted = kept if view == "keep" else kept.filter(pl.col("outcome") == ACCEPTED)
        figures = got.view(view)
        for row in figures.iter_rows(named=True):
            key = pl.all_horizontal(
                pl.col(name).is_null() if row[name] is None else pl.col(name) == row[name]
                for name in by
            )
            group = kept.filter(key)
            tokens = counted.filter(key).get_column("tokens").drop_nulls().to_list()
            recorded = group.get_column("tokens").drop_nulls().gt(0).any()
            value = row["median_tokens_per_attempt"]
            if not recorded or not any(token > 0 for token in tokens):
                assert value is None
            else:
                assert value == median(tokens)


def test_a_request_is_covered_only_when_it_reads_key_columns() -> None:
    frame = _frame(
        [
            ("lean-loop", "issue-1", "a", outcome, 10 * index, None)
            for index, outcome in enumerate(OUTCOMES * 3)
        ],
        with_cost=False,
    ).with_columns(pl.format("note {}", pl.col("tokens")).alias("note"))
    cube = _cube(frame, 1024)
    values = text_values(frame)
    assert "note" not in cube.keys and "tokens" not in cube.keys

    def covered(text: str, by: tuple[str, ...] = ("workflow",)) -> bool:
        return on_cube(cube, parse_filter(text, frame.schema, values), by) is not None

    assert covered("")
    assert covered("lean failed -model:b", ("workflow", "model"))
    # A range of tokens, with terms over the keys: counted from each cell's sorted run.
    assert covered("tokens>20") and covered("lean tokens<=40 tokens>=10 failed")
    assert not covered("-tokens>20")  # outside a range: two ranges
    assert not covered("tokens!=20") and not covered("tokens:null")
    assert not covered("note tokens>20")
    assert not covered("note")  # a word that hits a column with a value per row
    assert not covered("", ("note",))
    assert not cube.covers(None, ())
    with pytest.raises(ValueError, match="does not cover"):
        cube.compare(parse_filter("-tokens>20", frame.schema, values), ("workflow",))
    costly = _cube(frame.with_columns(pl.lit(0.5).alias("cost")), 1024)
    assert on_cube(costly, parse_filter("tokens>20", frame.schema, values), ("workflow",)) is None


def test_no_cube_for_a_small_frame_or_past_the_cells_limit() -> None:
    rows = [("lean-loop", f"t{index}", "a", "passed", index, None) for index in range(100)]
    frame = _frame(rows, with_cost=False)
    assert build_cube(frame) is None  # under CUBE_MIN_ROWS
    # A task per row: past a cell per 8 rows, the task is no key; the rest still are.
    cube = build_cube(frame, min_rows=0)
    assert cube is not None and "task" not in cube.keys and "workflow" in cube.keys


def test_the_snapshot_takes_the_cubes_figures_when_it_covers_the_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = [
        (workflow, f"issue-{index % 7}", "ab"[index % 2], OUTCOMES[index % 3], index * 13, None)
        for index in range(300)
        for workflow in ("lean-loop", "one-shot")
    ]
    frame = _frame(rows, with_cost=False)
    values = text_values(frame)
    cube = _cube(frame, 1024)
    asked: list[tuple[str, ...]] = []
    answer = cube.compare

    def counted(
        where: pl.Expr | None, by: tuple[str, ...], tokens: TokenRange | None = None
    ) -> Comparison:
        asked.append(tuple(by))
        return answer(where, by, tokens)

    monkeypatch.setattr(cube, "compare", counted)
    other = frame.clone()
    remember_cube(other, _cube(other, 1024))  # another frame's (frames compare by identity)
    remember_cube(frame, cube)
    assert cube_for(frame) is cube and cube_for(other) is not cube
    assert cube_for(frame.clone()) is None

    def snapshot(text: str, by: tuple[str, ...]) -> Comparison:
        where = parse_filter(text, frame.schema, values)
        request = Request(where, by, None, False, "keep")
        done = compute_snapshot(1, frame, request, None, threading.Event())
        assert done is not None
        kept = frame if where is None else frame.filter(where)
        assert done.matching.height == kept.height
        assert done.matching.frame().equals(kept)
        assert done.drop_rows.frame().equals(kept.filter(pl.col("outcome") == ACCEPTED))
        return done.comparison

    where = parse_filter("lean -issue-3", frame.schema, values)
    got = snapshot("lean -issue-3", ("model",))
    assert asked == [("model",)]
    assert_same_figures(got, compare(frame.filter(where), ["model"], intervals="delta"))
    snapshot("-tokens>200", ("workflow",))
    assert asked == [("model",)]  # not covered: the rows' path
    snapshot("-issue-3 failed", ("workflow", "model"))
    assert asked == [("model",), ("workflow", "model")]
    got = snapshot("lean tokens>200", ("workflow",))  # a range of tokens: covered
    assert asked[-1] == ("workflow",)
    where = parse_filter("lean tokens>200", frame.schema, values)
    assert_same_figures(got, compare(frame.filter(where), ["workflow"], intervals="delta"))


def test_keys_are_placed_among_the_frames_values_not_the_processs_codes() -> None:
    """Categorical codes are the process's: a value seen before a million others and values
    seen after are codes a million apart; three keys' codes would take 60 bits and usage up
    to 2**40 would leave no room. Each key's digit is its value's place among the frame's
    few values instead."""
    early = pl.Series(["cube-w0", "cube-t0", "cube-m0"], dtype=pl.Categorical)
    pl.Series([f"cube-filler-{index}" for index in range(2**20)], dtype=pl.Categorical)
    rows = [
        (f"cube-w{index % 3}", f"cube-t{index % 5}", f"cube-m{index % 2}", outcome, tokens, None)
        for index, (outcome, tokens) in enumerate(
            (outcome, tokens) for outcome in OUTCOMES for tokens in (0, 1, 2**40)
        )
    ]
    frame = _frame(rows, with_cost=False)
    spread = frame.select(pl.col(TEXT_KEYS).to_physical().max() - early.to_physical().min())
    assert min(spread.row(0)) >= 2**20
    cube = _cube(frame, 1024)
    assert set(cube.keys) == {"outcome", "passed", *TEXT_KEYS}
    for by in GROUPINGS:
        assert_cube_is_compare(cube, frame, parse_filter("cube-w1", frame.schema), by)
