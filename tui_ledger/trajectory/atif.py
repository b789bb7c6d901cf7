"""ATIF trajectories (Agent Trajectory Interchange Format, v1.x: Harbor's `agent/trajectory.json`).

A plain ledger names each attempt's file in its `trace` column, relative to the ledger file's
folder; the Harbor reader (`trajectory/harbor.py`) opens a trial's own through `open_files`.

One `Step` per ATIF step, in the file's order: `source` user, agent or system (a tool's output
belongs to the agent step that called it, as its `observation`); the text is the step's
`message` (text parts of a multimodal one, images named), then its `reasoning_content`; each
tool call with its arguments as JSON text; the observation's results joined. Tokens come from
the step's `metrics` by the rule in `importers/atif_usage.py` (prompt_tokens includes the cache
hits; cache writes only where `metrics.extra` records them). A file continued in another
(`continued_trajectory_ref`, Terminus-2 after a summary) is read on into it, its copied-context
steps (already shown) left out. The file is parsed once (json.loads: a 50 MB file is read
whole, once); steps are made from the parsed list one at a time as they are asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_ledger.exports.trace_paths import trace_base, trace_file
from tui_ledger.importers.atif_usage import (
    AtifError,
    Buckets,
    added,
    checked,
    final_buckets,
    shown,
    step_buckets,
    steps_of,
    writes_in_prompt,
)
from tui_ledger.trajectory import TRACE_COLUMN
from tui_ledger.trajectory.files import load_document
from tui_ledger.trajectory.model import (
    Opened,
    Step,
    ToolCall,
    TrajectoryError,
    Verdict,
    Who,
)
from tui_ledger.trajectory.text import arguments_text, iso_time, make_step

_SOURCES: dict[str, Who] = {"user": "user", "agent": "agent", "system": "system", "tool": "tool"}
_ERROR_KEYS = ("is_error", "tool_result_is_error", "error")
COPIED = "copied context"


def open(row: Mapping[str, Any]) -> Opened:
    """The ATIF file the row's `trace` names, relative to the ledger file's folder."""
    trace = row.get(TRACE_COLUMN)
    if trace is None or str(trace).strip() == "":
        raise TrajectoryError(f"the attempt has no `{TRACE_COLUMN}` naming its trajectory file")
    source = row.get("source")
    return open_files([trace_file(source, trace)], relative_to=trace_base(source))


def open_files(paths: Sequence[Path], *, relative_to: Path | None = None) -> Opened:
    """The steps of these ATIF files, one after another (each with its continuations).

    The first file is read now, so a file that cannot be read fails here; the rest as the
    steps reach them. Raises TrajectoryError naming the file. `Opened.files` names them
    relative to `relative_to` (the ledger's folder) where they sit under it.
    """
    if not paths:
        raise TrajectoryError("no trajectory file to open")
    first = _read(paths[0])
    files = [_name(paths[0], relative_to)]
    notes: list[str] = []
    instruction = _first_user_message(first)
    steps = _steps(paths, first, files, notes, relative_to)
    return Opened(files=files, instruction=instruction, verdict=Verdict(), steps=steps, notes=notes)


def _first_user_message(document: Mapping[str, Any]) -> str | None:
    """The task as the agent was given it: ATIF has no instruction field, and its first user
    step is the prompt the run started from (None when the trajectory opens otherwise)."""
    for step in document.get("steps") or ():
        if not isinstance(step, Mapping):
            return None
        if step.get("source") == "user":
            message = step.get("message")
            return message if isinstance(message, str) and message.strip() else None
        if step.get("source") == "agent":
            return None
    return None


def _read(path: Path) -> dict[str, Any]:
    document = load_document(path)
    try:
        return checked(document, path)
    except AtifError as error:
        raise TrajectoryError(str(error)) from None


@dataclass
class _Tally:
    """What the notes say once every step is read."""

    steps: Buckets = field(default_factory=Buckets)
    final: Buckets = field(default_factory=Buckets)
    with_tokens: int = 0
    writes_outside: int = 0
    """Files whose cache writes sit outside prompt_tokens."""
    cache_outside: int = 0
    copied_skipped: int = 0


def _name(path: Path, base: Path | None) -> str:
    if base is not None and path.is_relative_to(base) and path != base:
        return str(path.relative_to(base))
    return str(path)


def _steps(
    paths: Sequence[Path],
    first: dict[str, Any],
    files: list[str],
    notes: list[str],
    base: Path | None,
) -> Iterator[Step]:
    tally = _Tally()
    index = 0
    for number, start in enumerate(paths):
        document: dict[str, Any] | None = first if number == 0 else None
        path: Path | None = start
        seen: set[Path] = set()
        continued = False
        while path is not None:
            if path in seen:
                raise TrajectoryError(
                    f"{path}: continued_trajectory_ref leads back to a file already read"
                )
            seen.add(path)
            if document is None:
                document = _read(path)
                files.append(_name(path, base))
            inside = writes_in_prompt(document)
            if not inside:
                tally.writes_outside += 1
            try:
                totals = final_buckets(document, writes_in_prompt=inside)
            except AtifError as error:
                raise TrajectoryError(f"{path}: {error}") from None
            if totals.recorded:
                tally.final = totals
            after = document.get("continued_trajectory_ref")
            raw_steps = steps_of(document)
            del document
            for position, raw in enumerate(raw_steps):
                raw_steps[position] = None  # each step's dicts freed once it is made
                try:
                    made = _step(raw, position + 1, index + 1, inside)
                except AtifError as error:
                    raise TrajectoryError(f"{path}: {error}") from None
                step, counts = made
                if step.kind == COPIED and continued:
                    tally.copied_skipped += 1
                    continue
                index += 1
                _count(tally, counts)
                yield step
            del raw_steps
            continued = True
            if after is not None and not isinstance(after, str):
                raise TrajectoryError(f"{path}: continued_trajectory_ref is not a file name")
            path = path.parent / after if after else None
            document = None
    notes.extend(_notes(tally))


def _count(tally: _Tally, counts: Buckets) -> None:
    if counts.recorded:
        tally.with_tokens += 1
        tally.steps = added(tally.steps, counts)
    tally.cache_outside += counts.cache_outside_prompt


def _notes(tally: _Tally) -> list[str]:
    notes = []
    steps_total, final_total = tally.steps.tokens, tally.final.tokens
    if final_total is not None and steps_total is None:
        notes.append(
            f"no step records its tokens; the file's final_metrics records {final_total:,} in all"
        )
    elif final_total is not None and steps_total != final_total:
        notes.append(
            f"the steps' tokens add up to {steps_total:,}; the file's final_metrics records "
            f"{final_total:,} (tokens spent outside the steps, such as a summary's sub-agents, "
            "are in final_metrics only)"
        )
    if tally.writes_outside:
        notes.append(
            "a step records more cache writes than uncached prompt tokens: the file's cache "
            "writes were read as left out of prompt_tokens (older Harbor Claude Code files) "
            "and counted on their own"
        )
    if tally.cache_outside:
        notes.append(
            f"{_steps_word(tally.cache_outside)} recorded more cached tokens than prompt tokens: "
            "the cache was read as left out of prompt_tokens"
        )
    if tally.copied_skipped:
        notes.append(
            f"{_steps_word(tally.copied_skipped)} of a continuation repeat earlier steps "
            "(is_copied_context) and are not shown again"
        )
    return notes


def _steps_word(count: int) -> str:
    return f"{count:,} step" if count == 1 else f"{count:,} steps"


def _step(raw: Any, number: int, index: int, inside: bool) -> tuple[Step, Buckets]:
    where = f"step {number}"
    if not isinstance(raw, dict):
        raise AtifError(f"{where} is {_kind(raw)}, not an object")
    source = raw.get("source")
    who = _SOURCES.get(source) if isinstance(source, str) else None
    if who is None:
        raise AtifError(f"{where}.source is {shown(source)}, not user, agent or system")
    message = _content(raw.get("message"), f"{where}.message")
    reasoning = raw.get("reasoning_content")
    if reasoning is not None and not isinstance(reasoning, str):
        raise AtifError(f"{where}.reasoning_content is {_kind(reasoning)}, not text")
    text = message
    if reasoning and reasoning.strip():
        text = (
            f"{message}\n\nReasoning: {reasoning}" if message.strip() else f"Reasoning: {reasoning}"
        )
    calls = _tool_calls(raw.get("tool_calls"), where)
    observation, failed = _observation(raw.get("observation"), where)
    counts = step_buckets(raw.get("metrics"), where, writes_in_prompt=inside)
    extra: Mapping[str, Any] = raw["extra"] if isinstance(raw.get("extra"), dict) else {}
    copied = raw.get("is_copied_context") is True
    buckets = (
        counts.input_tokens,
        counts.cached_input_tokens,
        counts.cache_write_tokens,
        counts.output_tokens,
    )
    step = make_step(
        index,
        who,
        text,
        tool_calls=calls,
        observation=observation,
        buckets=buckets,
        timestamp=_timestamp(raw.get("timestamp"), where),
        error=failed or _flagged(extra),
        agent=_sub_agent(extra),
        kind=COPIED if copied else None,
    )
    return step, counts


def _content(value: Any, where: str) -> str:
    """A message or result: text as is; a multimodal list as its text parts, media named."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise AtifError(f"{where} is {_kind(value)}, not text or a list of content parts")
    parts = []
    for number, part in enumerate(value, start=1):
        if not isinstance(part, dict):
            raise AtifError(f"{where}[{number}] is {_kind(part)}, not a content part")
        kind = part.get("type")
        if kind == "text":
            text = part.get("text")
            if not isinstance(text, str):
                raise AtifError(f"{where}[{number}].text is {_kind(text)}, not text")
            parts.append(text)
        else:
            source = part.get("source")
            location = source.get("path") if isinstance(source, dict) else None
            label = kind if isinstance(kind, str) else "content"
            parts.append(f"[{label}: {location}]" if isinstance(location, str) else f"[{label}]")
    return "\n".join(parts)


def _tool_calls(value: Any, where: str) -> tuple[ToolCall, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise AtifError(f"{where}.tool_calls is {_kind(value)}, not a list")
    calls = []
    for number, call in enumerate(value, start=1):
        at = f"{where}.tool_calls[{number}]"
        if not isinstance(call, dict):
            raise AtifError(f"{at} is {_kind(call)}, not an object")
        name = call.get("function_name")
        if not isinstance(name, str):
            raise AtifError(f"{at}.function_name is {_kind(name)}, not a name")
        call_id = call.get("tool_call_id")
        arguments = arguments_text(call.get("arguments"))
        calls.append(ToolCall(name, arguments, call_id if isinstance(call_id, str) else None))
    return tuple(calls)


def _observation(value: Any, where: str) -> tuple[str | None, bool]:
    """The results' text joined (None when there is none), and whether any reports an error."""
    if value is None:
        return None, False
    if not isinstance(value, dict):
        raise AtifError(f"{where}.observation is {_kind(value)}, not an object")
    results = value.get("results")
    if results is None:
        return None, False
    if not isinstance(results, list):
        raise AtifError(f"{where}.observation.results is {_kind(results)}, not a list")
    texts = []
    failed = False
    for number, result in enumerate(results, start=1):
        at = f"{where}.observation.results[{number}]"
        if not isinstance(result, dict):
            raise AtifError(f"{at} is {_kind(result)}, not an object")
        text = _content(result.get("content"), f"{at}.content")
        refs = result.get("subagent_trajectory_ref")
        if isinstance(refs, list):
            for ref in refs:
                if isinstance(ref, dict):
                    named = ref.get("trajectory_path") or ref.get("session_id")
                    text += (
                        f"\n[sub-agent trajectory: {named}]"
                        if text
                        else f"[sub-agent trajectory: {named}]"
                    )
        if text:
            texts.append(text)
        failed = failed or _flagged(result) or _flagged(result.get("extra"))
    return ("\n\n".join(texts) if texts else None), failed


def _flagged(extra: Any) -> bool:
    """An error flag the producer wrote (Harbor's Claude Code: `tool_result_is_error`)."""
    if not isinstance(extra, dict):
        return False
    if any(extra.get(key) is True for key in _ERROR_KEYS):
        return True
    metadata = extra.get("tool_result_metadata")
    return isinstance(metadata, dict) and metadata.get("is_error") is True


def _sub_agent(extra: Mapping[str, Any]) -> str | None:
    """The sub-agent of a Claude Code side chain (`extra.is_sidechain`), by its id."""
    if extra.get("is_sidechain") is not True:
        return None
    agent = extra.get("agent_id")
    return str(agent) if agent else "sub-agent"


def _timestamp(value: Any, where: str) -> str | None:
    if value is None:
        return None
    moment = iso_time(value)
    if moment is None and not isinstance(value, str):
        raise AtifError(f"{where}.timestamp is {shown(value)}, not a time")
    return moment


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, (int, float)) else type(value).__name__
