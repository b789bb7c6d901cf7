"""The filter box's keys act in the order typed, however fast (issue 14, item 8).

Textual runs an Input's editing keys as bindings (ctrl+u, backspace) but inserts printable
characters as they arrive; typed in one burst, a binding must not act after characters
typed behind it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from tests.pilot_helpers import press, settle
from tui_ledger.tui.app import LedgerApp

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
