"""What `sample_data/demo.csv` promises, checked the plain way (no polars, no project code):
each workflow's figures in both views (SPEC.md section 3), the ranking and whether the bounds
decide every rank, and a paired bootstrap over tasks that puts the flip beyond noise.
`check` raises `DemoError` when the demo does not show it, and otherwise returns the report
make_demo.py prints."""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass

from demo_plan import ATTEMPTS, BUCKETS, TASKS, WORKFLOWS

# The paired bootstrap over tasks that `check` runs on the flipped pair (SPEC.md section 3,
# "Noise, after bounds"): resamples, its own seed, and how far apart the pair must be kept.
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 7
APART = 1.3
# How far from 1 the pair's intervals must stay, so that another bootstrap (other draws, other
# resample counts) reaches the same verdict.
MARGIN = 0.1


@dataclass(frozen=True)
class ViewFigures:
    """One workflow's figures in one view, computed the plain way (SPEC.md section 3)."""

    attempts: int
    accepted: int
    missing_usage: int
    zero_usage: int
    median_tokens_per_attempt: float | None
    total_tokens: int | None
    tokens_per_accepted_result: float | None

    @property
    def lower_bound(self) -> bool:
        """Whether tokens per accepted result is only a lower bound (missing usage or a 0)."""
        return bool(self.missing_usage or self.zero_usage)


def usage(row: dict[str, str]) -> int | None:
    """The row's tokens: the sum of its buckets, or None when any bucket is missing."""
    cells = [row[name] for name in BUCKETS]
    if any(cell == "" for cell in cells):
        return None
    return sum(int(cell) for cell in cells)


def figures(rows: list[dict[str, str]], workflow: str, *, keep: bool) -> ViewFigures:
    """A workflow's figures with failures kept (`keep`) or dropped (only accepted attempts)."""
    group = [r for r in rows if r["workflow"] == workflow and (keep or r["status"] == "passed")]
    accepted = sum(1 for r in group if r["status"] == "passed")
    known = [u for u in (usage(r) for r in group) if u is not None]
    total = sum(known) if known else (None if group else 0)
    per_accepted = total / accepted if accepted and total is not None else None
    return ViewFigures(
        attempts=len(group),
        accepted=accepted,
        missing_usage=len(group) - len(known),
        zero_usage=known.count(0),
        median_tokens_per_attempt=statistics.median(known) if known else None,
        total_tokens=total,
        tokens_per_accepted_result=per_accepted,
    )


def ranking(rows: list[dict[str, str]], *, keep: bool) -> list[str]:
    """Workflows from fewest to most tokens per accepted result (null last)."""
    names = [w.name for w in WORKFLOWS]

    def key(name: str) -> tuple[bool, float]:
        value = figures(rows, name, keep=keep).tokens_per_accepted_result
        return (value is None, value if value is not None else 0.0)

    return sorted(names, key=key)


def ranks_decided(rows: list[dict[str, str]], *, keep: bool) -> bool:
    """Whether the bounds decide every rank (SPEC.md section 3, honest ranking): each
    workflow's per-accepted figure is `[v, v]`, or `[v, inf)` when it is a lower bound, and no
    two of them overlap, so no missing usage or suspect 0 could reorder them."""
    spans = []
    for workflow in WORKFLOWS:
        found = figures(rows, workflow.name, keep=keep)
        value = found.tokens_per_accepted_result
        if value is None:
            return False
        spans.append((value, math.inf if found.lower_bound else value))
    return all(
        a_high < b_low or b_high < a_low
        for i, (a_low, a_high) in enumerate(spans)
        for b_low, b_high in spans[i + 1 :]
    )


def paired_ratio_interval(
    rows: list[dict[str, str]], a: str, b: str, *, keep: bool
) -> tuple[float, float]:
    """The 95% percentile interval of `a`'s tokens per accepted result over `b`'s, from a
    bootstrap over tasks: each resample draws tasks with replacement, every attempt of a drawn
    task comes along, and both workflows get the same draw (SPEC.md section 3)."""
    by_task: dict[tuple[str, str], tuple[int, int]] = {}
    for r in rows:
        if r["workflow"] in (a, b) and (keep or r["status"] == "passed"):
            tokens, accepted = by_task.get((r["workflow"], r["task"]), (0, 0))
            by_task[(r["workflow"], r["task"])] = (
                tokens + (usage(r) or 0),
                accepted + (r["status"] == "passed"),
            )
    rng = random.Random(BOOTSTRAP_SEED)
    ratios = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        drawn = rng.choices(TASKS, k=len(TASKS))
        sums = {}
        for name in (a, b):
            cells = [by_task.get((name, task), (0, 0)) for task in drawn]
            sums[name] = (sum(c[0] for c in cells), sum(c[1] for c in cells))
        if sums[a][1] and sums[b][1] and sums[b][0]:
            ratios.append((sums[a][0] / sums[a][1]) / (sums[b][0] / sums[b][1]))
    ratios.sort()
    return ratios[int(0.025 * len(ratios))], ratios[int(0.975 * len(ratios)) - 1]


class DemoError(Exception):
    """The demo does not show what it promises."""


def _require(condition: bool, message: object) -> None:
    """Raise `DemoError(message)` unless `condition` (unlike `assert`, survives `python -O`)."""
    if not condition:
        raise DemoError(str(message))


