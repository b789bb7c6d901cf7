"""Terminal-Bench 1.x trial folders written for tests, in the shape `tb run` writes them.

`write_trial` writes `<run>/<task>/<trial>/` with `results.json`, `commands.txt`,
`panes/post-test.txt` and `sessions/agent.cast` (asciinema v2: a header line, then one
`[seconds, "o" | "i", text]` event a line); pass None to leave a file out. `session` builds
a recording's events the way the harness's terminal produces them: the prompt, the typed
command echoed, its output, the next prompt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

PROMPT = "root@4f2a9c1b:/app# "
START = 1_752_271_427  # the recording's start, epoch seconds (2025-07-11T22:03:47Z)

Event = tuple[float, str, str]


def session(commands: Iterable[tuple[str, str]], *, step: float = 1.0) -> list[Event]:
    """Events of a shell session: for each (command, output), the command typed at a prompt,
    echoed, its output printed (lines ending `\\n` become `\\r\\n`, as a terminal writes them),
    then the next prompt."""
    events: list[Event] = [(0.01, "o", "\x1b[?2004h" + PROMPT)]
    seconds = 0.0
    for command, output in commands:
        seconds += step
        events.append((seconds, "i", command + "\r"))
        events.append((seconds + 0.001, "o", command + "\r\n\x1b[?2004l\r"))
        if output:
            events.append((seconds + 0.5, "o", output.replace("\n", "\r\n")))
        events.append((seconds + 0.6, "o", "\x1b[?2004h" + PROMPT))
    return events


def cast_text(
    events: Iterable[Event],
    *,
    width: int = 80,
    height: int = 24,
    header: Mapping[str, Any] | None = None,
) -> str:
    """An asciinema v2 recording's text."""
    head = {"version": 2, "width": width, "height": height, "timestamp": START}
    head.update(header or {})
    lines = [json.dumps(head)]
    lines.extend(json.dumps([seconds, kind, text]) for seconds, kind, text in events)
    return "\n".join(lines) + "\n"


def write_trial(
    run_folder: Path,
    *,
    task: str = "hello-world",
    trial: str | None = None,
    instruction: str = "Write hello.txt containing 'hello'.",
    tests: Mapping[str, str] | None = None,
    resolved: bool | None = True,
    events: Sequence[Event] | None = (),
    cast: str | bytes | None = None,
    commands: Sequence[Sequence[str]] | None = (),
    post_test: str | bytes | None = "===== 1 passed in 0.01s =====\n" + PROMPT + "\n\n\n",
    agent_log: str | bytes | None = None,
    tests_cast: str | None = None,
    record: Mapping[str, Any] | None = None,
) -> Path:
    """A trial folder under `run_folder`; returns its `results.json`.

    `events` (or `cast`, the recording's exact text or bytes) make `sessions/agent.cast`;
    `commands` are tmux send-keys argument lists (the harness's own are added around them).
    """
    trial = trial or f"{task}.1-of-1.{run_folder.name}"
    folder = run_folder / task / trial
    (folder / "sessions").mkdir(parents=True, exist_ok=True)
    (folder / "panes").mkdir(exist_ok=True)
    document: dict[str, Any] = {
        "id": f"{run_folder.name}-{trial}",
        "trial_name": trial,
        "task_id": task,
        "instruction": instruction,
        "is_resolved": resolved,
        "failure_mode": "unset",
        "parser_results": dict(tests) if tests is not None else {"test_hello_file": "passed"},
        "recording_path": f"{run_folder.name}/{task}/{trial}/sessions/agent.cast",
        "total_input_tokens": 1200,
        "total_output_tokens": 300,
        "trial_started_at": "2025-07-11T22:03:41.040107+00:00",
        "trial_ended_at": "2025-07-11T22:06:18.886226+00:00",
    }
    document.update(record or {})
    (folder / "results.json").write_text(json.dumps(document, indent=4))
    if cast is not None:
        _write(folder / "sessions" / "agent.cast", cast)
    elif events is not None:
        _write(folder / "sessions" / "agent.cast", cast_text(events))
    if commands is not None:
        sent = [["asciinema rec --stdin /logs/agent.cast", "Enter"], ["clear", "Enter"]]
        sent += [list(keys) for keys in commands]
        sent += [["C-d"], ["bash ", "/tests/run-tests.sh", "Enter"], ["C-d"]]
        (folder / "commands.txt").write_text("".join(f"{keys!r}\n" for keys in sent))
    if post_test is not None:
        _write(folder / "panes" / "post-test.txt", post_test)
    if agent_log is not None:
        _write(folder / "sessions" / "agent.log", agent_log)
    if tests_cast is not None:
        _write(folder / "sessions" / "tests.cast", tests_cast)
    return folder / "results.json"


def write_run_file(run_folder: Path, records: Sequence[Mapping[str, Any]]) -> Path:
    """A run-level `results.json` holding `records`, as `tb run` writes beside its trials."""
    path = run_folder / "results.json"
    run_folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"id": "run", "results": list(records), "accuracy": 0.5}))
    return path


def row_for(results: Path, line: int = 1, **fields: Any) -> dict[str, Any]:
    """A ledger row's fields pointing at a results.json (as the importer writes them)."""
    return {"workflow": "tb", "task": "hello-world", "source": str(results), "line": line, **fields}


def _write(path: Path, content: str | bytes) -> None:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
