"""Row-index snapshots (issue 29, item 3): a filtered, sorted view is positions over the one
frame, and everything read through it is what a copy of the rows would give.

The plain path is the one the app took before: `attempts.filter(expression)`, then
`matched_tasks_only`, `compare` of that copy, and `DataFrame.sort` of it. The fast path is
`compute_snapshot` as the app runs it: positions (`rows.Rows`), `compare` through a lazy
filter of the frame, and the checks and pairs read the same way.
"""

from __future__ import annotations

import threading
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from tui_ledger.accounting.checks import run_checks
from tui_ledger.accounting.compact import text_values
from tui_ledger.accounting.ledger import Comparison, compare, in_view
from tui_ledger.accounting.matched import matched_tasks_only
from tui_ledger.accounting.pairs import pairs_from_cells, task_cells
from tui_ledger.accounting.rows import Rows, matching_rows, sorted_rows
from tui_ledger.filtering.query import parse_filter
from tui_ledger.load import load
from tui_ledger.tui import snapshot as snapshot_module
from tui_ledger.tui.snapshot import Request, Snapshot, compute_snapshot

WORKFLOWS = ("lean", "steady", "wide")
MODELS = ("m-a", "m-b", None)
FILTERS = ("", "tokens>1500", "lean", "-failed", "model:m-a", "tokens<900 | passed", "-steady")
SORTS = (None, ("tokens", False), ("tokens", True), ("workflow", True), ("model", False))

attempt = st.tuples(
    st.sampled_from(WORKFLOWS),
    st.sampled_from([f"t{i}" for i in range(6)]),
    st.one_of(st.none(), st.integers(0, 3_000)),
    st.sampled_from(["true", "false", ""]),
    st.sampled_from(MODELS),
)


def _ledger_file(tmp_path: Any, rows: list[tuple[str, str, int | None, str, str | None]]) -> str:
    lines = ["workflow,task,tokens,passed,model"]
    for workflow, task, tokens, passed, model in rows:
        lines.append(f"{workflow},{task},{'' if tokens is None else tokens},{passed},{model or ''}")
    path = tmp_path / "runs.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _same_figures(got: Comparison, want: Comparison) -> None:
    """Every figure alike; the delta-method bounds to the last few digits (a sum of squares in
    float64 adds up in the order polars' threads hand it, which already varies run to run on
    the same frame)."""
    for view in ("keep", "drop"):
        g, w = got.view(view), want.view(view)
        bounds = [name for name in g.columns if name.endswith(("_lo", "_hi"))]
        assert_frame_equal(g.drop(bounds), w.drop(bounds))
        assert_frame_equal(g.select(bounds), w.select(bounds), rel_tol=1e-12, abs_tol=1e-9)
    assert_frame_equal(got.trap, want.trap)


def _fast(
    attempts: pl.DataFrame,
    expression: pl.Expr | None,
    by: tuple[str, ...],
    sort: Any,
    matched: bool,
) -> Snapshot:
    request = Request(expression, by, sort, matched, "keep")
    snapshot = compute_snapshot(1, attempts, request, None, threading.Event())
    assert snapshot is not None
    return snapshot


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(attempt, min_size=1, max_size=40),
    text=st.sampled_from(FILTERS),
    sort=st.sampled_from(SORTS),
    by=st.sampled_from([("workflow",), ("model",), ("workflow", "model")]),
    matched=st.booleans(),
)
def test_the_row_index_snapshot_is_the_copy_it_replaces(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[str, str, int | None, str, str | None]],
    text: str,
    sort: tuple[str, bool] | None,
    by: tuple[str, ...],
    matched: bool,
) -> None:
    """On random ledgers, filters, sorts, groupings and matched tasks only: the same rows in
    the same order in both views, the same figures, the same checks and pairs, and no copy
    of the frame held."""
    attempts = load(_ledger_file(tmp_path_factory.mktemp("rows"), rows)).attempts
    expression = parse_filter(text, attempts.schema) if text else None
    plain = attempts.filter(expression) if expression is not None else attempts
    notice = None
    if matched:
        plain, notice = matched_tasks_only(plain, by)
    snapshot = _fast(attempts, expression, by, sort, matched)

    assert snapshot.matching.source is attempts  # positions over the one frame, not a copy
    assert snapshot.notice == notice
    assert_frame_equal(snapshot.matching.frame(), plain)
    ordered = plain
    if sort is not None:
        column, descending = sort
        ordered = plain.sort(column, descending=descending, nulls_last=True, maintain_order=True)
    assert_frame_equal(snapshot.frame("keep").frame(), ordered)
    assert_frame_equal(snapshot.frame("drop").frame(), in_view(ordered, "drop"))
    assert snapshot.rows("drop") == in_view(plain, "drop").height
    if matched:
        assert snapshot.tasks == (plain["task"].n_unique() if plain.height else 0)

    _same_figures(snapshot.comparison, compare(plain, by, intervals="delta"))
    assert run_checks(snapshot.lazy(), list(by)) == run_checks(plain, list(by))
    comparison = snapshot.comparison
    fast_pairs = pairs_from_cells(
        comparison, task_cells(snapshot.lazy(), by), seed=3, resamples=200
    )
    plain_pairs = pairs_from_cells(comparison, task_cells(plain, by), seed=3, resamples=200)
    assert fast_pairs == plain_pairs


