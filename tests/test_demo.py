"""The bundled demo (`ledger-tui` with no file) decides what it shows: the ranking flips for
certain, who moved is named, and no rank is a range, because its missing usage and its
suspect 0 sit only in the workflow that is the most expensive whatever they stand for."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tui_ledger.cli import main
from tui_ledger.cli_options import demo_path

GENERATOR = Path(__file__).resolve().parent.parent / "benchmarks" / "make_demo.py"


def summary(capsys: pytest.CaptureFixture[str], *options: str) -> str:
    """`ledger-tui summary <the bundled demo> OPTIONS`: its stdout (it must succeed)."""
    code = main(["summary", str(demo_path()), *options])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def document(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return json.loads(summary(capsys, "--format", "json", "--intervals", "none"))  # type: ignore[no-any-return]


def generator() -> ModuleType:
    """benchmarks/make_demo.py, imported by path (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location("make_demo", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up by name
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


def test_the_demo_callout_says_the_ranking_flips_and_who_moved(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = " ".join(summary(capsys, "--intervals", "none").split())
    assert (
        "Dropping failures hides at least 4,805,132 tokens in 136 attempts and flips the "
        "ranking: lean-loop looks cheapest (17,687 per accepted result) but steady-planner is "
        "cheaper (35,033 vs 53,732 when failures are kept)."
    ) in text
    assert "undecided" not in text
    found = document(capsys)
    assert found["ranking_flips"] is True and found["ranking_undecided"] is None
    moves = {move["group"]: move for move in found["moves"]}
    assert set(moves) == {"lean-loop", "steady-planner"}
    assert all(move["certain"] for move in moves.values())
    assert (moves["lean-loop"]["keep_rank"], moves["lean-loop"]["drop_rank"]) == (2, 1)
    assert (moves["steady-planner"]["keep_rank"], moves["steady-planner"]["drop_rank"]) == (1, 2)


def test_no_rank_in_the_demo_is_a_range_yet_it_keeps_a_lower_bound(
    capsys: pytest.CaptureFixture[str],
) -> None:
    views = document(capsys)["views"]
    for view in ("keep", "drop"):
        rows = views[view]
        assert len(rows) == 4
        for name, row in rows.items():
            assert row["rank_best"] == row["rank_worst"] == row["rank"], (view, name)
        assert sorted(row["rank"] for row in rows.values()) == [1, 2, 3, 4]
    # What the demo has always shown stays: missing usage, a suspect 0, a lower bound, last.
    storm = views["keep"]["retry-storm"]
    assert storm["missing_usage"] == 10 and storm["rank"] == 4
    text = summary(capsys, "--view", "keep", "--intervals", "none")
    assert "≥ 94,762" in text
    assert "1 attempt reporting exactly 0 tokens" in text


def test_the_demo_is_what_its_generator_writes_and_checks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_demo = generator()
    assert make_demo.DEMO_PATH.read_text(encoding="utf-8") == demo_path().read_text(
        encoding="utf-8"
    )
    assert make_demo.main(["--check"]) == 0
    report = capsys.readouterr().out
    assert "every rank decided in both views" in report


def test_the_generator_refuses_a_demo_whose_ranks_the_bounds_leave_open() -> None:
    make_demo = generator()
    rows = make_demo.build_rows()
    # Usage lost by the cheapest workflow kept: its figure becomes a lower bound that
    # overlaps every costlier workflow's, so its rank is a range.
    row = next(r for r in rows if r["workflow"] == "steady-planner" and r["status"] == "failed")
    row["output_tokens"] = ""
    with pytest.raises(make_demo.DemoError, match="leaves a rank open"):
        make_demo.check(rows)
