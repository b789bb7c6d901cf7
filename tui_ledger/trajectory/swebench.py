"""Inside a SWE-bench attempt: its mini-swe-agent or SWE-agent trajectory, and the harness's
per-test report.

- mini-swe-agent (`<id>.traj.json`, `trajectory_format` mini-swe-agent-1 / -1.1): one step per
  message (system, user, assistant -> agent, tool, and v2's final `exit`); an assistant step
  carries the observation that answered it (v2's `tool` messages by tool_call_id, v1's next user
  message) and its own call's usage from `extra.response.usage`, counted as the importer counts
  the attempt (litellm's prompt_tokens holds the cache: input = prompt - reads - writes).
- SWE-agent (`<id>.traj`): one step per `trajectory` entry (thought, action, observation);
  SWE-agent keeps tokens for the attempt only (`info.model_stats`), so steps carry none. A
  RetryAgent's `attempts` are read in order, each step marked with its attempt (`agent`).
- The verdict: the instance's `report.json` (`tests_status`), FAIL_TO_PASS then PASS_TO_PASS,
  each test passed or failed as the harness listed it, with `test_output.txt` beside it.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from tui_ledger.trajectory.files import load_document, read_text_tail, source_file
from tui_ledger.trajectory.harness_files import as_object, litellm_buckets, report_tests
from tui_ledger.trajectory.model import (
    Opened,
    Step,
    ToolCall,
    TrajectoryError,
    Verdict,
)
from tui_ledger.trajectory.text import (
    arguments_text,
    content_text,
    iso_time,
    looked_for,
    make_step,
    role_source,
)

REPORT_FILE = "report.json"
TEST_OUTPUT_FILE = "test_output.txt"
_RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
_BASH = re.compile(r"```(?:bash|mswea_bash_command)[ \t]*\n(.*?)```", re.DOTALL)
_SUBMITTED = (None, "Submitted")
# Where a per-instance report sits below a run (the harness's own layout, the experiments
# repository's, and a report copied beside the trajectory).
_REPORT_PATTERNS = (
    "{id}/" + REPORT_FILE,
    "logs/{id}/" + REPORT_FILE,
    "logs/run_evaluation/*/*/{id}/" + REPORT_FILE,
    "run_evaluation/*/*/{id}/" + REPORT_FILE,
    "*/{id}/" + REPORT_FILE,
)


def open(row: Mapping[str, Any]) -> Opened:
    path = source_file(row, "trajectory")
    document = load_document(path)
    if not isinstance(document, dict):
        raise TrajectoryError(f"{path}: is not a SWE-bench trajectory (not a JSON object)")
    instance = _instance(row, document, path)
    verdict, verdict_files, verdict_notes = _verdict(row, path, instance)
    files = [str(path), *verdict_files]
    if "messages" in document or path.name.endswith(".traj.json"):
        steps, notes, looked = _mini(document, path, row)
        instruction = _first_user_text(document.get("messages"))
    else:
        steps, notes, looked = _swe_agent(document, path)
        instruction = _first_user_text(document.get("history"))
    return Opened(
        files=files,
        instruction=instruction,
        verdict=verdict,
        steps=steps,
        looked_for=looked,
        notes=[*notes, *verdict_notes],
    )


def _instance(row: Mapping[str, Any], document: Mapping[str, Any], path: Path) -> str:
    task = row.get("task")
    if isinstance(task, str) and task:
        return task
    instance = document.get("instance_id")
    if isinstance(instance, str) and instance:
        return instance
    name = path.name
    for suffix in (".traj.json", ".traj"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _first_user_text(messages: Any) -> str | None:
    if not isinstance(messages, list):
        return None
    for message in messages:
        # SWE-agent marks the demonstration it shows first (`is_demo`): the task comes after.
        if (
            isinstance(message, dict)
            and message.get("role") == "user"
            and not message.get("is_demo")
        ):
            return content_text(message.get("content")) or None
    return None


# --- mini-swe-agent ---------------------------------------------------------------------------


def _mini(
    document: Mapping[str, Any], path: Path, row: Mapping[str, Any]
) -> tuple[Iterator[Step], list[str], list[str]]:
    messages = document.get("messages")
    if messages is None:
        messages = []
    if not isinstance(messages, list):
        raise TrajectoryError(f"{path}: messages is not a list")
    if not messages:
        return iter(()), [], [looked_for("messages", path, "the trajectory records none")]
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TrajectoryError(f"{path}: messages[{index}] is not an object")
    calls = sum(1 for message in messages if message.get("role") == "assistant")
    with_usage = sum(1 for message in messages if _usage_of(message) is not None)
    notes = []
    if with_usage == 0:
        notes.append(
            "mini-swe-agent kept no per-call usage (no extra.response.usage): not recorded per step"
        )
    elif with_usage < calls or (
        isinstance(row.get("api_calls"), int) and with_usage < row["api_calls"]
    ):
        api_calls = row.get("api_calls") if isinstance(row.get("api_calls"), int) else calls
        notes.append(
            f"usage recorded for {with_usage} of {api_calls} calls: the steps' sum is short, "
            "and the ledger counts this attempt's usage as missing"
        )
    return _mini_steps(messages, path), notes, []


def _usage_of(message: Mapping[str, Any]) -> Any:
    extra = message.get("extra")
    response = extra.get("response") if isinstance(extra, dict) else None
    return response.get("usage") if isinstance(response, dict) else None


def _mini_steps(messages: list[dict[str, Any]], path: Path) -> Iterator[Step]:
    index = 0
    position = 0
    while position < len(messages):
        here = position
        message = messages[position]
        role = message.get("role")
        position += 1
        observation = None
        failed = False
        if role == "assistant":
            # The messages answering this call: v2's tool messages, or v1's next user message
            # (the command's output or a format error).
            answers = []
            while position < len(messages) and messages[position].get("role") == "tool":
                answers.append(messages[position])
                position += 1
            if (
                not answers
                and position < len(messages)
                and messages[position].get("role") == "user"
            ):
                answers.append(messages[position])
                position += 1
            observation = (
                "\n".join(content_text(answer.get("content")) for answer in answers) or None
            )
            failed = any(_failed(answer) for answer in answers)
        buckets = _buckets(message, path, here)
        extra = as_object(message.get("extra"))
        text = content_text(message.get("content"))
        index += 1
        yield make_step(
            index,
            role_source(role),
            text,
            tool_calls=_mini_calls(message, extra, text) if role == "assistant" else (),
            observation=observation,
            buckets=buckets,
            timestamp=iso_time(extra.get("timestamp")),
            error=failed
            or (role == "exit" and extra.get("exit_status") not in (None, "Submitted")),
            kind="exit" if role == "exit" else None,
        )


def _failed(answer: Mapping[str, Any]) -> bool:
    """A command's answer that says it exited non-zero (v2's `extra.returncode`, v1's text)."""
    code = as_object(answer.get("extra")).get("returncode")
    if code is None:
        found = _RETURNCODE.search(content_text(answer.get("content"))[:200])
        code = int(found.group(1)) if found else None
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def _buckets(
    message: Mapping[str, Any], path: Path, position: int
) -> tuple[int | None, int | None, int | None, int | None]:
    usage = _usage_of(message)
    if usage is None:
        return None, None, None, None
    where = f"messages[{position}].extra.response.usage"
    if not isinstance(usage, dict):
        raise TrajectoryError(f"{path}: {where} is not an object")
    return litellm_buckets(usage, path, where)


