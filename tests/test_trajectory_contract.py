"""What every trajectory reader promises, checked on a small generated attempt of each format.

The per-format tests check what each harness's log means; this one checks that the readers
agree on the model (`trajectory/model.py`, `trajectory/text.py`): steps numbered 1, 2, 3 ... in
the order they come, `source` one of user/agent/tool/system, a timestamp ISO 8601 text or None,
`tokens` the sum of the buckets wherever a bucket is recorded, no text past the one cap; and
that the trace as text (render.py) carries no ESC and no other control character but the line
break, whatever the log held (some fixtures here hold escapes and bells on purpose).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import test_trajectory_openhands as openhands_tests
from tests import test_trajectory_sessions as sessions
from tests.test_importers import _synthetic_log, write_json
from tests.test_trajectory_aider import ANAGRAM, BENCHMARKS, HISTORY
from tests.test_trajectory_inspect import agent_sample, messages_only_sample
from tests.test_trajectory_promptfoo_otel import (
    agent_trace,
    batch,
    promptfoo_results,
    two_agents,
)
from tests.test_trajectory_swebench import MINI_RUN, SWE_AGENT_RUN
from tests.trajectory_fixtures_atif import (
    INSTRUCTION,
    SAMPLE_TOKENS,
    sample_steps,
    write_atif,
    write_harbor_trial,
)
from tui_ledger.load import load
from tui_ledger.trajectory import Trajectory, bucket_total, openable, read_attempt
from tui_ledger.trajectory.model import WHO
from tui_ledger.trajectory.render import trace_text
from tui_ledger.trajectory.text import TEXT_LIMIT

Rows = list[dict[str, Any]]
HOSTILE = "\x1b[2J\x1b]0;owned\x07 red \x1b[31mtext\x1b[0m\r\x08\x7f"
_ISO = re.compile(
    r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?)?$"
)
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def loaded(path: Path) -> Rows:
    attempts = load([path]).attempts
    rows = (attempts.row(index, named=True) for index in range(attempts.height))
    return [openable(row, [str(path)]) for row in rows]


def atif(tmp_path: Path, _: pytest.MonkeyPatch) -> Rows:
    steps = sample_steps()
    steps[0]["message"] = f"{INSTRUCTION} {HOSTILE}"
    write_atif(tmp_path / "runs" / "t.json", steps)
    ledger = tmp_path / "ledger.csv"
    ledger.write_text(f"workflow,task,passed,tokens,trace\nw,t,true,{SAMPLE_TOKENS},runs/t.json\n")
    return loaded(ledger)


def harbor(tmp_path: Path, _: pytest.MonkeyPatch) -> Rows:
    result = write_harbor_trial(
        tmp_path / "jobs" / "job",
        "fix__Abc0dEf",
        "fix",
        agent_result={"n_input_tokens": 2200, "n_cache_tokens": 1600, "n_output_tokens": 130},
        steps=sample_steps(),
        ctrf=[("test_a", "passed")],
        stdout=f"1 passed {HOSTILE}\n",
        instruction=INSTRUCTION,
    )
    return loaded(result)


def claude_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Rows:
    lines = [
        sessions.prompt(0, f"go {HOSTILE}"),
        *sessions.streamed(1),
        sessions.result(3, "toolu_1", f"a.py {HOSTILE}"),
    ]
    file = sessions.session_file(tmp_path, lines)
    return list(sessions.ledger_rows(file, monkeypatch).values())


def codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Rows:
    lines = [
        sessions.meta(),
        *sessions.asked(1, f"list the files {HOSTILE}"),
        sessions.token_count(2, sessions.counts(100, 20, 10)),
        sessions.call(2, "call_1", "ls"),
        sessions.output(3, "call_1", f"Exit code: 0\nOutput:\n{HOSTILE}"),
        sessions.token_count(4, sessions.counts(250, 120, 30)),
        sessions.said(4, "done"),
    ]
    return [sessions.codex_row(sessions.rollout(tmp_path, lines), monkeypatch)]


def swebench(tmp_path: Path, _: pytest.MonkeyPatch) -> Rows:
    rows = []
    for run in (MINI_RUN, SWE_AGENT_RUN):
        shutil.copytree(run, tmp_path / run.name)
        rows += loaded(tmp_path / run.name)
    return rows


def openhands(tmp_path: Path, _: pytest.MonkeyPatch) -> Rows:
    calls = openhands_tests.CALLS
    record = openhands_tests.FIXTURE.legacy_line(
        "django__django-11099", openhands_tests.MODEL, openhands_tests.metrics(calls)
    )
    record["history"] = openhands_tests.history(calls)
    record["history"][-1]["content"] = HOSTILE
    return loaded(openhands_tests.write_run(tmp_path / "run", [record]))


def aider(tmp_path: Path, _: pytest.MonkeyPatch) -> Rows:
    run = tmp_path / "tmp.benchmarks"
    shutil.copytree(BENCHMARKS, run)
    (run / ANAGRAM / ".aider.chat.history.md").write_text(f"{HISTORY}\n> {HOSTILE}\n")
    return loaded(run)


def inspect(tmp_path: Path, _: pytest.MonkeyPatch) -> Rows:
    log = _synthetic_log([agent_sample(), messages_only_sample()])
    return loaded(write_json(tmp_path / "log.json", log))


def promptfoo(tmp_path: Path, _: pytest.MonkeyPatch) -> Rows:
    results = promptfoo_results()
    results[0]["response"]["output"] = f"cats {HOSTILE}"
    document = {"evalId": "e1", "results": {"version": 3, "results": results}}
    return loaded(write_json(tmp_path / "results.json", document))


def otel(tmp_path: Path, _: pytest.MonkeyPatch) -> Rows:
    path = tmp_path / "spans.jsonl"
    spans = agent_trace()
    path.write_text(
        "\n".join([batch(spans[1:3]), batch(two_agents()), batch([spans[3], spans[0]])])
    )
    return loaded(path)


def terminal_bench(tmp_path: Path, _: pytest.MonkeyPatch) -> Rows:
    from tests.trajectory_fixtures import session, write_trial

    write_trial(
        tmp_path / "run",
        instruction=f"Write hello.txt. {HOSTILE}",
        events=session([("echo hi", f"hi {HOSTILE}"), ("ls", "hello.txt")]),
        commands=[["echo hi", "Enter"], ["ls", "Enter"]],
    )
    return loaded(tmp_path / "run")


FORMATS: dict[str, Callable[[Path, pytest.MonkeyPatch], Rows]] = {
    "atif": atif,
    "terminal-bench": terminal_bench,
    "harbor": harbor,
    "claude-code": claude_code,
    "codex": codex,
    "swe-bench": swebench,
    "openhands": openhands,
    "aider": aider,
    "inspect": inspect,
    "promptfoo": promptfoo,
    "otel": otel,
}


def check_steps(trajectory: Trajectory, where: str) -> None:
    for position, step in enumerate(trajectory.steps, start=1):
        at = f"{where} step {position}"
        assert step.index == position, at
        assert step.source in WHO, at
        assert step.timestamp is None or _ISO.match(step.timestamp), (at, step.timestamp)
        buckets = (
            step.input_tokens,
            step.cached_input_tokens,
            step.cache_write_tokens,
            step.output_tokens,
        )
        if any(value is not None for value in buckets):
            assert step.tokens == bucket_total(*buckets), at
        for text in (step.text, step.observation or "", *(c.arguments for c in step.tool_calls)):
            assert len(text) <= TEXT_LIMIT + 100, at
    if not trajectory.steps:
        assert trajectory.looked_for or trajectory.notes, f"{where}: no steps, and no word why"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_reader_keeps_the_model_s_promises(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = FORMATS[name](tmp_path, monkeypatch)
    assert rows, name
    read = 0
    for number, row in enumerate(rows, start=1):
        trajectory = read_attempt(row)
        read += len(trajectory.steps)
        check_steps(trajectory, f"{name} row {number}")
        shown = trace_text(row, number, trajectory)
        assert not _CONTROL.search(shown), (name, _CONTROL.findall(shown)[:5])
    assert read, f"{name}: no fixture row has steps"


def test_the_fixtures_do_hold_what_the_terminal_must_not_get(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check above can fail: the raw steps of these fixtures hold ESC (readers keep raw text).
    rows = claude_code(tmp_path, monkeypatch)
    steps = read_attempt(rows[0]).steps
    assert any("\x1b" in step.text or "\x1b" in (step.observation or "") for step in steps)


def test_a_huge_tool_output_is_capped_the_same_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = "x" * (TEXT_LIMIT * 2) + "THE END"
    lines = [sessions.prompt(0, "go"), *sessions.streamed(1), sessions.result(3, "toolu_1", huge)]
    file = sessions.session_file(tmp_path, lines)
    (row,) = sessions.ledger_rows(file, monkeypatch).values()
    agent = next(step for step in read_attempt(row).steps if step.tool_calls)
    assert agent.observation is not None and agent.observation.endswith("THE END")
    assert len(agent.observation) <= TEXT_LIMIT + 100
    assert f"({TEXT_LIMIT + 7:,} characters cut)" in agent.observation
    assert json.dumps(agent.observation)  # still one text, not a broken one