def test_checks_through_a_filter_name_the_same_duplicates(tmp_path: Any) -> None:
    """The checks that collect rows (repeated ids, repeated attempt numbers, copied rows)
    read them through the lazy filter as from a copy."""
    path = tmp_path / "runs.csv"
    path.write_text(
        "id,workflow,task,attempt,tokens,passed\n"
        "a1,lean,t1,1,100,true\n"
        "a1,lean,t1,1,100,true\n"
        "a2,lean,t1,1,300,false\n"
        "a3,steady,t2,2,50,true\n"
        "a4,steady,t2,2,70,false\n"
        "a5,wide,t3,1,10,true\n",
        encoding="utf-8",
    )
    attempts = load(str(path)).attempts
    condition = pl.col("tokens") > 60
    fast = run_checks(attempts.lazy().filter(condition), ["workflow"])
    plain = run_checks(attempts.filter(condition), ["workflow"])
    assert fast == plain
    assert {check.kind for check in fast} >= {"duplicate_ids"}


def test_rows_gather_only_what_is_asked() -> None:
    frame = pl.DataFrame({"n": [10, 20, 30, 40, 50], "s": ["a", "b", "c", "d", "e"]})
    rows = Rows(frame, pl.Series([4, 1, 3], dtype=pl.UInt32))
    assert rows.height == 3 and rows.columns == ["n", "s"]
    assert rows.slice(1, 5)["n"].to_list() == [20, 40]
    assert rows.head(1)["s"].to_list() == ["e"] and rows.tail(1)["s"].to_list() == ["d"]
    assert rows.value("s", 0) == "e" and rows.row(2) == {"n": 40, "s": "d"}
    assert rows.find(pl.col("s") == "d") == 2
    assert rows.find(pl.col("s") == "a") is None  # in the frame, not among these rows
    assert rows.where(pl.col("n") > 25).frame()["n"].to_list() == [50, 40]
    assert Rows(frame).where(pl.col("n") > 25).frame()["n"].to_list() == [30, 40, 50]
    assert rows.same_as(Rows(frame, pl.Series([4, 1, 3], dtype=pl.UInt32)))
    assert not rows.same_as(Rows(frame, pl.Series([4, 3, 1], dtype=pl.UInt32)))
    assert not rows.same_as(Rows(frame.clone(), rows.index))  # another frame
    assert Rows(frame).same_as(Rows(frame)) and not Rows(frame).same_as(rows)


def test_sorted_rows_are_a_stable_sort_with_nulls_last() -> None:
    frame = pl.DataFrame({"v": [3, None, 1, 3, None, 2], "i": range(6)})
    for descending in (False, True):
        want = frame.sort("v", descending=descending, nulls_last=True, maintain_order=True)
        got = sorted_rows(Rows(frame), "v", descending=descending).frame()
        assert_frame_equal(got, want)
        some = matching_rows(frame, pl.col("i") != 2)
        got = sorted_rows(some, "v", descending=descending).frame()
        assert_frame_equal(got, want.filter(pl.col("i") != 2))


async def test_the_app_holds_positions_over_its_one_frame(tmp_path: Any) -> None:
    """After a filter, a sort and the toggle, the snapshot and the table hold positions over
    the ledger's frame (no copy of its rows), and the table shows the filtered rows."""
    from tests.pilot_helpers import press, settle
    from tui_ledger.tui.app import LedgerApp

    rows = [
        (WORKFLOWS[i % 3], f"t{i % 4}", 100 * i, "true" if i % 3 else "false", None)
        for i in range(30)
    ]
    app = LedgerApp([_ledger_file(tmp_path, rows)])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"tokens>1000", "enter")
        await settle(pilot)
        pipeline = app.pipeline
        assert pipeline.ledger is not None and pipeline.snapshot is not None
        attempts = pipeline.ledger.attempts
        snapshot = pipeline.snapshot
        assert snapshot.matching.source is attempts and snapshot.matching.index is not None
        assert snapshot.matching.index.dtype == pl.UInt32
        assert app.table.rows.source is attempts
        assert app.table.row_count == attempts.filter(pl.col("tokens") > 1000).height
        await press(pilot, "t")
        await settle(pilot)
        assert app.table.rows.source is attempts
        assert set(app.table.frame["passed"].to_list()) == {True}


