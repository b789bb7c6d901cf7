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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from tui_ledger.importers._base import (
    TIMESTAMP_DTYPE,
    Imported,
    ImporterBase,
    ImporterError,
    ImportOptions,
    build_frame,
    counted,
    load_json,
    parse_timestamp,
    peek_text,
    seconds_between,
    whole_number,
)
from tui_ledger.importers.recorded import recorded_only_at_run_level
from tui_ledger.schema import STATUS_WORDS, normalise_word

RESULTS_FILE = "results.json"
RUN_METADATA_FILE = "run_metadata.json"

# Detection walks at most this deep and into this many folders per level (<= 3**4 folders).
_DETECT_DEPTH = 4
_DETECT_FANOUT = 3

# Terminal-Bench FailureMode values outside the loader's status vocabulary, and the word kept for
# them. The raw value always stays in `stop_reason`.
FAILURE_MODE_STATUS: dict[str, str] = {
    "none": "unset",  # no failure recorded: the verdict is is_resolved alone
    "unknown": "error",
    "fatal_llm_parse_error": "parse_error",
    "context_length_exceeded": "failed",  # the agent ran out of context: its own failure
}

_TRIAL_KEYS = ("task_id", "trial_name")
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

_SCHEMA: dict[str, pl.DataType] = {
    "workflow": pl.String(),
    "task": pl.String(),
    "passed": pl.Boolean(),
    "status": pl.String(),
    "input_tokens": pl.Int64(),
    "output_tokens": pl.Int64(),
    "tokens": pl.Int64(),
    "model": pl.String(),
    "run": pl.String(),
    "timestamp": TIMESTAMP_DTYPE,
    "duration_s": pl.Float64(),
    "stop_reason": pl.String(),
    "trial_label": pl.String(),
    "trial_uuid": pl.String(),
    "tests_passed": pl.Int64(),
    "tests_total": pl.Int64(),
    "agent_name": pl.String(),
    "agent_duration_s": pl.Float64(),
    "test_duration_s": pl.Float64(),
    "trial_ended_at": TIMESTAMP_DTYPE,
    "agent_started_at": TIMESTAMP_DTYPE,
    "agent_ended_at": TIMESTAMP_DTYPE,
    "test_started_at": TIMESTAMP_DTYPE,
    "test_ended_at": TIMESTAMP_DTYPE,
    "recording_path": pl.String(),
    "source": pl.String(),
    "line": pl.Int64(),
}
# Fields only some runs carry (run_metadata.json): no column at all when none does.
_OPTIONAL = ("model", "agent_name")


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
        try:
            if path.is_file():
                return _looks_like_results(path)
            if path.is_dir():
                return _find_results_file(path, _DETECT_DEPTH) is not None
        except OSError:
            return False
        return False

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


def _is_trial(document: Any) -> bool:
    return isinstance(document, dict) and any(key in document for key in _TRIAL_KEYS)


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
            if _is_trial(document):
                subfolders[:] = []  # a trial folder holds only that trial's logs
                continue
        for name in sorted(files):
            file = here / name
            if name != RESULTS_FILE and _looks_like_results(file):
                document = load_json(file)
                if _is_run_file(document):
                    yield file, document


def _read_folder(root: Path) -> _Rows:
    workflow = root.resolve().name
    trials: list[tuple[Path, dict[str, Any]]] = []
    run_files: list[tuple[Path, dict[str, Any]]] = []
    for file, document in _walk_results(root):
        if _is_trial(document):
            trials.append((file, document))
        elif _is_run_file(document):
            run_files.append((file, document))
        else:
            raise ImporterError.at(file, "is not a Terminal-Bench trial record (no task_id)")

    # A leaderboard root (a folder of submission folders): one workflow per submission.
    board = _is_leaderboard_root(root, [file for file, _ in trials], [f for f, _ in run_files])
    rows = _Rows(workflow)
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
        run = _recorded_run(document, task) if isinstance(task, str) else None
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
        own.add(_recorded_run(record, task) if isinstance(task, str) else None)
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


def _read_file(file: Path) -> _Rows:
    document = load_json(file)
    resolved = file.resolve()
    if _is_trial(document):
        parents = resolved.parents
        run_folder = parents[2] if len(parents) > 2 else resolved.parent
        rows = _Rows(run_folder.name)
        rows.add(document, source=file, line=1, run_folder=run_folder, run_is_folder=False)
    elif _is_run_file(document):
        rows = _Rows(resolved.parent.name)
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


