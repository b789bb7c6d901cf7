"""Inside a promptfoo result and an OpenTelemetry GenAI trace: steps, tokens, verdict, errors.

Files are generated here in each format's shape with its traps: promptfoo's `prompt` counting
the cache reads and writes, a reply replayed from promptfoo's own cache, a provider error with
placeholder zeros; spans whose `gen_ai.usage.input_tokens` includes the cache, an agent span
repeating its chat spans' usage, a trace of several agents (one attempt each). The steps must
add up to what the loader counts for the attempt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_importers import PROMPTFOO, write_json
from tests.test_importers_otel import DOCUMENT, LINES
from tui_ledger.load import load
from tui_ledger.trajectory import (
    EQUAL,
    NOT_RECORDED,
    Opened,
    TrajectoryError,
    read_all,
    read_attempt,
    tokens_match,
)
from tui_ledger.trajectory import otel as otel_reader
from tui_ledger.trajectory import promptfoo as promptfoo_reader


def rows_of(path: Path) -> list[dict[str, Any]]:
    attempts = load([path]).attempts
    return [attempts.row(i, named=True) for i in range(attempts.height)]


def fails(opener: Callable[[dict[str, Any]], Opened], row: dict[str, Any], pattern: str) -> None:
    """Opening the row fails with a one-line TrajectoryError matching `pattern`."""
    with pytest.raises(TrajectoryError, match=pattern) as caught:
        read_all(opener(row))
    assert "\n" not in str(caught.value)


# promptfoo ------------------------------------------------------------------------------------


def result(
    number: int,
    usage: dict[str, Any] | None,
    *,
    success: bool = True,
    components: Sequence[tuple[str, bool, str]] = (),
    **more: Any,
) -> dict[str, Any]:
    """One promptfoo result; `components` are (assertion type, pass, reason)."""
    grading = {
        "pass": success,
        "score": 1 if success else 0,
        "reason": "All assertions passed" if success or not components else components[0][2],
        "componentResults": [
            {"pass": passed, "reason": reason, "assertion": {"type": kind, "value": "cats"}}
            for kind, passed, reason in components
        ],
    }
    found: dict[str, Any] = {
        "id": f"r{number}",
        "testIdx": number,
        "promptIdx": 0,
        "success": success,
        "score": 1 if success else 0,
        "prompt": {"raw": f"Tell me about cats #{number}", "label": "p"},
        "provider": {"id": "anthropic:claude", "label": "bot"},
        "response": {"output": f"answer {number}"},
        "testCase": {"description": f"case {number}", "assert": [{"type": "icontains"}]},
        "gradingResult": grading,
        **more,
    }
    if usage is not None:
        found["tokenUsage"] = usage
        found["response"]["tokenUsage"] = usage
    if not success:
        found["failureReason"] = 1
    return found


def anthropic_usage(uncached: int, output: int, reads: int, writes: int) -> dict[str, Any]:
    """promptfoo's Anthropic provider: prompt = input + cache reads + cache writes."""
    prompt = uncached + reads + writes
    return {
        "prompt": prompt,
        "completion": output,
        "total": prompt + output,
        "completionDetails": {"cacheReadInputTokens": reads, "cacheCreationInputTokens": writes},
    }


def promptfoo_results() -> list[dict[str, Any]]:
    error = result(4, None, success=False, error="API down", response=None)
    error.update(failureReason=2, tokenUsage={"prompt": 0, "completion": 0, "total": 0})
    chat = json.dumps(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Cats?"},
        ]
    )
    return [
        result(1, anthropic_usage(100, 40, 800, 60), components=[("icontains", True, "ok")]),
        result(
            2,
            {"prompt": 500, "completion": 20, "cached": 300, "total": 520},  # OpenAI-style cached
            success=False,
            components=[("icontains", False, "no cats"), ("llm-rubric", True, "fine")],
        ),
        result(3, {"cached": 700, "total": 700}, components=[("icontains", True, "ok")]),
        error,
        result(5, anthropic_usage(10, 5, 0, 0), prompt={"raw": chat, "label": "chat"}),
    ]


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    document = {"evalId": "e1", "results": {"version": 3, "results": promptfoo_results()}}
    return write_json(tmp_path / "results.json", document)


