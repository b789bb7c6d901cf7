"""Exports never lose data and are safe to open (issue 14, items 4 and 5).

- The app's attempts export is canonical: it loads back to the same figures, a `status` column
  included (the derived outcome is not written beside it).
- Nothing is written over a file the ledger reads, in the app or the CLI, whatever the answer
  to "Replace?" or `--force` says.
- A replaced file keeps its mode; temporary files are named `.NAME.ledger-tui-XXXX.tmp` and
  never stay behind.
- CSV meant for people (`summary --format csv`, the app's CSV exports) neutralises formula
  cells unless asked for raw cells; `convert` stays exact; markdown escapes raw HTML.
"""

from __future__ import annotations

import csv
import io
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Checkbox, Input

from tests.pilot_helpers import press, record_toasts, settle, wait_until
from tui_ledger.accounting.ledger import compare
from tui_ledger.exports import export_files
from tui_ledger.exports.export_files import ExportError, write_text_atomic
from tui_ledger.load import load
from tui_ledger.reports.report import render_summary
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.screens.screens import ConfirmScreen, ExportScreen

SIZE = (160, 45)

STATUS_CSV = """workflow,task,tokens,status,note
lean,t1,1000,passed,ok
lean,t2,900,failed,=HYPERLINK("http://evil")
lean,t3,1100,timeout,-2
steady,t1,1600,passed,@SUM(A1)
steady,t2,1500,passed,+1+1
steady,t3,1700,error,plain
"""


def status_file(tmp_path: Path) -> Path:
    path = tmp_path / "runs.csv"
    path.write_text(STATUS_CSV)
    return path


def figures(paths: list[str]) -> str:
    """The summary JSON of a load: every figure of both views."""
    return render_summary(compare(load(paths).attempts), "json")


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_ledger.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


async def export_from_app(
    app: LedgerApp, pilot: Any, summary: str, attempts: str, *, raw: bool = False
) -> None:
    await press(pilot, "e")
    assert isinstance(app.screen, ExportScreen)
    app.screen.query_one("#summary-path", Input).value = summary
    app.screen.query_one("#attempts-path", Input).value = attempts
    app.screen.query_one("#export-raw", Checkbox).value = raw
    app.screen.query_one("#attempts-path", Input).focus()
    await press(pilot, "enter")


