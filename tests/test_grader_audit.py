"""The grader's audit of a whole ledger: signals by row, health, and the vouched view."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.grader_fixtures import EXPECTED, write_job
from tui_ledger.grader import NEVER_ACTED_COLUMN, NO_TRAJECTORIES, audit_ledger, grader_health
from tui_ledger.load import load


@pytest.fixture
def job(tmp_path: Path) -> Path:
    return write_job(tmp_path)


def _trial(source: str) -> str:
    return source.split("/")[0]


def test_every_flagged_attempt_and_nothing_else(job: Path) -> None:
    ledger = load([str(job)])
    audit = audit_ledger(ledger, [str(job)], threads=3)
    sources = ledger.attempts.get_column("source").to_list()
    found: dict[str, list[tuple[str, int | None]]] = {}
    for row in audit.signals.iter_rows(named=True):
        found.setdefault(_trial(sources[row["row"]]), []).append((row["kind"], row["step"]))
    assert found == EXPECTED
    assert audit.read == 9 and audit.unreadable == () and audit.note is None
    flagged = {_trial(sources[row]) for row in audit.unvouched}
    assert flagged == {"tamper-sed", "tamper-reward", "lookup", "contradiction", "never-acted"}
    assert {_trial(sources[row]) for row in audit.tampered} == {
        "tamper-sed",
        "tamper-reward",
        "lookup",
    }
    assert [_trial(sources[row]) for row in audit.infrastructure] == ["infra"]
    assert [_trial(sources[row]) for row in audit.never_acted] == ["infra", "never-acted"]
    [signal] = audit.signals_of(sources.index("lookup/result.json"))
    assert signal.evidence == "git log --all --oneline | grep fix"


def test_vouched_makes_unvouched_acceptances_failures_and_keeps_their_tokens(job: Path) -> None:
    ledger = load([str(job)])
    audit = audit_ledger(ledger, [str(job)])
    graded = audit.apply(ledger.attempts, "graded")
    vouched = audit.apply(ledger.attempts, "vouched")
    assert graded.get_column("outcome").to_list() == ledger.attempts.get_column("outcome").to_list()
    changed = [
        _trial(source)
        for source, before, after in zip(
            ledger.attempts.get_column("source"),
            ledger.attempts.get_column("outcome"),
            vouched.get_column("outcome"),
            strict=True,
        )
        if before != after
    ]
    assert sorted(changed) == [
        "contradiction",
        "lookup",
        "never-acted",
        "tamper-reward",
        "tamper-sed",
    ]
    assert vouched.get_column("tokens").sum() == graded.get_column("tokens").sum()
    assert vouched.schema["outcome"] == ledger.attempts.schema["outcome"]
    # the agent that never acted: its missing usage is 0 tokens, known
    never = graded.filter(pl.col(NEVER_ACTED_COLUMN))
    # its usage missing: 0, known; the usage an accepted attempt recorded stays as recorded
    assert never.select("source", "tokens").rows() == [
        ("infra/result.json", 0),
        ("never-acted/result.json", 1100),
    ]
    assert ledger.attempts.filter(pl.col("source") == "infra/result.json")["tokens"].to_list() == [
        None
    ]
    with pytest.raises(ValueError, match="the audit read 10 attempts"):
        audit.apply(ledger.attempts.head(3))


def test_the_grader_health(job: Path) -> None:
    ledger = load([str(job)])
    health = grader_health(ledger.attempts, audit_ledger(ledger, [str(job)]))
    assert health.tasks == 2
    assert health.infrastructure.to_dicts() == [
        {"task": "render", "attempts": 5, "infrastructure_errors": 1, "share": 0.2}
    ]
    assert health.tasks_all_failed.is_empty() and health.tasks_all_passed.is_empty()
    # a test nobody passed, a task everyone failed, a task everyone passed
    frame = pl.DataFrame(
        {
            "workflow": ["a", "b", "a", "b", "a"],
            "task": ["x", "x", "y", "y", "z"],
            "outcome": pl.Series(["failed", "failed", "passed", "passed", "passed"]).cast(
                ledger.attempts.schema["outcome"]
            ),
        }
    )
    audit = audit_ledger(frame)
    audit = type(audit)(
        signals=audit.signals,
        tests=pl.DataFrame(
            {
                "row": [0, 1, 0, 2],
                "test": ["t::a", "t::a", "t::b", "t::a"],
                "passed": [False, False, True, True],
            },
            schema={"row": pl.UInt32, "test": pl.String, "passed": pl.Boolean},
        ),
        rows=5,
        accepted_rows=audit.accepted_rows,
    )
    health = grader_health(frame, audit)
    assert health.tests_never_passed.to_dicts() == [{"task": "x", "test": "t::a", "attempts": 2}]
    assert health.tasks_all_failed.to_dicts() == [{"task": "x", "attempts": 2}]
    assert health.tasks_all_passed.to_dicts() == [{"task": "y", "attempts": 2}]
    assert health.tasks == 2  # z: one group only


def test_a_ledger_without_trajectories_says_so(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("workflow,task,passed,tokens\na,x,true,10\nb,x,false,20\n", encoding="utf-8")
    audit = audit_ledger(load([str(path)]), [str(path)])
    assert audit.note == NO_TRAJECTORIES
    assert audit.signals.is_empty() and audit.read == 0


def test_a_log_that_cannot_be_read_is_counted_not_raised(job: Path) -> None:
    (job / "lookup" / "agent" / "trajectory.json").write_text("{not json", encoding="utf-8")
    ledger = load([str(job)])
    audit = audit_ledger(ledger, [str(job)])
    [(row, message)] = audit.unreadable
    assert ledger.attempts["source"][row] == "lookup/result.json"
    assert "trajectory.json" in message


def test_an_agent_that_never_acted_spent_0_tokens_known_not_suspect(job: Path) -> None:
    from tui_ledger.accounting.ledger import compare

    ledger = load([str(job)])
    audit = audit_ledger(ledger, [str(job)])
    careful = "careful__openai/gpt-5"
    before = compare(ledger.attempts, ["workflow"])
    assert before.is_lower_bound(careful, "keep")  # the infra attempt's usage is missing
    after = compare(audit.apply(ledger.attempts), ["workflow"])
    assert not after.is_lower_bound(careful, "keep")
    keep = after.keep.filter(pl.col("workflow") == careful)
    assert keep["suspect_zeros"].to_list() == [0] and keep["missing_usage"].to_list() == [0]
    assert keep["total_tokens"].to_list() == [3 * 1100]
    # a 0 the agent recorded itself stays suspect
    zeroed = ledger.attempts.with_columns(pl.lit(0, dtype=pl.Int64).alias("tokens"))
    plain = compare(zeroed, ["workflow"]).keep
    assert plain["suspect_zeros"].to_list() == [4, 6]
    marked = compare(audit.apply(zeroed), ["workflow"]).keep
    assert marked["suspect_zeros"].to_list() == [3, 5]


def test_a_mini_swe_agent_under_harbor_that_made_no_model_call(tmp_path: Path) -> None:
    import json

    from tests.trajectory_fixtures_atif import write_harbor_trial

    job = tmp_path / "jobs" / "j"
    for trial, calls in (("retry", 0), ("worked", 3)):
        result = write_harbor_trial(job, trial, "parse", agent_result=None, steps=None)
        log = result.parent / "agent" / "mini-swe-agent.trajectory.json"
        log.parent.mkdir(parents=True, exist_ok=True)
        info = {"exit_status": "RetryError", "model_stats": {"api_calls": calls}}
        log.write_text(json.dumps({"info": info, "messages": []}), encoding="utf-8")
    ledger = load([str(job)])
    audit = audit_ledger(ledger, [str(job)])
    [row] = audit.signals.to_dicts()
    assert ledger.attempts["source"][row["row"]] == "retry/result.json"
    assert (row["kind"], row["step"]) == ("verdict_contradiction", None)
    assert row["evidence"] == (
        "accepted, but no model call was made "
        "(agent/mini-swe-agent.trajectory.json: api_calls 0, RetryError)"
    )


def test_a_harbor_job_with_every_rule_and_every_decoy(tmp_path: Path) -> None:
    """One accepted trial per command of the rules' table, read through Harbor's ATIF reader:
    every flagged trial and nothing else, each at the step trace numbers (2: after the user's)."""
    from tests.grader_fixtures import TESTS, _steps
    from tests.test_grader_signals import CALLS, COMMANDS
    from tests.trajectory_fixtures_atif import atif_step, write_harbor_trial

    job = tmp_path / "jobs" / "every"
    expected: dict[str, str] = {}
    for number, (command, touches, looks_up) in enumerate(COMMANDS):
        trial = f"shell-{number:02d}"
        write_harbor_trial(job, trial, "parse", steps=_steps(command), ctrf=TESTS)
        if touches or looks_up:
            expected[trial] = "touched_grader" if touches else "answer_lookup"
    for number, (name, arguments, touches) in enumerate(CALLS):
        trial = f"call-{number:02d}"
        steps = [
            atif_step(1, "user", "Fix the parser."),
            atif_step(2, "agent", "", calls=[("c2", name, arguments)], results=["ok"]),
        ]
        write_harbor_trial(job, trial, "parse", steps=steps, ctrf=TESTS)
        if touches:
            expected[trial] = "touched_grader"
    ledger = load([str(job)])
    audit = audit_ledger(ledger, [str(job)])
    sources = ledger.attempts.get_column("source").to_list()
    found = {
        _trial(sources[row["row"]]): (row["kind"], row["step"])
        for row in audit.signals.iter_rows(named=True)
    }
    assert found == {trial: (kind, 2) for trial, kind in expected.items()}
    assert audit.unreadable == () and audit.read == len(COMMANDS) + len(CALLS)


def test_a_files_own_never_acted_column_cannot_make_its_zeros_known(tmp_path: Path) -> None:
    from tui_ledger.accounting.ledger import compare

    path = tmp_path / "runs.csv"
    path.write_text(
        "workflow,task,passed,tokens,agent_never_acted\na,x,true,0,true\nb,x,true,5,false\n",
        encoding="utf-8",
    )
    attempts = load([str(path)]).attempts
    assert NEVER_ACTED_COLUMN not in attempts.columns
    assert "agent_never_acted_in_file" in attempts.columns
    keep = compare(attempts, ["workflow"]).keep
    assert keep["suspect_zeros"].to_list() == [1, 0]


def test_progress_counts_every_attempt_read_a_slice_at_a_time(
    job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui_ledger.grader import audit as audit_module

    real = audit_module._slices
    monkeypatch.setattr(audit_module, "_slices", lambda frame: real(frame, size=3))
    seen: list[tuple[int, int]] = []
    ledger = load([str(job)])
    audit = audit_ledger(
        ledger, [str(job)], progress=lambda done, total: seen.append((done, total))
    )
    assert seen == [(done, 10) for done in range(1, 11)]
    assert audit.signals.height == 6  # the same signals as in one slice
