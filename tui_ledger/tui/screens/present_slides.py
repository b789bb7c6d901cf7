"""How presenter mode's steps look: each step's title and body as Rich renderables, laid out for
the cells they are given (80x24 up to a projector's 160x45), from a `Presentation`.

Large text that reads from the back of a room: the view's name in the header's block letters
and its colour, the headline figures in Textual's 3x3 digits, the figures of every group as
bars on one scale in both views (so the trap's bars visibly shrink). Where the groups are too
many for the big rows, each takes one line; where even those run out, the rest are counted
("and 4 more groups"). Every name is literal text (`rich.text.Text`, never markup), cut
together so no two read the same (`labels.fit_labels`).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.renderables.digits import Digits

from tui_ledger.accounting.ledger import VIEW_GLOSSES, VIEW_TITLES, View
from tui_ledger.text.labels import fit_labels
from tui_ledger.text.numbers import MISSING, NOT_RECORDED
from tui_ledger.text.wording import plural
from tui_ledger.tui.screens.present_steps import (
    STEPS,
    FailureStep,
    Figure,
    GroupFigures,
    Presentation,
)
from tui_ledger.tui.screens.present_vouched import QUESTION as VOUCHED_QUESTION
from tui_ledger.tui.screens.present_vouched import VouchedStep, vouched_body
from tui_ledger.tui.theme import (
    CALLOUT_STYLE,
    KEY_STYLE,
    LABEL_STYLE,
    MISSING_STYLE,
    TITLE_STYLE,
    VIEW_STYLES,
)
from tui_ledger.tui.widgets.header import VIEW_SENTENCES, big_words

BIG_ROW = 3  # lines a group takes in big rows (its digits' height)
_QUESTIONS: dict[str, str] = {
    "keep": "What each workflow spends per attempt, and how often it passes",
    "drop": "The same workflows, with the failed attempts dropped",
    "flip": "Which one is cheaper?",
    "hides": "What dropping failures hides",
    "vouched": VOUCHED_QUESTION,
    "failure": "One hidden failure, step by step: where its tokens went",
    "open": "Now look for yourself",
}


def _digits(text: str, style: str) -> RenderableType:
    """A figure in 3x3 digits; `≥` (a lower bound) beside them, on their middle line."""
    bound = text.startswith("≥ ")
    figure = text.removeprefix("≥ ")
    if figure in (MISSING, NOT_RECORDED) or not any(char.isdigit() for char in figure):
        return Text(f"\n{figure}", style=MISSING_STYLE, justify="right")
    if not bound:
        return Digits(figure, style)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(justify="right")
    grid.add_column()
    grid.add_row(Text("\n≥", style=style), Digits(figure, style))
    return grid


def digits_width(text: str) -> int:
    """Cells a figure takes in `_digits`."""
    figure = text.removeprefix("≥ ")
    return Digits.get_width(figure) + (2 if text.startswith("≥ ") else 0)


def _bar(value: float | None, scale: float, width: int, style: str) -> Text:
    """A bar of `width` cells at full `scale`, in eighths of a cell."""
    if value is None or scale <= 0 or width <= 0:
        return Text("")
    eighths = round(max(value, 0) / scale * width * 8)
    full, part = divmod(eighths, 8)
    return Text("█" * full + (" ▏▎▍▌▋▊▉"[part] if part else ""), style=style)


# --------------------------------------------------------------------------- titles


def title(step: str, shown: Presentation | None, width: int) -> Text:
    """The step's heading: the view's name in block letters (keep, drop) or its idea in words,
    then the question the step answers."""
    text = Text(no_wrap=False)
    if step in ("keep", "drop"):
        view: View = "keep" if step == "keep" else "drop"
        style = VIEW_STYLES[view]
        words = VIEW_TITLES[view]
        gloss = f"{VIEW_GLOSSES[view]}: {VIEW_SENTENCES[view]}"
        top, bottom = big_words(words)
        if cell_len(top) + 2 + cell_len(words) + 2 <= width:
            text.append(top, style=style)
            text.append("  ")
            text.append(f" {words} ", style=f"{style} reverse")
            text.append("\n")
            text.append(bottom, style=style)
            if cell_len(bottom) + 2 + cell_len(gloss) <= width:
                text.append(f"  {gloss}", style=style.replace("bold ", "italic "))
            else:
                text.append(f"\n{gloss}", style=style.replace("bold ", "italic "))
        else:
            text.append(f" {words} ", style=f"{style} reverse")
            text.append(f"\n{gloss}", style=style.replace("bold ", "italic "))
    else:
        heading = _QUESTIONS[step] if shown is None or step != "flip" else shown.flip.title
        style = CALLOUT_STYLE if step == "flip" else TITLE_STYLE
        text.append(f" {heading} ", style=f"{style} reverse")
        if step == "flip":
            text.append(f"\n{_QUESTIONS[step]}", style=LABEL_STYLE)
        return text
    text.append(f"\n\n{_QUESTIONS[step]}", style="bold")
    return text


# --------------------------------------------------------------------------- bodies


def body(
    step: str,
    shown: Presentation,
    width: int,
    height: int,
    source: str,
    failure: FailureStep | str | None = None,
    vouched: VouchedStep | str | None = None,
) -> RenderableType:
    """The step's body in `width` x `height` cells; `failure` is the failure step's content
    (text while the attempt is still being read); `vouched`, the vouched step's (text while
    the grader's audit reads the logs)."""
    if step == "keep":
        return _groups_body(shown.keep, "keep", shown, width, height)
    if step == "drop":
        return _groups_body(shown.drop, "drop", shown, width, height)
    if step == "flip":
        return _flip_body(shown, width)
    if step == "hides":
        return _hides_body(shown, width, height)
    if step == "vouched":
        return vouched_body(vouched, width, height)
    if step == "failure":
        if isinstance(failure, FailureStep):
            return _failure_body(failure, width, height)
        return Text(failure or "Reading one failed attempt…", style=MISSING_STYLE)
    return _open_body(source)


