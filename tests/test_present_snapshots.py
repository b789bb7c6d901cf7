"""Snapshots of presenter mode's six steps at 80x24 on the article's six attempts (which have
no trajectories: the failure step says so in a line), and the failure step on the demo.

Update them after an intended change with
`pytest tests/test_present_snapshots.py --snapshot-update`, and look at the new SVGs first.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.pilot_helpers import settle
from tui_ledger.tui.presenter import PresenterScreen, PresentingApp
from tui_ledger.tui.screens.present_steps import STEPS, FailureStep

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the header reads `sample_data/runs.csv`


@pytest.mark.parametrize("step", range(len(STEPS)), ids=list(STEPS))
def test_step_at_80x24(snap_compare: object, step: int) -> None:
    async def at_step(pilot: Pilot) -> None:
        await settle(pilot)
        for _ in range(step):
            await pilot.press("right")
        await settle(pilot)

    app = PresentingApp(["sample_data/runs.csv"])
    assert snap_compare(app, terminal_size=(80, 24), run_before=at_step)  # type: ignore[operator]


def test_a_failure_step_by_step_on_the_demo_at_80x24(snap_compare: object) -> None:
    async def at_failure(pilot: Pilot) -> None:
        await settle(pilot)
        for _ in range(STEPS.index("failure")):
            await pilot.press("right")
        presenter = pilot.app.screen
        assert isinstance(presenter, PresenterScreen)
        await pilot.wait_for_scheduled_animations()
        for _ in range(200):  # the attempt is read in a worker: wait for it, not a clock
            if isinstance(presenter.failure, FailureStep):
                break
            await pilot.pause(0.05)
        await settle(pilot)

    app = PresentingApp(["sample_data/demo.csv"])
    assert snap_compare(app, terminal_size=(80, 24), run_before=at_failure)  # type: ignore[operator]
