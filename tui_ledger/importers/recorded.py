"""What the importers share about what a harness recorded, and where.

- `priced`: one rule for a recorded cost. A cost of 0 beside tokens spent is a model the harness
  could not price (litellm's `cost_tracking: ignore_errors`, an unpriced provider): missing,
  never $0. A 0 stays 0 only when nothing was spent.
- `only_at_run_level`: the sentence for attempts known only from a run-level record (a job's,
  a run's or an evaluation's own list), counted once each beside the attempts that have files.
- `listed`: a few names for a warning, the rest counted.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_ledger.importers._base import counted

# A warning names at most this many files or trials; the rest are counted.
NAMED = 8


def priced(cost: float | None, spent: int | None) -> float | None:
    """`cost` as recorded, or None for a 0 recorded beside `spent` > 0 tokens (or calls).

    `spent` None (tokens unknown) with a cost of 0 is missing too: a harness that counted
    nothing has not shown that nothing was spent.
    """
    if cost == 0 and spent != 0:
        return None
    return cost


def listed(names: Sequence[str]) -> str:
    """The first `NAMED` names, comma-separated, and how many more ("a, b, c and 4 more")."""
    shown = ", ".join(names[:NAMED])
    rest = len(names) - NAMED
    return f"{shown} and {rest} more" if rest > 0 else shown


def only_at_run_level(count: int, record: str, names: Sequence[str] = ()) -> str:
    """The warning for `count` attempts known only from `record` (what holds them).

    "2 attempts recorded only in job-a/result.json (fix-git__X, fix-git__Y), with no record
    of their own: counted once each from it (...)".
    """
    which = f" ({listed(names)})" if names else ""
    return (
        f"{counted(count, 'attempt')} recorded only in {record}{which}, with no record of "
        "their own: counted once each from it (outcome as recorded, usage missing "
        "where it has none)"
    )


__all__ = ["NAMED", "listed", "only_at_run_level", "priced"]
