"""Seeded synthetic attempt ledgers of any size, for benchmarks and scale tests.

    python benchmarks/generate.py --rows 1000000 --seed 7 -o /tmp/ledger_1m.csv
    python benchmarks/generate.py --rows 10000000 -o /tmp/ledger_10m.parquet --buckets --status

Or from Python (with the repository root on ``sys.path``)::

    from benchmarks.generate import generate_ledger
    frame = generate_ledger(1_000_000, seed=7)

Everything is built with polars expressions over ``pl.int_range(rows)``: each random stream is
the row index hashed with its own seed and turned into a uniform in [0, 1). No Python loop runs
per row, so ten million rows take a few seconds. The same (rows, seed, options) give the same
ledger on the same polars version; polars does not promise its hash across versions, so a
frame is reproducible per version, not forever.

What the data looks like (all of it synthetic):

- each workflow has its own pass rate, median tokens per attempt, spread, and a multiplier for
  what a failed attempt costs over a passing one; the first two workflows are the article's
  archetypes (a cheap one that fails often, and a dearer one that nearly always passes), so
  their order by tokens per accepted result flips when failures are dropped;
- each task has a difficulty (moves the pass rate) and a size (moves the token count);
- one workflow mixes two models, for the fair-comparison checks;
- about 2% of attempts have missing usage (empty cells; timeouts far more often than the rest),
  about 0.3% report exactly 0 tokens, and about 0.5% are ungraded (empty ``passed``);
- with ``status=True`` the ``passed`` column gives way to a ``status`` column holding passed,
  failed, timeout, error and empty (ungraded);
- with ``buckets=True`` the ``tokens`` column gives way to input, cached input, cache write and
  output token buckets, which the loader sums; a row with missing usage has one of its bucket
  cells empty.

The default layout is ``workflow,task,tokens,passed,model``: about 52 bytes a row as CSV.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

__all__ = [
    "WorkflowProfile",
    "generate_ledger",
    "ledger_plan",
    "main",
    "workflow_profiles",
    "write_ledger",
]

# Names for the first workflows; further ones get a numbered suffix.
WORKFLOW_NAMES: tuple[str, ...] = (
    "lean-loop",
    "steady-planner",
    "retry-storm",
    "careful-reviewer",
    "tool-heavy-agent",
    "plan-then-patch",
    "one-shot-coder",
    "test-first-loop",
    "search-and-edit",
    "long-context-solver",
    "critic-in-the-loop",
    "minimal-scaffold",
)
MODELS: tuple[str, ...] = ("model-a", "model-b", "model-c")
# Task names read like issues in a handful of projects: `billing-issue-0042`.
TASK_PROJECTS: tuple[str, ...] = (
    "webapp",
    "billing",
    "parser",
    "auth",
    "search",
    "infra",
    "cli-tool",
    "docs-site",
)

MISSING_RATE = 0.02  # share of attempts with missing usage, overall
ZERO_RATE = 0.003  # share reporting exactly 0 tokens (the "suspect zero")
UNGRADED_RATE = 0.005  # share with no grade at all
# Among attempts that did not pass (and were graded): how they went wrong.
TIMEOUT_SHARE = 0.12
ERROR_SHARE = 0.06
# Missing usage per outcome, chosen so the overall share stays near MISSING_RATE while
# timeouts (the trap in the wild: the harness killed the agent before it reported) dominate.
MISSING_IF_TIMEOUT = 0.10

_U32 = 2**32
OUTPUT_SUFFIXES = frozenset({".csv", ".parquet", ".pq"})


@dataclass(frozen=True)
class WorkflowProfile:
    """How one synthetic workflow behaves."""

    name: str
    pass_rate: float
    """Pass probability on a task of average difficulty."""
    median_tokens: float
    """Median tokens of a passing attempt on a task of average size."""
    sigma: float
    """Spread of log(tokens) within the workflow."""
    failure_multiplier: float
    """How many times more a failed attempt costs than a passing one, on median."""
    model: str
    """The workflow's model."""
    second_model_share: float = 0.0
    """Share of attempts run on the next model in `MODELS` (a mixed-model workflow)."""
    cached_share: float = 0.5
    """Share of input tokens served from cache (bucket layout only)."""


