"""A terminal session played back as steps: an asciinema v2 recording, or a raw terminal log.

The session is played through pyte (a terminal emulator) at the recording's own size, so what
comes out is what a person watching the terminal saw: colours, titles, OSC 52 clipboard writes,
cursor moves and screen clears are acted on by the emulator and never reach the text. Lines that
scroll off the top are kept, so nothing printed is lost.

A step starts at each input event (`[seconds, "i", text]`: what was typed into the terminal; in
Terminal-Bench, the harness's `tmux send-keys`, whether the keys came from the harness or the
agent). Its `text` is what was typed, and its `observation` the screen from the line the input
was typed on (the prompt and the echoed command) down to the line the next input is typed on.
Output before the first input (a banner, a first prompt) is a `system` step of its own when it
shows anything besides the prompt. A raw log (`agent.log`: the same bytes, no timing, no input
events) is split at lines that look like a shell prompt followed by a command instead.

Read lazily and bounded: the file is read a line at a time (a line over `MAX_LINE_BYTES` is an
error, never read whole), and a step is yielded as soon as the next input starts. pyte renders
about 0.3 MB a second, so a step's output is played only up to `HEAD_CHARS`; the rest is skipped
unparsed except for its last `TAIL_BYTES`, played on a fresh screen, and the observation says
how much was cut between the two.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import pyte

from tui_ledger.text.textsafe import safe_text
from tui_ledger.trajectory.model import Step, TrajectoryError

MAX_LINE_BYTES = 4 * 1024 * 1024
"""The longest line of a recording read: asciinema writes an event per read of the terminal."""
HEAD_CHARS = 16 * 1024
"""A step's output played through the terminal from its start."""
TAIL_BYTES = 16 * 1024
"""Of a longer output, its end kept (as recorded) and played on a fresh screen."""
READ_BUFFER = 64 * 1024
"""Bytes read from the file at a time (the default 8 kB makes a large recording's read slower)."""
MAX_SIZE = 1000
"""The widest or tallest terminal a recording may declare."""
CONTINUATION_SECONDS = 0.05
"""Keys typed this soon after an input not ended by Enter continue it, even past its echo: tmux
hands a long `send-keys` over in pieces a fraction of a millisecond apart."""

# The harness's own suffix on every command it waits for (Terminal-Bench's TmuxSession).
_WAIT_SUFFIX = re.compile(r";\s*tmux wait -S done\s*$")
# An event's time and kind at the start of its line, read without parsing the line: inside a
# JSON string every quote is escaped, so `[1.5, "o",` here can only be the event itself.
_EVENT_HEAD = re.compile(rb'^\s*\[\s*(-?[0-9][0-9.eE+-]*)\s*,\s*"([a-z])"\s*,')
# A shell prompt with a command after it: `root@3f2a:/app# ls -la`, `user@host:~/x$ make`,
# `(venv) root@3f2a:/app# python -m agent` (an activated virtual environment).
_PROMPT_COMMAND = re.compile(r"^(?:\([\w.-]+\) )?[\w.-]+@[\w.-]+:[^\s#$]*[#$] (\S.*)$")
# What a raw log line looks like to the prompt test: escape sequences and CRs taken out.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b")
_NOT_FOUND = re.compile(r"^(?:(?:ba|z|da)?sh: )?(?:line \d+: )?\S+: (?:command )?not found$")


def clean_lines(text: str) -> str:
    """Text as lines safe to show: tabs expanded, every control character made visible."""
    return "\n".join(safe_text(line.expandtabs(8)) for line in text.split("\n"))


def typed_text(keys: str) -> str:
    """What was typed, as people write it: Enter dropped, a lone control key as `C-d`."""
    if len(keys) == 1 and (ord(keys) < 32 and keys not in "\r\n\t"):
        return f"C-{chr(ord(keys) + 96)}"
    if keys == "\x7f":
        return "BSpace"
    if keys in ("\r", "\n", "\r\n"):
        return "Enter"
    text = keys[:-1] if keys.endswith(("\r", "\n")) else keys
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return clean_lines(_WAIT_SUFFIX.sub("", text))


