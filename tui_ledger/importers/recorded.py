"""What the importers share about what a harness recorded, and where.

- `priced`: one rule for a recorded cost. A cost of 0 beside tokens spent is a model the harness
  could not price (litellm's `cost_tracking: ignore_errors`, an unpriced provider): missing,
  never $0. A 0 stays 0 only when nothing was spent.
- `only_at_run_level`, `recorded_only_at_run_level`: the one sentence for attempts known only
  from a run-level record (a job's, a run's or an evaluation's own list), counted once each
  beside the attempts that have files: both begin "N attempts recorded only at run level", the
  first naming the record and the attempts, the second counting them per workflow.
- `listed`: a few names for a warning, the rest counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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

    "2 attempts recorded only at run level, in job-a/result.json (fix-git__X, fix-git__Y),
    with no record of their own: counted once each from it (...)".
    """
    which = f" ({listed(names)})" if names else ""
    own = "its" if count == 1 else "their"
    return (
        f"{counted(count, 'attempt')} recorded only at run level, in {record}{which}, with no "
        f"record of {own} own: counted once each from it (outcome as recorded, usage missing "
        "where it has none)"
    )


def recorded_only_at_run_level(
    counts: Mapping[str, int],
    totals: Mapping[str, int],
    *,
    missing: str = "no trial folder",
    counted_from: str = "its run's record",
    examples: Sequence[str] = (),
) -> tuple[str, ...]:
    """The warning every importer gives for attempts known only from a run- or job-level
    record (a run's list of its trials) with no per-attempt file of their own: how many, per
    workflow out of its attempts, and what they were counted from. Empty when there are none.

    `counts`: workflow -> attempts recorded only at run level; `totals`: workflow -> all its
    attempts. `missing` names the per-attempt record that is absent ("no trial folder", "no
    trajectory"); `counted_from` what the attempt was read from instead; `examples` names a
    few of them (their trial names), the first three said. For {"a": 4} of {"a": 400}: "4
    attempts recorded only at run level (no trial folder): a 4 of 400; each counted from its
    run's record".
    """
    counts = {name: count for name, count in counts.items() if count}
    if not counts:
        return ()
    per_workflow = ", ".join(
        f"{name} {count:,} of {totals.get(name, count):,}" for name, count in sorted(counts.items())
    )
    total = sum(counts.values())
    attempts = f"{total:,} attempt{'' if total == 1 else 's'}"
    named = f", e.g. {', '.join(examples[:3])}" if examples else ""
    return (
        f"{attempts} recorded only at run level ({missing}): {per_workflow}; "
        f"each counted from {counted_from}{named}",
    )


__all__ = ["NAMED", "listed", "only_at_run_level", "priced", "recorded_only_at_run_level"]
