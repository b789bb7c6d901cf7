"""The presenter's vouched step: what the figures become when only the accepted results the
grader can vouch for count (`grader.ranking_change`, over the whole ledger by workflow), group by
group, graded → vouched; and, honestly, that nothing changes when the audit flags no acceptance.

`VouchedStep` is made by the presenter from the app's audit (`tui.vouching`); text while the
audit is still reading the logs (or could not run). Pure layout: the figures are the core's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from tui_ledger.text.labels import fit_labels
from tui_ledger.text.numbers import format_tokens
from tui_ledger.text.wording import plural
from tui_ledger.tui.screens.present_steps import STEPS
from tui_ledger.tui.theme import (
    CALLOUT_STYLE,
    DROP_STYLE,
    KEEP_STYLE,
    KEY_STYLE,
    LABEL_STYLE,
    MISSING_STYLE,
)

if TYPE_CHECKING:
    from tui_ledger.grader.ranking_change import RankingChange

VOUCHED_STEP = "vouched"
assert VOUCHED_STEP in STEPS
QUESTION = "Can the grader vouch for each accepted result?"


@dataclass(frozen=True)
class VouchedStep:
    """What the grader's audit found, for the step."""

    ranking: RankingChange
    tampered: int
    """Accepted attempts that touched the grader or looked the answer up."""
    note: str | None = None
    """The audit's note ("no trajectories: signals from verdicts only")."""


def vouched_body(step: VouchedStep | str | None, width: int, height: int) -> RenderableType:
    """The step's body in `width` x `height` cells."""
    if not isinstance(step, VouchedStep):
        return Text(step or "The grader's audit is reading every attempt's log…", MISSING_STYLE)
    ranking = step.ranking
    parts: list[RenderableType] = []
    if not ranking.unvouched:
        parts.append(
            Text(
                "The grader's audit flags no accepted attempt in this ledger: as graded and as "
                "vouched, the figures and the ranking are the same.",
                style="bold",
            )
        )
    else:
        headline = Text()
        headline.append(plural(ranking.unvouched, "accepted attempt"), style=DROP_STYLE)
        headline.append(
            " the grader cannot vouch for: each edited what grades it, looked the answer up, "
            "or contradicts its verdict",
            style="bold",
        )
        if step.tampered:
            headline.append(f" ({step.tampered:,} tampering)", style=DROP_STYLE)
        headline.append(". Counted as failures, their tokens kept:", style="bold")
        parts += [headline, Text(""), _groups_table(ranking, width, height)]
        parts += [Text(""), Text(ranking.sentence, CALLOUT_STYLE if ranking.changes else "bold")]
    if step.note:
        parts += [Text(""), Text(step.note, style=MISSING_STYLE)]
    hint = Text()
    hint.append(" v ", style=f"{KEY_STYLE} reverse")
    hint.append("  in the app: the figures as vouched   ", style=LABEL_STYLE)
    hint.append(" a ", style=f"{KEY_STYLE} reverse")
    hint.append("  the flagged attempts, with their evidence", style=LABEL_STYLE)
    parts += [Text(""), hint]
    return Group(*parts)


def _groups_table(ranking: RankingChange, width: int, height: int) -> Table:
    rows = max(height - 10, 1)
    groups = ranking.groups[:rows]
    name_width = max(min(width - 60, 40), 10)
    names = fit_labels([group.label for group in groups], name_width)
    table = Table.grid(padding=(0, 2))
    table.add_column(width=name_width, no_wrap=True)
    for _ in range(3):
        table.add_column(justify="right", no_wrap=True)
    table.add_row(
        Text(" · ".join(ranking.by), style=LABEL_STYLE),
        Text("accepted", style=LABEL_STYLE),
        Text("tokens / accepted result", style=LABEL_STYLE),
        Text("rank", style=LABEL_STYLE),
    )
    for name, group in zip(names, groups, strict=True):
        (graded, vouched), (before, after) = group.accepted, group.tokens_per_accepted
        changed = graded != vouched
        table.add_row(
            Text(name, style=KEEP_STYLE),
            Text(f"{graded:,} → {vouched:,}", style=DROP_STYLE if changed else ""),
            Text(
                f"{_tokens(before)} → {_tokens(after)}",
                style=DROP_STYLE if before != after else "",
            ),
            Text(
                f"{group.rank[0]} → {group.rank[1]}",
                style=CALLOUT_STYLE if group.rank[0] != group.rank[1] else "",
            ),
        )
    return table


def _tokens(value: float | None) -> str:
    return "none accepted" if value is None else format_tokens(round(value))
