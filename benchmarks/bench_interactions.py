"""Figures 2 and 3 under Pilot: the app (`App.run_test(size=(160, 50))`), once loaded, in a
child process; each figure is key sent -> the first frame composed with the result (toggle,
filter keystrokes, group change; PageDown, the arrow, End, and the table's own cost per page),
median and p90, and the paging cost at the largest size against the smallest."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_harness import (
    SCREEN,
    child,
    median,
    report,
    rows_label,
    seconds_text,
    vm_hwm,
)
from bench_memory import section_memory
from bench_table import Bench, Figure

# (rows, median, p90) for a toggle, a filter keystroke, a group change; PageDown at any size.
INTERACTION = ((1_000_000, 0.050, 0.080), (10_000_000, 0.250, None), (100_000_000, 2.5, None))
PAGE_DOWN = (0.050, 0.080)


# "The same cost at any row count", allowing for a noisy shared machine.
PAGING_RATIO = 1.5


# --------------------------------------------------------------------------- 2./3. the Pilot child


class PaintProbe:
    """Notes when the screen is painted with a wanted state.

    Textual composes every update in `Screen._compositor_refresh` and hands it to
    `App._display` (which, headless, writes nothing). Wrapping that one method of the app
    instance tells when a frame was composed; `wait` arms a predicate on the app's state and
    returns the time of the first frame composed while it holds, so the figure is key -> the
    frame showing the result, without Pilot's own idle-waiting in it.
    """

    def __init__(self, app: Any) -> None:
        self._app = app
        self._original = app._display
        self._predicate: Callable[[], bool] | None = None
        self.painted_at: float | None = None
        self.frames = 0
        app._display = self._display

    def _display(self, screen: Any, renderable: Any) -> None:
        self._original(screen, renderable)
        if renderable is None:
            return
        self.frames += 1
        if self._predicate is not None and self._predicate():
            self.painted_at = time.perf_counter()
            self._predicate = None

    def arm(self, predicate: Callable[[], bool]) -> None:
        self.painted_at = None
        self._predicate = predicate

    async def wait(self, timeout: float = 300.0) -> float:
        deadline = time.perf_counter() + timeout
        while self.painted_at is None:
            if time.perf_counter() > deadline:
                self._predicate = None
                raise TimeoutError(f"no frame with the wanted state within {timeout} s")
            await asyncio.sleep(0.001)
        return self.painted_at


def _recorded(app: Any, since: int, name: str) -> Callable[[], bool]:
    """The app has recorded timing `name` (a recompute applied, a toggle shown) since `since`."""
    return lambda: any(entry == name for entry, _ in app.timings.history[since:])


async def _quiet(app: Any, pilot: Any) -> None:
    """Let the app finish everything (workers, messages, repaints) before the next key.

    A recompute overtaken by the next keystroke is cancelled by the app, which is not a
    failure: wait until no worker is running, however each one ended."""
    from textual.worker import WorkerState

    busy = (WorkerState.PENDING, WorkerState.RUNNING)
    while any(worker.state in busy for worker in app.workers):
        await asyncio.sleep(0.005)
    await pilot.pause()


async def _timed_key(
    app: Any, pilot: Any, probe: PaintProbe, key: str, done: Callable[[], bool]
) -> float:
    """Seconds from sending `key` to the first frame composed with `done()` true."""
    probe.arm(done)
    started = time.perf_counter()
    await pilot.press(key)
    painted = await probe.wait()
    await _quiet(app, pilot)
    return painted - started


async def _timed_update(app: Any, pilot: Any, probe: PaintProbe, key: str, name: str) -> float:
    return await _timed_key(app, pilot, probe, key, _recorded(app, len(app.timings.history), name))


async def _group_change(app: Any, pilot: Any, probe: PaintProbe, target: str) -> float:
    """`b`, tick `target` and untick the others in the dialog; time from Enter to the update."""
    await pilot.press("b")
    await pilot.pause()
    names = list(app.ledger.attempts.columns)
    current = set(app.by)
    position = 0
    for index, name in enumerate(names):
        if (name == target) != (name in current):
            await pilot.press(*(["down"] * (index - position)))
            position = index
            await pilot.press("space")
    await pilot.pause()
    elapsed = await _timed_update(app, pilot, probe, "enter", "recompute")
    if tuple(app.by) != (target,):
        raise RuntimeError(f"group change to {target} left the app grouped by {app.by}")
    return elapsed


async def _type(app: Any, pilot: Any, text: str) -> None:
    """Type into the focused filter box and wait for the recompute of the whole text."""
    since = len(app.timings.history)
    await pilot.press(*text)
    while not _recorded(app, since, "recompute")() or app.filter_text != app.filter_input.value:
        await asyncio.sleep(0.005)
    await _quiet(app, pilot)


async def _interact(path: str, reps: int, pages: int) -> dict[str, Any]:
    from tui_ledger.tui.app import LedgerApp

    result: dict[str, Any] = {}
    # As `ledger-tui FILE` starts it (cli.py): a file small enough is read beside the app's
    # start (load/early.py), not head first.
    from tui_ledger.load.early import EarlyLoad, worth_reading_early

    early = EarlyLoad([path], {}) if worth_reading_early([path]) else None
    result["early_load"] = early is not None
    app = LedgerApp([path], early=early)
    # The loaded frame's size, as the app first gets it: the memory target's yardstick (the app
    # later swaps in a compact copy of large frames, whose size is reported beside it).
    loaded_sizes: list[int] = []
    adopt = app.pipeline.loaded

    def loaded(message: Any, **options: Any) -> None:
        if not message.head:  # the file's first rows, shown while the whole is read
            loaded_sizes.append(message.ledger.attempts.estimated_size())
        adopt(message, **options)

    app.pipeline.loaded = loaded  # type: ignore[method-assign]
    started = time.perf_counter()
    async with app.run_test(size=SCREEN) as pilot:
        probe = PaintProbe(app)
        while not app.loaded or app.pipeline.partial is not None:
            await asyncio.sleep(0.005)
            if time.perf_counter() - started > 600:
                raise TimeoutError("the app did not load in 600 s")
        await _quiet(app, pilot)
        result["loaded_in_pilot"] = time.perf_counter() - started
        result["app_timings"] = {
            "load": app.timings.load,
            "first_screen": app.timings.first_screen,
            "recompute": app.timings.recompute,
        }
        assert app.ledger is not None
        attempts = app.ledger.attempts
        result["rows"] = attempts.height
        result["columns"] = list(attempts.columns)
        result["estimated_size"] = loaded_sizes[0]
        result["compact_size"] = attempts.estimated_size()
        result["hwm_after_load"] = vm_hwm(os.getpid())[0]
        phases: dict[str, tuple[int, int]] = {"load": vm_hwm(os.getpid())}
        result["memory_by_phase"] = phases  # (VmHWM, VmRSS) after each phase

        # Paging and scrolling (3.) first, on the freshly loaded app (before the filters churn
        # gigabytes through the allocator): each key to the frame showing the moved cursor.
        table = app.table
        table.focus()
        await pilot.pause()

        async def move(key: str) -> float:
            before = (table.cursor_row, table.scroll_offset.y)
            return await _timed_key(
                app, pilot, probe, key, lambda: (table.cursor_row, table.scroll_offset.y) != before
            )

        result["page_down"] = [await move("pagedown") for _ in range(pages)]
        result["scroll_down"] = [await move("down") for _ in range(pages)]
        result["end"] = [await move("end")]
        result["page_up"] = [await move("pageup") for _ in range(pages)]
        result["home"] = [await move("home")]
        # The table's own cost per page: the action and every visible line, called directly.
        direct = []
        for _ in range(pages):
            t = time.perf_counter()
            table.action_page_down()
            for y in range(table.size.height):
                table.render_line(y)
            direct.append(time.perf_counter() - t)
        result["page_direct"] = direct
        result["cursor_row"] = table.cursor_row
        result["frames"] = probe.frames
        phases["paging"] = vm_hwm(os.getpid())
        await pilot.press("home")
        await _quiet(app, pilot)

        # The view toggle (no recompute by design).
        result["toggle"] = [
            await _timed_update(app, pilot, probe, "t", "toggle") for _ in range(reps)
        ]
        if app.view != "keep":
            await _timed_update(app, pilot, probe, "t", "toggle")
        phases["toggle"] = vm_hwm(os.getpid())

        # Filter keystrokes, one key at a time: a number term, then a bare word.
        await pilot.press("slash")
        await _type(app, pilot, "tokens>2000")
        result["filter_number"] = [
            await _timed_update(app, pilot, probe, "0" if i % 2 == 0 else "backspace", "recompute")
            for i in range(reps)
        ]
        result["filter_number_rows"] = app.table.row_count
        phases["filter_number"] = vm_hwm(os.getpid())
        await pilot.press(*["backspace"] * len(app.filter_input.value))
        await _type(app, pilot, "lea")
        result["filter_word"] = [
            await _timed_update(app, pilot, probe, "n" if i % 2 == 0 else "backspace", "recompute")
            for i in range(reps)
        ]
        phases["filter_word"] = vm_hwm(os.getpid())
        await pilot.press(*["backspace"] * len(app.filter_input.value))
        while app.filter_text or (
            app.comparison is not None and app.table.row_count != attempts.height
        ):
            await asyncio.sleep(0.005)
        await _quiet(app, pilot)
        app.table.focus()
        await pilot.pause()

        # Group changes through the dialog: workflow <-> model.
        result["group_change"] = [
            await _group_change(app, pilot, probe, "model" if i % 2 == 0 else "workflow")
            for i in range(reps)
        ]
        if tuple(app.by) != ("workflow",):
            await _group_change(app, pilot, probe, "workflow")
        phases["group_change"] = vm_hwm(os.getpid())

        result["hwm_end"] = vm_hwm(os.getpid())[0]
    return result


def child_interact(path: str, reps: int, pages: int) -> None:
    # As `ledger-tui` runs the app: polars' allocator set up before polars loads.
    from tui_ledger.allocator import use_fewer_arenas

    if "polars" in sys.modules:
        raise RuntimeError("polars was loaded before the app's allocator settings")
    use_fewer_arenas()
    report(asyncio.run(_interact(path, reps, pages)))


# --------------------------------------------------------------------------- the figures


def interaction_target(rows: int) -> float | None:
    return next((limit for most, limit, _ in INTERACTION if rows <= most), None)


def interaction_p90_target(rows: int) -> float | None:
    return next((limit for most, _, limit in INTERACTION if rows <= most), None)


def section_interactions(bench: Bench, rows: int, path: Path) -> None:
    label = rows_label(rows)
    data, run = child(
        "interact", str(path), str(bench.args.reps), str(bench.args.pages), timeout=1800
    )
    data["max_rss"] = run.max_rss
    data["wall"] = run.seconds
    bench.raw.setdefault("interactions", {})[label] = data
    limit, limit_p90 = interaction_target(rows), interaction_p90_target(rows)
    section = "2 interaction"
    for key, name in (
        ("toggle", "t: toggle KEEP/DROP → table+summary"),
        ("filter_number", "filter key `tokens>2000`±`0` → updated"),
        ("filter_word", "filter key `lea`±`n` → updated"),
        ("group_change", "group change workflow↔model (Enter) → updated"),
    ):
        bench.add(Figure.timed(section, label, name, data[key], limit, p90_limit=limit_p90))
    section = "3 paging"
    bench.add(
        Figure.timed(
            section,
            label,
            "PageDown through Pilot",
            data["page_down"],
            PAGE_DOWN[0],
            p90_limit=PAGE_DOWN[1],
        )
    )
    bench.add(Figure.timed(section, label, "↓ one row through Pilot", data["scroll_down"]))
    bench.add(
        Figure.timed(section, label, "End (last row) through Pilot", data["end"], use_p90=False)
    )
    bench.add(
        Figure.timed(section, label, "page: action + render_line × screen", data["page_direct"])
    )
    section_memory(bench, rows, path, data, run.max_rss)


def section_paging_ratio(bench: Bench) -> None:
    runs = bench.raw.get("interactions", {})
    if len(runs) < 2:
        return
    ordered = sorted(runs.items(), key=lambda item: item[1]["rows"])
    (small, first), (large, last) = ordered[0], ordered[-1]
    for key, name in (
        ("page_down", "PageDown (Pilot)"),
        ("page_direct", "page (direct)"),
        ("scroll_down", "↓ one row (Pilot)"),
    ):
        ratio = median(last[key]) / median(first[key])
        bench.add(
            Figure(
                "3 paging",
                f"{large}/{small}",
                f"{name}: cost at {large} ÷ cost at {small}",
                f"{ratio:.2f}×",
                f"{seconds_text(median(last[key]))} vs {seconds_text(median(first[key]))}",
                f"≤ {PAGING_RATIO}×",
                "PASS" if ratio <= PAGING_RATIO else "MISS",
            )
        )
