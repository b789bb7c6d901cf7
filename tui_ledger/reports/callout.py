"""The callout: one computed sentence on what dropping failures hides and whether the ranking
flips, claiming only what every value the bounds allow agrees on (SPEC.md section 3); and
`undecided`, why ranks are ranges. The summary (every format), the app's summary pane and the
presenter read these words."""

from __future__ import annotations

from tui_ledger.accounting.ledger import Comparison, Metric, View
from tui_ledger.accounting.ranking import rank_text
from tui_ledger.reports.pair_report import flip_noise, ratio_text, sample_text
from tui_ledger.text.numbers import format_money, format_tokens
from tui_ledger.text.textsafe import safe_label
from tui_ledger.text.wording import NO_ATTEMPTS_MATCH, listing, plural


def callout(comparison: Comparison, metric: Metric = "tokens") -> str:
    """One computed sentence (see `_callout`), made once per comparison and metric: the app
    draws it again on every toggle and every follow-up (a frozen comparison's figures do not
    change; its pairs or intervals arriving make a new comparison, with its own sentences)."""
    said = comparison.said
    key = ("callout", metric)
    if key not in said:
        said[key] = _callout(comparison, metric)
    return said[key]


def _callout(comparison: Comparison, metric: Metric) -> str:
    """One computed sentence: what dropping failures hides (tokens, or spend for `metric`
    "cost"), and whether the ranking by that metric per accepted result flips.

    It claims only what every value the bounds allow agrees on (SPEC.md section 3): a flip,
    "cheapest" and "who moved" only when no missing usage or suspect 0 could undo them, and
    otherwise says the ranking is undecided, naming the groups whose figures are lower bounds
    and how much of their usage is missing. Groups whose usage was never recorded are named
    as left out of the ranking.
    """
    hidden_attempts = comparison.hidden_attempts
    if comparison.keep.height == 0:
        return NO_ATTEMPTS_MATCH  # not "every attempt was accepted": there is none
    if hidden_attempts == 0:
        return "Every attempt here was accepted, so dropping failures changes nothing."
    cost = metric == "cost"
    ranking = "cost ranking" if cost else "ranking"
    at_least = "at least " if comparison.hidden_is_lower_bound(metric) else ""
    if cost:
        hidden_cost = comparison.hidden_cost
        hides = (
            f"Dropping failures hides {at_least}{format_money(hidden_cost)} of spend"
            if hidden_cost is not None and not (at_least and hidden_cost == 0)
            else "Dropping failures hides an unknown amount of spend"
        )
    else:
        hidden_tokens = comparison.hidden_tokens
        hides = (
            f"Dropping failures hides {at_least}{format_tokens(hidden_tokens)} tokens"
            if hidden_tokens is not None and not (at_least and hidden_tokens == 0)
            else "Dropping failures hides an unknown number of tokens"
        )
    hides += f" in {plural(hidden_attempts, 'attempt')}"
    unrecorded = comparison.not_recorded(metric)
    what = "cost" if cost else "usage"
    left_out = (
        f" {listing([safe_label(name) for name in unrecorded], limit=_NAMED, joiner='and')}: "
        f"{what} not recorded, so "
        f"{'it has' if len(unrecorded) == 1 else 'they have'} no figure and no rank."
        if unrecorded
        else ""
    )
    keep = comparison.keep
    column = "cost_per_accepted_result" if cost else "tokens_per_accepted_result"
    if keep[column].null_count() == keep.height:
        if cost and not unrecorded:
            return f"{hides}; no group has a known cost to rank (unpriced: see w)."
        return f"{hides}; no group has a figure to rank.{left_out}"
    if comparison.flips(metric):
        keep_best, drop_best = comparison.best("keep", metric), comparison.best("drop", metric)
        if keep_best is not None and drop_best is not None and keep_best != drop_best:
            noise = flip_noise(comparison) if not cost else None
            if noise is not None:
                why = "within noise" if noise.verdict == "within_noise" else "undecided"
                return (
                    f"{hides} and would flip the {ranking} ({safe_label(drop_best)} looks "
                    f"cheapest at {_figure(comparison, drop_best, 'drop', metric)} per accepted "
                    f"result; {safe_label(keep_best)} "
                    f"{_figure(comparison, keep_best, 'keep', metric)} vs "
                    f"{_figure(comparison, drop_best, 'keep', metric)} when failures are kept), "
                    f"but on this sample the flip is {why}: {safe_label(noise.a)} vs "
                    f"{safe_label(noise.b)} {ratio_text(noise)}, {sample_text(noise)}."
                    f"{left_out}"
                )
            return (
                f"{hides} and flips the {ranking}: {safe_label(drop_best)} looks cheapest "
                f"({_figure(comparison, drop_best, 'drop', metric)} per accepted result) but "
                f"{safe_label(keep_best)} is cheaper "
                f"({_figure(comparison, keep_best, 'keep', metric)} vs "
                f"{_figure(comparison, drop_best, 'keep', metric)} when failures are kept)."
                f"{left_out}"
            )
        moved = ", ".join(
            f"{safe_label(move.group)} #{rank_text(move.keep_rank, move.keep_worst)}"
            f"→#{rank_text(move.drop_rank, move.drop_worst)}"
            for move in comparison.moves(metric)
        )
        return f"{hides} and reorders the {ranking} ({moved}).{left_out}"
    if comparison.flip_undecided(metric):
        why = undecided(comparison, metric)
        return f"{hides}; whether the {ranking} changes is undecided: {why}.{left_out}"
    return f"{hides}; the {ranking} does not change.{left_out}"


_NAMED = 3  # groups a sentence names before "and N more"


def _figure(comparison: Comparison, label: str, view: View, metric: Metric) -> str:
    """A group's per-accepted figure as it reads, `≥` when it is a lower bound."""
    value = comparison.per_accepted(label, view, metric)
    bound = comparison.is_lower_bound(label, view, metric)
    if metric == "cost":
        return format_money(value, lower_bound=bound)
    return format_tokens(value, lower_bound=bound)


def undecided(comparison: Comparison, metric: Metric = "tokens") -> str:
    """Why ranks are ranges: which groups' figures are lower bounds, and how much of their
    usage is missing or reads 0 (`A's is ≥ 150,000 (2 of 6 attempts without usage)`)."""
    what = "cost" if metric == "cost" else "usage"
    parts = []
    for label, attempts, missing, zeros in comparison.open_bounds(metric):
        causes = []
        if missing:
            causes.append(f"{missing:,} of {plural(attempts, 'attempt')} without {what}")
        if zeros:
            zero = "$0" if metric == "cost" else "0 tokens"
            causes.append(
                f"{zeros:,} reading {zero}"
                if missing
                else f"{zeros:,} of {plural(attempts, 'attempt')} reading {zero}"
            )
        parts.append(f"{safe_label(label)} ({', '.join(causes)})" if causes else safe_label(label))
    if not parts:
        return "some figures are lower bounds"
    named = listing(parts, limit=_NAMED, joiner="and")
    verb = "is a lower bound" if len(parts) == 1 else "are lower bounds"
    noun = "figure" if len(parts) == 1 else "figures"
    return f"the {noun} of {named} {verb}, so their ranks are ranges"