class _Rows:
    """Column lists being filled, one trial record at a time."""

    def __init__(self, workflow: str) -> None:
        self.workflow = workflow
        self.columns: dict[str, list[Any]] = {name: [] for name in _SCHEMA}
        self.count = 0
        self.repeated = 0  # trial records read a second time (the same trial), left out
        self.per_workflow: dict[str, int] = {}  # workflow -> its attempts
        self.run_only: dict[str, int] = {}  # workflow -> attempts known only from run files
        self.run_only_names: list[str] = []  # the first few of them, by trial name
        self._seen: set[tuple[str, str, str]] = set()
        self._metadata: dict[Path, Mapping[str, Any]] = {}

    def add_run_file(
        self,
        document: Mapping[str, Any],
        *,
        source: Path,
        run_folder: Path,
        run_is_folder: bool = True,
        run: str | None = None,
        workflow: str | None = None,
        unkeyed: bool = True,
        look_beside: bool = False,
    ) -> None:
        """Every trial of a run file that no trial file read before holds; `run` names the run
        (default: the folder holding it, or the run recorded when `run_is_folder` is False, as
        for the trial files beside it). A record without `id` or `trial_name` cannot be matched
        to its trial file: read only when `unkeyed` (no trial file below holds its run).

        `look_beside`: the run file is read alone, its trial files not; a trial whose trial
        file sits in its run folder (`<task>/<trial_name>/results.json`) is not said to be
        recorded only at run level."""
        for index, record in enumerate(document["results"], start=1):
            if not _is_trial(record):
                raise ImporterError.at(
                    source, "is not a Terminal-Bench trial (no task_id)", record=f"record {index}"
                )
            if not unkeyed and _trial_key(record) is None:
                continue
            kept = look_beside and _trial_file_beside(run_folder, record).is_file()
            self.add(
                record,
                source=source,
                line=index,
                run_folder=run_folder,
                run_is_folder=run_is_folder,
                run=run,
                where=f"record {index}",
                workflow=workflow,
                from_run_file=True,
                only_here=not kept,
            )

    def add(
        self,
        record: Mapping[str, Any],
        *,
        source: Path,
        line: int,
        run_folder: Path,
        run_is_folder: bool = True,
        run: str | None = None,
        where: str | None = None,
        workflow: str | None = None,
        from_run_file: bool = False,
        only_here: bool = True,
    ) -> None:
        """One trial record; `where` names it inside a many-trial file.

        `run_is_folder` is False when no run folder sits between the root and the task folders
        (submissions often flatten them): the run id recorded in `recording_path` names the run
        (else the `run_id` in the folder's `run_metadata.json`).
        `run`, when given, names it whatever the record says (a run file saved under its id).
        A trial read a second time (the same `id` and `trial_name` in the same workflow) is left
        out: from a run file (`from_run_file`, which repeats its trials) silently, from a trial
        file (a copy of a run folder kept inside another) counted in `repeated`. A trial first
        read from a run file is counted in `run_only` (unless not `only_here`): its trial
        folder was never written.
        """
        task = record.get("task_id")
        if not isinstance(task, str) or not task:
            raise ImporterError.at(source, "has no task_id", record=where)
        name = self.workflow if workflow is None else workflow
        trial = _trial_key(record)
        if trial is not None:
            key = (name, *trial)
            if key in self._seen:
                self.repeated += not from_run_file
                return
            self._seen.add(key)
        passed = record.get("is_resolved")
        if passed is not None and not isinstance(passed, bool):
            raise ImporterError.at(
                source, f"is_resolved is {passed!r}, not true, false or null", record=where
            )
        failure_mode = record.get("failure_mode", "unset")
        if failure_mode is not None and not isinstance(failure_mode, str):
            raise ImporterError.at(source, f"failure_mode is {failure_mode!r}", record=where)

        def count(field: str) -> int | None:
            return whole_number(record.get(field), path=source, record=where, field=field)

        def moment(field: str) -> Any:
            return parse_timestamp(record.get(field), path=source, record=where, field=field)

        input_tokens = count("total_input_tokens")
        output_tokens = count("total_output_tokens")
        started, ended = moment("trial_started_at"), moment("trial_ended_at")
        agent_started, agent_ended = moment("agent_started_at"), moment("agent_ended_at")
        test_started, test_ended = moment("test_started_at"), moment("test_ended_at")
        tests = record.get("parser_results")
        metadata = self._run_metadata(run_folder)

        values: dict[str, Any] = {
            "workflow": name,
            "task": task,
            "passed": passed,
            "status": _status(failure_mode),
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "tokens": None
            if input_tokens is None or output_tokens is None
            else input_tokens + output_tokens,
            "model": _text(metadata.get("model_name")),
            "run": run
            or (None if run_is_folder else _flat_run(record, task, metadata))
            or run_folder.name,
            "timestamp": started,
            "duration_s": seconds_between(started, ended),
            "stop_reason": failure_mode,
            "trial_label": _text(record.get("trial_name")),
            "trial_uuid": _text(record.get("id", record.get("uuid"))),
            "tests_passed": sum(value == "passed" for value in tests.values())
            if isinstance(tests, dict)
            else None,
            "tests_total": len(tests) if isinstance(tests, dict) else None,
            "agent_name": _text(metadata.get("agent_name")),
            "agent_duration_s": seconds_between(agent_started, agent_ended),
            "test_duration_s": seconds_between(test_started, test_ended),
            "trial_ended_at": ended,
            "agent_started_at": agent_started,
            "agent_ended_at": agent_ended,
            "test_started_at": test_started,
            "test_ended_at": test_ended,
            "recording_path": _text(record.get("recording_path")),
            "source": str(source),
            "line": line,
        }
        for column, value in values.items():
            self.columns[column].append(value)
        self.count += 1
        self.per_workflow[name] = self.per_workflow.get(name, 0) + 1
        if from_run_file and only_here:
            self.run_only[name] = self.run_only.get(name, 0) + 1
            if len(self.run_only_names) < 3:
                self.run_only_names.append(str(record.get("trial_name") or task))

    def _run_metadata(self, run_folder: Path) -> Mapping[str, Any]:
        """The run's run_metadata.json (model and agent names), read once per run folder."""
        if run_folder not in self._metadata:
            file = run_folder / RUN_METADATA_FILE
            metadata = load_json(file) if file.is_file() else {}
            self._metadata[run_folder] = metadata if isinstance(metadata, dict) else {}
        return self._metadata[run_folder]

    def frame(self) -> pl.DataFrame:
        return build_frame(self.columns, _SCHEMA, drop_if_all_null=_OPTIONAL)

    def warnings(self) -> tuple[str, ...]:
        said = recorded_only_at_run_level(
            self.run_only, self.per_workflow, examples=self.run_only_names
        )
        if not self.repeated:
            return said
        return (
            *said,
            f"{counted(self.repeated, 'Terminal-Bench trial')} found a second time (the same "
            "id and trial_name in another results file, as in a copy of a run folder kept "
            "inside another): each trial counted once",
        )


