"""A large file's first screen: its first rows at once, the figures only from the whole file.

`load.load_head` reads a CSV's first whole records exactly as `load` reads them; the app shows
them in the table while `load` reads the whole file, and the summary pane says the file is
still being read instead of showing any figure of those rows. The whole file's load is held
back here (an Event the test sets), so what the screen shows meanwhile can be read.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from textual.pilot import Pilot

import tui_ledger.load as load_module
from tests.pilot_helpers import SETTLE_SECONDS, record_toasts, screen_text, settle
from tui_ledger.load import LoadError, load, load_head
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.load_progress import LOAD_BYTES_PER_SECOND, Partial, progress_text
from tui_ledger.tui.loading import (
    HEAD_BYTES,
    SMALL_LOAD_BYTES,
)

SIZE = (160, 45)
WORKFLOWS = ("lean", "steady", "careful")


def ledger_text(rows: int, *, quoted_from: int | None = None) -> str:
    """A CSV of `rows` attempts (deterministic); from row `quoted_from` on, the notes column
    holds a quoted cell with a line end in it."""
    lines = ["workflow,task,tokens,passed,notes"]
    for index in range(rows):
        workflow = WORKFLOWS[index % 3]
        passed = "true" if (index * 7) % 5 < 2 else "false"
        notes = '"two\nlines"' if quoted_from is not None and index >= quoted_from else "plain"
        lines.append(f"{workflow},task-{index % 97},{1000 + index % 311},{passed},{notes}")
    return "\n".join(lines) + "\n"


def big_csv(tmp_path: Path, name: str = "big.csv", **options: Any) -> Path:
    """A CSV larger than the app's small-file limit, so its first screen shows a head."""
    path = tmp_path / name
    path.write_text(ledger_text(12_000, **options), encoding="utf-8")
    assert path.stat().st_size > SMALL_LOAD_BYTES
    return path


# --------------------------------------------------------------------------- load_head


def test_the_head_is_the_whole_loads_first_rows(tmp_path: Path) -> None:
    path = big_csv(tmp_path)
    head = load_head([path], HEAD_BYTES)
    assert head is not None
    whole = load([path]).attempts
    assert 1_000 < head.attempts.height < whole.height
    assert head.attempts.schema == whole.schema
    assert head.attempts.equals(whole.head(head.attempts.height))
    assert head.attempts.get_column("line").to_list()[:2] == [2, 3]


