"""Figure 2 without any UI, in its own process: `load()`, `compare()` of every attempt,
`compact_text`, then parse + filter + compare as the app's recompute does it, by workflow for
three filters and by `model` and `task`; polars' own read and group-by alternate with them
(`raw_summary`, which the floor and the bounded probes use too)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench_harness import child, report, rows_label
from bench_interactions import interaction_target
from bench_table import Bench, Figure

CORE_FILTERS = ("tokens>20000", "lean", "-failed model:model-a")


def child_core(path: str, reps: int, repeat: int) -> None:
    """The core alone: load, and filter parse + filter + compare; raw polars beside it."""
    import polars as pl

    from tui_ledger.accounting.compact import compact_text
    from tui_ledger.accounting.ledger import compare
    from tui_ledger.filtering.query import parse_filter
    from tui_ledger.load import load

    result: dict[str, Any] = {
        "load": [],
        "compact": [],
        "compare_all": [],
        "raw_read": [],
        "raw_group_by": [],
    }
    ledger = None
    for _ in range(repeat):
        # Side by side, alternating: ledger-tui's load + compare, then polars' read + group_by.
        ledger = None
        t = time.perf_counter()
        ledger = load(path)
        result["load"].append(time.perf_counter() - t)
        t = time.perf_counter()
        compare(ledger.attempts, ["workflow"])
        result["compare_all"].append(time.perf_counter() - t)
        t = time.perf_counter()
        raw = pl.read_csv(path)
        result["raw_read"].append(time.perf_counter() - t)
        t = time.perf_counter()
        raw_summary(raw)
        result["raw_group_by"].append(time.perf_counter() - t)
        del raw
    assert ledger is not None
    result["estimated_size"] = ledger.attempts.estimated_size()
    result["n_chunks"] = ledger.attempts.n_chunks()
    # What the app filters and compares: the compact frame (Categorical text) and its values.
    for _ in range(repeat):
        t = time.perf_counter()
        attempts, values = compact_text(ledger.attempts)
        result["compact"].append(time.perf_counter() - t)
    result["compact_size"] = attempts.estimated_size()
    del ledger
    scenarios: dict[str, list[float]] = {}
    parse: dict[str, list[float]] = {}
    for text in CORE_FILTERS:
        times, parses = [], []
        for _ in range(reps):
            t = time.perf_counter()
            expression = parse_filter(text, attempts.schema, values)
            t_parse = time.perf_counter()
            matching = attempts.filter(expression) if expression is not None else attempts
            compare(matching, ["workflow"], intervals="delta")  # as the app's recompute
            times.append(time.perf_counter() - t)
            parses.append(t_parse - t)
        scenarios[text] = times
        parse[text] = parses
    for by in (["model"], ["task"]):
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            compare(attempts, by, intervals="delta")
            times.append(time.perf_counter() - t)
        scenarios["by " + ",".join(by)] = times
    result["scenarios"] = scenarios
    result["parse"] = parse
    report(result)


def raw_summary(frame: Any, *, medians: bool = True) -> Any:
    """What a person would write in polars: both views' counts, sums and medians per workflow.

    Medians cannot stream (polars gathers each group's values for them), so the bounded-memory
    probe runs it both with and without them.
    """
    import polars as pl

    tokens, accepted = pl.col("tokens"), pl.col("passed").fill_null(False)
    aggregates = [
        pl.len().alias("attempts"),
        accepted.sum().alias("accepted"),
        tokens.null_count().alias("missing"),
        tokens.sum().alias("total_tokens"),
        tokens.filter(accepted).sum().alias("accepted_tokens"),
        tokens.filter(accepted).null_count().alias("accepted_missing"),
    ]
    if medians:
        aggregates += [
            tokens.median().alias("median"),
            tokens.filter(accepted).median().alias("accepted_median"),
        ]
    return frame.group_by("workflow").agg(aggregates)


def section_core(bench: Bench, rows: int, path: Path) -> None:
    label = rows_label(rows)
    data, run = child("core", str(path), str(bench.args.core_reps), str(bench.args.repeat))
    data["max_rss"] = run.max_rss
    bench.raw.setdefault("core", {})[label] = data
    section = "2 core"
    bench.add(
        Figure.timed(section, label, "load() (validate + frame)", data["load"], use_p90=False)
    )
    bench.add(
        Figure.timed(
            section, label, "compare(all attempts, by workflow)", data["compare_all"], use_p90=False
        )
    )
    if data.get("compact"):
        bench.add(
            Figure.timed(
                section, label, "compact_text (the app's frame)", data["compact"], use_p90=False
            )
        )
    limit = interaction_target(rows)
    for name, samples in data["scenarios"].items():
        what = (
            f"parse+filter+compare `{name}`" if not name.startswith("by ") else (f"compare {name}")
        )
        bench.add(Figure.timed(section, label, what, samples, limit))
    parse_all = [t for samples in data["parse"].values() for t in samples]
    bench.add(Figure.timed(section, label, "parse_filter alone", parse_all))