def _takeaway(shown: Presentation, view: View) -> Text:
    best = shown.keep_best if view == "keep" else shown.drop_best
    groups = shown.keep if view == "keep" else shown.drop
    style = VIEW_STYLES[view]
    if best is None:
        return Text(
            "No workflow is cheapest for certain here: some figures are lower bounds, so ranks "
            "are ranges.",
            style=LABEL_STYLE,
        )
    figure = next(group.per_accepted for group in groups if group.name == best)
    lead = "Counting every attempt" if view == "keep" else "With failures dropped"
    verb = "is" if view == "keep" else "looks"
    return Text.assemble(
        (f"{lead}, ", "bold"),
        (best, style),
        (f" {verb} cheapest: {figure} tokens per accepted result.", "bold"),
    )


def _groups_body(
    groups: Sequence[GroupFigures], view: View, shown: Presentation, width: int, height: int
) -> RenderableType:
    """Per group: spend per attempt, pass rate and tokens per accepted result, big where the
    rows fit, one line each where they do not."""
    style = VIEW_STYLES[view]
    takeaway = _takeaway(shown, view)
    room = height - 3  # the takeaway and the space above it
    count = len(groups)
    if count and width >= 60 and count * BIG_ROW + 1 <= room:
        return Group(_big_rows(groups, style, shown.bar_scale, width, room), Text(""), takeaway)
    rows = max(room - 1, 1)  # the heading line
    fitted = list(groups[:rows] if count <= rows else groups[: rows - 1])
    table = _line_rows(fitted, style, shown.bar_scale, width)
    parts: list[RenderableType] = [table]
    if len(fitted) < count:
        parts.append(
            Text(f"and {plural(count - len(fitted), 'more group')} (the app shows every one)")
        )
    parts += [Text(""), takeaway]
    return Group(*parts)


