"""Whether the ranking changes between accepted as graded and accepted as vouched: each group's
rank by tokens per accepted result (KEEP FAILURES, `ranking.rank_ranges`' honest ranges) in
both, and the groups whose rank moved, in words. No textual: the app's callout and the
presenter read it; `compare` computes both (one definition of every figure).

```python
from tui_ledger.grader.ranking_change import ranking_change

change = ranking_change(ledger.attempts, audit)   # by workflow, the whole ledger
change.moved        # [(label, graded rank, vouched rank)] of the groups that moved
change.sentence     # "Accepted as vouched, the ranking changes: quick 1 → 2, careful 2 → 1."
```
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from tui_ledger.accounting.ledger import DEFAULT_BY, compare
from tui_ledger.accounting.ranking import rank_text
from tui_ledger.grader.audit import Audit
from tui_ledger.text.textsafe import safe_text
from tui_ledger.text.wording import listing, plural

_NAMED = 3
"""Groups named in the sentence (the rest counted)."""


@dataclass(frozen=True)
class GroupChange:
    """One group's accepted attempts, tokens per accepted result (KEEP FAILURES) and rank, as
    graded and as vouched (None: no accepted result, or usage not recorded)."""

    label: str
    accepted: tuple[int, int]
    tokens_per_accepted: tuple[float | None, float | None]
    rank: tuple[str, str]


@dataclass(frozen=True)
class RankingChange:
    """The groups' ranks as graded and as vouched (`ranking_change`)."""

    by: tuple[str, ...]
    unvouched: int
    """Acceptances the grader cannot vouch for (failures as vouched)."""
    moved: tuple[tuple[str, str, str], ...]
    """(group label, rank as graded, rank as vouched) of each group whose rank moved."""
    leaders: tuple[str, str] = ("", "")
    """The first-ranked group as graded and as vouched ("" when none is first alone)."""
    groups: tuple[GroupChange, ...] = ()
    """Every group's figures both ways, in the graded ranking's order."""

    @property
    def changes(self) -> bool:
        """Whether any group's rank moved."""
        return bool(self.moved)

    @property
    def sentence(self) -> str:
        """The callout's sentence: what the vouched view changes in the ranking, or that it
        changes nothing."""
        if not self.unvouched:
            return "The grader vouches for every accepted result: graded and vouched agree."
        count = plural(self.unvouched, "acceptance")
        if not self.moved:
            return (
                f"Accepted as vouched ({count} the grader cannot vouch for), "
                "the ranking stays the same."
            )
        moves = [f"{label} {graded} → {vouched}" for label, graded, vouched in self.moved]
        return (
            f"Accepted as vouched ({count} the grader cannot vouch for), the ranking changes: "
            f"{listing(moves, limit=_NAMED, joiner='and')}."
        )


def ranking_change(
    attempts: pl.DataFrame, audit: Audit, by: Sequence[str] = DEFAULT_BY
) -> RankingChange:
    """The ranks of `attempts` (the audited frame) grouped `by`, as graded and as vouched."""
    keys = tuple(by)
    unvouched = len(audit.unvouched)
    if not unvouched:
        return RankingChange(keys, 0, ())
    graded = _figures(audit.apply(attempts, "graded"), keys)
    vouched = _figures(audit.apply(attempts, "vouched"), keys)
    groups = tuple(
        GroupChange(
            label,
            (before[1], vouched.get(label, before)[1]),
            (before[2], vouched.get(label, before)[2]),
            (before[0], vouched.get(label, before)[0]),
        )
        for label, before in sorted(graded.items(), key=lambda item: _order(item[1][0]))
    )
    moved = tuple((g.label, *g.rank) for g in groups if g.rank[0] != g.rank[1])
    leaders = (_leader(graded), _leader(vouched))
    return RankingChange(keys, unvouched, moved, leaders, groups)


def _figures(
    attempts: pl.DataFrame, by: tuple[str, ...]
) -> dict[str, tuple[str, int, float | None]]:
    """Each group's rank (as it reads), accepted attempts and tokens per accepted result."""
    comparison = compare(attempts, by, intervals="none")
    rows = comparison.keep.select(
        "rank_best", "rank_worst", "accepted", "tokens_per_accepted_result"
    ).iter_rows()
    return {
        safe_text(label): (rank_text(best, worst), int(accepted), value)
        for label, (best, worst, accepted, value) in zip(comparison.labels, rows, strict=True)
    }


def _order(rank: str) -> tuple[int, str]:
    first = rank.split("–", 1)[0]
    return (int(first), rank) if first.isdigit() else (sys.maxsize, rank)


def _leader(figures: dict[str, tuple[str, int, float | None]]) -> str:
    first = [label for label, (rank, _, _) in figures.items() if rank == "1"]
    return first[0] if len(first) == 1 else ""
