"""Build `sample_data/demo.csv`, the synthetic ledger `ledger-tui` opens when given no file.

    python benchmarks/make_demo.py            # (re)write sample_data/demo.csv, print the check
    python benchmarks/make_demo.py --check    # fail if the committed file differs from a rebuild

Everything in the demo is invented: the workflows, the tasks, the models, the numbers. It is
built, with the standard library only and a fixed seed, to show what the ledger is for:

- 4 workflows x 30 tasks x 3 attempts = 360 attempts, on two models (`careful-reviewer` mixes
  both, for the fair-comparison check);
- every outcome appears: passed, failed, timeout, error, and ungraded (an empty status);
- some usage is missing (empty bucket cells), mostly on timeouts, as in the wild, and one
  attempt reports a suspect 0 tokens: both only in `retry-storm`, the most expensive workflow
  whatever the unknown usage was, so its figure is a lower bound (`>= N`) that decides its rank
  (last) and every other rank is exact: no rank is a range, in either view;
- **dropping failures flips the ranking, for certain and beyond noise**: `lean-loop` is the
  cheapest per attempt and fails most; it is the cheapest per accepted result when failures
  are dropped, and `steady-planner` is when they are kept, by at least 30%, with a paired
  bootstrap over tasks (SPEC.md section 3) whose 95% interval of their ratio stays clear of 1
  in both views. The script checks all this with plain Python (no polars, no project code) and
  refuses to write a demo that does not show it;
- a few `notes` cells hold what a hostile harness might write (markup, a formula, quotes and
  commas, non-ASCII), never a raw control byte;
- every attempt has a small synthetic ATIF trajectory (`demo_traces.py`), named by its `trace`
  cell, whose steps' tokens add up exactly to the row's;
- six of `lean-loop`'s accepted attempts game the grader in their steps (a `conftest.py` that
  skips the test, a `pytest.ini` or `setup.cfg` that deselects it, the fix looked up on other
  branches): `ledger-tui grader` flags them, and as vouched `lean-loop` falls from 2nd to 3rd
  when failures are kept (53,732 -> 67,165 per accepted result). Their rows are unchanged.

Tokens are `input_tokens + cached_input_tokens + output_tokens`; a row missing any bucket has
missing usage and counts in no sum (SPEC.md section 1); a row whose buckets are all 0 is the
suspect zero.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import random
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # demo_traces.py, demo_data.py
import demo_traces
from demo_data import HOSTILE_NOTES, TASKS

SEED = 20240611
DEMO_PATH = Path(__file__).resolve().parent.parent / "sample_data" / "demo.csv"
COLUMNS: tuple[str, ...] = (
    "workflow",
    "task",
    "model",
    "attempt",
    "status",
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "duration_s",
    "notes",
    "trace",
)
BUCKETS: tuple[str, ...] = ("input_tokens", "cached_input_tokens", "output_tokens")
ATTEMPTS = 3
TIME_LIMIT_S = 1800.0


@dataclass(frozen=True)
class Workflow:
    """How one invented workflow behaves in the demo."""

    name: str
    models: tuple[str, ...]
    """The model per task, cycled over task index (two entries: a mixed-model workflow)."""
    pass_rate: float
    median_tokens: float
    """Median tokens of a passing attempt."""
    sigma: float
    failure_multiplier: float
    """How much more a failed attempt costs than a passing one."""
    failure_weights: tuple[float, float, float]
    """Relative odds of failed, timeout, error among attempts that do not pass."""
    cached_share: float
    """Share of input tokens served from cache."""
    seconds_per_1k_tokens: float
    loses_usage: bool = False
    """Whether its harness sometimes fails to report usage (only the most expensive
    workflow's does, so no missing count can reorder the ranking: see `check`)."""


WORKFLOWS: tuple[Workflow, ...] = (
    Workflow("lean-loop", ("model-a",), 0.30, 17_000, 0.30, 1.1, (0.80, 0.12, 0.08), 0.35, 0.9),
    Workflow("steady-planner", ("model-b",), 0.90, 30_000, 0.25, 1.2, (0.5, 0.3, 0.2), 0.60, 0.8),
    Workflow(
        "retry-storm",
        ("model-a",),
        0.55,
        48_000,
        0.40,
        1.6,
        (0.45, 0.40, 0.15),
        0.50,
        1.1,
        loses_usage=True,
    ),
    Workflow(
        "careful-reviewer",
        ("model-b", "model-a"),
        0.75,
        36_000,
        0.30,
        1.3,
        (0.6, 0.2, 0.2),
        0.7,
        1.0,
    ),
)

# Ungraded attempts (empty status): the grader never ran. Keyed by (workflow, task, attempt).
UNGRADED: frozenset[tuple[str, int, int]] = frozenset(
    {
        ("lean-loop", 9, 3),
        ("steady-planner", 17, 2),
        ("retry-storm", 4, 3),
        ("careful-reviewer", 28, 1),
        ("retry-storm", 22, 2),
    }
)


# Suspect zeros: an attempt whose harness wrote 0 tokens because it did not meter the call
# (SPEC.md section 1). Placed, like missing usage, on a failing attempt of the workflow that
# is the most expensive whichever value the zero stands for. Keyed by (workflow, task, attempt).
SUSPECT_ZERO: frozenset[tuple[str, int, int]] = frozenset({("retry-storm", 11, 1)})

# The paired bootstrap over tasks that `check` runs on the flipped pair (SPEC.md section 3,
# "Noise, after bounds"): resamples, its own seed, and how far apart the pair must be kept.
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 7
APART = 1.3
# How far from 1 the pair's intervals must stay, so that another bootstrap (other draws, other
# resample counts) reaches the same verdict.
MARGIN = 0.1


def _status(rng: random.Random, workflow: Workflow, difficulty: float) -> str:
    """Draw an attempt's status from the workflow's pass rate and failure mix."""
    p_pass = min(max(workflow.pass_rate - difficulty, 0.03), 0.97)
    if rng.random() < p_pass:
        return "passed"
    return rng.choices(("failed", "timeout", "error"), weights=workflow.failure_weights)[0]


def _buckets(rng: random.Random, workflow: Workflow, total: int, status: str) -> list[str]:
    """The three bucket cells for an attempt of `total` tokens; empty cells mean missing usage.

    Timeouts usually lose their usage (the harness killed the agent before it reported):
    sometimes every bucket, sometimes only the output count. Errors sometimes do; a passing or
    failed attempt rarely does. Only a workflow that `loses_usage` loses any; the draws are
    made for every workflow all the same, so each workflow's figures depend on its own flag only.
    """
    output = round(total * rng.uniform(0.06, 0.12))
    cached = round((total - output) * workflow.cached_share * rng.uniform(0.85, 1.15))
    cached = min(cached, total - output)
    uncached = total - output - cached
    cells = [str(uncached), str(cached), str(output)]
    lose = {"timeout": 0.6, "error": 0.2}.get(status, 0.015)
    if rng.random() < lose:
        every_bucket = status == "timeout" and rng.random() < 0.6
        if not workflow.loses_usage:
            return cells
        if every_bucket:
            return ["", "", ""]
        cells[2] = ""
    return cells


def build_rows(seed: int = SEED) -> list[dict[str, str]]:
    """The demo's 360 rows, as CSV cells, in workflow, task, attempt order."""
    rng = random.Random(seed)
    difficulty = [rng.gauss(0.0, 0.12) for _ in TASKS]
    size = [math.exp(rng.gauss(0.0, 0.25)) for _ in TASKS]
    rows: list[dict[str, str]] = []
    for workflow in WORKFLOWS:
        for t, task in enumerate(TASKS):
            model = workflow.models[t % len(workflow.models)]
            for attempt in range(1, ATTEMPTS + 1):
                status = _status(rng, workflow, difficulty[t])
                multiplier = 1.0 if status == "passed" else workflow.failure_multiplier
                if status == "error":
                    multiplier *= 0.5  # errors die early
                total = round(
                    workflow.median_tokens
                    * size[t]
                    * multiplier
                    * math.exp(rng.gauss(0.0, workflow.sigma))
                )
                cells = _buckets(rng, workflow, total, status)
                if status == "timeout":
                    duration = TIME_LIMIT_S
                else:
                    seconds = total / 1000 * workflow.seconds_per_1k_tokens
                    duration = round(seconds * rng.uniform(0.8, 1.25) + 5.0, 1)
                key = (workflow.name, t + 1, attempt)
                if key in SUSPECT_ZERO:
                    cells = ["0", "0", "0"]
                if key in UNGRADED:
                    status = ""
                rows.append(
                    {
                        "workflow": workflow.name,
                        "task": task,
                        "model": model,
                        "attempt": str(attempt),
                        "status": status,
                        "input_tokens": cells[0],
                        "cached_input_tokens": cells[1],
                        "output_tokens": cells[2],
                        "duration_s": f"{duration:.1f}",
                        "notes": HOSTILE_NOTES.get(key, ""),
                    }
                )
    for row in rows:
        row["trace"] = demo_traces.trace_name(row)
    return rows


def render_csv(rows: list[dict[str, str]]) -> str:
    """The rows as CSV text (header first, `\\n` line ends, quoting only where needed)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


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


def main(argv: list[str] | None = None) -> int:
    """Rebuild the demo, check it, and write it (or, with --check, compare it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("-o", "--output", type=Path, default=DEMO_PATH)
    args = parser.parse_args(argv)
    rows = build_rows()
    try:
        report = check(rows)
    except DemoError as error:
        print(f"make_demo.py: {error}", file=sys.stderr)
        return 1
    print("\n".join(report))
    text = render_csv(rows)
    traces = demo_traces.trace_files(rows, SEED)
    folder = args.output.parent
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else None
        wrong = demo_traces.differences(folder, traces)
        if current != text or wrong:
            named = [str(args.output)] if current != text else []
            print(f"differs from a rebuild: {', '.join(named + wrong[:3])}", file=sys.stderr)
            return 1
        print(f"{args.output} and its {len(traces)} trajectories are up to date")
        return 0
    args.output.write_text(text, encoding="utf-8", newline="")
    demo_traces.write(folder, traces)
    print(f"wrote {args.output} ({len(rows)} rows) and {len(traces)} trajectories")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
