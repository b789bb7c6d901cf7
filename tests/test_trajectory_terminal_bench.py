"""Inside a Terminal-Bench 1.x attempt: its recording played as steps, its tests by name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.trajectory_fixtures import (
    PROMPT,
    cast_text,
    row_for,
    session,
    write_run_file,
    write_trial,
)
from tui_ledger.importers import get_importer
from tui_ledger.trajectory import (
    NOT_RECORDED,
    Step,
    TrajectoryError,
    open_attempt,
    read_attempt,
    tokens_match,
)
from tui_ledger.trajectory import terminal_bench as reader
from tui_ledger.trajectory.terminal_cast import HEAD_CHARS, MAX_LINE_BYTES

ESC = "\x1b"


def _steps(results: Path) -> list[Step]:
    return list(reader.open(row_for(results)).steps)


def test_a_trial_opens_with_its_instruction_tests_and_commands(tmp_path: Path) -> None:
    events = session(
        [
            ("ls", "notes.txt\n"),
            ("echo hello > hello.txt", ""),
            ("cat hello.txt", "hello\n"),
        ]
    )
    results = write_trial(
        tmp_path / "run",
        tests={"test_z_last_written_first": "passed", "test_a_second": "failed"},
        events=events,
        post_test="FAILED test_outputs.py::test_a_second\n===== 1 failed, 1 passed =====\n\n\n",
    )
    opened = reader.open(row_for(results))

    assert opened.instruction == "Write hello.txt containing 'hello'."
    # The file's order, not sorted.
    assert [(t.name, t.result) for t in opened.verdict.tests] == [
        ("test_z_last_written_first", "passed"),
        ("test_a_second", "failed"),
    ]
    assert [t.passed for t in opened.verdict.tests] == [True, False]
    assert opened.verdict.output == (
        "FAILED test_outputs.py::test_a_second\n===== 1 failed, 1 passed ====="
    )
    steps = list(opened.steps)
    assert [s.text for s in steps] == ["ls", "echo hello > hello.txt", "cat hello.txt"]
    assert [s.source for s in steps] == ["agent"] * 3
    assert [s.index for s in steps] == [1, 2, 3]
    # Each observation is the screen from the typed line down to the next prompt.
    assert steps[0].observation == f"{PROMPT}ls\nnotes.txt"
    assert steps[1].observation == f"{PROMPT}echo hello > hello.txt"
    assert steps[2].observation == f"{PROMPT}cat hello.txt\nhello\n{PROMPT.rstrip()}"
    # The recording's start plus the event's offset, in UTC.
    assert steps[0].timestamp == "2025-07-11T22:03:48+00:00"
    assert steps[2].timestamp == "2025-07-11T22:03:50+00:00"
    assert all(s.tokens is None and s.input_tokens is None for s in steps)
    assert tokens_match(steps, 1500) == (NOT_RECORDED, None)
    assert not any(s.error for s in steps)
    assert str(results) in opened.files
    assert any(f.endswith("agent.cast") for f in opened.files)
    assert any(f.endswith("post-test.txt") for f in opened.files)


def test_the_registry_opens_a_row_the_importer_wrote(tmp_path: Path) -> None:
    write_trial(tmp_path / "run", events=session([("pwd", "/app\n")]))
    frame = get_importer("terminal-bench").read(tmp_path / "run")
    row = frame.row(0, named=True)

    trajectory = read_attempt(row)

    assert [s.text for s in trajectory.steps] == ["pwd"]
    assert trajectory.steps[0].observation == f"{PROMPT}pwd\n/app\n{PROMPT.rstrip()}"
    assert [t.name for t in trajectory.verdict.tests] == ["test_hello_file"]


def test_the_harness_own_keystrokes_are_system_steps(tmp_path: Path) -> None:
    events = session(
        [
            ("clear", ""),
            ("source /installed-agent/setup-env.sh; tmux wait -S done", ""),
            ("mini -t 'Write hello.txt'; tmux wait -S done", "agent log line\n"),
            ("clear", ""),  # the agent's own clear, not the first input
            ("python3", ">>> "),
        ]
    )
    # The agent leaves Python with C-d; the harness ends the recording with C-d (`exit`).
    events += [(8.0, "i", "\x04"), (8.1, "o", "\r\n" + PROMPT)]
    events += [(9.0, "i", "\x04"), (9.1, "o", "\x1b[?2004l\r\r\nexit\r\n")]
    results = write_trial(tmp_path / "run", events=events, commands=[["mini -t 'x'", "Enter"]])
    opened = reader.open(row_for(results))
    steps = list(opened.steps)

    assert [(s.source, s.kind) for s in steps] == [
        ("system", "harness"),
        ("system", "harness"),
        ("agent", None),
        ("agent", None),
        ("agent", None),
        ("agent", None),
        ("system", "harness"),
    ]
    # The harness's wait suffix is its own plumbing, not what the agent asked for.
    assert steps[1].text == "source /installed-agent/setup-env.sh"
    assert steps[2].text == "mini -t 'Write hello.txt'"
    assert [s.text for s in steps[3:]] == ["clear", "python3", "C-d", "C-d"]
    # The agent was typed into the terminal, so there is no note that it was not.
    assert opened.notes == []


def test_an_agent_that_typed_nothing_is_said_so(tmp_path: Path) -> None:
    results = write_trial(tmp_path / "run", events=session([("clear", "")]), commands=[])
    opened = reader.open(row_for(results))
    assert len(opened.notes) == 1
    assert "typed nothing into the terminal" in opened.notes[0]


def test_a_long_input_handed_over_in_pieces_is_one_step(tmp_path: Path) -> None:
    # tmux types a long send-keys in pieces a fraction of a millisecond apart, and the
    # terminal echoes each piece before the next arrives (seen in a real Terminal-Bench cast).
    pieces = ["mini -t 'Explore the ma", "ze.\nTrack your moves.\n", "Save the map.'\r"]
    events: list[tuple[float, str, str]] = [(0.01, "o", PROMPT)]
    seconds = 1.0
    for piece in pieces:
        events.append((seconds, "i", piece))
        events.append((seconds + 0.0001, "o", piece.replace("\n", "\r\n> ")))
        seconds += 0.0004
    events.append((5.0, "o", "done\r\n" + PROMPT))
    events.append((6.0, "i", "\x04"))
    results = write_trial(tmp_path / "run", events=events)

    typed, quit_ = _steps(results)

    assert typed.text == "mini -t 'Explore the maze.\nTrack your moves.\nSave the map.'"
    assert not typed.error
    assert quit_.text == "C-d"


def test_keys_typed_later_after_output_are_a_step_of_their_own(tmp_path: Path) -> None:
    events: list[tuple[float, str, str]] = [
        (0.01, "o", PROMPT),
        (1.0, "i", "less notes.txt\r"),
        (1.1, "o", "less notes.txt\r\nnotes\r\n:"),
        (3.0, "i", "/word"),
        (3.1, "o", "/word"),
        (5.0, "i", "q"),
    ]
    results = write_trial(tmp_path / "run", events=events)
    assert [step.text for step in _steps(results)] == ["less notes.txt", "/word", "q"]


def test_output_longer_than_the_screen_is_kept_whole(tmp_path: Path) -> None:
    numbers = "".join(f"line {n}\n" for n in range(1, 101))
    events = session([("seq-lines", numbers), ("true", "")])
    results = write_trial(tmp_path / "run", events=events)
    # A 10-row terminal: 90 of the lines scroll off the top before the next command.
    cast = results.parent / "sessions" / "agent.cast"
    cast.write_text(cast_text(events, height=10))

    first, second = _steps(results)

    assert first.observation is not None
    lines = first.observation.split("\n")
    assert lines[0] == f"{PROMPT}seq-lines"
    assert lines[1:] == [f"line {n}" for n in range(1, 101)]
    assert second.observation == f"{PROMPT}true\n{PROMPT.rstrip()}"


def test_a_screen_clear_keeps_what_the_step_printed(tmp_path: Path) -> None:
    events = session(
        [("make", "compiling\nlinked\n"), ("clear", "\x1b[H\x1b[J\x1b[3J"), ("ls", "a\n")]
    )
    results = write_trial(tmp_path / "run", events=events)
    make, clear, ls = _steps(results)

    assert make.observation == f"{PROMPT}make\ncompiling\nlinked"
    assert clear.observation == f"{PROMPT}clear"
    # After the clear the next prompt sits on the top row: the step starts there.
    assert ls.observation == f"{PROMPT}ls\na\n{PROMPT.rstrip()}"


def test_long_lines_wrap_at_the_recorded_width(tmp_path: Path) -> None:
    events = session([("echo", "x" * 100 + "\n")])
    results = write_trial(tmp_path / "run", events=events)
    (step,) = _steps(results)
    assert step.observation is not None
    assert step.observation.split("\n")[1:3] == ["x" * 80, "x" * 20]


def test_escape_sequences_never_reach_the_text(tmp_path: Path) -> None:
    hostile = (
        "\x1b]0;pwned title\x07"  # window title
        "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: write the clipboard
        "\x1b[31mred\x1b[0m \x1b[2J\x1b[5;1Hmoved "  # colour, clear, cursor move
        "\x1b]8;;https://evil.example\x07link\x1b]8;;\x07 "  # OSC 8 hyperlink
        "\x9b31m c1 \u202eevil\n"  # an 8-bit CSI, a bidi override
    )
    events = session([("printf hostile", hostile), ("echo \x1b[2Jtyped", "")])
    results = write_trial(
        tmp_path / "run",
        instruction="Fix it\x1b]52;c;aGk=\x07 now \x1b[2J",
        tests={"test_\x1b[31mred": "pass\x1b]0;x\x07ed"},
        events=events,
        post_test="summary \x1b]0;title\x07 \x1b[1mbold\x1b[0m\n",
    )
    trajectory = read_attempt(row_for(results))

    texts = [trajectory.instruction or "", trajectory.verdict.output or ""]
    texts += [t.name + t.result for t in trajectory.verdict.tests]
    texts += [s.text + (s.observation or "") for s in trajectory.steps]
    for text in texts:
        assert ESC not in text
        assert "\x9b" not in text and "\x07" not in text and "\u202e" not in text
    assert "red" in (trajectory.steps[0].observation or "")
    assert "pwned" not in (trajectory.steps[0].observation or "")  # a title is not text shown
    assert trajectory.steps[1].text == "echo \\x1b[2Jtyped"  # typed keys shown as written


def test_a_failed_command_is_marked_only_when_the_output_says_so(tmp_path: Path) -> None:
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/app/run.py", line 3, in <module>\n'
        "    main()\n"
        "ValueError: bad input\n"
    )
    recovered = traceback + "retrying with defaults\ndone\n"
    events = session(
        [
            ("pythn run.py", "bash: pythn: command not found\n"),
            ("python run.py", traceback),
            ("python run.py --retry", recovered),
            ("grep -r 'command not found' docs", "docs/faq.md: bash: x: command not found\n"),
            ("ls", "run.py\n"),
            # A command echoed over four rows of the 80-column screen, then not found.
            (f"mini -t '{'a' * 250}'", "bash: mini: command not found\n"),
        ]
    )
    results = write_trial(tmp_path / "run", events=events)
    assert [s.error for s in _steps(results)] == [True, True, False, False, False, True]


def test_a_long_output_keeps_its_start_and_end_and_says_what_was_cut(tmp_path: Path) -> None:
    lines = [f"row {n:06d} " + "." * 40 for n in range(20_000)]  # about 1 MB
    events = session([("big-report", "\n".join(lines) + "\n"), ("echo after", "after\n")])
    results = write_trial(tmp_path / "run", events=events)

    big, after = _steps(results)

    assert big.observation is not None
    shown = big.observation.split("\n")
    assert shown[0] == f"{PROMPT}big-report"
    assert shown[1] == lines[0]
    assert len(big.observation) < 3 * HEAD_CHARS
    (note,) = [line for line in shown if "cut here" in line]
    assert "MB of output cut" in note or "kB of output cut" in note
    # Whole lines on both sides of the cut, and the output's very end.
    assert all(line in lines for line in shown[1 : shown.index(note)])
    assert shown[-1] == lines[-1]
    assert after.observation == f"{PROMPT}echo after\nafter\n{PROMPT.rstrip()}"


def test_output_before_the_first_input_is_a_system_step(tmp_path: Path) -> None:
    events = [(0.0, "o", "Welcome to the container\r\n"), *session([("ls", "a\n")])]
    results = write_trial(tmp_path / "run", events=events)
    banner, ls = _steps(results)
    assert (banner.source, banner.text, banner.observation) == (
        "system",
        "",
        "Welcome to the container",
    )
    assert ls.index == 2


def test_a_cut_off_recording_yields_what_it_read_then_says_where(tmp_path: Path) -> None:
    text = cast_text(session([("ls", "a\n"), ("cat a", "contents\n")]))
    cut = text[: text.rindex('"o"') + 8]  # the last event stops mid-string
    results = write_trial(tmp_path / "run", cast=cut)

    read: list[Step] = []
    with pytest.raises(TrajectoryError) as raised:
        for step in reader.open(row_for(results)).steps:
            read.append(step)

    assert [s.text for s in read] == ["ls", "cat a"]
    assert read[-1].observation is not None
    assert read[-1].observation.endswith("[the recording breaks here]")
    message = str(raised.value)
    assert "agent.cast" in message and "line 10" in message and "cut off" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ('{"version": 2, "width": 80,', "line 1 is not an asciicast header"),
        ('{"version": 1, "width": 80, "height": 24}', "not an asciicast v2 header"),
        ('{"version": 2, "width": "wide", "height": 24}', "the header's width is 'wide'"),
        ("", "empty, no asciicast header"),
    ],
)
def test_a_corrupt_header_is_one_line_naming_the_file(
    tmp_path: Path, header: str, said: str
) -> None:
    results = write_trial(tmp_path / "run", cast=header + '\n[0.1, "o", "x"]\n')
    opened = reader.open(row_for(results))  # the verdict stays readable
    assert opened.instruction is not None
    with pytest.raises(TrajectoryError) as raised:
        list(opened.steps)
    message = str(raised.value)
    assert said in message and "agent.cast" in message and "\n" not in message


def test_a_missing_results_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "run" / "task" / "trial" / "results.json"
    with pytest.raises(TrajectoryError, match=r"results\.json: no such file"):
        reader.open(row_for(missing))


def test_a_trial_with_no_logs_says_what_was_looked_for(tmp_path: Path) -> None:
    results = write_trial(tmp_path / "run", events=None, commands=None, post_test=None)
    opened = reader.open(row_for(results))
    assert list(opened.steps) == []
    assert opened.verdict.output is None
    assert [Path(p).name for p in opened.looked_for] == ["agent.cast", "agent.log", "commands.txt"]


def test_a_100_mb_single_line_recording_is_refused_without_reading_it(tmp_path: Path) -> None:
    results = write_trial(tmp_path / "run", cast="")
    cast = results.parent / "sessions" / "agent.cast"
    chunk = b"x" * (1 << 20)
    with cast.open("wb") as handle:
        handle.write(b'{"version": 2, "width": 80, "height": 24, "title": "')
        for _ in range(100):
            handle.write(chunk)
    # The same bytes as the pane capture too: only its end is read.
    pane = results.parent / "panes" / "post-test.txt"
    pane.unlink()
    os.link(cast, pane)

    opened = reader.open(row_for(results))

    assert opened.verdict.output is not None
    assert opened.verdict.output.startswith("[… the first 104.6 MB cut; the end follows …]")
    assert len(opened.verdict.output) < 2 * reader.MAX_PANE_BYTES
    with pytest.raises(TrajectoryError) as raised:
        list(opened.steps)
    assert f"line 1 is longer than {MAX_LINE_BYTES // 1_048_576} MB" in str(raised.value)


def test_a_huge_results_file_is_refused(tmp_path: Path) -> None:
    results = write_trial(tmp_path / "run")
    with results.open("r+b") as handle:
        handle.truncate(reader.MAX_RESULTS_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(TrajectoryError, match="larger than the 64 MB"):
        reader.open(row_for(results))


@pytest.mark.parametrize("where", ["agent.cast", "results.json", "post-test.txt"])
def test_binary_bytes_are_refused_naming_the_file(tmp_path: Path, where: str) -> None:
    binary = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe"
    results = write_trial(tmp_path / "run", events=session([("ls", "a\n")]))
    target = {
        "agent.cast": results.parent / "sessions" / "agent.cast",
        "results.json": results,
        "post-test.txt": results.parent / "panes" / "post-test.txt",
    }[where]
    if where == "agent.cast":
        # A valid start, then a line of binary bytes.
        target.write_bytes(target.read_bytes() + b'[9.0, "o", "' + binary + b'"]\n')
    else:
        target.write_bytes(binary)

    with pytest.raises(TrajectoryError) as raised:
        list(reader.open(row_for(results)).steps)

    message = str(raised.value)
    assert where in message and "\n" not in message
    assert "UTF-8" in message or "binary" in message or "JSON" in message


def test_steps_are_read_as_the_recording_plays(tmp_path: Path) -> None:
    # The first steps are yielded before the reader meets a line far later that breaks.
    commands = [(f"echo {n}", f"{n}\n") for n in range(200)]
    text = cast_text(session(commands)) + '[999.0, "o", "never fin'
    results = write_trial(tmp_path / "run", cast=text)
    steps = reader.open(row_for(results)).steps
    assert next(steps).text == "echo 0"
    assert next(steps).text == "echo 1"


def test_a_run_level_results_file_finds_the_trial_folder(tmp_path: Path) -> None:
    run = tmp_path / "2025-07-11__22-00-00"
    first = write_trial(run, task="fix-git", events=session([("git status", "clean\n")]))
    second = write_trial(
        run,
        task="hello-world",
        tests={"test_one": "failed"},
        events=session([("ls", "a\n")]),
    )
    records = [json.loads(first.read_text()), json.loads(second.read_text())]
    run_file = write_run_file(run, records)

    opened = reader.open(row_for(run_file, line=2))

    assert [t.name for t in opened.verdict.tests] == ["test_one"]
    assert [s.text for s in opened.steps] == ["ls"]
    assert str(second.parent / "sessions" / "agent.cast") in opened.files


def test_a_renamed_run_folder_is_found_from_the_trial_name(tmp_path: Path) -> None:
    # The recording path names the run as recorded; the folder was renamed since.
    run = tmp_path / "run1_renamed"
    results = write_trial(
        run, trial="hello-world.1-of-1.2025-07-11__22-00-00", events=session([("ls", "")])
    )
    record = json.loads(results.read_text())
    record["recording_path"] = "2025-07-11__22-00-00/gone/elsewhere/sessions/agent.cast"
    run_file = write_run_file(run, [record])
    assert [s.text for s in reader.open(row_for(run_file)).steps] == ["ls"]


def test_a_run_level_record_whose_folder_is_gone_says_what_was_looked_for(
    tmp_path: Path,
) -> None:
    run = tmp_path / "2025-07-11__22-00-00"
    record = {
        "trial_name": "hello-world.1-of-1",
        "task_id": "hello-world",
        "instruction": "Say hello.",
        "parser_results": {"test_hello": "passed"},
        "recording_path": "2025-07-11__22-00-00/hello-world/hello-world.1-of-1/sessions/agent.cast",
    }
    run_file = write_run_file(run, [record])

    opened = reader.open(row_for(run_file))

    assert opened.instruction == "Say hello."
    assert [t.name for t in opened.verdict.tests] == ["test_hello"]
    assert list(opened.steps) == []
    assert opened.looked_for == [f"the trial folder {run / 'hello-world' / 'hello-world.1-of-1'}"]
    with pytest.raises(TrajectoryError, match=r"has no record 3 \(it holds 1 trial records\)"):
        reader.open(row_for(run_file, line=3))


def test_without_a_recording_the_raw_log_is_split_at_prompts(tmp_path: Path) -> None:
    log = (
        f"\x1b[?2004h{PROMPT}asciinema rec --stdin /logs/agent.cast\r\n"
        f"\x1b[?2004l\r\x1b[0;32masciinema: recording\x1b[0m\r\n"
        f"\x1b[?2004h{PROMPT}ls -la\r\n\x1b[?2004l\rtotal 0\r\n"
        f"\x1b[?2004h{PROMPT}cat x\r\ncat: x: No such file or directory\r\n"
        f"\x1b[?2004h(venv) {PROMPT}python -m agent\r\nthinking\r\n"
        f"\x1b[?2004h{PROMPT}"
    )
    results = write_trial(tmp_path / "run", events=None, agent_log=log)
    steps = _steps(results)
    assert [(s.text, s.source) for s in steps] == [
        ("asciinema rec --stdin /logs/agent.cast", "system"),
        ("ls -la", "agent"),
        ("cat x", "agent"),
        ("python -m agent", "agent"),
    ]
    assert steps[1].observation == f"{PROMPT}ls -la\ntotal 0"
    assert steps[2].observation == f"{PROMPT}cat x\ncat: x: No such file or directory"
    assert steps[3].observation == f"(venv) {PROMPT}python -m agent\nthinking\n{PROMPT.rstrip()}"
    assert all(s.timestamp is None for s in steps)


def test_a_raw_log_shows_bytes_that_are_not_text_as_a_terminal_does(tmp_path: Path) -> None:
    log = f"{PROMPT}cat blob\r\n".encode() + b"\x89PNG\x00\xff\xfe\r\n" + PROMPT.encode()
    results = write_trial(tmp_path / "run", events=None, agent_log=log)
    (step,) = _steps(results)
    assert step.text == "cat blob"
    assert step.observation == f"{PROMPT}cat blob\n\ufffdPNG\ufffd\ufffd\n{PROMPT.rstrip()}"


def test_without_any_session_the_commands_sent_are_the_steps(tmp_path: Path) -> None:
    results = write_trial(
        tmp_path / "run",
        events=None,
        commands=[["cd /app && make", "Enter"], ["C-c"], ["vim notes.txt", "Enter"]],
    )
    steps = _steps(results)
    assert [s.text for s in steps] == [
        "asciinema rec --stdin /logs/agent.cast",
        "clear",
        "cd /app && make",
        "C-c",
        "vim notes.txt",
        "C-d",
        "bash /tests/run-tests.sh",
        "C-d",
    ]
    assert [s.source for s in steps][2:5] == ["agent", "agent", "agent"]
    assert all(s.observation is None for s in steps)


def test_a_broken_commands_file_is_named(tmp_path: Path) -> None:
    results = write_trial(tmp_path / "run", events=None, commands=[])
    (results.parent / "commands.txt").write_text("['ls', 'Enter']\nnot a list\n")
    with pytest.raises(TrajectoryError, match=r"commands\.txt: line 2 is not a list of keys"):
        _steps(results)


def test_without_a_pane_capture_the_tests_recording_is_played(tmp_path: Path) -> None:
    tests_cast = cast_text(session([("bash /tests/run-tests.sh", "PASSED test_one\n1 passed\n")]))
    results = write_trial(tmp_path / "run", post_test=None, tests_cast=tests_cast)
    opened = reader.open(row_for(results))
    assert opened.verdict.output == (
        f"{PROMPT}bash /tests/run-tests.sh\nPASSED test_one\n1 passed\n{PROMPT.rstrip()}"
    )


def test_a_trial_without_a_verdict_has_no_tests(tmp_path: Path) -> None:
    results = write_trial(tmp_path / "run", record={"parser_results": None, "is_resolved": None})
    assert reader.open(row_for(results)).verdict.tests == ()


def test_open_attempt_chooses_this_reader_from_the_source(tmp_path: Path) -> None:
    results = write_trial(tmp_path / "run", events=session([("ls", "")]))
    opened = open_attempt(row_for(results))
    assert [s.text for s in opened.steps] == ["ls"]


def test_a_broken_tests_recording_is_named_in_the_output_and_the_tests_still_show(
    tmp_path: Path,
) -> None:
    tests_cast = cast_text(session([("bash /tests/run-tests.sh", "collected 1 item\n")]))
    results = write_trial(tmp_path / "run", post_test=None, tests_cast=tests_cast[:-12])
    opened = reader.open(row_for(results))
    assert [t.name for t in opened.verdict.tests] == ["test_hello_file"]
    output = opened.verdict.output or ""
    assert "collected 1 item" in output
    assert output.splitlines()[-1].startswith("[") and "tests.cast: line" in output


def test_a_long_input_the_terminal_read_in_pieces_is_one_step(tmp_path: Path) -> None:
    command = "mini -t '" + "fix the parser\n" * 300 + "'"
    events: list[tuple[float, str, str]] = [(0.01, "o", PROMPT)]
    events += [(1.0, "i", command[:4095]), (1.0002, "i", command[4095:] + "\r")]
    events += [
        (1.001, "o", "mini: thinking\r\n"),
        (2.0, "i", "y"),
        (2.1, "o", "y"),
        (2.2, "i", "\r"),
    ]
    results = write_trial(tmp_path / "run", events=events)
    steps = _steps(results)
    assert [s.text for s in steps] == [command, "y", "Enter"]
