"""The pairwise verdicts (`pairs`, `verdicts`): right at the rates a 95% interval promises on
ledgers whose truth is known, and the bound rule before the noise."""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_ledger.accounting.ledger import compare
from tui_ledger.accounting.pairs import ALL_PAIRS_UP_TO, NEIGHBOURS, with_pairs
from tui_ledger.accounting.verdicts import PAIRED, UNPAIRED, verdict
from tui_ledger.load import load

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"
FIXTURE_PATH = SAMPLES / "runs.csv"
DEMO_PATH = SAMPLES / "demo.csv"


def _ledger(rows: list[tuple[str, str, str, int]], *, tasks: bool = True) -> pl.DataFrame:
    frame = pl.DataFrame(
        rows, schema=["workflow", "task", "outcome", "tokens"], orient="row"
    ).with_columns(pl.col("tokens").cast(pl.Int64))
    return frame if tasks else frame.drop("task")


def _pairs(frame: pl.DataFrame, seed: int = 0):
    comparison = compare(frame, ["workflow"], intervals="delta")
    return with_pairs(comparison, frame, seed=seed).pairs


def _two_groups(
    rng: random.Random,
    *,
    tasks: int,
    b_factor: float,
    spread: float,
    noise: float,
    pass_rate: float,
) -> pl.DataFrame:
    """Two workflows on the same tasks: task costs `spread`x apart (log-uniform), each
    attempt's tokens the task's cost times its own noise, B's times `b_factor`."""
    rows = []
    for task in range(tasks):
        base = 1_000 * spread ** rng.random()
        for workflow, factor in (("a", 1.0), ("b", b_factor)):
            tokens = round(base * factor * rng.lognormvariate(0.0, noise))
            outcome = "passed" if rng.random() < pass_rate else "failed"
            rows.append((workflow, f"t{task}", outcome, tokens))
    return _ledger(rows)


def test_the_same_distribution_is_within_noise_in_most_ledgers():
    rng = random.Random(7)
    verdicts = []
    for _ in range(40):
        pairs = _pairs(
            _two_groups(rng, tasks=60, b_factor=1.0, spread=20, noise=0.5, pass_rate=0.7)
        )
        (pair,) = pairs.keep
        assert pair.method == PAIRED
        verdicts.append(pair.verdict)
    # A 95% interval misses 1 in 20 null ledgers; allow for the sample of 40.
    assert verdicts.count("within_noise") >= 34, verdicts


def test_a_group_twice_as_costly_is_named_in_nearly_every_ledger():
    rng = random.Random(11)
    named = 0
    for _ in range(40):
        pairs = _pairs(
            _two_groups(rng, tasks=120, b_factor=2.0, spread=20, noise=0.5, pass_rate=0.7)
        )
        (pair,) = pairs.keep
        named += pair.a == "a" and pair.verdict == "a_cheaper"
    assert named >= 38


def test_pairing_by_task_finds_a_steady_15_percent_across_tasks_200x_apart():
    rng = random.Random(3)
    paired = unpaired = 0
    for _ in range(30):
        frame = _two_groups(rng, tasks=80, b_factor=1 / 0.85, spread=200, noise=0.05, pass_rate=1)
        (pair,) = _pairs(frame).keep
        assert pair.method == PAIRED
        paired += pair.verdict == "a_cheaper" and pair.a == "a"
        (loose,) = _pairs(frame.drop("task")).keep
        assert loose.method == UNPAIRED
        unpaired += loose.verdict == "a_cheaper"
    assert paired >= 29
    # Resampled apart, the spread between tasks drowns the difference.
    assert unpaired <= 10


def test_the_articles_fixture_is_within_noise_and_the_demo_is_decided():
    fixture = load([str(FIXTURE_PATH)]).attempts
    pairs = _pairs(fixture)
    (pair,) = pairs.keep
    assert (pair.a, pair.b, pair.verdict) == ("steady", "lean", "within_noise")
    assert (pair.method, pair.a_size, pair.b_size) == (UNPAIRED, 3, 3)
    assert pair.ratio == pytest.approx(1600 / 3000)
    demo = load([str(DEMO_PATH)]).attempts
    flip = _pairs(demo).between("keep", "steady-planner", "lean-loop")
    assert flip is not None
    assert (flip.a, flip.verdict, flip.method) == ("steady-planner", "a_cheaper", PAIRED)
    assert flip.high < 1


def test_the_same_seed_gives_the_same_pairs_and_another_seed_may_not():
    demo = load([str(DEMO_PATH)]).attempts
    assert _pairs(demo, seed=5) == _pairs(demo, seed=5)
    assert _pairs(demo, seed=5).keep != _pairs(demo, seed=6).keep


