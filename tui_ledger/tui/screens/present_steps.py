"""What presenter mode (`ledger-tui --present`) says on each step, as plain data: pure functions
of the app's `Comparison`, no widget and no figure of its own.

Every figure comes from the comparison the app draws (`ledger.compare`, through the app's
pipeline) and reads as the summary writes it (`summary_text`, `numbers`); every verdict (a
flip, undecided, no flip) is the comparison's own (`flips`, `flip_undecided`, `best`, `moves`)
and says what `report.callout` says, in fewer words. `presentation(comparison)` gives the
first four steps' content; `failure_step(walk)` the fifth's, from one failed attempt read
through the trajectory reader (`trajectory.failure_walk`, read by the presenter in a worker);
`present_slides` lays them out.

The flip step has a place for one more line, `Flip.noise`: the pairwise noise verdict of the
flip's pair ("within noise on this sample: 3 attempts a side"), filled by the `noise` function
given to `presentation` (a function of the same comparison): `noise_line`, from the pairs the
app draws (`pair_report`), once they are drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from tui_ledger.accounting.ledger import Comparison, View
from tui_ledger.accounting.ranking import rank_text as rank_range
from tui_ledger.reports.pair_report import flip_noise, ratio_text, sample_text
from tui_ledger.text.numbers import format_count, format_factor, format_rate, format_tokens
from tui_ledger.text.textsafe import safe_label, safe_text
from tui_ledger.text.wording import plural
from tui_ledger.trajectory.failure_walk import FailureWalk
from tui_ledger.tui.widgets.summary_text import (
    NO_ACCEPTED,
    TOKENS,
    exact_figure,
    figure_text,
    median_text,
    rank_text,
)

STEPS: tuple[str, ...] = ("keep", "drop", "flip", "hides", "vouched", "failure", "open")
"""The steps in order: the honest view, the trap, the flip, what dropping hides, what the
figures become with only the acceptances the grader vouches for (`present_vouched`), one hidden
failure step by step (`failure_step`), the app."""

Verdict = Literal["flip", "undecided", "no_flip"]
NoiseLine = Callable[[Comparison], "str | None"]
"""A function of the comparison giving the flip step's noise line (None: nothing to say)."""


@dataclass(frozen=True)
class GroupFigures:
    """One group in one view, as the keep and drop steps show it."""

    name: str  # the whole name, terminal-safe (the slides cut it to fit, together)
    per_attempt: str  # median tokens per attempt: `1,000`, `not recorded`
    accepted: int
    attempts: int
    pass_rate: str  # `33%`
    per_accepted: str  # `3,000`, `≥ 3,000`, `—`, `not recorded`
    value: float | None  # the per accepted figure, for its bar (None: no figure)
    rank: str  # `1`, `1–3`, `—`
    note: str  # why there is no figure, or why it is a lower bound; `` when exact

    @property
    def passes(self) -> str:
        """`passes 1 of 3 (33%)`."""
        return f"passes {format_count(self.accepted)} of {format_count(self.attempts)}" + (
            f" ({self.pass_rate})" if self.attempts else ""
        )


@dataclass(frozen=True)
class HiddenFigures:
    """What dropping failures hides of one group."""

    name: str
    hidden_attempts: int
    hidden_tokens: str  # `2,000`, `≥ 954,308`, `not recorded`
    trap_factor: str  # `×3.0`, `≥ ×2.8`, `—`


@dataclass(frozen=True)
class Figure:
    """One headline figure of the flip step: a group's tokens per accepted result in a view."""

    name: str
    view: View
    text: str  # `3,000`, `≥ 3,000`


@dataclass(frozen=True)
class Flip:
    """The flip step: the verdict, its sentence in words and numbers, the figures it names."""

    verdict: Verdict
    title: str  # `The ranking flips`, `Undecided`, `No flip`
    sentence: str  # on the article's fixture: `lean 3,000 vs steady 1,600 per accepted ...`
    figures: tuple[Figure, ...]
    moral: str  # what the verdict means for the reader, or ``
    noise: str | None = None  # the pairwise noise verdict of the pair (see the module's doc)


@dataclass(frozen=True)
class Presentation:
    """Everything the five steps show, from one comparison."""

    keep: tuple[GroupFigures, ...]
    drop: tuple[GroupFigures, ...]
    keep_best: str | None  # the group ranked first for certain in each view, if any
    drop_best: str | None
    flip: Flip
    hidden: tuple[HiddenFigures, ...]
    hidden_attempts: int
    hidden_tokens: str  # over every group: `2,000`, `≥ 4,704,773`, `an unknown number of`
    bar_scale: float  # the largest per accepted figure in either view: both views' bars share it


