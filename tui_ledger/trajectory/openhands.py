"""Inside an OpenHands attempt: the `history` of its `output.jsonl` record, and its evaluation.

The record is found by the row's `line`: the lines before it are skipped unparsed, so a large
output file is never held whole. Events become steps: an action (legacy `action`, the SDK's
`ActionEvent`) is a step of its event's source (agent, user; environment -> tool), and the
observation caused by it (`cause` = the action's `id`, the SDK's `action_id` / `tool_call_id`)
is that step's observation; an observation nothing caused is a step of its own.

Tokens per step, from what the record keeps, never a running total as a step's own:
- events carrying `llm_metrics.accumulated_token_usage` (a running total at that event): each
  step's own is its total minus the previous one;
- else `metrics.token_usages` (one entry per call, by `response_id`): each call's usage on the
  first event of that response (`tool_call_metadata.model_response.id`, the SDK's
  `llm_response_id`);
- else each response's own `tool_call_metadata.model_response.usage` (old versions, whose
  records the ledger counts no usage for).
Buckets follow the importer: litellm's prompt_tokens holds the cache, so input = prompt -
reads - writes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from tui_ledger.trajectory.files import (
    lines,
    load_document,
    load_line,
    parse_line,
    read_text_tail,
    row_line,
    source_file,
)
from tui_ledger.trajectory.harness_files import (
    as_object,
    count,
    litellm_buckets,
    report_tests,
)
from tui_ledger.trajectory.model import (
    Opened,
    Step,
    Test,
    ToolCall,
    TrajectoryError,
    Verdict,
    Who,
)
from tui_ledger.trajectory.text import (
    NO_BUCKETS,
    Buckets,
    arguments_text,
    content_text,
    iso_time,
    looked_for,
    make_step,
)

_SOURCES: dict[str, Who] = {"agent": "agent", "user": "user", "environment": "tool"}
# The SDK's events that record the conversation's machinery, not a step of it.
_BOOKKEEPING = frozenset({"TokenEvent", "ConversationStateUpdateEvent", "PauseEvent"})
_CRITIC_FILE = re.compile(r"^output\.critic_attempt_(\d+)\.jsonl$")


def open(row: Mapping[str, Any]) -> Opened:
    path = source_file(row, "history")
    line = row_line(row, path)
    record = _record(load_line(path, line), path, line)
    verdict, verdict_files, notes = _verdict(record, path, f"{path}: line {line}")
    instruction = record.get("instruction")
    instruction = content_text(instruction) if instruction is not None else None
    tries = [*_earlier_tries(path, record), (path, line, record)]
    files = [str(file) for file, _, _ in tries] + verdict_files
    if len(tries) > 1:
        notes.append(
            f"the critic ran {len(tries)} tries, all counted by the ledger: each step is marked "
            "with its try; the verdict is the last try's"
        )
    read = []
    for number, (file, at, document) in enumerate(tries, start=1):
        history = document.get("history")
        if not history:
            continue
        for index, event in enumerate(history):
            if not isinstance(event, dict):
                raise TrajectoryError(f"{file}: line {at}: history[{index}] is not an object")
        usage, usage_notes = _usage_by_event(history, document, file, f"line {at}")
        label = f"try {_try_number(document, number)}" if len(tries) > 1 else None
        read.append((history, usage, label))
        notes.extend(f"{label}: {note}" if label else note for note in usage_notes)
    if not read:
        return Opened(
            files=files,
            instruction=instruction,
            verdict=verdict,
            steps=iter(()),
            looked_for=[
                looked_for("history events", f"{path} line {line}", "the record keeps none")
            ],
            notes=notes,
        )
    return Opened(
        files=files,
        instruction=instruction,
        verdict=verdict,
        steps=_numbered(read),
        notes=notes,
    )


def _record(document: Any, path: Path, line: int) -> dict[str, Any]:
    where = f"{path}: line {line}"
    if not isinstance(document, dict):
        raise TrajectoryError(f"{where}: is not an OpenHands output record (not an object)")
    history = document.get("history")
    if history is not None and not isinstance(history, list):
        raise TrajectoryError(f"{where}: history is not a list")
    return document


def _try_number(document: Mapping[str, Any], position: int) -> int:
    attempt = document.get("attempt")
    return attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else position


def _earlier_tries(path: Path, record: Mapping[str, Any]) -> list[tuple[Path, int, dict]]:
    """The instance's other critic tries (`output.critic_attempt_<n>.jsonl` beside this one),
    which the importer merged into this row: found by the instance id in each line's raw text
    and parsed only then."""
    match = _CRITIC_FILE.match(path.name)
    instance = record.get("instance_id")
    if match is None or not isinstance(instance, str):
        return []
    needle = json.dumps(instance).encode()
    found: list[tuple[int, Path, int, dict]] = []
    others = sorted(
        (int(other_match.group(1)), other)
        for other in path.parent.iterdir()
        if (other_match := _CRITIC_FILE.match(other.name)) and other.name != path.name
    )
    for order, other in others:
        for number, raw in lines(other):
            if needle not in raw:
                continue
            document = _record(parse_line(raw, other, number), other, number)
            if document.get("instance_id") == instance:
                found.append((_try_number(document, order), other, number, document))
    mine = _try_number(record, int(match.group(1)))
    found = [entry for entry in found if entry[0] < mine]
    found.sort(key=lambda entry: entry[0])
    return [(file, number, document) for _, file, number, document in found]


def _numbered(
    read: list[tuple[list[dict[str, Any]], dict[int, Buckets], str | None]],
) -> Iterator[Step]:
    index = 0
    for history, usage, label in read:
        for step in _steps(history, usage):
            index += 1
            yield replace(step, index=index, agent=label)


# --- events -> steps --------------------------------------------------------------------------


def _is_action(event: Mapping[str, Any]) -> bool:
    kind = event.get("kind")
    if isinstance(kind, str):
        return kind in ("ActionEvent", "MessageEvent", "SystemPromptEvent")
    return "action" in event and "observation" not in event


def _is_observation(event: Mapping[str, Any]) -> bool:
    kind = event.get("kind")
    if isinstance(kind, str):
        return kind.endswith("ObservationEvent") or kind in (
            "AgentErrorEvent",
            "UserRejectObservation",
        )
    return "observation" in event


def _cause(event: Mapping[str, Any]) -> Any:
    for key in ("cause", "action_id", "tool_call_id"):
        value = event.get(key)
        if value is not None:
            return value
    return None


def _keys(event: Mapping[str, Any]) -> list[Any]:
    keys = [event.get("id")]
    if isinstance(event.get("tool_call_id"), str):
        keys.append(event["tool_call_id"])
    return [key for key in keys if key is not None]


def _steps(history: list[dict[str, Any]], usage: dict[int, Buckets]) -> Iterator[Step]:
    # Pair each observation with the action that caused it (its id) before yielding.
    pending: dict[Any, int] = {}
    answered: dict[int, list[str]] = {}
    attached: set[int] = set()
    errors: set[int] = set()
    for position, event in enumerate(history):
        if _is_action(event):
            for key in _keys(event):
                pending.setdefault(key, position)
        elif _is_observation(event):
            cause = _cause(event)
            owner = pending.get(cause) if cause is not None else None
            if owner is not None:
                answered.setdefault(owner, []).append(_observation_text(event))
                attached.add(position)
                usage = _moved(usage, position, owner)
                if _failed(event):
                    errors.add(owner)
    index = 0
    for position, event in enumerate(history):
        if position in attached or event.get("kind") in _BOOKKEEPING:
            continue
        index += 1
        buckets = usage.get(position, NO_BUCKETS)
        observed = answered.get(position)
        action = _is_action(event)
        yield make_step(
            index,
            _source(event),
            _action_text(event) if action else _observation_text(event),
            tool_calls=_calls(event) if action else (),
            observation="\n".join(observed) if observed else None,
            buckets=buckets,
            timestamp=iso_time(event.get("timestamp")),
            error=position in errors or _failed(event),
            kind=_kind(event),
        )


def _moved(usage: dict[int, Buckets], position: int, owner: int) -> dict[int, Buckets]:
    """Usage an observation carries, counted on the action it answers (its step)."""
    if position not in usage:
        return usage
    moved = dict(usage)
    theirs = moved.pop(position)
    mine = moved.get(owner, NO_BUCKETS)
    if all(value is None for value in mine):
        moved[owner] = theirs
    else:
        moved[owner] = tuple(  # type: ignore[assignment]
            None if a is None and b is None else (a or 0) + (b or 0)
            for a, b in zip(mine, theirs, strict=True)
        )
    return moved


def _source(event: Mapping[str, Any]) -> Who:
    source = event.get("source")
    if event.get("action") == "system" or event.get("kind") == "SystemPromptEvent":
        return "system"
    if isinstance(source, str) and source in _SOURCES:
        return _SOURCES[source]
    return "tool" if _is_observation(event) else "agent"


def _kind(event: Mapping[str, Any]) -> str | None:
    kind = event.get("kind")
    if isinstance(kind, str):
        return None if kind in ("ActionEvent", "MessageEvent") else kind
    word = event.get("action") or event.get("observation")
    return word if isinstance(word, str) and word not in ("message", "run") else None


def _action_text(event: Mapping[str, Any]) -> str:
    if isinstance(event.get("kind"), str):  # the SDK
        message = event.get("llm_message")
        if isinstance(message, dict):
            return content_text(message.get("content"))
        if event.get("kind") == "SystemPromptEvent":
            return content_text(event.get("system_prompt"))
        thought = content_text(event.get("thought"))
        return thought or content_text(event.get("reasoning_content"))
    args = as_object(event.get("args"))
    for key in ("thought", "content", "final_thought"):
        text = args.get(key)
        if isinstance(text, str) and text:
            return text
    message = event.get("message")
    return message if isinstance(message, str) else ""


def _observation_text(event: Mapping[str, Any]) -> str:
    observation = event.get("observation")
    if isinstance(observation, dict):  # the SDK: an observation object
        return content_text(observation.get("content", observation.get("output", observation)))
    if isinstance(event.get("kind"), str):
        return content_text(event.get("error", event.get("content")))
    content = event.get("content")
    if isinstance(content, str):
        return content
    message = event.get("message")
    return message if isinstance(message, str) else ""


def _failed(event: Mapping[str, Any]) -> bool:
    if event.get("observation") == "error" or event.get("kind") == "AgentErrorEvent":
        return True
    observation = event.get("observation")
    if isinstance(observation, dict) and observation.get("is_error") is True:
        return True  # the SDK's tool observation that failed
    extras = event.get("extras")
    metadata = extras.get("metadata") if isinstance(extras, dict) else None
    code = metadata.get("exit_code") if isinstance(metadata, dict) else None
    if code is None and isinstance(extras, dict):
        code = extras.get("exit_code")
    if code is None:
        code = event.get("exit_code")
    return isinstance(code, int) and not isinstance(code, bool) and code not in (0, -1)


def _calls(event: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    if event.get("kind") == "ActionEvent":
        action = event.get("action")
        name = event.get("tool_name")
        arguments = action if action is not None else ""
        return (
            ToolCall(
                name=str(name or "tool"),
                arguments=arguments_text(arguments),
                id=event.get("tool_call_id")
                if isinstance(event.get("tool_call_id"), str)
                else None,
            ),
        )
    action = event.get("action")
    if not isinstance(action, str) or action in ("message", "system", "recall", "think", "finish"):
        return ()
    metadata = event.get("tool_call_metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    args = as_object(event.get("args"))
    shown = {k: v for k, v in args.items() if k not in ("thought", "security_risk", "is_input")}
    tool_id = metadata.get("tool_call_id")
    return (
        ToolCall(
            name=str(metadata.get("function_name") or action),
            arguments=arguments_text(shown),
            id=tool_id if isinstance(tool_id, str) else None,
        ),
    )


# --- usage ------------------------------------------------------------------------------------


def _response_id(event: Mapping[str, Any]) -> str | None:
    value = event.get("llm_response_id")
    if isinstance(value, str) and value:
        return value
    metadata = event.get("tool_call_metadata")
    response = metadata.get("model_response") if isinstance(metadata, dict) else None
    value = response.get("id") if isinstance(response, dict) else None
    return value if isinstance(value, str) and value else None


def _usage_by_event(
    history: list[dict[str, Any]], record: Mapping[str, Any], path: Path, line: str
) -> tuple[dict[int, Buckets], list[str]]:
    """Each event's own usage (by position in history), and what the reader knows of it."""
    snapshots = [
        (position, event["llm_metrics"]["accumulated_token_usage"])
        for position, event in enumerate(history)
        if isinstance(event.get("llm_metrics"), dict)
        and isinstance(event["llm_metrics"].get("accumulated_token_usage"), dict)
    ]
    if snapshots:
        return _differences(snapshots, record, path, line)
    metrics = record.get("metrics")
    per_call = metrics.get("token_usages") if isinstance(metrics, dict) else None
    if isinstance(per_call, list) and per_call:
        return _per_call(history, per_call, path, line)
    found: dict[int, Buckets] = {}
    seen: set[str] = set()
    for position, event in enumerate(history):
        response_id = _response_id(event)
        if response_id is None or response_id in seen:
            continue
        metadata = event["tool_call_metadata"]
        usage = metadata["model_response"].get("usage")
        if isinstance(usage, dict):
            seen.add(response_id)
            where = f"{line}: history[{position}].tool_call_metadata.model_response.usage"
            buckets = litellm_buckets(usage, path, where)
            if any(value is not None for value in buckets):
                found[position] = buckets
    if found:
        return found, [
            "per-call usage from each response (tool_call_metadata.model_response.usage); "
            "the record's metrics keep no token totals, so the ledger counts none"
        ]
    return {}, ["OpenHands kept no token usage for this record: not recorded per step"]