def failed(observation: str, typed: str = "") -> bool:
    """Whether the output shows, beyond doubt, that the command failed.

    Only two shapes count: the shell saying the command was not found (in the first lines of
    its output, after the command as echoed, however many rows it wrapped over), and a Python
    traceback that is the last thing printed (the command died of it). A traceback the command
    printed and went on from, or an error word in a log, does not.
    """
    lines = [line.rstrip() for line in observation.split("\n")]
    start = _after_echo(lines, typed)
    for line in lines[start : start + 3]:
        if _NOT_FOUND.match(line.strip()):
            return True
    tail = [line for line in lines[-30:] if line.strip()]
    if _TRACEBACK not in tail:
        return False
    after = tail[len(tail) - 1 - tail[::-1].index(_TRACEBACK) + 1 :]
    # The traceback's own frames, then its exception, then at most the next prompt.
    ends = [i for i, line in enumerate(after) if _EXCEPTION_LINE.match(line)]
    return bool(ends) and len(after) - ends[-1] <= 2


def _after_echo(lines: list[str], typed: str) -> int:
    """The first line after the typed command's echo (which may wrap over several rows)."""
    last = typed.strip().split("\n")[-1].replace(" ", "")[-40:]
    if last:
        echoed = ""
        for number, line in enumerate(lines[:50]):
            echoed += line.replace(" ", "")
            if last in echoed:
                return number + 1
    return 1


class _Screen(pyte.Screen):
    """A pyte screen that keeps the current step's lines as they scroll off or are cleared."""

    def __init__(self, columns: int, lines: int) -> None:
        super().__init__(columns, lines)
        self.mark = 0  # the first row that belongs to the current step
        self.kept: list[str] = []  # the step's rows gone from the screen, in order

    def row(self, y: int) -> str:
        line = self.buffer[y]
        return "".join(line[x].data for x in range(self.columns)).rstrip()

    def last_row(self) -> int:
        """The last row showing anything, -1 for a blank screen."""
        for y in range(self.lines - 1, -1, -1):
            if y in self.buffer and self.row(y):
                return y
        return -1

    def index(self) -> None:
        top, bottom = self.margins or pyte.screens.Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0:
            if self.mark == 0:
                self.kept.append(self.row(0))
            else:
                self.mark -= 1
        super().index()

    def erase_in_display(self, how: int = 0, *args: Any, **kwargs: Any) -> None:
        # A clear (`ESC[2J`, or `ESC[H ESC[J` from the top corner) wipes what the step printed:
        # keep it first. A partial erase (a progress bar redrawn) is left to act.
        if how in (2, 3) or (how == 0 and self.cursor.y == 0 and self.cursor.x == 0):
            self.keep_rows(self.last_row() + 1)
            self.mark = self.cursor.y
        super().erase_in_display(how, *args, **kwargs)

    def keep_rows(self, end: int) -> None:
        """Rows from the mark up to `end` (exclusive) kept as the step's, and the mark past them."""
        self.kept.extend(self.row(y) for y in range(self.mark, end))
        self.mark = max(self.mark, end)

    def take(self, end: int) -> list[str]:
        """The step's lines up to row `end` (exclusive); the next step starts at `end`."""
        self.keep_rows(end)
        lines, self.kept = self.kept, []
        self.mark = max(end, 0)
        return lines


@dataclass
class _Pending:
    """A step being played: what was typed and when, and its output so far."""

    source: str
    text: str
    timestamp: str | None
    keys: str = ""
    """What was typed, as recorded."""
    typed_at: float | None = None
    """When the last of the keys was typed (seconds into the recording)."""
    output_seen: bool = False
    head: list[str] | None = None
    """The lines of the output's head, once it has filled and been taken off the screen."""
    played: int = 0
    skipped: int = 0
    """Bytes (as recorded) of output past the head."""
    mid_line: bool = False
    """The head ends inside a line, so its continuation in the tail is not whole."""
    tail: deque[bytes] = field(default_factory=deque)
    tail_bytes: int = 0