def presentation(comparison: Comparison, noise: NoiseLine | None = None) -> Presentation:
    """The five steps' content from the app's comparison (grouped as the app groups)."""
    names = [safe_label(label) for label in comparison.labels]
    keep = tuple(_groups(comparison, "keep", names))
    drop = tuple(_groups(comparison, "drop", names))
    values = [group.value for group in (*keep, *drop) if group.value is not None]
    hidden_total = comparison.hidden_tokens
    bound = comparison.hidden_is_lower_bound()
    if hidden_total is None or (bound and hidden_total == 0):
        hidden_text = "an unknown number of"
    else:
        hidden_text = format_tokens(hidden_total, lower_bound=bound)
    flip = flip_step(comparison)
    if noise is not None:
        flip = replace(flip, noise=noise(comparison))
    return Presentation(
        keep=keep,
        drop=drop,
        keep_best=_safe(comparison.best("keep")),
        drop_best=_safe(comparison.best("drop")),
        flip=flip,
        hidden=tuple(_hidden(comparison, names)),
        hidden_attempts=comparison.hidden_attempts,
        hidden_tokens=hidden_text,
        bar_scale=max(values, default=0.0),
    )


def noise_line(comparison: Comparison) -> str | None:
    """The flip step's noise line: whether this sample tells the flip's pair apart (or, with
    no flip, the cheapest group from the second). None before the pairs are drawn."""
    pairs = comparison.pairs
    if pairs is None:
        return None
    keep_best, drop_best = comparison.best("keep"), comparison.best("drop")
    noise = flip_noise(comparison)
    if noise is not None:
        why = "within noise" if noise.verdict == "within_noise" else "undecided"
        return (
            f"But on this sample the flip is {why}: {safe_label(noise.a)} vs "
            f"{safe_label(noise.b)} {ratio_text(noise)}, {sample_text(noise)}. "
            "More tasks would settle it."
        )
    if keep_best is not None and drop_best is not None and keep_best != drop_best:
        pair = pairs.between("keep", keep_best, drop_best)
        if pair is not None:
            return (
                f"Not noise: {safe_label(pair.a)} vs {safe_label(pair.b)} {ratio_text(pair)} "
                f"with failures kept ({pair.method}, {sample_text(pair)})."
            )
        return None
    cheapest = pairs.keep[0] if pairs.keep else None
    if cheapest is None:
        return None
    if cheapest.decided:
        return (
            f"{safe_label(cheapest.a)} is cheaper than {safe_label(cheapest.b)} beyond noise: "
            f"{ratio_text(cheapest)} ({cheapest.method}, {sample_text(cheapest)})."
        )
    return (
        f"{safe_label(cheapest.a)} and {safe_label(cheapest.b)} are within noise of each other: "
        f"{ratio_text(cheapest)}, {sample_text(cheapest)}."
    )


def _safe(label: str | None) -> str | None:
    return None if label is None else safe_label(label)


def _groups(comparison: Comparison, view: View, names: list[str]) -> list[GroupFigures]:
    groups = []
    for name, row in zip(names, comparison.view(view).iter_rows(named=True), strict=True):
        value = row[TOKENS.value]
        groups.append(
            GroupFigures(
                name=name,
                per_attempt=median_text(row),
                accepted=int(row["accepted"]),
                attempts=int(row["attempts"]),
                pass_rate=format_rate(row["pass_rate"]),
                per_accepted=figure_text(TOKENS, row),
                value=None if value is None else float(exact_figure(TOKENS, row)),
                rank=rank_text(row),
                note=_note(row),
            )
        )
    return groups


def _note(row: dict[str, Any]) -> str:
    """Why a group's figure is missing or only a lower bound, in a few words."""
    if row[TOKENS.value] is None:
        return TOKENS.missing_reason(row) if row["attempts"] else "no attempt"
    if row["lower_bound"]:
        parts = []
        if row["missing_usage"]:
            parts.append(f"{format_count(row['missing_usage'])} without usage")
        if row["suspect_zeros"]:
            parts.append(f"{format_count(row['suspect_zeros'])} reading 0")
        return "lower bound: " + ", ".join(parts) if parts else "lower bound"
    return ""


