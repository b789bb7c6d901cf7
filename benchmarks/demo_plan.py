"""The invented world of `sample_data/demo.csv` and its rows: the columns, the 30 tasks, the four
workflows and how each behaves, where the ungraded attempts, the hostile notes and the suspect
zero sit, and the seeded draws that turn them into 360 rows of CSV cells (make_demo.py writes
them; demo_check.py verifies what they show). Standard library only."""

from __future__ import annotations

import csv
import io
import math
import random
from dataclasses import dataclass

SEED = 20240611
COLUMNS: tuple[str, ...] = (
    "workflow",
    "task",
    "model",
    "attempt",
    "status",
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "duration_s",
    "notes",
)
BUCKETS: tuple[str, ...] = ("input_tokens", "cached_input_tokens", "output_tokens")
ATTEMPTS = 3
TIME_LIMIT_S = 1800.0

TASKS: tuple[str, ...] = (
    "fix-login-redirect",
    "add-csv-export",
    "paginate-search-results",
    "handle-null-avatar",
    "upgrade-date-parser",
    "fix-timezone-off-by-one",
    "add-rate-limit-header",
    "retry-webhook-delivery",
    "fix-race-in-cache-warmup",
    "add-dark-mode-toggle",
    "migrate-settings-table",
    "fix-unicode-filename-upload",
    "add-audit-log-entry",
    "speed-up-report-query",
    "fix-memory-leak-in-worker",
    "add-password-reset-email",
    "validate-iban-input",
    "fix-flaky-checkout-test",
    "add-api-key-rotation",
    "fix-broken-sitemap",
    "support-gzip-responses",
    "fix-double-charge-on-retry",
    "add-health-check-endpoint",
    "deduplicate-notifications",
    "fix-sort-stability",
    "remove-stale-feature-flags",
    "fix-locale-number-format",
    "add-bulk-delete",
    "fix-session-timeout",
    "refactor-config-loader",
)

# Notes a hostile or careless harness might write: markup, a spreadsheet formula, quotes and
# commas, non-ASCII. No raw control bytes. Keyed by (workflow, task index, attempt).
HOSTILE_NOTES: dict[tuple[str, int, int], str] = {
    ("lean-loop", 3, 2): "[bold]not markup[/bold]",
    ("retry-storm", 7, 1): "[link=https://example.invalid]click me[/link] [red]",
    ("steady-planner", 12, 3): "=SUM(A1:A9)",
    ("careful-reviewer", 20, 2): 'reviewer said "LGTM, ship it", then rejected',
    ("lean-loop", 25, 1): "naïve fix; tests ✓ locally — CI ✘",
}


@dataclass(frozen=True)
class Workflow:
    """How one invented workflow behaves in the demo."""

    name: str
    models: tuple[str, ...]
    """The model per task, cycled over task index (two entries: a mixed-model workflow)."""
    pass_rate: float
    median_tokens: float
    """Median tokens of a passing attempt."""
    sigma: float
    failure_multiplier: float
    """How much more a failed attempt costs than a passing one."""
    failure_weights: tuple[float, float, float]
    """Relative odds of failed, timeout, error among attempts that do not pass."""
    cached_share: float
    """Share of input tokens served from cache."""
    seconds_per_1k_tokens: float
    loses_usage: bool = False
    """Whether its harness sometimes fails to report usage (only the most expensive
    workflow's does, so no missing count can reorder the ranking: see `check`)."""


WORKFLOWS: tuple[Workflow, ...] = (
    Workflow("lean-loop", ("model-a",), 0.30, 17_000, 0.30, 1.1, (0.80, 0.12, 0.08), 0.35, 0.9),
    Workflow("steady-planner", ("model-b",), 0.90, 30_000, 0.25, 1.2, (0.5, 0.3, 0.2), 0.60, 0.8),
    Workflow(
        "retry-storm",
        ("model-a",),
        0.55,
        48_000,
        0.40,
        1.6,
        (0.45, 0.40, 0.15),
        0.50,
        1.1,
        loses_usage=True,
    ),
    Workflow(
        "careful-reviewer",
        ("model-b", "model-a"),
        0.75,
        36_000,
        0.30,
        1.3,
        (0.6, 0.2, 0.2),
        0.7,
        1.0,
    ),
)

