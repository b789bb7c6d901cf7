"""Reading a harness's files for one attempt: whole JSON documents, one line of a JSONL file,
small text files, each failure a one-line `TrajectoryError` naming the file (and the line).

Shared by the SWE-bench, OpenHands and Aider readers; nothing here knows a harness.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tui_ledger.trajectory.model import TrajectoryError

TEXT_LIMIT = 1 << 20
"""The most of a grader's printed output kept (its end: where the summary is)."""


def source_path(row: Mapping[str, Any], what: str) -> Path:
    """The file the row came from, as the loader named it (a path this process can open)."""
    source = row.get("source")
    if not isinstance(source, str) or not source:
        raise TrajectoryError(f"the attempt has no source file to read its {what} from")
    return Path(source)


def row_line(row: Mapping[str, Any], path: Path) -> int:
    """The row's record number in its file (1-based)."""
    line = row.get("line")
    if isinstance(line, bool) or not isinstance(line, int) or line < 1:
        raise TrajectoryError(f"{path}: the attempt's line is {line!r}, not a line number")
    return line


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise TrajectoryError(
            f"{path}: no such file (moved or deleted since it was loaded)"
        ) from None
    except OSError as exc:
        raise TrajectoryError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def decode(data: bytes, place: str) -> str:
    """JSON text from a file's bytes; binary bytes or another encoding is one line naming it."""
    if b"\x00" in data:
        raise TrajectoryError(f"{place}: holds binary bytes, not JSON text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise TrajectoryError(f"{place}: is not UTF-8 text") from None


def parse(text: str, path: Path, where: str | None = None) -> Any:
    """`text` parsed as JSON; a cut-off or non-JSON record is one line naming it."""
    place = f"{path}: {where}" if where else f"{path}"
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if not text.strip():
            raise TrajectoryError(f"{place}: is empty, not JSON") from None
        if _ends_early(text, exc):
            problem = "is cut off mid-record (the JSON ends early)"
        else:
            problem = f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        raise TrajectoryError(f"{place}: {problem}") from None


_NUMBER_START = re.compile(r"-?\d*\.?\d*(?:[eE][-+]?\d*)?")


def _ends_early(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether the JSON breaks because it stops (a file cut off mid-write), not because of a
    wrong character: the error is at its end, inside a string running to the end, or in a
    literal or number the end cut short."""
    rest = text.rstrip()[exc.pos :]
    if not rest or exc.msg.startswith("Unterminated string"):
        return True
    if any(word.startswith(rest) for word in ("true", "false", "null")):
        return True
    return _NUMBER_START.fullmatch(rest) is not None


def load_document(path: Path) -> Any:
    """A whole JSON file. The bytes are let go once decoded, so a file costs its text and its
    objects (about twice its size), never three copies."""
    text = decode(read_bytes(path), str(path))
    return parse(text, path)


def load_line(path: Path, line: int) -> Any:
    """Line `line` (1-based) of a JSONL file, parsed; the lines before it are skipped unparsed,
    read a line at a time, so a large file never sits in memory whole."""
    where = f"line {line}"
    try:
        with path.open("rb") as handle:
            for _ in range(line - 1):
                if not handle.readline():
                    break
            raw = handle.readline()
    except FileNotFoundError:
        raise TrajectoryError(
            f"{path}: no such file (moved or deleted since it was loaded)"
        ) from None
    except OSError as exc:
        raise TrajectoryError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not raw:
        raise TrajectoryError(f"{path}: has no line {line} (the file is shorter than when loaded)")
    if raw.isspace():
        raise TrajectoryError(f"{path}: {where}: is blank, not a record")
    text = decode(raw, f"{path}: {where}")
    del raw  # the bytes go before the objects are made: the line's text and objects, no more
    return parse(text, path, where)


def read_text_tail(path: Path, limit: int = TEXT_LIMIT) -> str | None:
    """A text file's end (at most `limit` bytes), None when it is absent or unreadable."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - limit))
            data = handle.read()
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    if len(data) == limit and size > limit:
        text = "…" + text[text.find("\n") + 1 :]
    return text


def as_text(value: Any) -> str:
    """A message's content as text: strings as they are, lists of parts joined, else JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict) and part.get("type") in ("image_url", "image"):
                parts.append("[image]")
            else:
                parts.append(json.dumps(part, ensure_ascii=False))
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False)


def as_object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (a key the log left out)."""
    return value if isinstance(value, dict) else {}


def arguments_text(value: Any) -> str:
    """A tool call's arguments as text: JSON for structured ones, the raw text otherwise."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def epoch_iso(value: Any) -> str | None:
    """Epoch seconds as ISO 8601 (UTC); an ISO string as written; None otherwise."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(value, timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def count(value: Any, path: Path, where: str) -> int | None:
    """A token count as an int (None stays None); anything else is a `TrajectoryError`."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise TrajectoryError(f"{path}: {where} is {value!r}, not a whole number of tokens")


def litellm_buckets(
    usage: Mapping[str, Any], path: Path, where: str
) -> tuple[int | None, int | None, int | None, int | None]:
    """(input, cached input, cache write, output) of one litellm usage, as the importers count
    it: litellm's prompt_tokens includes cache reads and (Anthropic) writes, so the uncached
    input is prompt - reads - writes (the prompt as it is when smaller than its cache counts).
    """
    prompt = count(usage.get("prompt_tokens"), path, f"{where}.prompt_tokens")
    completion = count(usage.get("completion_tokens"), path, f"{where}.completion_tokens")
    details = usage.get("prompt_tokens_details")
    reads = details.get("cached_tokens") if isinstance(details, dict) else None
    if reads is None:
        reads = usage.get("cache_read_input_tokens")
    writes = usage.get("cache_creation_input_tokens")
    read = count(reads, path, f"{where}.cached_tokens") or 0
    written = count(writes, path, f"{where}.cache_creation_input_tokens") or 0
    if prompt is None and completion is None:
        return None, None, None, None  # a usage object with no counts records nothing
    if prompt is None:
        return None, read, written, completion
    cache = read + written
    uncached = prompt - cache if prompt >= cache else prompt
    return uncached, read, written, completion
