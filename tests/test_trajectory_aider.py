"""Inside Aider benchmark attempts: the exercise's `.aider.chat.history.md` as steps, its
`.aider.results.json` tries as the verdict.

The results files are the importer's committed fixture (tests/fixtures/importers/aider, written
by make_fixture.py) copied into tmp_path; the chat history beside one is written here in the
shape Aider's `InputOutput` and the benchmark's `run_unit_tests` append it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tui_ledger.load import load
from tui_ledger.trajectory import (
    NOT_RECORDED,
    TrajectoryError,
    aider,
    read_all,
    read_attempt,
    tokens_match,
)

BENCHMARKS = Path(__file__).parent / "fixtures" / "importers" / "aider" / "tmp.benchmarks"
RUN = "2025-06-01-10-00-00--sonnet-diff"
ANAGRAM = Path(RUN) / "python" / "exercises" / "practice" / "anagram"

# Two tries: the instructions, a reply, Aider's messages, the failing tests' output, the
# errors sent back, a second reply, the passing tests' output.
HISTORY = """
# aider chat started at 2025-06-01 10:00:01

#### # Instructions~
####~
#### Given a word, find its anagrams.~

I will write the solution.

anagram.py
```python
def find_anagrams(word, candidates):
    return []
```

> Tokens: 2.1k sent, 300 received. Cost: $0.01 message, $0.01 session.~
> Applied edit to anagram.py~
```
FAILED test_anagram.py::test_detects_two_anagrams
1 failed, 2 passed
```
#### FAILED test_anagram.py::test_detects_two_anagrams~
#### 1 failed, 2 passed~
####~
#### See the testing errors above.~

Fixing the comparison.

> Applied edit to anagram.py~
```
3 passed
```""".replace("~\n", "  \n")  # Aider ends each line it logs with a markdown line break


@pytest.fixture
def run(tmp_path: Path) -> Path:
    shutil.copytree(BENCHMARKS, tmp_path / "tmp.benchmarks")
    return tmp_path / "tmp.benchmarks"


def row_of(folder: Path, task: str) -> dict[str, Any]:
    attempts = load([folder]).attempts
    for index in range(attempts.height):
        row = attempts.row(index, named=True)
        if row["task"] == task and RUN in row["source"]:
            return {**row, "source": str(folder / row["source"])}
    raise AssertionError(task)


def test_the_chat_history_as_steps_and_the_tries_as_the_verdict(run: Path) -> None:
    (run / ANAGRAM / ".aider.chat.history.md").write_text(HISTORY)
    row = row_of(run, "python/anagram")
    trajectory = read_attempt(row)
    assert [(step.source, step.kind) for step in trajectory.steps] == [
        ("system", "session"),
        ("user", None),
        ("agent", None),
        ("tool", None),
        ("tool", "tests"),
        ("user", None),
        ("agent", None),
        ("tool", None),
        ("tool", "tests"),
    ]
    assert trajectory.instruction == "# Instructions\n\nGiven a word, find its anagrams."
    assert "def find_anagrams" in trajectory.steps[2].text  # the reply's own code block
    assert trajectory.steps[3].text.startswith("Tokens: 2.1k sent")  # shown, never counted
    assert trajectory.steps[4].text.startswith("FAILED test_anagram.py")
    assert [(test.name, test.result) for test in trajectory.verdict.tests] == [
        ("try 1", "failed"),
        ("try 2", "passed"),
    ]
    assert trajectory.verdict.output == "3 passed"
    # Aider keeps tokens for the exercise only.
    assert row["tokens"] == 21500
    assert tokens_match(trajectory.steps, row["tokens"]) == (NOT_RECORDED, None)
    assert "not recorded per step" in trajectory.notes[0]


def test_no_chat_history_opens_to_no_steps_and_says_so(run: Path) -> None:
    trajectory = read_attempt(row_of(run, "python/anagram"))
    assert trajectory.steps == ()
    looked = trajectory.looked_for[0]
    assert looked.startswith("the exercise's chat history (.aider.chat.history.md) in ")
    assert len(trajectory.verdict.tests) == 2  # the tries are known all the same


def test_a_crashed_exercise_says_so(run: Path) -> None:
    trajectory = read_attempt(row_of(run, "go/dominoes"))
    assert trajectory.verdict.tests == ()
    assert any("crashed: litellm.APIConnectionError" in note for note in trajectory.notes)


@pytest.mark.parametrize(
    ("results", "history", "problem"),
    [
        ('{"testcase": "anagram", "tests_outcomes": [tr', None, "is cut off mid-record"),
        ("not json", None, "is not valid JSON"),
        ('{"testcase": "anagram", "tests_outcomes": "yes"}', None, "tests_outcomes is 'yes'"),
        ('{"tests_outcomes": []}', b"#### hi\x00\x01", "holds binary bytes"),
        ('{"tests_outcomes": []}', b"#### \xff\xfe", "not UTF-8 text"),
    ],
)
def test_broken_files_are_one_line_naming_the_file(
    tmp_path: Path, results: str, history: bytes | None, problem: str
) -> None:
    file = tmp_path / ".aider.results.json"
    file.write_text(results)
    if history is not None:
        (tmp_path / ".aider.chat.history.md").write_bytes(history)
    with pytest.raises(TrajectoryError) as caught:
        read_all(aider.open({"source": str(file), "line": 1}))
    message = str(caught.value)
    assert message.startswith(f"{tmp_path}/.aider.") and problem in message
    assert "\n" not in message


def test_a_results_file_gone_since_the_load_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(TrajectoryError, match=r"\.aider\.results\.json: no such file"):
        aider.open({"source": str(tmp_path / ".aider.results.json"), "line": 1})
