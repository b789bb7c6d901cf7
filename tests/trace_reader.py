"""A tiny trajectory reader for the `trace` tests only (registered by monkeypatching
`tui_ledger.trajectory.READERS`): the ledger's `trace` column names a small JSON file beside
it (a harness's row: `trace.json` beside its source), `{"instruction", "tests": [{name,
result}], "output", "notes", "steps": [...]}`, each step `{source, text, tool_calls: [{name,
arguments}], observation, buckets or tokens, timestamp, error, agent, kind}`. A file that is
not that JSON is a `TrajectoryError`, as a real reader's broken log is."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tui_ledger.trajectory import (
    BUCKETS,
    Opened,
    Step,
    Test,
    ToolCall,
    TrajectoryError,
    Verdict,
    bucket_total,
)


def open(row: Mapping[str, Any]) -> Opened:
    # A plain ledger's `trace` column names the file; a harness's row (registered under its
    # importer's name) has `trace.json` beside the file it came from.
    name = str(row["trace"]) if row.get("trace") else "trace.json"
    path = Path(str(row["source"])).parent / name
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TrajectoryError(f"{name}: not a trajectory ({type(error).__name__})") from None
    if not isinstance(document, dict):
        raise TrajectoryError(f"{name}: not a trajectory (expected an object)")
    return Opened(
        files=[name],
        instruction=document.get("instruction"),
        verdict=Verdict(
            tests=tuple(Test(t["name"], t["result"]) for t in document.get("tests", [])),
            output=document.get("output"),
        ),
        steps=_steps(document.get("steps", [])),
        notes=list(document.get("notes", [])),
    )


def _steps(records: list[dict[str, Any]]) -> Iterator[Step]:
    for index, record in enumerate(records, start=1):
        buckets = {name: record.get(name) for name in BUCKETS}
        tokens = record.get("tokens", bucket_total(*buckets.values()))
        yield Step(
            index=index,
            source=record.get("source", "agent"),
            text=record.get("text", ""),
            tool_calls=tuple(
                ToolCall(call["name"], call.get("arguments", ""))
                for call in record.get("tool_calls", [])
            ),
            observation=record.get("observation"),
            tokens=tokens,
            timestamp=record.get("timestamp"),
            error=bool(record.get("error", False)),
            agent=record.get("agent"),
            kind=record.get("kind"),
            **buckets,
        )