def check(rows: list[dict[str, str]]) -> list[str]:
    """Verify what the demo promises; return a printable report. Raises `DemoError`."""
    _require(
        len(rows) == len(WORKFLOWS) * len(TASKS) * ATTEMPTS,
        f"expected {len(WORKFLOWS) * len(TASKS) * ATTEMPTS} rows, built {len(rows)}",
    )
    statuses = {r["status"] for r in rows}
    _require(
        statuses == {"passed", "failed", "timeout", "error", ""},
        f"every outcome must appear; statuses: {sorted(statuses)}",
    )
    _require(
        {r["model"] for r in rows} == {"model-a", "model-b"},
        "the demo uses exactly model-a and model-b",
    )
    _require(
        any(len({r["model"] for r in rows if r["workflow"] == w.name}) == 2 for w in WORKFLOWS),
        "one workflow must mix both models",
    )
    missing = [r for r in rows if usage(r) is None]
    _require(bool(missing), "the demo must have missing usage")
    zeros = [r for r in rows if usage(r) == 0]
    _require(bool(zeros), "the demo must have a suspect zero")
    timeouts_missing = sum(1 for r in missing if r["status"] == "timeout")
    _require(timeouts_missing * 2 > len(missing), "missing usage should sit mostly on timeouts")
    _require(
        all(ch.isprintable() for r in rows for cell in r.values() for ch in cell),
        "no control characters in any cell",
    )

    keep = {w.name: figures(rows, w.name, keep=True) for w in WORKFLOWS}
    drop = {w.name: figures(rows, w.name, keep=False) for w in WORKFLOWS}
    lean = WORKFLOWS[0].name
    per_attempt = {n: f.median_tokens_per_attempt or math.inf for n, f in keep.items()}
    pass_rate = {n: f.accepted / f.attempts for n, f in keep.items()}
    _require(
        min(per_attempt, key=per_attempt.__getitem__) == lean,
        f"{lean} must be the cheapest per attempt: {per_attempt}",
    )
    _require(
        min(pass_rate, key=pass_rate.__getitem__) == lean,
        f"{lean} must fail most: {pass_rate}",
    )
    keep_rank, drop_rank = ranking(rows, keep=True), ranking(rows, keep=False)
    _require(drop_rank[0] == lean, f"{lean} must rank first with failures dropped: {drop_rank}")
    _require(keep_rank[0] != lean, f"{lean} must not rank first with failures kept: {keep_rank}")
    for view in (True, False):
        _require(
            ranks_decided(rows, keep=view),
            f"missing usage or a suspect 0 leaves a rank open with failures "
            f"{'kept' if view else 'dropped'}: place them only where they cannot reorder",
        )
    cheapest = keep_rank[0]
    keep_ratio = paired_ratio_interval(rows, lean, cheapest, keep=True)
    drop_ratio = paired_ratio_interval(rows, lean, cheapest, keep=False)
    point = keep[lean].tokens_per_accepted_result or 0.0
    _require(
        point >= APART * (keep[cheapest].tokens_per_accepted_result or math.inf),
        f"{lean} must cost at least {APART}x {cheapest} per accepted result with failures kept",
    )
    _require(
        keep_ratio[0] > 1.0 + MARGIN,
        f"the keep-view gap must be beyond noise: {lean}/{cheapest} 95% {keep_ratio}",
    )
    _require(
        drop_ratio[1] < 1.0 - MARGIN,
        f"the drop-view gap must be beyond noise: {lean}/{cheapest} 95% {drop_ratio}",
    )

    def fmt(value: float | None, missing: int) -> str:
        if value is None:
            return "null"
        return (">= " if missing else "") + f"{value:,.0f}"

    lines = [
        f"{'workflow':<18}{'pass':>6}{'median/attempt':>16}{'missing':>9}"
        f"{'keep per accepted':>20}{'drop per accepted':>20}{'trap':>7}"
    ]
    for name in keep:
        k, d = keep[name], drop[name]
        trap = (
            k.tokens_per_accepted_result / d.tokens_per_accepted_result
            if k.tokens_per_accepted_result and d.tokens_per_accepted_result
            else None
        )
        lines.append(
            f"{name:<18}{k.accepted:>3}/{k.attempts:<3}{per_attempt[name]:>15,.0f}"
            f"{k.missing_usage:>9}"
            f"{fmt(k.tokens_per_accepted_result, k.missing_usage):>20}"
            f"{fmt(d.tokens_per_accepted_result, d.missing_usage):>20}"
            f"{(f'{trap:.2f}' if trap else '-'):>7}"
        )
    lines.append(f"keep ranking: {' < '.join(keep_rank)}")
    lines.append(f"drop ranking: {' < '.join(drop_rank)}")
    lines.append(
        f"flip: {lean} is #1 when failures are dropped, "
        f"#{keep_rank.index(lean) + 1} when they are kept (#1 then: {keep_rank[0]})"
    )
    counts = {s or "(ungraded)": sum(1 for r in rows if r["status"] == s) for s in sorted(statuses)}
    lines.append(
        f"paired bootstrap over tasks, {lean}/{cheapest} per accepted result, 95%: "
        f"kept {keep_ratio[0]:.2f}-{keep_ratio[1]:.2f}, "
        f"dropped {drop_ratio[0]:.2f}-{drop_ratio[1]:.2f}"
    )
    lines.append(
        f"statuses: {counts}; missing usage: {len(missing)} ({timeouts_missing} timeouts); "
        f"suspect zeros: {len(zeros)}; every rank decided in both views"
    )
    return lines
