"""Inside an Inspect AI attempt: one sample's events (or its messages) as steps.

The row (from `importers.inspect_ai`) names the log (`source`), the sample (`sample`), its epoch
(`run`) and its place among the log's samples (`line`). Only that sample is read: in a `.eval`
zip its own member `samples/<id>_epoch_<n>.json` (or, in Inspect's chunked layout, its own
`samples/<id>_epoch_<n>/` members); in a `.json` log the one element of `samples`, decoded out of
the text without building the others.

Steps come from the sample's `events` when it has model events, else from its `messages`:
- the conversation's opening messages (sample_init), then per model event the new user and
  system messages it was sent, and the agent's reply with that call's `output.usage` split into
  buckets exactly as the importer splits `model_usage` (so the steps add up to the row's tokens);
- each tool event as a tool step (its result as the observation, its error as an error);
- limits, errors, compactions and scores as system steps.
A reply Inspect replayed from its own cache (`cache: "read"`) was never added to `model_usage`,
so it carries no tokens here either, and a note says so. From `messages` alone no step carries
tokens (the usage is per sample, not per message).

The verdict: each scorer as a test (its value as a word: C/I, true/false and 1/0 read as
passed/failed, anything else as written), its explanation as the output.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tui_ledger.importers import ImporterError
from tui_ledger.importers.inspect_ai import split_usage
from tui_ledger.importers.inspect_log import member_bytes
from tui_ledger.trajectory._json_text import Absent, value_at
from tui_ledger.trajectory.files import failure, importer_problem, parse, read_text, unreadable
from tui_ledger.trajectory.model import (
    Opened,
    Step,
    Test,
    ToolCall,
    Verdict,
)
from tui_ledger.trajectory.text import (
    NO_BUCKETS,
    Buckets,
    arguments_text,
    iso_time,
    looked_for,
    make_step,
    role_source,
)

_ATTACHMENT = "attachment://"
_SHELL = "sample.json"  # a chunked sample's own fields, beside its chunked sequences
_OLD_ATTACHMENT = "tc://"  # the older name of the same reference (Inspect migrates it on read)


def open(row: Mapping[str, Any]) -> Opened:
    """The sample the row names, opened: its instruction, its scores and its steps."""
    path = Path(str(row.get("source") or ""))
    sample_id = row.get("sample")
    epoch = str(row.get("run") or "1")
    if not row.get("source") or sample_id is None:
        raise failure(row.get("source") or "the row", None, "names no Inspect sample")
    where = f"sample {sample_id} epoch {epoch}"
    if path.suffix == ".eval":
        sample = _eval_sample(path, str(sample_id), epoch, where)
    else:
        sample = _json_sample(path, row.get("line"), str(sample_id), epoch, where)
    if not isinstance(sample, dict):
        raise failure(path, where, "is not an Inspect sample (not a JSON object)")
    opened = _opened(path, sample, where)
    usage = sample.get("model_usage")
    if row.get("tokens") is None and isinstance(usage, dict) and usage:
        # Summaries of older or unfinished logs keep no model_usage: the row has none to compare.
        opened.notes.append(
            "the ledger has no usage for this attempt (the log's summaries keep none), but the "
            "sample records model_usage: the steps show what it spent"
        )
    return opened


def _eval_sample(path: Path, sample_id: str, epoch: str, where: str) -> Any:
    """The sample's own members of a `.eval` zip, and nothing else of it."""
    member = f"samples/{sample_id}_epoch_{epoch}.json"
    prefix = f"samples/{sample_id}_epoch_{epoch}/"
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise failure(path, None, f"is not a readable .eval archive ({exc})") from None
    except OSError as exc:
        raise unreadable(path, exc) from None
    with archive:
        names = archive.namelist()
        if member in names:
            return parse(_member(archive, path, member, where), path, f"{where} ({member})")
        if prefix + _SHELL in names:
            return _chunked_sample(archive, path, prefix, names, where)
        raise failure(path, where, f"has no member {member} (written with --no-log-samples?)")


def _member(archive: zipfile.ZipFile, path: Path, name: str, where: str) -> bytes:
    try:
        return member_bytes(archive, path, name)
    except ImporterError as exc:
        raise failure(path, where, importer_problem(exc)) from None


