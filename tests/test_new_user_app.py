"""Issue 53's core half, seen in the app: `b` then `outcome` groups through the same core
path and the filter still works after; the `w` panel lists the one warnings list the commands
list; no group is ranked when none has a figure."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import SelectionList

from tests.pilot_helpers import press, screen_text, settle, wait_until
from tests.test_new_user_core import DEMO, _same_everywhere
from tui_ledger.accounting.checks import is_warning
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.widgets.summary_pane import SummaryPane


async def test_the_app_groups_by_outcome_and_then_still_filters() -> None:
    app = LedgerApp([str(DEMO)])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await press(pilot, "b")
        choices = app.screen.query_one(SelectionList)
        names = [choices.get_option_at_index(i).value for i in range(choices.option_count)]
        # workflow off, outcome on
        await press(pilot, *["down"] * names.index("workflow"), "space")
        await press(pilot, *["up"] * names.index("workflow"), *["down"] * names.index("outcome"))
        await press(pilot, "space", "enter")
        assert app.by == ("outcome",)
        table = app.query_one(SummaryPane).groups_table
        await wait_until(pilot, lambda: table.row_count == 5, "five outcome groups")
        await press(pilot, "slash", *"lean")
        await wait_until(
            pilot, lambda: app.table.row_count == 90, "the filter keeps lean-loop's 90 attempts"
        )


async def _app_warnings(path: Path) -> list[str]:
    app = LedgerApp([str(path)])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        kinds = [w.kind for w in app.collect_warnings() if is_warning(w)]
        assert app.warning_count() == len(kinds)
        return kinds


async def test_the_w_panel_lists_the_commands_warnings_on_the_demo(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await _app_warnings(DEMO) == _same_everywhere(capsys, DEMO)


async def test_the_w_panel_lists_the_commands_warnings_on_terminal_bench_logs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tests import real_shaped

    root = tmp_path / "runs"
    real_shaped.write_terminal_bench(root)
    assert await _app_warnings(root) == _same_everywhere(capsys, root)


async def test_the_app_ranks_no_group_when_none_has_a_figure() -> None:
    app = LedgerApp([str(DEMO)])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"failed")
        await wait_until(pilot, lambda: app.table.row_count == 89, "the 89 failed attempts")
        rows = [line for line in screen_text(app).splitlines() if "careful-reviewer" in line]
        # per accepted — and rank — (not 1): `— —` side by side in the groups table
        assert rows and "—  —" in rows[0], rows
