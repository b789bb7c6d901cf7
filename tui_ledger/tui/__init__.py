"""The interactive app (Textual). `PROCESS_START` is the process's start on the
`time.perf_counter` clock, stamped when this package is first imported and moved back by the
process's age as Linux reports it (so imports before this one count too); the app's timings
(`LEDGER_TUI_TIMINGS`, see `tui_ledger.tui.app`) are seconds since it."""

from __future__ import annotations

import os
import time


def _process_age() -> float:
    """Seconds since this process started (0.0 where /proc or CLOCK_BOOTTIME is missing)."""
    try:
        with open(f"/proc/{os.getpid()}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime, in ticks
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


PROCESS_START: float = time.perf_counter() - _process_age()
"""The process's start on the `time.perf_counter` clock."""
