"""A stopping rule replayed over a graded ledger: what a token (or dollar) cap would have saved.

Under a cap c every attempt with known usage t spends min(t, c), and stays accepted only if
t <= c (SPEC.md section 6): an accepted attempt above the cap is lost (it counts as failed, as
a vouched-out one does), a failure above it is cut sooner. An attempt with missing usage keeps
its missing usage and its outcome, so a figure it touches stays a lower bound; `cap_figures`
counts the accepted attempts among them (`accepted_unknown`: they could have been cut).

The replay happens at the root, on the attempts `compare` reads (`capped`): every figure of
the accounting (both views, ranks, intervals, pairs, checks, the trap's callout) is then the
capped one, from the one definition, in the CLI, the exports and the app alike. `cap_figures`
gives, per group, what the cap did beside them: `tokens` (the capped total), `attempts_cut`,
`accepted_lost`, `tokens_saved`.

A dollar cap (`$2.50`) reads each attempt's `cost` (`prices.apply_prices`): an attempt whose
cost passes the cap is stopped at it, and its tokens in the same proportion (floor(t * C /
cost): spend is taken to accrue evenly over the attempt). A token cap scales a known cost the
same way (cost * c / t).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, overload

import polars as pl

from tui_ledger.accounting.key_order import sorted_by_text
from tui_ledger.schema import ACCEPTED, COST_COLUMN, OUTCOME_DTYPE

CapUnit = Literal["tokens", "usd"]

# The outcome an accepted attempt stopped by the cap counts as.
CUT_OUTCOME = "failed"

# Per group, what the cap did (`cap_figures`), in the order reports show them.
CAP_FIGURES: tuple[str, ...] = (
    "tokens",
    "attempts_cut",
    "accepted_lost",
    "tokens_saved",
    "accepted_unknown",
)


@dataclass(frozen=True)
class Cap:
    """A hard cap on each attempt's spend: `amount` tokens (an int > 0), or USD (> 0)."""

    amount: int | float
    unit: CapUnit = "tokens"

    def __post_init__(self) -> None:
        if not self.amount > 0:
            raise ValueError(f"a cap must be more than 0, got {self.amount!r}")
        if self.unit == "tokens" and not isinstance(self.amount, int):
            raise ValueError(f"a token cap is a whole number of tokens, got {self.amount!r}")

    @property
    def words(self) -> str:
        """The cap as people read it: `1,000,000` or `$2.50`."""
        if self.unit == "usd":
            return f"${self.amount:,.2f}" if self.amount >= 0.01 else f"${self.amount:g}"
        return f"{self.amount:,}"

    def as_json(self) -> dict[str, object]:
        return {"amount": self.amount, "unit": self.unit, "words": self.words}


def _over(cap: Cap) -> pl.Expr:
    """The attempts the cap stops (false where their usage, or cost, is missing)."""
    if cap.unit == "usd":
        return (pl.col(COST_COLUMN).cast(pl.Float64) > cap.amount).fill_null(False)
    return (pl.col("tokens") > cap.amount).fill_null(False)


def _capped_tokens(cap: Cap) -> pl.Expr:
    tokens = pl.col("tokens")
    if cap.unit == "usd":
        cost = pl.col(COST_COLUMN).cast(pl.Float64)
        share = (tokens.cast(pl.Float64) * cap.amount / cost).floor().cast(pl.Int64)
        return pl.when(_over(cap)).then(pl.min_horizontal(share, tokens)).otherwise(tokens)
    return pl.when(_over(cap)).then(pl.lit(cap.amount, dtype=pl.Int64)).otherwise(tokens)


def _capped_cost(cap: Cap) -> pl.Expr:
    cost = pl.col(COST_COLUMN).cast(pl.Float64)
    if cap.unit == "usd":
        return pl.when(_over(cap)).then(pl.lit(float(cap.amount))).otherwise(cost)
    scaled = cost * cap.amount / pl.col("tokens").cast(pl.Float64)
    return pl.when(_over(cap)).then(scaled).otherwise(cost)


