"""polars' allocator, set up for the app and the command line before polars loads.

polars allocates with jemalloc, which by default keeps four arenas per core and hands each new
thread one of them in turn. Each arena holds on to the pages its threads freed for about a
second (polars' own decay settings) before it gives them back. The app starts a thread per
recompute and per follow-up, so a filter typed at a million rows spreads its garbage over many
arenas, each holding its share at once. One arena per core serves the same threads with
less held back: in a real terminal on the 1M-row benchmark ledger (2 cores), the app's peak
after a filter and its clearing was 276-288 MB with the default and 256-265 MB with this
(three runs each, alternating; benchmarks/README.md).
"""

from __future__ import annotations

import os
import sys

__all__ = ["ALLOCATOR_VARIABLE", "use_fewer_arenas"]

ALLOCATOR_VARIABLE = "_RJEM_MALLOC_CONF"  # polars appends it to its own settings


def use_fewer_arenas() -> None:
    """One jemalloc arena per core for the polars this process is about to load. Does nothing
    once polars is loaded (its allocator is set up by then), or when the user set the
    variable (theirs is kept as it is)."""
    if "polars" in sys.modules or ALLOCATOR_VARIABLE in os.environ:
        return
    os.environ[ALLOCATOR_VARIABLE] = f"narenas:{max(os.cpu_count() or 1, 1)}"
