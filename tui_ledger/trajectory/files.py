"""Reading an attempt's files: the row's source, whole JSON documents, JSON lines, text files.

Every reader opens its files through here, so the same problem reads the same everywhere: one
`TrajectoryError` line naming the file, the record where there is one, and what is wrong (no
such file, a folder, binary bytes, not UTF-8, empty, cut off, not valid JSON). Nothing here
knows a harness.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from tui_ledger.trajectory.model import TrajectoryError
from tui_ledger.trajectory.text import TEXT_LIMIT

MISSING = "no such file (moved or deleted since it was loaded?)"
FOLDER = "is a folder, not a file"
BINARY = "holds binary bytes (NUL), not text"
CUT_OFF = "is cut off mid-record (the JSON ends early)"
CUT_MID_LINE = "is cut off mid-record (the file ends mid-line)"


def failure(path: Path | str, record: str | None, problem: str) -> TrajectoryError:
    """A one-line error: the file, the record where there is one, and what is wrong."""
    where = f"{path}: {record}" if record else str(path)
    message = f"{where}: {problem}"
    # One line whatever a file name, a sample id or a span name holds.
    return TrajectoryError(message.replace("\r", "\\r").replace("\n", "\\n"))


def importer_problem(exc: Exception) -> str:
    """An importer's error without the file and record it names (the reader names them)."""
    text = str(exc)
    path, record = getattr(exc, "path", None), getattr(exc, "record", None)
    prefix = f"{path}: {record}: " if record else f"{path}: "
    return text[len(prefix) :] if path is not None and text.startswith(prefix) else text


def unreadable(path: Path | str, error: OSError) -> TrajectoryError:
    """The error for a file the system would not open or read."""
    if isinstance(error, FileNotFoundError):
        return failure(path, None, MISSING)
    if isinstance(error, IsADirectoryError):
        return failure(path, None, FOLDER)
    return failure(path, None, f"cannot be read ({error.strerror or error})")


def source_file(row: Mapping[str, Any], what: str) -> Path:
    """The file the row came from (its `source`, a path this process can open), checked to be
    a file: `what` names what the reader reads from it."""
    source = row.get("source")
    if not isinstance(source, str) or not source:
        raise TrajectoryError(f"the attempt has no source file to read its {what} from")
    path = Path(source)
    if not path.exists():
        raise failure(path, None, MISSING)
    if not path.is_file():
        raise failure(path, None, FOLDER)
    return path


def row_line(row: Mapping[str, Any], path: Path) -> int:
    """The row's record number in its file (1-based)."""
    line = row.get("line")
    if isinstance(line, bool) or not isinstance(line, int) or line < 1:
        raise failure(path, None, f"the attempt's line is {line!r}, not a line number")
    return line


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise unreadable(path, error) from None


def decode(data: bytes, path: Path | str, record: str | None = None) -> str:
    """Bytes as UTF-8 text (a byte-order mark dropped); NUL or undecodable bytes mean a binary
    file, not a log."""
    if b"\x00" in data:
        raise failure(path, record, BINARY)
    try:
        return data.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as error:
        problem = f"holds bytes that are not UTF-8 text (at byte {error.start})"
        raise failure(path, record, problem) from None


def read_text(path: Path) -> str:
    """The whole file as text (read once: the bytes are let go once decoded)."""
    return decode(read_bytes(path), path)


def parse(
    text: str | bytes, path: Path | str, record: str | None = None, *, document: bool = False
) -> Any:
    """A whole JSON value, or a TrajectoryError saying where it breaks or that it is cut off.

    `document`: the text is a whole file, so one that does not end as JSON ends is cut off.
    """
    if isinstance(text, bytes):
        text = decode(text, path, record)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        if not text.strip():
            raise failure(path, record, "is empty, not JSON") from None
        raise failure(path, record, broken(text, error, document=document)) from None
    except RecursionError:
        raise failure(path, record, "nests too deep to read") from None


def load_document(path: Path) -> Any:
    """A whole JSON file: its text and then its objects (about twice its size), never three
    copies."""
    return parse(read_text(path), path)


def lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes) of each line of the file, read as it goes."""
    handle = _opened(path)
    with handle:
        number = 0
        while raw := _line(handle, path):
            number += 1
            yield number, raw


def parse_line(raw: bytes, path: Path, number: int) -> Any:
    """One line of a JSON Lines file, parsed (a line the file's end cut says so)."""
    return _parse_line(decode(raw, path, f"line {number}"), raw.endswith(b"\n"), path, number)


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) of every non-blank line, read a line at a time."""
    for number, raw in lines(path):
        if raw.isspace():
            continue
        yield number, parse_line(raw, path, number)


HEAD_LINES = 400
"""How far into a session log its first prompt (the attempt's instruction) is looked for."""


def head_records(path: Path, limit: int = HEAD_LINES) -> Iterator[Any]:
    """The parsed records of the first `limit` lines, read only to find a header value (the
    first prompt): where the file breaks there, they stop (the steps say where it breaks)."""
    try:
        for number, record in json_lines(path):
            if number > limit:
                return
            yield record
    except TrajectoryError:
        return


def load_line(path: Path, line: int) -> Any:
    """Line `line` (1-based) of a JSONL file, parsed; the lines before it are skipped unparsed,
    so a large file never sits in memory whole, and the line's bytes are let go once decoded
    (it costs its text and its objects)."""
    handle = _opened(path)
    with handle:
        for _ in range(line - 1):
            if not _line(handle, path):
                break
        raw = _line(handle, path)
    if not raw:
        raise failure(path, None, f"has no line {line} (the file is shorter than when loaded)")
    if raw.isspace():
        raise failure(path, f"line {line}", "is blank, not a record")
    text, whole_line = decode(raw, path, f"line {line}"), raw.endswith(b"\n")
    del raw
    return _parse_line(text, whole_line, path, line)


def _parse_line(text: str, whole_line: bool, path: Path, number: int) -> Any:
    try:
        return parse(text, path, f"line {number}")
    except TrajectoryError as error:
        if whole_line or not str(error).endswith(CUT_OFF):
            raise
        raise failure(path, f"line {number}", CUT_MID_LINE) from None


def _opened(path: Path) -> BinaryIO:
    try:
        return path.open("rb")
    except OSError as error:
        raise unreadable(path, error) from None


def _line(handle: BinaryIO, path: Path) -> bytes:
    try:
        return handle.readline()
    except OSError as error:
        raise unreadable(path, error) from None


def read_text_tail(path: Path, limit: int = TEXT_LIMIT) -> str | None:
    """A text file's end (at most `limit` bytes, from a line's start), undecodable bytes as
    U+FFFD; None when it is absent or unreadable."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - limit))
            data = handle.read()
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    if size > limit:
        text = f"… ({size - len(data):,} bytes cut)\n" + text[text.find("\n") + 1 :]
    return text


def read_text_head(path: Path, limit: int = TEXT_LIMIT) -> str:
    """A small text file (an instruction, a reward), its first `limit` characters where it
    is longer; undecodable bytes as U+FFFD."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            text = handle.read(limit + 1)
    except OSError as error:
        raise unreadable(path, error) from None
    if len(text) > limit:
        return text[:limit] + f"\n… (cut at {limit:,} characters)"
    return text


_NUMBER_START = re.compile(r"-?\d*\.?\d*(?:[eE][-+]?\d*)?")


def broken(text: str, error: json.JSONDecodeError, *, document: bool = False) -> str:
    """What is wrong with JSON that does not parse: cut off (it stops: the error is at its
    end, inside a string running to the end, or in a literal or number the end cut short;
    a whole `document` not ending as JSON ends), or not valid JSON there."""
    end = text.rstrip()
    rest = end[error.pos :]
    early = (
        not rest
        or error.msg.startswith("Unterminated string")
        or any(word.startswith(rest) for word in ("true", "false", "null"))
        or _NUMBER_START.fullmatch(rest) is not None
    )
    if early or (document and not end.endswith(("}", "]"))):
        return CUT_OFF
    return f"is not valid JSON ({error.msg} at line {error.lineno}, column {error.colno})"
