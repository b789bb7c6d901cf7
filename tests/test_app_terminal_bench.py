"""The app shows the workflows and counts `summary --format json` gives for Terminal-Bench
folders (issue 40): a leaderboard root named alone, and its submissions named one by one
(tests/tb_layouts.py: the public leaderboard's nine layouts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.pilot_helpers import settle
from tests.tb_layouts import SUBMISSIONS, plain_count, write_board
from tests.test_importers_wiring import run
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.widgets.summary_pane import SummaryPane


def headless(paths: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[int, int]]:
    argv = ["summary", *paths, "--view", "keep", "--format", "json", "--intervals", "none"]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    return {name: (row["attempts"], row["accepted"]) for name, row in json.loads(out).items()}


async def on_screen(paths: list[str]) -> dict[str, tuple[int, int]]:
    """(attempts, accepted) per group as the app's summary table shows them, by full name."""
    app = LedgerApp(paths)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.query_one(SummaryPane)
        table = pane.groups_table
        keys = table.column_keys
        shown: dict[str, tuple[int, int]] = {}
        for row in range(table.row_count):
            cells = [cell.plain for cell in table.row_cells(row)]
            accepted, attempts = cells[keys.index("acc")].split("/")
            assert cells[keys.index("att")] == attempts
            shown[pane._labels[row]] = (int(attempts), int(accepted))
        return shown


@pytest.mark.parametrize("one_argument", [True, False], ids=["root", "one-by-one"])
async def test_the_app_shows_what_summary_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], one_argument: bool
) -> None:
    root = write_board(tmp_path / "terminal-bench-core@0.1.1")
    submissions = [root / name for name in sorted(SUBMISSIONS)]
    paths = [str(root)] if one_argument else [str(folder) for folder in submissions]
    expected = {folder.name: plain_count(folder) for folder in submissions}
    assert headless(paths, capsys) == expected
    assert await on_screen(paths) == expected
