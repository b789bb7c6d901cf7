"""What a budget (`B`, a token or dollar cap) did to the focused group, as the lines under its
block in the summary: the tokens it saved and the accepted results it lost (`cap.cap_figures`).
Pure functions, no widget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl
from rich.text import Text

from tui_ledger.accounting.comparison import group_labels
from tui_ledger.text.numbers import format_count
from tui_ledger.tui.theme import DROP_STYLE, LABEL_STYLE, MISSING_STYLE

CapByLabel = dict[str, dict[str, Any]]


def cap_by_label(figures: pl.DataFrame | None, by: Sequence[str]) -> CapByLabel | None:
    """`cap.cap_figures` keyed by the groups' labels (as the summary names them); None
    without a cap."""
    if figures is None:
        return None
    labels = group_labels(figures, by)
    return dict(zip(labels, figures.iter_rows(named=True), strict=True))


def cap_lines(figures: dict[str, Any] | None, label_width: int) -> Text:
    """The focus block's cap lines: `cap saves`, `accepted lost` (and how many accepted
    attempts with missing usage it could have cut); empty without a cap."""
    text = Text(no_wrap=True, overflow="ellipsis")
    if figures is None:
        return text
    saved = int(figures["tokens_saved"] or 0)
    cut = int(figures["attempts_cut"] or 0)
    lost = int(figures["accepted_lost"] or 0)
    text.append("\n  ")
    text.append("cap saves".ljust(label_width), style=LABEL_STYLE)
    text.append(f"{format_count(saved)} tokens · {format_count(cut)} cut", style="bold")
    text.append("\n  ")
    text.append("accepted lost".ljust(label_width), style=LABEL_STYLE)
    text.append(format_count(lost), style=DROP_STYLE if lost else "bold")
    unknown = int(figures["accepted_unknown"] or 0)
    if unknown:
        text.append(f" (+{format_count(unknown)} with no usage: ≥)", style=MISSING_STYLE)
    return text
