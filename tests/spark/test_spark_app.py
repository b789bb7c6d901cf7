"""The app on Spark (`ledger-tui --spark URL PATH`), against a real Spark Connect server: the
same figures as the local app on the same file for `t`, `/`, `b`, sorting and paging; the
"computing on Spark" state; a stale query interrupted on the server; one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.pilot_helpers import press, screen_text, settle, wait_until
from tui_ledger.accounting.ledger import Comparison
from tui_ledger.tui.app import LedgerApp

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "sample_data" / "runs.csv"  # the article's fixture: lean/steady, 6 attempts
DEMO = REPO / "sample_data" / "demo.csv"  # 360 attempts, 3 workflows, tasks and models
SIZE = (160, 45)


def spark_app(spark: Any, path: Path, *, page_rows: int | None = None) -> LedgerApp:
    """The app on the test session's server (one session per process: docs/SPARK.md)."""
    from tui_ledger.spark.commands import open_input

    opened = open_input(None, [str(path)], load_options={}, connect_to=lambda _url: spark)
    app = LedgerApp([str(path)], spark=opened)
    if page_rows is not None:
        app.pipeline.page_rows = page_rows  # type: ignore[attr-defined]
        app.pipeline.prefetch_rows = page_rows // 4  # type: ignore[attr-defined]
    return app


def assert_same_comparison(local: Comparison, spark: Comparison) -> None:
    """Every figure of both views and the trap frame, delta-method bounds to 1e-12 relative
    (docs/SPARK.md: a float spread summed in another order), and the pairwise verdicts."""
    for name in ("keep", "drop", "trap"):
        left, right = getattr(local, name), getattr(spark, name)
        assert left.columns == right.columns, name
        bounds = [c for c in left.columns if c.endswith(("_lo", "_hi"))]
        assert_frame_equal(left.drop(bounds), right.drop(bounds), check_dtypes=False)
        assert_frame_equal(
            left.select(bounds), right.select(bounds), check_dtypes=False, rel_tol=1e-12
        )
    # The pairwise verdicts: the engine counts the cells, the draws are made here, so the same
    # seed gives the same pairs bit for bit (docs/SPARK.md, "Pairs").
    assert local.pairs is not None
    assert spark.pairs == local.pairs


def shown_rows(app: LedgerApp) -> pl.DataFrame:
    """The table's rows, in the columns both engines show (Spark's `source` is the server's
    absolute path, the local `line` has no Spark counterpart)."""
    frame = app.table.frame
    return frame.select([c for c in frame.columns if c not in ("source", "line")])


async def local_state(path: Path, keys: list[tuple[str, ...]]) -> list[tuple[Any, ...]]:
    """For the local app: after each group of keys, (comparison, table rows, title counts)."""
    app = LedgerApp([str(path)])
    states = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        states.append(_state(app))
        for group in keys:
            await press(pilot, *group)
            states.append(_state(app))
    return states


def _state(app: LedgerApp) -> tuple[Any, ...]:
    assert app.comparison is not None
    return (app.comparison, shown_rows(app), app.view, app.by, app.filter_text)


KEYS: list[tuple[str, ...]] = [
    ("t",),  # DROP FAILURES
    ("t",),  # KEEP FAILURES
    ("slash", *"lean", "enter"),  # a filter
    ("slash", "ctrl+u", *"tokens>1100", "enter"),  # a filter on a parsed count
    ("t",),
]


