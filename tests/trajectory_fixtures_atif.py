"""Small ATIF files (Agent Trajectory Interchange Format v1.x) and Harbor trials, written by tests.

Shapes follow Harbor's own models (`harbor.models.trajectories`: Step, Metrics, FinalMetrics,
Observation) and its trial layout (`TrialPaths`). Reuse them to build plain ledgers with a
`trace` column:

    trace = write_atif(tmp_path / "traces" / "a1.json", sample_steps())
    ledger.write_text(f"workflow,task,passed,tokens,trace\\nw,t,true,{SAMPLE_TOKENS},traces/a1.json\\n")
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def atif_step(
    step_id: int,
    source: str,
    message: Any = "",
    *,
    reasoning: str | None = None,
    calls: list[tuple[str, str, Any]] | None = None,
    results: list[Any] | None = None,
    prompt: int | None = None,
    cached: int | None = None,
    completion: int | None = None,
    cache_write: int | None = None,
    timestamp: str | None = None,
    extra: dict[str, Any] | None = None,
    copied: bool | None = None,
) -> dict[str, Any]:
    """One ATIF step. `calls` are (tool_call_id, function_name, arguments); `results` are the
    observation's contents (text), each paired with the call of the same position."""
    step: dict[str, Any] = {"step_id": step_id, "source": source, "message": message}
    if timestamp is not None:
        step["timestamp"] = timestamp
    if reasoning is not None:
        step["reasoning_content"] = reasoning
    if calls:
        step["tool_calls"] = [
            {"tool_call_id": call_id, "function_name": name, "arguments": arguments}
            for call_id, name, arguments in calls
        ]
    if results is not None:
        ids = [call[0] for call in calls or []]
        step["observation"] = {
            "results": [
                {"source_call_id": ids[number] if number < len(ids) else None, "content": content}
                for number, content in enumerate(results)
            ]
        }
    metrics: dict[str, Any] = {}
    for key, value in (
        ("prompt_tokens", prompt),
        ("completion_tokens", completion),
        ("cached_tokens", cached),
    ):
        if value is not None:
            metrics[key] = value
    if cache_write is not None:
        metrics["extra"] = {"cache_creation_input_tokens": cache_write}
    if metrics:
        step["metrics"] = metrics
    if extra is not None:
        step["extra"] = extra
    if copied is not None:
        step["is_copied_context"] = copied
    return step


def final_metrics(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """final_metrics as Harbor's agents write them: the steps' metrics added up."""
    totals: dict[str, Any] = {}
    writes = 0
    for step in steps:
        metrics = step.get("metrics") or {}
        for key, total in (
            ("prompt_tokens", "total_prompt_tokens"),
            ("completion_tokens", "total_completion_tokens"),
            ("cached_tokens", "total_cached_tokens"),
        ):
            if key in metrics:
                totals[total] = totals.get(total, 0) + metrics[key]
        writes += (metrics.get("extra") or {}).get("cache_creation_input_tokens", 0)
    if writes:
        totals["extra"] = {"total_cache_creation_input_tokens": writes}
    totals["total_steps"] = len(steps)
    return totals


def atif_document(
    steps: list[dict[str, Any]],
    *,
    version: str = "ATIF-v1.6",
    final: dict[str, Any] | bool = True,
    continued: str | None = None,
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema_version": version,
        "session_id": "session-1",
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "openai/gpt-5"},
        "steps": steps,
    }
    if final is True:
        document["final_metrics"] = final_metrics(steps)
    elif isinstance(final, dict):
        document["final_metrics"] = final
    if continued is not None:
        document["continued_trajectory_ref"] = continued
    return document


def write_atif(path: Path, steps: list[dict[str, Any]], **options: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(atif_document(steps, **options), indent=2), encoding="utf-8")
    return path


# sample_steps(): 1000 prompt (600 cached) + 50 out, then 1200 (1000 cached) + 80 out.
SAMPLE_TOKENS = 1050 + 1280
INSTRUCTION = "Fix the failing test in src/app.py."


def sample_steps() -> list[dict[str, Any]]:
    """A user instruction, an agent step that runs a tool, and the agent's answer."""
    return [
        atif_step(1, "user", INSTRUCTION, timestamp="2025-11-02T10:00:00Z"),
        atif_step(
            2,
            "agent",
            "I will run the tests.",
            reasoning="The test output will show what fails.",
            calls=[("call_1", "bash", {"command": "pytest -q"})],
            results=["1 failed, 3 passed"],
            prompt=1000,
            cached=600,
            completion=50,
            timestamp="2025-11-02T10:00:05Z",
        ),
        atif_step(
            3,
            "agent",
            "Fixed the off-by-one in src/app.py.",
            prompt=1200,
            cached=1000,
            completion=80,
            timestamp="2025-11-02T10:00:09Z",
        ),
    ]


def write_harbor_trial(
    job: Path,
    trial: str,
    task: str,
    *,
    agent_result: dict[str, Any] | None = None,
    steps: list[dict[str, Any]] | None = None,
    reward: float | None = 1.0,
    ctrf: list[tuple[str, str]] | None = None,
    stdout: str | None = None,
    instruction: str | None = None,
) -> Path:
    """A Harbor trial folder under `job` (itself `<root>/jobs/<job>`), as Harbor lays it out;
    the task folder (with `instruction`) under `<root>/tasks/<task>`. Returns its result.json."""
    folder = job / trial
    folder.mkdir(parents=True, exist_ok=True)
    root = job.parent.parent
    result = {
        "id": f"uuid-{trial}",
        "task_name": task,
        "trial_name": trial,
        "source": "terminal-bench",
        "task_checksum": "abc",
        "agent_info": {
            "name": "terminus-2",
            "version": "2.0.0",
            "model_info": {"name": "gpt-5", "provider": "openai"},
        },
        "agent_result": agent_result,
        "verifier_result": None if reward is None else {"rewards": {"reward": reward}},
        "exception_info": None,
        "started_at": "2025-11-02T10:00:00Z",
        "finished_at": "2025-11-02T10:05:00Z",
    }
    (folder / "result.json").write_text(json.dumps(result), encoding="utf-8")
    config = {
        "task": {"path": f"tasks/{task}", "git_url": None},
        "trial_name": trial,
        "trials_dir": f"jobs/{job.name}",
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    if instruction is not None:
        task_folder = root / "tasks" / task
        task_folder.mkdir(parents=True, exist_ok=True)
        (task_folder / "instruction.md").write_text(instruction, encoding="utf-8")
    if steps is not None:
        write_atif(folder / "agent" / "trajectory.json", steps)
    verifier = folder / "verifier"
    if reward is not None:
        verifier.mkdir(parents=True, exist_ok=True)
        (verifier / "reward.txt").write_text(f"{reward:g}\n", encoding="utf-8")
    if stdout is not None:
        verifier.mkdir(parents=True, exist_ok=True)
        (verifier / "test-stdout.txt").write_text(stdout, encoding="utf-8")
    if ctrf is not None:
        verifier.mkdir(parents=True, exist_ok=True)
        tests = [{"name": name, "status": status, "duration": 1} for name, status in ctrf]
        report = {"results": {"tool": {"name": "pytest"}, "tests": tests}}
        (verifier / "ctrf.json").write_text(json.dumps(report), encoding="utf-8")
    return folder / "result.json"