def _differences(
    snapshots: list[tuple[int, dict[str, Any]]],
    record: Mapping[str, Any],
    path: Path,
    line: str,
) -> tuple[dict[int, Buckets], list[str]]:
    found: dict[int, Buckets] = {}
    previous = (0, 0, 0, 0)
    notes = []
    for position, usage in snapshots:
        where = f"{line}: history[{position}].llm_metrics.accumulated_token_usage"
        current = _raw(usage, path, where)
        own = tuple(now - before for now, before in zip(current, previous, strict=True))
        if any(value < 0 for value in own):
            notes.append(
                f"history[{position}]'s running total went down (a new LLM's metrics?): "
                "its step counts it whole"
            )
            own = current
        previous = current
        # 0 is what the running total says of this step (a second action of one response).
        found[position] = _split(own)  # type: ignore[arg-type]
    metrics = record.get("metrics")
    final = metrics.get("accumulated_token_usage") if isinstance(metrics, dict) else None
    if isinstance(final, dict):
        total = _raw(final, path, f"{line}: metrics.accumulated_token_usage")
        after = sum(total[:2]) - sum(previous[:2])
        if after > 0:
            notes.append(
                f"{after} tokens of the record's total were spent after the last step's running "
                "total (calls no event records): the steps' sum is short by them"
            )
    return found, notes


