"""Terminal-Bench submission folders in every layout the public leaderboard (core 0.1.1) holds,
written small, and a plain count of what they hold (tests/test_terminal_bench_*.py).

Each writer makes one submission folder the way its submitter laid it out:

- `cursor`: run folders renamed `run<k>_<run id>`, and one errored trial per run left only in
  the run-level `results.json` (its trial folder is missing, as in the real submission);
- `droid`: run folders named after their run ids (job names, `tb_rc2_sonnet_<k>`);
- `swe_agent_mini`: timestamp run ids, one run folder holding a second run's folder, which is
  a byte-identical copy of part of a top-level run (the same trials, found twice);
- `goose`: no folders, only run files saved as `<run id>_results.json` (or `__results.json`);
- `ob1`: run folders holding only `results.json` and `run_metadata.json`, no trial folders;
- `orchestrator`: flat, `<submission>/<task>/<task>.<k>-of-5/results.json`, trials identified
  by `uuid`, the run recorded only in `recording_path`, a run-level `results.json` on top;
- `mixed`: run folders named every way at once (`run1_<stamp>`, `<stamp>`, a job name), one of
  them holding a genuine re-run.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

TASKS = ("fix-git", "hello-world", "csv-to-parquet")


def trial(
    run_id: str, task: str, passed: bool | None, tokens: int, *, k: int = 1, of: int = 1
) -> dict[str, object]:
    """One trial record as `tb run` writes it; `run_id` is the run the harness recorded."""
    name = f"{task}.{k}-of-{of}.{run_id}"
    return {
        "id": f"{run_id}-{task}-{k}",
        "trial_name": name,
        "task_id": task,
        "is_resolved": passed,
        "failure_mode": "unset" if passed is not None else "unknown_agent_error",
        "total_input_tokens": tokens,
        "total_output_tokens": 10,
        "recording_path": f"{run_id}/{task}/{name}/sessions/agent.cast",
    }


def write_json(path: Path, document: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")


def write_run(
    run_folder: Path,
    run_id: str,
    passes: Mapping[str, bool | None],
    tokens: int,
    *,
    trial_files: bool = True,
    missing: tuple[str, ...] = (),
) -> list[dict[str, object]]:
    """One `tb run` output: a trial `results.json` per task (unless `trial_files` is False, or
    the task is in `missing`), the run-level `results.json` repeating every trial, and a
    `run_metadata.json`. Returns the records."""
    records = [trial(run_id, task, passed, tokens) for task, passed in passes.items()]
    if trial_files:
        for record in records:
            if record["task_id"] not in missing:
                name = str(record["trial_name"])
                write_json(run_folder / str(record["task_id"]) / name / "results.json", record)
                (run_folder / str(record["task_id"]) / name / "sessions").mkdir()
    resolved = sum(record["is_resolved"] is True for record in records)
    write_json(run_folder / "results.json", {"id": run_id, "results": records, "n": resolved})
    write_json(run_folder / "run_metadata.json", {"run_id": run_id, "model_name": "m"})
    return records


def passes(k: int, modulo: int) -> dict[str, bool]:
    return {task: (i + k) % modulo == 0 for i, task in enumerate(TASKS)}


def cursor(folder: Path) -> None:
    for k in range(1, 4):
        stamp = f"2025-08-1{k}__05-27-18"
        outcome: dict[str, bool | None] = {**passes(k, 3), "errored-task": None}
        write_run(folder / f"run{k}_{stamp}", stamp, outcome, 1000 * k, missing=("errored-task",))


def droid(folder: Path) -> None:
    for k in range(1, 4):
        write_run(folder / f"tb_rc2_sonnet_{k}", f"tb_rc2_sonnet_{k}", passes(k, 2), 500)


def swe_agent_mini(folder: Path) -> None:
    first, second = "2025-08-15__19-28-24", "2025-08-15__16-23-45"
    write_run(folder / "2025-08-13__19-44-27", "2025-08-13__19-44-27", passes(1, 2), 300)
    write_run(folder / second, second, {"fix-git": True, "hello-world": False}, 90)
    write_run(folder / first, first, {"fix-git": False, "csv-to-parquet": True}, 700)
    # the submitter kept a copy of part of the second run inside the first
    copy = folder / first / second
    copy.mkdir()
    shutil.copy(folder / second / "results.json", copy / "results.json")
    shutil.copytree(folder / second / "fix-git", copy / "fix-git")


def goose(folder: Path, separator: str = "_") -> None:
    for k in range(1, 4):
        stamp = f"2025-08-2{k}__22-13-13"
        records = [trial(stamp, task, passed, 0) for task, passed in passes(k, 2).items()]
        document = {"id": f"uuid-{k}", "results": records, "pass_at_k": {}, "accuracy": 0.5}
        write_json(folder / f"{stamp}{separator}results.json", document)


def goose_sonnet(folder: Path) -> None:
    goose(folder, "__")


def ob1(folder: Path) -> None:
    for k in range(1, 3):
        run_id = f"ob1_agent_sdk_20250910-04403{k}"
        write_run(folder / run_id, run_id, passes(k, 3), 200, trial_files=False)


def orchestrator(folder: Path) -> None:
    run_id, records = "2025-09-01__11-19-06", []
    for task in TASKS:
        for k in range(1, 3):
            record = trial(run_id, task, k == 2, 40, k=k, of=5)
            record["trial_name"] = f"{task}.{k}-of-5"  # this submitter's trial names
            record["uuid"] = record.pop("id")
            write_json(folder / task / str(record["trial_name"]) / "results.json", record)
            records.append(record)
    write_json(folder / "results.json", {"id": run_id, "results": records})


def mixed(folder: Path) -> None:
    write_run(folder / "run1_2025-07-01__10-00-00", "2025-07-01__10-00-00", passes(1, 2), 100)
    write_run(folder / "2025-07-02__10-00-00", "2025-07-02__10-00-00", passes(2, 2), 100)
    write_run(folder / "openhands-sonnet2", "openhands-sonnet2", passes(3, 2), 100)
    rerun = folder / "2025-07-02__10-00-00" / "2025-07-03__09-00-00"
    write_run(rerun, "2025-07-03__09-00-00", {"fix-git": True}, 100)


SUBMISSIONS: dict[str, Callable[[Path], None]] = {
    "20250811_cursor-cli_claude-4-sonnet": cursor,
    "20250923_droid_claude-4-sonnet": droid,
    "20250825_swe-agent-mini_claude-4-sonnet": swe_agent_mini,
    "20250829_goose_claude-4-opus": goose,
    "20250829_goose_claude-4-sonnet": goose_sonnet,
    "ob1-09-10-25": ob1,
    "20250902_orchestrator_claude-4-sonnet": orchestrator,
    "20250801_mixed_claude-4-sonnet": mixed,
    "20250711_openhands_claude-4-sonnet": lambda folder: write_run(
        folder / "openhands-sonnet", "openhands-sonnet", passes(0, 2), 800
    ),
}
"""Nine submissions, as the public leaderboard's nine distinct layouts and names."""