def _status(failure_mode: str | None) -> str | None:
    """failure_mode as the status column: kept when the loader knows it, else its mapped word.

    A value neither knows passes through unchanged, so the loader names it in its error.
    """
    if failure_mode is None:
        return None
    if normalise_word(failure_mode) in STATUS_WORDS:
        return failure_mode
    return FAILURE_MODE_STATUS.get(normalise_word(failure_mode), failure_mode)


def _trial_file_beside(run_folder: Path, record: Mapping[str, Any]) -> Path:
    """Where `tb run` writes a trial's own file in its run folder."""
    return run_folder / str(record.get("task_id")) / str(record.get("trial_name")) / RESULTS_FILE


def _trial_key(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """A trial's identity, its `id` (`uuid` in some submissions) and `trial_name`, if it has
    both."""
    trial_id, trial_name = record.get("id", record.get("uuid")), record.get("trial_name")
    if isinstance(trial_id, str) and trial_id and isinstance(trial_name, str):
        return trial_id, trial_name
    return None


def _flat_run(record: Mapping[str, Any], task: str, metadata: Mapping[str, Any]) -> str | None:
    """The run of a trial with no run folder of its own: the run id its `recording_path`
    records, else (an errored trial recorded none) the `run_id` of the run's metadata."""
    return _recorded_run(record, task) or _text(metadata.get("run_id"))


def _recorded_run(record: Mapping[str, Any], task: str) -> str | None:
    """The run id in `recording_path` ("<run>/<task>/<trial>/sessions/agent.cast"), if any."""
    recording = record.get("recording_path")
    if not isinstance(recording, str):
        return None
    parts = recording.replace("\\", "/").split("/")
    if len(parts) >= 3 and parts[1] == task and parts[0] not in ("", ".", ".."):
        return parts[0]
    return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