def _mini_calls(
    message: Mapping[str, Any], extra: Mapping[str, Any], text: str
) -> tuple[ToolCall, ...]:
    calls = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            calls.append(
                ToolCall(
                    name=str(function.get("name") or "tool"),
                    arguments=arguments_text(function.get("arguments")),
                    id=call.get("id") if isinstance(call.get("id"), str) else None,
                )
            )
    if calls:
        return tuple(calls)
    for action in extra.get("actions") or ():
        if isinstance(action, dict) and isinstance(action.get("command"), str):
            calls.append(ToolCall(name="bash", arguments=action["command"]))
    if not calls:  # v1: the command is the reply's one bash block
        calls.extend(
            ToolCall(name="bash", arguments=block.strip()) for block in _BASH.findall(text)
        )
    return tuple(calls)


# --- SWE-agent --------------------------------------------------------------------------------


def _swe_agent(
    document: Mapping[str, Any], path: Path
) -> tuple[Iterator[Step], list[str], list[str]]:
    attempts = document.get("attempts")
    notes = [
        "SWE-agent records tokens for the whole attempt only (info.model_stats): "
        "not recorded per step"
    ]
    if isinstance(attempts, list) and attempts:
        info = as_object(document.get("info"))
        best = info.get("best_attempt_idx")
        if isinstance(best, int) and not isinstance(best, bool):
            notes.append(
                f"RetryAgent: {len(attempts)} attempts, their steps marked; attempt {best + 1} "
                "was chosen; the ledger counts all of them (info.model_stats is their total)"
            )
        else:
            notes.append(f"RetryAgent: {len(attempts)} attempts, their steps marked")
        parts = []
        for number, attempt in enumerate(attempts, start=1):
            if not isinstance(attempt, dict):
                raise TrajectoryError(f"{path}: attempts[{number - 1}] is not an object")
            parts.append((f"attempt {number}", _entries(attempt, path, f"attempts[{number - 1}]")))
        if not any(entries for _, entries in parts):
            return (
                iter(()),
                notes,
                [looked_for("trajectory entries of each attempt", path, "none kept")],
            )
        return _swe_agent_steps(parts), notes, []
    entries = _entries(document, path, "")
    if not entries:
        return (
            iter(()),
            notes,
            [looked_for("trajectory and history", path, "the file records no steps")],
        )
    return _swe_agent_steps([(None, entries)]), notes, []


