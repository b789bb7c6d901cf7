"""Text from a file never acts on the terminal: every place it can appear, checked on what
actually reaches the terminal.

The hostile file holds Rich markup, CSI colour codes, OSC 52 (clipboard write), OSC 8
(hyperlink) and OSC 0 (window title) sequences, C0 and C1 controls (8-bit CSI, NEL, BEL, BS,
DEL, CR), bidi overrides and isolates, and zero-width characters: in cell values, in a column
name, and in the file's own name.

- CLI: the bytes written to stdout and stderr by `summary` (table, markdown, csv, json),
  `check`, `convert` and every error message hold none of those characters raw. Text output
  shows them as visible escapes (`\\x1b`, `<U+202E>`); JSON keeps the exact strings as data,
  with each such character written as a `\\uXXXX` escape (decided in `report.json_text`).
- Exports: a CSV written to a file keeps the data exactly; `--spreadsheet-safe` neutralises
  formulas. The SVG chart holds escapes only.
- App: `LedgerApp` under Pilot: the rendered strips and `export_screenshot()` of the table,
  summary, detail panel, warnings, header and error messages hold no raw control character,
  and `[bold]` is shown literally.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.corpus.guard import unchanged
from tests.pilot_helpers import press, screen_text, settle, wait_until
from tui_ledger.cli import main
from tui_ledger.text.textsafe import UNSAFE_CODEPOINTS
from tui_ledger.tui.app import LedgerApp

CORPUS = Path(__file__).resolve().parent / "corpus"
HOSTILE_CSV = CORPUS / "hostile_text.csv"
HOSTILE_NAME = "runs \x1b]0;pwned\x07\u202e.csv"
NAMES = [row[0] for row in list(csv.reader(HOSTILE_CSV.open(newline="")))[1:]]
SIZE = (200, 50)


def raw_unsafe(text: str, *, allowed: str = "\n") -> list[str]:
    """The characters of `text` that could act on a terminal or hide from the reader."""
    return sorted({char for char in text if ord(char) in UNSAFE_CODEPOINTS and char not in allowed})


def assert_inert(data: bytes | str, where: str = "") -> str:
    """`data` decodes as UTF-8 and holds no control, bidi or invisible character but `\\n`."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    assert raw_unsafe(text) == [], f"{where}: raw terminal characters reached the terminal"
    return text


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Path]:
    """The hostile corpus file under a hostile file name; unchanged after the test."""
    path = tmp_path / HOSTILE_NAME
    shutil.copyfile(HOSTILE_CSV, path)
    with unchanged(path):
        yield path


Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capfdbinary: pytest.CaptureFixture[bytes]) -> Run:
    """`ledger-tui ARGS`: (exit code, stdout, stderr), each checked to be inert bytes."""

    def go(*args: str) -> tuple[int, str, str]:
        try:
            code = main(list(args))
        except SystemExit as stop:
            code = int(stop.code or 0)
        out, err = capfdbinary.readouterr()
        return code, assert_inert(out, f"stdout of {args}"), assert_inert(err, f"stderr of {args}")

    return go


# --- the CLI ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv"])
def test_summary_text_formats_show_escapes(run: Run, hostile: Path, fmt: str) -> None:
    code, out, _ = run("summary", str(hostile), "--format", fmt)

    assert code == 0
    if fmt == "markdown":  # markdown doubles a backslash so that it renders as one
        out = out.replace("\\\\", "\\")
    assert "[bold]lean[/bold]" in out  # markup is text
    assert "esc\\x1b[31mred\\x1b[0m" in out  # the escape is visible, never sent
    assert "clip\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in out
    assert "bidi<U+202E>txt.exe" in out
    assert "c1\\x9b31m\\x85next" in out
    assert "cr\\roverwrite" in out


@pytest.mark.parametrize("view", [[], ["--view", "keep"]])
def test_summary_json_keeps_the_exact_strings_escaped(
    run: Run, hostile: Path, view: list[str]
) -> None:
    code, out, _ = run("summary", str(hostile), "--format", "json", *view)

    assert code == 0
    document = json.loads(out)
    groups = document if view else document["views"]["keep"]
    assert set(groups) == set(NAMES)  # the data is exact
    assert "\\u001b]52;c;" in out and "\\u202e" in out and "\\u009b" in out


def test_summary_grouped_by_hostile_columns(run: Run, hostile: Path) -> None:
    for by in ("model", "task"):
        code, out, _ = run("summary", str(hostile), "--by", by)
        assert code == 0
    _, out, _ = run("summary", str(hostile), "--by", "model", "--format", "markdown")
    assert "m<U+202E>0" in out


def test_check_shows_file_and_column_names_as_escapes(run: Run, hostile: Path) -> None:
    code, out, _ = run("check", str(hostile))

    assert code == 0
    assert "runs \\x1b]0;pwned\\x07<U+202E>.csv" in out
    assert "title\\x1b]0;pwned\\x07: 1 accepted of 1" in out


def test_error_messages_are_inert(run: Run, hostile: Path, tmp_path: Path) -> None:
    # A filter naming no column lists the columns, one of them hostile.
    code, _, err = run("summary", str(hostile), "--where", "nosuch:x")
    assert code == 2 and "note \\x1b[1mcol" in err
    # --by naming no column lists them too.
    code, _, err = run("summary", str(hostile), "--by", "nosuch")
    assert code == 2 and err.startswith("ledger-tui: error: ")
    # A value the loader refuses is quoted in its message.
    bad = tmp_path / "bad.csv"
    bad.write_text("workflow,tokens,status\nlean,1,\x1b]52;c;cHduZWQ=\x07\u202e\n")
    with unchanged(bad):
        code, _, err = run("summary", str(bad))
    assert code == 2 and "line 2, column 'status'" in err and "\\x1b]52" in err
    # A missing file with a hostile name.
    code, _, err = run("check", str(tmp_path / "gone\x1b[2J.csv"))
    assert code == 2 and "gone\\x1b[2J.csv" in err


