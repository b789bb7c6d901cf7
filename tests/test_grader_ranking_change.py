"""Whether the ranking changes between accepted as graded and as vouched (grader.ranking_change)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tests.grader_fixtures import write_job
from tui_ledger.grader import audit_ledger
from tui_ledger.grader.ranking_change import ranking_change
from tui_ledger.load import load


def test_the_groups_both_ways_and_who_moved(tmp_path: Path) -> None:
    job = write_job(tmp_path)
    ledger = load([str(job)])
    change = ranking_change(ledger.attempts, audit_ledger(ledger, [str(job)]))
    quick, careful = change.groups
    assert (quick.label, quick.accepted, quick.rank) == ("quick__openai/gpt-5", (6, 1), ("1", "2"))
    assert quick.tokens_per_accepted == (1100.0, 6600.0)
    assert (careful.accepted, careful.rank) == ((2, 2), ("2", "1"))
    assert change.changes and change.unvouched == 5
    assert change.leaders == ("quick__openai/gpt-5", "careful__openai/gpt-5")
    assert change.sentence == (
        "Accepted as vouched (5 acceptances the grader cannot vouch for), the ranking changes: "
        "quick__openai/gpt-5 1 → 2 and careful__openai/gpt-5 2 → 1."
    )


def test_nothing_unvouched_says_graded_and_vouched_agree(tmp_path: Path) -> None:
    ledger = tmp_path / "runs.csv"
    ledger.write_text("workflow,task,passed,tokens\na,t1,true,10\nb,t1,false,20\n")
    loaded = load([str(ledger)])
    change = ranking_change(loaded.attempts, audit_ledger(loaded, [str(ledger)]))
    assert not change.changes and change.unvouched == 0 and change.groups == ()
    assert "graded and vouched agree" in change.sentence
    assert isinstance(loaded.attempts, pl.DataFrame)