def workflow_profiles(workflows: int, seed: int = 7) -> list[WorkflowProfile]:
    """The per-workflow parameters `generate_ledger` uses, drawn from `seed`.

    The first two are fixed archetypes (when there are at least two), the article's lean and
    steady scaled by 20 to be nearer real agent runs: `lean-loop` spends 20,000 tokens on a
    median attempt but passes about a third of the time, `steady-planner` spends 32,000 and
    passes about 90% of the time (95% before task difficulty). The rest are drawn from `seed`.
    """
    if workflows < 1:
        raise ValueError("workflows must be at least 1")
    rng = random.Random(seed)
    profiles: list[WorkflowProfile] = []
    for index in range(workflows):
        name = WORKFLOW_NAMES[index % len(WORKFLOW_NAMES)]
        if index >= len(WORKFLOW_NAMES):
            name = f"{name}-{index // len(WORKFLOW_NAMES) + 1}"
        if index == 0:
            profile = WorkflowProfile(name, 0.35, 20_000.0, 0.45, 1.1, MODELS[0], cached_share=0.3)
        elif index == 1:
            profile = WorkflowProfile(
                name, 0.95, 32_000.0, 0.35, 1.3, MODELS[1], second_model_share=0.3
            )
        else:
            profile = WorkflowProfile(
                name=name,
                pass_rate=rng.uniform(0.3, 0.9),
                median_tokens=math.exp(rng.uniform(math.log(8_000), math.log(120_000))),
                sigma=rng.uniform(0.35, 0.9),
                failure_multiplier=rng.uniform(1.1, 2.5),
                model=MODELS[index % len(MODELS)],
                cached_share=rng.uniform(0.2, 0.8),
            )
        profiles.append(profile)
    return profiles


def _hash(rows: int, seed: int, stream: int) -> pl.Expr:
    """64 pseudo-random bits per row: the row index hashed with a seed of the stream's own."""
    mixed = (seed * 0x9E3779B97F4A7C15 + stream * 0xBF58476D1CE4E5B9) % 2**63
    return pl.int_range(rows, dtype=pl.UInt64).hash(mixed)


def _low(bits: str) -> pl.Expr:
    """A uniform in [0, 1) from the low 32 bits of a hash column."""
    return (pl.col(bits) % _U32).cast(pl.Float64) / float(_U32)


