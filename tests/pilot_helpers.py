"""What the Pilot tests of the app share: settling, pressing keys, reading the screen.

The app says when its screen is final (`LedgerApp.unsettled` is empty: the latest request is
loaded, recomputed, painted, with its intervals and checks). Tests wait for that, with a
generous deadline that fails naming what never arrived; no test decides that a screen is
settled by looking at it twice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot
from textual.worker import WorkerCancelled

SETTLE_SECONDS = 60.0
"""How long a test waits for the app before failing: generous, since a busy shared machine can
be slow; a test that waits this long has found a bug, not a slow machine."""


async def settle(pilot: Pilot[Any], *, seconds: float = SETTLE_SECONDS) -> None:
    """Wait until the app's screen shows the figures of the latest request, whole."""
    app = pilot.app
    deadline = time.monotonic() + seconds
    while True:
        await _workers_done(pilot)
        await pilot.pause()
        if app.return_code is not None:
            return
        waiting = getattr(app, "unsettled", ())
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise AssertionError(
                f"after {seconds:.0f} s the app still waits for: " + ", ".join(waiting)
            )


async def wait_until(
    pilot: Pilot[Any],
    condition: Callable[[], object],
    what: str,
    *,
    seconds: float = SETTLE_SECONDS,
) -> None:
    """Let the app run until `condition()` holds (then until it settles); fail naming `what`."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"after {seconds:.0f} s, still not: {what}")
        await pilot.pause()
        await _workers_done(pilot)
    await settle(pilot, seconds=seconds)


async def _workers_done(pilot: Pilot[Any]) -> None:
    """Wait for the app's workers to end. A worker the app cancelled (a newer request replaced
    it in its exclusive group) has ended too: Textual's `wait_for_complete` raises for it, which
    would fail a test for the app doing its job, depending on when the key arrived."""
    ended = await asyncio.gather(
        *(worker.wait() for worker in list(pilot.app.workers)), return_exceptions=True
    )
    for outcome in ended:
        if isinstance(outcome, BaseException) and not isinstance(outcome, WorkerCancelled):
            raise outcome


async def press(pilot: Pilot[Any], *keys: str) -> None:
    """Press keys, then let workers and the screen settle."""
    await pilot.press(*keys)
    await settle(pilot)


def record_toasts(app: Any) -> list[str]:
    """Every toast the app shows from now on, in order, kept for the test to read. A toast
    leaves the screen (and `App._notifications`) after its timeout, and a busy machine can take
    longer than that to reach the test's check: read what was said, not what is still shown."""
    said: list[str] = []
    notify = app.notify

    def recording(message: Any, *args: Any, **kwargs: Any) -> Any:
        said.append(str(message))
        return notify(message, *args, **kwargs)

    app.notify = recording
    return said


def screen_text(app: Any) -> str:
    """Every character on the active screen."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def failing_when_on(
    monkeypatch: Any, owner: Any, name: str, error: BaseException
) -> dict[str, bool]:
    """Replace `owner.name` with a wrapper that raises `error` while the returned switch's
    "on" is True, and calls the original otherwise (a fault made to order, mid-test)."""
    original = getattr(owner, name)
    switch = {"on": False}

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if switch["on"]:
            raise error
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return switch
