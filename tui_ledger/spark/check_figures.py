"""The fair-comparison checks' cells and the duplicate figures, computed by Spark: the same
per-group counts `accounting.checks` reads from polars (`check_cells`, `check_cell_plan`,
`finish_check_cells`) and the duplicated attempts' figures (`duplicate_figures`,
`duplicate_plans`, `finish_duplicates`). Each question is a `batch.Part`, so a caller asks them
in one query with the aggregates (`commands.spark_figures`), or each alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from tui_ledger.accounting.checks import (
    CELL_COUNTS,
    ID_COLUMNS,
    IDENTIFYING_COLUMNS,
    VERSION_COLUMNS,
)
from tui_ledger.accounting.key_order import sorted_by_text
from tui_ledger.schema import (
    ACCEPTED,
    LINE_COLUMN,
    SOURCE_COLUMN,
    normalise_name,
)
from tui_ledger.spark.batch import Part, run_parts
from tui_ledger.spark.engine import HELPER_PREFIX, ORDER_COLUMNS
from tui_ledger.spark.inputs import column

__all__ = [
    "DuplicateFigures",
    "check_cell_plan",
    "check_cells",
    "duplicate_figures",
    "duplicate_plans",
    "finish_check_cells",
    "finish_duplicates",
]


def version_columns(names: Sequence[str], keys: Sequence[str]) -> list[str]:
    """Columns that name what ran inside a group (model, version, ...), as checks.py picks
    them: a group holding more than one value of one mixes them."""
    wanted = set(VERSION_COLUMNS)
    return [
        name
        for name in names
        if name not in keys
        and not name.startswith(HELPER_PREFIX)
        and (normalise_name(name) in wanted or normalise_name(name).endswith("_version"))
    ]


def check_cell_plan(attempts: DataFrame, by: Sequence[str], names: Sequence[str]) -> Part:
    """Counts per group, task and model/version value: the frame checks.py's `_cells` makes,
    from which every group-, task- and version-level check is a sum. Columns: the keys,
    `task` (when present and not a key), the version columns, then `attempts`, `accepted`,
    `missing_usage`, `suspect_zero`, `ungraded`, `recorded_usage` (rows with usage above 0;
    none in a group is usage not recorded). `finish_check_cells` types and sorts them."""
    keys = list(by)
    task = ["task"] if "task" in names and "task" not in keys else []
    grouping = [*keys, *task, *version_columns(names, keys)]
    tokens = F.col("tokens")
    cells = attempts.groupBy(*[column(name) for name in grouping]).agg(
        F.count(F.lit(1)).alias("attempts"),
        F.count_if(F.col("outcome") == ACCEPTED).alias("accepted"),
        F.count_if(tokens.isNull()).alias("missing_usage"),
        F.count_if(tokens == 0).alias("suspect_zero"),
        F.count_if(F.col("outcome") == "ungraded").alias("ungraded"),
        F.count_if(tokens > 0).alias("recorded_usage"),
    )
    counts = ["attempts", "accepted", "missing_usage", "suspect_zero", "ungraded"]
    return Part(cells, [*grouping, *counts, "recorded_usage"])


def finish_check_cells(cells: pl.DataFrame) -> pl.DataFrame:
    """The check cells as checks.py reads them: Int64 counts, sorted by every grouping column."""
    grouping = [name for name in cells.columns if name not in CELL_COUNTS]
    return sorted_by_text(cells.with_columns(pl.col(CELL_COUNTS).cast(pl.Int64)), grouping)


def check_cells(attempts: DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """`check_cell_plan`'s frame, as one query."""
    plan = check_cell_plan(attempts, by, attempts.columns)
    return finish_check_cells(run_parts({"cells": plan})["cells"])


@dataclass(frozen=True)
class DuplicateFigures:
    """What checks.py's duplicate checks count, computed by the engine.

    `id_column`: the first of `checks.ID_COLUMNS` present; `repeated_id_rows` rows carry an
    id that appears more than once, over `repeated_ids` distinct ids (`id_examples`: the
    first five, sorted). `repeated_attempt_rows`: rows sharing keys, task and an explicit
    attempt number with another; `repeated_identities` how many such (keys, task, attempt)
    values repeat and `identity_examples` the first three as labels (sorted: a distributed
    table has no first rows). `copied_rows`: rows that are exact copies of another (every
    column but the source and line alike), counted only when an identifying column exists;
    None where a check does not apply.
    """

    id_column: str | None
    repeated_id_rows: int | None
    repeated_ids: int | None
    id_examples: tuple[str, ...]
    repeated_attempt_rows: int | None
    copied_rows: int | None
    repeated_identities: int = 0
    identity_examples: tuple[str, ...] = ()


