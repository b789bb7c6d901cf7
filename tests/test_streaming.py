"""The streamed summary (files larger than memory) gives the figures of the in-memory one.

`compare(scan(...), streaming=True)` against `compare(load(...).attempts)`: the article's six
rows, generated ledgers with missing usage, ungraded rows, even and odd counts and values past
2**53; and `ledger-tui summary` under an RLIMIT_DATA too small for the eager load.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tui_ledger.accounting import medians
from tui_ledger.accounting.ledger import Comparison, compare
from tui_ledger.cli import main
from tui_ledger.load import load, scan
from tui_ledger.schema import OUTCOME_DTYPE

ARTICLE = Path(__file__).resolve().parent.parent / "sample_data" / "runs.csv"
MEDIAN = "median_tokens_per_attempt"


def assert_same(eager: Comparison, streamed: Comparison) -> None:
    """Every figure equal; medians digit for digit and of the same dtype. Float sums of the
    variance (delta-method intervals only) may differ in their last bits with the chunking."""
    # `load` reads a CSV's keys as Categorical, `scan` as text: the same groups.
    as_text = pl.col(pl.Categorical).cast(pl.String)
    for view in ("keep", "drop"):
        expected = eager.view(view).with_columns(as_text)
        got = streamed.view(view).with_columns(as_text)
        assert got.schema == expected.schema
        assert got[MEDIAN].to_list() == expected[MEDIAN].to_list(), view
        assert_frame_equal(got, expected, check_exact=False, rel_tol=1e-12)
    assert_frame_equal(
        streamed.trap.with_columns(as_text),
        eager.trap.with_columns(as_text),
        check_exact=False,
        rel_tol=1e-12,
    )


def both_ways(path: Path, by: list[str], intervals: str = "auto") -> tuple[Comparison, Comparison]:
    eager = compare(load(path).attempts, by, intervals=intervals)  # type: ignore[arg-type]
    lazy, _ = scan(path)
    return eager, compare(lazy, by, intervals=intervals, streaming=True)  # type: ignore[arg-type]


def test_the_article_fixture_streams_to_the_same_figures() -> None:
    eager, streamed = both_ways(ARTICLE, ["workflow"])
    assert_same(eager, streamed)
    assert streamed.keep[MEDIAN].to_list() == [1000.0, 1600.0]
    assert streamed.drop["total_tokens"].to_list() == [1000, 4800]
    # Bootstrap intervals too: "auto" reads only the few rows its cap allows.
    assert streamed.keep["ci_method"].to_list() == ["bootstrap", "bootstrap"]


def ledger_rows(seed: int, rows: int, *, huge: bool = False) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    workflows = [f"w{i}" for i in range(rng.randint(1, 6))]
    top = 2**62 if huge else 200_000
    return [
        {
            "workflow": rng.choice(workflows),
            "task": f"t{rng.randint(1, 7)}",
            "tokens": "" if rng.random() < 0.05 else str(rng.randint(0, top)),
            "passed": rng.choices(["true", "false", ""], weights=(5, 4, 1))[0],
        }
        for _ in range(rows)
    ]


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    pl.DataFrame(rows, schema=dict.fromkeys(rows[0], pl.String)).write_csv(path)
    return path


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("huge", [False, True])
def test_generated_ledgers_stream_to_the_same_figures(
    tmp_path: Path, seed: int, huge: bool
) -> None:
    rows = ledger_rows(seed, 300 + seed * 101, huge=huge)  # even and odd counts per group
    path = write_csv(tmp_path / "runs.csv", rows)
    for by in (["workflow"], ["workflow", "task"]):
        eager, streamed = both_ways(path, by)
        assert_same(eager, streamed)
        if huge:  # past 2**52 the medians are exact decimals, on both paths
            assert streamed.keep.schema[MEDIAN] == pl.Decimal(38, 1)


def test_medians_past_2_53_are_exact_when_streamed(tmp_path: Path) -> None:
    big = 2**53
    rows = [
        {"workflow": "a", "tokens": str(big + 1), "passed": "true"},
        {"workflow": "a", "tokens": str(big + 2), "passed": "true"},
        {"workflow": "b", "tokens": str(big + 1), "passed": "false"},
        {"workflow": "b", "tokens": "", "passed": "false"},
        {"workflow": "b", "tokens": str(big + 4), "passed": "true"},
        {"workflow": "c", "tokens": "", "passed": ""},
    ]
    eager, streamed = both_ways(write_csv(tmp_path / "runs.csv", rows), ["workflow"])
    assert_same(eager, streamed)
    keep = dict(zip(streamed.keep["workflow"], streamed.keep[MEDIAN], strict=True))
    drop = dict(zip(streamed.drop["workflow"], streamed.drop[MEDIAN], strict=True))
    assert str(keep["a"]) == f"{big + 1}.5"  # even count: the mean of the two middle values
    assert str(keep["b"]) == f"{big + 2}.5"
    assert keep["c"] is None  # no known usage: no median, on either path
    assert str(drop["b"]) == f"{big + 4}.0"


@pytest.mark.parametrize("seed", range(4))
def test_many_narrowing_passes_find_the_same_medians(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With 4 slices per pass, each median takes many passes over the attempts."""
    monkeypatch.setattr(medians, "MEDIAN_BUCKETS", 4)
    rng = random.Random(seed)
    frame = pl.DataFrame(
        {
            "workflow": [rng.choice(["a", "b", None]) for _ in range(400)],
            "tokens": [None if rng.random() < 0.1 else rng.randint(0, 10**6) for _ in range(400)],
            "outcome": [
                rng.choice(["passed", "failed", "timeout", "ungraded"]) for _ in range(400)
            ],
        },
        schema_overrides={"outcome": OUTCOME_DTYPE},
    )
    eager = compare(frame, intervals="delta")
    streamed = compare(frame.lazy(), intervals="delta", streaming=True)
    assert_same(eager, streamed)


