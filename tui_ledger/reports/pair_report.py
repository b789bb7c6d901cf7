"""The pairwise verdicts in words and in JSON: one wording for the summary, the callout, the
focus block and the checks (the verdicts themselves are `verdicts`, their draws `pairs`)."""

from __future__ import annotations

import math
from typing import Any

from tui_ledger.accounting.comparison import Comparison
from tui_ledger.accounting.verdicts import Pair
from tui_ledger.schema import VIEWS, View
from tui_ledger.text.textsafe import safe_label

_SHOWN = 5  # pairs a text summary lists per view before "and N more"


def ratio_text(pair: Pair) -> str:
    """`×0.65, 95% 0.48–0.85`: A's figure over B's and its interval (`∞` when unbounded)."""
    high = "∞" if math.isinf(pair.high) else f"{pair.high:.2f}"
    return f"×{pair.ratio:.2f}, 95% {pair.low:.2f}–{high}"


def sample_text(pair: Pair) -> str:
    """The sample behind a verdict: `30 tasks each`, `3 attempts a side`, `23 and 30 tasks`."""
    unit = pair.unit
    if pair.a_size == pair.b_size:
        noun = unit if pair.a_size == 1 else unit + "s"
        return f"{pair.a_size:,} {noun} {'each' if pair.unit == 'task' else 'a side'}"
    return f"{pair.a_size:,} and {pair.b_size:,} {unit}s"


def verdict_text(pair: Pair) -> str:
    """What the verdict says, in words."""
    if pair.verdict == "a_cheaper":
        return f"{safe_label(pair.a)} is cheaper"
    if pair.verdict == "b_cheaper":
        return f"{safe_label(pair.b)} is cheaper"
    if pair.verdict == "within_noise":
        return "within noise"
    return "undecided (a figure is a lower bound)"


def pair_line(pair: Pair) -> str:
    """One comparison: `steady vs lean: ×0.53, 95% 0.00–1.60, within noise (unpaired, by
    attempt; 3 attempts a side)`."""
    return (
        f"{safe_label(pair.a)} vs {safe_label(pair.b)}: {ratio_text(pair)}, "
        f"{verdict_text(pair)} ({pair.method}; {sample_text(pair)})"
    )


def shown_pairs(comparison: Comparison, view: View) -> list[Pair]:
    """The pairs a summary names: the view's cheapest against every other, then the flip's
    pair (the two groups the views call cheapest) when it is not among them."""
    pairs = comparison.pairs
    if pairs is None or not pairs.view(view):
        return []
    cheapest = pairs.view(view)[0].a
    chosen = [pair for pair in pairs.view(view) if cheapest in (pair.a, pair.b)]
    keep_best, drop_best = comparison.best("keep"), comparison.best("drop")
    if keep_best and drop_best and keep_best != drop_best:
        flip = pairs.between(view, keep_best, drop_best)
        if flip is not None and flip not in chosen:
            chosen.insert(0, flip)
    return chosen


def pair_lines(comparison: Comparison, view: View, title: str) -> list[str]:
    """The text summary's lines for one view's verdicts, under a heading that names the view
    by `title` (empty before pairs are drawn)."""
    pairs = comparison.pairs
    chosen = shown_pairs(comparison, view)
    if pairs is None or not chosen:
        return []
    lines = [pair_line(pair) for pair in chosen[:_SHOWN]]
    if len(chosen) > _SHOWN:
        lines.append(f"and {len(chosen) - _SHOWN:,} more (summary --format json lists them)")
    return [f"Cheaper, or noise? {title}: {pairs.describe(view)}", *lines]


def flip_noise(comparison: Comparison) -> Pair | None:
    """The keep view's comparison of the two groups a flip names, when its verdict does not
    decide it (within noise, or undecided): the flip is then not shown by this sample."""
    pairs = comparison.pairs
    keep_best, drop_best = comparison.best("keep"), comparison.best("drop")
    if pairs is None or keep_best is None or drop_best is None or keep_best == drop_best:
        return None
    pair = pairs.between("keep", keep_best, drop_best)
    return pair if pair is not None and not pair.decided else None


def cheapest_decided(comparison: Comparison, view: View = "keep") -> Pair | None:
    """The view's cheapest group against the second, when the sample does not decide it
    (the `--fail-on noise` condition). None when decided, or with under two groups."""
    pairs = comparison.pairs
    if pairs is None or not pairs.view(view):
        return None
    pair = pairs.view(view)[0]  # pairs come in figure order: the first is the two cheapest
    return None if pair.decided else pair


def _number(value: float) -> float | None:
    return None if math.isinf(value) or math.isnan(value) else value


def pairs_json(comparison: Comparison) -> dict[str, Any] | None:
    """`pairs` of the summary JSON: per view, every comparison drawn (null before they are)."""
    pairs = comparison.pairs
    if pairs is None:
        return None
    document: dict[str, Any] = {
        view: [
            {
                "a": pair.a,
                "b": pair.b,
                "ratio": _number(pair.ratio),
                # the high end is null when unbounded (some draws had no accepted attempt of A)
                "ratio_ci": [_number(pair.low), _number(pair.high)],
                "method": pair.method,
                "verdict": pair.verdict,
                "a_sample": pair.a_size,
                "b_sample": pair.b_size,
                "sample_unit": pair.unit,
            }
            for pair in pairs.view(view)
        ]
        for view in VIEWS
    }
    document["compared"] = {view: pairs.describe(view) for view in VIEWS}
    document["capped"] = pairs.capped
    return document


def noise_rank_columns(comparison: Comparison, view: View) -> dict[str, tuple[int, int]]:
    """Per group label, its rank range as the verdicts support it (`Pairs.noise_ranks`)."""
    pairs = comparison.pairs
    ranks = pairs.noise_ranks(view) if pairs is not None else None
    return ranks or {}
