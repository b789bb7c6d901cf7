"""Reading one record out of a JSON log without parsing the rest into objects.

A harness that writes one large JSON document (an Inspect `.json` log, a promptfoo results
file) keeps every attempt in one array. `value_at` walks the document's text to the value a
path of keys and indices names and parses only that value: the siblings on the way are
decoded one at a time and dropped, so memory holds the file's text once and one record.
Every failure is a `TrajectoryError` naming the file, the record and what is wrong
(`files.failure`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tui_ledger.trajectory.files import CUT_OFF, broken, failure

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class Absent(Exception):
    """The path names a key or an index the document does not have."""


def value_at(text: str, steps: Sequence[str | int], path: Path | str, record: str) -> Any:
    """The value at `steps` (object keys, array indices) in the JSON document `text`.

    Raises `Absent` when a key or index is not there (or the value on the way is of another
    kind), and a TrajectoryError when the text is not JSON or ends before the value does.
    """
    try:
        position = 0
        for step in steps:
            position = _enter(text, position, step)
        position = _space(text, position)
        value, _ = _DECODER.raw_decode(text, position)
        return value
    except json.JSONDecodeError as exc:
        raise failure(path, record, broken(text, exc, document=True)) from None
    except IndexError:
        raise failure(path, record, CUT_OFF) from None


def items_of(text: str, steps: Sequence[str | int], path: Path | str) -> Iterator[Any]:
    """Each element of the array at `steps`, decoded one at a time (Absent when not an array).

    An error names the element where the text breaks (`resourceSpans #3`).
    """
    name = "/".join(map(str, steps))
    number = 1
    try:
        position = _space(text, _walk(text, steps))
        if text[position] != "[":
            raise Absent
        position = _space(text, position + 1)
        if text[position] == "]":
            return
        while True:
            value, position = _DECODER.raw_decode(text, _space(text, position))
            yield value
            number += 1
            position = _space(text, position)
            if text[position] == "]":
                return
            _expect(text, position, ",")
            position += 1
    except json.JSONDecodeError as exc:
        raise failure(path, f"{name} #{number}", broken(text, exc, document=True)) from None
    except IndexError:
        raise failure(path, f"{name} #{number}", CUT_OFF) from None


def _walk(text: str, steps: Sequence[str | int]) -> int:
    position = 0
    for step in steps:
        position = _enter(text, position, step)
    return position


def _space(text: str, position: int) -> int:
    match = _SPACE.match(text, position)
    return position if match is None else match.end()


def _expect(text: str, position: int, char: str) -> None:
    if text[position] != char:
        raise json.JSONDecodeError(f"Expecting '{char}'", text, position)


def _enter(text: str, position: int, step: str | int) -> int:
    """The position of the value `step` names inside the value starting at `position`."""
    position = _space(text, position)
    opening, closing = ("{", "}") if isinstance(step, str) else ("[", "]")
    if text[position] != opening:
        if text[position] in "{[":
            raise Absent
        _DECODER.raw_decode(text, position)  # raises for text that is not JSON at all
        raise Absent
    position = _space(text, position + 1)
    if text[position] == closing:
        raise Absent
    index = 0
    while True:
        position = _space(text, position)
        if isinstance(step, str):
            key, position = _DECODER.raw_decode(text, position)
            if not isinstance(key, str):
                raise json.JSONDecodeError("Expecting property name", text, position)
            position = _space(text, position)
            _expect(text, position, ":")
            position = _space(text, position + 1)
            if key == step:
                return position
        elif index == step:
            return position
        _, position = _DECODER.raw_decode(text, position)
        index += 1
        position = _space(text, position)
        if text[position] == closing:
            raise Absent
        _expect(text, position, ",")
        position += 1
