"""The attempt screen (Enter or `o` on an attempt): one test per key, and how it reads a log.

The logs are small JSON files named by the ledger's `trace` column, read by the test's own reader
(`tests/trajectory_reader.py`, put in place of the ATIF reader), so these tests depend on no
harness's reader.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.pilot import Pilot

from tests import trajectory_reader
from tests.pilot_helpers import press, screen_text, settle, wait_until
from tui_ledger import trajectory
from tui_ledger.trajectory import Opened, Step, ToolCall, Verdict
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.screens.attempt_screen import AttemptHelpScreen, AttemptScreen
from tui_ledger.tui.screens.attempt_text import files_text, fit_path, head_text
from tui_ledger.tui.screens.detail_screen import DetailScreen
from tui_ledger.tui.screens.screens import HelpScreen
from tui_ledger.tui.screens.step_view import StepScreen, safe_block, step_body

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _test_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(trajectory.READERS, "atif", trajectory_reader.MODULE)


def agent(text: str, tokens: int | None = None, **fields: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"source": "agent", "text": text, **fields}
    if tokens is not None:
        step["input_tokens"] = tokens - tokens // 10
        step["output_tokens"] = tokens // 10
        step["tokens"] = tokens
    return step


def tool(observation: str, *, error: bool = False) -> dict[str, Any]:
    return {"source": "tool", "text": "", "observation": observation, "error": error}


STEPS = [
    {"source": "user", "text": "Fix the login bug.", "timestamp": "2025-01-01T10:00:00Z"},
    agent("Looking at the code", 300, timestamp="2025-01-01T10:00:05Z"),
    agent(
        "",
        500,
        tool_calls=[{"name": "bash", "arguments": '{"cmd": "grep -rn needle src"}'}],
        timestamp="2025-01-01T10:00:09Z",
    ),
    tool("src/login.py:3: token = None", error=True),
    agent("The token is never set", 2000),
    tool("all good: the NEEDLE is threaded"),
    agent("Running the tests", 200),
    tool("FAILED test_login", error=True),
    agent("Done", 100, agent="helper"),
]
TRACE = {
    "instruction": "Fix the failing login test.\nDo not change the tests.",
    "output": "2 passed, 1 failed\nFAILED test_login",
    "tests": [["test_b", "passed"], ["test_login", "failed"], ["test_a", "passed"]],
    "steps": STEPS,
}
STEPS_TOKENS = 3100


def attempts(count: int = 6) -> list[dict[str, Any]]:
    """`count` attempts, alternating lean and steady, each with its own trace; the first's
    tokens equal its steps'; the others' differ."""
    made = []
    for number in range(count):
        trace = dict(TRACE, steps=[*STEPS, agent(f"attempt {number} ends", 10 + number)])
        tokens = STEPS_TOKENS + 10 + number + (0 if number == 0 else 7)
        made.append(
            {
                "workflow": "lean" if number % 2 == 0 else "steady",
                "task": f"t{number}",
                "tokens": tokens,
                "input_tokens": tokens - 110,
                "output_tokens": 110,
                "passed": number % 3 == 0,
                "trace": trace,
            }
        )
    return made


def ledger(tmp_path: Path, made: list[dict[str, Any]] | None = None) -> str:
    return str(trajectory_reader.write_attempts(tmp_path, attempts() if made is None else made))


def attempt_screen(app: LedgerApp) -> AttemptScreen:
    screen = app.screen
    assert isinstance(screen, AttemptScreen), type(screen).__name__
    return screen


async def open_attempt(pilot: Pilot[Any], *keys: str) -> AttemptScreen:
    """Press `keys` (Enter by default) and wait until the attempt's log is read."""
    await press(pilot, *(keys or ("enter",)))
    screen = attempt_screen(pilot.app)  # type: ignore[arg-type]
    await wait_until(pilot, lambda: screen.ended, "the log read to its end")
    return screen


def current(screen: AttemptScreen) -> int:
    step = screen.steps.current_step()
    assert step is not None
    return step.index


# --------------------------------------------------------------------------- Enter, o


