"""Inside a Terminal-Bench 1.x attempt (`tb run`, core 0.1.x): its trial folder, opened.

A trial folder holds `results.json` (the instruction, `parser_results`: each test by name with
"passed" or "failed"), `commands.txt` (every `tmux send-keys` of the trial: the harness's own
commands, and for an agent that types into the terminal, the agent's), `panes/post-test.txt`
(the terminal after the tests: the test runner's own summary), and `sessions/agent.cast` (an
asciinema v2 recording of the agent's terminal), `sessions/agent.log` (the same terminal's raw
bytes), `sessions/tests.cast` / `tests.log`.

- The row's `source` is the trial's `results.json`, or a run-level `results.json` with `line`
  the record's number: the trial folder is then found from the record's `recording_path`
  (`<run>/<task>/<trial>/sessions/agent.cast`) or `<task>/<trial_name>` under the run folder.
- Verdict: `parser_results` in the file's order; `output` is `panes/post-test.txt`, else
  `sessions/tests.cast` played, else `sessions/tests.log` played.
- Steps: `sessions/agent.cast` played through a terminal emulator (terminal_cast.py), a step
  per input event, else `sessions/agent.log` split at shell prompts, else `commands.txt` (what
  was typed, no output). The harness's own commands (starting the recording, installing and
  setting up the agent, running the tests) are `system` steps of kind `harness`; the rest are
  `agent` steps (an installed agent's launch command among them: its output is the agent's log).
- Terminal-Bench records tokens only per trial: every step's tokens are None.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from tui_ledger.trajectory.model import Opened, Step, Test, TrajectoryError, Verdict
from tui_ledger.trajectory.terminal_cast import (
    MAX_LINE_BYTES,
    clean_lines,
    play_cast,
    play_log,
    typed_text,
)

RESULTS_FILE = "results.json"
AGENT_CAST = "sessions/agent.cast"
AGENT_LOG = "sessions/agent.log"
COMMANDS = "commands.txt"
POST_TEST = "panes/post-test.txt"
TESTS_CAST = "sessions/tests.cast"
TESTS_LOG = "sessions/tests.log"

MAX_RESULTS_BYTES = 64 * 1024 * 1024
"""The largest results.json read (a run-level file of hundreds of trials is a few MB)."""
MAX_PANE_BYTES = 256 * 1024
"""Of a longer pane capture, its end is shown (the test runner's summary is at the bottom)."""
MAX_COMMANDS = 10_000
"""commands.txt lines read to decide whether the agent typed anything."""

# The harness's own keystrokes wherever they are typed: starting a recording, setting up and
# installing an agent, running the tests.
_HARNESS = re.compile(r"^(asciinema rec\b|source /installed-agent/|bash /tests/run-tests\.sh)")
_RECORD = re.compile(r"^asciinema rec\b")
# commands.txt lines the harness sends in every trial (its `clear` and `C-d` included).
_HARNESS_KEYS = re.compile(_HARNESS.pattern + r"|^(clear|C-d)$")
_TMUX_KEYS = re.compile(r"^(Enter|C-.|M-.|Escape|Tab|BSpace|Up|Down|Left|Right|Space)$")


def open(row: Mapping[str, Any]) -> Opened:
    """The Terminal-Bench attempt of `row`: instruction, verdict, steps still to be read."""
    source_value = row.get("source")
    if source_value in (None, ""):
        raise TrajectoryError("the attempt names no source file (no `source` column)")
    source = Path(str(source_value))
    document = _load_results(source)
    if isinstance(document.get("results"), list):
        record = _run_record(document["results"], source, row.get("line"))
        candidates = _trial_folders(source, record, row)
        folder = next((path for path in candidates if path.is_dir()), None)
    else:
        record, candidates = document, [source.parent]
        folder = source.parent
    files = [str(source)]
    instruction = record.get("instruction")
    output, read = _test_output(folder) if folder is not None else (None, None)
    if read is not None:
        files.append(str(read))
    verdict = Verdict(tests=_tests(record.get("parser_results"), source), output=output)
    if folder is None:
        looked = [f"the trial folder {path}" for path in candidates]
        return Opened(
            files=files,
            instruction=_clean(instruction),
            verdict=verdict,
            steps=iter(()),
            looked_for=looked or [f"a trial folder for record {row.get('line')} of {source}"],
        )
    steps, log, looked_for = _steps(folder)
    if log is not None:
        files.append(str(log))
    notes = []
    if log is not None and _harness_only(folder / COMMANDS):
        notes.append(
            "the agent typed nothing into the terminal (commands.txt holds only the harness's "
            "keystrokes): it ran its commands through its own channel, which the recording "
            "does not show"
        )
    return Opened(
        files=files,
        instruction=_clean(instruction),
        verdict=verdict,
        steps=steps,
        looked_for=looked_for,
        notes=notes,
    )


def _clean(value: Any) -> str | None:
    return None if value is None else clean_lines(str(value))


def _load_results(path: Path) -> dict[str, Any]:
    """A results.json, read whole (bounded), as a JSON object."""
    try:
        size = path.stat().st_size
        if size > MAX_RESULTS_BYTES:
            raise TrajectoryError(
                f"{path}: is {size / 1_048_576:.0f} MB, larger than the "
                f"{MAX_RESULTS_BYTES // 1_048_576} MB a Terminal-Bench results.json may be"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise TrajectoryError(f"{path}: no such file") from None
    except OSError as error:
        raise TrajectoryError(f"{path}: cannot be read ({error.strerror or error})") from None
    try:
        document = json.loads(data)
    except json.JSONDecodeError as error:
        raise TrajectoryError(
            f"{path}: is not valid JSON ({error.msg} at line {error.lineno}, column {error.colno})"
        ) from None
    except UnicodeDecodeError:
        raise TrajectoryError(f"{path}: is not UTF-8 text (a binary file?)") from None
    if not isinstance(document, dict):
        raise TrajectoryError(f"{path}: is not a Terminal-Bench results.json (not an object)")
    return document


def _run_record(records: list[Any], source: Path, line: Any) -> dict[str, Any]:
    """Record `line` (1-based) of a run-level results.json."""
    if not isinstance(line, int) or isinstance(line, bool) or not 0 < line <= len(records):
        raise TrajectoryError(
            f"{source}: has no record {line!r} (it holds {len(records)} trial records)"
        )
    record = records[line - 1]
    if not isinstance(record, dict):
        raise TrajectoryError(f"{source}: record {line} is not a trial record")
    return record


def _trial_folders(source: Path, record: Mapping[str, Any], row: Mapping[str, Any]) -> list[Path]:
    """Where record's trial folder may be, beside a run-level results.json, in order."""
    run_folder = source.parent
    found: list[Path] = []
    recording = record.get("recording_path") or row.get("recording_path")
    if isinstance(recording, str) and recording:
        parts = [part for part in recording.replace("\\", "/").split("/") if part]
        if len(parts) >= 3 and ".." not in parts and parts[-2] == "sessions":
            trial = parts[:-2]  # <run>/<task>/<trial>
            found.append(run_folder.joinpath(*trial[1:]))
            found.append(run_folder.parent.joinpath(*trial))
    task = record.get("task_id") or row.get("task")
    trial_name = record.get("trial_name") or row.get("trial_label")
    named = isinstance(task, str) and isinstance(trial_name, str) and task and trial_name
    if named and "/" not in f"{task}{trial_name}" and ".." not in (task, trial_name):
        found.append(run_folder / str(task) / str(trial_name))
    unique: list[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def _tests(results: Any, source: Path) -> tuple[Test, ...]:
    if results is None:
        return ()
    if not isinstance(results, dict):
        raise TrajectoryError(f"{source}: parser_results is not an object of test -> result")
    return tuple(
        Test(name=clean_lines(str(name)), result=clean_lines(str(result)))
        for name, result in results.items()
    )


def _test_output(folder: Path) -> tuple[str | None, Path | None]:
    """The test runner's own output, and the file it came from."""
    pane = folder / POST_TEST
    if pane.is_file():
        return read_pane(pane), pane
    for name, play in ((TESTS_CAST, play_cast), (TESTS_LOG, play_log)):
        path = folder / name
        if path.is_file():
            return _played(play(path)), path
    return None, None


def _played(steps: Iterator[Step]) -> str:
    """A test session's screens one after the other (a recording that breaks says where)."""
    shown: list[str] = []
    try:
        for step in steps:
            if step.observation:
                shown.append(step.observation)
    except TrajectoryError as error:
        shown.append(f"[{error}]")
    return "\n".join(shown)


def read_pane(path: Path) -> str:
    """A pane capture as text: its end when long, trailing blank lines dropped."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - MAX_PANE_BYTES))
            data = handle.read(MAX_PANE_BYTES)
    except OSError as error:
        raise TrajectoryError(f"{path}: cannot be read ({error.strerror or error})") from None
    cut = ""
    if size > MAX_PANE_BYTES:
        # From its first whole line (a single line that long is shown from where the cut falls).
        newline = data.find(b"\n")
        data = data[newline + 1 :] if newline >= 0 else data.lstrip(bytes(range(0x80, 0xC0)))
        cut = f"[… the first {(size - len(data)) / 1_000_000:.1f} MB cut; the end follows …]\n"
    if b"\x00" in data:
        raise TrajectoryError(f"{path}: holds NUL bytes, not text (a binary file?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TrajectoryError(f"{path}: is not UTF-8 text (a binary file?)") from None
    return cut + clean_lines("\n".join(line.rstrip() for line in text.splitlines()).rstrip())


def _steps(folder: Path) -> tuple[Iterator[Step], Path | None, list[str]]:
    """The agent's steps, the file they come from, and what was looked for when none does."""
    cast, log, commands = folder / AGENT_CAST, folder / AGENT_LOG, folder / COMMANDS
    if cast.is_file():
        return _sourced(play_cast(cast)), cast, []
    if log.is_file():
        return _sourced(play_log(log)), log, []
    if commands.is_file():
        return _sourced(_typed(commands)), commands, []
    return iter(()), None, [str(cast), str(log), str(commands)]


def _sourced(steps: Iterator[Step]) -> Iterator[Step]:
    """The harness's own keystrokes marked as its (`system`, kind `harness`).

    Besides `_HARNESS`: the `clear` the harness types first in a recording (the first input,
    or the one after `asciinema rec`), and the `C-d` that ends it (the shell answers `exit`).
    An agent's own `clear` or `C-d` elsewhere stays the agent's.
    """
    previous: str | None = None
    for step in steps:
        if step.source != "agent":
            yield step
            continue
        text = step.text.strip()
        harness = (
            _HARNESS.match(text) is not None
            or (text == "clear" and (previous is None or _RECORD.match(previous) is not None))
            or (text == "C-d" and (step.observation or "").rstrip().endswith("exit"))
            or (text == "C-d" and step.observation is None)  # commands.txt: no output
        )
        previous = text
        yield replace(step, source="system", kind="harness") if harness else step


def _typed(path: Path) -> Iterator[Step]:
    """commands.txt as steps: what was typed, with no output (none was recorded)."""
    for index, keys in enumerate(_command_lines(path), start=1):
        yield Step(index=index, source="agent", text=keys)


def _command_lines(path: Path) -> Iterator[str]:
    """Each line of commands.txt (a Python list of tmux keys) as what was typed."""
    try:
        handle = path.open("rb")
    except OSError as error:
        raise TrajectoryError(f"{path}: cannot be read ({error.strerror or error})") from None
    with handle:
        number = 0
        while True:
            number += 1
            raw = handle.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            if len(raw) > MAX_LINE_BYTES:
                raise TrajectoryError(
                    f"{path}: line {number} is longer than {MAX_LINE_BYTES // 1_048_576} MB"
                )
            if not raw.strip():
                continue
            try:
                keys = ast.literal_eval(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise TrajectoryError(
                    f"{path}: line {number} is not UTF-8 text (a binary file?)"
                ) from None
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                raise TrajectoryError(
                    f"{path}: line {number} is not a list of keys, as tmux was sent them"
                ) from None
            if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
                raise TrajectoryError(f"{path}: line {number} is not a list of keys")
            yield _keys_text(keys)


def _keys_text(keys: list[str]) -> str:
    """tmux send-keys arguments as typed text: `['ls -la', 'Enter']` -> `ls -la`."""
    if len(keys) == 1 and _TMUX_KEYS.match(keys[0]):
        return keys[0]
    if keys and keys[-1] == "Enter":
        keys = keys[:-1]
    return typed_text("".join(keys))


def _harness_only(path: Path) -> bool:
    """Whether commands.txt holds only the harness's own keystrokes (False when unreadable)."""
    if not path.is_file():
        return False
    try:
        for count, text in enumerate(_command_lines(path)):
            if count >= MAX_COMMANDS or not _HARNESS_KEYS.match(text.strip()):
                return False
    except TrajectoryError:
        return False
    return True
