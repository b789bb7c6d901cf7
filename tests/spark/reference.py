"""The aggregate frame computed by polars, from `tui_ledger.load.load`, for differential tests.

The polars side is the production accounting itself (`ledger._aggregate`, the raw per-group
aggregates `compare` derives every figure from, suspect zeros included, and `checks._cells`).
Comparing the engine against it is comparing against the one
definition, not against a second copy.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from tui_ledger.accounting import checks, ledger
from tui_ledger.spark.aggregate import COUNT_AGGREGATES, VIEWS, aggregate_names

# Floats summed in a different order differ in their last bits: compared relatively, to the
# scale of their rounding error (`_float_scale`).
FLOAT_AGGREGATES = ("var_tokens", "sum_known_cost", "var_cost")
RELATIVE_TOLERANCE = 1e-9


def polars_aggregate_frame(attempts: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """The aggregate frame (tui_ledger/spark/aggregate.py) of `attempts`, by polars."""
    keys = list(by)
    with_cost = ledger.has_cost(attempts)
    raw = ledger._aggregate(attempts, keys, with_cost)
    frame = raw
    # The loader's Categorical keys are text to every reader (ledger.py reads them as their
    # String): the aggregate frame carries them as String, as the engine returns them.
    frame = frame.with_columns(
        pl.col(name).cast(pl.String) for name in keys if frame.schema[name] == pl.Categorical
    )
    counts = [f"{view}__{name}" for view in VIEWS for name in COUNT_AGGREGATES]
    if with_cost:
        counts += [
            f"{view}__{name}" for view in VIEWS for name in ("known_cost", "suspect_zero_cost")
        ]
    frame = frame.with_columns(pl.col(counts).cast(pl.Int64))
    ordered = [f"{view}__{name}" for view in VIEWS for name in aggregate_names(with_cost)]
    return frame.select(*keys, *ordered).sort(keys, nulls_last=True, maintain_order=True)


def polars_check_cells(attempts: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """checks.py's one pass over the attempts, sorted like the engine's `check_cells`."""
    cells = checks._cells(attempts, list(by))
    cells = cells.with_columns(
        pl.col(name).cast(pl.String)
        for name, dtype in cells.schema.items()
        if dtype == pl.Categorical
    )
    grouping = [name for name in cells.columns if name not in _CELL_COUNTS]
    return cells.select(*grouping, *_CELL_COUNTS).sort(grouping, nulls_last=True)


_CELL_COUNTS = (
    "attempts",
    "accepted",
    "missing_usage",
    "suspect_zero",
    "ungraded",
    "recorded_usage",
)


def assert_same_aggregates(spark_frame: pl.DataFrame, polars_frame: pl.DataFrame) -> None:
    """Equal column for column: exact for counts, sums and medians (dtype included), within
    a relative 1e-9 for the float aggregates (variances, cost sums)."""
    assert spark_frame.columns == polars_frame.columns
    assert spark_frame.height == polars_frame.height, (spark_frame, polars_frame)
    for name in spark_frame.columns:
        ours, theirs = spark_frame[name], polars_frame[name]
        if name.split("__")[-1] in FLOAT_AGGREGATES:
            assert (ours.is_null() == theirs.is_null()).all(), name
            scale = _float_scale(polars_frame, name).abs().clip(1.0)
            both = pl.DataFrame({"a": ours, "b": theirs, "scale": scale}).drop_nulls()
            gap = both.select(((pl.col("a") - pl.col("b")).abs() / pl.col("scale")).max()).item()
            assert gap is None or gap <= RELATIVE_TOLERANCE, (name, gap)
            continue
        assert ours.dtype == theirs.dtype, (name, ours.dtype, theirs.dtype)
        assert ours.to_list() == theirs.to_list(), (name, ours.to_list(), theirs.to_list())


def _float_scale(frame: pl.DataFrame, name: str) -> pl.Series:
    """What a float aggregate's rounding error is relative to. A sum: itself. A variance:
    the larger of itself and the squared mean, since a variance computed in doubles loses
    digits in proportion to mean**2 (two values of 2**53 that differ by 1 have a variance of
    0.5, which either engine may round to 0 or 1): that is the float's precision, not a
    difference between the engines."""
    view, aggregate = name.split("__", 1)
    values = frame[name].cast(pl.Float64)
    if not aggregate.startswith("var_"):
        return values
    measure = "tokens" if aggregate == "var_tokens" else "cost"
    total = frame[f"{view}__sum_known_{measure}"].cast(pl.Float64)
    attempts = frame[f"{view}__attempts"].cast(pl.Float64).clip(1.0)
    squared_mean = (total / attempts) ** 2
    return pl.Series(
        name, [max(abs(v or 0.0), m or 0.0) for v, m in zip(values, squared_mean, strict=True)]
    )
