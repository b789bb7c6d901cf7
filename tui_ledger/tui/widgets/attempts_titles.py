"""What the attempts pane's frame says: its title (in DROP FAILURES, what the view hides) and
its subtitle (how many attempts it shows, and the sort)."""

from __future__ import annotations

from rich.text import Text

from tui_ledger.accounting.ledger import View
from tui_ledger.text.numbers import format_count, format_money, format_tokens
from tui_ledger.text.textsafe import safe_text
from tui_ledger.text.wording import plural
from tui_ledger.tui.snapshot import Snapshot
from tui_ledger.tui.theme import DROP_STYLE, LABEL_STYLE


def attempts_titles(
    snapshot: Snapshot, total: int, view: View, sort: tuple[str, bool] | None
) -> tuple[Text, Text]:
    """(title, subtitle) of the attempts pane showing the snapshot in a view, of `total`
    attempts loaded."""
    shown = snapshot.rows(view)
    title = Text("Attempts", style="bold")
    comparison = snapshot.comparison
    if view == "drop":
        hidden = comparison.hidden_attempts
        tokens = comparison.hidden_tokens
        title.append("  ")
        hides = (
            # Failed, timed-out, errored and ungraded: everything not accepted.
            f"hides {plural(hidden, 'attempt')} · {format_tokens(tokens)} tokens"
        )
        if comparison.has_cost:
            hides += f" · {format_money(comparison.hidden_cost)}"
        title.append(hides, style=DROP_STYLE)
    subtitle = Text(f"{format_count(shown)} of {format_count(total)} attempts")
    note = snapshot.rows_note(view)
    if note is not None:
        subtitle.append(f" · {note}", style=LABEL_STYLE)
    if sort is not None:
        column, descending = sort
        subtitle.append(
            f" · sorted by {safe_text(column)} {'▼' if descending else '▲'}",
            style=LABEL_STYLE,
        )
    return title, subtitle