def _raw(usage: Mapping[str, Any], path: Path, where: str) -> tuple[int, int, int, int]:
    """(prompt, completion, reads, writes) as recorded, 0 where absent."""
    return (
        count(usage.get("prompt_tokens"), path, f"{where}.prompt_tokens") or 0,
        count(usage.get("completion_tokens"), path, f"{where}.completion_tokens") or 0,
        count(usage.get("cache_read_tokens"), path, f"{where}.cache_read_tokens") or 0,
        count(usage.get("cache_write_tokens"), path, f"{where}.cache_write_tokens") or 0,
    )


def _split(raw: tuple[int, int, int, int]) -> Buckets:
    prompt, completion, reads, writes = raw
    cache = reads + writes
    uncached = prompt - cache if prompt >= cache else prompt
    return uncached, reads, writes, completion


def _per_call(
    history: list[dict[str, Any]], per_call: list[Any], path: Path, line: str
) -> tuple[dict[int, Buckets], list[str]]:
    first_event: dict[str, int] = {}
    for position, event in enumerate(history):
        response_id = _response_id(event)
        if response_id is not None:
            first_event.setdefault(response_id, position)
    found: dict[int, Buckets] = {}
    unmatched = 0
    for number, usage in enumerate(per_call):
        if not isinstance(usage, dict):
            raise TrajectoryError(
                f"{path}: {line}: metrics.token_usages[{number}] is not an object"
            )
        raw = _raw(usage, path, f"{line}: metrics.token_usages[{number}]")
        owner = first_event.get(str(usage.get("response_id")))
        if owner is None:
            unmatched += sum(raw[:2])
            continue
        before = found.get(owner)
        own = _split(raw)
        if before is not None:  # two calls behind one event: add them up
            own = tuple((a or 0) + (b or 0) for a, b in zip(before, own, strict=True))  # type: ignore[assignment]
        found[owner] = own
    notes = []
    if unmatched:
        notes.append(
            f"{unmatched} tokens in metrics.token_usages belong to calls no event names "
            "(their response_id is in no event): the steps' sum is short by them"
        )
    return found, notes