def _chunked_sample(
    archive: zipfile.ZipFile, path: Path, prefix: str, names: list[str], where: str
) -> dict[str, Any]:
    """A sample in Inspect's chunked layout, put back in the single-member shape.

    `sample.json` is the sample without its messages, events and attachments; `events/<n>.json`
    and `messages/<n>.json` are chunks of the events and of the message pool (named by their
    first index); `attachments/<n>.json` chunks of the texts referenced as `attachment://<i>`;
    the shell's `message_refs` pick the final conversation out of the pool.
    """

    def read(name: str) -> Any:
        return parse(_member(archive, path, name, where), path, f"{where} ({name})")

    def sequence(kind: str) -> list[Any]:
        found = []
        for name in names:
            rest = name[len(prefix) :] if name.startswith(prefix) else ""
            head, _, tail = rest.partition("/")
            if head == kind and tail.endswith(".json") and tail[:-5].isdigit():
                found.append((int(tail[:-5]), name))
        items: list[Any] = []
        for _, name in sorted(found):
            chunk = read(name)
            if not isinstance(chunk, list):
                raise failure(path, f"{where} ({name})", "is not a list")
            items.extend(chunk)
        return items

    shell = read(prefix + _SHELL)
    if not isinstance(shell, dict):
        raise failure(path, f"{where} ({prefix}{_SHELL})", "is not an object")
    pool = sequence("messages")
    refs = shell.get("message_refs")
    messages = [
        message
        for ref in (refs if isinstance(refs, list) else [])
        if isinstance(ref, list) and len(ref) == 2
        for message in pool[int(ref[0]) : int(ref[1])]
    ]
    attachments = sequence("attachments")
    return {
        **shell,
        "events": sequence("events"),
        "events_data": {"messages": pool},
        "messages": messages,
        "attachments": {str(index): text for index, text in enumerate(attachments)},
    }


def _json_sample(path: Path, line: Any, sample_id: str, epoch: str, where: str) -> Any:
    """The `line`-th sample of a `.json` log, decoded alone; checked to be the one asked for."""
    text = read_text(path)
    index = line - 1 if isinstance(line, int) and line >= 1 else 0
    try:
        sample = value_at(text, ("samples", index), path, where)
    except Absent:
        raise failure(path, where, f"has no sample #{index + 1} (the log changed?)") from None
    del text
    if isinstance(sample, dict) and (
        str(sample.get("id")) != sample_id or str(sample.get("epoch", 1)) != epoch
    ):
        found = f"sample {sample.get('id')} epoch {sample.get('epoch', 1)}"
        raise failure(path, where, f"sample #{index + 1} is {found} (the log changed?)")
    return sample


def _opened(path: Path, sample: Mapping[str, Any], where: str) -> Opened:
    attachments = sample.get("attachments")
    resolve = _Resolver(attachments if isinstance(attachments, dict) else {})
    events = sample.get("events")
    events = events if isinstance(events, list) else []
    messages = sample.get("messages")
    messages = messages if isinstance(messages, list) else []
    notes: list[str] = []
    looked: list[str] = []
    steps: Iterator[Step]
    if any(isinstance(event, dict) and event.get("event") == "model" for event in events):
        steps = _EventSteps(path, sample, resolve, where).steps(events)
        notes.extend(_event_notes(events))
    elif messages:
        steps = _message_steps(messages, resolve)
        notes.append(
            "no model events in this sample: steps are its messages, and its usage is recorded "
            "for the sample only, not per step"
        )
    else:
        steps = iter(())
        looked.append(looked_for("events and messages", f"{path} {where}", "it records none"))
    return Opened(
        files=[str(path)],
        instruction=_instruction(sample.get("input"), resolve),
        verdict=_verdict(sample),
        steps=steps,
        looked_for=looked,
        notes=notes,
    )


class _Resolver:
    """Inspect keeps long texts once in `attachments`, referenced as `attachment://<hash>`."""

    def __init__(self, attachments: Mapping[str, Any]) -> None:
        self.attachments = attachments

    def __call__(self, text: str) -> str:
        for protocol in (_ATTACHMENT, _OLD_ATTACHMENT):
            if text.startswith(protocol):
                found = self.attachments.get(text[len(protocol) :])
                return found if isinstance(found, str) else text
        return text

    def content(self, content: Any) -> str:
        """A message's content as text: a string, or the text parts of a content list."""
        if content is None:
            return ""
        if isinstance(content, str):
            return self(content)
        if isinstance(content, list):
            parts = []
            for part in content:
                if isinstance(part, dict):
                    kind = part.get("type")
                    if kind == "text":
                        parts.append(self(str(part.get("text") or "")))
                    elif kind in ("image", "audio", "video", "document"):
                        parts.append(f"[{kind}]")
                elif isinstance(part, str):
                    parts.append(self(part))
            return "\n".join(part for part in parts if part)
        return self(str(content))

    def arguments(self, arguments: Any) -> str:
        return self(arguments_text(arguments))


