"""Many groups (issue 14, item 8): the column-at-a-time forms of per-group text and rules read
exactly as the one-at-a-time definitions they stand for."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_ledger.accounting import checks
from tui_ledger.accounting.ledger import compare
from tui_ledger.accounting.ranking import rank_range_stages, rank_ranges
from tui_ledger.schema import OUTCOME_DTYPE
from tui_ledger.text.wording import count_expr, plural, plural_expr


@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=30))
@settings(max_examples=60, deadline=None)
def test_plural_expr_reads_as_plural(counts: list[int]) -> None:
    frame = pl.DataFrame({"n": counts}, schema={"n": pl.Int64})
    got = frame.select(plural_expr(pl.col("n"), "task"), count_expr(pl.col("n")).alias("c"))
    assert got["n"].to_list() == [plural(n, "task") for n in counts]
    assert got["c"].to_list() == [f"{n:,}" for n in counts]


NAMES = [
    "plain",
    "x" * 40,
    "x" * 41,
    "a\x1bb",
    "tab\there",
    "é" * 50,
    "\u202eevil",
    "",
    "sp ace ~!",
    "\x7f",
]


def test_name_column_is_name_of_each() -> None:
    got = checks._name_column(pl.Series(NAMES, dtype=pl.String)).to_list()
    assert got == [checks._name(name) for name in NAMES]


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.floats(0, 1e6, allow_nan=False)), st.booleans(), st.booleans()
        ),
        max_size=25,
    )
)
@settings(max_examples=80, deadline=None)
def test_rank_stages_are_rank_ranges(rows: list[tuple[float | None, bool, bool]]) -> None:
    frame = pl.DataFrame(
        rows, schema={"value": pl.Float64, "lower": pl.Boolean, "ranked": pl.Boolean}, orient="row"
    )
    args = (pl.col("value"), pl.col("lower"), pl.col("ranked"))
    one = frame.with_columns(rank_ranges(*args))
    staged = frame
    for stage in rank_range_stages(*args):
        staged = staged.with_columns(stage)
    assert staged.equals(one)


def _ledger(rows: list[tuple[str, str, int | None]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema={"workflow": pl.String, "outcome": pl.String, "tokens": pl.Int64}, orient="row"
    ).with_columns(pl.col("outcome").cast(OUTCOME_DTYPE))


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d", "e"]),
            st.sampled_from(["passed", "failed"]),
            st.one_of(st.none(), st.integers(0, 50)),
        ),
        min_size=1,
        max_size=30,
    )
)
@settings(max_examples=80, deadline=None)
def test_moves_flips_and_best_follow_the_moves(rows: list[tuple[str, str, int | None]]) -> None:
    """`moves`, `flips` and `flip_undecided` (read from one polars frame) agree with each
    `Move`'s own `certain`, and `best` is the first group ranked 1 with a figure."""
    comparison = compare(_ledger(rows), ["workflow"], intervals="none")
    for metric in ("tokens",):
        possible = comparison.possible_moves(metric)
        assert comparison.moves(metric) == [move for move in possible if move.certain]
        assert comparison.flips(metric) == any(move.certain for move in possible)
        assert comparison.flip_undecided(metric) == (
            bool(possible) and not any(move.certain for move in possible)
        )
        for move in possible:
            assert None not in (move.keep_rank, move.drop_rank)
            assert not (move.keep_rank == move.keep_worst == move.drop_rank == move.drop_worst)
        for view in ("keep", "drop"):
            frame = comparison.view(view)
            expected = next(
                (
                    label
                    for label, rank, value in zip(
                        comparison.labels,
                        frame["rank"],
                        frame["tokens_per_accepted_result"],
                        strict=True,
                    )
                    if rank == 1 and value is not None
                ),
                None,
            )
            assert comparison.best(view, metric) == expected


@given(
    st.dictionaries(
        st.sampled_from(["g1", "g2", "g3", "g4"]),
        st.sets(st.integers(0, 11), max_size=12),
        min_size=2,
        max_size=4,
    )
)
@settings(max_examples=80, deadline=None)
def test_unmatched_names_the_first_skipped_tasks(attempted: dict[str, set[int]]) -> None:
    """Each short group's detail names the first EXAMPLES tasks (in task order) it skipped."""
    rows = [
        (group, f"t{task:02}", "passed", 10) for group, tasks in attempted.items() for task in tasks
    ]
    rows += [(group, None, "failed", 10) for group, tasks in attempted.items() if not tasks]
    frame = pl.DataFrame(
        rows,
        schema={"workflow": pl.String, "task": pl.String, "outcome": pl.String, "tokens": pl.Int64},
        orient="row",
    ).with_columns(pl.col("outcome").cast(OUTCOME_DTYPE))
    found = [c for c in checks.run_checks(frame, ["workflow"]) if c.kind == "unmatched_tasks"]
    every = sorted({task for tasks in attempted.values() for task in tasks})
    short = [
        (group, [t for t in every if t not in tasks])
        for group, tasks in sorted(attempted.items())
        if len(every) > len(tasks & set(every))
    ]
    short.sort(key=lambda item: -len(item[1]))
    expected = [
        f"{group}: skipped {plural(len(skipped), 'task')} of {len(every):,} (e.g. "
        + ", ".join(f"t{t:02}" for t in skipped[: checks.EXAMPLES])
        + ")"
        for group, skipped in short
    ]
    if not every or not short:
        assert not found
        return
    assert list(found[0].details) == expected
