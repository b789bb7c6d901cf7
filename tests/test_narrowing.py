"""Whether one filter keeps only rows another keeps (`narrowing.narrows`), and the figures
recent recomputes of a frame remember (`recent_figures`)."""

from __future__ import annotations

import polars as pl
import pytest

from tui_ledger.accounting.compact import text_values
from tui_ledger.accounting.rows import Rows, matching_rows, narrowed_rows
from tui_ledger.filtering.narrowing import narrows
from tui_ledger.filtering.query import parse_filter
from tui_ledger.filtering.recent_figures import ROWS_SHARE, recent_for
from tui_ledger.schema import OUTCOME_DTYPE

FRAME = pl.DataFrame(
    {
        "workflow": ["lean", "steady", "Lean-x", "wide"] * 5,
        "task": [f"task-{i}" for i in range(20)],
        "outcome": ["passed", "failed", "passed", "error"] * 5,
        "tokens": [100 * i for i in range(20)],
        "cost": [0.5 * i for i in range(20)],
    }
)


VALUES = text_values(FRAME)  # the frame's distinct values, once (as the app holds them)


def _parsed(text: str, values: bool = False) -> pl.Expr:
    expression = parse_filter(text, FRAME.schema, VALUES if values else None)
    assert expression is not None
    return expression


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("lea", "lean"),
        ("ea", "lean"),
        ("task:task-1", "task:task-12"),
        ("tokens>200", "tokens>2000"),
        ("tokens>200", "tokens>=201"),
        ("tokens>=200", "tokens>200"),
        ("tokens>=200", "tokens>=200"),
        ("tokens:>5", "tokens>50"),
        ("tokens<2000", "tokens<200"),
        ("tokens<=200", "tokens<200"),
        ("tokens<200", "tokens<=199"),
        ("cost>1", "cost>1.5"),
        ("lea", "lea tokens>5"),
        ("lea tokens>5", "tokens>50 lean"),
        ("-failed", "-failed lea"),
        ("passed", "passed lean"),
    ],
)
def test_a_filter_narrows_what_it_extends_or_tightens(old: str, new: str) -> None:
    for values in (False, True):
        assert narrows(_parsed(new, values), _parsed(old, values))
        kept = FRAME.filter(_parsed(new, values))
        assert kept.height == kept.join(FRAME.filter(_parsed(old, values)), on="task").height


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("lean", "lea"),  # Backspace: wider
        ("tokens>2000", "tokens>200"),
        ("tokens>200", "tokens>=200"),
        ("tokens<200", "tokens<=200"),
        ("tokens<5", "tokens<50"),
        ("tokens>5", "tokens<50"),
        ("tokens:5", "tokens:50"),  # a number's `:` is equality
        ("-lea", "-lean"),  # negated: wider
        ("pass", "passed"),  # an outcome word is not a text search
        ("task:nul", "task:null"),  # nor a null word
        ("task~t", "task~ta"),  # nor a regex
        ("lea", "task:lean"),  # another column than any text one
        ("workflow:lea", "task:lean"),
        ("lea tokens>5", "lean"),  # a term of the old one not implied
    ],
)
def test_a_filter_does_not_narrow_what_it_widens_or_changes(old: str, new: str) -> None:
    assert not narrows(_parsed(new), _parsed(old))


def test_filters_parsed_for_other_values_or_not_parsed_never_narrow() -> None:
    assert not narrows(_parsed("lean", values=True), _parsed("lea"))
    again = parse_filter("lean", FRAME.schema, text_values(FRAME))  # another frame's, maybe
    assert again is not None and not narrows(again, _parsed("lea", values=True))
    other = FRAME.with_columns(pl.col("tokens").cast(pl.Float64))
    assert not narrows(parse_filter("tokens>20", other.schema), _parsed("tokens>2"))  # type: ignore[arg-type]
    assert not narrows(pl.col("tokens") > 20, pl.col("tokens") > 2)


def test_narrowed_rows_are_the_frames() -> None:
    wider = matching_rows(FRAME, _parsed("tokens>200"))
    assert wider.index is not None
    for text in ("tokens>1000", "tokens>1000 lean", "steady"):
        got = narrowed_rows(wider, _parsed(text))
        assert got.index is not None
        assert got.index.to_list() == [
            i
            for i in matching_rows(FRAME, _parsed(text)).index.to_list()
            if i in wider.index  # type: ignore[union-attr]
        ]


def test_recent_rows_stay_within_their_share_of_the_frame() -> None:
    frame = pl.DataFrame({"tokens": list(range(400))})
    recent = recent_for(frame)
    for low in range(0, 400, 40):
        expression = pl.col("tokens") >= low
        recent.remember(expression, matching_rows(frame, expression))
    held = [
        entry.rows.height
        for entry in recent._entries[:-1]
        if entry.rows is not None and entry.rows.index is not None
    ]
    assert sum(held) <= frame.height // ROWS_SHARE
    newest = recent._entries[-1]
    assert newest.rows is not None  # the rows on screen stay
    other = pl.DataFrame({"tokens": list(range(400))})
    assert recent_for(other) is not recent
    assert recent_for(other).rows(pl.col("tokens") >= 360) is None
    assert recent.rows(pl.col("tokens") >= 360) is newest.rows
    recent.remember(None, Rows(other))  # rows of another frame are never noted
    assert recent.rows(None) is None


def test_recent_comparisons_stay_within_their_groups() -> None:
    """Comparisons of many groups are let go, oldest first, the one on screen kept."""
    from tui_ledger.accounting.ledger import compare
    from tui_ledger.filtering import recent_figures

    frame = pl.DataFrame(
        {
            "workflow": [f"w{i % 30}" for i in range(60)],
            "task": [f"t{i}" for i in range(60)],
            "outcome": ["passed", "failed"] * 30,
            "tokens": list(range(60)),
        }
    ).with_columns(pl.col("outcome").cast(OUTCOME_DTYPE))
    recent = recent_for(frame)
    groups = recent_figures.MAX_GROUPS
    recent_figures.MAX_GROUPS = 50
    try:
        for low in (0, 10, 20):
            expression = pl.col("tokens") >= low
            kept = frame.filter(expression)
            for by in (("task",), ("workflow",)):
                recent.remember(expression, None, by, compare(kept, by, intervals="none"))
        held = [(entry.expression is not None, sorted(entry.figures)) for entry in recent._entries]
    finally:
        recent_figures.MAX_GROUPS = groups
    # Older filters: 30 groups of workflow fit; the newest keeps its last grouping only
    # (task's 40 groups and workflow's 30 pass 50).
    assert held[-1] == (True, [("workflow",)])
    assert sum(len(figures) for _, figures in held[:-1]) <= 1
