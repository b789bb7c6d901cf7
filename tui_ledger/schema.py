"""The canonical attempt schema: column names, their aliases, the outcome vocabulary, the views.

Everything here is data, so the loader, the filter language, the CLI and the app read the
same words. See docs/ACCOUNTING.md for the decisions behind them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

import polars as pl

# The two views of the same attempts: every attempt counts (keep failures), or only the accepted
# ones (drop failures, the trap). `ledger` computes both.
View = Literal["keep", "drop"]
VIEWS: tuple[View, ...] = ("keep", "drop")

# Every attempt has exactly one of these outcomes. "Accepted" means `passed` and nothing else.
OUTCOMES: tuple[str, ...] = ("passed", "failed", "timeout", "error", "ungraded")
ACCEPTED = "passed"
OUTCOME_DTYPE = pl.Enum(list(OUTCOMES))
OUTCOME_COLUMN = "outcome"  # the loader derives it from `passed` and `status`
OUTCOME_SYMBOLS: dict[str, str] = {
    "passed": "✔",
    "failed": "✘",
    "timeout": "⧗",
    "error": "⚠",
    "ungraded": "?",
}

# Canonical column -> accepted source names (compared after `normalise_name`).
ALIASES: dict[str, tuple[str, ...]] = {
    "workflow": (
        "workflow",
        "agent",
        "framework",
        "variant",
        "config",
        "arm",
        "system",
        "solver",
        "submission",
    ),
    "tokens": ("tokens", "token_units", "total_tokens", "tokens_total", "usage"),
    "passed": ("passed", "accepted", "pass", "success", "ok", "resolved", "is_resolved"),
    "status": ("status", "outcome", "result", "failure_mode"),
    "task": ("task", "task_id", "instance_id", "problem", "exercise", "testcase", "sample_id"),
    "input_tokens": ("input_tokens", "uncached_input_tokens"),
    "cached_input_tokens": (
        "cached_input_tokens",
        "cache_read_tokens",
        "cache_read_input_tokens",
    ),
    "cache_write_tokens": (
        "cache_write_tokens",
        "cache_creation_tokens",
        "cache_creation_input_tokens",
    ),
    "output_tokens": ("output_tokens", "completion_tokens"),
    "model": ("model", "model_name", "model_id", "llm"),
    "run": ("run", "run_id", "run_name", "trial", "trial_name", "epoch"),
    "timestamp": ("timestamp", "time", "started_at", "start_time", "created_at", "date"),
    "duration_s": ("duration_s", "duration", "duration_seconds", "elapsed_s", "wall_time_s"),
    "cost": ("cost", "cost_usd", "usd", "price", "total_cost"),
}

# The token buckets. Reasoning tokens sit inside output tokens at the providers that report
# them, so they are deliberately not a bucket: adding them would count them twice.
BUCKETS: tuple[str, ...] = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
)

# Canonical columns stored as exact integers (missing = null, never 0).
INTEGER_COLUMNS: tuple[str, ...] = ("tokens", *BUCKETS)

# Canonical columns first, in this order, on screen and in exports.
CANONICAL_ORDER: tuple[str, ...] = (
    "workflow",
    "task",
    "outcome",
    "tokens",
    "passed",
    "status",
    *BUCKETS,
    "model",
    "run",
    "timestamp",
    "duration_s",
    "cost",
)

# An attempt's cost in USD: a provider-reported column, or what `prices.apply_prices` gives it.
COST_COLUMN = "cost"

# Columns the loader adds: where the row came from, and its line there (as a person counts).
SOURCE_COLUMN = "source"
LINE_COLUMN = "line"
NEVER_ACTED = "agent_never_acted"
"""A Boolean column the grader's audit sets (`grader.Audit.apply`): the harness failed before
the agent acted, so the attempt's 0 tokens are known, not a suspect 0 (docs/ACCOUNTING.md).
Reserved: a file's own column of that name cannot turn its zeros into known ones."""
# The loaded attempts' own column names: an input column of one of these names that is not
# mapped onto it is kept under another (`load.columns.free_name`: `line_in_file`).
RESERVED_NAMES = frozenset((*CANONICAL_ORDER, SOURCE_COLUMN, LINE_COLUMN, NEVER_ACTED))

TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1", "pass", "passed", "accepted"})
FALSE_WORDS = frozenset({"false", "f", "no", "n", "0", "fail", "failed", "rejected"})
# Cells that mean "unknown" in usage and acceptance columns; never read as zero.
MISSING_WORDS = frozenset({"", "na", "nan", "null", "none", "-", "n/a"})

STATUS_WORDS: dict[str, str] = {
    **dict.fromkeys(("pass", "passed", "success", "accepted", "resolved", "ok"), "passed"),
    **dict.fromkeys(("fail", "failed", "rejected", "unresolved"), "failed"),
    **dict.fromkeys(
        ("timeout", "timed_out", "agent_timeout", "test_timeout", "time_limit"), "timeout"
    ),
    **dict.fromkeys(
        (
            "error",
            "errored",
            "crash",
            "exception",
            "parse_error",
            "agent_installation_failed",
            "unknown_agent_error",
        ),
        "error",
    ),
    # "ungraded" too: the outcome's own name, so a ledger ledger-tui wrote reads back.
    **dict.fromkeys(("", "unset", "ungraded"), "ungraded"),
}

_SEPARATORS = re.compile(r"[\s.\-]+")


def normalise_name(name: str) -> str:
    """A column name as aliases are compared: lower case, spaces, dots and dashes read as `_`."""
    return _SEPARATORS.sub("_", name.strip().lower())


def normalise_word(value: str) -> str:
    """A cell as the outcome vocabularies compare it: trimmed, lower case, `-`/space read as `_`."""
    return _SEPARATORS.sub("_", value.strip().lower())


def canonical_for(name: str) -> str | None:
    """The canonical column an alias names, or None."""
    key = normalise_name(name)
    for canonical, aliases in ALIASES.items():
        if key in aliases:
            return canonical
    return None


def known_zeros(schema: Mapping[str, pl.DataType]) -> bool:
    """Whether the attempts mark the 0s that are known (NEVER_ACTED)."""
    return schema.get(NEVER_ACTED) == pl.Boolean