class Player:
    """A terminal session played step by step (see the module docstring)."""

    def __init__(self, path: Path, columns: int, lines: int, start: float | None) -> None:
        self.path = path
        self.columns = columns
        self.lines = lines
        self.start = start
        self.screen = _Screen(columns, lines)
        self.stream = pyte.Stream(self.screen)
        self.pending = _Pending("system", "", self._moment(0.0))
        self.index = 0

    def _moment(self, seconds: float | None) -> str | None:
        if self.start is None or seconds is None:
            return None
        try:
            return datetime.fromtimestamp(self.start + seconds, timezone.utc).isoformat()
        except (OverflowError, OSError, ValueError):
            return None

    def output(self, text: str) -> None:
        """Output played while the step's head lasts (the rest is kept raw by `skip`)."""
        self.pending.output_seen = True
        room = HEAD_CHARS - self.pending.played
        if room <= 0:
            return
        if len(text) > room:
            # Cut at the end of a line where the event has one, so no line is split.
            room = text.rfind("\n", 0, room) + 1 or room
            self.pending.mid_line = not text[:room].endswith("\n")
        self.stream.feed(text[:room])
        self.pending.played += min(len(text), room)
        if len(text) >= room:
            self._head_full()
            if len(text) > room:
                self.skip(json.dumps(text[room:][-2 * TAIL_BYTES :]).encode(), len(text) - room)

    def _head_full(self) -> None:
        """The step's head is played: its lines kept, the screen wiped for its tail."""
        self.pending.head = self.screen.take(self.screen.last_row() + 1)
        self.pending.played = HEAD_CHARS

    def skip(self, raw: bytes, size: int | None = None) -> None:
        """Output past the head (`size` long, else the raw piece's length): counted, and its
        end kept raw for the tail."""
        pending = self.pending
        pending.output_seen = True
        pending.skipped += len(raw) if size is None else size
        pending.tail.append(raw)
        pending.tail_bytes += len(raw)
        while pending.tail_bytes - len(pending.tail[0]) >= TAIL_BYTES:
            pending.tail_bytes -= len(pending.tail.popleft())
            pending.mid_line = True

    @property
    def skipping(self) -> bool:
        return self.pending.played >= HEAD_CHARS

    def step_at(self, keys: str, seconds: float | None) -> Step | None:
        """Start a step (`keys` typed at `seconds`); returns the one it ends, if it shows any.

        Keys that continue an input not yet ended by Enter, with nothing printed since, are the
        same input: the terminal hands a long `send-keys` over in several reads. So are keys
        typed within `CONTINUATION_SECONDS` of an input not ended by a carriage return, its
        echo printed between the pieces (a piece may end inside the text, or at a newline in it).
        """
        pending = self.pending
        unended = pending.keys and not pending.keys.endswith(("\r", "\n"))
        soon = (
            seconds is not None
            and pending.typed_at is not None
            and 0 <= seconds - pending.typed_at <= CONTINUATION_SECONDS
        )
        continues = (unended and not pending.output_seen) or (
            soon and pending.keys and not pending.keys.endswith("\r")
        )
        if pending.source == "agent" and continues:
            pending.keys += keys
            pending.text = typed_text(pending.keys)
            pending.typed_at = seconds
            return None
        finished = self._finish(last=False)
        self.pending = _Pending(
            "agent", typed_text(keys), self._moment(seconds), keys=keys, typed_at=seconds
        )
        return finished

    def end(self, broken: str | None = None) -> Step | None:
        """The last step, with the rest of the screen; `broken` says why it stops early."""
        step = self._finish(last=True, broken=broken)
        self.pending = _Pending("system", "", None)
        return step

    def _finish(self, *, last: bool, broken: str | None = None) -> Step | None:
        """The pending step with its output: down to the row the next input is typed on (the
        next step's), or for the last step down to the last row showing anything."""
        pending = self.pending
        lines = [] if pending.head is None else pending.head
        if pending.skipped:
            trimmed = self._fresh_screen(pending.tail, pending.mid_line)
            cut = pending.skipped - pending.tail_bytes + trimmed
            lines = lines + ([_cut_note(cut)] if cut > 0 else [])
        end = self.screen.last_row() + 1 if last else self.screen.cursor.y
        lines = lines + self.screen.take(end)
        if broken is not None:
            lines.append(f"[{broken}]")
        observation = clean_lines("\n".join(lines).rstrip("\n")) if lines else None
        # Output before the first input: a step only when it shows more than a prompt.
        before_input = pending.source == "system" and not pending.text
        if before_input and (observation is None or not observation.strip()):
            return None
        self.index += 1
        return Step(
            index=self.index,
            source=pending.source,  # type: ignore[arg-type]
            text=pending.text,
            observation=observation,
            timestamp=pending.timestamp,
            error=observation is not None and failed(observation, pending.text),
        )

    def _fresh_screen(self, tail: deque[bytes], mid_line: bool) -> int:
        """The kept end of a long output played on a fresh screen (the old one is stale);
        returns how much of the kept end was left out to start at a whole line."""
        self.screen = _Screen(self.columns, self.lines)
        self.stream = pyte.Stream(self.screen)
        kept = "".join(_event_text(raw) for raw in tail)
        text = kept
        if mid_line or len(text) > TAIL_BYTES:
            # The kept end starts inside a line: from its first whole line.
            text = text[-TAIL_BYTES:]
            text = text[text.find("\n") + 1 :]
        self.stream.feed(text)
        return len(kept) - len(text)