def _high(bits: str) -> pl.Expr:
    """A uniform in [0, 1) from the high 32 bits of a hash column."""
    return (pl.col(bits) // _U32).cast(pl.Float64) / float(_U32)


def _normal(u1: pl.Expr, u2: pl.Expr) -> pl.Expr:
    """A standard normal from two uniforms (Box-Muller)."""
    return (-2.0 * (1.0 - u1).log()).sqrt() * (2.0 * math.pi * u2).cos()


def _lookup(values: Sequence[object], index: pl.Expr) -> pl.Expr:
    """`values[index]` per row, vectorised."""
    return pl.lit(pl.Series(values)).gather(index)


def ledger_plan(
    rows: int,
    seed: int = 7,
    *,
    workflows: int = 8,
    tasks: int = 500,
    buckets: bool = False,
    extra_columns: bool = True,
    status: bool = False,
) -> pl.LazyFrame:
    """The lazy query behind `generate_ledger` (same arguments), e.g. to sink to a file."""
    if rows < 0:
        raise ValueError("rows must be >= 0")
    if tasks < 0:
        raise ValueError("tasks must be >= 0")
    profiles = workflow_profiles(workflows, seed)
    n_tasks = max(tasks, 1)
    task_rng = random.Random(seed * 31 + 1)
    # Per task: difficulty shifts the pass rate, size scales the tokens.
    difficulty = [task_rng.gauss(0.0, 0.15) for _ in range(n_tasks)]
    size = [math.exp(task_rng.gauss(0.0, 0.35)) for _ in range(n_tasks)]

    # Five hashes give every random draw a row needs: two 32-bit halves each.
    bits = pl.LazyFrame().select(**{f"h{i}": _hash(rows, seed, i) for i in range(5)})
    frame = bits.select(
        wf=(pl.col("h0") % _U32 % workflows).cast(pl.UInt32),
        task_i=(pl.col("h0") // _U32 % n_tasks).cast(pl.UInt32),
        u_pass=_low("h1"),
        u_grade=_high("h1"),
        kind=_low("h2"),
        u_usage=_high("h2"),
        z=_normal(_low("h3"), _high("h3")),
        u_model=_low("h4"),
        u_lost=_high("h4"),
    )
    del bits
    wf = pl.col("wf")
    task = pl.col("task_i")
    p_pass = (_lookup([p.pass_rate for p in profiles], wf) - _lookup(difficulty, task)).clip(
        0.02, 0.98
    )
    frame = frame.select(
        "wf",
        "task_i",
        "kind",
        "u_usage",
        "u_model",
        "u_lost",
        passed=pl.when(pl.col("u_grade") < UNGRADED_RATE)
        .then(None)
        .otherwise(pl.col("u_pass") < p_pass),
        base=(
            _lookup([p.median_tokens for p in profiles], wf)
            * _lookup(size, task)
            * (_lookup([p.sigma for p in profiles], wf) * pl.col("z")).exp()
        ),
    )
    # 0 failed, 1 timeout, 2 error, for attempts that were graded and did not pass.
    failure_kind = (
        pl.when(pl.col("kind") < TIMEOUT_SHARE)
        .then(1)
        .when(pl.col("kind") < TIMEOUT_SHARE + ERROR_SHARE)
        .then(2)
        .otherwise(0)
    )
    not_passed = pl.col("passed").not_()
    is_timeout = not_passed & (failure_kind == 1)
    # Missing usage: timeouts at MISSING_IF_TIMEOUT, everyone else at the rate that keeps the
    # overall share near MISSING_RATE; zeros sit just above the missing band.
    other_missing = max(MISSING_RATE - 0.5 * TIMEOUT_SHARE * MISSING_IF_TIMEOUT, 0.0)
    missing_band = pl.when(is_timeout).then(MISSING_IF_TIMEOUT).otherwise(other_missing)
    missing = pl.col("u_usage") < missing_band
    zero = (pl.col("u_usage") >= missing_band) & (pl.col("u_usage") < missing_band + ZERO_RATE)
    # Failed attempts cost more (they ran until they gave up); timeouts most of all.
    multiplier = (
        pl.when(not_passed)
        .then(
            _lookup([p.failure_multiplier for p in profiles], pl.col("wf"))
            * pl.when(failure_kind == 1).then(1.6).when(failure_kind == 2).then(0.4).otherwise(1.0)
        )
        .otherwise(1.0)
    )
    total = (pl.col("base") * multiplier).round(0).cast(pl.Int64).clip(lower_bound=1)
    frame = frame.with_columns(
        total=pl.when(missing).then(None).when(zero).then(0).otherwise(total),
        missing=missing,
        failure_kind=failure_kind,
    )

    columns: list[pl.Expr] = [
        _lookup([p.name for p in profiles], pl.col("wf")).alias("workflow"),
    ]
    if tasks > 0:
        task_names = [
            f"{TASK_PROJECTS[i % len(TASK_PROJECTS)]}-issue-{i:04d}" for i in range(n_tasks)
        ]
        columns.append(_lookup(task_names, pl.col("task_i")).alias("task"))
    if buckets:
        columns.extend(_bucket_columns(profiles))
    else:
        columns.append(pl.col("total").alias("tokens"))
    if status:
        columns.append(
            pl.when(pl.col("passed").is_null())
            .then(None)
            .when(pl.col("passed"))
            .then(pl.lit("passed"))
            .otherwise(
                _lookup(["failed", "timeout", "error"], pl.col("failure_kind").cast(pl.UInt32))
            )
            .alias("status")
        )
    else:
        columns.append(pl.col("passed"))
    if extra_columns:
        first = _lookup([MODELS.index(p.model) for p in profiles], pl.col("wf"))
        share = _lookup([p.second_model_share for p in profiles], pl.col("wf"))
        index = (first + (pl.col("u_model") < share).cast(pl.Int64)) % len(MODELS)
        columns.append(_lookup(list(MODELS), index.cast(pl.UInt32)).alias("model"))
    return frame.select(columns)


def generate_ledger(
    rows: int,
    seed: int = 7,
    *,
    workflows: int = 8,
    tasks: int = 500,
    buckets: bool = False,
    extra_columns: bool = True,
    status: bool = False,
) -> pl.DataFrame:
    """A synthetic attempt ledger with `rows` rows, the same for the same arguments.

    Columns, in order: `workflow`, `task` (when `tasks` > 0), then `tokens` or, with
    `buckets`, `input_tokens, cached_input_tokens, cache_write_tokens, output_tokens`, then
    `passed` or, with `status`, `status`, then `model` (with `extra_columns`). Token columns
    are Int64 with null for missing usage; `passed` is Boolean with null for ungraded; `status`
    is String with null for ungraded (written as an empty cell). Row order is the row index.
    """
    plan = ledger_plan(
        rows,
        seed,
        workflows=workflows,
        tasks=tasks,
        buckets=buckets,
        extra_columns=extra_columns,
        status=status,
    )
    return plan.collect(engine="streaming")


def _bucket_columns(profiles: list[WorkflowProfile]) -> list[pl.Expr]:
    """Input, cached input, cache write and output buckets that add up to the row's total.

    A row with missing usage gets an empty cell in one bucket (which one varies) and plausible
    values in the others, as a harness that lost one counter would write.
    """
    total = pl.col("total")
    known = pl.col("base").round(0).cast(pl.Int64).clip(lower_bound=1)
    usage = pl.when(pl.col("missing")).then(known).otherwise(total)
    output = (usage * 0.08).round(0).cast(pl.Int64)
    cache_write = (usage * 0.02).round(0).cast(pl.Int64)
    cached_share = _lookup([p.cached_share for p in profiles], pl.col("wf"))
    cached = ((usage - output - cache_write) * cached_share).round(0).cast(pl.Int64)
    uncached = usage - output - cache_write - cached
    # Which bucket a row with missing usage lost: 0..3, uniformly.
    lost = (pl.col("u_lost") * 4.0).floor().cast(pl.Int64)
    named = (
        ("input_tokens", uncached),
        ("cached_input_tokens", cached),
        ("cache_write_tokens", cache_write),
        ("output_tokens", output),
    )
    return [
        pl.when(pl.col("missing") & (lost == i)).then(None).otherwise(expr).alias(name)
        for i, (name, expr) in enumerate(named)
    ]


def write_ledger(frame: pl.DataFrame, path: Path) -> None:
    """Write `frame` as CSV or Parquet, by the file's extension (`.csv` or `.parquet`)."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        frame.write_csv(path)
    elif suffix in {".parquet", ".pq"}:
        frame.write_parquet(path)
    else:
        raise ValueError(f"unknown output format {suffix!r}: use .csv or .parquet")


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Write a seeded synthetic attempt ledger (CSV or Parquet)."
    )
    parser.add_argument("--rows", type=int, default=1_000_000, help="attempts (default 1M)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument("--workflows", type=int, default=8, help="distinct workflows")
    parser.add_argument("--tasks", type=int, default=500, help="distinct tasks (0: no column)")
    parser.add_argument(
        "--buckets", action="store_true", help="token buckets instead of a tokens column"
    )
    parser.add_argument(
        "--status", action="store_true", help="a status column (5 outcomes) instead of passed"
    )
    parser.add_argument(
        "--no-extra-columns", action="store_true", help="leave out the model column"
    )
    parser.add_argument(
        "-o", "--output", type=Path, required=True, help="output file, .csv or .parquet"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; prints timings and size to stderr."""
    args = _parse_args(argv)
    if args.output.suffix.lower() not in OUTPUT_SUFFIXES:
        print(f"generate.py: {args.output}: use a .csv or .parquet file", file=sys.stderr)
        return 2
    start = time.perf_counter()
    plan = ledger_plan(
        args.rows,
        args.seed,
        workflows=args.workflows,
        tasks=args.tasks,
        buckets=args.buckets,
        extra_columns=not args.no_extra_columns,
        status=args.status,
    )
    if args.output.suffix.lower() == ".csv":
        # Streamed to the file in batches (the same bytes as `write_csv` of the collected
        # frame): a 100M-row ledger never has to fit in memory whole.
        plan.sink_csv(args.output)
        generated = start  # generated and written at once
        written = time.perf_counter()
    else:
        frame = plan.collect(engine="streaming")
        generated = time.perf_counter()
        write_ledger(frame, args.output)
        written = time.perf_counter()
    size = args.output.stat().st_size
    per_row = size / args.rows if args.rows else 0.0
    print(
        f"{args.rows:,} rows -> {args.output} ({size:,} bytes, {per_row:.1f} bytes/row): "
        f"generated in {generated - start:.2f}s, written in {written - generated:.2f}s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