def test_quoted_cells_without_line_ends_still_give_a_head(tmp_path: Path) -> None:
    path = tmp_path / "quoted.csv"
    rows = ["workflow,tokens,passed,notes"]
    rows += [f'w{i % 2},{i},true,"a, b"' for i in range(20_000)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    head = load_head([path], HEAD_BYTES)
    assert head is not None
    whole = load([path]).attempts
    assert head.attempts.equals(whole.head(head.attempts.height))


@pytest.mark.parametrize(
    "case",
    ["line end in a quoted cell", "small file", "gzip", "two files", "bad cell", "json"],
)
def test_no_head_where_it_cannot_be_cut_or_read_alone(tmp_path: Path, case: str) -> None:
    paths: list[Path]
    if case == "line end in a quoted cell":
        paths = [big_csv(tmp_path, quoted_from=100)]
    elif case == "small file":
        paths = [tmp_path / "small.csv"]
        paths[0].write_text(ledger_text(50), encoding="utf-8")
    elif case == "gzip":
        paths = [tmp_path / "big.csv.gz"]
        paths[0].write_bytes(gzip.compress(ledger_text(12_000).encode(), compresslevel=0))
        assert paths[0].stat().st_size > HEAD_BYTES
    elif case == "two files":
        paths = [big_csv(tmp_path, "a.csv"), big_csv(tmp_path, "b.csv")]
    elif case == "bad cell":
        text = ledger_text(12_000).replace("lean,task-0,1000", "lean,task-0,-5", 1)
        paths = [tmp_path / "bad.csv"]
        paths[0].write_text(text, encoding="utf-8")
        with pytest.raises(LoadError, match="line 2"):
            load(paths)
    else:
        frame = pl.read_csv(big_csv(tmp_path).read_bytes())
        paths = [tmp_path / "big.ndjson"]
        frame.write_ndjson(paths[0])
    assert load_head(paths, HEAD_BYTES) is None


# --------------------------------------------------------------------------- the app


class HeldLoad:
    """`load.load` held back until `release()`: the app shows its head meanwhile."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, fail: bool = False) -> None:
        self.gate = threading.Event()
        self.fail = fail
        monkeypatch.setattr(load_module, "load", self._load)

    def _load(self, *args: Any, **kwargs: Any) -> Any:
        self.gate.wait()
        if self.fail:
            raise LoadError("big.csv: line 9,000, column tokens: -5 is negative")
        return load(*args, **kwargs)

    def release(self) -> None:
        self.gate.set()


async def until(pilot: Pilot[Any], condition: Callable[[], object], what: str) -> None:
    """Let the app run until `condition()` holds (without waiting for it to settle: the whole
    file's load is held back)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"after {SETTLE_SECONDS:.0f} s, still not: {what}")
        await pilot.pause()


async def test_the_head_shows_at_once_and_no_figure_passes_for_final(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = big_csv(tmp_path)
    held = HeldLoad(monkeypatch)
    head = load_head([path], HEAD_BYTES)
    assert head is not None
    rows = head.attempts.height
    accepted = head.attempts.filter(pl.col("outcome") == "passed").height
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        try:
            await until(pilot, lambda: app.table.frame.height == rows, "the head in the table")
            await until(pilot, lambda: "Reading the whole file" in screen_text(app), "the progress")
            text = screen_text(app)
            assert "load" in app.unsettled  # the figures are not final: tests wait on
            assert "Summary by" not in text
            assert "per acc" not in text
            header = "\n".join(text.splitlines()[:2])
            assert "attempts" not in header and "loading" in header  # it counts nothing yet
            assert f"{rows:,} of {rows:,} attempts · the file's first rows" in text
            assert app.collect_warnings() == []
            # The toggle and the filter answer on the rows read so far.
            await pilot.press("t")
            await until(pilot, lambda: app.table.frame.height == accepted, "the head's view")
            assert "Reading the whole file" in screen_text(app)
            await pilot.press("t", "slash", *"steady", "enter")
            await until(
                pilot,
                lambda: set(app.table.frame.get_column("workflow").cast(pl.String)) == {"steady"},
                "the head filtered",
            )
            assert "Summary by" not in screen_text(app)
            # Nothing that would show or write the head's figures runs before they are final.
            said = record_toasts(app)
            await pilot.press("p", "c", "e")
            await until(pilot, lambda: len(said) >= 3, "three notices")
            assert len(app.screen_stack) == 1
            assert all("waits for the whole file" in text for text in said)
        finally:
            held.release()
        await settle(pilot)
        whole = load([path]).attempts
        steady = whole.filter(pl.col("workflow") == "steady").height
        assert app.pipeline.partial is None
        assert app.table.frame.height == steady
        text = screen_text(app)
        assert "Summary by workflow" in text
        assert "Reading the whole file" not in text
        assert f"{whole.height:,} attempts · 1 workflow" not in text
        assert f"{whole.height:,} attempts" in text
        assert app.timings.history[0][0] == "head"


async def test_a_whole_file_that_fails_after_its_head_still_ends_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = big_csv(tmp_path)
    held = HeldLoad(monkeypatch, fail=True)
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.table.frame.height > 0, "the head in the table")
        held.release()
        await until(pilot, lambda: app.return_code is not None, "the app to end")
    assert app.return_code == 2
    assert app.error_message is not None
    assert "-5 is negative" in app.error_message


async def test_a_file_without_a_head_loads_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = big_csv(tmp_path, quoted_from=10)
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.pipeline.partial is None
        assert "head" not in [name for name, _ in app.timings.history]
        assert "Summary by workflow" in screen_text(app)


def test_the_progress_says_estimates_and_never_a_figure() -> None:
    partial = Partial(rows=5_000, head_bytes=250_000, size=500_000_000, since=100.0)
    assert partial.estimated_rows == 10_000_000
    expected = 500_000_000 / LOAD_BYTES_PER_SECOND
    early = progress_text(partial, 100.0 + expected / 4, read=False)
    assert "about 10,000,000 rows" in early
    assert "about 2,500,000 rows read (25%)" in early
    assert "(estimates)" in early and "none is shown before" in early
    late = progress_text(partial, 100.0 + expected * 2, read=False)
    assert "longer than estimated" in late and "rows read" not in late
    done = progress_text(partial, 100.0 + expected * 2, read=True)
    assert done.startswith("Computing the summary of every row")
    assert "first 5,000 rows" in done
