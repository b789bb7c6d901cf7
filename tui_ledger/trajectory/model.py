"""What an attempt did, step by step: the one model every harness's reader fills.

An attempt opened (`Opened`) names the files read, the task's instruction, the grader's evidence
(`Verdict`) and its steps, read lazily: `Opened.steps` is an iterator, so the app shows the first
steps of a large log while the rest are read, and nothing holds a log whole twice. `Trajectory`
is the same read to the end (what `ledger-tui trace` prints).

Tokens per step follow the ledger's own definition (docs/ACCOUNTING.md): a step's `tokens` is
the sum of its buckets (input, cached input, cache write, output; reasoning is inside output and
never added again), or the total the log records for the step where it keeps no buckets. A
bucket the log does not record is None, never 0, and never estimated.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

Who = Literal["user", "agent", "tool", "system"]
WHO: tuple[Who, ...] = ("user", "agent", "tool", "system")

TokensMatch = Literal["equal", "differs", "not recorded per step"]
EQUAL: TokensMatch = "equal"
DIFFERS: TokensMatch = "differs"
NOT_RECORDED: TokensMatch = "not recorded per step"

BUCKETS = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")


class TrajectoryError(Exception):
    """A log that cannot be read: `str()` is one line for people (the file, what is wrong)."""


@dataclass(frozen=True)
class ToolCall:
    """One call the agent made: the tool's name and its arguments as the log wrote them."""

    name: str
    arguments: str
    """The arguments as text: JSON for structured arguments, the raw text otherwise."""
    id: str | None = None


@dataclass(frozen=True)
class Step:
    """One step: who acted, what they said or did, what it returned, and what it spent.

    `index` is 1-based, in the order the log keeps them. `tokens` is the step's own total
    (never a running total), None where the log records none for this step.
    """

    index: int
    source: Who
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    observation: str | None = None
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    output_tokens: int | None = None
    tokens: int | None = None
    timestamp: str | None = None
    """ISO 8601 as the log wrote it (or made from its epoch seconds), None where not recorded."""
    error: bool = False
    """The step failed: an API error, a tool call that errored, a command that exited non-zero."""
    agent: str | None = None
    """The sub-agent that acted (Claude Code's sub-agents), None for the attempt's own agent."""
    kind: str | None = None
    """The harness's word for a special step (`synthetic`, `api_error`, `reasoning`, ...)."""

    def summary(self) -> str:
        """What the step did, on one line: its text's first line, else its first tool call."""
        for line in self.text.splitlines():
            if line.strip():
                return line.strip()
        if self.tool_calls:
            call = self.tool_calls[0]
            more = f" (+{len(self.tool_calls) - 1})" if len(self.tool_calls) > 1 else ""
            return f"{call.name}({_one_line(call.arguments)}){more}"
        if self.observation:
            return _one_line(self.observation)
        return ""


@dataclass(frozen=True)
class Test:
    """One test the grader ran: its name and result ("passed", "failed" or the harness's word)."""

    name: str
    result: str

    @property
    def passed(self) -> bool:
        return self.result.lower() in ("passed", "pass", "success", "ok", "true")


@dataclass(frozen=True)
class Verdict:
    """The grader's evidence: each test by name in the harness's order, and what it printed."""

    tests: tuple[Test, ...] = ()
    output: str | None = None


@dataclass
class Opened:
    """An attempt's logs, opened: the header read, the steps still to be read.

    `files` are the files read, relative to the ledger's folder where they sit under it.
    `looked_for` names what was searched for when no log was found (then `steps` is empty).
    `notes` say what the reader knows about the steps' tokens (responses whose final count
    was never written, say): shown beside `tokens_match`.
    """

    files: list[str]
    instruction: str | None
    verdict: Verdict
    steps: Iterator[Step]
    looked_for: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Trajectory:
    """An attempt read to the end."""

    files: tuple[str, ...]
    instruction: str | None
    verdict: Verdict
    steps: tuple[Step, ...]
    looked_for: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def steps_tokens(self) -> int | None:
        return steps_tokens(self.steps)


def read_all(opened: Opened) -> Trajectory:
    """Every step of an opened attempt (raises TrajectoryError where the log breaks)."""
    steps = tuple(opened.steps)
    return Trajectory(
        files=tuple(opened.files),
        instruction=opened.instruction,
        verdict=opened.verdict,
        steps=steps,
        looked_for=tuple(opened.looked_for),
        notes=tuple(opened.notes),
    )


def bucket_total(
    input_tokens: int | None,
    cached_input_tokens: int | None,
    cache_write_tokens: int | None,
    output_tokens: int | None,
) -> int | None:
    """A step's tokens from its buckets: the sum of those recorded, None when none is."""
    recorded = [
        value
        for value in (input_tokens, cached_input_tokens, cache_write_tokens, output_tokens)
        if value is not None
    ]
    return sum(recorded) if recorded else None


def steps_tokens(steps: Iterable[Step]) -> int | None:
    """The steps' tokens added up; None when no step records any."""
    recorded = [step.tokens for step in steps if step.tokens is not None]
    return sum(recorded) if recorded else None


def tokens_match(
    steps: Iterable[Step], attempt_tokens: int | None
) -> tuple[TokensMatch, int | None]:
    """Whether the steps' tokens add up to the attempt's tokens in the ledger.

    Returns the word and the difference, steps minus attempt: 0 when `equal`; None when
    `not recorded per step` (no step records tokens), or when the ledger has no usage for the
    attempt to compare with (`differs`: the steps know what the ledger does not).
    """
    total = steps_tokens(steps)
    if total is None:
        return NOT_RECORDED, None
    if attempt_tokens is None:
        return DIFFERS, None
    if total == attempt_tokens:
        return EQUAL, 0
    return DIFFERS, total - attempt_tokens


def _one_line(text: str, width: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"