def _hidden(comparison: Comparison, names: list[str]) -> list[HiddenFigures]:
    rows = zip(
        names,
        comparison.keep.iter_rows(named=True),
        comparison.drop.iter_rows(named=True),
        comparison.trap.iter_rows(named=True),
        strict=True,
    )
    hidden = []
    for name, keep, drop, trap in rows:
        dropped_unknown = (keep["missing_usage"] + keep["suspect_zeros"]) > (
            drop["missing_usage"] + drop["suspect_zeros"]
        )
        tokens = trap["hidden_tokens"]
        if keep["usage"] == "not_recorded" or (dropped_unknown and not tokens):
            tokens_text = "not recorded"
        else:
            tokens_text = format_tokens(tokens, lower_bound=dropped_unknown)
        hidden.append(
            HiddenFigures(
                name=name,
                hidden_attempts=int(trap["hidden_attempts"]),
                hidden_tokens=tokens_text,
                trap_factor=format_factor(
                    trap["trap_factor"], lower_bound=bool(trap["trap_factor_lower_bound"])
                ),
            )
        )
    return hidden


def _figure(comparison: Comparison, label: str, view: View) -> Figure:
    value = comparison.per_accepted(label, view)
    text = format_tokens(value, lower_bound=comparison.is_lower_bound(label, view))
    return Figure(safe_label(label), view, text)


def flip_step(comparison: Comparison) -> Flip:
    """The flip in words and numbers, claimed only as far as the bounds allow (SPEC.md,
    "Honest ranking"); otherwise `undecided: ...` or `no flip: ...` with the reason."""
    from tui_ledger.reports.report import undecided  # the callout's own reason, word for word

    if comparison.keep.height == 0:
        return Flip("no_flip", "No flip", "no flip: no attempt to compare.", (), "")
    if comparison.hidden_attempts == 0:
        return Flip(
            "no_flip",
            "No flip",
            "no flip: every attempt here was accepted, so dropping failures changes nothing.",
            (),
            "",
        )
    if comparison.keep[TOKENS.value].null_count() == comparison.keep.height:
        return Flip(
            "no_flip",
            "No flip",
            "no flip: no group has a figure to rank.",
            (),
            _unranked(comparison),
        )
    keep_best, drop_best = comparison.best("keep"), comparison.best("drop")
    if comparison.flips():
        if keep_best is not None and drop_best is not None and keep_best != drop_best:
            looks, is_ = safe_label(drop_best), safe_label(keep_best)
            figures = (
                _figure(comparison, drop_best, "keep"),
                _figure(comparison, keep_best, "keep"),
                _figure(comparison, drop_best, "drop"),
            )
            return Flip(
                "flip",
                "The ranking flips",
                f"{looks} {figures[0].text} vs {is_} {figures[1].text} per accepted result, "
                f"and {looks} {figures[2].text} when failures are dropped.",
                figures,
                f"Drop the failures and {looks} looks cheapest; count every attempt and {is_} is.",
            )
        moves = comparison.moves()
        moved = ", ".join(
            f"{safe_label(move.group)} #{rank_range(move.keep_rank, move.keep_worst)}"
            f"→#{rank_range(move.drop_rank, move.drop_worst)}"
            for move in moves[:3]
        )
        more = f" and {len(moves) - 3} more" if len(moves) > 3 else ""
        first = f"{safe_label(keep_best)} is cheapest either way; " if keep_best else ""
        return Flip(
            "flip",
            "The ranking changes",
            f"{first}dropping failures reorders the rest: {moved}{more} (kept → dropped).",
            tuple(
                figure
                for move in moves[:2]
                for figure in (
                    _figure(comparison, move.group, "keep"),
                    _figure(comparison, move.group, "drop"),
                )
            ),
            "Who looks cheaper depends on whether failures are counted.",
        )
    if comparison.flip_undecided():
        return Flip(
            "undecided",
            "Undecided",
            f"undecided: {undecided(comparison)}; whether the ranking changes depends on "
            "usage that was never recorded.",
            (),
            "Record every attempt's usage to settle it.",
        )
    if keep_best is not None:
        return Flip(
            "no_flip",
            "No flip",
            f"no flip: the ranking is the same in both views; {safe_label(keep_best)} is "
            "cheapest either way.",
            (_figure(comparison, keep_best, "keep"), _figure(comparison, keep_best, "drop")),
            "Dropping failures still hides tokens: the figures shrink, the order holds.",
        )
    return Flip(
        "no_flip",
        "No flip",
        "no flip: no group's rank changes when failures are dropped.",
        (),
        "Dropping failures still hides tokens: the figures shrink, the order holds.",
    )


def _unranked(comparison: Comparison) -> str:
    unrecorded = comparison.not_recorded()
    if unrecorded:
        return f"Usage not recorded for {plural(len(unrecorded), 'group')}: nothing to rank."
    return f"No group has an accepted attempt ({NO_ACCEPTED} anywhere)."


