"""The app and the chart on a ledger shaped like real runs (issue 13, `tests/real_shaped.py`):
long names sharing long prefixes, groups whose usage was not recorded, lower bounds.

At 80x24, 120x40 and 160x45: no two labels on screen read the same (summary table, bars,
focus block), the group under focus is named whole, the attempts pane shows outcome and
tokens (and the cost, priced), and nothing reads `≥ 0`. The chart marks a lower bound and
leaves out, with a note, the groups whose usage was not recorded.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from rich.cells import cell_len
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Static

from tests import real_shaped
from tests.pilot_helpers import press, screen_text, settle
from tui_ledger.accounting import ledger
from tui_ledger.accounting.prices import PriceTable
from tui_ledger.exports.pareto_svg import not_recorded_groups, pareto_svg
from tui_ledger.text.numbers import format_money
from tui_ledger.tui.app import LedgerApp
from tui_ledger.tui.arrangement import NARROW_BELOW
from tui_ledger.tui.screens.pareto_screen import LOWER_BOUND_ARROW, ParetoScreen
from tui_ledger.tui.widgets.attempts_columns import (
    OUTCOME_GLYPH_WIDTH,
    OUTCOME_SYMBOL_WIDTH,
    Column,
    cut_middle,
    fit_columns,
)
from tui_ledger.tui.widgets.attempts_table import AttemptsTable
from tui_ledger.tui.widgets.bars import Bars
from tui_ledger.tui.widgets.summary_pane import SummaryPane

SIZES = [(80, 24), (120, 40), (160, 45)]


@pytest.fixture
def real_csv(tmp_path: Path) -> Path:
    return real_shaped.write_csv(tmp_path / "real.csv")


def fits(line: str, room: int) -> bool:
    """A focus block line inside `room` cells, but for what trails its figures (`Wilson`,
    `(bootstrap)`: a space, then words the pane may cut)."""
    figures = re.sub(r"  (\([a-z /]+\)|Wilson|…)$", "", line)
    return cell_len(figures) <= room


def visible_columns(table: AttemptsTable) -> list[str]:
    """The columns wholly inside the table's visible width."""
    left = table.scroll_offset.x
    right = left + table.scrollable_content_region.width
    return [c.name for c in table._columns if c.offset >= left and c.offset + c.span <= right]


def table_labels(pane: SummaryPane) -> list[str]:
    table = pane.groups_table
    return [table.row_cells(row)[0].plain for row in range(table.row_count)]


def bar_labels(pane: SummaryPane) -> list[str]:
    """The group names at the start of the bars' keep lines."""
    lines = pane.query_one(Bars).render().plain.splitlines()[1:]
    return [line.split(" keep ")[0].strip() for line in lines if " keep " in line]


async def focus_block_text(pilot: Pilot[Any], app: LedgerApp) -> str:
    """The screen with the summary scrolled to the focused group's block."""
    app.summary.scroll_to_widget(app.summary.query_one("#focus", Static), animate=False)
    await settle(pilot)
    return screen_text(app)


async def show_attempts(pilot: Pilot[Any], size: tuple[int, int]) -> None:
    """Below 100 columns the summary has the first turn: Tab gives it to the attempts."""
    if size[0] < NARROW_BELOW:
        await press(pilot, "tab")


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_labels_distinct_focus_whole_and_attempts_show_outcome_and_tokens(
    real_csv: Path, size: tuple[int, int]
) -> None:
    app = LedgerApp([str(real_csv)])
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        pane = app.summary
        labels = table_labels(pane)
        assert len(labels) == len(real_shaped.GROUPS)
        assert len(set(labels)) == len(labels), labels
        # The three `20250923_droid_claude-4-…` groups read apart, in the table and bars.
        bars = bar_labels(pane)
        assert len(bars) == len(real_shaped.GROUPS)
        assert len(set(bars)) == len(bars), bars
        # The group under focus is named whole in its block (below 120x40 the callout comes
        # first, so the block may be a scroll away).
        text = screen_text(app)
        assert pane.focus_label is not None
        assert pane.focus_label in await focus_block_text(pilot, app)
        # The attempts pane shows the outcome and the tokens without scrolling (below 100
        # columns once Tab gives it the turn).
        await show_attempts(pilot, size)
        shown = visible_columns(app.table)
        assert {"outcome", "tokens"} <= set(shown), shown
        assert "≥ 0" not in text
        # Moving down the groups keeps every focused name whole.
        pane.groups_table.focus()
        for _ in range(len(labels) - 1):
            await press(pilot, "down")
            assert pane.focus_label is not None
            assert pane.focus_label in await focus_block_text(pilot, app)


