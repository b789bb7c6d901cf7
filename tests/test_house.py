"""The house rules that keep the code readable: no module past 600 lines (ARCHITECTURE.md), no
benchmark script past 500 (benchmarks/README.md: one module per figure, on a shared harness).
Import cycles, `TYPE_CHECKING` imports included, are lint-imports' (pyproject.toml)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tui_ledger"
MOST_LINES = 600
BENCHMARKS = PACKAGE.parent / "benchmarks"
MOST_BENCHMARK_LINES = 500


def test_no_module_is_past_600_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert long == {}, f"past {MOST_LINES} lines: {long} (split by what each part is about)"


def test_no_benchmark_script_is_past_500_lines() -> None:
    scripts = sorted(BENCHMARKS.glob("*.py"))
    assert len(scripts) > 1, f"no benchmark scripts under {BENCHMARKS}"
    long = {
        path.name: lines
        for path in scripts
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MOST_BENCHMARK_LINES
    }
    assert long == {}, f"past {MOST_BENCHMARK_LINES} lines: {long} (one module per figure)"


def test_type_checking_imports_count_for_cycles() -> None:
    text = (PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert "exclude_type_checking_imports = false" in text


MOST_TOP_MODULES = 10


def test_the_top_keeps_the_entry_points_and_the_few_modules_everything_uses() -> None:
    """The package's top holds at most ten modules beside its rooms (issue 44): a new module
    goes into the room of its concern, where the folders show the design."""
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= MOST_TOP_MODULES, f"{len(top)} modules at the top: {top}"


def test_the_rooms_are_layers() -> None:
    """lint-imports (run by .ci/run) keeps the rooms' layers; this keeps the contract there."""
    text = (PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert 'type = "layers"' in text
    for room in ("accounting", "filtering", "reports", "exports", "watching", "trajectory"):
        assert f'"tui_ledger.{room}"' in text, room
