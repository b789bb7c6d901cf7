"""The app as a user meets it: the article's figures in both views, literal text, honest gaps.

Each test opens the real app headless (Textual's Pilot) on a small file and reads what is on the
screen: the summary's cells, the callout, the badge, the table's border, the screen's text.
"""

from __future__ import annotations

import gc
from pathlib import Path

import polars as pl
import pytest
from textual.binding import Binding
from textual.message import Message

from tests.pilot_helpers import screen_text, settle, wait_until
from tui_ledger.tui import commands, messages
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.run import run_app
from tui_ledger.tui.snapshot import Snapshot
from tui_ledger.tui.widgets.header import ViewBadge
from tui_ledger.tui.widgets.summary_pane import SummaryPane

REPO = Path(__file__).resolve().parent.parent
RUNS = REPO / "sample_data" / "runs.csv"
SIZE = (160, 45)


def summary_cells(app: LedgerApp) -> dict[str, list[str]]:
    """The summary table as {group label: [cell text, ...]}, header included under ""."""
    table = app.query_one(SummaryPane).groups_table
    rows: dict[str, list[str]] = {"": table.column_keys}
    for index in range(table.row_count):
        cells = [cell.plain for cell in table.row_cells(index)]
        rows[cells[0]] = cells
    return rows


def per_accepted(app: LedgerApp, group: str) -> str:
    """The per-accepted cell of a group in the summary table (without the small-sample `†`)."""
    cells = summary_cells(app)
    return cells[group][cells[""].index("per accepted")].rstrip("†")


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the article


async def test_article_figures_in_keep_view() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.view == "keep"
        assert per_accepted(app, "lean") == "3,000"
        assert per_accepted(app, "steady") == "1,600"
        text = screen_text(app)
        assert "KEEP FAILURES" in text
        assert "6 attempts · 2 workflows" in text
        assert "6 of 6 attempts" in text


async def test_toggle_changes_figures_table_and_badge_in_one_step() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await pilot.pause()
        assert app.view == "drop"
        assert app.query_one(ViewBadge).view == "drop"
        assert per_accepted(app, "lean") == "1,000"
        assert per_accepted(app, "steady") == "1,600"
        assert app.table.row_count == 4  # the two failed lean attempts leave the table
        text = screen_text(app)
        assert "DROP FAILURES" in text
        assert "Attempts  hides 2 attempts · 2,000 tokens" in text
        assert "4 of 6 attempts" in text
        await pilot.press("t")
        await pilot.pause()
        assert per_accepted(app, "lean") == "3,000"
        assert app.table.row_count == 6


async def test_callout_is_computed_and_names_the_flip() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        callout = str(app.query_one("#callout").render())
        assert "hides 2,000 tokens" in callout
        # 3 attempts a side: the flip is named, and so is the noise that leaves it open
        assert "would flip the ranking" in callout
        assert "lean looks cheapest" in callout
        assert "steady 1,600 vs 3,000 when failures are kept" in callout
        assert "the flip is within noise" in callout


async def test_focused_group_shows_both_views_and_trap_factor() -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        focus = str(app.query_one("#focus").render())
        assert focus.startswith("▸ lean")
        assert "KEEP FAILURES" in focus and "DROP FAILURES" in focus
        line = next(row for row in focus.splitlines() if "tokens / accepted" in row)
        assert line.split()[-2:] == ["3,000†", "1,000"]  # † the keep figure's interval is wide
        assert "×3.0" in focus
        # Moving the cursor to a steady attempt puts steady under focus.
        await pilot.press("G")
        await pilot.pause()
        focus = str(app.query_one("#focus").render())
        assert focus.startswith("▸ steady")


async def test_group_with_no_accepted_attempt_shows_a_dash(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "zero.csv",
        "workflow,tokens,passed\nlean,1000,true\nbroken,500,false\nbroken,700,false\n",
    )
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert per_accepted(app, "broken") == "—"
        text = screen_text(app)
        assert "no accepted attempt" in text
        await pilot.press("t")
        await pilot.pause()
        assert per_accepted(app, "broken") == "—"
        assert "broken" in summary_cells(app)  # the group stays visible in the trap's view


async def test_missing_usage_is_a_dash_and_a_lower_bound(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "gaps.csv",
        "workflow,tokens,passed\nlean,1000,true\nlean,,false\nsteady,1600,true\n",
    )
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert per_accepted(app, "lean") == "≥ 1,000"
        assert app.table.frame["tokens"].null_count() == 1
        text = screen_text(app)
        assert "lower bound" in text