def test_convert_keeps_the_data_and_neutralises_formulas_on_request(
    run: Run, hostile: Path, tmp_path: Path
) -> None:
    exact, safe = tmp_path / "exact.csv", tmp_path / "safe.csv"
    assert run("convert", str(hostile), "-o", str(exact))[0] == 0
    assert run("convert", str(hostile), "-o", str(safe), "--spreadsheet-safe")[0] == 0

    rows = list(csv.DictReader(exact.open(newline="")))
    assert [row["workflow"] for row in rows] == NAMES  # a file keeps the data exactly
    safe_rows = list(csv.DictReader(safe.open(newline="")))
    notes = "note \x1b[1mcol\x1b[0m"
    assert rows[0][notes] == '=HYPERLINK("http://evil")'
    assert safe_rows[0][notes] == '\'=HYPERLINK("http://evil")'
    assert safe_rows[1][notes] == "+1"  # a plain number: a spreadsheet reads it as one
    # Nothing is written over an existing file unasked.
    code, _, err = run("convert", str(hostile), "-o", str(exact))
    assert code == 2 and "already exists" in err


def test_the_pareto_chart_holds_escapes_only(run: Run, hostile: Path, tmp_path: Path) -> None:
    chart = tmp_path / "chart.svg"
    code, _, _ = run("summary", str(hostile), "--pareto-svg", str(chart))

    assert code == 0
    assert_inert(chart.read_text(), "the SVG")


# --- the app ------------------------------------------------------------------------------------


def on_screen(app: LedgerApp) -> str:
    """What the terminal is sent: every rendered strip's text, and the screenshot's text,
    each checked to be inert."""
    strips = app.screen._compositor.render_strips()
    text = "\n".join(strip.text for strip in strips)
    assert_inert(text, "rendered strips")
    assert_inert(app.export_screenshot(), "screenshot")
    return text


async def test_table_summary_and_header_show_hostile_text_literally(hostile: Path) -> None:
    app = LedgerApp([str(hostile)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = on_screen(app)
        assert "[bold]lean[/bold]" in text
        assert "esc\\x1b[31mred" in text
        assert "<U+202E>" in text
        for key in ("t", "G", "t", "l", "l", "l"):
            await press(pilot, key)
            on_screen(app)


async def test_the_detail_panel_shows_hostile_text_literally(hostile: Path) -> None:
    app = LedgerApp([str(hostile)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(4):
            await press(pilot, "i")
            text = on_screen(app)
            assert "\\x1b" in text  # this row's hostile cells, shown
            await press(pilot, "escape")
            await press(pilot, "j")


async def test_warnings_and_group_by_dialogs_show_hostile_text_literally(
    hostile: Path, tmp_path: Path
) -> None:
    lossy = tmp_path / "lossy \x1b]8;;x\x1b\\.csv"
    lossy.write_bytes(b"workflow,tokens,passed,note\nlean,,true,caf\xe9\n")
    with unchanged(lossy):
        app = LedgerApp([str(hostile), str(lossy)])
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await press(pilot, "w")
            text = on_screen(app)
            assert "lossy \\x1b]8;;x\\x1b\\.csv" in text  # the file, named in a warning
            await press(pilot, "escape")
            await press(pilot, "b")
            text = on_screen(app)
            assert "note \\x1b[1mcol" in text  # the hostile column, offered to group by


async def test_a_filter_error_listing_hostile_columns_is_literal(hostile: Path) -> None:
    app = LedgerApp([str(hostile)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "/", *"nosuch:x")
        text = on_screen(app)
        assert "unknown column" in text


async def test_a_load_error_quoting_hostile_text_is_inert(tmp_path: Path) -> None:
    path = tmp_path / "bad\x1b[2J.csv"
    path.write_text("workflow,tokens,status\nlean,1,\x1b]52;c;cHduZWQ=\x07\n")
    with unchanged(path):
        app = LedgerApp([str(path)])
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
        assert app.return_code == 2
        assert app.error_message is not None
        assert_inert(app.error_message, "the app's error message")
        assert "\\x1b]52" in app.error_message


async def test_a_reload_error_quoting_hostile_text_is_inert(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("workflow,tokens,passed\nlean,1,true\n")
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        path.write_text("workflow,tokens,passed\nlean,1,\x1b]0;pwned\x07\u202e\n")
        with unchanged(path):
            await pilot.press("r")
            await wait_until(
                pilot, lambda: "reload failed" in screen_text(app), "a reload-failed toast"
            )
            text = on_screen(app)
        assert "reload failed" in text


async def test_filter_to_a_hostile_cell_and_the_palette_are_literal(hostile: Path) -> None:
    app = LedgerApp([str(hostile)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = on_screen(app)
        assert "runs \\x1b]0;pwned\\x07<U+202E>.csv" in text  # the header names the file
        await press(pilot, "j", "f")  # filter to the workflow under the cursor: esc...red
        text = on_screen(app)
        assert "1 of 10" in text
        await pilot.press("escape", "ctrl+p", *"filter")
        await wait_until(pilot, lambda: "Filter to" in screen_text(app), "the palette's commands")
        on_screen(app)


async def test_export_and_help_dialogs_are_literal(hostile: Path) -> None:
    app = LedgerApp([str(hostile)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key in ("e", "question_mark"):
            await press(pilot, key)
            on_screen(app)
            await press(pilot, "escape")
        await press(pilot, "b")
        on_screen(app)
