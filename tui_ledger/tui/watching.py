"""`--watch` for the app: a thread worker follows the files and hands each change to the app.

The app's pipeline adopts it with one call (`Pipeline.start_watching`, from `on_mount`):

```python
start_watching(app, app.paths, app.load_options, prepare=partial(price, prices=app.prices),
               on_change=self.watched, on_error=self.watch_failed)
```

`prepare(ledger)` runs in the watch thread on every new ledger (the pipeline prices the attempts
there, as its load worker does), `on_change(update)` runs on the app's thread with the result,
and `on_error(message)` with one line for people when a change could not be read (the app keeps
what it shows). The worker starts once the app's own first load has ended, loads the files once
more for itself (the watcher follows from the attempts as read, before any pricing), hands that
to the app (so the app holds one copy of the data, not two), then polls.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from textual.worker import get_current_worker

from tui_ledger.load import Ledger, LoadError
from tui_ledger.tui.host import Host
from tui_ledger.watching.watch import INTERVAL, Change, Watcher

__all__ = ["WatchUpdate", "start_watching"]

Prepared = TypeVar("Prepared")


@dataclass(frozen=True)
class WatchUpdate(Generic[Prepared]):
    """New attempts for the app: as loaded, as `prepare` made them, and what changed."""

    ledger: Ledger
    prepared: Prepared
    workflows: int
    seconds: float
    added: int
    reloaded: bool

    def describe(self) -> str:
        """E.g. "+2 attempts" or "reloaded: 1,204 attempts"."""
        return Change(self.ledger, self.added, self.reloaded).describe()


def start_watching(
    app: Host,
    paths: Sequence[str],
    load_options: Mapping[str, Any],
    *,
    prepare: Callable[[Ledger], Prepared],
    on_change: Callable[[WatchUpdate[Prepared]], None],
    on_error: Callable[[str], None],
    interval: float = INTERVAL,
    load_group: str = "load",
) -> Watcher:
    """Follow `paths` in a thread worker (group "watch") until the app exits.

    The worker waits for the app's workers in `load_group` (its first load) to finish, then
    loads for itself and polls every `interval` seconds. A first load that fails is not said
    again (the app has said it): the worker waits for the files to change.
    """
    watcher = Watcher.from_load_options(paths, load_options, interval=interval)

    def deliver(change: Change) -> None:
        if change.ledger is not None:
            prepared = prepare(change.ledger)
            workflows = int(change.ledger.attempts.get_column("workflow").n_unique())
            update = WatchUpdate(
                change.ledger, prepared, workflows, change.seconds, change.added, change.reloaded
            )
            app.call_from_thread(on_change, update)
        if change.error is not None:
            app.call_from_thread(on_error, change.error)

    def say_unless_unloaded(message: str) -> None:
        if getattr(app, "ledger", None) is not None:
            on_error(message)

    def follow() -> None:
        stop = get_current_worker().cancelled_event
        while any(worker.group == load_group and not worker.is_finished for worker in app.workers):
            if stop.wait(0.02):
                return
        try:
            started = time.perf_counter()
            try:
                ledger = watcher.load()
            except LoadError as error:
                # A first load that failed has been said by the app; one that worked has not
                # (asked on the app's thread: this one reads none of the app's state).
                app.call_from_thread(say_unless_unloaded, str(error))
            else:
                deliver(Change(ledger, reloaded=True, seconds=time.perf_counter() - started))
            for change in watcher.follow(stop):
                deliver(change)
        except Exception as error:
            if not app.is_running or stop.is_set():
                return  # the app has stopped: `call_from_thread` has nowhere to call
            # Never stop following silently: the screen would look live and not be.
            app.call_from_thread(on_error, f"stopped following the files ({error})")

    def begin() -> None:
        app.run_worker(
            follow, name="watch", group="watch", thread=True, exclusive=True, exit_on_error=False
        )

    # After the current handler returns: by then the app's first load worker exists.
    app.call_later(begin)
    return watcher