async def test_the_article_on_spark_shows_the_local_figures(spark: Any) -> None:
    local = await local_state(RUNS, KEYS)
    app = spark_app(spark, RUNS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        seen = [_state(app)]
        for group in KEYS:
            await press(pilot, *group)
            seen.append(_state(app))
        text = screen_text(app)
    assert len(seen) == len(local)
    for (want, rows, view, by, where), (got, got_rows, got_view, got_by, got_where) in zip(
        local, seen, strict=True
    ):
        assert (view, by, where) == (got_view, got_by, got_where)
        assert_same_comparison(want, got)
        assert_frame_equal(rows, got_rows, check_dtypes=False)
    assert "Spark ·" in text


async def test_demo_group_by_sort_and_paging_match_the_local_app(spark: Any) -> None:
    """`b` (workflow + task), `]` on tokens, and paging through every filtered row in pages of
    40: the same figures, and the same rows in the same order, as the local app."""
    from textual.widgets import SelectionList

    from tui_ledger.tui.screens.screens import GroupByScreen

    local = LedgerApp([str(DEMO)])
    async with local.run_test(size=SIZE) as pilot:
        await settle(pilot)
        local.group_by(["workflow", "task"])
        await press(pilot, "slash", *"model-a", "enter")
        local_comparison = local.comparison
        local_rows = shown_rows(local)
    assert local_comparison is not None

    app = spark_app(spark, DEMO, page_rows=40)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await press(pilot, "b")
        assert isinstance(app.screen, GroupByScreen)
        choices = app.screen.query_one(SelectionList)
        names = [choices.get_option_at_index(i).value for i in range(choices.option_count)]
        await press(pilot, *["down"] * names.index("task"), "space")
        await press(pilot, "enter")
        assert app.by == ("workflow", "task")
        await press(pilot, "slash", *"model-a", "enter")
        assert app.comparison is not None
        assert_same_comparison(local_comparison, app.comparison)
        total = local_rows.height
        assert total > 80  # more than two pages
        assert app.table.row_count == 40
        assert "first 40 fetched · Spark" in str(app.table.border_subtitle)
        assert f"{total:,} of 360 attempts" in str(app.table.border_subtitle)
        # End, again and again: each time the cursor nears the rows' end, one more page.
        while app.table.row_count < total:
            before = app.table.row_count
            await press(pilot, "end")
            await settle(pilot)
            assert app.table.row_count in (before, min(before + 40, total))
            if app.table.row_count == before:
                raise AssertionError(f"no page fetched after {before} rows")
        assert "all fetched · Spark" in str(app.table.border_subtitle)
        assert_frame_equal(local_rows, shown_rows(app), check_dtypes=False)
        pages = [s for name, s in app.pipeline.query_seconds if name == "page"]  # type: ignore[attr-defined]
        assert len(pages) == -(-total // 40) - 1
        # A sort: the first page comes sorted by the engine, ties in the file's order.
        tokens = app.table.column_names.index("input_tokens")
        await press(pilot, "home")
        await press(pilot, *["l"] * tokens)
        await press(pilot, "right_square_bracket")
        assert app.table.row_count == 40
        expected = local_rows.sort(
            "input_tokens", descending=True, nulls_last=True, maintain_order=True
        ).head(40)
        assert_frame_equal(expected, shown_rows(app), check_dtypes=False)
        # Enter: the attempt's log, found from the page's row (its source is the file's
        # URI on Spark: `trajectory.openable`), and `i`: its every field.
        await press(pilot, "enter")
        await settle(pilot)
        assert "read demo_traces/" in screen_text(app) and "no such file" not in screen_text(app)
        await press(pilot, "i")
        assert "input_tokens" in screen_text(app)


async def test_computing_on_spark_is_shown_and_unsettled(spark: Any) -> None:
    app = spark_app(spark, RUNS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pipeline: Any = app.pipeline
        await pilot.press("slash", *"steady")
        # Right after the keystroke its query runs: the state says so, and the app is unsettled.
        assert "computing on Spark" in str(app.summary.border_subtitle)
        assert "computing on Spark" in app.unsettled
        await settle(pilot)
        assert str(app.summary.border_subtitle).startswith("Spark · ")
        assert any(state.startswith("computing on Spark · ") for state in pipeline.states)
        assert app.filter_text == "steady"
        assert app.comparison is not None
        assert app.comparison.keep["workflow"].to_list() == ["steady"]


async def test_a_stale_query_is_interrupted_on_the_server(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first keystroke's query runs long; the second keystroke interrupts it on the server
    (its tag) and only the second's figures are shown."""
    import tui_ledger.tui.spark_pipeline as spark_pipeline

    real = spark_pipeline.spark_comparison
    slow: dict[str, Any] = {"next": False}

    def comparison(opened: Any, by: Any, intervals: Any, figures: Any = None) -> Any:
        if slow["next"]:
            slow["next"] = False
            # A query that runs for hours unless interrupted: one stage, no shuffle. (A shuffle
            # lets adaptive execution submit a map stage from its own thread; an interrupt
            # that lands just before it misses that stage, which then runs to its end: here
            # it held both cores for 13 minutes, and every later query waited. The app's
            # own queries are finite, so such a stage only finishes what was stale.)
            started = time.monotonic()
            slow["started"] = True
            try:
                spark.range(0, 10**12, 1, 2).where("id % 7 = 9").collect()
            except Exception as error:
                slow["error"] = f"{type(error).__name__}: {error}"
                slow["seconds"] = time.monotonic() - started
                raise
        return real(opened, by, intervals, figures)

    monkeypatch.setattr(spark_pipeline, "spark_comparison", comparison)
    try:
        await type_over_a_slow_query(spark_app(spark, RUNS), slow)
    finally:
        spark.interruptAll()  # whatever happened, nothing of this test runs on after it


async def type_over_a_slow_query(app: LedgerApp, slow: dict[str, Any]) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pipeline: Any = app.pipeline
        slow["next"] = True
        await pilot.press("slash", "l")
        # Let the app run until the slow query is on the server (a condition, not a sleep).
        deadline = time.monotonic() + 60
        while not slow.get("started") and time.monotonic() < deadline:
            await pilot.pause()
        assert slow.get("started")
        await pilot.press(*"ean")
        await settle(pilot, seconds=120)
        # Interrupted on the server, in seconds, not left to run for minutes.
        assert pipeline.interrupted >= 1
        assert "cancel" in slow["error"].lower() or "interrupt" in slow["error"].lower()
        assert slow["seconds"] < 60
        assert app.filter_text == "lean"
        assert app.comparison is not None
        assert app.comparison.keep["workflow"].to_list() == ["lean"]


def test_the_command_opens_the_app_and_fails_in_one_line(spark_url: str, tmp_path: Path) -> None:
    """Exit 2 and one line: an unreachable server, a missing table, a bad cell."""
    bad = tmp_path / "bad.csv"
    bad.write_text("workflow,tokens,passed\nlean,12a,true\n")
    closed = "sc://127.0.0.1:9"  # nothing listens on the discard port
    cases = [
        ([f"--spark={closed}", str(RUNS)], "Spark"),
        ([f"--spark={spark_url}", "table:spark_catalog.default.no_such_table"], "no_such_table"),
        ([f"--spark={spark_url}", str(bad)], "12a"),
    ]
    env = {**os.environ, "TERM": "dumb"}
    for arguments, words in cases:
        done = subprocess.run(
            [sys.executable, "-m", "tui_ledger.cli", *arguments],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
            check=False,
        )
        assert done.returncode == 2, (arguments, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ledger-tui: error: "), done.stderr
        assert words in lines[0], done.stderr


async def audit_state(app: LedgerApp, pilot: Any) -> tuple[pl.DataFrame, int, int, str]:
    """`p` (the first group task by task), `c` (the chart opens), `w` (the warnings)."""
    from tui_ledger.tui.screens.audit_screens import PerTaskScreen
    from tui_ledger.tui.screens.pareto_screen import ParetoScreen
    from tui_ledger.tui.screens.screens import WarningsScreen

    await press(pilot, "p")
    await wait_until(pilot, lambda: isinstance(app.screen, PerTaskScreen), "the per-task screen")
    screen = app.screen
    assert isinstance(screen, PerTaskScreen)
    tasks = screen.frame
    await press(pilot, "escape")
    await press(pilot, "c")
    assert isinstance(app.screen, ParetoScreen)
    await press(pilot, "escape")
    await press(pilot, "w")
    assert isinstance(app.screen, WarningsScreen)
    await press(pilot, "escape")
    return tasks, app.warning_count(), app.note_count(), app.summary.focus_label or ""


async def test_the_audit_screens_on_spark_show_the_local_figures(spark: Any) -> None:
    local = LedgerApp([str(DEMO)])
    async with local.run_test(size=SIZE) as pilot:
        await settle(pilot)
        want = await audit_state(local, pilot)
    app = spark_app(spark, DEMO)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        got = await audit_state(app, pilot)
        seconds = dict(app.pipeline.query_seconds)  # type: ignore[attr-defined]
    assert_frame_equal(want[0], got[0], check_dtypes=False)
    assert want[1:] == got[1:]
    assert "per task" in seconds and "checks" in seconds


async def export_from(app: LedgerApp, pilot: Any, summary: Path, attempts: Path) -> None:
    from textual.widgets import Input

    from tui_ledger.tui.screens.screens import ExportScreen

    await press(pilot, "e")
    assert isinstance(app.screen, ExportScreen)
    app.screen.query_one("#summary-path", Input).value = str(summary)
    app.screen.query_one("#attempts-path", Input).value = str(attempts)
    app.screen.query_one("#attempts-path", Input).focus()
    await press(pilot, "enter")
    await wait_until(pilot, lambda: attempts.exists() and summary.exists(), "the export written")


async def test_export_on_spark_writes_what_the_cluster_returns(spark: Any, tmp_path: Path) -> None:
    """`e` after a filter and a sort: the attempts the cluster returns (every filtered row, not
    the pages fetched), in the table's order, and the summary, as the local app writes them."""
    files = {
        engine: (tmp_path / f"{engine}.csv", tmp_path / f"{engine}.parquet")
        for engine in ("local", "spark")
    }
    for engine, (summary, attempts) in files.items():
        app = LedgerApp([str(DEMO)]) if engine == "local" else spark_app(spark, DEMO, page_rows=20)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await press(pilot, "slash", *"model-b", "enter")
            column = app.table.column_names.index("output_tokens")
            await press(pilot, *["l"] * column, "left_square_bracket")
            await export_from(app, pilot, summary, attempts)
            if engine == "spark":
                assert app.table.row_count == 20  # the table fetched one page; the export all
    local, spark_rows = (pl.read_parquet(files[e][1]) for e in ("local", "spark"))
    assert local.height == 135
    keep = [c for c in local.columns if c not in ("source", "line")]
    assert_frame_equal(local.select(keep), spark_rows.select(keep), check_dtypes=False)
    assert files["local"][0].read_text() == files["spark"][0].read_text()


def test_the_command_opens_the_app_in_a_real_terminal(spark_url: str, tmp_path: Path) -> None:
    """`ledger-tui --spark URL runs.csv` in tmux: the article's figures, t, / and q, as
    tests/test_tmux.py drives the local app (the same figures on screen)."""
    import shutil

    from tests.spark.conftest import unavailable
    from tests.test_tmux import COMMAND, Pane, attempt_lines, header

    if shutil.which("tmux") is None or not COMMAND.exists():
        unavailable("needs tmux and the installed ledger-tui command (.ci/run installs both)")
    pane = Pane([str(COMMAND), "--spark", spark_url, str(RUNS)], cwd=tmp_path)
    try:
        screen = pane.wait_for(
            lambda s: "KEEP FAILURES" in header(s) and "3,000" in s and "Spark ·" in s,
            seconds=180,
        )
        assert sum(line.count("✘ failed") for line in attempt_lines(screen, "lean")) == 2
        assert "6 of 6 attempts · all fetched · Spark" in screen
        pane.keys("t")
        # The header turns before the drop view's page is drawn (and "1,000" is a kept
        # attempt's tokens in the keep view too): wait for the table as well.
        screen = pane.wait_for(
            lambda s: "DROP FAILURES" in header(s) and len(attempt_lines(s, "lean")) == 1
        )
        assert "✘" not in "".join(attempt_lines(screen, "lean")) and "1,000" in screen
        pane.keys("t")
        pane.wait_for(lambda s: "KEEP FAILURES" in header(s) and len(attempt_lines(s, "lean")) == 3)
        pane.keys("/")
        pane.keys("steady")
        screen = pane.wait_for(
            lambda s: (
                "KEEP FAILURES" in header(s)
                and not attempt_lines(s, "lean")
                and len(attempt_lines(s, "steady")) == 3
                and "Spark ·" in s
            ),
            seconds=120,
        )
        pane.keys("Enter")
        pane.wait_for(lambda s: "3 of 6 attempts" in s)
        pane.keys("q")
        deadline = time.monotonic() + 60
        while pane.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not pane.alive(), f"q did not quit the app:\n{pane.screen()}"
    finally:
        pane.close()


async def test_a_failure_before_the_first_figures_ends_the_app_in_one_line(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server going away between opening the input and the first figures: one line, exit
    2, as a load error (later failures are a toast and keep what is shown)."""
    import tui_ledger.tui.spark_pipeline as spark_pipeline
    from tui_ledger.spark.errors import SparkEngineError

    def failing(*_args: Any) -> Any:
        raise SparkEngineError("the Spark server failed the query: it went away")

    monkeypatch.setattr(spark_pipeline, "spark_comparison", failing)
    app = spark_app(spark, RUNS)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
    assert app.return_code == 2
    assert app.error_message == "ledger-tui: error: the Spark server failed the query: it went away"


async def test_a_recompute_that_fails_on_a_fault_of_ours_says_so(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault of ours in a keystroke's figures (here a RuntimeError from the comparison) is a
    toast saying the screen still shows the last figures, as the local app says it; the next
    key computes as usual."""
    import tui_ledger.tui.spark_pipeline as spark_pipeline
    from tests.pilot_helpers import failing_when_on, record_toasts

    failing = failing_when_on(
        monkeypatch, spark_pipeline, "spark_comparison", RuntimeError("the comparison broke")
    )
    app = spark_app(spark, DEMO)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        said = record_toasts(app)
        failing["on"] = True
        await press(pilot, "slash", *"lean", "enter")
        await settle(pilot)
        assert any("could not be computed (RuntimeError: the comparison broke)" in t for t in said)
        assert app.return_code is None  # figures were shown: the app goes on
        assert app.comparison is not None and len(app.comparison.keep) == 4  # the last ones
        failing["on"] = False
        await press(pilot, "slash", "ctrl+u", *"steady", "enter")
        await settle(pilot)
        assert app.comparison is not None
        assert app.comparison.keep["workflow"].to_list() == ["steady-planner"]


async def test_the_state_stays_computing_until_the_checks_and_pairs_are_in(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """New figures' checks and pairs are queries that start once the figures are drawn: the
    state line says "computing on Spark" from the figures' query to their end, with no frame
    between saying the work was done (a benchmark typed into that gap, and its keystroke
    then shared the server with them)."""
    import tui_ledger.tui.spark_pipeline as spark_pipeline

    busy_at_follow_up: list[bool] = []
    follow_up = spark_pipeline.SparkPipeline._follow_up

    def recording(self: Any, snapshot: Any) -> None:
        busy_at_follow_up.append(self._busy())
        follow_up(self, snapshot)

    monkeypatch.setattr(spark_pipeline.SparkPipeline, "_follow_up", recording)
    app = spark_app(spark, DEMO)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert busy_at_follow_up == [True]
        assert str(app.summary.border_subtitle).startswith("Spark · ")
        assert app.pipeline.checks is not None


async def test_a_keystroke_stops_the_last_figures_checks_and_a_failure_asks_again(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter typed while the last figures' checks run stops them at once (they would only
    share the server with the new figures' query); when that query fails, the figures on
    screen are still the last ones, and their checks are asked for again."""
    import threading

    import tui_ledger.tui.spark_pipeline as spark_pipeline
    from tests.pilot_helpers import failing_when_on, record_toasts
    from tui_ledger.spark.errors import SparkEngineError

    checking, release = threading.Event(), threading.Event()
    find_checks = spark_pipeline.SparkPipeline.find_checks

    def slow_checks(self: Any, *args: Any) -> Any:
        checking.set()
        release.wait(30)  # the first figures' checks wait here until the keystroke came
        return find_checks(self, *args)

    stopped: list[object] = []
    recompute = spark_pipeline.SparkPipeline.recompute

    def recording(self: Any, **kwargs: Any) -> None:
        recompute(self, **kwargs)
        stopped.append(self._stopped_for)

    monkeypatch.setattr(spark_pipeline.SparkPipeline, "find_checks", slow_checks)
    monkeypatch.setattr(spark_pipeline.SparkPipeline, "recompute", recording)
    went_away = SparkEngineError("the Spark server failed the query: it went away")
    failing = failing_when_on(monkeypatch, spark_pipeline, "spark_comparison", went_away)
    app = spark_app(spark, DEMO)
    async with app.run_test(size=SIZE) as pilot:
        deadline = time.monotonic() + 120
        while not checking.is_set():  # (not `wait_until`: it would wait for the checks)
            assert time.monotonic() < deadline, "the first checks never started"
            await pilot.pause(0.05)
        deadline = time.monotonic() + 120
        pipeline: Any = app.pipeline
        first, origin = pipeline.snapshot, pipeline._figures_origin
        said = record_toasts(app)
        failing["on"] = True
        checking.clear()
        await pilot.press("slash", "l")  # (not `press`: it would wait for the checks)
        assert stopped[-1] is origin  # the keystroke stopped the running checks
        while not any("it went away" in text for text in said):
            assert time.monotonic() < deadline, "the keystroke's figures never failed"
            await pilot.pause(0.05)
        # The first checks, held before their query began (where no interrupt reaches), go on
        # only now: let go before the failure, they could end first and leave nothing to ask.
        release.set()
        await settle(pilot)
        assert checking.is_set()  # the checks were asked for again
        assert pipeline.snapshot.generation == first.generation  # the last figures stay
        assert pipeline.checks is not None  # and their checks came
        assert pipeline._stopped_for is None
        assert str(app.summary.border_subtitle).startswith("Spark · ")
