"""The grader's audit of a whole ledger: every attempt's signals, read once, and the vouched view.

```python
from tui_ledger.grader import audit_ledger

audit = audit_ledger(ledger, inputs)      # inputs: the paths the ledger was loaded from
audit.signals                             # DataFrame: row, kind, step, evidence
audit.unvouched                           # rows accepted as graded, not vouched for
attempts = audit.apply(ledger.attempts, "vouched")   # what the accounting reads
```

Each attempt's logs are opened by its harness's reader (`tui_ledger.trajectory`), read to the
end once, in threads (a ledger's logs are many small files: reading them is waiting on the
disk as much as parsing), and judged by `signals.attempt_signals`. A ledger whose rows name no
log gives signals from the rows alone (`note`: "no trajectories: signals from verdicts only");
a log that cannot be read is counted in `unreadable` with its one line, never raised.

`row` is the attempt's 0-based position in `ledger.attempts` (the frame as loaded, before any
filter); `trace --row` and the JSON number it from 1.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

from tui_ledger.findings import Notice
from tui_ledger.grader.signals import (
    TAMPERING,
    UNVOUCHED,
    Signal,
    agent_never_acted,
    attempt_signals,
)
from tui_ledger.schema import ACCEPTED, NEVER_ACTED, OUTCOME_DTYPE
from tui_ledger.text.wording import plural
from tui_ledger.trajectory import (
    TRACE_COLUMN,
    Test,
    Trajectory,
    TrajectoryError,
    openable,
    read_attempt,
    reader_of,
)

Accepted = Literal["graded", "vouched"]
ACCEPTED_MODES: tuple[Accepted, ...] = ("graded", "vouched")
NO_TRAJECTORIES = "no trajectories: signals from verdicts only"
NEVER_ACTED_COLUMN = NEVER_ACTED
"""Set by `Audit.apply` on the attempts whose agent never acted: their 0 tokens are known, not
a suspect 0 (docs/ACCOUNTING.md, "The grader's audit")."""

# The row's own fields the rules read when no log is (harness importers write them).
_ROW_FIELDS = ("exception_type", "stop_reason", "api_calls")
SIGNALS_SCHEMA = {
    "row": pl.UInt32(),
    "kind": pl.String(),
    "step": pl.Int64(),
    "evidence": pl.String(),
}
TESTS_SCHEMA = {"row": pl.UInt32(), "test": pl.String(), "passed": pl.Boolean()}


@dataclass(frozen=True)
class Audit:
    """What the audit found in one ledger (`audit_ledger`)."""

    signals: pl.DataFrame
    """One row per signal: `row` (position in ledger.attempts), `kind`, `step`, `evidence`."""
    tests: pl.DataFrame
    """Each test each verdict lists: `row`, `test`, `passed`."""
    rows: int
    """Attempts audited (the ledger's height)."""
    accepted_rows: frozenset[int]
    """Rows accepted as graded (outcome `passed`)."""
    read: int = 0
    """Attempts whose logs were read."""
    unreadable: tuple[tuple[int, str], ...] = ()
    """(row, the reader's one line) for each log that could not be read."""
    note: str | None = None
    """NO_TRAJECTORIES when no attempt's log could be opened."""
    never_acted_rows: frozenset[int] = frozenset()
    """Rows whose agent never acted (`never_acted`)."""
    _by_row: dict[int, list[Signal]] = field(default_factory=dict, repr=False, compare=False)

    def signals_of(self, row: int) -> list[Signal]:
        """One attempt's signals (`row`: its position in ledger.attempts)."""
        return list(self._by_row.get(row, ()))

    def flagged(self) -> list[int]:
        """Rows with any signal, in order."""
        return sorted(self._by_row)

    @property
    def unvouched(self) -> list[int]:
        """Accepted rows the grader cannot vouch for (touched_grader, answer_lookup,
        verdict_contradiction): failures in the vouched view."""
        return self._accepted_with(UNVOUCHED)

    @property
    def tampered(self) -> list[int]:
        """Accepted rows with touched_grader or answer_lookup (`check --fail-on tampering`)."""
        return self._accepted_with(TAMPERING)

    @property
    def infrastructure(self) -> list[int]:
        """Rows with an infrastructure_error: the harness failed, not the agent."""
        return [
            row
            for row, found in sorted(self._by_row.items())
            if any(signal.kind == "infrastructure_error" for signal in found)
        ]

    @property
    def never_acted(self) -> list[int]:
        """Rows whose agent never acted (`signals.agent_never_acted`): 0 tokens, known."""
        return sorted(self.never_acted_rows)

    def _accepted_with(self, kinds: frozenset[str]) -> list[int]:
        return [
            row
            for row, found in sorted(self._by_row.items())
            if row in self.accepted_rows and any(signal.kind in kinds for signal in found)
        ]

    def apply(self, attempts: pl.DataFrame, accepted: Accepted = "graded") -> pl.DataFrame:
        """The attempts as the accounting reads them: `vouched` makes each unvouched acceptance
        a failure (its tokens stay); both mark the attempts whose agent never acted
        (NEVER_ACTED_COLUMN), whose missing or 0 usage is then 0 tokens, known.

        `attempts` must be the audited frame (same rows, same order), prices applied or not.
        """
        if attempts.height != self.rows:
            raise ValueError(
                f"the audit read {self.rows:,} attempts, the frame has {attempts.height:,}"
            )
        index = pl.int_range(pl.len(), dtype=pl.UInt32)
        never = index.is_in(pl.Series(self.never_acted, dtype=pl.UInt32).implode())
        columns = [never.alias(NEVER_ACTED_COLUMN)]
        if "tokens" in attempts.columns:
            tokens = pl.col("tokens")
            columns.append(
                pl.when(never & (tokens.is_null() | (tokens == 0)))
                .then(pl.lit(0, dtype=attempts.schema["tokens"]))
                .otherwise(tokens)
                .alias("tokens")
            )
        if accepted == "vouched" and self.unvouched:
            columns.append(
                pl.when(index.is_in(pl.Series(self.unvouched, dtype=pl.UInt32).implode()))
                .then(pl.lit("failed", dtype=OUTCOME_DTYPE))
                .otherwise(pl.col("outcome"))
                .alias("outcome")
            )
        elif accepted not in ACCEPTED_MODES:
            raise ValueError(f"accepted: {accepted!r}, expected graded or vouched")
        return attempts.with_columns(columns)


def audit_ledger(
    ledger: Any,
    inputs: Sequence[str] = (),
    *,
    threads: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Audit:
    """Audit every attempt of `ledger` (a `load.Ledger`, or its attempts frame).

    `inputs`: the paths the ledger was loaded from (`trajectory.openable` finds harness logs
    below a folder with them). `threads`: readers at once (default: 4 a core, at most 16).
    `progress(done, total)` is called as attempts are read (from the calling thread).
    """
    attempts: pl.DataFrame = getattr(ledger, "attempts", ledger)
    paths = list(inputs)
    walk = _worth_walking(attempts, paths)
    accepted = frozenset(
        attempts.select(pl.arg_where(pl.col("outcome") == ACCEPTED)).to_series().to_list()
    )
    readers = _ReaderCache()

    def judge(position: int, row: Mapping[str, Any]) -> _Judged:
        row = openable(row, paths)
        trajectory: Trajectory | None = None
        problem: str | None = None
        try:
            if readers.has_reader(row):
                trajectory = read_attempt(row)
        except TrajectoryError as error:
            problem = str(error)
        except (OSError, ValueError, RecursionError, MemoryError) as error:
            problem = f"{row.get('source')}: cannot be read ({error})"
        found = attempt_signals(row, trajectory)
        never = agent_never_acted(row, trajectory)
        if trajectory is None:
            return _Judged(position, found, never, (), False, problem)
        # Only the verdict's tests are kept: a ledger's logs are never held in memory at once.
        tests, read = trajectory.verdict.tests, bool(trajectory.files)
        return _Judged(position, found, never, tests, read, problem)

    workers = threads or min(16, 4 * (os.cpu_count() or 1))
    judged: list[_Judged] = []
    total = attempts.height if walk else 0
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        # A slice at a time: the rows' dicts of a large ledger are never all made at once.
        for offset, chunk in _slices(attempts if walk else attempts.head(0)):
            items = enumerate(chunk.iter_rows(named=True), start=offset)
            for result in pool.map(lambda item: judge(*item), items):
                judged.append(result)
                if progress is not None:
                    progress(len(judged), total)
    return _audit_of(attempts.height, accepted, judged)


def _slices(attempts: pl.DataFrame, size: int = 4096) -> Iterator[tuple[int, pl.DataFrame]]:
    for offset in range(0, attempts.height, size):
        yield offset, attempts.slice(offset, size)


@dataclass(frozen=True)
class _Judged:
    row: int
    signals: list[Signal]
    never_acted: bool
    tests: tuple[Test, ...]
    read: bool
    problem: str | None


def _audit_of(height: int, accepted: frozenset[int], judged: list[_Judged]) -> Audit:
    by_row = {item.row: item.signals for item in judged if item.signals}
    signal_rows = [
        (row, signal.kind, signal.step, signal.evidence)
        for row, found in sorted(by_row.items())
        for signal in found
    ]
    test_rows = [(item.row, test.name, test.passed) for item in judged for test in item.tests]
    read = sum(1 for item in judged if item.read)
    return Audit(
        signals=pl.DataFrame(signal_rows, schema=SIGNALS_SCHEMA, orient="row"),
        tests=pl.DataFrame(test_rows, schema=TESTS_SCHEMA, orient="row"),
        rows=height,
        accepted_rows=accepted,
        read=read,
        unreadable=tuple((item.row, item.problem) for item in judged if item.problem),
        note=None if read else NO_TRAJECTORIES,
        never_acted_rows=frozenset(item.row for item in judged if item.never_acted),
        _by_row=by_row,
    )


def _worth_walking(attempts: pl.DataFrame, inputs: list[str]) -> bool:
    """Whether a log or the row's own fields could speak for any attempt: a ledger with
    neither (a plain table without `trace`, not a harness's) is not walked row by row."""
    columns = attempts.columns
    with_logs = TRACE_COLUMN in columns or (
        "source" in columns and _any_harness_source(attempts.get_column("source"), inputs)
    )
    return with_logs or any(name in columns for name in _ROW_FIELDS)


def _any_harness_source(sources: pl.Series, inputs: list[str]) -> bool:
    cache = _ReaderCache()
    return any(
        cache.has_reader(openable({"source": str(source)}, inputs))
        for source in sources.cast(pl.String).unique().drop_nulls().to_list()
    )


class _ReaderCache:
    """Whether a row's logs have a reader, asked of each source file once (sniffing a file for
    its harness per row would read it again and again)."""

    def __init__(self) -> None:
        self._sources: dict[str, bool] = {}

    def has_reader(self, row: Mapping[str, Any]) -> bool:
        if row.get(TRACE_COLUMN) not in (None, ""):
            return True
        source = row.get("source")
        if not source:
            return False
        key = str(source)
        if key not in self._sources:
            try:
                self._sources[key] = Path(key).exists() and reader_of({"source": key}) is not None
            except TrajectoryError:
                self._sources[key] = False
        return self._sources[key]


def vouched_notice(audit: Audit) -> Notice:
    """`accepted as vouched: ...` in one line (what summary's warnings and the checks say)."""
    count = len(audit.unvouched)
    what = (
        f"{plural(count, 'accepted attempt')} the grader cannot vouch for "
        f"{'counts' if count == 1 else 'count'} as failures, their tokens kept"
        if count
        else "every accepted attempt is vouched for"
    )
    notes = [audit.note] if audit.note else []
    if audit.unreadable:
        notes.append(f"{plural(len(audit.unreadable), 'log')} could not be read")
    more = f" ({'; '.join(notes)})" if notes else ""
    return Notice(
        "vouched",
        f"accepted as vouched: {what}{more}; ledger-tui grader lists the signals",
        count,
    )
