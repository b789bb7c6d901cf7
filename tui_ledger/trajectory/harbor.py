"""Harbor trials: the steps of `agent/trajectory.json` (ATIF), the task's instruction, and the
verifier's evidence.

A row's `source` is the trial's `result.json` (importers/harbor.py); the trial folder beside it
holds (Harbor's `TrialPaths`):

    <trial>/config.json              TrialConfig: task.path, trials_dir
    <trial>/agent/trajectory.json    ATIF, when the agent writes one (its continuations beside it)
    <trial>/steps/<step>/agent/trajectory.json   multi-step trials, one per step
    <trial>/verifier/                reward.txt or reward.json, test-stdout.txt, test-stderr.txt,
                                     ctrf.json (one result per test, where the tests write it)

The instruction is the task's `instruction.md`: `config.json` names the task folder
(`task.path`), relative to the folder Harbor ran in (the trial folder's ancestor above
`trials_dir`); null when that folder is not on this machine, and for a task Harbor fetched
from git (kept in its cache under a hashed name).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui_ledger.trajectory.atif import open_files
from tui_ledger.trajectory.files import load_document, read_text_head, read_text_tail
from tui_ledger.trajectory.model import Opened, Test, TrajectoryError, Verdict
from tui_ledger.trajectory.text import looked_for

TRAJECTORY = Path("agent") / "trajectory.json"
VERIFIER = "verifier"
# The verifier's output files, shown in this order; each its end where it runs past
# text.TEXT_LIMIT (the summary is at the end), as every reader's grader output.
OUTPUT_FILES = ("test-stdout.txt", "test-stderr.txt", "test_output.txt")
REWARD_FILES = ("reward.txt", "reward.json")
CTRF = "ctrf.json"
INSTRUCTION = "instruction.md"


def open(row: Mapping[str, Any]) -> Opened:
    """The trial the row's `source` (its result.json, or its folder) names."""
    source = row.get("source")
    if not source:
        raise TrajectoryError("the attempt has no source naming its Harbor trial")
    path = Path(str(source))
    trial = path.parent if path.name == "result.json" or path.suffix == ".json" else path
    if not trial.is_dir():
        raise TrajectoryError(f"{trial}: the Harbor trial folder is not there")
    verdict, read = verdict_of(trial / VERIFIER)
    instruction = instruction_of(trial)
    trajectories = trajectory_files(trial)
    if not trajectories:
        looked = [
            looked_for(f"an ATIF trajectory ({TRAJECTORY})", trial),
            looked_for(f"one per step ({Path('steps', '*', TRAJECTORY)})", trial),
        ]
        return Opened(
            files=read,
            instruction=instruction,
            verdict=verdict,
            steps=iter(()),
            looked_for=looked,
        )
    opened = open_files(trajectories)
    opened.files.extend(read)
    # The task's own instruction.md where it is on this machine, else the trajectory's prompt.
    opened.instruction = instruction or opened.instruction
    opened.verdict = verdict
    return opened


def trajectory_files(trial: Path) -> list[Path]:
    """The trial's ATIF file, or each step's in a multi-step trial (in the steps' order)."""
    own = trial / TRAJECTORY
    if own.is_file():
        return [own]
    steps = trial / "steps"
    if not steps.is_dir():
        return []
    found = [step / TRAJECTORY for step in sorted(steps.iterdir()) if (step / TRAJECTORY).is_file()]
    return found


def verdict_of(folder: Path) -> tuple[Verdict, list[str]]:
    """Each test by name from `ctrf.json` where the verifier wrote one, and the output files
    (the reward first); the files read. An absent folder gives an empty verdict."""
    if not folder.is_dir():
        return Verdict(), []
    read: list[str] = []
    tests: tuple[Test, ...] = ()
    ctrf = folder / CTRF
    if ctrf.is_file():
        tests = _ctrf_tests(ctrf)
        read.append(str(ctrf))
    parts = []
    for name in (*REWARD_FILES, *OUTPUT_FILES):
        file = folder / name
        if not file.is_file():
            continue
        text = read_text_head(file) if name in REWARD_FILES else read_text_tail(file)
        if text is None:
            continue
        read.append(str(file))
        if name in REWARD_FILES:
            parts.append(f"{name}: {text.strip()}")
        elif text.strip():
            parts.append(f"{name}:\n{text.rstrip()}")
    output = "\n\n".join(parts) if parts else None
    return Verdict(tests=tests, output=output), read


def _ctrf_tests(path: Path) -> tuple[Test, ...]:
    """CTRF (`results.tests[]`: name, status): each test with its result, in the file's order."""
    document = load_document(path)
    results = document.get("results") if isinstance(document, dict) else None
    tests = results.get("tests") if isinstance(results, dict) else None
    if not isinstance(tests, list):
        raise TrajectoryError(f"{path}: has no results.tests list (not a CTRF report)")
    found = []
    for number, test in enumerate(tests, start=1):
        if not isinstance(test, dict):
            raise TrajectoryError(f"{path}: results.tests[{number}] is not an object")
        name, status = test.get("name"), test.get("status")
        if not isinstance(name, str) or not isinstance(status, str):
            raise TrajectoryError(f"{path}: results.tests[{number}] has no name and status")
        found.append(Test(name, status))
    return tuple(found)


def instruction_of(trial: Path) -> str | None:
    """The task's instruction.md, found through the trial's config.json; None when absent."""
    for folder in _task_folders(trial):
        file = folder / INSTRUCTION
        if file.is_file():
            return read_text_head(file)
    return None


def _task_folders(trial: Path) -> list[Path]:
    try:
        config = load_document(trial / "config.json")
    except TrajectoryError:
        return []
    task = config.get("task") if isinstance(config, dict) else None
    if not isinstance(task, dict):
        return []
    where = task.get("path")
    if not isinstance(where, str) or not where:
        return []
    if task.get("git_url"):
        return []  # a registry task lives in Harbor's cache under a hashed name
    task_path = Path(where).expanduser()
    if task_path.is_absolute():
        return [task_path]
    candidates = []
    trials_dir = config.get("trials_dir")
    if isinstance(trials_dir, str) and trials_dir and not Path(trials_dir).is_absolute():
        # trials_dir (`jobs/<job>`) is relative to where Harbor ran: that many levels up.
        depth = len(Path(trials_dir).parts)
        parents = trial.resolve().parents
        if depth < len(parents):
            candidates.append(parents[depth] / task_path)
    return candidates
