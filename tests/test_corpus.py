"""The corpus of broken and hostile inputs (tests/corpus/expectations.toml), case by case.

Each case loads with both `load` and `scan` and either fails with exactly the one-line message
the manifest gives (naming the file, the line and the column where it can), or loads with
exactly the figures it gives, which the plain-Python oracle confirms. No case may raise
anything but `LoadError`, hang, or change a byte of its input.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import tui_ledger.load
from tests.corpus.guard import unchanged
from tests.frames import assert_same_attempts
from tests.oracle import oracle_summary
from tests.pilot_helpers import settle
from tui_ledger.accounting.ledger import compare
from tui_ledger.cli import main
from tui_ledger.load import Ledger, LoadError, load, memory, scan

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CORPUS = Path(__file__).resolve().parent / "corpus"
MANIFEST = tomllib.loads((CORPUS / "expectations.toml").read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = MANIFEST["case"]
NULL = "<null>"
HEADER = "workflow,tokens,passed\n"


# --- inputs too big, too odd or too dangerous to commit ------------------------------------


def _wide(folder: Path) -> Path:
    others = [f"c{i}" for i in range(5000)]
    rows = [
        ["workflow", "tokens", "passed", *others],
        ["lean", "1000", "true", *(str(i) for i in range(5000))],
        ["steady", "1600", "false", *("x" * len(others))],
    ]
    path = folder / "wide.csv"
    path.write_text("".join(",".join(row) + "\n" for row in rows))
    return path


def _big_cell(folder: Path) -> Path:
    path = folder / "big_cell.csv"
    cell = "A" * 10_000_000
    path.write_text(f"workflow,tokens,passed,notes\nlean,1000,true,{cell}\nlean,1600,false,x\n")
    return path


def _parquet(frame: pl.DataFrame) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / "runs.parquet"
        frame.write_parquet(path)
        return path

    return write


def _parquet_truncated(folder: Path) -> Path:
    path = folder / "runs.parquet"
    pl.DataFrame({"workflow": ["lean"], "tokens": [1], "passed": [True]}).write_parquet(path)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    return path


def _fifo(folder: Path) -> Path:
    path = folder / "stream.csv"
    os.mkfifo(path)
    return path


def _fifo_in_folder(folder: Path) -> Path:
    (folder / "early.csv").write_text(HEADER + "lean,1,true\n")
    os.mkfifo(folder / "late.csv")
    return folder


def _symlink_loop(folder: Path) -> Path:
    (folder / "a.csv").symlink_to("b.csv")
    (folder / "b.csv").symlink_to("a.csv")
    return folder / "a.csv"


def _symlink_loop_in_folder(folder: Path) -> Path:
    (folder / "a.csv").write_text(HEADER + "lean,1,true\n")
    (folder / "loop.csv").symlink_to("loop.csv")
    return folder


def _dangling_link(folder: Path) -> Path:
    (folder / "runs.csv").symlink_to("gone.csv")
    return folder / "runs.csv"


def _folder_link_cycle(folder: Path) -> Path:
    runs = folder / "runs"
    (runs / "sub").mkdir(parents=True)
    (runs / "a.csv").write_text(HEADER + "lean,1000,true\n")
    (runs / "sub" / "b.csv").write_text(HEADER + "steady,1600,true\n")
    (runs / "sub" / "back").symlink_to("..")  # runs/sub/back -> runs
    return runs


def _empty_folder(folder: Path) -> Path:
    (folder / "empty").mkdir()
    return folder / "empty"


def _unreadable_in_folder(folder: Path) -> Path:
    (folder / "a.csv").write_text(HEADER + "lean,1000,true\n")
    (folder / "b.csv").write_text(HEADER + "steady,1600,true\n")
    (folder / "b.csv").chmod(0)
    return folder


def _far_too_big(folder: Path) -> Path:
    available = memory.available_memory()
    if available is None:
        pytest.skip("no /proc/meminfo to tell how much memory is free")
    path = folder / "huge.csv"
    with path.open("wb") as stream:
        stream.write(HEADER.encode())
        stream.truncate(available * 2)  # sparse: no disk is used
    return path


MAKERS: dict[str, Callable[[Path], Path]] = {
    "wide": _wide,
    "big_cell": _big_cell,
    "parquet_float_tokens": _parquet(
        pl.DataFrame({"workflow": [1, 2], "tokens": [1000.0, 1600.0], "passed": [1, 0]})
    ),
    "parquet_fractional_tokens": _parquet(
        pl.DataFrame({"workflow": ["lean"], "tokens": [1.5], "passed": [True]})
    ),
    "parquet_list_tokens": _parquet(
        pl.DataFrame({"workflow": ["lean"], "tokens": [[1000]], "passed": [True]})
    ),
    "parquet_struct_workflow": _parquet(
        pl.DataFrame(
            {
                "workflow": [{"name": "lean"}, {"name": "steady"}],
                "tokens": [1000, 1600],
                "passed": [True, True],
            }
        )
    ),
    "parquet_date_tokens": _parquet(
        pl.DataFrame({"workflow": ["lean"], "tokens": [dt.date(2024, 5, 1)], "passed": [True]})
    ),
    "parquet_u64_tokens": _parquet(
        pl.DataFrame(
            {
                "workflow": ["lean"],
                "tokens": pl.Series([2**64 - 1], dtype=pl.UInt64),
                "passed": [True],
            }
        )
    ),
    "parquet_nan_tokens": _parquet(
        pl.DataFrame({"workflow": ["lean", "lean"], "tokens": [math.nan, 1e3], "passed": [1, 0]})
    ),
    "parquet_binary_tokens": _parquet(
        pl.DataFrame(
            {"workflow": ["lean", "lean"], "tokens": [b"1000", b"\xfe"], "passed": [True, False]}
        )
    ),
    "parquet_truncated": _parquet_truncated,
    "fifo": _fifo,
    "fifo_in_folder": _fifo_in_folder,
    "device": lambda folder: Path(os.devnull),
    "symlink_loop": _symlink_loop,
    "symlink_loop_in_folder": _symlink_loop_in_folder,
    "dangling_link": _dangling_link,
    "folder_link_cycle": _folder_link_cycle,
    "empty_folder": _empty_folder,
    "unreadable_in_folder": _unreadable_in_folder,
    "far_too_big": _far_too_big,
}


def _input(case: dict[str, Any], folder: Path) -> Path:
    if "file" in case:
        return CORPUS / case["file"]
    return MAKERS[case["make"]](folder)


# --- running a case ---------------------------------------------------------------------------

LOADERS: dict[str, Callable[[Path], Ledger]] = {
    "load": lambda path: load(path),
    "scan": lambda path: Ledger(scan(path)[0].collect(), scan(path)[1]),
}


def _within(seconds: float, work: Callable[[], Any]) -> Any:
    """`work()`, failing (not hanging the suite) if it takes longer than `seconds`."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # handed to the test below
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds} s: it blocks (a FIFO opened?)")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _as_unprivileged(path: Path, how: str) -> tuple[str, int | None]:
    """The LoadError message (and line) of loading `path` in a child process that cannot
    override file permissions, as root can: the way to test chmod 000 when tests run as
    root. Skips when the capability cannot be dropped."""
    libc = ctypes.CDLL(None, use_errno=True)

    def drop_override() -> None:
        for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    script = (
        "import json, sys\n"
        "from tui_ledger.load import LoadError, load, scan\n"
        f"try:\n    {how}(sys.argv[1])\n"
        "except LoadError as error:\n"
        "    print(json.dumps([str(error), error.line]))\n"
        "else:\n    print(json.dumps(None))\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, str(path)],
            preexec_fn=drop_override,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.SubprocessError as error:
        pytest.skip(f"running as root, and cannot drop CAP_DAC_OVERRIDE to test chmod 000: {error}")
    result = json.loads(done.stdout or "null")
    assert result is not None, f"loaded an unreadable file: {done.stdout} {done.stderr}"
    return result[0], result[1]


def _value(expected: Any, *, figure: bool = False) -> Any:
    """A manifest value as Python holds it: `<null>` is None; a figure written as a string
    of digits is an exact Decimal."""
    if expected == NULL:
        return None
    if figure and isinstance(expected, str):
        return Decimal(expected)
    return expected


def _figures(ledger: Ledger, case: dict[str, Any]) -> None:
    comparison = compare(ledger.attempts, ["workflow"], intervals="none")
    rows = {
        view: {row["workflow"]: row for row in comparison.view(view).iter_rows(named=True)}
        for view in ("keep", "drop")
    }
    attempts = list(
        ledger.attempts.select("workflow", "tokens", pl.col("outcome").cast(pl.String)).iter_rows()
    )
    from tui_ledger.text.numbers import exact_per_accepted

    for view in ("keep", "drop"):
        oracle = oracle_summary(attempts, view)
        for group, expected in case.get(view, {}).items():
            row = rows[view][group]
            for name, wanted in expected.items():
                got = row[name]
                if name == "tokens_per_accepted_result":
                    got = exact_per_accepted(row)
                    if isinstance(got, float):
                        assert got == pytest.approx(float(_value(wanted, figure=True)), rel=1e-12)
                        continue
                assert got == _value(wanted, figure=True), f"{view} {group} {name}"
        for group, figures in oracle.items():  # every group, every figure, against the oracle
            row = rows[view][group]
            for name in ("attempts", "accepted", "missing_usage", "total_tokens", "lower_bound"):
                assert row[name] == figures[name], f"{view} {group} {name} (oracle)"
            exact = exact_per_accepted(row)
            if figures["tokens_per_accepted_result"] is None:
                assert exact is None
            elif figures["total_tokens"] < 2**53:
                assert float(exact) == pytest.approx(figures["tokens_per_accepted_result"])


def _json_exact(path: Path, case: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """`summary --format json` prints each figure of the manifest digit for digit."""
    for view in ("keep", "drop"):
        assert main(["summary", str(path), "--format", "json", "--view", view]) == 0
        text = capsys.readouterr().out
        document = json.loads(text, parse_float=Decimal)
        for group, expected in case.get(view, {}).items():
            for name in ("total_tokens", "tokens_per_accepted_result"):
                if name not in expected:
                    continue
                wanted = _value(expected[name], figure=True)
                assert document[group][name] == wanted, f"{view} {group} {name}"
                assert f'"{name}": {wanted}' in text


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
@pytest.mark.parametrize("how", ["load", "scan"])
def test_corpus_case(
    case: dict[str, Any], how: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if case.get("make") == "far_too_big" and how == "scan":
        pytest.skip("scan streams a large file instead of refusing it")
    path = _input(case, tmp_path)
    if "error" in case or "error_starts" in case:
        with unchanged(path):
            if case.get("make") == "unreadable_in_folder" and os.geteuid() == 0:
                message, line = _as_unprivileged(path, how)
            else:
                with pytest.raises(LoadError) as raised:
                    _within(60, lambda: LOADERS[how](path))
                message, line = str(raised.value), raised.value.line
                if "column" in case:
                    assert raised.value.column == case["column"]
        assert "\n" not in message and message.isprintable(), "one line, safe to print"
        if "error" in case:
            assert message == case["error"].format(path=path)
        else:
            assert message.startswith(case["error_starts"].format(path=path))
        if "line" in case:
            assert line == case["line"]
        return

    with unchanged(path):
        ledger = _within(120, lambda: LOADERS[how](path))
    assert ledger.attempts.height == case["attempts"]
    assert [warning.kind for warning in ledger.report.warnings] == case.get("warnings", [])
    if "lines" in case:
        assert ledger.attempts["line"].to_list() == case["lines"]
    for column, values in case.get("cells", {}).items():
        assert ledger.attempts[column].to_list() == [_value(value) for value in values], column
    _figures(ledger, case)
    if case.get("json_exact") and how == "load":
        with unchanged(path):
            _json_exact(path, case, capsys)


def test_every_corpus_file_is_in_the_manifest() -> None:
    named = {case["file"] for case in CASES if "file" in case}
    present = {
        path.name
        for path in CORPUS.iterdir()
        if path.is_file() and path.suffix not in (".py", ".toml") and path.name != ".gitattributes"
    }
    assert present == named
    assert {case["make"] for case in CASES if "make" in case} == set(MAKERS)


# --- beyond single loads ----------------------------------------------------------------------


def test_load_and_scan_agree_on_every_loadable_case(tmp_path: Path) -> None:
    for case in CASES:
        if "attempts" not in case or case.get("make") in ("wide", "big_cell"):
            continue  # those two are compared in test_corpus_case already, and slow
        folder = tmp_path / case["name"]
        folder.mkdir()
        path = _input(case, folder)
        with unchanged(path):
            eager = load(path)
            lazy, report = scan(path)
            assert_same_attempts(lazy.collect(), eager.attempts)
            assert report == eager.report


def test_a_big_cell_is_kept_whole(tmp_path: Path) -> None:
    path = _big_cell(tmp_path)
    with unchanged(path):
        notes = load(path).attempts["notes"].to_list()
    assert [len(note) for note in notes] == [10_000_000, 1]


def test_the_huge_file_message_points_at_summary(tmp_path: Path) -> None:
    path = _far_too_big(tmp_path)
    with unchanged(path), pytest.raises(LoadError) as raised:
        _within(30, lambda: load(path))
    assert "ledger-tui summary` streams files this large" in str(raised.value)


def test_a_load_that_cannot_fit_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.csv"
    path.write_text(HEADER + "lean,1000,true\n" * 1000)
    monkeypatch.setattr(memory, "available_memory", lambda: 1000)
    opened: list[object] = []
    monkeypatch.setattr(tui_ledger.load, "open_input", lambda *args, **kwargs: opened.append(args))

    # 15,023 bytes of CSV need at least 3 bytes of memory each.
    with unchanged(path), pytest.raises(LoadError, match="needs at least 45,069 bytes"):
        load(path)
    assert opened == []


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux's /proc")
def test_ctrl_c_during_a_load_exits_130_with_one_line(tmp_path: Path) -> None:
    """SIGINT while polars reads a large file: a clean stop, no traceback, exit code 130."""
    path = tmp_path / "big.csv"
    rows = 6_000_000
    pl.DataFrame(
        {
            "workflow": pl.Series(["lean", "steady"] * (rows // 2)),
            "tokens": pl.int_range(rows, eager=True),
            "passed": pl.Series([True, False] * (rows // 2)),
        }
    ).write_csv(path)
    with unchanged(path):
        child = subprocess.Popen(
            [sys.executable, "-m", "tui_ledger.cli", "summary", str(path), "--format", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        # Wait until the child is reading the file (it has it open), then press Ctrl+C.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None:
            try:
                opened = {os.readlink(fd) for fd in Path(f"/proc/{child.pid}/fd").iterdir()}
            except OSError:
                opened = set()
            if str(path) in opened:
                break
            time.sleep(0.01)
        child.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err.decode()
    assert err.decode() == "ledger-tui: interrupted\n"
    assert out == b""
    assert time.monotonic() - stopped < 10


async def test_the_app_shows_per_accepted_result_exactly_past_2_53() -> None:
    from tui_ledger.tui.app import LedgerApp

    path = CORPUS / "beyond_2_53.csv"
    with unchanged(path):
        app = LedgerApp([str(path)])
        async with app.run_test(size=(200, 50)) as pilot:
            await settle(pilot)
            strips = app.screen._compositor.render_strips()
            text = "\n".join(strip.text for strip in strips)
    assert "9,007,199,254,740,993" in text
    assert "9,007,199,254,740,992" not in text  # a figure no row adds up to
