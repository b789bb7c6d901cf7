"""Inside an attempt: its steps, its tokens step by step, and how the grader judged it.

```python
from tui_ledger.trajectory import open_attempt, read_attempt

opened = open_attempt(row)        # row: the attempt's fields (ledger.attempts.row(i, named=True))
for step in opened.steps: ...     # read lazily, a step at a time
trajectory = read_attempt(row)    # read to the end
```

One reader per harness format, each in its own module with `open(row) -> Opened`, reading only
the attempt asked for. The reader is chosen from the row: a `trace` column names a trajectory
file (ATIF) relative to the ledger; otherwise the importer that reads the row's `source` file
names it. A row no reader opens gets no steps and says what was looked for. Every failure to
read is a `TrajectoryError` with a one-line message; the ledger itself never depends on it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from tui_ledger.trajectory.model import (
    BUCKETS,
    DIFFERS,
    EQUAL,
    NOT_RECORDED,
    Opened,
    Step,
    Test,
    TokensMatch,
    ToolCall,
    Trajectory,
    TrajectoryError,
    Verdict,
    Who,
    bucket_total,
    read_all,
    steps_tokens,
    tokens_match,
)

TRACE_COLUMN = "trace"
"""A plain ledger's column naming each attempt's trajectory file (ATIF), relative to the ledger."""

# importer name -> the module that opens its attempts (imported only when one is opened).
READERS: dict[str, str] = {
    "atif": "tui_ledger.trajectory.atif",
    "terminal-bench": "tui_ledger.trajectory.terminal_bench",
    "harbor": "tui_ledger.trajectory.harbor",
    "claude-code": "tui_ledger.trajectory.claude_code",
    "codex": "tui_ledger.trajectory.codex",
    "swe-bench": "tui_ledger.trajectory.swebench",
    "openhands": "tui_ledger.trajectory.openhands",
    "aider": "tui_ledger.trajectory.aider",
    "inspect": "tui_ledger.trajectory.inspect_ai",
    "promptfoo": "tui_ledger.trajectory.promptfoo",
    "otel": "tui_ledger.trajectory.otel",
}


def open_attempt(row: Mapping[str, Any]) -> Opened:
    """The attempt's logs, opened (steps still to read). Raises TrajectoryError."""
    module = _reader_for(row)
    if module is None:
        return _nothing_found(row)
    reader = importlib.import_module(module)
    opened: Opened = reader.open(row)
    return opened


def read_attempt(row: Mapping[str, Any]) -> Trajectory:
    """The attempt's logs read to the end. Raises TrajectoryError."""
    return read_all(open_attempt(row))


def reader_of(row: Mapping[str, Any]) -> str | None:
    """The module that opens the row's logs (`READERS`' values), None when no reader does.
    Raises TrajectoryError as `open_attempt` does (a source gone, a cluster's file)."""
    return _reader_for(row)


def openable(row: Mapping[str, Any], inputs: Sequence[str]) -> dict[str, Any]:
    """The row with a `source` its reader can open from here, given the inputs the ledger was
    loaded from (what both front ends hand `open_attempt`).

    The loader names a harness's files by their path below the one folder the user opened
    (`t1__abc/result.json`: `load.readers.trial_names`), which is no path from the working
    directory; the reader needs one. Several inputs are named below the path as given, and a
    file by its own name: those open as they are (and so does a source already absolute).
    A Spark engine names a file by its URI (`file:/runs/a.parquet`): the path it names.
    """
    source = row.get("source")
    if isinstance(source, str):
        source = file_path(source)
        row = {**row, "source": source}
    if source and len(inputs) == 1 and Path(inputs[0]).is_dir():
        candidate = Path(inputs[0]) / str(source)
        if candidate.exists():
            return {**row, "source": str(candidate)}
    return dict(row)


def _reader_for(row: Mapping[str, Any]) -> str | None:
    if row.get(TRACE_COLUMN) not in (None, ""):
        return READERS.get("atif")
    source = row.get("source")
    if not source:
        return None
    # Deferred: the importers pull in polars, which a trace of one attempt needs anyway, but
    # the model above stays importable on its own.
    from tui_ledger.importers import find_importer

    path = Path(str(source))
    if _scheme(str(source)) not in ("", "file") and not path.exists():
        raise TrajectoryError(
            f"{source}: a file of the cluster's, not of this machine; the attempt's log "
            "cannot be opened from here (copy the run's folder here and open it)"
        )
    if not path.exists():
        # The file the row was read from has gone since the load (or the row names a file
        # relative to a folder the caller did not hand to `openable`): say so, never "nothing".
        raise TrajectoryError(f"{source}: no such file (the attempt's log was read from it)")
    try:
        importer = find_importer(path)
    except OSError as error:
        raise TrajectoryError(f"{source}: cannot be read ({error.strerror or error})") from None
    return None if importer is None else READERS.get(importer.name)


def file_path(source: str) -> str:
    """`source` as a path where it is a `file:` URI (a Spark engine names a file so:
    `file:/runs/a%20b.parquet` is `/runs/a b.parquet`); any other source as it is."""
    return unquote(urlparse(source).path) if _scheme(source) == "file" else source


def _scheme(source: str) -> str:
    """The URI scheme `source` starts with (`file`, `hdfs`, `s3a`, ...), else "" (a path;
    a one-letter scheme is a drive)."""
    scheme = urlparse(source).scheme
    return scheme.lower() if len(scheme) > 1 else ""


def _nothing_found(row: Mapping[str, Any]) -> Opened:
    source = row.get("source")
    looked = [f"a `{TRACE_COLUMN}` column naming a trajectory file"]
    if source:
        looked.append(f"a harness log beside {source}")
    return Opened(files=[], instruction=None, verdict=Verdict(), steps=iter(()), looked_for=looked)


__all__ = [
    "BUCKETS",
    "DIFFERS",
    "EQUAL",
    "NOT_RECORDED",
    "READERS",
    "TRACE_COLUMN",
    "Opened",
    "Step",
    "Test",
    "TokensMatch",
    "ToolCall",
    "Trajectory",
    "TrajectoryError",
    "Verdict",
    "Who",
    "bucket_total",
    "file_path",
    "open_attempt",
    "openable",
    "read_all",
    "read_attempt",
    "reader_of",
    "steps_tokens",
    "tokens_match",
]
