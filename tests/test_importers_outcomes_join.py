"""The generic outcomes join: a grading file's verdicts onto attempts by a key column."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.test_importers import rows_by
from tui_ledger.accounting.ledger import compare
from tui_ledger.importers import ClaudeCodeImporter, CodexImporter
from tui_ledger.outcomes_join import OutcomesError, join_outcomes

SESSIONS = Path(__file__).parent / "fixtures" / "importers" / "sessions"
S1 = "11111111-1111-4111-8111-111111111111"
S2 = "22222222-2222-4222-8222-222222222222"


@pytest.fixture
def sessions() -> pl.DataFrame:
    return ClaudeCodeImporter().read(SESSIONS / "claude")


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_grading_csv_joins_onto_sessions_by_session_id(
    tmp_path: Path, sessions: pl.DataFrame
) -> None:
    grades = write(
        tmp_path / "grades.csv",
        f"session_id,task,accepted\n{S1},fix-test,yes\n{S2},fix-test,no\nsomeone-else,x,true\n",
    )
    joined = join_outcomes(sessions, grades)
    rows = rows_by(joined.attempts, "session_id")
    assert (rows[S1]["passed"], rows[S1]["task"], rows[S1]["outcomes_line"]) == (
        True,
        "fix-test",
        2,
    )
    assert (rows[S2]["passed"], rows[S2]["status"], rows[S2]["outcomes_line"]) == (False, None, 3)
    assert (joined.key, joined.matched, joined.without_outcome, joined.unmatched_outcomes) == (
        "session_id",
        2,
        0,
        1,
    )
    assert joined.warnings == (
        f"1 outcome row in {grades} matching no attempt's session_id (e.g. 'someone-else')",
    )
    assert joined.attempts.columns[-2:] == ["source", "line"]
    assert rows[S1]["tokens"] == 5128  # usage untouched


def test_the_joined_frame_loads_with_the_figures(tmp_path: Path) -> None:
    from tui_ledger.load import load

    grades = write(tmp_path / "grades.jsonl", json.dumps({"session_id": S1, "status": "resolved"}))
    joined = join_outcomes(ClaudeCodeImporter().read(SESSIONS / "claude"), grades)
    assert joined.warnings == (
        f"1 attempt without an outcome in {grades} (no session_id row): left as they were",
    )
    target = tmp_path / "joined.parquet"
    joined.attempts.write_parquet(target)
    keep = rows_by(compare(load([target]).attempts).keep, "workflow")
    sonnet = keep["claude-code__claude-sonnet-4-5-20250929"]
    assert (sonnet["accepted"], sonnet["tokens_per_accepted_result"]) == (1, 5128.0)
    assert keep["claude-code__claude-opus-4-1-20250805"]["ungraded"] == 1


def test_json_array_tsv_and_a_named_key(tmp_path: Path) -> None:
    codex = CodexImporter().read(SESSIONS / "codex")
    session = codex["session_id"][0]
    grades = write(
        tmp_path / "grades.json", json.dumps([{"Session ID": session, "outcome": "timeout"}])
    )
    joined = join_outcomes(codex, grades, key="session id")
    assert rows_by(joined.attempts, "session_id")[session]["status"] == "timeout"
    tsv = write(tmp_path / "grades.tsv", f"session_id\tpassed\n{session}\t1\n")
    assert join_outcomes(codex, tsv).matched == 1


@pytest.mark.parametrize(
    ("name", "text", "key", "problem"),
    [
        (
            "g.csv",
            "session_id,passed\nnope,true\n",
            None,
            "none of its 1 session_id values matches",
        ),
        ("g.csv", "run_id,passed\nx,true\n", None, "no column it shares with the attempts"),
        ("g.csv", "session_id,passed\nx,true\n", "trace_id", "no 'trace_id' column to join on"),
        ("g.csv", "session_id,score\nx,1\n", None, "no passed or status column"),
        ("g.csv", f"session_id,passed\n{S1},maybe\n", None, "line 2, column 'passed': 'maybe'"),
        ("g.csv", f"session_id,status\n{S1},meh\n", None, "column 'status': 'meh' is not a status"),
        ("g.csv", f"session_id,passed\n{S1},1\n{S1},0\n", None, "appears on lines 2 and 3"),
        ("g.csv", "session_id,passed\n,1\n", None, "line 2: the session_id key is empty"),
        ("g.jsonl", '{"session_id": "x"\n', None, "line 1: is not valid JSON"),
        ("g.json", '{"session_id": "x"}', None, "is not a JSON array of objects"),
        ("g.csv", "", None, "holds no outcomes"),
    ],
)
def test_errors_are_one_line_naming_the_file(
    tmp_path: Path, sessions: pl.DataFrame, name: str, text: str, key: str | None, problem: str
) -> None:
    grades = write(tmp_path / name, text)
    with pytest.raises(OutcomesError) as caught:
        join_outcomes(sessions, grades, key=key)
    message = str(caught.value)
    assert message.startswith(str(grades)) and problem in message
    assert "\n" not in message


def test_a_missing_file(tmp_path: Path, sessions: pl.DataFrame) -> None:
    with pytest.raises(OutcomesError, match="no such file; check the --outcomes path"):
        join_outcomes(sessions, tmp_path / "missing.csv")


def test_text_passed_column_of_a_raw_table_stays_text(tmp_path: Path) -> None:
    raw = pl.DataFrame({"workflow": ["a", "a"], "task": ["t1", "t2"], "passed": ["no", "no"]})
    grades = write(tmp_path / "g.csv", "task,passed\nt1,pass\n")
    joined = join_outcomes(raw, grades)
    assert joined.attempts["passed"].to_list() == ["true", "no"]
    assert joined.key == "task" and joined.without_outcome == 1


def test_a_per_input_join_may_match_nothing(tmp_path: Path, sessions: pl.DataFrame) -> None:
    grades = write(tmp_path / "g.csv", "session_id,passed\nelsewhere,true\n")
    joined = join_outcomes(sessions, grades, require_match=False)
    assert (joined.matched, joined.without_outcome, joined.unmatched_outcomes) == (0, 2, 1)
    assert joined.attempts["passed"].to_list() == [None, None]