@pytest.mark.parametrize("size", SIZES[1:], ids=[f"{w}x{h}" for w, h in SIZES[1:]])
async def test_attempts_cells_of_different_groups_read_differently(
    real_csv: Path, size: tuple[int, int]
) -> None:
    # Priced, so the cost column takes room from the names too.
    app = LedgerApp([str(real_csv)], prices=PriceTable().with_flat(3.0))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        table = app.table
        column = next(c for c in table._columns if c.name == "workflow")
        if size[0] == 120:
            assert column.width < column.natural  # cut there, or this test proves nothing
        shown: dict[str, str] = {}
        for y in range(1, table._body_height() + 1):
            row = table.scroll_offset.y + y - 1
            if row >= table.row_count:
                break
            text = table.render_line(y).text
            cell = text[column.offset : column.offset + column.span].strip()
            value = table.rows.value("workflow", row)
            assert shown.setdefault(value, cell) == cell  # one group, one reading
        assert len(shown) >= 3
        assert len(set(shown.values())) == len(shown), shown


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_a_priced_ledger_shows_outcome_tokens_and_cost_whole(
    real_csv: Path, size: tuple[int, int]
) -> None:
    # $3 per million tokens: per-attempt costs such as `$0.0095` and `$0.010`.
    app = LedgerApp([str(real_csv)], prices=PriceTable().with_flat(3.0))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await show_attempts(pilot, size)
        shown = visible_columns(app.table)
        assert {"outcome", "tokens", "cost"} <= set(shown), shown
        # Whole, not clipped by the pane: every cost on screen is one the ledger holds.
        table = app.table
        column = next(c for c in table._columns if c.name == "cost")
        assert column.width >= column.least
        text = screen_text(app)
        assert app.pipeline.ledger is not None
        costs = app.pipeline.ledger.attempts.get_column("cost").drop_nulls()
        for value in costs.head(5).to_list():
            assert format_money(value) in text
        # The focus block still fits both views' figures beside each other, whole (only a
        # trailing `…`, which says an interval goes on, may be cut at 80 columns).
        app.summary.groups_table.focus()
        await settle(pilot)
        focus = app.summary.query_one("#focus", Static)
        room = focus.content_size.width
        lines = focus.render().plain.splitlines()
        assert any("KEEP FAILURES  DROP FAILURES" in line for line in lines), lines
        assert all(fits(line, room) for line in lines), (room, lines)


