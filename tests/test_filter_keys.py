"""The filter box's keys act in the order typed, however fast (issue 14, item 8).

Textual runs an Input's editing keys as bindings (ctrl+u, backspace) but inserts printable
characters as they arrive; typed in one burst, a binding must not act after characters
typed behind it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from tests.pilot_helpers import press, screen_text, settle
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.widgets.filter_bar import PLACEHOLDER, placeholder_for

RUNS = Path(__file__).resolve().parent.parent / "sample_data" / "runs.csv"
SIZE = (160, 45)

BURSTS = [
    [("ctrl+u", None), ("s", "s"), ("t", "t"), ("backspace", None), ("e", "e")],
    [("backspace", None), ("backspace", None), ("x", "x"), ("ctrl+u", None), ("l", "l")],
    [("ctrl+w", None), ("a", "a"), ("left", None), ("b", "b"), ("ctrl+k", None), ("c", "c")],
]


async def typed(keys: list[tuple[str, str | None]], *, fast: bool) -> str:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"lean")
        assert app.filter_input.value == "lean"
        for key, character in keys:
            if fast:
                app.post_message(events.Key(key, character))
            else:
                await press(pilot, key)
        await settle(pilot)
        return app.filter_input.value


@pytest.mark.parametrize("keys", BURSTS, ids=["ctrl+u", "backspace", "ctrl+w-ctrl+k"])
async def test_editing_keys_typed_fast_give_what_typed_slowly_gives(
    keys: list[tuple[str, str | None]],
) -> None:
    slow = await typed(keys, fast=False)
    fast = await typed(keys, fast=True)
    assert fast == slow


LONG = "tokens>100 -failed workflow:lean workflow:steady outcome:passed tokens<100000 lean"


async def test_a_filter_longer_than_its_box_stays_in_view() -> None:
    # The box is one line high: a horizontal scrollbar would take that line and hide the text.
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *LONG)
        box = app.filter_input
        assert box.virtual_size.width > box.region.width  # longer than the box: it scrolls
        widget, _ = app.screen.get_widget_at(box.region.x, box.region.y)
        assert widget is box
        assert LONG[-25:] in screen_text(app).splitlines()[box.region.y]  # the cursor's end
        await press(pilot, "home")
        assert LONG[:25] in screen_text(app).splitlines()[box.region.y]


def test_the_placeholder_keeps_whole_examples_that_fit() -> None:
    assert placeholder_for(200) == PLACEHOLDER
    assert placeholder_for(40) == "type to filter: lean  tokens>1000"
    assert placeholder_for(len("type to filter: lean") - 1) == "type to filter"
    assert placeholder_for(5) == ""


@pytest.mark.parametrize("width", [80, 120, 160])
async def test_the_empty_box_never_shows_an_example_cut_short(width: int) -> None:
    # Cut to the box, `lean` read "lea" beside the drop view's longer count: a filter typed.
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(pilot)
        for view in ("keep", "drop"):  # the drop view's count takes more of the line
            if view == "drop":
                await press(pilot, "t")
                await settle(pilot)
            box = app.filter_input
            assert box.placeholder == placeholder_for(box.size.width)
            assert box.placeholder.startswith("type to filter")
            line = next(line for line in screen_text(app).splitlines() if "filter ▸" in line)
            assert box.placeholder in line