RUNS: dict[str, set[str]] = {
    "20250811_cursor-cli_claude-4-sonnet": {f"run{k}_2025-08-1{k}__05-27-18" for k in (1, 2, 3)},
    "20250923_droid_claude-4-sonnet": {f"tb_rc2_sonnet_{k}" for k in (1, 2, 3)},
    "20250825_swe-agent-mini_claude-4-sonnet": {
        "2025-08-13__19-44-27",
        "2025-08-15__16-23-45",
        "2025-08-15__19-28-24",
    },
    "20250829_goose_claude-4-opus": {f"2025-08-2{k}__22-13-13" for k in (1, 2, 3)},
    "20250829_goose_claude-4-sonnet": {f"2025-08-2{k}__22-13-13" for k in (1, 2, 3)},
    "ob1-09-10-25": {"ob1_agent_sdk_20250910-044031", "ob1_agent_sdk_20250910-044032"},
    "20250902_orchestrator_claude-4-sonnet": {"2025-09-01__11-19-06"},
    "20250801_mixed_claude-4-sonnet": {
        "run1_2025-07-01__10-00-00",
        "2025-07-02__10-00-00",
        "openhands-sonnet2",
        "2025-07-03__09-00-00",
    },
    "20250711_openhands_claude-4-sonnet": {"openhands-sonnet"},
}
"""The runs each submission's `run` column names."""


def write_board(root: Path) -> Path:
    """A leaderboard root holding the nine submissions."""
    for name, write in SUBMISSIONS.items():
        (root / name).mkdir(parents=True)
        write(root / name)
    return root


def plain_count(folder: Path) -> tuple[int, int]:
    """(attempts, accepted) read the plain way, without ledger-tui: every trial record any JSON
    file below `folder` holds, a trial file (`task_id`) or an entry of a run file's `results`
    list, each trial (its `id`, or `uuid`, and `trial_name`) once; `is_resolved`."""
    documents = [json.loads(path.read_text()) for path in sorted(folder.rglob("*.json"))]
    records = [document for document in documents if "task_id" in document]
    for document in documents:
        listed = document.get("results")
        if isinstance(listed, list):
            records.extend(record for record in listed if "task_id" in record)
    seen: set[tuple[object, object]] = set()
    attempts = accepted = 0
    for record in records:
        key = (record.get("id", record.get("uuid")), record["trial_name"])
        if key in seen:
            continue
        seen.add(key)
        attempts += 1
        accepted += record["is_resolved"] is True
    return attempts, accepted
