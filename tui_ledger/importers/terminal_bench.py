"""Terminal-Bench run folders (`tb run`, core 0.1.x): one trial `results.json` per attempt.

Layout: `<submission>/[<run>/]<task>/<trial>/results.json`, with an optional run-level
`results.json` (every trial of the run in one `results` list) and `run_metadata.json`.

- A folder is ONE workflow, named after the folder itself (`@` and `:` welcome), whatever its
  run folders are called. It may be a submission, a run folder or anything above trial
  folders; every trial under it is read. A leaderboard root (a folder of submission folders,
  as in the public leaderboard's repository) gives one workflow per submission folder, named
  after it: a folder is one when some trial's run sits two or more folders below it (its run:
  the outermost folder on its path that holds a run-level `results.json` or
  `run_metadata.json`, else the folder above its task folder).
- Files are told by their content, not their name: a JSON file of any name holding a run's
  `results` list of trial records is read (goose's submissions keep only run files saved as
  `<run id>_results.json`). A single such file is read too.
- `run` is the folder that holds the task folders (the submission itself when runs are not
  nested), or the run id a run file is saved under, so repeated runs of one submission stay
  apart.
- The attempts are the union of the trial files and the run files' `results` lists, each trial
  (`id` and `trial_name`) once. A trial its run recorded but whose trial folder was never
  written (`unknown_agent_error` trials, often) is counted from the run's record, its `source`
  naming the run file, and a warning says how many per workflow: dropping them would leave
  failed attempts out of the denominator.
- The same trial found in two trial files of one workflow, as in a copy of a run folder kept
  inside another, is counted once, and a warning says how many were left out.
- `total_input_tokens` is Terminal-Bench's own sum over the agent's calls and may include cached
  input (the harness does not split it), so it is kept as `input_tokens` and no cache bucket is
  invented. `tokens` = input + output, null when either is null; a recorded 0 stays 0.

See docs/IMPORTERS.md for the full mapping.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_ledger.importers._base import (
    Imported,
    ImporterBase,
    ImporterError,
    ImportOptions,
    load_json,
    peek_text,
)
from tui_ledger.importers._template import detect_in
from tui_ledger.importers.terminal_bench_rows import (
    RESULTS_FILE,
    RUN_METADATA_FILE,
    TrialRows,
    is_trial,
    recorded_run,
)

# Detection walks at most this deep and into this many folders per level (<= 3**4 folders).
_DETECT_DEPTH = 4
_DETECT_FANOUT = 3

# trial_name is a required field of every trial record, written before the long instruction.
_TRIAL_HINT = re.compile(r'"trial_name"\s*:')
# promptfoo also names its output results.json, and test vars may use any word.
_OTHER_HARNESS_HINT = re.compile(r'"(evalId|testIdx|promptIdx)"\s*:')
# A JSON file of another name is read by its content: a run file, whose `results` list opens
# with a trial record (`task_id` beside `trial_name`). Harbor's trials have `task_name`.
_RUN_FILE_HINT = re.compile(r'"results"\s*:\s*\[\s*\{')
_TASK_ID_HINT = re.compile(r'"task_id"\s*:')
_HARBOR_HINT = re.compile(r'"task_name"\s*:')
# A run file saved under its run id: `2025-08-27__22-13-13_results.json` (goose's submissions).
_RUN_FILE_SUFFIX = re.compile(r"[-_. ]*results?$", re.IGNORECASE)

CONVENTIONS = (
    "Terminal-Bench total_input_tokens is the harness's own sum over the agent's calls and may "
    "include cached input (it is not split): kept as input_tokens, no cache bucket invented; "
    "tokens = input + output",
)


@dataclass(frozen=True)
class TerminalBenchImporter(ImporterBase):
    """Terminal-Bench trial results: a run folder tree, or one `results.json`."""

    name: str = "terminal-bench"

    def matches(self, path: Path) -> bool:
        """A Terminal-Bench results file (by its content, whatever its name), or a folder with
        one within four levels."""
        return detect_in(path, _looks_like_results, _has_results_file)

    def read_imported(self, path: Path, options: ImportOptions | None = None) -> Imported:
        """Every trial under a folder (one workflow, named after it), or one results file."""
        if path.is_dir():
            rows = _read_folder(path)
        elif path.is_file():
            rows = _read_file(path)
        else:
            raise ImporterError.at(path, "does not exist")
        return Imported(rows.frame(), CONVENTIONS, rows.warnings())


def _looks_like_trial_head(head: str) -> bool:
    return (
        head.lstrip().startswith("{")
        and _TRIAL_HINT.search(head) is not None
        and _OTHER_HARNESS_HINT.search(head) is None
    )


def _looks_like_trial(path: Path) -> bool:
    return _looks_like_trial_head(peek_text(path))


def _looks_like_results(path: Path) -> bool:
    """Whether `path` is a file Terminal-Bench wrote, by its content: a `results.json` holding
    a trial or a run's trials; a JSON file of any other name whose head opens a `results` list
    with a trial record's `trial_name` and `task_id` (a run file saved under its run id), none
    of Harbor's `task_name`."""
    if path.name == RESULTS_FILE:
        return _looks_like_trial(path)
    if not path.name.lower().endswith(".json") or path.name.startswith("."):
        return False
    head = peek_text(path)
    return (
        _looks_like_trial_head(head)
        and _RUN_FILE_HINT.search(head) is not None
        and _TASK_ID_HINT.search(head) is not None
        and _HARBOR_HINT.search(head) is None
    )