# --------------------------------------------------------------------------- literal text

HOSTILE = ["[bold]lean[/bold]", "[/]", "a[b]c", "esc\x1b[31mred"]


async def test_hostile_workflow_names_stay_literal_through_moves_and_toggles(
    tmp_path: Path,
) -> None:
    rows = "".join(
        f'"{name}",{1000 + i},{"true" if i % 2 else "false"}\n'
        for i, name in enumerate(HOSTILE * 2)
    )
    path = write(tmp_path, "hostile.csv", "workflow,tokens,passed\n" + rows)
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key in ("j", "j", "t", "k", "t", "l", "G", "t"):
            await pilot.press(key)
            await pilot.pause()
        text = screen_text(app)
        assert "[bold]lean[/bold]" in text
        assert "[/]" in text
        assert "a[b]c" in text
        assert "esc\\x1b[31mred" in text  # the ESC byte is shown, never sent to the terminal
        assert "\x1b" not in text
        labels = set(summary_cells(app)) - {""}
        assert {"[bold]lean[/bold]", "[/]", "a[b]c", "esc\\x1b[31mred"} <= labels


# --------------------------------------------------------------------------- loading


async def test_load_error_exits_with_code_2_and_the_message(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.csv", "workflow,tokens,passed\nlean,lots,true\n")
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
    assert app.return_code == 2
    assert app.error_message is not None
    assert app.error_message.startswith("ledger-tui: error:")
    assert "\n" not in app.error_message
    assert "line 2" in app.error_message and "tokens" in app.error_message


def test_run_app_prints_the_load_error_after_the_screen_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fake_run(self: LedgerApp, *args: object, **kwargs: object) -> None:
        self.error_message = "ledger-tui: error: x.csv line 2, column 'tokens': 'lots'"
        self._return_code = 2

    monkeypatch.setattr(LedgerApp, "run", fake_run)
    assert run_app([str(tmp_path / "x.csv")], demo=False, load_options={}) == 2
    assert capsys.readouterr().err == "ledger-tui: error: x.csv line 2, column 'tokens': 'lots'\n"


def test_run_app_returns_the_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}

    def fake_run(self: LedgerApp, *args: object, **kwargs: object) -> None:
        seen["paths"] = self.paths
        self._return_code = 2

    monkeypatch.setattr(LedgerApp, "run", fake_run)
    assert run_app([str(RUNS)], demo=False, load_options={"fmt": None}) == 2
    assert seen["paths"] == [str(RUNS)]


# --------------------------------------------------------------------------- the registry


def test_every_registry_action_exists_on_the_app_or_the_attempt_screen() -> None:
    # The attempt screen the app opens (the grader's signals and `s` over AttemptScreen's own).
    from tui_ledger.tui.screens.attempt_signals import SignalsAttemptScreen

    for command in commands.COMMANDS:
        name = commands.action_name(command.action)
        owner = SignalsAttemptScreen if command.scope == commands.ATTEMPT_SCOPE else LedgerApp
        assert hasattr(owner, f"action_{name}"), name


def test_bindings_come_from_the_registry() -> None:
    from tui_ledger.tui.screens.attempt_screen import AttemptScreen

    for owner, scope in (
        (LedgerApp, commands.LEDGER_SCOPE),
        (AttemptScreen, commands.ATTEMPT_SCOPE),
    ):
        keys = {binding.key for binding in owner.BINDINGS if isinstance(binding, Binding)}
        for command in commands.COMMANDS:
            if command.scope == scope:
                for key in filter(None, command.keys.split(",")):
                    assert key in keys


async def test_unavailable_commands_are_greyed_out(tmp_path: Path) -> None:
    path = write(tmp_path, "empty.csv", "workflow,tokens,passed\nlean,1000,true\n")
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.check_action("filter_cell", ()) is True
        assert app.check_action("clear_filter", ()) is None  # nothing to clear
        await pilot.press("slash", *"nomatch")
        await settle(pilot)
        assert app.table.row_count == 0
        assert app.check_action("filter_cell", ()) is None  # no cell under the cursor
        assert app.check_action("clear_filter", ()) is True


