"""Reading a harness's JSONL session log a line at a time, for the session readers.

Claude Code transcripts and Codex rollouts are JSON Lines files that can run to tens of MB:
they are read as they go, one parsed line at a time, and every way a line can be unreadable
is one `TrajectoryError` line naming the file and the line (the steps before it are already
yielded). A file the log should be in and is not is the same error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tui_ledger.trajectory.model import TrajectoryError


def session_file(row: Mapping[str, Any], harness: str) -> Path:
    """The file the row came from (its `source`), or a TrajectoryError saying why not."""
    source = row.get("source")
    if not source:
        raise TrajectoryError(f"the row names no {harness} file (its source is empty)")
    path = Path(str(source))
    if not path.exists():
        raise TrajectoryError(f"{path}: the {harness} file is missing")
    if not path.is_file():
        raise TrajectoryError(f"{path}: is not a {harness} file (a folder)")
    return path


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) of every non-blank line, read as it goes.

    Raises TrajectoryError for a line cut off, a line that is not JSON, binary bytes, or a
    file that cannot be read.
    """
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                text = raw.strip()
                if not text:
                    continue
                yield number, _parse(path, number, raw, text)
    except OSError as error:
        raise TrajectoryError(f"{path}: cannot be read ({error.strerror or error})") from None


def _parse(path: Path, number: int, raw: bytes, text: bytes) -> Any:
    where = f"{path}: line {number}"
    if b"\x00" in text:
        raise TrajectoryError(f"{where} holds binary bytes (NUL), not a JSON line")
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        raise TrajectoryError(f"{where} holds bytes that are not UTF-8, not a JSON line") from None
    try:
        return json.loads(decoded)
    except json.JSONDecodeError as error:
        # The record stops short: inside a string, or where more of it should follow.
        if error.msg.startswith("Unterminated string") or error.pos >= len(decoded):
            ends = "" if raw.endswith(b"\n") else " (the file ends mid-line)"
            raise TrajectoryError(f"{where} is cut off mid-record{ends}") from None
        raise TrajectoryError(
            f"{where} is not JSON ({error.msg} at column {error.colno})"
        ) from None
    except RecursionError:
        raise TrajectoryError(f"{where} nests too deep to read") from None


def flat_text(content: Any) -> str:
    """A message's content as text: a string as it is, a list of blocks' texts joined.

    Images and other non-text blocks are named in brackets (`[image]`), never dropped
    silently; anything else is written as JSON.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
                elif block.get("type") in ("image", "input_image"):
                    parts.append("[image]")
                elif "content" in block:
                    parts.append(flat_text(block["content"]))
                else:
                    parts.append(as_json(block))
            else:
                parts.append(as_json(block))
        return "\n".join(part for part in parts if part)
    if isinstance(content, dict):
        text = content.get("text")
        return text if isinstance(text, str) else as_json(content)
    return str(content)


def as_json(value: Any) -> str:
    """A structured value as compact JSON text (non-ASCII kept as it is)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(value)


def whole(value: Any, where: str, field: str) -> int | None:
    """A token count as an int (None stays None), or a TrajectoryError naming the field."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TrajectoryError(f"{where}: {field} is {value!r}, not a number of tokens")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise TrajectoryError(f"{where}: {field} is {value!r}, not a whole number")


def text_or_none(value: Any) -> str | None:
    """A string value, None for anything else or an empty string."""
    return value if isinstance(value, str) and value else None