def needs_cost(cap: Cap | None, columns: Sequence[str]) -> str | None:
    """Why the cap cannot be replayed on attempts with these columns (a dollar cap with no
    cost), as one line for people; None when it can."""
    if cap is not None and cap.unit == "usd" and COST_COLUMN not in columns:
        return (
            f"a dollar cap ({cap.words}) needs each attempt's cost: give --prices FILE or "
            "--flat-price PRICE, or a ledger with a cost column; or cap tokens (e.g. 1m)"
        )
    return None


@overload
def capped(attempts: pl.DataFrame, cap: Cap | None) -> pl.DataFrame: ...
@overload
def capped(attempts: pl.LazyFrame, cap: Cap | None) -> pl.LazyFrame: ...
@overload
def capped(
    attempts: pl.DataFrame | pl.LazyFrame, cap: Cap | None
) -> pl.DataFrame | pl.LazyFrame: ...


def capped(attempts: pl.DataFrame | pl.LazyFrame, cap: Cap | None) -> pl.DataFrame | pl.LazyFrame:
    """The attempts as the cap would have left them: tokens min(t, c), an accepted attempt
    above the cap failed, a known cost cut in proportion. None: the attempts unchanged."""
    if cap is None:
        return attempts
    columns = attempts.collect_schema().names()
    problem = needs_cost(cap, columns)
    if problem is not None:
        raise ValueError(problem)
    lost = _over(cap) & (pl.col("outcome") == ACCEPTED)
    changes = [
        _capped_tokens(cap).alias("tokens"),
        pl.when(lost)
        .then(pl.lit(CUT_OUTCOME, dtype=OUTCOME_DTYPE))
        .otherwise(pl.col("outcome"))
        .alias("outcome"),
    ]
    if COST_COLUMN in columns:
        changes.append(_capped_cost(cap).alias(COST_COLUMN))
    return attempts.with_columns(changes)


def cap_figures(attempts: pl.DataFrame | pl.LazyFrame, cap: Cap, by: Sequence[str]) -> pl.DataFrame:
    """Per group (sorted by the keys' text), what the cap did (`CAP_FIGURES`): the capped
    total of known usage, the attempts it stopped, the accepted results it lost, the tokens it
    saved, and the accepted attempts whose usage is missing (they could have been cut; the
    figure stays a lower bound). The capped total is the one the accounting reads."""
    keys = list(by)
    over = _over(cap)
    tokens = pl.col("tokens").cast(pl.Int128)
    capped_tokens = _capped_tokens(cap).cast(pl.Int128)
    accepted = pl.col("outcome") == ACCEPTED
    figures = (
        attempts.lazy()
        .group_by(keys)
        .agg(
            capped_tokens.sum().alias("tokens"),
            over.sum().cast(pl.UInt32).alias("attempts_cut"),
            (over & accepted).sum().cast(pl.UInt32).alias("accepted_lost"),
            (tokens - capped_tokens).sum().alias("tokens_saved"),
            (accepted & pl.col("tokens").is_null()).sum().cast(pl.UInt32).alias("accepted_unknown"),
        )
        .collect()
    )
    return sorted_by_text(figures, keys)


def figures_by_group(figures: pl.DataFrame, by: Sequence[str]) -> dict[tuple[object, ...], dict]:
    """`cap_figures` as {group key tuple: {figure: value}}, for the reports and the app."""
    keys = list(by)
    out: dict[tuple[object, ...], dict] = {}
    for row in figures.iter_rows(named=True):
        out[tuple(row[key] for key in keys)] = {name: row[name] for name in CAP_FIGURES}
    return out


def kept_accepted(cap: Cap | None, accepted: pl.Expr) -> pl.Expr:
    """The rows `accepted` picks that stay accepted under the cap (all of them without one):
    what a DROP FAILURES table lists under a cap."""
    return accepted if cap is None else accepted & ~_over(cap)


def stop_position(running_totals: Sequence[int], cap: int) -> int | None:
    """Where a token cap stops an attempt whose steps spent these running totals (log order):
    the position of the first step whose running total passes the cap (it is cut during that
    step), or None when the steps stay within it."""
    from bisect import bisect_right

    position = bisect_right(running_totals, cap)
    return position if position < len(running_totals) else None
