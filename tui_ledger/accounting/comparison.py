"""What `ledger.compare` returns: `Comparison` (both views of one set of attempts, and what
dropping failures does to them), its rank moves (`Move`), the groups' labels, and the usage
statuses a view's `usage` column holds.

Every figure in it is computed by `ledger` (the one definition); this module only reads them.
It lives apart from `ledger` so that the accounting stays one readable module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import polars as pl

from tui_ledger.accounting.stats import IntervalSettings
from tui_ledger.accounting.verdicts import Pairs
from tui_ledger.schema import VIEWS, View

# A group's usage in a view (the `usage` and `cost_usage` columns, SPEC.md sections 1 and 3):
RECORDED = "recorded"  # every attempt's usage is known and none reads 0: figures are exact
LOWER_BOUND = "lower_bound"  # some usage is missing or a suspect 0: total and per accepted are >=
NOT_RECORDED = "not_recorded"  # every attempt's usage is missing or 0: no figure, no rank
USAGE_STATUSES: tuple[str, ...] = (RECORDED, LOWER_BOUND, NOT_RECORDED)


Metric = Literal["tokens", "cost"]
"""What "per accepted result" counts: tokens, or cost (USD, with a cost column)."""
ParetoMetric = Metric
# Per metric: its figure and rank in a view's frame, and its ranks in the trap frame.
_RANKED: dict[str, tuple[str, str]] = {
    "tokens": ("tokens_per_accepted_result", "rank"),
    "cost": ("cost_per_accepted_result", "cost_rank"),
}
# Per metric: the prefix of its rank columns in a view frame (`rank_best`, `cost_rank_best`).
RANK_PREFIX: dict[str, str] = {"tokens": "rank", "cost": "cost_rank"}


@dataclass(frozen=True)
class Move:
    """A group whose rank may differ between the views: its rank range in each.

    `keep_rank`, `drop_rank` are the best places, `keep_worst`, `drop_worst` the worst (equal
    when the figures decide the place). `certain`: the ranges do not overlap, so the group
    moves whatever the missing or suspect usage was.
    """

    group: str
    keep_rank: int
    drop_rank: int
    keep_worst: int
    drop_worst: int

    @property
    def certain(self) -> bool:
        return bool(_certain(self.keep_rank, self.keep_worst, self.drop_rank, self.drop_worst))


def _certain(keep_best: Any, keep_worst: Any, drop_best: Any, drop_worst: Any) -> Any:
    """A move is certain when the rank ranges do not overlap: the one definition, read on a
    `Move`'s ints and, as an expression, on the trap frame's rank columns."""
    return (keep_worst < drop_best) | (drop_worst < keep_best)


@dataclass(frozen=True)
class Comparison:
    """Both views of one set of attempts, and what dropping failures does to them."""

    by: tuple[str, ...]
    keep: pl.DataFrame
    drop: pl.DataFrame
    # by + hidden_tokens, hidden_attempts, trap_factor (null when the drop figure is a lower
    # bound), trap_factor_lower_bound, and per view (keep_, drop_) rank,
    # rank_best, rank_worst; with a cost column also hidden_cost, cost_trap_factor(_lower_bound)
    # and per
    # view cost_rank, cost_rank_best, cost_rank_worst.
    trap: pl.DataFrame
    # The frames' columns of the keys `by` names (`ledger.group_column`): a key's own name,
    # or `__by_<name>` where the accounting derives a column of that name (`passed`).
    key_columns: tuple[str, ...]
    intervals: IntervalSettings = field(default_factory=IntervalSettings)
    # The pairwise verdicts (`pairs.with_pairs`), once drawn: None until then.
    pairs: Pairs | None = None
    # Which acceptances the figures count: "graded" (the verdicts as given) or "vouched" (only
    # those the grader can vouch for: `grader.Audit.apply`); the front end that applied it says.
    accepted: str = "graded"

    @property
    def has_cost(self) -> bool:
        """Whether the comparison carries cost figures (the attempts had a cost column)."""
        return "cost_per_accepted_result" in self.keep.columns

    @property
    def hidden_cost(self) -> float | None:
        """USD that dropping failures hides, over every group (None when unknown or unpriced)."""
        if not self.has_cost:
            return None
        known = self.trap["hidden_cost"].drop_nulls()
        return float(known.sum()) if len(known) else None

    def view(self, view: View) -> pl.DataFrame:
        """The summary frame of one view."""
        return self.keep if view == "keep" else self.drop

    @cached_property
    def labels(self) -> list[str]:
        """Each group's name as people read it (several keys joined with ` · `); made once
        (200,000 groups: the callout and the summary read it many times a keystroke)."""
        return group_labels(self.keep, self.key_columns)

    def _moves_frame(self, metric: Metric) -> pl.DataFrame:
        """The groups `possible_moves` lists, by row (`__index`, in label order), their rank
        ranges (keep_best, keep_worst, drop_best, drop_worst) and `certain`: one polars pass
        (200,000 groups: a Python loop took a second a draw, twice a draw)."""
        cached = self._moves_cache.get(metric)
        if cached is not None:
            return cached
        prefix = RANK_PREFIX[metric]
        ends = [(view, end) for view in VIEWS for end in ("best", "worst")]
        columns = [pl.col(f"{view}_{prefix}_{end}").alias(f"{view}_{end}") for view, end in ends]
        keep, keep_worst, drop, drop_worst = (pl.col(f"{view}_{end}") for view, end in ends)
        frame = (
            self.trap.select(columns)
            .with_row_index("__index")
            # usage not recorded: no rank to move; decided to one place in both: no move
            .filter(pl.all_horizontal(pl.col(f"{view}_{end}").is_not_null() for view, end in ends))
            .filter(~((keep == keep_worst) & (keep_worst == drop) & (drop == drop_worst)))
            .with_columns(_certain(keep, keep_worst, drop, drop_worst).alias("certain"))
        )
        self._moves_cache[metric] = frame
        return frame

    @cached_property
    def _moves_cache(self) -> dict[str, pl.DataFrame]:
        return {}

    @cached_property
    def said(self) -> dict[tuple[str, ...], str]:
        """What the reports have said of this comparison, by what they said (the callout by
        metric): made once, as the comparison's figures never change."""
        return {}

    def _moves(self, frame: pl.DataFrame) -> list[Move]:
        labels = self.labels
        return [
            Move(labels[index], int(keep), int(drop), int(keep_worst), int(drop_worst))
            for index, keep, keep_worst, drop, drop_worst in frame.select(
                "__index", "keep_best", "keep_worst", "drop_best", "drop_worst"
            ).iter_rows()
        ]

    def possible_moves(self, metric: Metric = "tokens") -> list[Move]:
        """Groups whose rank by `metric` may change when failures are dropped: ranked in both
        views, and not decided to the same place in both. Certain ones have `certain` set."""
        return self._moves(self._moves_frame(metric))

    def moves(self, metric: Metric = "tokens") -> list[Move]:
        """Groups whose rank by `metric` (per accepted result) changes when failures are
        dropped, whatever the values the bounds allow."""
        return self._moves(self._moves_frame(metric).filter(pl.col("certain")))

    def flips(self, metric: Metric = "tokens") -> bool:
        """Whether the ranking by `metric` differs between the views, for every value the
        bounds allow (see `flip_undecided` for the case the bounds leave open)."""
        return bool(self._moves_frame(metric)["certain"].any())

    def flip_undecided(self, metric: Metric = "tokens") -> bool:
        """Whether the bounds leave open if the ranking differs between the views: no group
        moves for certain, but some may."""
        possible = self._moves_frame(metric)
        return possible.height > 0 and not possible["certain"].any()

    @property
    def hidden_tokens(self) -> int | None:
        """Tokens that dropping failures hides, over every group (None when unknown)."""
        known = self.trap["hidden_tokens"].drop_nulls()
        return int(known.sum()) if len(known) else None

    @property
    def hidden_attempts(self) -> int:
        """Attempts that dropping failures removes from the arithmetic."""
        return int(self.trap["hidden_attempts"].sum())

    def best(self, view: View, metric: Metric = "tokens") -> str | None:
        """The group ranked first (fewest tokens, or least cost, per accepted result) in a
        view, if any."""
        value_column, rank_column = _RANKED[metric]
        frame = self.view(view)
        # `rank` is null unless the bounds decide it: a group whose first place depends on
        # missing usage is not called the cheapest.
        first = (
            frame.select(pl.col(rank_column), pl.col(value_column))
            .with_row_index("__index")
            .filter((pl.col(rank_column) == 1) & pl.col(value_column).is_not_null())
            .get_column("__index")
        )
        return self.labels[first[0]] if len(first) else None

    def per_accepted(self, label: str, view: View, metric: Metric = "tokens") -> float | None:
        """A group's tokens (or cost) per accepted result in a view."""
        return self.view(view)[_RANKED[metric][0]][self.labels.index(label)]

    def is_lower_bound(self, label: str, view: View, metric: Metric = "tokens") -> bool:
        """Whether a group's per-accepted figure in a view is only a lower bound."""
        column = "lower_bound" if metric == "tokens" else "cost_lower_bound"
        return bool(self.view(view)[column][self.labels.index(label)])

    def not_recorded(self, metric: Metric = "tokens") -> list[str]:
        """Groups whose usage (or cost) was never recorded: no figure and no rank anywhere."""
        # A cost missing where usage is recorded is unpriced, not unrecorded.
        column = "usage" if metric == "tokens" else "cost_usage"
        return self._labelled(
            (pl.col(column) == NOT_RECORDED) & (pl.col("usage") == NOT_RECORDED), self.keep
        )

    def _labelled(self, condition: pl.Expr, frame: pl.DataFrame) -> list[str]:
        """The labels of the groups (rows of `frame`, in label order) where `condition` holds."""
        labels = self.labels
        rows = frame.with_row_index("__index").filter(condition).get_column("__index")
        return [labels[index] for index in rows]

    def hidden_is_lower_bound(self, metric: Metric = "tokens") -> bool:
        """Whether what dropping failures hides is only a lower bound: some attempt it drops
        has missing usage (or cost) or a suspect 0."""
        missing, zeros = (
            ("missing_usage", "suspect_zeros")
            if metric == "tokens"
            else ("missing_cost", "suspect_zero_cost")
        )
        dropped = (self.keep[missing].cast(pl.Int64) - self.drop[missing].cast(pl.Int64)) + (
            self.keep[zeros].cast(pl.Int64) - self.drop[zeros].cast(pl.Int64)
        )
        return bool((dropped > 0).any())

    def open_bounds(self, metric: Metric = "tokens") -> list[tuple[str, int, int, int]]:
        """Groups ranked with a lower-bound figure in either view, the cause of every rank
        range: (label, attempts, attempts without usage, attempts reading 0), keep view."""
        bound, missing, zeros = (
            ("lower_bound", "missing_usage", "suspect_zeros")
            if metric == "tokens"
            else ("cost_lower_bound", "missing_cost", "suspect_zero_cost")
        )
        either = self.keep[bound] | self.drop[bound]
        return [
            (label, int(attempts), int(absent), int(zero))
            for label, flagged, attempts, absent, zero in zip(
                self.labels,
                either,
                self.keep["attempts"],
                self.keep[missing],
                self.keep[zeros],
                strict=True,
            )
            if flagged
        ]


def group_labels(frame: pl.DataFrame, by: Sequence[str]) -> list[str]:
    """Group names as shown: the key values, several keys joined with ` · `, null as `—`."""
    columns = [pl.col(name).cast(pl.String).fill_null("—") for name in by]
    joined = pl.concat_str(columns, separator=" · ") if len(columns) > 1 else columns[0]
    return frame.select(joined).to_series().to_list()