def _instruction(value: Any, resolve: _Resolver) -> str | None:
    if isinstance(value, str):
        return resolve(value)
    if isinstance(value, list):
        texts = [
            resolve.content(message.get("content"))
            for message in value
            if isinstance(message, dict) and message.get("role") in ("user", None)
        ]
        return "\n\n".join(text for text in texts if text) or None
    return None


def _tool_calls(message: Mapping[str, Any], resolve: _Resolver) -> tuple[ToolCall, ...]:
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return ()
    return tuple(
        ToolCall(
            name=str(call.get("function") or "tool"),
            arguments=resolve.arguments(call.get("arguments")),
            id=None if call.get("id") is None else str(call["id"]),
        )
        for call in calls
        if isinstance(call, dict)
    )


def _message_step(
    index: int,
    message: Mapping[str, Any],
    resolve: _Resolver,
    calls: Mapping[str, ToolCall] | None = None,
) -> Step:
    """One message as a step; a tool's result carries the call it answers (from `calls`)."""
    who = role_source(message.get("role"))
    text = resolve.content(message.get("content"))
    if who != "tool":
        return make_step(index, who, text, tool_calls=_tool_calls(message, resolve))
    error = message.get("error")
    observation = text
    if isinstance(error, dict) and error.get("message"):
        observation = f"{text}\n{error['message']}" if text else str(error["message"])
    call_id = None if message.get("tool_call_id") is None else str(message["tool_call_id"])
    call = (calls or {}).get(call_id or "") or ToolCall(
        name=str(message.get("function") or "tool"), arguments="", id=call_id
    )
    return make_step(
        index,
        "tool",
        "",
        tool_calls=(call,),
        observation=observation,
        error=error is not None,
    )


def _message_steps(messages: list[Any], resolve: _Resolver) -> Iterator[Step]:
    calls: dict[str, ToolCall] = {}
    index = 0
    for message in messages:
        if isinstance(message, dict):
            index += 1
            step = _message_step(index, message, resolve, calls)
            calls.update((call.id, call) for call in step.tool_calls if call.id is not None)
            yield step