def test_promptfoo_prompt_answer_and_assertions(results_file: Path) -> None:
    rows = {row["result_id"]: row for row in rows_of(results_file)}
    first = read_attempt(rows["r1"])
    assert first.instruction == "Tell me about cats #1"
    user, agent = first.steps
    assert (user.source, user.text) == ("user", "Tell me about cats #1")
    assert (agent.source, agent.text) == ("agent", "answer 1")
    # prompt (960) counts the cache reads and writes: split as the importer splits it.
    assert (agent.input_tokens, agent.cached_input_tokens, agent.cache_write_tokens) == (
        100,
        800,
        60,
    )
    assert agent.tokens == 1000 == rows["r1"]["tokens"]

    failed = read_attempt(rows["r2"])
    assert [(test.name, test.result) for test in failed.verdict.tests] == [
        ("icontains: cats", "failed"),
        ("llm-rubric: cats", "passed"),
    ]
    assert failed.verdict.output == "no cats"
    assert failed.steps[1].cached_input_tokens == 300 and failed.steps[1].input_tokens == 200

    replay = read_attempt(rows["r3"])
    assert replay.steps[1].tokens == 700 and replay.steps[1].input_tokens is None
    assert replay.steps[1].kind == "response_cached"
    assert any("replayed from promptfoo's cache" in note for note in replay.notes)

    broken = read_attempt(rows["r4"])
    assert broken.steps[1].error and "API down" in broken.steps[1].text
    # promptfoo's placeholder zeros are unknown usage, not 0, in the row and in the step.
    assert rows["r4"]["tokens"] is None and broken.steps[1].tokens is None

    chat = read_attempt(rows["r5"])
    assert [(step.source, step.text) for step in chat.steps] == [
        ("system", "Be brief."),
        ("user", "Cats?"),
        ("agent", "answer 5"),
    ]
    for row in rows.values():
        steps = read_attempt(row).steps
        expected = (EQUAL, 0) if row["tokens"] is not None else (NOT_RECORDED, None)
        assert tokens_match(steps, row["tokens"]) == expected


def test_promptfoo_jsonl_reads_only_its_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    lines = [json.dumps(item) for item in promptfoo_results()]
    path.write_text("\n".join(lines) + "\n")
    rows = {row["result_id"]: row for row in rows_of(path)}
    assert read_attempt(rows["r2"]).steps[1].tokens == 520
    # A later line cut off mid-write does not stop an earlier result from opening.
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])
    assert read_attempt(rows["r3"]).steps[1].tokens == 700
    fails(promptfoo_reader.open, rows["r4"], r"results\.jsonl: line 4: is cut off")


def test_promptfoo_real_output_adds_up() -> None:
    for name in ("results.json", "results.jsonl", "synthetic_v2.json"):
        for row in rows_of(PROMPTFOO / name):
            trajectory = read_attempt(row)
            assert trajectory.steps[-1].source == "agent"
            expected = (EQUAL, 0) if row["tokens"] is not None else (NOT_RECORDED, None)
            assert tokens_match(trajectory.steps, row["tokens"]) == expected, row["line"]


def test_promptfoo_broken_files(results_file: Path) -> None:
    row = next(row for row in rows_of(results_file) if row["result_id"] == "r2")
    text = results_file.read_text()
    results_file.write_text(text[: text.index('"id": "r2"') + 3])
    fails(promptfoo_reader.open, row, r"results\.json: result 2: is cut off")
    results_file.write_bytes(b"\x00\xffbinary")
    fails(promptfoo_reader.open, row, r"results\.json: holds binary bytes")
    results_file.write_text('{"results": {"results": [{"success": true}, nope]}}')
    fails(promptfoo_reader.open, row, r"results\.json: result 2: is not valid JSON")
    results_file.write_text(json.dumps({"results": {"results": promptfoo_results()[2:]}}))
    fails(promptfoo_reader.open, row, r"result 2: is result r4, not r2 \(the file changed")
    results_file.unlink()
    fails(promptfoo_reader.open, row, r"results\.json: no such file")


