"""Compacting a large attempts frame: its repetitive text columns as Categorical, and their
distinct values (`TextValues`) for the filter language.

The app does this once a large ledger's first figures are on screen (in a worker,
`tui.pipeline`): the same values, rows and order in about half the memory, grouped and
compared faster, and a text term of the filter (`query.parse_filter`) matched against a few
hundred distinct values, then an `is_in` over the rows, instead of every row's text.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from tui_ledger.schema import OUTCOME_COLUMN, SOURCE_COLUMN


class TextValues:
    """The distinct values of one frame's repetitive text columns (workflow, task, model...).

    A text term is then matched against a few hundred distinct values and becomes an `is_in`
    over the rows: `lean` over three text columns of 1M rows takes 24 ms instead of 92. The
    rows matched are the same. Built by `text_values(frame)`, it is only valid for filtering
    that same frame: a value missing from it would silently drop rows.
    """

    def __init__(self, values: Mapping[str, pl.Series]) -> None:
        self._values = dict(values)

    def __contains__(self, column: object) -> bool:
        return column in self._values

    def hits(self, column: str, matches: pl.Expr) -> pl.Series:
        """The distinct values of `column` for which `matches` (over `pl.col(column)`) holds."""
        return self._values[column].to_frame(column).filter(matches.fill_null(False)).to_series()


COMPACT_MIN_ROWS = 20_000
"""`compact_text` leaves smaller frames as they are: filtering and grouping them is quick
anyway, and each column has a fixed cost."""
COMPACT_MAX_COLUMNS = 64
"""At most this many text columns (the first, in file order) get distinct values or become
Categorical: the cost is per column, and a file of 5,000 columns took 17 s for all of them."""


# Columns that repeat by their nature in a ledger of attempts (a few workflows, models and
# runs, one source per file, tasks attempted again and again): not worth counting first.
_REPEATING = frozenset({"workflow", "model", "run", "task", SOURCE_COLUMN})


def _repetitive_text(frame: pl.DataFrame, most: float) -> list[str]:
    """The text columns whose distinct values number at most `most` of the rows (an id per
    row gains nothing from being matched, or stored, one distinct value at a time); the
    `_REPEATING` ones are taken as such without counting."""
    text = [
        name
        for name, dtype in frame.schema.items()
        if dtype in (pl.String, pl.Categorical) and name != OUTCOME_COLUMN
    ][:COMPACT_MAX_COLUMNS]
    if not text or frame.height == 0:
        return []
    others = [name for name in text if name not in _REPEATING]
    counts = frame.select(pl.col(others).n_unique()).row(0, named=True) if others else {}
    limit = max(64, frame.height * most)
    return [name for name in text if name in _REPEATING or counts[name] <= limit]


def _values_of(frame: pl.DataFrame, names: list[str]) -> TextValues:
    return TextValues({name: frame.get_column(name).unique().cast(pl.String) for name in names})


def text_values(frame: pl.DataFrame, *, most: float = 0.25) -> TextValues:
    """`TextValues` of `frame`'s repetitive text columns."""
    return _values_of(frame, _repetitive_text(frame, most))


def compact_text(
    frame: pl.DataFrame, *, most: float = 0.25
) -> tuple[pl.DataFrame, TextValues | None]:
    """`frame` with its repetitive text columns as Categorical, and their `TextValues`.

    The same values, rows and order, in about half the memory at 1M rows (each distinct text
    stored once), and grouped, compared and filtered without hashing every row's text again:
    `compare` by workflow 2x faster. Every consumer reads a Categorical as its text.
    A frame of fewer than `COMPACT_MIN_ROWS` rows comes back as it is, with no values.
    """
    if frame.height < COMPACT_MIN_ROWS:
        return frame, None
    names = _repetitive_text(frame, most)
    text = [name for name in names if frame.schema[name] == pl.String]
    compact = frame.with_columns(pl.col(text).cast(pl.Categorical)) if text else frame
    return compact, _values_of(compact, names)
