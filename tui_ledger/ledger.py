"""The accounting: both views and every metric of the contract, written once as polars expressions.

The TUI, `ledger-tui summary`, the exports and the benchmarks all call `compare` (or `summarize`);
nothing else computes a metric. Both views come out of a single `group_by` pass, so a toggle in
the app costs nothing and a summary of ten million rows reads them once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from tui_ledger.schema import ACCEPTED, OUTCOMES

View = Literal["keep", "drop"]
VIEWS: tuple[View, ...] = ("keep", "drop")
VIEW_TITLES: dict[str, str] = {"keep": "KEEP FAILURES", "drop": "DROP FAILURES"}
VIEW_GLOSSES: dict[str, str] = {"keep": "honest", "drop": "the trap"}

DEFAULT_BY: tuple[str, ...] = ("workflow",)

# The per-group metrics, in the order reports show them.
METRICS: tuple[str, ...] = (
    "attempts",
    "accepted",
    "pass_rate",
    *OUTCOMES,
    "missing_usage",
    "median_tokens_per_attempt",
    "total_tokens",
    "tokens_per_accepted_result",
    "lower_bound",
    "rank",
)

_outcome = pl.col("outcome")
_tokens = pl.col("tokens")


def counted(view: View) -> pl.Expr:
    """Which attempts a view counts: every one (keep), or only the accepted ones (drop)."""
    if view == "keep":
        # Every attempt has an outcome (the loader guarantees it), so this is "every row",
        # as a column-shaped mask: a bare literal would aggregate as a single value.
        return _outcome.is_not_null()
    if view == "drop":
        return _outcome == ACCEPTED
    raise ValueError(f"unknown view {view!r}: expected 'keep' or 'drop'")


def _aggregations(view: View) -> list[pl.Expr]:
    """Raw per-group aggregates of one view, prefixed with the view's name."""
    in_view = counted(view)
    usage = _tokens.filter(in_view)
    aggregates = [
        in_view.sum().alias("attempts"),
        (in_view & (_outcome == ACCEPTED)).sum().alias("accepted"),
        *[(in_view & (_outcome == name)).sum().alias(name) for name in OUTCOMES],
        (in_view & _tokens.is_null()).sum().alias("missing_usage"),
        (in_view & _tokens.is_not_null()).sum().alias("known_usage"),
        usage.median().alias("median_tokens_per_attempt"),
        # Int128: a sum of Int64 token counts can pass 2**63; it must never wrap.
        usage.cast(pl.Int128).sum().alias("sum_known_tokens"),
    ]
    return [expr.alias(f"{view}__{expr.meta.output_name()}") for expr in aggregates]


def _finish(view: View) -> list[pl.Expr]:
    """Derived metrics of one view from its raw aggregates (column names without prefix)."""
    attempts, accepted = pl.col("attempts"), pl.col("accepted")
    total_tokens = (
        pl.when(attempts == 0)
        .then(pl.lit(0, dtype=pl.Int128))
        .when(pl.col("known_usage") == 0)
        .then(pl.lit(None, dtype=pl.Int128))
        .otherwise(pl.col("sum_known_tokens"))
        .alias("total_tokens")
    )
    per_accepted = (
        pl.when((accepted > 0) & total_tokens.is_not_null())
        .then(total_tokens.cast(pl.Float64) / accepted)
        .otherwise(None)
        .alias("tokens_per_accepted_result")
    )
    ranked = per_accepted.rank("min")
    return [
        pl.when(attempts > 0).then(accepted / attempts).alias("pass_rate"),
        total_tokens,
        per_accepted,
        # A lower bound: some attempts' usage is unknown, so the true figure can only be higher.
        (per_accepted.is_not_null() & (pl.col("missing_usage") > 0)).alias("lower_bound"),
        # 1 = fewest tokens per accepted result; groups with no figure share the last place.
        ranked.fill_null(per_accepted.is_not_null().sum() + 1).cast(pl.UInt32).alias("rank"),
    ]


def _group_keys(by: Sequence[str]) -> list[str]:
    if not by:
        raise ValueError("group by needs at least one column")
    return list(by)


def _aggregate(attempts: pl.DataFrame | pl.LazyFrame, by: Sequence[str]) -> pl.LazyFrame:
    keys = _group_keys(by)
    return (
        attempts.lazy()
        .group_by(keys)
        .agg(*_aggregations("keep"), *_aggregations("drop"))
        .sort(keys, nulls_last=True)
    )