# --------------------------------------------------------------------------- canonical


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
async def test_the_apps_attempts_export_loads_back_to_the_same_figures(
    tmp_path: Path, suffix: str
) -> None:
    source = status_file(tmp_path)
    target = tmp_path / f"exported{suffix}"
    app = LedgerApp([str(source)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await export_from_app(app, pilot, "", str(target), raw=True)
        await wait_until(pilot, target.exists, "the attempts file is written")
    assert figures([str(target)]) == figures([str(source)])


# --------------------------------------------------------------------------- never over an input


async def test_the_app_refuses_to_export_over_its_own_input(tmp_path: Path) -> None:
    source = status_file(tmp_path)
    app = LedgerApp([str(source)])
    said = record_toasts(app)

    def refusals() -> int:
        return sum("which this ledger reads" in text for text in said)

    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "slash", *"passed", "enter")
        await export_from_app(app, pilot, "", str(source))
        await wait_until(pilot, lambda: refusals() == 1, "a refusal")
        assert not isinstance(app.screen, ConfirmScreen)  # refused, not asked
        # A folder's file, named another way (a hard link), is refused too.
        os.link(source, tmp_path / "alias.csv")
        await export_from_app(app, pilot, str(tmp_path / "alias.csv"), "")
        await wait_until(pilot, lambda: refusals() == 2, "the hard link refused")
        assert not isinstance(app.screen, ConfirmScreen)
    assert source.read_text() == STATUS_CSV  # every failure is still there


async def test_the_app_refuses_to_replace_a_file_inside_a_folder_it_reads(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.csv").write_text(STATUS_CSV)
    app = LedgerApp([str(folder)])
    said = record_toasts(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await export_from_app(app, pilot, str(folder / "a.csv"), "")
        await wait_until(
            pilot, lambda: "a folder this ledger reads" in "\n".join(said), "a refusal"
        )
    assert (folder / "a.csv").read_text() == STATUS_CSV


def test_convert_and_the_chart_refuse_to_write_over_an_input(tmp_path: Path) -> None:
    source = status_file(tmp_path)
    done = cli("convert", str(source), "-o", str(source), "--force")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "which this ledger reads" in done.stderr
    assert "Traceback" not in done.stderr
    assert source.read_text() == STATUS_CSV

    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.csv").write_text(STATUS_CSV)
    chart = folder / "chart.svg"
    chart.write_text("<svg>mine</svg>")
    done = cli("summary", str(folder), "--pareto-svg", str(chart), "--force")
    assert done.returncode == 2 and "a folder this ledger reads" in done.stderr
    assert chart.read_text() == "<svg>mine</svg>"


# --------------------------------------------------------------------------- replacing


def test_replacing_keeps_the_files_mode_and_a_new_file_gets_the_umask(tmp_path: Path) -> None:
    private = tmp_path / "private.csv"
    private.write_text("old")
    private.chmod(0o600)
    write_text_atomic(private, "new", overwrite=True)
    assert private.read_text() == "new"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600

    shared = tmp_path / "shared.md"
    shared.write_text("old")
    shared.chmod(0o664)
    write_text_atomic(shared, "new", overwrite=True)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o664

    fresh = write_text_atomic(tmp_path / "fresh.md", "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask


def test_temporary_files_are_recognisable_and_never_left_behind(tmp_path: Path) -> None:
    target = tmp_path / "a.csv"
    seen: list[str] = []

    def write(handle: Any) -> None:
        seen.extend(path.name for path in tmp_path.iterdir())
        handle.write(b"x")

    export_files.write_atomic(target, write, False)
    assert len(seen) == 1 and re.fullmatch(r"\.a\.csv\.ledger-tui-\w+\.tmp", seen[0])
    assert [path.name for path in tmp_path.iterdir()] == ["a.csv"]

    def explode(handle: Any) -> None:
        handle.write(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(ExportError, match="No space left"):
        export_files.write_atomic(tmp_path / "b.csv", explode, False)
    assert [path.name for path in tmp_path.iterdir()] == ["a.csv"]


def test_a_write_cut_short_by_exit_leaves_no_temporary_file(tmp_path: Path) -> None:
    # The process exits (sys.exit from another thread's point of view: SystemExit mid-write).
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from tui_ledger.exports import export_files\n"
        "def write(handle):\n"
        "    handle.write(b'half')\n"
        "    sys.exit(0)\n"
        f"export_files.write_atomic(Path({str(tmp_path / 'a.csv')!r}), write, False)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert done.returncode == 0
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- spreadsheets


def test_summary_csv_is_spreadsheet_safe_by_default_and_raw_on_request(tmp_path: Path) -> None:
    source = tmp_path / "runs.csv"
    source.write_text(
        "workflow,tokens,passed\n"
        '"=HYPERLINK(""http://evil"",""x"")",100,true\n'
        "-2,200,true\n"
        "@cmd,300,false\n"
    )
    safe = cli("summary", str(source), "--format", "csv")
    assert safe.returncode == 0, safe.stderr
    labels = [row[1] for row in csv.reader(io.StringIO(safe.stdout))][1:]
    assert '\'=HYPERLINK("http://evil","x")' in labels
    assert "'@cmd" in labels
    assert "-2" in labels  # a number, not a formula
    assert not any(label[:1] in "=+@" for label in labels)

    raw = cli("summary", str(source), "--format", "csv", "--csv-raw")
    labels = [row[1] for row in csv.reader(io.StringIO(raw.stdout))][1:]
    assert '=HYPERLINK("http://evil","x")' in labels and "@cmd" in labels

    exact = tmp_path / "exact.csv"
    assert cli("convert", str(source), "-o", str(exact)).returncode == 0
    assert '"=HYPERLINK(""http://evil"",""x"")"' in exact.read_text()  # convert stays exact


async def test_the_apps_csv_exports_are_safe_unless_raw_is_ticked(tmp_path: Path) -> None:
    source = status_file(tmp_path)
    app = LedgerApp([str(source)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        safe_summary, safe_attempts = tmp_path / "s.csv", tmp_path / "a.csv"
        await export_from_app(app, pilot, str(safe_summary), str(safe_attempts))
        await wait_until(pilot, safe_attempts.exists, "the safe export")
        raw_attempts = tmp_path / "raw.csv"
        await export_from_app(app, pilot, "", str(raw_attempts), raw=True)
        await wait_until(pilot, raw_attempts.exists, "the raw export")
    notes = [row["note"] for row in csv.DictReader(safe_attempts.open(newline=""))]
    assert notes == ["ok", '\'=HYPERLINK("http://evil")', "-2", "'@SUM(A1)", "'+1+1", "plain"]
    raw = [row["note"] for row in csv.DictReader(raw_attempts.open(newline=""))]
    assert raw == ["ok", '=HYPERLINK("http://evil")', "-2", "@SUM(A1)", "+1+1", "plain"]
    assert safe_summary.read_text().startswith("view,workflow,")


def test_markdown_escapes_raw_html() -> None:
    frame = load([str(Path(__file__).parent.parent / "sample_data" / "runs.csv")]).attempts
    frame = frame.with_columns(
        frame["workflow"].cast(str).replace("lean", "<img src=x onerror=alert(1)>")
    )
    text = render_summary(compare(frame), "markdown")
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)>" in text