async def test_a_filter_matching_nothing_says_so(tmp_path: Path) -> None:
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"zzz")
        await settle(pilot)
        assert app.table.row_count == 0
        assert "No attempts match the filter." in screen_text(app)
        assert "0 of 6 attempts" in screen_text(app)


async def test_a_failed_reload_keeps_what_was_loaded(tmp_path: Path) -> None:
    path = write(tmp_path, "runs.csv", RUNS.read_text())
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        path.write_text("workflow,tokens,passed\nlean,lots,true\n")
        await pilot.press("r")
        await settle(pilot)
        assert app.is_running and app.return_code is None
        assert app.table.row_count == 6
        assert per_accepted(app, "lean") == "3,000"
        await wait_until(
            pilot, lambda: "reload failed" in screen_text(app), "a reload-failed toast"
        )


async def test_the_palette_shows_hostile_values_literally(tmp_path: Path) -> None:
    path = write(tmp_path, "h.csv", 'workflow,tokens,passed\n"[bold]x[/bold]",1,true\n')
    app = LedgerApp([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"filter")
        await wait_until(
            pilot,
            lambda: "Filter to workflow = [bold]x[/bold]" in screen_text(app),
            "the palette offering the literal value",
        )


# --------------------------------------------------------------------------- the compact frame

DEMO = REPO / "sample_data" / "demo.csv"


async def _screens_after_each_step(steps: list[tuple[str, ...]]) -> list[str]:
    from tests.pilot_helpers import press

    app = LedgerApp([str(DEMO)])
    screens = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for keys in steps:
            await press(pilot, *keys)  # settled: the compact frame's adoption included
            screens.append(screen_text(app))
    return screens


async def test_the_compact_frame_shows_exactly_what_the_plain_one_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Large files get Categorical text and filter through distinct values (compact.compact_text);
    the demo is small, so compaction is forced here and every screen compared with the plain
    frame's, step by step: filters (word, column, regex, negated), toggle, sort, filter to cell."""
    from tui_ledger.accounting import compact

    steps = [
        ("slash", *"lean", "enter"),
        ("slash", "ctrl+u", *"task:fix -failed", "enter"),
        ("slash", "ctrl+u", *"workflow~^s", "enter"),
        ("t",),
        ("right", "right", "]"),
        ("left", "down", "down", "f"),  # task="..." from the cell under the cursor
        ("slash", "ctrl+u", "enter"),
    ]
    plain = await _screens_after_each_step(steps)
    monkeypatch.setattr(compact, "COMPACT_MIN_ROWS", 0)
    seen: list[object] = []
    original = compact.compact_text

    def spy(frame: object, **options: object) -> object:
        compact, values = original(frame, **options)  # type: ignore[arg-type]
        seen.append(compact.schema["workflow"])
        return compact, values

    monkeypatch.setattr("tui_ledger.tui.pipeline.compact_text", spy)
    compact = await _screens_after_each_step(steps)
    assert seen and all(dtype == pl.Categorical for dtype in seen)
    assert len(set(plain)) == len(steps)  # every step changed the screen
    for step, (want, got) in enumerate(zip(plain, compact, strict=True)):
        assert got == want, f"step {step}: {steps[step]}"


async def test_the_cubes_figures_show_exactly_what_the_rows_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A large ledger's cube (`cube.build_cube`, once compacted) answers the filters and
    groupings of its key columns; forced on the demo here, every screen is the plain frame's,
    step by step: words, a column term, a negation, an outcome shortcut, a regex, a range of
    tokens (`tokens>2000`, from the cells' sorted usage), the toggle, a sort and a cleared
    filter."""
    from collections.abc import Sequence

    from tui_ledger.accounting import compact, cube
    from tui_ledger.accounting.comparison import Comparison

    steps = [
        ("slash", *"lean", "enter"),
        ("slash", "ctrl+u", *"task:fix -failed", "enter"),
        ("slash", "ctrl+u", *"workflow~^s", "enter"),
        ("t",),
        ("slash", "ctrl+u", *"tokens>2000", "enter"),
        ("right", "right", "]"),
        ("slash", "ctrl+u", "enter"),
    ]
    plain = await _screens_after_each_step(steps)
    monkeypatch.setattr(compact, "COMPACT_MIN_ROWS", 0)
    monkeypatch.setattr(cube, "CUBE_MIN_ROWS", 0)
    monkeypatch.setattr(cube, "ROWS_PER_CELL", 1)
    answered: list[tuple[str, ...]] = []
    original = cube.Cube.compare

    def spy(
        self: cube.Cube,
        where: pl.Expr | None,
        by: Sequence[str],
        tokens: cube.TokenRange | None = None,
    ) -> Comparison:
        answered.append(tuple(by) if tokens is None else ("tokens range", *by))
        return original(self, where, by, tokens)

    monkeypatch.setattr(cube.Cube, "compare", spy)
    with_cube = await _screens_after_each_step(steps)
    assert answered  # the cube was built and asked
    assert ("tokens range", "workflow") in answered  # `tokens>2000`: a range of its cells
    for step, (want, got) in enumerate(zip(plain, with_cube, strict=True)):
        assert got == want, f"step {step}: {steps[step]}"


async def test_a_recompute_that_fails_says_so_and_the_next_one_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fault of ours inside a recompute (here a RuntimeError from the snapshot) is a toast
    saying the screen still shows the last figures, not figures that silently stay; the next
    key recomputes as usual."""
    from tests.pilot_helpers import failing_when_on, press, record_toasts
    from tui_ledger.tui import pipeline

    failing = failing_when_on(
        monkeypatch, pipeline, "compute_snapshot", RuntimeError("the cube broke")
    )
    app = LedgerApp([str(DEMO)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        said = record_toasts(app)
        failing["on"] = True
        await press(pilot, "slash", *"lean", "enter")
        assert any("could not be computed (RuntimeError: the cube broke)" in t for t in said)
        assert app.comparison is not None and len(app.comparison.keep) == 4  # the last ones
        failing["on"] = False
        await press(pilot, "slash", "ctrl+u", *"steady", "enter")
        assert app.comparison is not None
        assert app.comparison.keep["workflow"].to_list() == ["steady-planner"]


async def test_finished_workers_let_their_snapshots_go() -> None:
    """Textual keeps a finished worker in a reference cycle until the cyclic collector runs,
    and the worker keeps its arguments; the app clears them, so old snapshots (and their
    filtered frames) go as soon as nothing else holds them. The collector is off here, as it
    is between its runs."""
    from tests.pilot_helpers import press

    gc.collect()
    gc.disable()
    try:
        app = LedgerApp([str(DEMO)])
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            for text in ("lean", "steady", "fix", "-failed", "tokens>100"):
                await press(pilot, "slash", "ctrl+u", *text, "enter")
            alive = [o for o in gc.get_objects() if isinstance(o, Snapshot)]
            assert len(alive) <= 2, f"{len(alive)} snapshots alive"
    finally:
        gc.enable()


# --------------------------------------------------------------------------- shutting down


def _late_report(app: LedgerApp, kind: str) -> Message:
    """A report a worker could post just before the app shuts down, built from what is shown."""
    pipeline = app.pipeline
    snapshot, ledger = pipeline.snapshot, pipeline.ledger
    assert snapshot is not None and ledger is not None
    if kind == "intervals":
        return messages.IntervalsReady(snapshot.comparison, snapshot.comparison, 0.0)
    if kind == "recomputed":
        return messages.Recomputed(pipeline.generation, snapshot)
    return messages.ChecksReady(pipeline.checks_generation, pipeline.checks or [], 0.0)


@pytest.mark.parametrize("kind", ["intervals", "recomputed", "checks"])
async def test_a_report_arriving_while_the_app_shuts_down_is_dropped(kind: str) -> None:
    """Textual removes the screens before the app stops handling messages, so a worker's
    report can arrive when the panes are gone (a stress run caught `IntervalsReady` drawing a
    summary whose callout had been removed, and the app ended in a traceback). Such a report
    is dropped. The report is posted at exactly that moment: right after the screens are
    removed (`App._close_all`), before the app's queue closes."""
    dispatched: list[Message] = []
    app = LedgerApp([str(RUNS)])
    async with app.run_test(size=SIZE, message_hook=dispatched.append) as pilot:
        await settle(pilot)
        report = _late_report(app, kind)
        close_all = app._close_all

        async def close_all_then_report() -> None:
            await close_all()
            assert not app.screen_stack, "the screens are gone"
            app.post_message(report)

        app._close_all = close_all_then_report  # type: ignore[method-assign]
    # Leaving `run_test` shut the app down; it re-raises what a handler raised meanwhile.
    assert any(message is report for message in dispatched), "the report was never handled"
