"""A synthetic ledger shaped like real runs (issue 13): written by the tests, never copied.

Real leaderboards hold what the article's six rows do not: agents the harness could not meter
(every trial 0 tokens), agents whose usage is partly lost (null on timeouts), a stray 0 among
recorded usage, groups with nothing accepted, and long names that share long prefixes. This
module builds one such ledger, deterministically, as

- `attempts_frame()`: the canonical attempts frame (what `load.load` returns, minus source);
- `write_csv(path)`: the same attempts as a CSV file (`NA` for missing usage);
- `write_terminal_bench(root)`: the same attempts as Terminal-Bench trial folders
  (`<submission>/<run>/<task>/<trial>/results.json`, FORMATS.md and the importer's docstring),
  one folder per submission, returned in order.

The figures each group must give are written beside it (`EXPECTED_KEEP`), worked by hand from
the rows below, so tests state them rather than recompute them.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from tui_ledger.schema import OUTCOME_DTYPE

# Names: the first three share the 24-character prefix `20250923_droid_claude-4-`; every
# name shares the 9-character `2025092`… date prefix with the others.
SONNET = "20250923_droid_claude-4-sonnet"  # usage recorded for every trial: exact
OPUS = "20250923_droid_claude-4-opus"  # a third of its usage missing: lower bound
OPUS_1 = "20250923_droid_claude-4-1-opus"  # one suspect 0 among recorded usage: lower bound
UNMETERED = "20250924_terminus_qwen-3-coder-480B"  # every trial 0 tokens: not recorded
ZERO_AND_NULL = "20250925_orchestrator_gemini-2.5-pro"  # 0 and null only: not recorded
NOTHING_ACCEPTED = "20250926_codex_gpt-5-mini"  # recorded usage, no accepted result
GROUPS: tuple[str, ...] = (SONNET, OPUS, OPUS_1, UNMETERED, ZERO_AND_NULL, NOTHING_ACCEPTED)
LONG_PREFIX_GROUPS: tuple[str, ...] = (SONNET, OPUS, OPUS_1)
NOT_RECORDED_GROUPS: tuple[str, ...] = (UNMETERED, ZERO_AND_NULL)

TASKS: tuple[str, ...] = ("fix-git", "hello-world", "csv-to-parquet")


@dataclass(frozen=True)
class Trial:
    """One attempt as Terminal-Bench records it: input and output tokens, may be null or 0."""

    workflow: str
    task: str
    attempt: int  # 1-based, per (workflow, task)
    resolved: bool | None
    input_tokens: int | None
    output_tokens: int | None
    failure_mode: str = "unset"

    @property
    def tokens(self) -> int | None:
        """Total usage as the importer reads it: input + output, null when either is."""
        if self.input_tokens is None or self.output_tokens is None:
            return None
        return self.input_tokens + self.output_tokens

    @property
    def outcome(self) -> str:
        if self.resolved is None:
            return "ungraded"
        if self.resolved:
            return "passed"
        return "timeout" if self.failure_mode == "agent_timeout" else "failed"


def _trials() -> list[Trial]:
    """Six trials per group: each task twice."""
    plan: dict[str, list[tuple[bool | None, int | None, int | None, str]]] = {
        # 6 trials, 3 accepted, 600,000 tokens: 200,000 per accepted result, exact.
        SONNET: [
            (True, 90_000, 10_000, "unset"),
            (False, 90_000, 10_000, "unset"),
            (True, 90_000, 10_000, "unset"),
            (False, 90_000, 10_000, "unset"),
            (True, 90_000, 10_000, "unset"),
            (False, 90_000, 10_000, "unset"),
        ],
        # 6 trials, 2 missing (a third), 2 accepted: 300,000 known, >= 150,000 per accepted.
        OPUS: [
            (True, 70_000, 5_000, "unset"),
            (False, None, None, "agent_timeout"),
            (True, 70_000, 5_000, "unset"),
            (False, 70_000, 5_000, "unset"),
            (False, None, None, "agent_timeout"),
            (False, 70_000, 5_000, "unset"),
        ],
        # 6 trials, one suspect 0, 2 accepted: 1,294,100 known, >= 647,050 per accepted.
        OPUS_1: [
            (True, 250_000, 8_820, "unset"),
            (False, 250_000, 8_820, "unset"),
            (True, 0, 0, "unset"),
            (False, 250_000, 8_820, "unset"),
            (False, 250_000, 8_820, "unset"),
            (False, 250_000, 8_820, "unset"),
        ],
        # Unmetered: 0 tokens on every trial, 4 accepted; the screen must not call it cheapest.
        UNMETERED: [
            (True, 0, 0, "unset"),
            (True, 0, 0, "unset"),
            (False, 0, 0, "unset"),
            (True, 0, 0, "unset"),
            (True, 0, 0, "unset"),
            (None, 0, 0, "unset"),
        ],
        # 0 and null only, 2 accepted: not recorded either.
        ZERO_AND_NULL: [
            (True, 0, 0, "unset"),
            (False, None, None, "agent_timeout"),
            (True, 0, 0, "unset"),
            (False, 0, 0, "unset"),
            (False, None, None, "agent_timeout"),
            (False, 0, 0, "unset"),
        ],
        # Recorded, nothing accepted: after every group with an accepted result.
        NOTHING_ACCEPTED: [
            (False, 40_000, 2_000, "unset"),
            (False, 40_000, 2_000, "unset"),
            (False, 40_000, 2_000, "unset"),
            (False, 40_000, 2_000, "unset"),
            (False, 40_000, 2_000, "agent_timeout"),
            (False, 40_000, 2_000, "unset"),
        ],
    }
    trials = []
    for workflow, rows in plan.items():
        for index, (resolved, input_tokens, output_tokens, mode) in enumerate(rows):
            task = TASKS[index % len(TASKS)]
            attempt = index // len(TASKS) + 1
            trials.append(
                Trial(workflow, task, attempt, resolved, input_tokens, output_tokens, mode)
            )
    return trials


TRIALS: tuple[Trial, ...] = tuple(_trials())

_FIELDS = (
    "usage",
    "attempts",
    "accepted",
    "missing_usage",
    "suspect_zeros",
    "total_tokens",
    "tokens_per_accepted_result",
    "lower_bound",
    "rank_best",
    "rank_worst",
)


def _expected(
    rows: dict[str, tuple[object, ...]],
) -> dict[str, dict[str, object]]:
    return {group: dict(zip(_FIELDS, values, strict=True)) for group, values in rows.items()}


# Worked by hand. Keep: SONNET [200,000]; OPUS [150,000, ∞); OPUS_1 [647,050, ∞) (SONNET is
# certainly cheaper, OPUS perhaps); NOTHING_ACCEPTED after all three.
EXPECTED_KEEP = _expected(
    {
        SONNET: ("recorded", 6, 3, 0, 0, 600_000, 200_000.0, False, 1, 2),
        OPUS: ("lower_bound", 6, 2, 2, 0, 300_000, 150_000.0, True, 1, 3),
        OPUS_1: ("lower_bound", 6, 2, 0, 1, 1_294_100, 647_050.0, True, 2, 3),
        UNMETERED: ("not_recorded", 6, 4, 0, 6, None, None, False, None, None),
        ZERO_AND_NULL: ("not_recorded", 6, 2, 2, 4, None, None, False, None, None),
        NOTHING_ACCEPTED: ("recorded", 6, 0, 0, 0, 252_000, None, False, 4, 4),
    }
)
# Drop: OPUS [75,000] (its accepted trials were metered), SONNET [100,000], OPUS_1
# [129,410, ∞) (its accepted 0 counted), NOTHING_ACCEPTED with no attempt left: last. Every
# rank is decided here, but no keep rank is, so whether the ranking flips is undecided.
EXPECTED_DROP = _expected(
    {
        SONNET: ("recorded", 3, 3, 0, 0, 300_000, 100_000.0, False, 2, 2),
        OPUS: ("recorded", 2, 2, 0, 0, 150_000, 75_000.0, False, 1, 1),
        OPUS_1: ("lower_bound", 2, 2, 0, 1, 258_820, 129_410.0, True, 3, 3),
        UNMETERED: ("not_recorded", 4, 4, 0, 4, None, None, False, None, None),
        ZERO_AND_NULL: ("not_recorded", 2, 2, 0, 2, None, None, False, None, None),
        NOTHING_ACCEPTED: ("recorded", 0, 0, 0, 0, 0, None, False, 4, 4),
    }
)


def attempts_frame() -> pl.DataFrame:
    """The attempts as the loader gives them (workflow, task, outcome, tokens, buckets)."""
    return pl.DataFrame(
        {
            "workflow": [t.workflow for t in TRIALS],
            "task": [t.task for t in TRIALS],
            "outcome": [t.outcome for t in TRIALS],
            "tokens": [t.tokens for t in TRIALS],
            "input_tokens": [t.input_tokens for t in TRIALS],
            "output_tokens": [t.output_tokens for t in TRIALS],
        },
        schema={
            "workflow": pl.String,
            "task": pl.String,
            "outcome": OUTCOME_DTYPE,
            "tokens": pl.Int64,
            "input_tokens": pl.Int64,
            "output_tokens": pl.Int64,
        },
    )


def write_csv(path: Path) -> Path:
    """The attempts as a CSV file: `passed` true/false/empty, `NA` for missing usage."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["workflow", "task", "passed", "tokens"])
        for t in TRIALS:
            passed = "" if t.resolved is None else str(t.resolved).lower()
            writer.writerow([t.workflow, t.task, passed, "NA" if t.tokens is None else t.tokens])
    return path


