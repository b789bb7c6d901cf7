"""What the Pilot tests of the app share: settling, pressing keys, reading the screen."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot


async def settle(pilot: Pilot[Any]) -> None:
    """Wait for loading and any recompute to finish, then for the screen to catch up."""
    app = pilot.app
    for _ in range(200):
        await pilot.pause()
        await app.workers.wait_for_complete()
        if getattr(app, "loaded", False) or app.return_code is not None:
            break
    for _ in range(200):  # the recomputes and the checks, which start once a frame is drawn
        if not getattr(app, "busy", False) or app.return_code is not None:
            break
        await pilot.pause(0.01)
        await app.workers.wait_for_complete()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def press(pilot: Pilot[Any], *keys: str) -> None:
    """Press keys, then let workers and the screen settle."""
    await pilot.press(*keys)
    await settle(pilot)


def screen_text(app: Any) -> str:
    """Every character on the active screen."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def steady_screen_text(pilot: Pilot[Any], *, tries: int = 40) -> str:
    """The screen's text once two looks 50 ms apart agree: a DataTable sizes its columns a
    refresh after it is filled, so one look can catch the columns before that."""
    app = pilot.app
    last = screen_text(app)
    for _ in range(tries):
        await pilot.pause(0.05)
        await app.workers.wait_for_complete()
        now = screen_text(app)
        if now == last:
            return now
        last = now
    return last
