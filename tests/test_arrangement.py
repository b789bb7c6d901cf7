"""The first screen says the trap at every size (issue 56, tui/arrangement.py): with no key
pressed it holds the view's name, each group with its rank and tokens per accepted result, and
the callout's sentence; below 100 columns the panes take turns (Tab)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.pilot_helpers import press, screen_text, settle
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.arrangement import callout_first, taking_turns

REPO = Path(__file__).resolve().parent.parent
SIZES = [(80, 24), (100, 30), (120, 40), (160, 45)]
IDS = [f"{w}x{h}" for w, h in SIZES]
DEMO_RANKS = {"careful-reviewer": 3, "lean-loop": 2, "retry-storm": 4, "steady-planner": 1}


def demo_app() -> LedgerApp:
    """The app as `ledger-tui` with no file opens it."""
    return LedgerApp(["sample_data/demo.csv"], demo=True)


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


def summary_text(app: LedgerApp) -> str:
    """What the screen shows of the summary pane, on one line (its borders, its scrollbar's
    thumb and line ends out, so a wrapped sentence reads as one)."""
    region = app.summary.region
    lines = screen_text(app).splitlines()[region.y : region.bottom]
    cut = [line[region.x : region.right].strip(" │╭╮╰╯─▁▂▃▄▅▆▇█") for line in lines]
    return re.sub(r"\s+", " ", " ".join(cut))


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_demos_first_screen_says_the_flip(size: tuple[int, int]) -> None:
    app = demo_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "KEEP FAILURES" in text
        for name, rank in DEMO_RANKS.items():  # whole, with its figure, trap factor and rank
            assert re.search(rf" {name}\s+(≥ )?[\d,]+\s+\S+\s+{rank}\s", text), (name, text)
        said = summary_text(app)
        assert "flips the ranking: lean-loop looks cheapest" in said, said
        assert "steady-planner is cheaper" in said, said


@pytest.mark.parametrize("size", SIZES, ids=IDS)
async def test_the_articles_six_rows_say_their_verdict_in_words(size: tuple[int, int]) -> None:
    app = LedgerApp(["sample_data/runs.csv"])
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        text = summary_text(app)
        assert "Dropping failures hides 2,000 tokens" in text
        assert "would flip the ranking" in text and "the flip is within noise" in text


async def test_below_100_columns_tab_gives_the_attempts_the_whole_width() -> None:
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not app.table.display and app.summary.groups_table.has_focus
        await press(pilot, "tab")
        assert app.table.has_focus and not app.summary.display
        text = screen_text(app)
        row = next(line for line in text.splitlines() if "12,499" in line)
        assert "lean-loop" in row and "✘ failed" in row, row  # outcome, workflow, tokens whole
        await press(pilot, "tab")  # the filter line keeps the attempts on screen
        assert app.filter_input.has_focus and app.table.display
        await press(pilot, "tab")
        assert app.summary.groups_table.has_focus and not app.table.display
        await press(pilot, "shift+tab")  # back to the filter line, the summary kept
        assert app.filter_input.has_focus and app.summary.display and not app.table.display
        await press(pilot, "shift+tab")
        assert app.table.has_focus and not app.summary.display
        # Wider again: both side by side, the focus where it was.
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert app.table.display and app.summary.display and app.table.has_focus


def test_the_sizes_where_the_layout_changes() -> None:
    assert taking_turns(99) and not taking_turns(100)
    assert callout_first(119, 45) and callout_first(160, 39) and callout_first(80, 24)
    assert not callout_first(120, 40) and not callout_first(160, 45)