def _cut_note(skipped: int) -> str:
    size = f"{skipped / 1_000_000:.1f} MB" if skipped >= 100_000 else f"{skipped / 1000:.0f} kB"
    return f"[… about {size} of output cut here; its last lines follow …]"


def _event_text(raw: bytes) -> str:
    """The text of a kept raw piece: an event's line, or a JSON string already cut out."""
    try:
        value = json.loads(raw)
    except ValueError:
        return ""
    if isinstance(value, list) and len(value) >= 3 and isinstance(value[2], str):
        return value[2]
    return value if isinstance(value, str) else ""


def read_line(handle: IO[bytes], path: Path, number: int) -> bytes | None:
    """One line, without its newline; None at the end. A line too long is an error."""
    line = handle.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_LINE_BYTES:
        raise TrajectoryError(
            f"{path}: line {number} is longer than {MAX_LINE_BYTES // 1_048_576} MB "
            "(not an asciicast event)"
        )
    return line.rstrip(b"\r\n")


def _text(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TrajectoryError(
            f"{path}: line {number} holds bytes that are not UTF-8 text (a binary file?)"
        ) from None


def read_header(handle: IO[bytes], path: Path) -> tuple[int, int, float | None]:
    """The recording's columns, rows and start (epoch seconds), from its first line."""
    raw = read_line(handle, path, 1)
    if raw is None or not raw.strip():
        raise TrajectoryError(f"{path}: empty, no asciicast header")
    try:
        header = json.loads(_text(raw, path, 1))
    except ValueError:
        raise TrajectoryError(f"{path}: line 1 is not an asciicast header (not JSON)") from None
    if not isinstance(header, dict) or header.get("version") != 2:
        version = header.get("version") if isinstance(header, dict) else None
        raise TrajectoryError(f"{path}: line 1 is not an asciicast v2 header (version {version!r})")
    size: list[int] = []
    for name in ("width", "height"):
        value = header.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= MAX_SIZE:
            raise TrajectoryError(f"{path}: the header's {name} is {value!r}, not 1 to {MAX_SIZE}")
        size.append(value)
    start = header.get("timestamp")
    if isinstance(start, bool) or not isinstance(start, int | float):
        return size[0], size[1], None
    return size[0], size[1], float(start)


def play_cast(path: Path) -> Iterator[Step]:
    """The steps of an asciinema v2 recording, yielded as it plays.

    A recording that breaks (a line cut off, not JSON, not UTF-8) yields the steps read so far,
    the one in progress included, then raises TrajectoryError naming the line.
    """
    try:
        handle = path.open("rb", buffering=READ_BUFFER)
    except OSError as error:
        raise TrajectoryError(f"{path}: cannot be read ({error.strerror or error})") from None
    with handle:
        columns, rows, start = read_header(handle, path)
        player = Player(path, columns, rows, start)
        number = 1
        while True:
            number += 1
            try:
                raw = read_line(handle, path, number)
                if raw is None:
                    break
                event = _event(player, raw, path, number)
            except TrajectoryError as error:
                step = player.end(broken="the recording breaks here")
                if step is not None:
                    yield step
                raise error from None
            if event is None:
                continue
            seconds, keys = event
            step = player.step_at(keys, seconds)
            if step is not None:
                yield step
        step = player.end()
        if step is not None:
            yield step


def _event(player: Player, raw: bytes, path: Path, number: int) -> tuple[float, str] | None:
    """Plays one event line; returns (seconds, keys) for an input event, which starts a step."""
    if not raw.strip():
        return None
    head = _EVENT_HEAD.match(raw)
    if head is None:
        _text(raw, path, number)
        raise TrajectoryError(f"{path}: line {number} is not an asciicast event")
    kind = head.group(2)
    if kind == b"o" and player.skipping:
        # Past the step's head: checked for shape and text, kept raw, never parsed.
        _text(raw, path, number)
        if not raw.rstrip().endswith(b"]"):
            raise TrajectoryError(f"{path}: line {number} is cut off (an incomplete event)")
        player.skip(raw)
        return None
    try:
        event = json.loads(_text(raw, path, number))
    except ValueError:
        raise TrajectoryError(
            f"{path}: line {number} is cut off or not JSON (an incomplete event)"
        ) from None
    if not (
        isinstance(event, list)
        and len(event) >= 3
        and isinstance(event[0], int | float)
        and isinstance(event[2], str)
    ):
        raise TrajectoryError(f"{path}: line {number} is not an asciicast event")
    if kind == b"o":
        player.output(event[2])
    elif kind == b"i":
        return float(event[0]), event[2]
    elif kind == b"r":
        _resize(player, event[2])
    return None


def _resize(player: Player, size: str) -> None:
    """A resize event (`"120x40"`): the terminal takes the new size."""
    columns, _, rows = size.partition("x")
    if not (columns.isdigit() and rows.isdigit()):
        return
    if 0 < int(columns) <= MAX_SIZE and 0 < int(rows) <= MAX_SIZE:
        player.columns, player.lines = int(columns), int(rows)
        player.screen.resize(int(rows), int(columns))


def play_log(path: Path, columns: int = 160, rows: int = 40) -> Iterator[Step]:
    """The steps of a raw terminal log (no timing, no input events), split at prompt lines.

    A line that, without its escape sequences, reads `user@host:dir# command` starts a step
    whose text is the command. Lines are played as they are read, bounded like a recording's
    (a line over `MAX_LINE_BYTES` is played in pieces).
    """
    try:
        handle = path.open("rb", buffering=READ_BUFFER)
    except OSError as error:
        raise TrajectoryError(f"{path}: cannot be read ({error.strerror or error})") from None
    with handle:
        player = Player(path, columns, rows, None)
        number = 0
        while True:
            number += 1
            raw = handle.readline(MAX_LINE_BYTES)
            if not raw:
                break
            # A raw terminal log holds whatever programs printed (a binary file cat'ed):
            # bytes that are not UTF-8 are shown as U+FFFD, as a terminal shows them.
            line = raw.decode("utf-8", errors="replace")
            command = _prompt_command(line)
            if command is not None:
                step = player.step_at(command + "\r", None)
                if step is not None:
                    yield step
            if player.skipping:
                player.skip(json.dumps(line).encode())
            else:
                player.output(line)
        step = player.end()
        if step is not None:
            yield step


def _prompt_command(line: str) -> str | None:
    plain = _ANSI.sub("", line).rstrip("\r\n").split("\r")[-1]
    found = _PROMPT_COMMAND.match(plain)
    return found.group(1) if found else None