def _entries(document: Mapping[str, Any], path: Path, where: str) -> list[dict[str, Any]]:
    """The steps of one agent run: its `trajectory`, else the agent's turns in `history`."""
    prefix = f"{where}." if where else ""
    trajectory = document.get("trajectory")
    if trajectory is not None and not isinstance(trajectory, list):
        raise TrajectoryError(f"{path}: {prefix}trajectory is not a list")
    if trajectory:
        for index, entry in enumerate(trajectory):
            if not isinstance(entry, dict):
                raise TrajectoryError(f"{path}: {prefix}trajectory[{index}] is not an object")
        return list(trajectory)
    history = document.get("history")
    if history is not None and not isinstance(history, list):
        raise TrajectoryError(f"{path}: {prefix}history is not a list")
    return [
        {"history": message}
        for message in history or ()
        if isinstance(message, dict)
        and message.get("role") in ("assistant", "user", "tool")
        and not message.get("is_demo")
    ][1:]  # the first user message is the task


def _swe_agent_steps(parts: Sequence[tuple[str | None, list[dict[str, Any]]]]) -> Iterator[Step]:
    index = 0
    for attempt, entries in parts:
        for entry in entries:
            index += 1
            message = entry.get("history")
            if isinstance(message, dict):  # history only: its messages as they are
                who = role_source(message.get("role"))
                yield make_step(index, who, content_text(message.get("content")), agent=attempt)
                continue
            action = entry.get("action")
            thought = entry.get("thought")
            text = content_text(thought if thought else entry.get("response"))
            calls: tuple[ToolCall, ...] = ()
            if isinstance(action, str) and action.strip():
                name = action.strip().split(None, 1)[0]
                calls = (ToolCall(name=name, arguments=action.strip()),)
            observation = entry.get("observation")
            yield make_step(
                index,
                "agent",
                text,
                tool_calls=calls,
                observation=None if observation is None else content_text(observation),
                agent=attempt,
            )


# --- the verdict ------------------------------------------------------------------------------


def _verdict(
    row: Mapping[str, Any], path: Path, instance: str
) -> tuple[Verdict, list[str], list[str]]:
    report = _find_report(row, path, instance)
    if report is None:
        word = row.get("report_verdict")
        if word:
            return (
                Verdict(),
                [],
                [
                    f"the SWE-bench report says {word}; no per-instance {REPORT_FILE} "
                    f"(tests by name) was found for {instance}"
                ],
            )
        return Verdict(), [], []
    document = load_document(report)
    entry = _report_entry(document, instance, report)
    tests = report_tests(entry, report)
    output_file = report.parent / TEST_OUTPUT_FILE
    output = read_text_tail(output_file)
    files = [str(report)] + ([str(output_file)] if output is not None else [])
    return Verdict(tests=tests, output=output), files, []


def _find_report(row: Mapping[str, Any], path: Path, instance: str) -> Path | None:
    named = row.get("report_file")
    candidates: list[Path] = []
    if isinstance(named, str) and named:
        given = Path(named)
        if given.name == REPORT_FILE:
            candidates.append(given)
        else:  # a run report: the per-instance reports sit below its folder
            candidates.extend(_below(given.parent, instance))
    folder = path.parent
    run = folder.parent if folder.name in (instance, "trajs") else folder
    candidates.extend(_below(run, instance))
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def _below(folder: Path, instance: str) -> list[Path]:
    root = glob.escape(str(folder))
    found = []
    for pattern in _REPORT_PATTERNS:
        found.extend(
            sorted(Path(p) for p in glob.glob(f"{root}/{pattern.format(id=glob.escape(instance))}"))
        )
    return found


def _report_entry(document: Any, instance: str, report: Path) -> Mapping[str, Any]:
    if not isinstance(document, dict):
        raise TrajectoryError(f"{report}: is not a SWE-bench report (not a JSON object)")
    entry = document.get(instance)
    if isinstance(entry, dict):
        return entry
    if "tests_status" in document or "resolved" in document:
        return document  # the unwrapped shape
    raise TrajectoryError(f"{report}: has no entry for {instance}")


__all__ = ["open"]
