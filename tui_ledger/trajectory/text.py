"""What every trajectory reader writes the same way: structured values as JSON text, times as
ISO 8601, token counts checked, a huge text capped, and a `Step` built from its buckets.

One definition each, so every reader's steps read alike (tests/test_trajectory_contract.py):
`tokens` is `bucket_total` of the buckets wherever the buckets are known, a timestamp is
ISO 8601 text or None, and no text a step holds runs past `TEXT_LIMIT` characters.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from tui_ledger.trajectory.model import Step, ToolCall, TrajectoryError, Who, bucket_total

TEXT_LIMIT = 1 << 20
"""The most characters of one text a step or a verdict keeps (a 50 MB tool output, a grader's
whole log): the first half and the last half of the limit, the middle named as cut."""

Buckets = tuple[int | None, int | None, int | None, int | None]
"""(input, cached input, cache write, output), None where the log records none."""
NO_BUCKETS: Buckets = (None, None, None, None)


_ROLES: dict[str, Who] = {"system": "system", "user": "user", "assistant": "agent", "tool": "tool"}


def role_source(role: Any) -> Who:
    """A chat message's role as the step's source: assistant -> agent; a role of its own (a
    harness's `exit`, a developer message) is the system's."""
    return _ROLES.get(str(role), "system")


def as_json(value: Any) -> str:
    """A structured value as JSON text (non-ASCII kept as it is; what JSON cannot hold as
    its text)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def arguments_text(value: Any) -> str:
    """A tool call's arguments as text: the raw text as written, JSON for structured ones,
    empty where there are none."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return as_json(value)


_IMAGES = frozenset({"image", "image_url", "input_image"})


def content_text(content: Any) -> str:
    """A message's content as text: a string as it is, a list of parts' texts joined.

    Images are named (`[image]`), a part holding `content` (a tool result) read for its text,
    never dropped silently; anything else is written as JSON.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                text = part.get("text")
                if isinstance(text, str):
                    parts.append(text)
                elif part.get("type") in _IMAGES:
                    parts.append("[image]")
                elif "content" in part:
                    parts.append(content_text(part["content"]))
                else:
                    parts.append(as_json(part))
            else:
                parts.append(as_json(part))
        return "\n".join(part for part in parts if part)
    if isinstance(content, dict):
        text = content.get("text")
        return text if isinstance(text, str) else as_json(content)
    return as_json(content)


def str_or_none(value: Any) -> str | None:
    """Any value as text, None staying None."""
    return None if value is None else str(value)


def text_or_none(value: Any) -> str | None:
    """A string value, None for anything else or an empty string."""
    return value if isinstance(value, str) and value else None


def reply_text(texts: Sequence[str], thinking: Sequence[str]) -> str:
    """A model reply's text: its text blocks, then its thinking marked `(thinking)`, blank
    ones left out (Claude Code's and Codex's streamed replies)."""
    parts = [text for text in texts if text.strip()]
    parts += [f"(thinking) {text.strip()}" for text in thinking if text.strip()]
    return "\n\n".join(parts)


def call_results(
    calls: Sequence[ToolCall], results: Mapping[str, str], otherwise: str | None = None
) -> str | None:
    """What the tools answered a reply's calls with (by call id), as one observation: one
    answer as it is, several each under its tool's name; `otherwise` where none is."""
    answers = [
        (call, results[call.id]) for call in calls if call.id is not None and call.id in results
    ]
    if len(answers) == 1:
        return answers[0][1]
    if answers:
        return "\n\n".join(f"[{call.name}]\n{text}" for call, text in answers)
    return otherwise


def looked_for(what: str, where: object, why: str | None = None) -> str:
    """One entry of `Opened.looked_for`, worded alike by every reader: what was looked for,
    where, and why nothing came of it where something was found (`messages in x.json (the
    trajectory records none)`). The trace shows them as `No steps: looked for ...`."""
    return f"{what} in {where}" + (f" ({why})" if why else "")


def counted(number: int, noun: str) -> str:
    """`1 step`, `3 steps`."""
    return f"{number:,} {noun if number == 1 else noun + 's'}"


def capped(text: str, limit: int = TEXT_LIMIT) -> str:
    """`text` whole when it fits in `limit` characters, else its start and its end (where a
    command's or a grader's summary is) with the characters left out between them named."""
    if len(text) <= limit:
        return text
    half = limit // 2
    left = len(text) - 2 * half
    return f"{text[:half]}\n… ({left:,} characters cut) …\n{text[-half:]}"


def iso_time(value: Any) -> str | None:
    """A time as ISO 8601 text: an ISO string as written, epoch seconds in UTC; None for
    anything else (a string that is no ISO 8601 time included)."""
    if isinstance(value, str):
        return value if _is_iso(value) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(value, timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def nanos_iso(nanos: int | None) -> str | None:
    """Epoch nanoseconds (OpenTelemetry's times) as ISO 8601 in UTC; None for none or 0."""
    if not nanos:
        return None
    seconds, rest = divmod(nanos, 1_000_000_000)
    try:
        moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.replace(microsecond=rest // 1000).isoformat()


def _is_iso(value: str) -> bool:
    text = value.strip()
    if not text:
        return False
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        datetime.fromisoformat(text)
    except ValueError:
        # Python 3.10 reads a fraction of exactly 3 or 6 digits only; others are ISO too.
        head, dot, rest = text.partition(".")
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if not dot or digits == 0:
            return False
        try:
            datetime.fromisoformat(head + "." + rest[:digits][:6].ljust(6, "0") + rest[digits:])
        except ValueError:
            return False
    return True


def token_count(value: Any, where: str) -> int | None:
    """A token count as an int (None stays None); anything else is a `TrajectoryError` naming
    the place (`where`: the file, the record and the field)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise TrajectoryError(f"{where} is {value!r}, not a whole number of tokens")


def make_step(
    index: int,
    source: Who,
    text: str,
    *,
    tool_calls: Sequence[ToolCall] = (),
    observation: str | None = None,
    buckets: Buckets = NO_BUCKETS,
    tokens: int | None = None,
    timestamp: str | None = None,
    error: bool = False,
    agent: str | None = None,
    kind: str | None = None,
) -> Step:
    """A `Step` as every reader makes one: its tokens the sum of its buckets where any is
    recorded (`tokens` only where the log keeps a total and no buckets), its texts capped."""
    total = bucket_total(*buckets)
    return Step(
        index=index,
        source=source,
        text=capped(text),
        tool_calls=tuple(tool_calls),
        observation=None if observation is None else capped(observation),
        input_tokens=buckets[0],
        cached_input_tokens=buckets[1],
        cache_write_tokens=buckets[2],
        output_tokens=buckets[3],
        tokens=tokens if total is None else total,
        timestamp=timestamp,
        error=error,
        agent=agent,
        kind=kind,
    )