@pytest.mark.parametrize("key", ["enter", "o"])
async def test_enter_and_o_open_the_attempt_header_verdict_steps(key: str, tmp_path: Path) -> None:
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot, key)
        text = screen_text(app)
        assert "lean · t0 · ✔ passed" in text and "attempt 1 of 6 in view" in text
        assert "tokens 3,110 (input 3,000 · output 110)" in text
        assert "read traces/1.json" in text
        # Each test by name, in the harness's order (not sorted), failed ones marked.
        assert "tests 2/3  ✔ test_b ✘ test_login ✔ test_a" in text
        assert "grader output (2 lines)" in text and "instruction (2 lines)" in text
        assert "Do not change the tests" not in text  # folded
        assert "✔ equal: the steps' tokens add up to the ledger's 3,110" in text
        assert screen.steps.row_count == 10
        assert "Looking at the code" in text and "bash(" in text  # Step.summary()
        assert "+0:09" in text  # time since the first step
        assert "↳agent Done" in text  # a sub-agent's step


async def test_the_instruction_unfolds(tmp_path: Path) -> None:
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        title = screen.query_one("#attempt-instruction CollapsibleTitle")
        await pilot.click(title)
        await settle(pilot)
        assert "Do not change the tests." in screen_text(app)


async def test_tokens_that_do_not_add_up_say_by_how_much(tmp_path: Path) -> None:
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "j")
        await open_attempt(pilot)
        assert "differs by -7: the steps add up to 3,111, the ledger says 3,118" in (
            screen_text(app)
        )


