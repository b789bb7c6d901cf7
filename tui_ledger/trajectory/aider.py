"""Inside an Aider benchmark attempt: the exercise folder's `.aider.chat.history.md` as steps,
and its `.aider.results.json` tries as the verdict.

The chat history is Aider's markdown log: `# aider chat started at ...` opens a session,
`#### ` lines are what was sent as the user (the exercise's instructions, then the failed tests'
output on a retry), `> ` lines are Aider's own messages (edits applied, warnings: tool steps),
and the rest is the model's reply. The benchmark appends each test run's output as a fenced
block after Aider's messages; a fence there is read as the tests' output (a step of the tool,
and the last one the verdict's output).

Aider records tokens for the exercise only (`prompt_tokens`, `completion_tokens` in the results
file), so steps carry none: the history's `> Tokens: 2.1k sent, 300 received.` lines are
rounded for display (`format_tokens`), kept as text, never counted.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tui_ledger.trajectory.files import load_document, read_text, source_file
from tui_ledger.trajectory.model import Opened, Step, Test, TrajectoryError, Verdict, Who
from tui_ledger.trajectory.text import looked_for, make_step

HISTORY_FILE = ".aider.chat.history.md"
_SESSION = "# aider chat started at"
_USER = "#### "
_TOOL = "> "
_FENCE = "```"
NOT_PER_STEP = (
    "Aider records tokens for the whole exercise only (.aider.results.json); the chat history's "
    "'Tokens: 2.1k sent' lines are rounded for display, never counted: not recorded per step"
)


def open(row: Mapping[str, Any]) -> Opened:
    path = source_file(row, "chat history")
    results = load_document(path)
    if not isinstance(results, dict):
        raise TrajectoryError(f"{path}: is not an Aider results object")
    outcomes = results.get("tests_outcomes")
    if outcomes is not None and (
        not isinstance(outcomes, list) or not all(isinstance(item, bool) for item in outcomes)
    ):
        raise TrajectoryError(f"{path}: tests_outcomes is {outcomes!r}, not a list of true/false")
    tries = tuple(
        Test(name=f"try {number}", result="passed" if passed else "failed")
        for number, passed in enumerate(outcomes or (), start=1)
    )
    notes = [NOT_PER_STEP]
    if set(results) == {"exception"}:
        notes.append(f"the exercise crashed: {_last_line(results['exception'])}")
    history = path.parent / HISTORY_FILE
    if not history.is_file():
        return Opened(
            files=[str(path)],
            instruction=None,
            verdict=Verdict(tests=tries),
            steps=iter(()),
            looked_for=[looked_for(f"the exercise's chat history ({HISTORY_FILE})", path.parent)],
            notes=notes,
        )
    text = read_text(history)
    blocks = list(_blocks(text))
    instruction = next((body for who, body, _ in blocks if who == "user"), None)
    test_outputs = [body for _, body, kind in blocks if kind == "tests"]
    return Opened(
        files=[str(path), str(history)],
        instruction=instruction,
        verdict=Verdict(tests=tries, output=test_outputs[-1] if test_outputs else None),
        steps=_steps(blocks),
        notes=notes,
    )


def _blocks(text: str) -> Iterator[tuple[Who, str, str | None]]:
    """(who, text, kind) of each run of lines of one kind, in the log's order."""
    who: Who | None = None
    kind: str | None = None
    lines: list[str] = []
    after_tool = False
    in_tests = False

    def flush() -> Iterator[tuple[Who, str, str | None]]:
        body = "\n".join(lines).strip("\n")
        if who is not None and body.strip():
            yield who, body, kind

    for raw in text.splitlines():
        line = raw.rstrip("\n")
        if in_tests:
            if line.strip() == _FENCE:
                in_tests = False
                yield from flush()
                who, kind, lines, after_tool = None, None, [], False
            else:
                lines.append(line)
            continue
        if line.startswith(_SESSION):
            yield from flush()
            who, kind, lines, after_tool = "system", "session", [line.lstrip("# ")], False
            yield from flush()
            who, kind, lines = None, None, []
            continue
        if line.startswith(_USER) or line.rstrip() == _USER.rstrip():
            if who != "user":
                yield from flush()
                who, kind, lines, after_tool = "user", None, [], False
            lines.append(line[len(_USER) :].rstrip())
            continue
        if line.startswith(_TOOL) or line.rstrip() == _TOOL.rstrip():
            if who != "tool" or kind is not None:
                yield from flush()
                who, kind, lines = "tool", None, []
            lines.append(line[len(_TOOL) :])
            after_tool = True
            continue
        if not line.strip():
            if lines:
                lines.append("")
            continue
        if after_tool and line.strip() == _FENCE and who == "tool":
            # The tests' output the benchmark appended after Aider applied the edits.
            yield from flush()
            who, kind, lines, in_tests = "tool", "tests", [], True
            continue
        if who != "agent":
            yield from flush()
            who, kind, lines, after_tool = "agent", None, [], False
        lines.append(line)
    if in_tests:
        kind = "tests (cut off)"
    yield from flush()


def _steps(blocks: list[tuple[Who, str, str | None]]) -> Iterator[Step]:
    for index, (who, body, kind) in enumerate(blocks, start=1):
        yield make_step(index, who, body, kind=kind)


def _last_line(text: Any) -> str:
    lines = [line for line in str(text).strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


__all__ = ["HISTORY_FILE", "open"]
