"""Fair-comparison checks: each one with a ledger that triggers it and one that does not."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tui_ledger.accounting.checks import Check, check_lines, run_checks
from tui_ledger.accounting.matched import restrict_to_matched_tasks
from tui_ledger.schema import OUTCOME_DTYPE


def ledger(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    frame = pl.DataFrame(rows).with_row_index("line", offset=2)
    frame = frame.with_columns(pl.col("line").cast(pl.Int64), pl.col("outcome").cast(OUTCOME_DTYPE))
    if "tokens" in frame.columns:
        frame = frame.with_columns(pl.col("tokens").cast(pl.Int64))
    return frame


def balanced(
    groups: tuple[str, ...] = ("a", "b"), tasks: int = 4, tries: int = 3
) -> list[dict[str, Any]]:
    """Every group tries every task equally often; plenty of attempts and accepted ones."""
    return [
        {"workflow": g, "task": f"t{t}", "tokens": 100 + t, "outcome": "passed" if r else "failed"}
        for g in groups
        for t in range(tasks)
        for r in range(tries)
    ]


def kinds(checks: list[Check]) -> set[str]:
    return {check.kind for check in checks}


def find(checks: list[Check], kind: str) -> Check:
    return next(check for check in checks if check.kind == kind)


def test_a_fair_ledger_has_no_findings() -> None:
    checks = run_checks(ledger(balanced()))
    assert checks == []
    assert check_lines(checks) == ["No fair-comparison issue found."]


def test_unmatched_tasks() -> None:
    rows = [r for r in balanced() if not (r["workflow"] == "b" and r["task"] == "t3")]
    check = find(run_checks(ledger(rows)), "unmatched_tasks")
    assert check.severity == "warning"
    assert "b" in check.message and "3 tasks were attempted by every group" in check.message
    assert check.details == ["b: skipped 1 task of 4 (e.g. t3)"]
    assert check.count == 1
    assert "unmatched_tasks" not in kinds(run_checks(ledger(balanced())))


def test_unmatched_tasks_is_not_checked_when_grouping_by_task() -> None:
    rows = [r for r in balanced() if not (r["workflow"] == "b" and r["task"] == "t3")]
    assert "unmatched_tasks" not in kinds(run_checks(ledger(rows), ["workflow", "task"]))


def test_restrict_to_matched_tasks() -> None:
    rows = [r for r in balanced() if not (r["workflow"] == "b" and r["task"] == "t3")]
    rows.append({"workflow": "a", "task": None, "tokens": 1, "outcome": "failed"})
    matched = restrict_to_matched_tasks(ledger(rows))
    assert sorted(matched["task"].unique().to_list()) == ["t0", "t1", "t2"]
    assert "unmatched_tasks" not in kinds(run_checks(matched))


def test_restrict_to_matched_tasks_needs_a_task_column() -> None:
    with pytest.raises(ValueError, match="task column"):
        restrict_to_matched_tasks(ledger([{"workflow": "a", "tokens": 1, "outcome": "passed"}]))


def test_unequal_attempts_per_task() -> None:
    rows = [*balanced(), {"workflow": "a", "task": "t0", "tokens": 5, "outcome": "passed"}]
    check = find(run_checks(ledger(rows)), "unequal_attempts")
    assert check.count == 1
    assert check.details == ["t0: a 4, b 3"]
    assert "unequal_attempts" not in kinds(run_checks(ledger(balanced())))


def test_mixed_models_inside_a_group() -> None:
    rows = [{**r, "model": "m1" if i % 2 else "m2"} for i, r in enumerate(balanced())]
    check = find(run_checks(ledger(rows)), "mixed_models")
    assert "--by workflow,model" in check.message
    assert check.details[0].startswith("a: m")
    assert "mixed_models" not in kinds(run_checks(ledger(rows), ["workflow", "model"]))
    one_model = [{**r, "model": "m1"} for r in balanced()]
    assert "mixed_models" not in kinds(run_checks(ledger(one_model)))


def test_mixed_versions_column() -> None:
    rows = [{**r, "agent_version": f"v{i % 2}"} for i, r in enumerate(balanced())]
    assert "mixed_versions" in kinds(run_checks(ledger(rows)))


def test_suspect_zero_missing_usage_and_ungraded_from_the_frame() -> None:
    rows = balanced()
    rows[0] = {**rows[0], "tokens": 0}
    rows[1] = {**rows[1], "tokens": None}
    rows[2] = {**rows[2], "outcome": "ungraded"}
    checks = run_checks(ledger(rows))
    assert {"suspect_zero", "missing_usage", "ungraded"} <= kinds(checks)
    missing = find(checks, "missing_usage")
    assert missing.details == ["a: 1 of 12 (8.3%)"]
    assert missing.severity == "warning"  # 8% of a group is past the 5% line
    assert missing.lines == (3,)
    assert not {"suspect_zero", "missing_usage", "ungraded"} & kinds(run_checks(ledger(balanced())))


def test_contradicting_status_from_the_frame() -> None:
    rows = [{**r, "passed": r["outcome"] == "passed", "status": "ok"} for r in balanced()]
    rows[0] = {**rows[0], "outcome": "passed", "passed": True, "status": "timed out"}
    assert "contradicting_status" in kinds(run_checks(ledger(rows)))
    calm = [{**r, "passed": r["outcome"] == "passed", "status": "ok"} for r in balanced()]
    assert "contradicting_status" not in kinds(run_checks(ledger(calm)))


@dataclass
class FakeWarning:
    kind: str
    message: str
    count: int
    lines: tuple[int, ...] = ()


@dataclass
class FakeReport:
    warnings: list[FakeWarning] = field(default_factory=list)


def test_loader_warnings_are_merged_not_recomputed() -> None:
    rows = balanced()
    rows[0] = {**rows[0], "tokens": 0}  # the frame has a zero, but the report decides
    report = FakeReport([FakeWarning("contradicting_status", "7 contradict", 7, (9,))])
    checks = run_checks(ledger(rows), report=report)
    assert "suspect_zero" not in kinds(checks)
    merged = find(checks, "contradicting_status")
    assert (merged.count, merged.message, merged.lines) == (7, "7 contradict", (9,))


def test_price_warnings_are_merged() -> None:
    extra = [FakeWarning("unpriced_model", "mystery has no price", 3)]
    checks = run_checks(ledger(balanced()), warnings=extra)
    assert find(checks, "unpriced_model").message == "mystery has no price"


def test_duplicate_attempt_ids() -> None:
    rows = [{**r, "attempt_id": f"id{i}"} for i, r in enumerate(balanced())]
    assert "duplicate_ids" not in kinds(run_checks(ledger(rows)))
    rows[5] = {**rows[5], "attempt_id": "id0"}
    check = find(run_checks(ledger(rows)), "duplicate_ids")
    assert check.count == 1 and "id0" in check.message


def test_repeated_attempt_number_within_a_task() -> None:
    rows = [{**r, "attempt": i % 3} for i, r in enumerate(balanced())]
    assert "duplicate_attempt" not in kinds(run_checks(ledger(rows)))
    rows[1] = {**rows[1], "attempt": 0}
    assert "duplicate_attempt" in kinds(run_checks(ledger(rows)))


def test_identical_rows_when_rows_carry_identifying_columns() -> None:
    rows = [{**r, "duration_s": 10.0 + i} for i, r in enumerate(balanced())]
    assert "duplicate_rows" not in kinds(run_checks(ledger(rows)))
    copied = ledger(rows)
    twice = pl.concat([copied, copied.head(2).with_columns(pl.col("line") + 100)])
    check = find(run_checks(twice), "duplicate_rows")
    assert check.count == 2


def test_identical_rows_without_identifying_columns_are_normal() -> None:
    # The article's ledger repeats (lean, 1000, failed): that is two attempts, not a copy.
    rows = [
        {"workflow": "lean", "tokens": 1000, "outcome": o} for o in ("passed", "failed", "failed")
    ]
    assert not {k for k in kinds(run_checks(ledger(rows))) if k.startswith("duplicate")}


def test_group_with_no_accepted_attempt() -> None:
    rows = [
        *balanced(),
        *(
            {"workflow": "c", "task": f"t{t}", "tokens": 9, "outcome": "failed"}
            for t in range(4)
            for _ in range(3)
        ),
    ]
    check = find(run_checks(ledger(rows)), "no_accepted")
    assert check.details == ["c: 0 of 12 accepted"]
    assert "never 0" in check.message
    assert "no_accepted" not in kinds(run_checks(ledger(balanced())))


def test_small_samples() -> None:
    check = find(run_checks(ledger(balanced(tasks=2, tries=2))), "small_sample")
    assert check.count == 2
    assert "a: 2 accepted of 4" in check.details
    assert "small_sample" not in kinds(run_checks(ledger(balanced(tasks=4, tries=3))))


def test_warnings_come_before_info() -> None:
    rows = [
        {"workflow": "a", "task": "t", "tokens": None if i == 0 else 5, "outcome": "passed"}
        for i in range(200)
    ]
    checks = run_checks(ledger(rows))
    assert find(checks, "missing_usage").severity == "info"  # 0.5% of the group
    severities = [check.severity for check in checks]
    assert severities == sorted(severities, key=lambda s: s != "warning")


def test_checks_on_a_loaded_file(tmp_path: Path) -> None:
    from tui_ledger.load import load

    path = tmp_path / "runs.csv"
    path.write_text(
        "workflow,task,tokens,passed,model\na,t1,100,true,m1\na,t2,0,false,m2\nb,t1,200,true,m1\n"
    )
    loaded = load(path)
    checks = run_checks(loaded.attempts, ["workflow"], loaded.report)
    assert {"suspect_zero", "unmatched_tasks", "mixed_models", "small_sample"} <= kinds(checks)
    assert find(checks, "suspect_zero").lines == (3,)


def test_categorical_columns_give_the_same_checks_as_text() -> None:
    rows = [
        r for r in balanced(("zeta", "alpha", "mid")) if r["task"] != "t3" or r["workflow"] != "mid"
    ]
    rows += [{"workflow": "alpha", "task": "t0", "tokens": 0, "outcome": "ungraded", "model": "x"}]
    text = ledger([{"model": "y", **row} for row in rows])
    categorical = text.with_columns(pl.col("workflow", "task", "model").cast(pl.Categorical))
    for by in (["workflow"], ["workflow", "model"]):
        expected = run_checks(text, by)
        assert expected
        assert run_checks(categorical, by) == expected


def test_usage_not_recorded_names_its_groups_safely_and_counts_in_words() -> None:
    rows = balanced()
    rows.append({"workflow": "un\x1b[31mmetered", "task": "t0", "tokens": 0, "outcome": "passed"})
    check = find(run_checks(ledger(rows)), "usage_not_recorded")
    text = " ".join([check.message, *check.details])
    assert "\x1b" not in text
    assert check.details == ["un\\x1b[31mmetered: 1 attempt, 0 missing, 1 at 0"]