# Ungraded attempts (empty status): the grader never ran. Keyed by (workflow, task, attempt).
UNGRADED: frozenset[tuple[str, int, int]] = frozenset(
    {
        ("lean-loop", 9, 3),
        ("steady-planner", 17, 2),
        ("retry-storm", 4, 3),
        ("careful-reviewer", 28, 1),
        ("retry-storm", 22, 2),
    }
)


# Suspect zeros: an attempt whose harness wrote 0 tokens because it did not meter the call
# (SPEC.md section 1). Placed, like missing usage, on a failing attempt of the workflow that
# is the most expensive whichever value the zero stands for. Keyed by (workflow, task, attempt).
SUSPECT_ZERO: frozenset[tuple[str, int, int]] = frozenset({("retry-storm", 11, 1)})


def _status(rng: random.Random, workflow: Workflow, difficulty: float) -> str:
    """Draw an attempt's status from the workflow's pass rate and failure mix."""
    p_pass = min(max(workflow.pass_rate - difficulty, 0.03), 0.97)
    if rng.random() < p_pass:
        return "passed"
    return rng.choices(("failed", "timeout", "error"), weights=workflow.failure_weights)[0]


def _buckets(rng: random.Random, workflow: Workflow, total: int, status: str) -> list[str]:
    """The three bucket cells for an attempt of `total` tokens; empty cells mean missing usage.

    Timeouts usually lose their usage (the harness killed the agent before it reported):
    sometimes every bucket, sometimes only the output count. Errors sometimes do; a passing or
    failed attempt rarely does. Only a workflow that `loses_usage` loses any; the draws are
    made for every workflow all the same, so each workflow's figures depend on its own flag only.
    """
    output = round(total * rng.uniform(0.06, 0.12))
    cached = round((total - output) * workflow.cached_share * rng.uniform(0.85, 1.15))
    cached = min(cached, total - output)
    uncached = total - output - cached
    cells = [str(uncached), str(cached), str(output)]
    lose = {"timeout": 0.6, "error": 0.2}.get(status, 0.015)
    if rng.random() < lose:
        every_bucket = status == "timeout" and rng.random() < 0.6
        if not workflow.loses_usage:
            return cells
        if every_bucket:
            return ["", "", ""]
        cells[2] = ""
    return cells


def build_rows(seed: int = SEED) -> list[dict[str, str]]:
    """The demo's 360 rows, as CSV cells, in workflow, task, attempt order."""
    rng = random.Random(seed)
    difficulty = [rng.gauss(0.0, 0.12) for _ in TASKS]
    size = [math.exp(rng.gauss(0.0, 0.25)) for _ in TASKS]
    rows: list[dict[str, str]] = []
    for workflow in WORKFLOWS:
        for t, task in enumerate(TASKS):
            model = workflow.models[t % len(workflow.models)]
            for attempt in range(1, ATTEMPTS + 1):
                status = _status(rng, workflow, difficulty[t])
                multiplier = 1.0 if status == "passed" else workflow.failure_multiplier
                if status == "error":
                    multiplier *= 0.5  # errors die early
                total = round(
                    workflow.median_tokens
                    * size[t]
                    * multiplier
                    * math.exp(rng.gauss(0.0, workflow.sigma))
                )
                cells = _buckets(rng, workflow, total, status)
                if status == "timeout":
                    duration = TIME_LIMIT_S
                else:
                    seconds = total / 1000 * workflow.seconds_per_1k_tokens
                    duration = round(seconds * rng.uniform(0.8, 1.25) + 5.0, 1)
                key = (workflow.name, t + 1, attempt)
                if key in SUSPECT_ZERO:
                    cells = ["0", "0", "0"]
                if key in UNGRADED:
                    status = ""
                rows.append(
                    {
                        "workflow": workflow.name,
                        "task": task,
                        "model": model,
                        "attempt": str(attempt),
                        "status": status,
                        "input_tokens": cells[0],
                        "cached_input_tokens": cells[1],
                        "output_tokens": cells[2],
                        "duration_s": f"{duration:.1f}",
                        "notes": HOSTILE_NOTES.get(key, ""),
                    }
                )
    return rows


def render_csv(rows: list[dict[str, str]]) -> str:
    """The rows as CSV text (header first, `\\n` line ends, quoting only where needed)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