async def test_cursor_still_reaches_every_column_at_80(real_csv: Path) -> None:
    app = LedgerApp([str(real_csv)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.table
        table.focus()
        await settle(pilot)
        seen = set()
        for _ in range(len(table.column_names)):
            seen.add(app.column_under_cursor())
            region = table.scrollable_content_region
            column = table._columns[table.cursor_column]
            # The cursor's column is on screen (its start, when wider), scrolled to if need be.
            left = table.scroll_offset.x
            assert left <= column.offset < left + region.width
            assert column.offset + min(column.span, region.width) <= left + region.width
            await press(pilot, "right")
        assert seen == set(table.column_names)


def column(name: str, kind: str, width: int) -> Column:
    return Column(name, name, kind, width, 0, width)  # type: ignore[arg-type]


WIDE = [
    column("workflow", "text", 36),
    column("task", "text", 30),
    column("outcome", "outcome", 10),
    column("tokens", "integer", 9),
    column("cost", "money", 8),
    column("source", "text", 40),
]


def span(columns: list[Column], names: set[str]) -> int:
    return max(c.offset + c.span for c in columns if c.name in names)


@pytest.mark.parametrize("available", [200, 100, 60, 45, 33, 30, 26])
def test_fit_columns_keeps_outcome_tokens_and_cost_inside(available: int) -> None:
    fitted = fit_columns(WIDE, available)
    assert sorted(c.name for c in fitted) == sorted(c.name for c in WIDE)  # nothing dropped
    assert span(fitted, {"outcome", "tokens", "cost"}) <= available
    offsets = [c.offset for c in fitted]
    assert offsets == sorted(offsets) and offsets[0] == 0
    for before, after in itertools.pairwise(fitted):
        assert after.offset == before.offset + before.span


def test_fit_columns_shrinks_text_before_moving_it() -> None:
    fitted = {c.name: c for c in fit_columns(WIDE, 70)}
    # Both text columns stay before the outcome, shrunk; the outcome keeps its words.
    assert [c.name for c in fit_columns(WIDE, 70)][:2] == ["workflow", "task"]
    assert fitted["workflow"].width < 36 and fitted["task"].width < 30
    assert fitted["outcome"].width == 10
    assert fitted["source"].width == 40  # after the essential columns: untouched


def test_fit_columns_at_its_narrowest_shows_the_outcome_symbol_first() -> None:
    fitted = fit_columns(WIDE, 26)
    assert [c.name for c in fitted][:3] == ["outcome", "tokens", "cost"]
    assert fitted[0].width == OUTCOME_SYMBOL_WIDTH
    moved = {c.name: c.width for c in fitted}
    assert moved["workflow"] == 36 and moved["task"] == 30  # whole again, to scroll to


def test_fit_columns_gives_the_outcome_its_words_back_when_the_text_moved_out() -> None:
    fitted = fit_columns(WIDE, 33)
    assert [c.name for c in fitted][:3] == ["outcome", "tokens", "cost"]
    assert fitted[0].width == 10


NARROW = [
    column("workflow", "text", 36),
    Column("outcome", "outcome", "outcome", 10, 0, 10, 7),
    Column("tokens", "tokens", "integer", 8, 0, 8, 6),
    Column("cost", "cost", "money", 7, 0, 7, 7),
]


@pytest.mark.parametrize("available", [26, 24, 22, 21])
def test_fit_columns_on_the_narrowest_pane_gives_up_the_arrow_room_then_the_heading(
    available: int,
) -> None:
    fitted = fit_columns(NARROW, available)
    assert [c.name for c in fitted][:3] == ["outcome", "tokens", "cost"]
    assert span(fitted, {"outcome", "tokens", "cost"}) <= available
    widths = {c.name: c.width for c in fitted}
    assert widths["cost"] == 7  # a number is never cut to fit
    expected = {  # the symbol with its heading and the arrow's room, then without each
        26: (OUTCOME_SYMBOL_WIDTH, 8),
        24: (OUTCOME_SYMBOL_WIDTH, 8),
        22: (OUTCOME_SYMBOL_WIDTH, 6),
        21: (OUTCOME_GLYPH_WIDTH, 6),
    }
    assert (widths["outcome"], widths["tokens"]) == expected[available]


def test_fit_columns_before_layout_changes_nothing() -> None:
    assert [(c.name, c.width) for c in fit_columns(WIDE, 0)] == [(c.name, c.width) for c in WIDE]


def test_cut_middle_keeps_both_ends() -> None:
    assert cut_middle("20250923_droid_claude-4-1-opus", 16) == "20250923…-1-opus"
    assert cut_middle("short", 16) == "short"
    assert cell_len(cut_middle("日本語のタスク名前", 8)) <= 8


# --------------------------------------------------------------------------- the chart


def comparison() -> ledger.Comparison:
    return ledger.compare(real_shaped.attempts_frame(), ["workflow"])


def test_svg_marks_lower_bounds_and_leaves_out_unrecorded_groups_with_a_note() -> None:
    svg = pareto_svg(comparison())
    root = ET.fromstring(svg.encode())
    texts = ["".join(node.itertext()) for node in root.iter("{http://www.w3.org/2000/svg}text")]
    notes = " ".join(texts)
    for group in real_shaped.NOT_RECORDED_GROUPS:
        # Named once, in the note under the chart: no point, no label, no tooltip.
        assert svg.count(group) == 1 and group in notes
    assert "(tokens not recorded: every attempt reads 0 or nothing)" in notes
    assert f"Not plotted (no accepted attempt): {real_shaped.NOTHING_ACCEPTED}" in notes
    arrows = ["".join(node.itertext()) for node in root.iter("{http://www.w3.org/2000/svg}polygon")]
    assert sorted(arrows) == sorted(
        f"{group}: a lower bound, the figure is ≥ {figure}"
        for group, figure in ((real_shaped.OPUS, "150k"), (real_shaped.OPUS_1, "647k"))
    )
    assert "≥ 0" not in svg


def test_not_recorded_groups_follow_the_core() -> None:
    assert not_recorded_groups(comparison()) == list(real_shaped.NOT_RECORDED_GROUPS)
    recorded = real_shaped.attempts_frame().filter(pl.col("workflow") == real_shaped.SONNET)
    assert not_recorded_groups(ledger.compare(recorded, ["workflow"])) == []


async def test_in_app_chart_arrow_and_note(real_csv: Path) -> None:
    app = LedgerApp([str(real_csv)])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await press(pilot, "c")
        assert isinstance(app.screen, ParetoScreen)
        text = screen_text(app)
        assert f"●{LOWER_BOUND_ARROW}" in text
        assert "not recorded (every attempt reads 0 or nothing)" in text
        for group in real_shaped.NOT_RECORDED_GROUPS:
            assert group in text
        assert "≥ 0" not in text


async def test_terminal_bench_folders_read_apart_at_120(tmp_path: Path) -> None:
    folders = real_shaped.write_terminal_bench(tmp_path / "runs")
    app = LedgerApp([str(folder) for folder in folders])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        labels = table_labels(app.summary)
        assert len(labels) == len(real_shaped.GROUPS)
        assert len(set(labels)) == len(labels), labels
        assert {"outcome", "tokens"} <= set(visible_columns(app.table))
        text = screen_text(app)
        assert "≥ 0" not in text and "not recorded" in text


def test_per_task_view_cuts_task_names_apart() -> None:
    from tui_ledger.accounting.per_task import per_task
    from tui_ledger.schema import OUTCOME_DTYPE
    from tui_ledger.tui.screens.audit_screens import TASK_LABEL, PerTaskScreen

    prefix = "terminal-bench-core-0.1.1-" * 2
    names = [f"{prefix}fix-git-history", f"{prefix}fix-git-remote", "hello-world"]
    attempts = pl.DataFrame(
        {
            "workflow": ["g"] * 6,
            "task": [name for name in names for _ in range(2)],
            "outcome": ["passed", "failed", "failed", "failed", "passed", "passed"],
            "tokens": [10, 20, 30, 40, 50, 60],
        },
        schema_overrides={"outcome": OUTCOME_DTYPE},
    )
    tasks = per_task(attempts, {"workflow": "g"})
    screen = PerTaskScreen("g", {"workflow": "g"}, tasks)

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(screen)

    async def run() -> list[str]:
        async with Host().run_test(size=(160, 45)) as pilot:
            await pilot.pause()
            table = screen.table
            return [table.get_row_at(row)[0].plain for row in range(table.row_count)]

    shown = asyncio.run(run())
    names = [text.removeprefix("✘ ") for text in shown]
    assert len(set(names)) == 3, names
    assert all(cell_len(name) <= TASK_LABEL for name in names)
    assert "hello-world" in names


async def test_bars_say_not_recorded_where_usage_never_was(real_csv: Path) -> None:
    app = LedgerApp([str(real_csv)])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        lines = app.summary.query_one(Bars).render().plain.splitlines()[1:]
        order = list(app.comparison.labels) if app.comparison else []
        for index, group in enumerate(order):
            keep, drop = lines[2 * index], lines[2 * index + 1]
            if group in real_shaped.NOT_RECORDED_GROUPS:
                assert keep.endswith("keep  not recorded") and drop.endswith("not recorded")
            elif group == real_shaped.NOTHING_ACCEPTED:
                assert keep.endswith("— no accepted attempt")
            else:
                assert "█" in keep and "not recorded" not in keep


async def test_per_task_view_of_an_unmetered_group_reads_not_recorded(real_csv: Path) -> None:
    from tui_ledger.tui.screens.audit_screens import PerTaskScreen

    app = LedgerApp([str(real_csv)])
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        pane = app.summary
        pane.groups_table.focus()
        for _ in range(len(real_shaped.GROUPS)):
            if pane.focus_label == real_shaped.UNMETERED:
                break
            await press(pilot, "down")
        assert pane.focus_label == real_shaped.UNMETERED
        await press(pilot, "p")
        assert isinstance(app.screen, PerTaskScreen)
        text = screen_text(app)
        table = app.screen.table
        rows = [[cell.plain for cell in table.get_row_at(row)] for row in range(table.row_count)]
        assert rows and all(row[4] == "not recorded" for row in rows), rows  # tokens
        assert all(row[5] == "not recorded" for row in rows), rows  # per accepted
        assert "accepted · tokens not recorded" in text  # (read "not recorded tokens")
        assert "≥ 0" not in text and " 0 tokens" not in text


async def test_the_focus_block_follows_a_narrower_terminal(real_csv: Path) -> None:
    # Its notes wrap at the pane's width: drawn at 160 columns, then read at 80.
    app = LedgerApp([str(real_csv)], prices=PriceTable().with_flat(3.0))
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        await press(pilot, "shift+tab")  # the attempts had the focus: the summary's turn
        focus = app.summary.query_one("#focus", Static)
        room = focus.content_size.width
        lines = focus.render().plain.splitlines()
        assert any(line.lstrip().startswith("†") for line in lines), lines
        assert all(fits(line, room) for line in lines), (room, lines)