def test_a_new_sort_of_the_rows_on_screen_picks_no_rows_again(tmp_path: Any) -> None:
    """A sort of the figures on screen (the pipeline's sort-only recompute: the snapshot's own
    condition, its comparison) reuses its positions; only the order is new."""
    rows = [(WORKFLOWS[i % 3], f"t{i % 4}", 100 * i, "true", None) for i in range(12)]
    attempts = load(_ledger_file(tmp_path, rows)).attempts
    shown = _fast(attempts, pl.col("tokens") > 300, ("workflow",), None, False)
    request = Request(shown.condition, ("workflow",), ("tokens", True), False, "keep")
    again = compute_snapshot(2, attempts, request, shown, threading.Event())
    assert again is not None and again.matching is shown.matching
    assert again.comparison is shown.comparison
    assert again.frame("keep").frame()["tokens"].to_list() == list(range(1100, 300, -100))


# Keys as typed: chains of narrowing filters (one more letter or digit), filters typed back
# (Backspace), cleared (""), other words for the same rows, and groupings changed back.
CHAINS = (
    ("l", "le", "lea", "lean"),
    ("t", "t1"),
    ("tokens>1", "tokens>15", "tokens>150", "tokens>1500"),
    ("tokens>=15", "tokens>=150", "tokens>150"),
    ("tokens<2000", "tokens<200", "tokens<20", "tokens<2"),
    ("m", "m-", "m-a", "m-a lean"),
    ("model:m", "model:m-a", "model:m-a tokens>150"),
    ("pass", "passe", "passed"),
    ("-failed", "-failed lea"),
    ("",),
)
GROUPINGS = (("workflow",), ("model",), ("workflow", "model"))


@st.composite
def typed(draw: st.DrawFn) -> list[tuple[str, tuple[str, ...]]]:
    """Keys one after another, each with the grouping it is computed for."""
    steps: list[tuple[str, tuple[str, ...]]] = []
    by = draw(st.sampled_from(GROUPINGS))
    for _ in range(draw(st.integers(1, 4))):
        move = draw(st.sampled_from(["chain", "back", "group"])) if steps else "chain"
        if move == "chain":
            chain = draw(st.sampled_from(CHAINS))
            steps += [(text, by) for text in chain[: draw(st.integers(1, len(chain)))]]
        elif move == "back":
            steps.append(draw(st.sampled_from(steps)))
        else:
            by = draw(st.sampled_from(GROUPINGS))
            steps.append((steps[-1][0], by))
    return steps


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(attempt, min_size=1, max_size=40),
    steps=typed(),
    distinct=st.booleans(),
    narrow_always=st.booleans(),
    final=st.booleans(),
)
def test_reused_rows_and_figures_are_a_fresh_filters(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[str, str, int | None, str, str | None]],
    steps: list[tuple[str, tuple[str, ...]]],
    distinct: bool,
    narrow_always: bool,
    final: bool,
) -> None:
    """Keys typed one after another on the same frame (`recent_figures`): a filter that
    narrows the one before found among its rows, a cleared or retyped filter's rows and
    figures remembered, a grouping seen before reused, are each what a fresh filter and a
    fresh comparison of the frame give (with and without the frame's distinct values, and
    the figures on screen handed on as final or not)."""
    attempts = load(_ledger_file(tmp_path_factory.mktemp("keys"), rows)).attempts
    values = text_values(attempts) if distinct else None
    shown: Snapshot | None = None
    # Narrowing whatever share of the rows the wider filter kept (else: only under half).
    narrower_than = snapshot_module.NARROWER_THAN
    snapshot_module.NARROWER_THAN = 0 if narrow_always else narrower_than
    try:
        for text, by in steps:
            expression = parse_filter(text, attempts.schema, values)
            request = Request(expression, by, None, False, "keep")
            # `final`: the figures on screen are final, and handed on (as the pipeline does).
            on_screen = shown if final and shown and shown.comparison.by == by else None
            snapshot = compute_snapshot(1, attempts, request, None, threading.Event(), on_screen)
            assert snapshot is not None
            plain = attempts.filter(expression) if expression is not None else attempts
            assert snapshot.matching.source is attempts
            assert_frame_equal(snapshot.matching.frame(), plain)
            _same_figures(snapshot.comparison, compare(plain, by, intervals="delta"))
            shown = snapshot
    finally:
        snapshot_module.NARROWER_THAN = narrower_than


def test_figures_are_never_another_frames(tmp_path: Any) -> None:
    """A reloaded or appended ledger is a new frame: the figures remembered for the frame
    before are not its figures, even through the same filter and grouping."""
    rows = [(WORKFLOWS[i % 3], f"t{i % 4}", 100 * i, "true", None) for i in range(12)]
    before = load(_ledger_file(tmp_path, rows)).attempts
    first = _fast(before, pl.col("tokens") > 300, ("workflow",), None, False)
    appended = pl.concat(
        [before, before.head(5).with_columns(pl.lit(9_000, dtype=pl.Int64).alias("tokens"))]
    )
    again = _fast(appended, pl.col("tokens") > 300, ("workflow",), None, False)
    assert again.comparison is not first.comparison
    _same_figures(
        again.comparison, compare(appended.filter(pl.col("tokens") > 300), intervals="delta")
    )
    cleared = _fast(appended, None, ("workflow",), None, False)
    back = _fast(appended, None, ("workflow",), None, False)
    assert back.comparison is cleared.comparison  # the same frame: remembered