def _has_results_file(folder: Path) -> bool:
    return _find_results_file(folder, _DETECT_DEPTH) is not None


def _find_results_file(folder: Path, depth: int) -> Path | None:
    """A Terminal-Bench results file at most `depth` levels down, trying few folders and few
    JSON files per level."""
    candidate = folder / RESULTS_FILE
    if candidate.is_file():
        return candidate if _looks_like_trial(candidate) else None
    if depth == 0:
        return None
    subfolders: list[str] = []
    files_tried = 0
    with os.scandir(folder) as entries:
        for entry in entries:
            if len(subfolders) == _DETECT_FANOUT and files_tried == _DETECT_FANOUT:
                break
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                if len(subfolders) < _DETECT_FANOUT:
                    subfolders.append(entry.path)
            elif files_tried < _DETECT_FANOUT and entry.name.lower().endswith(".json"):
                files_tried += 1
                if entry.is_file() and _looks_like_results(Path(entry.path)):
                    return Path(entry.path)
    for subfolder in subfolders:
        found = _find_results_file(Path(subfolder), depth - 1)
        if found is not None:
            return found
    return None


def _is_run_file(document: Any) -> bool:
    return isinstance(document, dict) and isinstance(document.get("results"), list)


def _walk_results(root: Path) -> Iterator[tuple[Path, Any]]:
    """(file, parsed JSON) for every Terminal-Bench results file under `root`, in path order:
    each `results.json`, and each other JSON file whose content is a run's trials. A trial
    folder's own logs are not walked."""
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        here = Path(folder)
        if RESULTS_FILE in files:
            file = here / RESULTS_FILE
            document = load_json(file)
            yield file, document
            if is_trial(document):
                subfolders[:] = []  # a trial folder holds only that trial's logs
                continue
        for name in sorted(files):
            file = here / name
            if name != RESULTS_FILE and _looks_like_results(file):
                document = load_json(file)
                if _is_run_file(document):
                    yield file, document


def _read_folder(root: Path) -> TrialRows:
    workflow = root.resolve().name
    trials: list[tuple[Path, dict[str, Any]]] = []
    run_files: list[tuple[Path, dict[str, Any]]] = []
    for file, document in _walk_results(root):
        if is_trial(document):
            trials.append((file, document))
        elif _is_run_file(document):
            run_files.append((file, document))
        else:
            raise ImporterError.at(file, "is not a Terminal-Bench trial record (no task_id)")

    # A leaderboard root (a folder of submission folders): one workflow per submission.
    board = _is_leaderboard_root(root, [file for file, _ in trials], [f for f, _ in run_files])
    rows = TrialRows(workflow)
    recorded: dict[Path, set[str | None]] = {}  # folder -> the runs its trial files record
    for file, document in trials:
        relative = file.relative_to(root).parts
        base, name = (root / relative[0], relative[0]) if board else (root, workflow)
        # <run>/<task>/<trial>/results.json: the run is the folder above the task folder.
        nested = len(file.relative_to(base).parts) >= 4
        rows.add(
            document,
            source=file,
            line=1,
            run_folder=file.parents[2] if nested else base,
            run_is_folder=nested,
            workflow=name,
        )
        task = document.get("task_id")
        run = recorded_run(document, task) if isinstance(task, str) else None
        for folder in file.parents:
            recorded.setdefault(folder, set()).add(run)
            if folder == root:
                break
    for file, document in run_files:
        # A run file repeats its run's trials: each one a trial file holds already is left
        # out (by its id and trial_name), the others are counted from the run file.
        parts = file.relative_to(root).parts
        base, name = (root / parts[0], parts[0]) if board and len(parts) > 1 else (root, workflow)
        rows.add_run_file(
            document,
            source=file,
            run_folder=file.parent,
            run_is_folder=file.parent != base,
            run=_run_file_id(file),
            workflow=name,
            unkeyed=not _repeats_trial_files(file, document, recorded.get(file.parent, set())),
        )
    if not rows.count:
        raise ImporterError.at(root, "holds no Terminal-Bench trial results.json")
    return rows