async def test_steps_without_tokens_say_not_recorded_with_the_readers_notes(
    tmp_path: Path,
) -> None:
    trace = {"steps": [{"source": "agent", "text": "hi"}], "notes": ["usage was never written"]}
    made = [{"workflow": "w", "task": "t", "tokens": 5, "passed": True, "trace": trace}]
    app = LedgerApp([ledger(tmp_path, made)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_attempt(pilot)
        text = screen_text(app)
        assert "not recorded per step" in text and "usage was never written" in text
        # The step's line: no tokens, no running total (a 0 would read as nothing spent).
        (line,) = [line for line in text.splitlines() if " hi " in line]
        assert line.split()[-3:] == ["—", "—", "—"], line


# --------------------------------------------------------------------------- Enter on a step


async def test_enter_expands_a_step_and_enter_or_esc_closes_it(tmp_path: Path) -> None:
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        await press(pilot, "j", "j")
        await press(pilot, "enter")
        assert isinstance(app.screen, StepScreen)
        text = screen_text(app)
        assert "step 3 · agent · 500 tokens (input 450 · output 50)" in text
        assert "▶ tool call bash" in text and '"cmd": "grep -rn needle src"' in text
        await press(pilot, "enter")
        assert app.screen is screen
        await press(pilot, "j", "enter")
        text = screen_text(app)
        assert "◀ observation" in text and "src/login.py:3: token = None" in text
        assert "✘ error" in text
        await press(pilot, "escape")
        assert app.screen is screen


# --------------------------------------------------------------------------- / n N


async def test_slash_searches_text_tool_calls_and_observations_n_and_shift_n(
    tmp_path: Path,
) -> None:
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        await press(pilot, "slash")
        assert app.focused is screen.query_one("#step-search")
        await press(pilot, *"needle", "enter")
        assert current(screen) == 3  # in a tool call's arguments
        assert "2 matches for needle" in screen_text(app)
        await press(pilot, "n")
        assert current(screen) == 6  # in an observation, another case
        await press(pilot, "n")
        assert current(screen) == 3  # round again
        await press(pilot, "N")
        assert current(screen) == 6
        await press(pilot, "enter")
        assert isinstance(app.screen, StepScreen)
        await press(pilot, "escape")
        # A search nothing matches leaves the cursor where it was, and says so.
        await press(pilot, "slash", "ctrl+u", *"absent", "enter")
        assert current(screen) == 6
        assert "0 matches for absent" in screen_text(app)
        # Esc in the search box leaves the box, not the screen.
        await press(pilot, "slash", "escape")
        assert app.screen is screen and app.focused is screen.steps


# --------------------------------------------------------------------------- e


async def test_e_jumps_to_the_next_failed_step(tmp_path: Path) -> None:
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        assert "2 errors (e)" in screen_text(app)
        await press(pilot, "e")
        assert current(screen) == 4
        await press(pilot, "e")
        assert current(screen) == 8
        await press(pilot, "e")
        assert current(screen) == 4


# --------------------------------------------------------------------------- c


async def test_c_orders_the_steps_costliest_first_and_back(tmp_path: Path) -> None:
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        await press(pilot, "j")
        assert current(screen) == 2
        await press(pilot, "c")
        table = screen.steps
        assert [table.step_at(row).index for row in range(4)] == [5, 3, 2, 7]
        assert current(screen) == 2  # the cursor keeps its step
        assert "tokens ▼" in screen_text(app)
        await press(pilot, "home")
        assert current(screen) == 5
        await press(pilot, "c")
        assert [table.step_at(row).index for row in range(3)] == [1, 2, 3]
        assert current(screen) == 5


# --------------------------------------------------------------------------- [ ]


async def test_brackets_walk_the_attempts_of_the_view_and_the_ledger_follows(
    tmp_path: Path,
) -> None:
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"steady", "enter")  # t1, t3, t5
        assert app.table.row_count == 3
        screen = await open_attempt(pilot)
        assert "steady · t1" in screen_text(app) and "attempt 1 of 3 in view" in screen_text(app)
        await press(pilot, "right_square_bracket")
        await wait_until(pilot, lambda: screen.ended, "the next attempt read")
        text = screen_text(app)
        assert "steady · t3" in text and "attempt 2 of 3 in view" in text
        assert "attempt 3 ends" in text and "attempt 1 ends" not in text
        assert app.table.cursor_row == 1
        await press(pilot, "right_square_bracket")
        await wait_until(pilot, lambda: screen.ended, "the last attempt read")
        await press(pilot, "right_square_bracket")  # past the end: it stays
        assert "steady · t5" in screen_text(app)
        await press(pilot, "left_square_bracket", "left_square_bracket")
        await wait_until(pilot, lambda: screen.ended, "the first attempt again")
        assert "steady · t1" in screen_text(app) and app.table.cursor_row == 0
        await press(pilot, "escape")
        assert app.on_main_screen and app.filter_text == "steady"


# --------------------------------------------------------------------------- Esc


async def test_esc_returns_to_the_ledger_exactly_where_it_was(tmp_path: Path) -> None:
    made = attempts(120)
    app = LedgerApp([ledger(tmp_path, made)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"lean", "enter", "t")
        await press(pilot, "pagedown", "j", "j", "l", "l")
        table = app.table
        where = (table.cursor_row, table.cursor_column, table.scroll_offset, table.row_count)
        before = screen_text(app)
        await open_attempt(pilot)
        await press(pilot, "j", "c", "e", "slash", *"needle", "enter")
        await press(pilot, "escape")
        assert app.on_main_screen
        assert (table.cursor_row, table.cursor_column, table.scroll_offset, table.row_count) == (
            where
        )
        assert app.filter_text == "lean" and app.view == "drop"
        assert app.focused is table
        assert screen_text(app) == before


# --------------------------------------------------------------------------- i, ?


async def test_i_shows_the_rows_fields_and_question_mark_the_screens_keys(
    tmp_path: Path,
) -> None:
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        await press(pilot, "i")
        assert isinstance(app.screen, DetailScreen)
        text = screen_text(app)
        assert "traces/1.json" in text and "workflow" in text and "3,110" in text
        await press(pilot, "escape")
        assert app.screen is screen
        await press(pilot, "question_mark")
        assert isinstance(app.screen, AttemptHelpScreen)
        text = screen_text(app)
        for needle in ("Enter", "/", "n ", "N ", "e ", "c ", "[", "]", "i ", "Esc"):
            assert needle in text, needle
        assert "The next step that failed" in text
        await press(pilot, "question_mark")
        assert app.screen is screen
        await press(pilot, "q")  # q leaves the attempt, not the app
        assert app.on_main_screen and app.is_running


async def test_the_ledgers_help_and_palette_know_the_attempt_screen(tmp_path: Path) -> None:
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert "The attempt screen (Enter on an attempt)" in HelpScreen.plain()
        assert "The next step that failed" in HelpScreen.plain()
        await press(pilot, "escape")
        screen = await open_attempt(pilot)
        # The footer shows the screen's keys, not the ledger's.
        footer = screen_text(app).splitlines()[-1]
        assert "next error" in footer and "filter" not in footer
        await press(pilot, "ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await press(pilot, *"failed")
        await wait_until(
            pilot, lambda: "Next step that failed" in screen_text(app), "the palette's offer"
        )
        await press(pilot, "enter")
        await wait_until(pilot, lambda: app.screen is screen, "the palette closed")
        await wait_until(pilot, lambda: current(screen) == 4, "the palette ran `e`")


# --------------------------------------------------------------------------- logs that break


async def test_a_log_that_breaks_mid_way_shows_its_steps_and_one_line(tmp_path: Path) -> None:
    trace = dict(TRACE, break_after=3)
    made = [{"workflow": "w", "task": "t", "tokens": 5, "passed": False, "trace": trace}]
    app = LedgerApp([ledger(tmp_path, made)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        assert screen.steps.row_count == 3
        text = screen_text(app)
        assert "✘ 1.json: step 4 is not valid JSON (after 3 steps)" in text
        assert "the log broke: no verdict on the sum" in text
        await press(pilot, "escape")
        assert app.on_main_screen and app.is_running


async def test_a_trace_that_cannot_be_read_is_one_line(tmp_path: Path) -> None:
    made = [{"workflow": "w", "task": "t", "tokens": 5, "passed": False, "trace": TRACE}]
    path = ledger(tmp_path, made)
    (tmp_path / "traces" / "1.json").write_text("{not json")
    app = LedgerApp([path])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_attempt(pilot)
        assert "✘ 1.json: cannot read it" in screen_text(app)
        assert "workflow" in screen_text(app)  # the row's fields instead of steps


async def test_a_readers_bug_is_one_line_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(row: object) -> Opened:
        raise KeyError("steps")

    monkeypatch.setattr(trajectory, "open_attempt", broken)
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_attempt(pilot)
        assert "could not read this attempt's log: KeyError: 'steps'" in screen_text(app)


async def test_notes_a_reader_adds_once_its_steps_are_read_are_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Readers (ATIF's final_metrics, Claude Code, Codex) say what they found about the tokens
    # once every step is read: the note must not be lost for having come after the header.
    def late_notes(row: object) -> Opened:
        notes: list[str] = []

        def steps() -> Iterator[Step]:
            yield Step(index=1, source="agent", text="hi", tokens=5)
            notes.append("final_metrics records 9 more")

        return Opened(files=[], instruction=None, verdict=Verdict(), steps=steps(), notes=notes)

    monkeypatch.setattr(trajectory, "open_attempt", late_notes)
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_attempt(pilot)
        assert "final_metrics records 9 more" in screen_text(app)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_many_notes_never_hide_the_count_of_steps(
    size: tuple[int, int], tmp_path: Path
) -> None:
    note = "a long note about how this reader counted the tokens of the steps " * 2
    trace = {"steps": [agent("hi", 5)], "notes": [f"{n}: {note}" for n in range(4)]}
    made = [{"workflow": "w", "task": "t", "tokens": 5, "passed": True, "trace": trace}]
    app = LedgerApp([ledger(tmp_path, made)])
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await open_attempt(pilot)
        text = screen_text(app)
        assert "✔ equal" in text and "4 notes on the tokens" in text and "1 step" in text
        # Folded on a short terminal (Enter on the fold opens it), open on a tall one.
        assert ("0: a long note" in text) == (size[1] >= 40)


async def test_a_folder_opened_from_elsewhere_finds_its_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The loader names a folder's files below it (`ledger.csv`); the reader gets a path it can
    # open from the working directory (`trajectory.openable`).
    runs = tmp_path / "runs"
    runs.mkdir()
    path = Path(ledger(tmp_path, attempts(2)))
    moved = runs / "ledger.csv"
    moved.write_text(path.read_text().replace(",traces/", ",../traces/"))
    path.unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    app = LedgerApp([str(runs)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        assert screen.error is None and screen.steps.row_count == 10
        assert "row from ledger.csv" not in screen_text(app)


# --------------------------------------------------------------------------- no steps


async def test_a_log_without_steps_says_so_and_shows_the_rows_fields(tmp_path: Path) -> None:
    made = [
        {"workflow": "w", "task": "empty", "tokens": 5, "passed": True, "trace": {"steps": []}},
        {"workflow": "w", "task": "none", "tokens": 7, "passed": True, "trace": None},
    ]
    app = LedgerApp([ledger(tmp_path, made)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        text = screen_text(app)
        assert "This log keeps no steps." in text
        assert not screen.steps.display
        assert "passed" in text and "trace" in text and "traces/1.json" in text  # the fields
        await press(pilot, "right_square_bracket")
        await wait_until(pilot, lambda: screen.ended, "the second attempt read")
        text = screen_text(app)
        assert "No log found for this attempt: looked for a `trace` column" in text
        assert "none" in text


# --------------------------------------------------------------------------- reading


async def test_the_first_steps_show_while_the_log_is_read_and_esc_stops_the_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    closed = threading.Event()

    def slow_steps() -> Iterator[Step]:
        try:
            yield Step(1, "user", "the first step")
            release.wait(30)
            for index in range(2, 50_000):
                yield Step(index, "agent", f"step {index}", tokens=1)
        finally:
            closed.set()

    def opening(row: object) -> Opened:
        return Opened(files=["big.json"], instruction=None, verdict=Verdict(), steps=slow_steps())

    monkeypatch.setattr(trajectory, "open_attempt", opening)
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        deadline = time.monotonic() + 60
        while "the first step" not in screen_text(app):
            assert time.monotonic() < deadline, "the first step never showed"
            await pilot.pause(0.02)
        screen = attempt_screen(app)
        assert not screen.ended and "reading… 1 step so far" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.on_main_screen
        release.set()
        while not closed.is_set():  # the worker stopped, and closed the log
            assert time.monotonic() < deadline, "the reading never stopped"
            await asyncio.sleep(0.02)
        await settle(pilot)


async def test_thousands_of_steps_read_in_batches(tmp_path: Path) -> None:
    trace = {"steps": [agent(f"step {i}", 3) for i in range(5000)]}
    made = [{"workflow": "w", "task": "t", "tokens": 15000, "passed": True, "trace": trace}]
    app = LedgerApp([ledger(tmp_path, made)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        assert screen.steps.row_count == 5000
        assert "✔ equal" in screen_text(app)
        await press(pilot, "end")
        assert "step 4999" in screen_text(app)


# --------------------------------------------------------------------------- terminal safety


async def test_escape_sequences_in_a_log_never_reach_the_screen(tmp_path: Path) -> None:
    hostile = "\x1b[31mred\x1b[0m \x1b]52;c;aGk=\x07 [bold]x[/] \u202etxt\rback"
    trace = {
        "instruction": hostile,
        "output": hostile,
        "tests": [[hostile, "failed"]],
        "steps": [
            agent(hostile, 5, tool_calls=[{"name": hostile, "arguments": hostile}]),
            tool(hostile + "\n" + hostile),
        ],
    }
    made = [{"workflow": "w", "task": "t", "tokens": 5, "passed": False, "trace": trace}]
    app = LedgerApp([ledger(tmp_path, made)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        for fold in ("#attempt-output", "#attempt-instruction"):
            await pilot.click(screen.query_one(f"{fold} CollapsibleTitle"))
            await settle(pilot)
        shown = [screen_text(app)]
        for _ in range(2):
            await press(pilot, "enter")
            shown.append(screen_text(app))
            await press(pilot, "escape", "j")
        for text in shown:
            assert "\\x1b[31mred" in text and "[bold]x[/]" in text and "<U+202E>" in text
            assert not any(ch in text for ch in "\x1b\x07\r\u202e"), repr(text[:200])


# --------------------------------------------------------------------------- sizes


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_it_fits_small_and_large_terminals(size: tuple[int, int], tmp_path: Path) -> None:
    app = LedgerApp([ledger(tmp_path)])
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = await open_attempt(pilot)
        lines = screen_text(app).splitlines()
        assert len(lines) == size[1]
        text = "\n".join(lines)
        assert "lean · t0" in text and "✔ equal" in text and "test_login" in text
        assert "# who" in text and "time" in text  # every column's title fits
        assert screen.steps.size.height >= 8  # the steps keep most of the screen
        assert "Looking at the code" in text and "+0:05" in text
        await press(pilot, "end")
        assert "Done" in screen_text(app) or "attempt 0 ends" in screen_text(app)


# --------------------------------------------------------------------------- snapshot


def test_attempt_screen_snapshot(snap_compare: object, tmp_path: Path) -> None:
    """The attempt screen at 120x40, the cursor on the first failed step (after `e`)."""
    app = LedgerApp([ledger(tmp_path)])

    async def opened(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await open_attempt(pilot)
        await press(pilot, "e")

    assert snap_compare(app, terminal_size=SIZE, run_before=opened)  # type: ignore[operator]


def test_a_long_part_of_a_step_shows_its_head_and_its_tail() -> None:
    text = "\n".join(f"line {number}" for number in range(1, 3001))
    shown = safe_block(text + "\x1b[2J", limit=1200).plain
    lines = shown.splitlines()
    assert lines[0] == "line 1" and lines[599] == "line 600"
    assert lines[600] == "… 1,800 lines not shown …"
    assert lines[601] == "line 2401" and lines[-1] == "line 3000\\x1b[2J"
    long = safe_block("x" * 10_000).plain
    assert long.startswith("x" * 2000 + " … (8,000 more characters)")


def test_a_long_folder_is_fitted_to_the_width_never_wrapped() -> None:
    folder = "/data/results/" + "a-long-run-name/" * 6 + "task.1-of-1.run"
    files = [f"{folder}/results.json", f"{folder}/sessions/agent.cast"]
    line = files_text(files, {}, width=80).plain
    assert len(line) <= 80, line
    assert line.startswith("read results.json, sessions/agent.cast in …/")
    assert line.endswith("/task.1-of-1.run")
    # Unfitted (no width known yet), or room enough: the whole path.
    assert files_text(files, {}).plain.endswith(" in " + folder)
    assert fit_path("/a/b/c", 80) == "/a/b/c"
    single = files_text([folder + "/trace.jsonl"], {}, width=60).plain
    assert len(single) <= 60 and single.endswith("/trace.jsonl"), single
    row = {"source": folder + "/results.jsonl", "line": 12_345}
    source = files_text(None, row, width=70).plain
    assert source.startswith("opening the log… ")
    where = files_text([], row, width=70).plain
    assert len(where) <= 70 and where.endswith("/results.jsonl, line 12,345"), where
    # A Spark engine names the row's file by its URI: shown as the path it names.
    spark_row = {"source": "file:///tmp/evals%20q3/demo.csv"}
    assert files_text([], spark_row, width=70).plain == "row from /tmp/evals q3/demo.csv"


def test_the_header_fits_a_narrow_terminal_on_one_line() -> None:
    row = {"workflow": "20250902_orchestrator_qwen-3-coder-480B", "task": "cron-broken-network"}
    row.update(outcome="error", tokens=66_862)
    wide = head_text(row, 4, 7, 120).plain.split("\n")[0]
    assert wide.endswith("attempt 5 of 7 in view") and row["workflow"] in wide
    narrow = head_text(row, 4, 7, 78).plain.split("\n")[0]
    assert len(narrow) <= 78 and narrow.endswith("   5/7"), narrow
    tight = head_text(row, 4, 7, 60).plain.split("\n")[0]
    assert len(tight) <= 60 and "error" in tight and "…" in tight, tight
    folder = "/r/" + "x" * 40 + "/" + "y" * 30
    few = files_text([folder + "/results.json", folder + "/sessions/agent.cast"], {}, width=60)
    assert few.plain == "read 2 files in …/" + "y" * 30, few.plain


def test_a_tool_calls_long_id_is_cut_to_one_short_line() -> None:
    signature = "call_7576__thought__" + "EjQKMgG+Pvb7YinyIEXgp9c5vqJLlLm83UMkfOjFY9yLK" * 20
    step = Step(index=2, source="agent", text="", tool_calls=(ToolCall("shot", "{}", signature),))
    lines = step_body(step).plain.split("\n")
    assert lines[0].startswith("▶ tool call shot  call_7576__thought__")
    assert len(lines[0]) <= len("▶ tool call shot  ") + 40 and lines[0].endswith("…")


def test_the_figures_line_breaks_between_values_never_inside_one() -> None:
    """Issue 56: at 80 columns `took 30m` ended one line and `00s` began the next."""
    row = {"workflow": "lean", "task": "t0", "outcome": "failed", "tokens": 1_234_567}
    row.update(input_tokens=1_000_000, cached_input_tokens=34_567, output_tokens=200_000)
    row.update(cost=12.5, duration_s=1800.0)
    one = head_text(row, 0, 6, 200).plain.split("\n")[1]
    assert one == (
        "tokens 1,234,567 (input 1,000,000 · cached input 34,567 · output 200,000)"
        " · cost $12.50 · took 30m 00s"
    ), one
    values = ["tokens 1,234,567", "(input 1,000,000", "cached input 34,567", "output 200,000)"]
    values += ["cost $12.50", "took 30m 00s"]
    for width in range(30, 100):
        lines = head_text(row, 0, 6, width).plain.split("\n")[1:]
        assert all(len(line) <= width for line in lines), (width, lines)
        pieces = [piece for line in lines for piece in line.replace(" (", " · (").split(" · ")]
        assert pieces == values, (width, lines)
