"""A small trajectory reader for the app's tests: the JSON file a ledger's `trace` column names.

The tests point `tui_ledger.trajectory.READERS["atif"]` at this module, so the attempt screen is
tested without depending on the real readers. The file (relative to the ledger's folder):

    {"instruction": "...", "output": "...", "tests": [["test_a", "passed"], ...],
     "notes": ["..."], "steps": [{"source": "agent", "text": "...", "tokens": 10, ...}],
     "break_after": 3}

Each step takes `Step`'s fields by name (`tool_calls` as [{"name", "arguments"}]); `index`
defaults to its place. `break_after`: the reader raises TrajectoryError after that many steps.
`write_attempts` writes a ledger and its trace files for a test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from tui_ledger.trajectory import Opened, Step, Test, ToolCall, TrajectoryError, Verdict

MODULE = __name__


def open(row: Mapping[str, Any]) -> Opened:
    """The attempt's trace file, opened; its steps read one at a time."""
    ledger = Path(str(row["source"]))
    path = ledger.parent / str(row["trace"])
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TrajectoryError(f"{path.name}: cannot read it ({error})") from None
    verdict = Verdict(
        tests=tuple(Test(name, result) for name, result in data.get("tests", [])),
        output=data.get("output"),
    )
    return Opened(
        files=[str(path.relative_to(ledger.parent))],
        instruction=data.get("instruction"),
        verdict=verdict,
        steps=_steps(path.name, data.get("steps", []), data.get("break_after")),
        looked_for=list(data.get("looked_for", [])),
        notes=list(data.get("notes", [])),
    )


def _steps(name: str, steps: Sequence[dict[str, Any]], break_after: int | None) -> Iterator[Step]:
    for number, fields in enumerate(steps, 1):
        if break_after is not None and number > break_after:
            raise TrajectoryError(f"{name}: step {number} is not valid JSON")
        fields = dict(fields)
        calls = tuple(ToolCall(**call) for call in fields.pop("tool_calls", []))
        fields.setdefault("index", number)
        fields.setdefault("source", "agent")
        fields.setdefault("text", "")
        yield Step(tool_calls=calls, **fields)


def write_attempts(
    folder: Path, attempts: Sequence[Mapping[str, Any]], name: str = "ledger.csv"
) -> Path:
    """A CSV ledger in `folder` and each attempt's trace file: each attempt is a mapping of the
    ledger's columns (workflow, task, tokens, passed, ...; None for an empty cell) with
    "trace": the trace's JSON, or None for no trace."""
    columns = [key for key in attempts[0] if key != "trace"] + ["trace"]
    lines = [",".join(columns)]
    for number, attempt in enumerate(attempts, 1):
        cells = []
        for column in columns:
            value = attempt.get(column)
            if column == "trace" and value is not None:
                (folder / "traces").mkdir(exist_ok=True)
                (folder / f"traces/{number}.json").write_text(json.dumps(value), encoding="utf-8")
                value = f"traces/{number}.json"
            cells.append(
                ""
                if value is None
                else str(value).lower()
                if isinstance(value, bool)
                else str(value)
            )
        lines.append(",".join(cells))
    path = folder / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