def _repeats_trial_files(file: Path, document: dict[str, Any], runs_below: set[str | None]) -> bool:
    """Whether the trial files below a run file's folder hold its trials already (read for its
    records without an `id` or `trial_name`, which cannot be matched one by one).

    A `results.json` is its run folder's own summary: any trial file below stands for it. A run
    file saved under its run id sits beside other runs: it is repeated only when the trial files
    below record its run (or when its trials record none, so no trial is ever counted twice).
    """
    if not runs_below:
        return False
    if file.name == RESULTS_FILE:
        return True
    own: set[str | None] = set()
    for record in document["results"]:
        task = record.get("task_id") if isinstance(record, dict) else None
        own.add(recorded_run(record, task) if isinstance(task, str) else None)
    return None in own or None in runs_below or not own.isdisjoint(runs_below)


def _run_file_id(file: Path) -> str | None:
    """The run a run file of another name than `results.json` is saved under, from its name
    (`2025-08-27__22-13-13_results.json` -> `2025-08-27__22-13-13`); None for `results.json`,
    whose run is its folder."""
    if file.name == RESULTS_FILE:
        return None
    stem = file.name[: -len(".json")]
    return _RUN_FILE_SUFFIX.sub("", stem) or stem


def _is_leaderboard_root(root: Path, trial_files: list[Path], run_files: list[Path]) -> bool:
    """Whether `root` is a leaderboard root (a folder of submission folders) rather than one
    submission, one of its runs, or a folder of its runs.

    Layout `<submission>/[<run>/]<task>/<trial>/results.json`. A trial's run is the outermost
    folder on its path (from `root` down) that `tb run` marked as a run, by writing a run-level
    `results.json` or a `run_metadata.json` into it; else the folder above its task folder. A
    run file of another name is a run of its own, one level below the folder holding it. Its
    submission is the folder above the run, so `root` is a root when some run sits two or more
    levels below it. Folder names play no part: submitters rename their run folders
    (`run1_2025-08-10__05-27-18` for the run recorded as `2025-08-10__05-27-18`), and some nest
    a re-run inside a run.
    """
    marked_folders = {file.parent for file in run_files if file.name == RESULTS_FILE}
    marked: dict[Path, bool] = {}

    def is_run(folder: Path) -> bool:
        if folder not in marked:
            marked[folder] = folder in marked_folders or (folder / RUN_METADATA_FILE).is_file()
        return marked[folder]

    def run_depth(relative: tuple[str, ...], deepest: int) -> int:
        """How far below `root` the outermost marked folder on the path sits, else `deepest`."""
        folder, depth = root, 0
        while depth < deepest and not is_run(folder):
            depth += 1
            folder = folder / relative[depth - 1]
        return depth

    for file in trial_files:
        relative = file.relative_to(root).parts
        # the folders between root and the task folder: <task>/<trial>/results.json below them
        if run_depth(relative, len(relative) - 3) >= 2:
            return True
    for file in run_files:
        relative = file.relative_to(root).parts
        if file.name != RESULTS_FILE:
            if len(relative) >= 2:  # the file's folder is below root, the run below that
                return True
        elif run_depth(relative, len(relative) - 1) >= 2:
            return True
    return False


def _read_file(file: Path) -> TrialRows:
    document = load_json(file)
    resolved = file.resolve()
    if is_trial(document):
        parents = resolved.parents
        run_folder = parents[2] if len(parents) > 2 else resolved.parent
        rows = TrialRows(run_folder.name)
        rows.add(document, source=file, line=1, run_folder=run_folder, run_is_folder=False)
    elif _is_run_file(document):
        rows = TrialRows(resolved.parent.name)
        rows.add_run_file(
            document,
            source=file,
            run_folder=resolved.parent,
            run=_run_file_id(file),
            look_beside=True,
        )
    else:
        raise ImporterError.at(file, "is not a Terminal-Bench results.json (no task_id)")
    if not rows.count:
        raise ImporterError.at(file, "holds no Terminal-Bench trials")
    return rows