class _EventSteps:
    """Steps from a sample's events, in the order Inspect recorded them."""

    def __init__(
        self, path: Path, sample: Mapping[str, Any], resolve: _Resolver, where: str
    ) -> None:
        self.path = path
        self.resolve = resolve
        self.where = where
        pool = sample.get("events_data")
        messages = pool.get("messages") if isinstance(pool, dict) else None
        self.pool: list[Any] = messages if isinstance(messages, list) else []
        self.seen: set[str] = set()
        self.index = 0

    def _next(self) -> int:
        self.index += 1
        return self.index

    def steps(self, events: list[Any]) -> Iterator[Step]:
        for number, event in enumerate(events, start=1):
            if not isinstance(event, dict):
                continue
            kind = event.get("event")
            if kind == "sample_init":
                yield from self._opening(event)
            elif kind == "model":
                yield from self._model(event, number)
            elif kind == "tool":
                yield self._tool(event)
            elif kind in ("sample_limit", "error", "compaction", "score"):
                yield self._system(event, str(kind))

    def _new_messages(self, messages: list[Any]) -> Iterator[Step]:
        """The user and system messages not shown yet (the rest are earlier steps)."""
        for message in messages:
            if not isinstance(message, dict):
                continue
            key = str(message.get("id")) if message.get("id") else json.dumps(message, default=str)
            if key in self.seen:
                continue
            self.seen.add(key)
            if message.get("role") in ("user", "system"):
                yield _message_step(self._next(), message, self.resolve)

    def _opening(self, event: Mapping[str, Any]) -> Iterator[Step]:
        state = event.get("state")
        messages = state.get("messages") if isinstance(state, dict) else None
        if isinstance(messages, list):
            yield from self._new_messages(messages)

    def _model_input(self, event: Mapping[str, Any]) -> list[Any]:
        given = event.get("input")
        if isinstance(given, list) and given:
            return given
        refs = event.get("input_refs")
        found: list[Any] = []
        if isinstance(refs, list):
            for ref in refs:
                if isinstance(ref, list) and len(ref) == 2:
                    found.extend(self.pool[int(ref[0]) : int(ref[1])])
        return found

    def _model(self, event: Mapping[str, Any], number: int) -> Iterator[Step]:
        yield from self._new_messages(self._model_input(event))
        output = event.get("output")
        output = output if isinstance(output, dict) else {}
        choices = output.get("choices")
        message = (
            choices[0].get("message")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict)
            else None
        )
        message = message if isinstance(message, dict) else {}
        if message.get("id"):
            self.seen.add(str(message["id"]))
        text = self.resolve.content(message.get("content"))
        error = event.get("error")
        if error:
            text = f"{text}\n{error}" if text else str(error)
        buckets = self._buckets(event, output.get("usage"), number)
        yield make_step(
            self._next(),
            "agent",
            text,
            tool_calls=_tool_calls(message, self.resolve),
            buckets=buckets,
            timestamp=iso_time(event.get("timestamp")),
            error=bool(error),
            kind="cache_read" if event.get("cache") == "read" else None,
        )

    def _buckets(self, event: Mapping[str, Any], usage: Any, number: int) -> Buckets:
        """One call's buckets, split as the importer splits each model's `model_usage`."""
        if not isinstance(usage, dict) or event.get("cache") == "read":
            return NO_BUCKETS
        model = str(event.get("model") or "model")
        try:
            split = split_usage({model: usage}, self.path, f"{self.where} event #{number}")
        except ImporterError as exc:
            raise failure(self.path, self.where, importer_problem(exc)) from None
        return (
            split["input_tokens"],
            split["cached_input_tokens"],
            split["cache_write_tokens"],
            split["output_tokens"],
        )

    def _tool(self, event: Mapping[str, Any]) -> Step:
        result = self.resolve.content(event.get("result"))
        error = event.get("error")
        if isinstance(error, dict):
            message = str(error.get("message") or error.get("type") or "error")
            result = f"{result}\n{message}" if result else message
        call = ToolCall(
            name=str(event.get("function") or "tool"),
            arguments=self.resolve.arguments(event.get("arguments")),
            id=None if event.get("id") is None else str(event["id"]),
        )
        return make_step(
            self._next(),
            "tool",
            "",
            tool_calls=(call,),
            observation=result,
            timestamp=iso_time(event.get("timestamp")),
            error=error is not None,
        )

    def _system(self, event: Mapping[str, Any], kind: str) -> Step:
        if kind == "sample_limit":
            text = str(event.get("message") or f"{event.get('type')} limit")
        elif kind == "error":
            error = event.get("error")
            text = str(error.get("message")) if isinstance(error, dict) else str(error)
        elif kind == "compaction":
            text = (
                f"history compacted ({event.get('type') or 'summary'}): "
                f"{event.get('tokens_before')} -> {event.get('tokens_after')} tokens"
            )
        else:
            score = event.get("score")
            score = score if isinstance(score, dict) else {}
            text = f"{event.get('scorer') or 'score'}: {_value_text(score.get('value'))}"
            if score.get("explanation"):
                text += f"\n{score['explanation']}"
        return make_step(
            self._next(),
            "system",
            text,
            timestamp=iso_time(event.get("timestamp")),
            error=kind == "error",
            kind=kind,
        )


def _event_notes(events: list[Any]) -> list[str]:
    notes = []
    replayed = sum(
        isinstance(event, dict) and event.get("event") == "model" and event.get("cache") == "read"
        for event in events
    )
    if replayed:
        notes.append(
            f"{replayed} model call{'s' if replayed != 1 else ''} replayed from Inspect's cache: "
            "not in the sample's model_usage, so no tokens on those steps"
        )
    if any(isinstance(event, dict) and event.get("event") == "compaction" for event in events):
        notes.append(
            "history compaction calls count in model_usage but are not model events: the steps "
            "may add up to less than the attempt"
        )
    return notes


def _verdict(sample: Mapping[str, Any]) -> Verdict:
    scores = sample.get("scores")
    if scores is None and isinstance(sample.get("score"), dict):
        scores = {"score": sample["score"]}  # log format version 1
    if not isinstance(scores, dict) or not scores:
        return Verdict()
    tests, explanations = [], []
    for name, score in scores.items():
        value = score.get("value") if isinstance(score, dict) else score
        tests.append(Test(name=str(name), result=_value_text(value)))
        explanation = score.get("explanation") if isinstance(score, dict) else None
        if explanation:
            explanations.append(str(explanation) if len(scores) == 1 else f"{name}: {explanation}")
    return Verdict(tests=tuple(tests), output="\n".join(explanations) or None)


def _value_text(value: Any) -> str:
    """A score value as a word: C/I, true/false and 1/0 as passed/failed, else as written."""
    if value is None:
        return "unscored"
    if isinstance(value, bool):
        return "passed" if value else "failed"
    if isinstance(value, (int, float)) and value in (0, 1):
        return "passed" if value == 1 else "failed"
    if value in ("C", "I"):
        return "passed" if value == "C" else "failed"
    if isinstance(value, (str, int, float)):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)