# --- the verdict ------------------------------------------------------------------------------


def _verdict(
    record: Mapping[str, Any], path: Path, where: str
) -> tuple[Verdict, list[str], list[str]]:
    test_result = record.get("test_result")
    report = record.get("report")
    if report is None and isinstance(test_result, dict):
        report = test_result.get("report")
    tests: list[Test] = []
    if isinstance(report, dict):
        tests = list(report_tests(report, where, strict=False))
    output = None
    files: list[str] = []
    if isinstance(test_result, dict):
        for key in ("test_output", "output"):
            if isinstance(test_result.get(key), str):
                output = test_result[key]
                break
    instance = record.get("instance_id")
    if isinstance(instance, str) and instance:
        folder = path.parent / "eval_outputs" / instance
        if not tests and (folder / "report.json").is_file():
            tests = _tests_from_file(folder / "report.json", instance)
            files.append(str(folder / "report.json"))
        if output is None and (folder / "test_output.txt").is_file():
            output = read_text_tail(folder / "test_output.txt")
            files.append(str(folder / "test_output.txt"))
    notes = []
    if not tests and isinstance(report, dict) and isinstance(report.get("resolved"), bool):
        word = "resolved" if report["resolved"] else "unresolved"
        notes.append(f"the evaluation says {word}; it kept no tests by name for this record")
    return Verdict(tests=tuple(tests), output=output), files, notes


def _tests_from_file(file: Path, instance: str) -> list[Test]:
    document = load_document(file)
    if isinstance(document, dict) and isinstance(document.get(instance), dict):
        document = document[instance]
    return list(report_tests(document, file, strict=False)) if isinstance(document, dict) else []


__all__ = ["open"]