def test_a_bootstrap_of_every_group_is_refused_when_streaming() -> None:
    lazy, _ = scan(ARTICLE)
    with pytest.raises(ValueError, match="every attempt in memory"):
        compare(lazy, intervals="bootstrap", streaming=True)


# --------------------------------------------------------------------------- the command

# RLIMIT_DATA for the child. polars' threads and allocator alone map 250-400 MB of data
# segment (the loader counts 384 MB of it as taken), and how much varies from run to run. The
# file below is 522 MB of CSV, so the eager load needs at least 3x that, 1.6 GB, of at most
# 1.4 GB (1800 - 384 MB) the limit leaves: it is refused whatever the child has mapped. The
# streamed summary runs on one polars thread (`run_limited`) and its need does not grow with the
# file (3M and 8M rows alike), but it does with how busy the machine is: on 2 cores it ran under
# a 700 MB limit when quiet and needed 750 beside three busy loops, and on CI (3M rows, a 900 MB
# limit) it was once aborted. The file is large so that the limit can be: ~1 GB to spare for the
# stream, 150-270 MB for the refusal. (At 3M rows and 900 MB the margins were ~200 MB and 100 MB; at
# 600 MB without the `note` column, ~50 MB each.) The `note` column widens the gap: it grows the
# file, which the eager lower bound counts 3x, more than it grows what the stream holds.
LIMIT = 1800 * 2**20
ROWS = 8_000_000


def big_ledger(path: Path) -> Path:
    """About 522 MB of CSV: five workflows, some missing usage, some ungraded attempts, and
    a free-text `note` of 45 characters on every row."""
    hashed = pl.col("h")
    padded = hashed.cast(pl.String).str.pad_start(20, "0")
    pl.select(pl.int_range(ROWS).hash(7).alias("h")).select(
        (pl.lit("workflow-") + (hashed % 5).cast(pl.String)).alias("workflow"),
        pl.when(hashed % 23 == 0).then(None).otherwise((hashed // 7) % 300_000).alias("tokens"),
        pl.when(hashed % 11 == 0).then(None).otherwise((hashed // 3) % 2 == 0).alias("passed"),
        (pl.lit("run-") + padded + pl.lit("-") + padded).alias("note"),
    ).write_csv(path)
    return path


def _without_pairs(document: Any) -> Any:
    """The summary JSON without what only the in-memory path draws: the pairs and the
    ranks they support."""
    if isinstance(document, dict):
        return {
            key: _without_pairs(value)
            for key, value in document.items()
            if key not in ("pairs", "rank_noise_best", "rank_noise_worst")
        }
    return document


def assert_close(got: Any, expected: Any, where: str = "") -> None:
    """Equal JSON, floats to 12 digits (the delta-method intervals' last bits)."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys(), where
        for key, value in expected.items():
            assert_close(got[key], value, f"{where}/{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for index, (mine, theirs) in enumerate(zip(got, expected, strict=True)):
            assert_close(mine, theirs, f"{where}/{index}")
    elif isinstance(expected, float):
        assert got == pytest.approx(expected, rel=1e-12), where
    else:
        assert got == expected, where


def run_limited(args: list[str]) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (LIMIT, LIMIT))

    env = {**os.environ, "POLARS_MAX_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "tui_ledger.cli", *args],
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_summary_streams_under_a_memory_limit_the_eager_load_cannot_meet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = big_ledger(tmp_path / "big.csv")
    try:
        # The eager load is refused under the limit, in one line, before reading...
        refused = run_limited(["check", str(path)])
        assert refused.returncode == 2, refused.stderr[-2000:]
        assert "opening this needs at least" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        # ...and `summary` streams it, to the figures of the unlimited eager run.
        for extra in (["--intervals", "delta"], ["--view", "keep"]):
            streamed = run_limited(["summary", str(path), "--format", "json", *extra])
            assert streamed.returncode == 0, streamed.stderr[-2000:]
            assert "read in bounded memory instead" in streamed.stderr
            assert main(["summary", str(path), "--format", "json", *extra]) == 0
            expected = _without_pairs(json.loads(capsys.readouterr().out))
            got = json.loads(streamed.stdout)
            # Streamed, the pairwise verdicts are not drawn (their per-task cells may not fit).
            assert got.get("pairs") is None
            got = _without_pairs(got)
            if "views" not in expected:  # --view keep: the article script's shape
                assert_close(got, expected)
                continue
            names = ("by", "views", "trap", "hidden_tokens", "ranking_flips", "moves", "callout")
            for name in names:
                assert_close(got[name], expected[name], name)
            assert got["intervals"] == expected["intervals"]
            # Eager, the warnings are the checks' warnings (`checks.warnings_of`). Streamed, the
            # fair-comparison checks (which need every attempt in memory) are not run: the
            # warnings are the loader's (each of them a check eager), and one more says so.
            warned = [c for c in expected["checks"] if c["severity"] == "warning"]
            assert [w["kind"] for w in expected["warnings"]] == [c["kind"] for c in warned]
            checked = [c["kind"] for c in expected["checks"]]
            streamed_kinds = [w["kind"] for w in got["warnings"][:-1]]
            assert streamed_kinds and set(streamed_kinds) <= set(checked)
            assert got["warnings"][-1]["kind"] == "streamed"
            assert got["checks"] == []
    finally:
        path.unlink()  # 522 MB: not left for pytest's last three temporary folders