def duplicate_plans(
    attempts: DataFrame, by: Sequence[str], columns: Sequence[str]
) -> dict[str, Part]:
    """The duplicate checks' questions, each a few rows (`finish_duplicates` reads them)."""
    keys = list(by)
    names = [name for name in columns if not name.startswith(HELPER_PREFIX)]
    plans: dict[str, Part] = {}
    id_column = next((name for name in ID_COLUMNS if name in names), None)
    if id_column is not None:
        ids = (
            attempts.where(column(id_column).isNotNull())
            .groupBy(column(id_column).alias("id"))
            .agg(F.count(F.lit(1)).alias("n"))
            .where(F.col("n") > 1)
        )
        plans["ids"] = Part(
            ids.agg(F.sum("n").alias("rows"), F.count(F.lit(1)).alias("ids")), ["rows", "ids"]
        )
        first = ids.select(F.col("id").cast("string").alias("id")).orderBy("id").limit(5)
        plans["id_examples"] = Part(first, ["id"])
    if "attempt" in names and "task" in names:
        identity = list(dict.fromkeys([*keys, "task", "attempt"]))
        numbered = attempts.where(F.col("attempt").isNotNull())
        repeats = (
            numbered.groupBy(*[column(n) for n in identity])
            .agg(F.count(F.lit(1)).alias("n"))
            .where(F.col("n") > 1)
        )
        plans["attempts"] = Part(repeats.agg(F.sum("n").alias("rows")), ["rows"])
        label = F.concat_ws(
            " · ", *[F.coalesce(column(n).cast("string"), F.lit("—")) for n in identity]
        )
        labels = (
            numbered.groupBy(label.alias("who"))
            .agg(F.count(F.lit(1)).alias("n"))
            .where(F.col("n") > 1)
        )
        plans["identities"] = Part(labels.agg(F.count(F.lit(1)).alias("n")), ["n"])
        plans["identity_examples"] = Part(labels.select("who").orderBy("who").limit(3), ["who"])
    if any(name in names for name in (*IDENTIFYING_COLUMNS, *ID_COLUMNS)):
        content = [
            name
            for name in names
            if name not in (LINE_COLUMN, SOURCE_COLUMN) and name not in ORDER_COLUMNS
        ]
        groups = attempts.groupBy(*[column(n) for n in content]).agg(F.count(F.lit(1)).alias("n"))
        plans["copies"] = Part(
            groups.where(F.col("n") > 1).agg(
                F.sum("n").alias("rows"), F.count(F.lit(1)).alias("groups")
            ),
            ["rows", "groups"],
        )
    return {f"duplicates_{name}": plan for name, plan in plans.items()}


def finish_duplicates(
    found: Mapping[str, pl.DataFrame], columns: Sequence[str]
) -> DuplicateFigures:
    """The duplicate figures from the answers to `duplicate_plans`."""

    def one(name: str, field: str) -> int:
        value = found[f"duplicates_{name}"][field][0]
        return int(value or 0)

    names = [name for name in columns if not name.startswith(HELPER_PREFIX)]
    id_column = next((name for name in ID_COLUMNS if name in names), None)
    repeated_id_rows = repeated_ids = None
    id_examples: tuple[str, ...] = ()
    if id_column is not None:
        repeated_id_rows, repeated_ids = one("ids", "rows"), one("ids", "ids")
        id_examples = tuple(str(v) for v in found["duplicates_id_examples"]["id"])
    repeated_attempt_rows = None
    identities = 0
    identity_examples: tuple[str, ...] = ()
    if "duplicates_attempts" in found:
        repeated_attempt_rows = one("attempts", "rows")
        identities = one("identities", "n")
        identity_examples = tuple(str(v) for v in found["duplicates_identity_examples"]["who"])
    copied_rows = None
    if "duplicates_copies" in found:
        copied_rows = one("copies", "rows") - one("copies", "groups")
    return DuplicateFigures(
        id_column,
        repeated_id_rows,
        repeated_ids,
        id_examples,
        repeated_attempt_rows,
        copied_rows,
        identities,
        identity_examples,
    )


def duplicate_figures(attempts: DataFrame, by: Sequence[str]) -> DuplicateFigures:
    """The duplicate checks' figures, as one query (only counts and a few labels come back)."""
    columns = attempts.columns
    return finish_duplicates(run_parts(duplicate_plans(attempts, by, columns)), columns)