def _view_frame(raw: pl.DataFrame, keys: list[str], view: View) -> pl.DataFrame:
    prefix = f"{view}__"
    columns = [pl.col(f"{prefix}{name}").alias(name) for name in _raw_names()]
    frame = raw.select(*keys, *columns).with_columns(_finish(view))
    return frame.select(*keys, *METRICS)


def _raw_names() -> list[str]:
    return [expr.meta.output_name().split("__", 1)[1] for expr in _aggregations("keep")]


def summarize(
    attempts: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str] = DEFAULT_BY,
    view: View = "keep",
) -> pl.DataFrame:
    """Every metric of one view, one row per group (every group, even one the view empties)."""
    keys = _group_keys(by)
    raw = _aggregate(attempts, keys).collect()
    return _view_frame(raw, keys, view)


@dataclass(frozen=True)
class Move:
    """A group whose rank differs between the views."""

    group: str
    keep_rank: int
    drop_rank: int


@dataclass(frozen=True)
class Comparison:
    """Both views of one set of attempts, and what dropping failures does to them."""

    by: tuple[str, ...]
    keep: pl.DataFrame
    drop: pl.DataFrame
    trap: pl.DataFrame  # by + hidden_tokens, hidden_attempts, trap_factor, keep_rank, drop_rank

    def view(self, view: View) -> pl.DataFrame:
        """The summary frame of one view."""
        return self.keep if view == "keep" else self.drop

    @property
    def labels(self) -> list[str]:
        """Each group's name as people read it (several keys joined with ` · `)."""
        return group_labels(self.keep, self.by)

    @property
    def moves(self) -> list[Move]:
        """Groups whose rank changes when failures are dropped."""
        return [
            Move(label, int(keep_rank), int(drop_rank))
            for label, keep_rank, drop_rank in zip(
                self.labels, self.trap["keep_rank"], self.trap["drop_rank"], strict=True
            )
            if keep_rank != drop_rank
        ]

    @property
    def flips(self) -> bool:
        """Whether the ranking differs between the views."""
        return bool(self.moves)

    @property
    def hidden_tokens(self) -> int | None:
        """Tokens that dropping failures hides, over every group (None when unknown)."""
        known = self.trap["hidden_tokens"].drop_nulls()
        return int(known.sum()) if len(known) else None

    @property
    def hidden_attempts(self) -> int:
        """Attempts that dropping failures removes from the arithmetic."""
        return int(self.trap["hidden_attempts"].sum())

    def best(self, view: View) -> str | None:
        """The group ranked first (fewest tokens per accepted result) in a view, if any."""
        frame = self.view(view)
        for label, rank, value in zip(
            self.labels, frame["rank"], frame["tokens_per_accepted_result"], strict=True
        ):
            if rank == 1 and value is not None:
                return label
        return None

    def per_accepted(self, label: str, view: View) -> float | None:
        """A group's tokens per accepted result in a view."""
        return self.view(view)["tokens_per_accepted_result"][self.labels.index(label)]


def group_labels(frame: pl.DataFrame, by: Sequence[str]) -> list[str]:
    """Group names as shown: the key values, several keys joined with ` · `, null as `—`."""
    columns = [frame[name].cast(pl.String).fill_null("—").to_list() for name in by]
    return [" · ".join(parts) for parts in zip(*columns, strict=True)]


def compare(attempts: pl.DataFrame | pl.LazyFrame, by: Sequence[str] = DEFAULT_BY) -> Comparison:
    """Both views and the trap figures (hidden tokens, trap factor, rank moves) in one pass."""
    keys = _group_keys(by)
    raw = _aggregate(attempts, keys).collect()
    keep = _view_frame(raw, keys, "keep")
    drop = _view_frame(raw, keys, "drop")
    trap = keep.select(keys).with_columns(
        (keep["total_tokens"] - drop["total_tokens"]).alias("hidden_tokens"),
        (keep["attempts"].cast(pl.Int64) - drop["attempts"].cast(pl.Int64)).alias(
            "hidden_attempts"
        ),
        (keep["tokens_per_accepted_result"] / drop["tokens_per_accepted_result"]).alias(
            "trap_factor"
        ),
        keep["rank"].alias("keep_rank"),
        drop["rank"].alias("drop_rank"),
    )
    return Comparison(by=tuple(keys), keep=keep, drop=drop, trap=trap)


def in_view(attempts: pl.DataFrame, view: View) -> pl.DataFrame:
    """The attempts a view counts (the rows the table shows)."""
    return attempts if view == "keep" else attempts.filter(counted(view))