def trial_record(trial: Trial, run: str) -> dict[str, object]:
    """A Terminal-Bench (core 0.1.x) trial `results.json`, as the leaderboard's files hold."""
    name = f"{trial.task}.{trial.attempt}-of-2.{run}"
    return {
        "id": f"synthetic-{trial.workflow}-{name}",
        "trial_name": name,
        "task_id": trial.task,
        "is_resolved": trial.resolved,
        "failure_mode": trial.failure_mode,
        "parser_results": {"test_outcome": "passed" if trial.resolved else "failed"},
        "recording_path": f"{run}/{trial.task}/{name}/sessions/agent.cast",
        "total_input_tokens": trial.input_tokens,
        "total_output_tokens": trial.output_tokens,
        "trial_started_at": "2025-09-24T06:16:48.024048+00:00",
        "trial_ended_at": "2025-09-24T06:26:12.590238+00:00",
        "agent_started_at": "2025-09-24T06:16:50.587109+00:00",
        "agent_ended_at": "2025-09-24T06:25:57.240313+00:00",
        "test_started_at": "2025-09-24T06:25:58.575023+00:00",
        "test_ended_at": "2025-09-24T06:26:01.656237+00:00",
    }


def write_terminal_bench(root: Path, groups: tuple[str, ...] = GROUPS) -> list[Path]:
    """Each group as a Terminal-Bench submission folder under `root`: one run folder, then
    `<task>/<trial>/results.json` per trial. Returns the submission folders, in `groups` order."""
    folders = []
    for group in groups:
        submission = root / group
        run = "tb_run_1"
        for trial in TRIALS:
            if trial.workflow != group:
                continue
            record = trial_record(trial, run)
            folder = submission / run / trial.task / str(record["trial_name"])
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "results.json").write_text(json.dumps(record, indent=4), encoding="utf-8")
        folders.append(submission)
    return folders