def test_past_the_cap_each_group_meets_the_cheapest_and_its_neighbours():
    count = ALL_PAIRS_UP_TO + 10
    rows = [
        (f"w{g:03}", f"t{t}", "passed", 1_000 + 10 * g + t) for g in range(count) for t in range(5)
    ]
    pairs = _pairs(_ledger(rows))
    assert pairs.capped and pairs.noise_ranks("keep") is None
    assert pairs.ranked["keep"] == count
    names = {(pair.a, pair.b) for pair in pairs.keep}
    assert ("w000", f"w{count - 1:03}") in names  # the cheapest against the dearest
    assert ("w010", "w013") in names and ("w010", "w014") not in names
    expected = (count - 1) + sum(min(NEIGHBOURS, count - 1 - i) for i in range(1, count))
    assert len(pairs.keep) == expected
    assert "of" in pairs.describe("keep")


def test_past_the_group_limit_only_the_cheapest_groups_are_compared(monkeypatch):
    from tui_ledger.accounting import pairs as pairs_module

    count, limit = ALL_PAIRS_UP_TO + 20, ALL_PAIRS_UP_TO + 5
    rows = [
        (f"w{g:03}", f"t{t}", "passed", 1_000 + 10 * g + t) for g in range(count) for t in range(5)
    ]
    unlimited = _pairs(_ledger(rows))
    monkeypatch.setattr(pairs_module, "GROUPS_UP_TO", limit)
    pairs = _pairs(_ledger(rows))
    named = {name for pair in pairs.keep for name in (pair.a, pair.b)}
    assert named == {f"w{g:03}" for g in range(limit)}
    assert pairs.ranked["keep"] == count
    assert f"the cheapest {limit:,} of {count:,} groups" in pairs.describe("keep")
    # the pairs among the groups kept are those drawn without the limit, verdicts and all
    kept = {(pair.a, pair.b): pair.verdict for pair in unlimited.keep if {pair.a, pair.b} <= named}
    assert {(pair.a, pair.b): pair.verdict for pair in pairs.keep} == kept


@pytest.mark.parametrize("budget", [0, 10**9])
def test_unpaired_draws_past_the_budget_come_from_the_normal_limit_and_agree(
    monkeypatch: pytest.MonkeyPatch, budget: int
) -> None:
    """Drawn one by one or from the normal limit (past `EXACT_BUDGET` values), unpaired
    verdicts are right at the same rates: a null pair within noise, a 2x one named."""
    from tui_ledger.accounting import pairs as pairs_module

    monkeypatch.setattr(pairs_module, "EXACT_BUDGET", budget)
    rng = random.Random(5)
    null = named = 0
    for _ in range(20):
        same = _two_groups(rng, tasks=150, b_factor=1.0, spread=3, noise=0.5, pass_rate=0.7)
        null += _pairs(same.drop("task")).keep[0].verdict == "within_noise"
        dear = _two_groups(rng, tasks=150, b_factor=2.0, spread=3, noise=0.5, pass_rate=0.7)
        (pair,) = _pairs(dear.drop("task")).keep
        named += pair.a == "a" and pair.verdict == "a_cheaper"
    assert null >= 17 and named >= 19, (null, named)


def test_groups_without_a_figure_are_not_compared():
    rows = [
        ("a", "t1", "passed", 100),
        ("a", "t2", "passed", 120),
        ("b", "t1", "failed", 90),
        ("c", "t1", "passed", None),
    ]
    frame = pl.DataFrame(rows, schema=["workflow", "task", "outcome", "tokens"], orient="row")
    pairs = _pairs(frame)
    assert pairs.keep == () and pairs.ranked["keep"] == 1


def test_noise_ranks_widen_only_where_pairs_are_within_noise():
    demo = load([str(DEMO_PATH)]).attempts
    pairs = _pairs(demo)
    ranks = pairs.noise_ranks("keep")
    assert ranks is not None
    for pair in pairs.keep:
        if pair.verdict == "a_cheaper":
            assert ranks[pair.a][0] < ranks[pair.b][1] or ranks[pair.a][1] < ranks[pair.b][0]
    assert ranks["steady-planner"] == (1, 1)


@given(
    low=st.floats(0, 3),
    width=st.floats(0, 3),
    a_bound=st.booleans(),
    b_bound=st.booleans(),
)
@settings(max_examples=200)
def test_the_bound_rule_comes_before_the_interval(low, width, a_bound, b_bound):
    high = low + width
    said = verdict(low, high, a_bound, b_bound)
    if said == "a_cheaper":
        assert high < 1 and not a_bound  # A's real figure could only be higher
    elif said == "b_cheaper":
        assert low > 1 and not b_bound
    elif said == "within_noise":
        assert low <= 1 <= high and not (a_bound or b_bound)
    else:
        assert a_bound or b_bound
    if not (a_bound or b_bound):
        assert said != "undecided"
