"""The summary table on a terminal of a given width: which figure columns it shows, and its
group labels.

A figure may wrap at a space (`≥ 1,294,100`, `230,655 [75k–783k]`) but is never split inside
a word (`43,7` over `78`): a column is as wide as its longest word at least, and each column's
width is set here (rich, left to squeeze a table wider than the terminal, folds numbers and
then crops the last columns). Where the columns cannot all be that wide, the least telling leave
first (`usage 0`, `missing usage`, the median, the totals, ...; never the pass rate, the figure
per accepted result or the rank), and the table names what it leaves out. The labels then take
what room is left, cut by `labels.fit_labels` so that no two read the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from tui_ledger.text.labels import fit_labels
from tui_ledger.text.textsafe import LABEL_WIDTH

LABEL_MIN = 12
"""A narrow table's group labels keep at least this many cells."""
COLUMN_GAP = 3
"""A table column's padding and rule, in cells."""
_HEADING_MIN = 4  # a heading keeps a few cells (`att…`), or rich would drop its column

# The figure columns (by heading) a narrow terminal leaves out, first to last.
_LEFT_OUT_FIRST: tuple[str, ...] = (
    "usage 0",
    "missing usage",
    "median / attempt",
    "total cost",
    "total tokens",
    "accepted",
    "attempts",
    # the trap table's
    "cost trap factor",
    "hidden cost",
    "hidden attempts",
)


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


def figure_table(
    title: Text | None,
    label_title: str,
    labels: Sequence[str],
    headings: Sequence[str],
    rows: Sequence[Sequence[str]],
    shown: Sequence[int],
    widths: dict[int, int] | None,
) -> Table:
    """The table of `rows` (figure cells, in `headings` order), the columns `shown` only, each
    `widths` wide (None: their natural widths)."""
    label_width = max((cell_len(label) for label in labels), default=0)
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column(Text(label_title), no_wrap=True, min_width=label_width)
    for index in shown:
        table.add_column(
            Text(headings[index], overflow="ellipsis"),
            justify="right",
            overflow="fold",
            width=None if widths is None else widths[index],
        )
    for label, cells in zip(labels, rows, strict=True):
        table.add_row(Text(label), *(Text(cells[index]) for index in shown))
    return table


def _budget(width: int, labels: Sequence[str], shown: Sequence[int]) -> int:
    """The cells the figure columns `shown` have between them beside `labels`: the width less
    the label column and every column's padding (2) and rule (1)."""
    label = max((cell_len(text) for text in labels), default=0)
    return width - (label + 2) - 3 * len(shown)


def fit_table(
    names: Sequence[str],
    headings: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int | None,
) -> tuple[list[int], list[str], dict[int, int] | None]:
    """The figure columns shown (indexes into `headings`), the group labels (of `names`) and
    each shown column's width (None: natural) of a table `width` cells wide; `rows` are the
    figure cells of every row it will hold. Without a width every column shows, and a label
    longer than `LABEL_WIDTH` is cut (a 5 MB group name costs in a table what an 80-character
    one costs)."""
    labels = fit_labels(list(names), LABEL_WIDTH)
    shown = list(range(len(headings)))
    if width is None or not rows:
        return shown, labels, None
    least = {i: max(_HEADING_MIN, *(_longest_word(row[i]) for row in rows)) for i in shown}
    natural = {
        i: max(least[i], cell_len(headings[i]), *(cell_len(row[i]) for row in rows)) for i in shown
    }
    narrow = fit_labels(list(names), max(LABEL_MIN, width // 4))
    for heading in _LEFT_OUT_FIRST:
        if sum(least[i] for i in shown) <= _budget(width, narrow, shown):
            break
        if heading in headings:
            shown.remove(headings.index(heading))
    room = width - sum(natural[i] + COLUMN_GAP for i in shown) - 1
    if not all(cell_len(label) <= room for label in labels):
        # A narrow terminal: labels keep a quarter of it, the figures wrap in the rest.
        labels = fit_labels(list(names), max(room, LABEL_MIN, width // 4))
    # Each column its least width, then what is left up to its natural one, the columns that
    # need least more first (so that as many as can read whole).
    spare = _budget(width, labels, shown) - sum(least[i] for i in shown)
    widths = dict(least)
    for i in sorted(shown, key=lambda i: natural[i] - least[i]):
        grow = max(0, min(spare, natural[i] - least[i]))
        widths[i] += grow
        spare -= grow
    return shown, labels, widths


def left_out_line(headings: Sequence[str], shown: Sequence[int]) -> str | None:
    """The line under a table that leaves columns out, naming them; None when none is."""
    missing = [heading for index, heading in enumerate(headings) if index not in shown]
    if not missing:
        return None
    return (
        f"Not shown (narrow terminal): {', '.join(missing)}; "
        "a wider terminal or --format markdown or json shows them."
    )
