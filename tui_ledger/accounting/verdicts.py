"""Pairwise verdicts: is one group really cheaper per accepted result than another, or noise?

`Pair` is one comparison in one view (the ratio of the two groups' tokens per accepted result,
its 95% interval and the verdict), `Pairs` every comparison of both views. `verdict` is the one
rule that turns an interval and the two figures' bounds into words (SPEC.md section 3, "Noise,
after bounds"). The draws that make the intervals are in `pairs`; this module is plain data,
so `comparison` can hold the verdicts without importing numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tui_ledger.schema import View

Verdict = Literal["a_cheaper", "b_cheaper", "within_noise", "undecided"]
VERDICTS: tuple[str, ...] = ("a_cheaper", "b_cheaper", "within_noise", "undecided")
PAIRED = "paired by task"
UNPAIRED = "unpaired, by attempt"


def verdict(low: float, high: float, a_lower_bound: bool, b_lower_bound: bool) -> Verdict:
    """The verdict on A against B from the 95% interval of A's figure over B's.

    The bound rule comes first: a figure that is only a lower bound (missing usage) can only
    grow, so the ratio can only move one way. A lower bound on A leaves only "B is cheaper"
    provable (A's real figure is higher still), one on B only "A is cheaper"; any other
    reading, and bounds on both, leave the order `undecided`. With exact figures the interval
    decides: below 1, A is cheaper; above 1, B is; holding 1, the difference is noise.
    """
    if high < 1.0 and not a_lower_bound:
        return "a_cheaper"
    if low > 1.0 and not b_lower_bound:
        return "b_cheaper"
    if a_lower_bound or b_lower_bound:
        return "undecided"
    return "within_noise"


@dataclass(frozen=True)
class Pair:
    """A against B in one view: `ratio` = A's tokens per accepted result over B's, its 95%
    interval (`low`, `high`; `high` may be inf when some draws have no accepted attempt of A),
    how it was drawn (`method`: `PAIRED` or `UNPAIRED`), the verdict, and the sample behind it
    (`a_size`, `b_size` tasks when paired, attempts when not). A is the group with the lower
    figure."""

    a: str
    b: str
    ratio: float
    low: float
    high: float
    method: str
    verdict: Verdict
    a_size: int
    b_size: int

    @property
    def decided(self) -> bool:
        return self.verdict in ("a_cheaper", "b_cheaper")

    @property
    def unit(self) -> str:
        return "task" if self.method == PAIRED else "attempt"

    def cheaper(self) -> str | None:
        """The group the sample shows cheaper, if the verdict names one."""
        if self.verdict == "a_cheaper":
            return self.a
        if self.verdict == "b_cheaper":
            return self.b
        return None


@dataclass(frozen=True)
class Pairs:
    """Every pairwise comparison of both views of one comparison.

    `ranked` is how many groups per view have a figure to compare (accepted attempts and
    recorded usage); `possible` how many pairs they make. Up to `all_up_to` groups every pair
    is compared; past it only each group against the view's cheapest and its `neighbours`
    next in order (`capped`), and the noise ranks are not given (they need every pair).
    """

    keep: tuple[Pair, ...]
    drop: tuple[Pair, ...]
    ranked: dict[View, int]
    possible: dict[View, int]
    capped: bool
    resamples: int
    seed: int
    group_limit: int | None = None  # per view, only the cheapest this many groups compared

    def view(self, view: View) -> tuple[Pair, ...]:
        return self.keep if view == "keep" else self.drop

    def between(self, view: View, first: str, second: str) -> Pair | None:
        """The comparison of two groups in a view, whichever of them is A."""
        for pair in self.view(view):
            if {pair.a, pair.b} == {first, second}:
                return pair
        return None

    def against_cheapest(self, view: View, label: str) -> Pair | None:
        """A group against the view's cheapest other group (the focus block's line)."""
        pairs = self.view(view)
        if not pairs:
            return None
        cheapest = pairs[0].a
        other = pairs[0].b if label == cheapest else cheapest
        return self.between(view, label, other) if other != label else None

    def noise_ranks(self, view: View) -> dict[str, tuple[int, int]] | None:
        """Each compared group's rank range as the verdicts support it: best = 1 + the groups
        decided cheaper than it, worst = the compared groups less those decided dearer.
        None when the pairs were capped (a rank needs every pair)."""
        if self.capped:
            return None
        pairs = self.view(view)
        names = list(dict.fromkeys(name for pair in pairs for name in (pair.a, pair.b)))
        cheaper = dict.fromkeys(names, 0)
        dearer = dict.fromkeys(names, 0)
        for pair in pairs:
            winner = pair.cheaper()
            if winner is None:
                continue
            loser = pair.b if winner == pair.a else pair.a
            cheaper[loser] += 1
            dearer[winner] += 1
        return {name: (1 + cheaper[name], len(names) - dearer[name]) for name in names}

    def describe(self, view: View) -> str:
        """One line for people: what was compared, and how."""
        pairs = self.view(view)
        how = f"{self.resamples:,} resamples, seed {self.seed}"
        if self.capped:
            ranked = self.ranked[view]
            limit = self.group_limit
            among = (
                f"the cheapest {limit:,} of {ranked:,} groups, each"
                if limit is not None and ranked > limit
                else "each group"
            )
            return (
                f"{len(pairs):,} of {self.possible[view]:,} pairs compared ({among} against "
                f"the cheapest and its nearest neighbours; {how})"
            )
        noun = "pair" if len(pairs) == 1 else "pairs"
        return f"{len(pairs):,} {noun} compared ({how})"
