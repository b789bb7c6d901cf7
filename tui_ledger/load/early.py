"""`load()` of the app's files started in a thread before the interface is imported.

`ledger-tui FILE` spends about 0.4 s importing Textual and laying out its first frame; a file of
up to `EARLY_LOAD_BYTES` is read whole in about that time (a million rows, 52 MB: 0.15-0.2 s on
the 2-core benchmark machine). So the command line starts reading such a file at once
(`EarlyLoad`), and the app, once up, takes the ledger from it: read beside the start-up, its
first frame can show the final figures instead of the file's first records and a progress
line. A larger file is read as before, after the first frame, its first records first (the
whole read and the head's drawing would both need polars' one thread pool).

Nothing here imports Textual; `load` is called exactly as the app's load worker calls it, so
what comes out, or the `LoadError` raised, is the same.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from tui_ledger.load import Ledger, load

# A file (or files, in all) of up to this many bytes is read while the interface starts: about
# 2.5 million rows of the benchmark's ledger, 0.5 s of reading, so that it is done, or nearly,
# when the first frame is laid out.
EARLY_LOAD_BYTES = 128 * 1024 * 1024


def worth_reading_early(paths: Sequence[str]) -> bool:
    """Whether `paths` are regular files, `EARLY_LOAD_BYTES` or fewer in all."""
    total = 0
    for path in paths:
        try:
            if not os.path.isfile(path):
                return False
            total += os.path.getsize(path)
        except OSError:
            return False
    return total <= EARLY_LOAD_BYTES


class EarlyLoad:
    """`load(paths, **options)` running in a daemon thread from construction on."""

    def __init__(self, paths: Sequence[str], options: Mapping[str, Any]) -> None:
        self.seconds = 0.0
        """How long the load took (set when it is done)."""
        self._done = threading.Event()
        self._ledger: Ledger | None = None
        self._error: Exception | None = None
        # The options as the app passes them to `load` (`LedgerShell.load_options`).
        options = {key: value for key, value in options.items() if value is not None}
        thread = threading.Thread(
            target=self._run, args=(list(paths), options), name="ledger-tui-load", daemon=True
        )
        thread.start()

    def _run(self, paths: list[str], options: dict[str, Any]) -> None:
        started = time.perf_counter()
        try:
            self._ledger = load(paths, **options)
        except Exception as error:  # raised again, unchanged, by `result`
            self._error = error
        finally:
            self.seconds = time.perf_counter() - started
            self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait at most `timeout` seconds (None: until done); whether the load is done."""
        return self._done.wait(timeout)

    def result(self) -> Ledger:
        """The loaded ledger, once done; raises what `load` raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._ledger is not None
        return self._ledger