# OpenTelemetry --------------------------------------------------------------------------------

TRACE = "a0000000000000000000000000000042"


def attribute(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {"key": key, "value": {"stringValue": value}}
    return {"key": key, "value": {"intValue": str(value)}}


def span(
    span_id: str,
    parent: str | None,
    start: int,
    operation: str,
    usage: tuple[int, int, int, int] | None = None,
    *,
    trace: str = TRACE,
    error: bool = False,
    events: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A span; `usage` = (input including the cache, output, cache reads, cache writes)."""
    attributes = [attribute("gen_ai.operation.name", operation)]
    if usage is not None:
        for key, value in zip(
            (
                "gen_ai.usage.input_tokens",
                "gen_ai.usage.output_tokens",
                "gen_ai.usage.cache_read.input_tokens",
                "gen_ai.usage.cache_creation.input_tokens",
            ),
            usage,
            strict=True,
        ):
            attributes.append(attribute(key, value))
    attributes.extend(attribute(key.replace("__", "."), value) for key, value in extra.items())
    found: dict[str, Any] = {
        "traceId": trace,
        "spanId": span_id,
        "name": f"{operation} {span_id[-2:]}",
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + start),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + start + 1),
        "attributes": attributes,
        "status": {"code": 2} if error else {},
        "events": events or [],
    }
    if parent is not None:
        found["parentSpanId"] = parent
    return found


def batch(spans: list[dict[str, Any]]) -> str:
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]})


def evaluation(name: str, label: str, explanation: str) -> dict[str, Any]:
    return {
        "name": "gen_ai.evaluation.result",
        "attributes": [
            attribute("gen_ai.evaluation.name", name),
            attribute("gen_ai.evaluation.score.label", label),
            attribute("gen_ai.evaluation.explanation", explanation),
        ],
    }


def agent_trace() -> list[dict[str, Any]]:
    """An agent span repeating its two chat spans' usage, a tool call that fails, a verdict."""
    output = json.dumps(
        [
            {
                "role": "assistant",
                "parts": [
                    {"type": "text", "content": "running the tests"},
                    {"type": "tool_call", "name": "pytest", "arguments": {"k": "x"}, "id": "t1"},
                ],
            }
        ]
    )
    question = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Fix it"}]}])
    return [
        span(
            "b000000000000001",
            None,
            0,
            "invoke_agent",
            (3500, 300, 2600, 200),
            gen_ai__agent__name="fixer",
            events=[evaluation("tests", "pass", "all green")],
        ),
        span(
            "b000000000000002",
            "b000000000000001",
            10,
            "chat",
            (1000, 100, 600, 200),
            gen_ai__input__messages=question,
            gen_ai__output__messages=output,
        ),
        span(
            "b000000000000003",
            "b000000000000001",
            20,
            "execute_tool",
            error=True,
            gen_ai__tool__name="pytest",
            gen_ai__tool__call__result="1 failed",
        ),
        span("b000000000000004", "b000000000000001", 30, "chat", (2500, 200, 2000, 0)),
    ]


def two_agents() -> list[dict[str, Any]]:
    trace = "a0000000000000000000000000000043"
    return [
        span("c000000000000000", None, 0, "workflow", trace=trace),
        span("c000000000000001", "c000000000000000", 1, "invoke_agent", trace=trace),
        span("c000000000000002", "c000000000000001", 2, "chat", (400, 50, 0, 0), trace=trace),
        span("c000000000000003", "c000000000000000", 3, "invoke_agent", trace=trace),
        span("c000000000000004", "c000000000000003", 4, "chat", (800, 80, 100, 0), trace=trace),
    ]


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    path = tmp_path / "spans.jsonl"
    spans = agent_trace()
    # The collector writes batches as spans end: the trace is spread over lines, children first.
    path.write_text(
        "\n".join([batch(spans[1:3]), batch(two_agents()), batch([spans[3], spans[0]])])
    )
    return path


def test_otel_spans_in_time_order_with_usage_counted_once(traces: Path) -> None:
    row = next(row for row in rows_of(traces) if row["trace_id"] == TRACE)
    trajectory = read_attempt(row)
    assert trajectory.instruction == "Fix it"
    steps = trajectory.steps
    assert [(step.source, step.kind) for step in steps] == [
        ("system", "invoke_agent"),
        ("agent", "chat"),
        ("tool", "execute_tool"),
        ("agent", "chat"),
    ]
    # The agent span's 3500 + 300 repeats its chats: no tokens on it.
    assert steps[0].tokens is None
    assert any("never counted twice" in note for note in trajectory.notes)
    chat = steps[1]
    # input 1000 includes 600 read and 200 written: 200 uncached.
    assert (chat.input_tokens, chat.cached_input_tokens, chat.cache_write_tokens) == (200, 600, 200)
    assert chat.tokens == 1100 and chat.text == "running the tests"
    assert chat.tool_calls[0].name == "pytest" and chat.tool_calls[0].id == "t1"
    tool = steps[2]
    assert tool.error and tool.observation == "1 failed" and tool.tool_calls[0].name == "pytest"
    assert steps[3].tokens == 2700
    assert tokens_match(steps, row["tokens"]) == (EQUAL, 0) and row["tokens"] == 3800
    assert [(test.name, test.result) for test in trajectory.verdict.tests] == [("tests", "passed")]
    assert trajectory.verdict.output == "tests: all green"


def test_otel_a_trace_of_several_agents_opens_each_agent_alone(traces: Path) -> None:
    rows = {row["span_id"]: row for row in rows_of(traces) if row["trace_id"] != TRACE}
    assert set(rows) == {"c000000000000001", "c000000000000003"}
    first = read_attempt(rows["c000000000000001"])
    assert [step.tokens for step in first.steps] == [None, 450]
    second = read_attempt(rows["c000000000000003"])
    assert [step.tokens for step in second.steps] == [None, 880]
    assert second.steps[1].input_tokens == 700 and second.steps[1].cached_input_tokens == 100


def test_otel_real_fixtures_add_up() -> None:
    for path in (DOCUMENT, LINES):
        for row in rows_of(path):
            trajectory = read_attempt(row)
            assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0), row["span_id"]


def test_otel_broken_files(traces: Path, tmp_path: Path) -> None:
    row = next(row for row in rows_of(traces) if row["trace_id"] == TRACE)
    lines = traces.read_text().splitlines()
    traces.write_text("\n".join([*lines[:2], lines[2][:60]]))  # the last batch cut mid-write
    fails(otel_reader.open, row, r"spans\.jsonl: line 3: is cut off")
    traces.write_bytes(b"\x00binary " + TRACE.encode())
    fails(otel_reader.open, row, r"spans\.jsonl: line 1: holds binary bytes")
    traces.write_text(batch(two_agents()))
    fails(otel_reader.open, row, rf"spans\.jsonl: trace {TRACE}: holds no span of this trace")
    traces.unlink()
    fails(otel_reader.open, row, r"spans\.jsonl: no such file")

    document = tmp_path / "trace.json"
    document.write_text(batch(agent_trace()))
    row = rows_of(document)[0]
    document.write_text(batch(agent_trace())[:-30])
    fails(otel_reader.open, row, r"trace\.json: resourceSpans #1: is cut off")


# The property: steps add up to the loader's count ---------------------------------------------

span_usage = st.one_of(
    st.none(),
    st.tuples(st.integers(0, 3000), st.integers(0, 300), st.integers(0, 1000), st.integers(0, 500)),
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    shape=st.lists(st.tuples(st.integers(0, 20), span_usage, st.booleans()), min_size=1, max_size=8)
)
def test_otel_steps_add_up_to_what_the_loader_counts(
    tmp_path_factory: pytest.TempPathFactory,
    shape: list[tuple[int, tuple[int, int, int, int] | None, bool]],
) -> None:
    """Any tree of spans, usage on any of them (parents rolling up or not)."""
    spans = []
    for number, (parent, usage, is_tool) in enumerate(shape):
        operation = "execute_tool" if is_tool else "chat"
        if usage is not None:
            # Input includes the cache, as the convention says; never below it.
            usage = (usage[0] + usage[2] + usage[3], usage[1], usage[2], usage[3])
        parent_id = None if number == 0 else f"d{min(parent, number - 1):015x}"
        spans.append(span(f"d{number:015x}", parent_id, number, operation, usage))
    path = tmp_path_factory.mktemp("otel") / "spans.jsonl"
    path.write_text(batch(spans) + "\n")
    (row,) = rows_of(path)
    trajectory = read_attempt(row)
    assert len(trajectory.steps) == len(shape)
    if row["tokens"] is None:
        assert trajectory.steps_tokens is None
    else:
        assert tokens_match(trajectory.steps, row["tokens"]) == (EQUAL, 0)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    usages=st.lists(
        st.tuples(
            st.integers(0, 5000), st.integers(0, 500), st.integers(0, 2000), st.integers(0, 500)
        ),
        min_size=1,
        max_size=5,
    ),
    replayed=st.lists(st.booleans(), min_size=5, max_size=5),
)
def test_promptfoo_steps_add_up_to_what_the_loader_counts(
    tmp_path_factory: pytest.TempPathFactory,
    usages: list[tuple[int, int, int, int]],
    replayed: list[bool],
) -> None:
    results = []
    for number, (uncached, output, reads, writes) in enumerate(usages, start=1):
        usage = anthropic_usage(uncached, output, reads, writes)
        if replayed[number - 1]:
            usage = {"cached": usage["total"], "total": usage["total"]}
        results.append(result(number, usage, components=[("icontains", True, "ok")]))
    folder = tmp_path_factory.mktemp("promptfoo")
    path = write_json(folder / "results.json", {"evalId": "e", "results": {"results": results}})
    for row in rows_of(path):
        steps = read_attempt(row).steps
        assert tokens_match(steps, row["tokens"]) == (EQUAL, 0)


