"""What the app's summary says on a real-shaped ledger (tests/real_shaped.py): `not recorded`
for unmetered groups, rank ranges, lower bounds, and a callout that claims nothing the
bounds leave open. Pure functions of a comparison: no app is run."""

from __future__ import annotations

import re

from rich.cells import cell_len

from tests.real_shaped import (
    GROUPS,
    NOTHING_ACCEPTED,
    OPUS,
    SONNET,
    UNMETERED,
    attempts_frame,
)
from tui_ledger.accounting.ledger import compare
from tui_ledger.tui.widgets.focus_text import FOCUS_NAME_WIDTH, callout_text, focus_block
from tui_ledger.tui.widgets.summary_text import (
    COST,
    TOKENS,
    figure_text,
    group_columns,
    group_row,
    missing_notes,
    rank_text,
    total_text,
)

COMPARISON = compare(attempts_frame(), intervals="none")


def row(view: str, group: str) -> dict[str, object]:
    return COMPARISON.view(view).row(GROUPS_ORDER.index(group), named=True)  # type: ignore[arg-type]


GROUPS_ORDER = COMPARISON.labels


def test_figures_totals_and_ranks_read_honestly() -> None:
    assert sorted(GROUPS_ORDER) == sorted(GROUPS)
    unmetered = row("keep", UNMETERED)
    assert figure_text(TOKENS, unmetered) == "not recorded"
    assert total_text(TOKENS, unmetered) == "not recorded"
    assert rank_text(unmetered) == "—"
    opus = row("keep", OPUS)
    assert figure_text(TOKENS, opus) == "≥ 150,000"
    assert total_text(TOKENS, opus) == "≥ 300,000"
    assert rank_text(opus) == "1–3"
    assert rank_text(row("keep", SONNET)) == "1–2"
    assert rank_text(row("drop", OPUS)) == "1"
    nothing = row("keep", NOTHING_ACCEPTED)
    assert figure_text(TOKENS, nothing) == "—"
    assert rank_text(nothing) == "4"


def test_table_row_and_notes() -> None:
    columns = group_columns(COMPARISON, "keep", TOKENS)
    trap = COMPARISON.trap.row(GROUPS_ORDER.index(UNMETERED), named=True)
    cells, notes = group_row(UNMETERED, row("keep", UNMETERED), trap, columns, "keep")
    assert "not recorded" in notes
    assert cells[1].plain == "not recorded" and cells[3].plain == "—"
    lines = missing_notes([], notes, COMPARISON.keep, TOKENS, COMPARISON.keep.height)
    text = " · ".join(lines)
    assert "not recorded: every attempt's usage missing or 0" in text
    assert "≥ lower bound" in text and "2–4: rank as far as the bounds prove it" in text


def test_focus_block_and_callout() -> None:
    index = GROUPS_ORDER.index(UNMETERED)
    block = focus_block(COMPARISON, index, UNMETERED, TOKENS, "keep").plain
    words = " ".join(block.split())  # the notes wrap to the block's width
    assert "≥ 0" not in block and " 0 tokens" not in block
    assert "not recorded: every attempt's usage is missing or 0" in words
    assert "tokens not recorded" in words  # what dropping hides
    sentence = callout_text(COMPARISON, TOKENS).plain
    assert "undecided" in sentence and "cheapest" not in sentence


def test_a_cost_interval_whose_ends_differ_by_float_noise_reads_as_equal() -> None:
    # 0.1 * 3 is 0.30000000000000004: seven more places would only print the noise.
    assert COST.compact_interval(0.3, 0.1 * 3) == "$0.30–$0.30"
    assert COST.compact_interval(123.4561, 123.4569) == "$123.456–$123.457"


def test_the_focus_block_fits_the_summarys_narrowest_width() -> None:
    # 56 cells wide, less its border, padding and scrollbar: 51 (docs/LAYOUT.md).
    for index in range(len(GROUPS)):
        block = focus_block(COMPARISON, index, GROUPS[index][:FOCUS_NAME_WIDTH], TOKENS, "keep")
        for line in block.plain.splitlines():
            # Only words trailing the figures (`Wilson`, `(bootstrap)`) may run past.
            assert len(re.sub(r"  (\([a-z /]+\)|Wilson|…)$", "", line)) <= 51, line
        heading = block.plain.splitlines()[0]
        assert heading.endswith("KEEP FAILURES  DROP FAILURES ")


def test_the_words_naming_an_intervals_method_show_whole_or_not_at_all() -> None:
    comparison = compare(attempts_frame())  # with intervals: `Wilson`, `(bootstrap)` trail
    index = comparison.labels.index(OPUS)

    def lines(room: int) -> list[str]:
        block = focus_block(comparison, index, OPUS[:FOCUS_NAME_WIDTH], TOKENS, "keep", room)
        return block.plain.splitlines()

    unbounded = lines(0)
    rate = next(line for line in unbounded if line.lstrip().startswith("pass rate"))
    assert rate.endswith(" Wilson")
    trailed = [line for line in unbounded if line.endswith((" Wilson", ")"))]
    assert len(trailed) >= 2  # the pass rate's and the 95% interval's
    # Where the whole line fits, it is there; one cell short, the words go, not cut to "Wi…".
    for line in trailed:
        figures = re.sub(r" (\([a-z /]+\)|Wilson)$", "", line)
        assert line in lines(cell_len(line))
        assert figures.rstrip() in [shown.rstrip() for shown in lines(cell_len(line) - 1)]
    for shown in lines(cell_len(rate) - 1):
        assert "Wilson" not in shown and not shown.endswith("…")