def _big_rows(
    groups: Sequence[GroupFigures], style: str, scale: float, width: int, room: int
) -> Table:
    figure_width = max(digits_width(group.per_accepted) for group in groups)
    figure_width = max(figure_width, cell_len("per accepted result"))
    facts_width = max(
        [cell_len(f"{group.per_attempt} per attempt") for group in groups]
        + [cell_len(group.passes) for group in groups]
        + [12]
    )
    facts_width = min(facts_width, max(width // 3, 24))
    bar_width = max(width - facts_width - figure_width - 6, 0)
    names = fit_labels([group.name for group in groups], facts_width)
    table = Table.grid(padding=(0, 2), expand=False)
    table.add_column(width=facts_width, no_wrap=True)
    table.add_column(width=figure_width, justify="right", no_wrap=True)
    table.add_column(width=bar_width, no_wrap=True)
    table.add_row(
        Text("workflow", style=LABEL_STYLE),
        Text("per accepted result", style=LABEL_STYLE, justify="right"),
        Text(""),
    )
    gap = len(groups) * (BIG_ROW + 1) + 1 <= room
    for index, (name, group) in enumerate(zip(names, groups, strict=True)):
        facts = Text(no_wrap=True, overflow="ellipsis")
        facts.append(name, style=style)
        facts.append(f"\n{group.per_attempt} per attempt")
        facts.append(f"\n{group.passes}", style="")
        # The note goes on the row's third line, under the bar: the row stays 3 lines tall.
        note = Text(group.note, style=MISSING_STYLE, no_wrap=True, overflow="ellipsis")
        bar = _bar(group.value, scale, bar_width, style)
        table.add_row(facts, _digits(group.per_accepted, style), Group(Text(""), bar, note))
        if gap and index < len(groups) - 1:
            table.add_row("", "", "")
    return table


def _line_rows(groups: Sequence[GroupFigures], style: str, scale: float, width: int) -> Table:
    figures = [group.per_accepted for group in groups]
    figure_width = max([cell_len(text) for text in figures] + [cell_len("per accepted")])
    rate_width = cell_len("pass rate")
    attempt_width = max([cell_len(group.per_attempt) for group in groups] + [cell_len("/attempt")])
    rest = width - figure_width - rate_width - attempt_width - 4 * 2
    name_width = max(min(rest // 2, 40), 10)
    bar_width = max(rest - name_width, 0)
    names = fit_labels([group.name for group in groups], name_width)
    table = Table.grid(padding=(0, 2))
    table.add_column(width=name_width, no_wrap=True)
    table.add_column(width=attempt_width, justify="right", no_wrap=True)
    table.add_column(width=rate_width, justify="right", no_wrap=True)
    table.add_column(width=figure_width, justify="right", no_wrap=True)
    table.add_column(width=bar_width, no_wrap=True)
    table.add_row(
        *(
            Text(heading, style=LABEL_STYLE, justify="left" if i == 0 else "right")
            for i, heading in enumerate(("workflow", "/attempt", "pass rate", "per accepted"))
        ),
        Text(""),
    )
    for name, group in zip(names, groups, strict=True):
        figure_style = MISSING_STYLE if group.value is None else style
        table.add_row(
            Text(name, style=style),
            Text(group.per_attempt),
            Text(group.pass_rate),
            Text(group.per_accepted, style=figure_style),
            _bar(group.value, scale, bar_width, style),
        )
    return table


def _figure_cell(figure: Figure, width: int) -> RenderableType:
    style = VIEW_STYLES[figure.view]
    when = "failures kept" if figure.view == "keep" else "failures dropped"
    (name,) = fit_labels([figure.name], width)
    caption = Text.assemble((name, style), (f"\n{when}", LABEL_STYLE), justify="center")
    return Group(caption, _digits(figure.text, style))


def _flip_body(shown: Presentation, width: int) -> RenderableType:
    """The verdict's figures big, then the sentence that says it, then its meaning."""
    flip = shown.flip
    parts: list[RenderableType] = []
    if flip.figures:
        cell_width = max(min((width - 4) // len(flip.figures), 40), 12)
        row = Table.grid(padding=(0, 2))
        for _ in flip.figures:
            row.add_column(width=cell_width - 2, justify="center")
        row.add_row(*(_figure_cell(figure, cell_width - 2) for figure in flip.figures))
        parts += [row, Text("")]
    parts.append(Text(flip.sentence, style=CALLOUT_STYLE if flip.verdict == "flip" else "bold"))
    if flip.moral:
        parts += [Text(""), Text(flip.moral)]
    if flip.noise:
        parts += [Text(""), Text(flip.noise, style="bold")]
    return Group(*parts)


def _hides_body(shown: Presentation, width: int, height: int) -> RenderableType:
    """The tokens dropping failures hides, big; per group, what it hides and the trap factor."""
    style = VIEW_STYLES["drop"]
    headline = Table.grid(padding=(0, 2))
    headline.add_column()
    headline.add_column()
    attempts = plural(shown.hidden_attempts, "failed attempt")
    if shown.hidden_tokens[:1].isdigit() or shown.hidden_tokens.startswith("≥"):
        words = Text.assemble(
            ("\ntokens hidden", "bold"), (f"\nin {attempts}", LABEL_STYLE), justify="left"
        )
        headline.add_row(_digits(shown.hidden_tokens, style), words)
    else:
        headline.add_row(Text(f"{shown.hidden_tokens} tokens hidden in {attempts}", style="bold"))
    rows = max(height - 8, 1)
    hidden = list(shown.hidden[:rows] if len(shown.hidden) <= rows else shown.hidden[: rows - 1])
    name_width = max(min(width - 48, 40), 10)
    names = fit_labels([group.name for group in hidden], name_width)
    table = Table.grid(padding=(0, 2))
    table.add_column(width=name_width, no_wrap=True)
    for _ in range(3):
        table.add_column(justify="right", no_wrap=True)
    table.add_row(
        Text("workflow", style=LABEL_STYLE),
        Text("hidden attempts", style=LABEL_STYLE),
        Text("hidden tokens", style=LABEL_STYLE),
        Text("trap factor", style=LABEL_STYLE),
    )
    for name, group in zip(names, hidden, strict=True):
        table.add_row(
            Text(name, style=VIEW_STYLES["keep"]),
            Text(f"{group.hidden_attempts:,}"),
            Text(group.hidden_tokens, style=style if group.hidden_attempts else ""),
            Text(group.trap_factor, style="bold" if group.trap_factor != MISSING else LABEL_STYLE),
        )
    parts: list[RenderableType] = [headline, Text(""), table]
    if len(hidden) < len(shown.hidden):
        parts.append(Text(f"and {plural(len(shown.hidden) - len(hidden), 'more group')}"))
    parts += [
        Text(""),
        Text(
            "trap factor: tokens per accepted result with failures kept ÷ with them dropped",
            style=LABEL_STYLE,
        ),
    ]
    return Group(*parts)


def _failure_body(failure: FailureStep, width: int, height: int) -> RenderableType:
    """The attempt's steps, each with its tokens as a bar on one scale (the reruns of the
    failing call in the drop view's colour), then the call, its error, and their share."""
    headline = Text(failure.headline, style="bold")
    if not failure.rows:
        return headline
    rerun_style = VIEW_STYLES["drop"]
    tail: list[RenderableType] = [Text("")]
    if failure.command is not None:
        call = Text.assemble(("↻ ", rerun_style), (failure.command, "bold"))
        call.truncate(width, overflow="ellipsis")
        tail.append(call)
        if failure.error:
            error = Text(f"  {failure.error}", style=LABEL_STYLE)
            error.truncate(width, overflow="ellipsis")
            tail.append(error)
    tail += [Text(failure.spent, style=CALLOUT_STYLE), Text(failure.adds_up, style=LABEL_STYLE)]
    tail_lines = sum(
        1 if not isinstance(part, Text) else max(len(part.wrap(_console(), width)), 1)
        for part in tail
    )
    room = max(height - 2 - 1 - tail_lines, 1)  # the headline, its gap, the table's heading
    rows = list(failure.rows)
    if len(rows) > room:
        rows = rows[: room - 1]
    tokens_width = max(
        [cell_len(f"{row.tokens:,}") for row in rows if row.tokens is not None] + [6]
    )
    what_width = max(min(width * 55 // 100, width - tokens_width - 24), 12)
    bar_width = max(width - 4 - 6 - what_width - tokens_width - 8, 0)
    table = Table.grid(padding=(0, 2))
    table.add_column(width=3, justify="right", no_wrap=True)
    table.add_column(width=6, no_wrap=True)
    table.add_column(width=what_width, no_wrap=True, overflow="ellipsis")
    table.add_column(width=tokens_width, justify="right", no_wrap=True)
    table.add_column(width=bar_width, no_wrap=True)
    table.add_row(
        Text("#", style=LABEL_STYLE),
        Text("who", style=LABEL_STYLE),
        Text("what it did", style=LABEL_STYLE),
        Text("tokens", style=LABEL_STYLE, justify="right"),
        Text(""),
    )
    for row in rows:
        style = rerun_style if row.rerun else ""
        mark = "↻ " if row.rerun else "✘ " if row.error else ""
        table.add_row(
            Text(str(row.index), style=LABEL_STYLE),
            Text(row.who, style=style),
            Text(mark + row.what, style=style, no_wrap=True, overflow="ellipsis"),
            Text(MISSING if row.tokens is None else f"{row.tokens:,}", style=style),
            _bar(row.tokens, failure.scale, bar_width, rerun_style if row.rerun else "bold"),
        )
    parts: list[RenderableType] = [headline, Text(""), table]
    if len(rows) < len(failure.rows):
        parts.append(Text(f"and {plural(len(failure.rows) - len(rows), 'more step')}"))
    return Group(*parts, *tail)


def _console() -> Console:
    return Console(width=200, legacy_windows=False, color_system=None)


def _open_body(source: str) -> RenderableType:
    text = Text()
    text.append("Count every attempt: ", style="bold")
    text.append("tokens per accepted result, failures kept.", style=VIEW_STYLES["keep"])
    text.append("\n\n")
    text.append(" Enter ", style=f"{KEY_STYLE} reverse")
    text.append("  (or Space) opens the app on ", style="bold")
    text.append(source, style=TITLE_STYLE)
    text.append("\n\n")
    text.append(" q ", style=f"{KEY_STYLE} reverse")
    text.append("  quits", style="bold")
    return text


# --------------------------------------------------------------------------- footer


def progress(step: str) -> Text:
    """`● ● ○ ○ ○  2/5`: where the talk is."""
    index = STEPS.index(step)
    dots = " ".join("●" if i <= index else "○" for i in range(len(STEPS)))
    return Text(f"{dots}  {index + 1}/{len(STEPS)}", style=LABEL_STYLE)


def keys_hint(step: str) -> Text:
    """The keys, on one line."""
    text = Text()
    pairs = [("Space →", "next"), ("←", "back"), ("?", "keys"), ("q", "quit")]
    if step == STEPS[-1]:
        pairs[0] = ("Enter", "open the app")
    for key, what in pairs:
        text.append(f" {key} ", style=KEY_STYLE)
        text.append(f"{what}  ", style=LABEL_STYLE)
    return text
