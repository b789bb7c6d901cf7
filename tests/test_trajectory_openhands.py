"""Inside OpenHands attempts: `output.jsonl` history events read step by step, by the row's line.

Records are built with the importer fixture's own builders (tests/fixtures/importers/openhands/
make_fixture.py: `legacy_line`, `usage`), their `history` filled in the shapes OpenHands writes
(legacy events with `id`/`cause`, per-event `llm_metrics` running totals; the SDK's
ActionEvent/ObservationEvent), each trap by hand: running totals that must be differenced,
per-call `token_usages`, usage only inside each response, no history, a line among many.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_ledger.load import load
from tui_ledger.trajectory import (
    DIFFERS,
    EQUAL,
    NOT_RECORDED,
    TrajectoryError,
    openhands,
    read_all,
    read_attempt,
    tokens_match,
)

_SPEC = importlib.util.spec_from_file_location(
    "openhands_fixture",
    Path(__file__).parent / "fixtures" / "importers" / "openhands" / "make_fixture.py",
)
assert _SPEC is not None and _SPEC.loader is not None
FIXTURE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(FIXTURE)
MODEL = "anthropic/claude-3-5-sonnet-20241022"


def rows(folder: Path) -> list[dict[str, Any]]:
    """The loaded attempts, each `source` joined to the folder opened (as the app does)."""
    attempts = load([folder]).attempts
    return [
        {**row, "source": str(folder / row["source"])}
        for row in (attempts.row(index, named=True) for index in range(attempts.height))
    ]


def metrics(calls: list[tuple[int, int, int, int]], *, per_call: bool = True) -> dict[str, Any]:
    """A record's metrics: the total of `calls` (prompt, completion, reads, writes) and, with
    `per_call`, one token_usages entry per call named resp-<n>."""
    total = [sum(call[i] for call in calls) for i in range(4)]
    return {
        "accumulated_cost": 0.1,
        "accumulated_token_usage": FIXTURE.usage(MODEL, *total),
        "costs": [],
        "response_latencies": [],
        "token_usages": [
            {**FIXTURE.usage(MODEL, *call), "response_id": f"resp-{n}"}
            for n, call in enumerate(calls)
        ]
        if per_call
        else [],
    }


def history(calls: list[tuple[int, int, int, int]], *, running: bool = True) -> list[dict]:
    """A legacy history: the system prompt, the task, then per call an action (with its
    response id and, with `running`, the llm_metrics running total) and the observation it
    caused."""
    events: list[dict[str, Any]] = [
        {"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands"}},
        {"id": 1, "source": "user", "action": "message", "args": {"content": "Fix the issue"}},
    ]
    so_far = [0, 0, 0, 0]
    for n, call in enumerate(calls):
        so_far = [a + b for a, b in zip(so_far, call, strict=True)]
        action: dict[str, Any] = {
            "id": 2 + 2 * n,
            "timestamp": "2025-04-30T16:32:57",
            "source": "agent",
            "action": "run",
            "args": {"command": f"ls {n}", "thought": f"step {n}"},
            "tool_call_metadata": {
                "function_name": "execute_bash",
                "tool_call_id": f"toolu_{n}",
                "model_response": {"id": f"resp-{n}", "usage": {}},
            },
        }
        if running:
            action["llm_metrics"] = {"accumulated_token_usage": FIXTURE.usage(MODEL, *so_far)}
        events.append(action)
        events.append(
            {
                "id": 3 + 2 * n,
                "source": "environment" if n % 2 else "agent",
                "cause": 2 + 2 * n,
                "observation": "run",
                "content": f"output {n}",
                "extras": {"metadata": {"exit_code": 1 if n == 1 else 0}},
            }
        )
    return events


def write_run(folder: Path, records: list[dict[str, Any]]) -> Path:
    FIXTURE.write_jsonl(folder / "output.jsonl", records)
    return folder


CALLS = [(1000, 100, 0, 800), (1500, 50, 900, 100), (2000, 70, 1400, 0)]


def test_running_totals_become_each_steps_own(tmp_path: Path) -> None:
    record = FIXTURE.legacy_line("django__django-11099", MODEL, metrics(CALLS))
    record["history"] = history(CALLS)
    (row,) = rows(write_run(tmp_path / "run", [record]))
    trajectory = read_attempt(row)
    assert [step.source for step in trajectory.steps] == [
        "system",
        "user",
        "agent",
        "agent",
        "agent",
    ]
    calls = trajectory.steps[2:]
    # Each step its own call, never the running total (which would be 1100, 2650, 4720).
    assert [step.tokens for step in calls] == [1100, 1550, 2070]
    # prompt 1500 holds 900 read + 100 written: 500 uncached.
    assert (
        calls[1].input_tokens,
        calls[1].cached_input_tokens,
        calls[1].cache_write_tokens,
        calls[1].output_tokens,
    ) == (500, 900, 100, 50)
    assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)
    assert row["tokens"] == 4720
    # Each action carries the observation it caused; the failed command is an error.
    assert [step.observation for step in calls] == ["output 0", "output 1", "output 2"]
    assert [step.error for step in calls] == [False, True, False]
    assert calls[0].tool_calls[0].name == "execute_bash"
    assert json.loads(calls[0].tool_calls[0].arguments) == {"command": "ls 0"}
    assert calls[0].text == "step 0" and trajectory.instruction == "Fix the issue"


def test_a_running_total_on_an_observation_counts_on_its_action(tmp_path: Path) -> None:
    record = FIXTURE.legacy_line("django__django-11099", MODEL, metrics(CALLS))
    events = history(CALLS)
    # The second call's running total written on the observation, not on its action.
    events[5]["llm_metrics"] = events[4].pop("llm_metrics")
    record["history"] = events
    (row,) = rows(write_run(tmp_path / "run", [record]))
    trajectory = read_attempt(row)
    assert [step.tokens for step in trajectory.steps][2:] == [1100, 1550, 2070]
    assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)


def test_per_call_token_usages_by_response_id(tmp_path: Path) -> None:
    record = FIXTURE.legacy_line("django__django-11099", MODEL, metrics(CALLS))
    record["history"] = history(CALLS, running=False)
    (row,) = rows(write_run(tmp_path / "run", [record]))
    trajectory = read_attempt(row)
    assert [step.tokens for step in trajectory.steps] == [None, None, 1100, 1550, 2070]
    assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)
    # A call no event names is said, not spread over the steps.
    record["metrics"] = metrics([*CALLS, (300, 30, 0, 0)])
    (row,) = rows(write_run(tmp_path / "run", [record]))
    trajectory = read_attempt(row)
    assert tokens_match(trajectory.steps, row["tokens"]) == (DIFFERS, -330)
    assert any("330 tokens in metrics.token_usages" in note for note in trajectory.notes)


def test_usage_only_inside_each_response_and_none_at_all(tmp_path: Path) -> None:
    old = {"accumulated_cost": 0.0, "costs": [], "response_latencies": [], "condenser": []}
    record = FIXTURE.legacy_line("flask__flask-4045", MODEL, old)
    record["history"] = history(CALLS[:2], running=False)
    for event in record["history"]:
        response = event.get("tool_call_metadata", {}).get("model_response")
        if response is not None:
            response["usage"] = {"prompt_tokens": 700, "completion_tokens": 30}
    bare = FIXTURE.legacy_line("requests__requests-2317", MODEL, old)
    bare["history"] = history(CALLS[:1], running=False)
    first, second = rows(write_run(tmp_path / "run", [record, bare]))
    assert first["tokens"] is None  # the ledger counts no usage for these records
    trajectory = read_attempt(first)
    assert [step.tokens for step in trajectory.steps if step.tokens] == [730, 730]
    assert tokens_match(trajectory.steps, first["tokens"]) == (DIFFERS, None)
    assert "the ledger counts none" in trajectory.notes[0]
    trajectory = read_attempt(second)
    assert tokens_match(trajectory.steps, second["tokens"]) == (NOT_RECORDED, None)


def test_sdk_events_pair_by_action_id(tmp_path: Path) -> None:
    record = FIXTURE.legacy_line("pydata__xarray-4094", MODEL, metrics(CALLS[:1]))
    record["history"] = [
        {
            "kind": "SystemPromptEvent",
            "id": "e0",
            "source": "agent",
            "system_prompt": {"type": "text", "text": "You are OpenHands"},
        },
        {
            "kind": "MessageEvent",
            "id": "e1",
            "source": "user",
            "llm_message": {"role": "user", "content": [{"type": "text", "text": "Fix it"}]},
        },
        {
            "kind": "ActionEvent",
            "id": "e2",
            "source": "agent",
            "thought": [{"type": "text", "text": "Let me look"}],
            "action": {"kind": "ExecuteBashAction", "command": "ls"},
            "tool_name": "execute_bash",
            "tool_call_id": "call-1",
            "llm_response_id": "resp-0",
        },
        {
            "kind": "ObservationEvent",
            "id": "e3",
            "source": "environment",
            "action_id": "e2",
            "tool_call_id": "call-1",
            "observation": {"kind": "ExecuteBashObservation", "content": [{"text": "setup.py"}]},
        },
        {"kind": "ObservationEvent", "id": "e4", "source": "environment", "observation": {}},
        {"kind": "TokenEvent", "id": "e5", "source": "agent", "prompt_token_ids": [1, 2]},
        {
            "kind": "ActionEvent",
            "id": "e6",
            "source": "agent",
            "action": {"kind": "ExecuteBashAction", "command": "false"},
            "tool_name": "execute_bash",
            "tool_call_id": "call-2",
        },
        {
            "kind": "ObservationEvent",
            "id": "e7",
            "source": "environment",
            "action_id": "e6",
            "observation": {"content": [{"type": "text", "text": "no"}], "is_error": True},
        },
    ]
    (row,) = rows(write_run(tmp_path / "run", [record]))
    trajectory = read_attempt(row)
    sources = [step.source for step in trajectory.steps]
    assert sources == ["system", "user", "agent", "tool", "agent"]  # the TokenEvent is no step
    assert [step.error for step in trajectory.steps] == [False, False, False, False, True]
    action = trajectory.steps[2]
    assert (action.text, action.observation, action.tokens) == ("Let me look", "setup.py", 1100)
    assert action.tool_calls[0].name == "execute_bash" and action.tool_calls[0].id == "call-1"
    assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)


def test_critic_tries_are_one_attempt_read_try_by_try(tmp_path: Path) -> None:
    run = tmp_path / "sdk-run"
    shutil.copytree(FIXTURE.HERE / "sdk-run", run)
    first_calls, second_calls = CALLS[:2], CALLS[2:]
    for name, calls in (("output.critic_attempt_1.jsonl", first_calls),):
        records = [json.loads(text) for text in (run / name).read_text().splitlines()]
        for record in records:
            if record["instance_id"] == "pylint-dev__pylint-7080":
                record["metrics"] = metrics(calls)
                record["history"] = history(calls)
        FIXTURE.write_jsonl(run / name, records)
    (second,) = [
        json.loads(text)
        for text in (run / "output.critic_attempt_2.jsonl").read_text().splitlines()
    ]
    second["metrics"] = metrics(second_calls)
    second["history"] = history(second_calls)
    FIXTURE.write_jsonl(run / "output.critic_attempt_2.jsonl", [second])
    by_task = {row["task"]: row for row in rows(run)}
    row = by_task["pylint-dev__pylint-7080"]
    assert row["critic_tries"] == 2 and row["source"].endswith("critic_attempt_2.jsonl")
    trajectory = read_attempt(row)
    calls = [step for step in trajectory.steps if step.tokens is not None]
    assert [(step.agent, step.tokens) for step in calls] == [
        ("try 1", 1100),
        ("try 1", 1550),
        ("try 2", 2070),
    ]
    assert [step.index for step in trajectory.steps] == list(range(1, 8))
    assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)
    assert len(trajectory.files) == 2 and "critic ran 2 tries" in trajectory.notes[0]
    # The instance tried once is read alone, unmarked.
    alone = read_attempt(by_task["pydata__xarray-4094"])
    assert alone.steps == () and not alone.notes


def test_no_history_opens_to_no_steps_and_says_so(tmp_path: Path) -> None:
    record = FIXTURE.legacy_line("django__django-11099", MODEL, metrics(CALLS))
    (row,) = rows(write_run(tmp_path / "run", [record]))
    trajectory = read_attempt(row)
    assert trajectory.steps == ()
    assert "the record keeps none" in trajectory.looked_for[0]


def test_the_evaluation_report_tests_by_name(tmp_path: Path) -> None:
    status = {
        "FAIL_TO_PASS": {"success": ["test_x"], "failure": []},
        "PASS_TO_PASS": {"success": ["test_y"], "failure": ["test_z"]},
    }
    record = FIXTURE.legacy_line(
        "django__django-11099",
        MODEL,
        metrics(CALLS),
        report={"resolved": False, "tests_status": status},
    )
    record["history"] = history(CALLS)
    (row,) = rows(write_run(tmp_path / "run", [record]))
    verdict = read_attempt(row).verdict
    assert [(test.name, test.result) for test in verdict.tests] == [
        ("test_x", "passed"),
        ("test_y", "passed"),
        ("test_z", "failed"),
    ]


def test_the_evaluation_folder_beside_the_output(tmp_path: Path) -> None:
    record = FIXTURE.legacy_line(
        "astropy__astropy-12907", MODEL, metrics(CALLS), report={"resolved": False}
    )
    record["history"] = history(CALLS)
    (row,) = rows(write_run(tmp_path / "run", [record]))
    trajectory = read_attempt(row)
    assert trajectory.verdict.tests == ()
    assert "the evaluation says unresolved; it kept no tests by name" in trajectory.notes[0]
    # eval_infer.py's per-instance folder: its report.json and test_output.txt.
    folder = tmp_path / "run" / "eval_outputs" / "astropy__astropy-12907"
    status = {"FAIL_TO_PASS": {"success": [], "failure": ["test_sep"]}}
    FIXTURE.write_jsonl(
        folder / "report.json", [{"astropy__astropy-12907": {"tests_status": status}}]
    )
    (folder / "test_output.txt").write_text("FAILED test_sep\n")
    trajectory = read_attempt(row)
    assert [(test.name, test.result) for test in trajectory.verdict.tests] == [
        ("test_sep", "failed")
    ]
    assert trajectory.verdict.output == "FAILED test_sep\n"
    assert trajectory.files[1:] == (str(folder / "report.json"), str(folder / "test_output.txt"))


def test_only_the_rows_line_is_parsed(tmp_path: Path) -> None:
    record = FIXTURE.legacy_line("django__django-11099", MODEL, metrics(CALLS))
    record["history"] = history(CALLS)
    (row,) = rows(write_run(tmp_path / "run", [record]))
    file = Path(row["source"])
    # The lines before and after the row's are not JSON: they are skipped, never parsed.
    file.write_text("{not json\n" * 3 + json.dumps(record) + "\n" + "\x00garbage\n")
    trajectory = read_all(openhands.open({**row, "line": 4}))
    assert [step.tokens for step in trajectory.steps][2:] == [1100, 1550, 2070]
    assert trajectory.files == (str(file),)


def test_a_large_output_file_is_not_held_whole(tmp_path: Path) -> None:
    record = FIXTURE.legacy_line("django__django-11099", MODEL, metrics(CALLS))
    record["history"] = history(CALLS)
    filler = json.dumps({**record, "instance": {"padding": "x" * 100_000}}) + "\n"
    file = tmp_path / "output.jsonl"
    with file.open("w") as handle:
        for _ in range(500):  # 50 MB of other records
            handle.write(filler)
        handle.write(json.dumps(record) + "\n")
    size = file.stat().st_size
    assert size > 50_000_000
    tracemalloc.start()
    try:
        trajectory = read_all(openhands.open({"source": str(file), "line": 501}))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(trajectory.steps) == 5
    assert peak < 2 * size
    assert peak < size // 10  # in fact: a line at a time


def test_one_large_record_costs_its_text_and_its_objects(tmp_path: Path) -> None:
    events: list[dict[str, Any]] = []
    for n in range(500):
        events.append({"id": 2 * n, "source": "agent", "action": "message", "args": {}})
        events[-1]["args"]["content"] = "x" * 10_000
        events.append(
            {"id": 2 * n + 1, "cause": 2 * n, "observation": "run", "content": "y" * 10_000}
        )
    file = tmp_path / "output.jsonl"
    file.write_text(json.dumps({"instance_id": "a", "history": events}) + "\n")
    size = file.stat().st_size
    tracemalloc.start()
    try:
        trajectory = read_all(openhands.open({"source": str(file), "line": 1}))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(trajectory.steps) == 500
    # The line's bytes are gone before its objects are made (3x when they were kept).
    assert peak < 2.5 * size


@pytest.mark.parametrize(
    ("content", "line", "problem"),
    [
        ('{"instance_id": "a", "history": [', 1, "line 1: is cut off mid-record"),
        ("not json\n", 1, "line 1: is not valid JSON"),
        ('{"a": "\x00"}\n', 1, "line 1: holds binary bytes"),
        ("[1]\n", 1, "line 1: is not an OpenHands output record"),
        ("{}\n", 2, "has no line 2"),
        ("\n{}\n", 1, "line 1: is blank"),
        ('{"history": 3}\n', 1, "line 1: history is not a list"),
    ],
)
def test_a_broken_record_is_one_line_naming_file_and_line(
    tmp_path: Path, content: str, line: int, problem: str
) -> None:
    file = tmp_path / "output.jsonl"
    file.write_text(content)
    with pytest.raises(TrajectoryError) as caught:
        read_all(openhands.open({"source": str(file), "line": line}))
    message = str(caught.value)
    assert message.startswith(f"{file}: ") and problem in message and "\n" not in message


def test_a_missing_output_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(TrajectoryError, match=r"output\.jsonl: no such file"):
        openhands.open({"source": str(tmp_path / "output.jsonl"), "line": 1})


CALL = st.tuples(
    st.integers(0, 5000),  # prompt, holding the cache below
    st.integers(0, 2000),  # completion
    st.integers(0, 2000),  # reads
    st.integers(0, 2000),  # writes
).map(lambda call: (call[0] + call[2] + call[3], call[1], call[2], call[3]))


@settings(max_examples=25)
@given(
    records=st.lists(
        st.tuples(st.lists(CALL, min_size=1, max_size=5), st.booleans()), min_size=1, max_size=3
    )
)
def test_steps_add_up_to_what_the_loader_counts(
    tmp_path_factory: pytest.TempPathFactory,
    records: list[tuple[list[tuple[int, int, int, int]], bool]],
) -> None:
    lines = []
    for number, (calls, running) in enumerate(records):
        record = FIXTURE.legacy_line(f"repo__repo-{number}", MODEL, metrics(calls))
        record["history"] = history(calls, running=running)
        lines.append(record)
    for row in rows(write_run(tmp_path_factory.mktemp("run"), lines)):
        trajectory = read_attempt(row)
        assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0), row["task"]
