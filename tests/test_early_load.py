"""A file read while the interface starts (`load.early`): the same ledger as `load`, the same
error, and an app whose first screen shows the final figures without a head.

`ledger-tui FILE` starts `EarlyLoad` before it imports the app when the files are at most
`EARLY_LOAD_BYTES`; the app's first load takes the ledger from it (waiting `EARLY_LOAD_WAIT`
for it before the first frame, in the load worker past that).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import tui_ledger.load as load_module
import tui_ledger.tui.run as run_module
from tests.pilot_helpers import screen_text, settle
from tests.test_first_rows import big_csv, until
from tui_ledger import cli
from tui_ledger.load import LoadError, load
from tui_ledger.load import early as early_module
from tui_ledger.load.early import EarlyLoad, worth_reading_early
from tui_ledger.tui import loading as pipeline_module
from tui_ledger.tui.app import LedgerApp

SIZE = (160, 45)


def no_second_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app must take the ledger from the early load, never read the files again."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the app read the files again")

    monkeypatch.setattr(load_module, "load", refuse)


# --------------------------------------------------------------------------- the core


def test_the_early_load_gives_what_load_gives(tmp_path: Path) -> None:
    path = big_csv(tmp_path)
    early = EarlyLoad([str(path)], {"zero_usage_is_missing": True, "fmt": None})
    assert early.wait(30)
    ledger = early.result()
    expected = load([path], zero_usage_is_missing=True)
    assert ledger.attempts.equals(expected.attempts)
    assert ledger.attempts.schema == expected.attempts.schema
    assert ledger.report.lines() == expected.report.lines()
    assert early.seconds > 0


def test_the_early_load_raises_loads_error_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("workflow,tokens,passed\nlean,-5,true\n", encoding="utf-8")
    with pytest.raises(LoadError) as direct:
        load([path])
    early = EarlyLoad([str(path)], {})
    for _ in range(2):  # asked twice, it says the same
        with pytest.raises(LoadError) as raised:
            early.result()
        assert str(raised.value) == str(direct.value)


def test_only_regular_files_up_to_the_limit_are_read_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = big_csv(tmp_path)
    assert worth_reading_early([str(path)])
    assert not worth_reading_early([str(tmp_path)])  # a folder: importers, many files
    assert not worth_reading_early([str(tmp_path / "missing.csv")])
    monkeypatch.setattr(early_module, "EARLY_LOAD_BYTES", path.stat().st_size * 2 - 1)
    assert worth_reading_early([str(path)])
    assert not worth_reading_early([str(path), str(path)])  # the sizes add up


def test_the_command_line_starts_it_except_when_watching(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = big_csv(tmp_path)
    given: list[Any] = []

    def run_interactive(paths: list[str], **options: Any) -> int:
        given.append(options["early"])
        return 0

    monkeypatch.setattr(run_module, "run_app", run_interactive)
    assert cli.main([str(path)]) == 0
    assert cli.main([str(path), "--watch"]) == 0
    started, watched = given
    assert isinstance(started, EarlyLoad) and watched is None
    assert started.result().attempts.equals(load([path]).attempts)


# --------------------------------------------------------------------------- the app


async def test_the_first_screen_shows_the_final_figures_without_a_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = big_csv(tmp_path)
    expected = load([path]).attempts
    early = EarlyLoad([str(path)], {})
    assert early.wait(30)
    no_second_load(monkeypatch)
    app = LedgerApp([str(path)], early=early)
    async with app.run_test(size=SIZE) as pilot:
        # Before anything else runs: the first frame's recompute is the whole file's.
        assert app.pipeline.partial is None
        assert app.table.frame.height == expected.height
        await settle(pilot)
        text = screen_text(app)
        assert "Summary by workflow" in text
        assert f"{expected.height:,} attempts" in text
        assert [name for name, _ in app.timings.history][:1] == ["load"]
        assert app.early_load is None  # taken: a reload (`r`) reads the files again


class SlowEarlyLoad(EarlyLoad):
    """An early load that is not done until `release()`."""

    def __init__(self, paths: list[str]) -> None:
        self.gate = threading.Event()
        super().__init__(paths, {})

    def _run(self, paths: list[str], options: dict[str, Any]) -> None:
        self.gate.wait()
        super()._run(paths, options)


async def test_an_early_load_not_done_in_time_is_waited_for_without_a_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = big_csv(tmp_path)
    expected = load([path]).attempts
    monkeypatch.setattr(pipeline_module, "EARLY_LOAD_WAIT", 0.01)
    early = SlowEarlyLoad([str(path)])
    no_second_load(monkeypatch)
    app = LedgerApp([str(path)], early=early)
    async with app.run_test(size=SIZE) as pilot:
        try:
            await until(pilot, lambda: "load" in app.unsettled, "the load under way")
            assert app.pipeline.partial is None  # no head: its figures would wait behind
            assert app.table.frame.height == 0
        finally:
            early.gate.set()
        await settle(pilot)
        assert app.table.frame.height == expected.height
        assert "Summary by workflow" in screen_text(app)
        assert "head" not in [name for name, _ in app.timings.history]


async def test_an_early_load_that_failed_ends_the_app_with_its_message(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("workflow,tokens,passed\nlean,-5,true\n", encoding="utf-8")
    early = EarlyLoad([str(path)], {})
    assert early.wait(30)
    app = LedgerApp([str(path)], early=early)
    async with app.run_test(size=SIZE):
        pass
    assert app.return_code == 2
    assert app.error_message is not None and "line 2" in app.error_message