def test_otel_a_roll_up_larger_than_its_spans_says_what_is_not_counted(tmp_path: Path) -> None:
    # Copilot-shaped: the agent span reports 1500, its one chat span 600.
    path = tmp_path / "spans.jsonl"
    path.write_text(
        batch(
            [
                span("e000000000000001", None, 0, "invoke_agent", (1000, 500, 0, 0)),
                span("e000000000000002", "e000000000000001", 1, "chat", (400, 200, 0, 0)),
            ]
        )
    )
    (row,) = rows_of(path)
    trajectory = read_attempt(row)
    assert [step.tokens for step in trajectory.steps] == [None, 600] and row["tokens"] == 600
    assert trajectory.notes[1] == (
        "span 'invoke_agent 01' reports 1,500 tokens, the spans below it 600: "
        "the other 900 are in no span, and not counted"
    )


def test_promptfoo_export_with_usage_on_the_response_only(tmp_path: Path) -> None:
    # As promptfoo's own test/__fixtures__/sample-export.json (0.118.10): no result tokenUsage.
    exported = result(1, None, components=[("latency", False, "Latency 5794ms is too slow")])
    exported["gradingResult"]["componentResults"][0]["assertion"] = {
        "type": "latency",
        "threshold": 3000,
    }
    exported["response"]["tokenUsage"] = {"total": 282, "prompt": 37, "completion": 245}
    path = write_json(tmp_path / "export.json", {"version": 4, "results": {"results": [exported]}})
    (row,) = rows_of(path)
    trajectory = read_attempt(row)
    assert row["tokens"] is None  # the importer reads the result's own tokenUsage only
    assert trajectory.steps[1].tokens == 282 and trajectory.steps[1].input_tokens == 37
    assert tokens_match(trajectory.steps, row["tokens"]) == ("differs", None)
    assert "only its response does" in trajectory.notes[0]
    assert trajectory.verdict.tests[0].name == "latency: threshold 3000"