@dataclass(frozen=True)
class WalkRow:
    """One step of the failure step's table."""

    index: int
    who: str
    what: str  # its tool call, else its text's first line: terminal-safe, one line
    tokens: int | None
    rerun: bool  # a rerun of the failing call
    error: bool


@dataclass(frozen=True)
class FailureStep:
    """The failure step: one failed attempt of the group dropping failures flatters, step by
    step, with where its tokens went; or, with no trajectory to read, one line saying so."""

    group: str | None
    headline: str  # `lean-loop · fix-login-redirect · failed · 12,499 tokens in 6 steps`
    rows: tuple[WalkRow, ...] = ()
    command: str | None = None  # the failing call it ran again, one line
    error: str | None = None  # what that call returned, first line
    spent: str = ""  # where the tokens went, in one sentence
    adds_up: str = ""  # whether the steps add up to the attempt's tokens in the ledger
    scale: int = 0  # the largest step's tokens: the bars' full width


def failure_group(comparison: Comparison) -> str | None:
    """The group whose failure the step walks through: the one that looks cheapest once
    failures are dropped (the flip's), else the one whose dropped attempts are most."""
    best = comparison.best("drop")
    labels = comparison.labels
    hidden = comparison.trap["hidden_attempts"].to_list() if comparison.trap.height else []
    if best is not None and best in labels and hidden[labels.index(best)]:
        return best
    most = max(range(len(hidden)), key=lambda i: hidden[i] or 0, default=None)
    return labels[most] if most is not None and hidden[most] else None


def failure_step(walk: FailureWalk | None, group: str | None) -> FailureStep:
    """The failure step's content from the attempt read (None: no failure had a log)."""
    name = _safe(group)
    if group is None:
        return FailureStep(None, "No attempt failed here: dropping failures hides none to open.")
    if walk is None:
        whose = f"{name}'s failures" if name else "its failures"
        return FailureStep(
            name,
            f"No trajectory to open for {whose}: the ledger names none per attempt.",
        )
    row = walk.row
    steps = walk.trajectory.steps
    total = walk.steps_tokens
    facts = [name or "", safe_label(row.get("task") or ""), str(row.get("outcome") or "")]
    tokens = row.get("tokens")
    facts.append(f"{format_count(tokens)} tokens" if isinstance(tokens, int) else "no usage")
    headline = " · ".join(fact for fact in facts if fact) + f" in {plural(len(steps), 'step')}"
    retries = walk.retries
    reruns = set(retries.reruns) if retries else set()
    rows = tuple(
        WalkRow(
            step.index,
            step.source,
            _what(
                step.text,
                step.tool_calls[0].name if step.tool_calls else None,
                step.tool_calls[0].arguments if step.tool_calls else None,
            ),
            step.tokens,
            step.index in reruns,
            step.error,
        )
        for step in steps
    )
    if retries is None:
        command = error = None
        spent = "No failing command was run twice: its tokens went on the steps above."
    else:
        command = safe_text(f"{retries.call.name} {_one_line(retries.call.arguments)}")
        error = None if retries.error is None else safe_text(retries.error)
        share = walk.retry_share
        runs = len(retries.runs)
        if retries.tokens is None or share is None:
            spent = f"It ran the same failing command {runs} times; no rerun records its tokens."
        else:
            spent = (
                f"It ran the same failing command {runs} times: the {plural(runs - 1, 'rerun')} "
                f"spent {format_count(retries.tokens)} of its {format_count(total)} tokens "
                f"({share:.0%})."
            )
    adds_up = {
        "equal": "The steps add up to the attempt's tokens in the ledger.",
        "differs": "The steps do not add up to the attempt's tokens in the ledger.",
    }.get(walk.match, "Its log records no tokens per step.")
    scale = max((step.tokens or 0 for step in steps), default=0)
    return FailureStep(name, headline, rows, command, error, spent, adds_up, scale)


def _what(text: str, tool: str | None, arguments: str | None) -> str:
    if tool is not None:
        return safe_text(f"{tool} {_one_line(arguments or '')}".strip())
    return safe_text(next((line.strip() for line in text.splitlines() if line.strip()), ""))


def _one_line(arguments: str) -> str:
    """A call's arguments on one line: a lone JSON string value (a command, a path) bare."""
    import json

    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and len(parsed) == 1:
        (value,) = parsed.values()
        if isinstance(value, str):
            arguments = value
    return " ".join(arguments.split())
