"""Several questions to the server as one query: one round trip, one plan.

Each part is a Spark DataFrame whose columns are known here (no schema is asked of the
server). `run_parts` renames each part's columns apart (`__part_{n}_{column}`), beside a
`__part` number, unions the parts by name (a part's row holds nulls in the other parts'
columns) and brings the result back as one Arrow table; the rows of each part are then
taken back with their own columns and types. (Not one struct column per part: the
client's Arrow cast refuses a null struct whose fields Spark declares non-nullable.)
Spark plans the union as one query: the parts' stages run side by side on the cluster,
and an exchange two parts share (the same aggregation of the same rows) runs once. A
part that is a sorted page keeps its order: a union's output is its children's
partitions in turn, and a top-K is one partition.

Imports pyspark: only the Spark path imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any, cast

import polars as pl
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from tui_ledger.spark.inputs import column

__all__ = ["Part", "arrow_table", "run_parts"]

PART = "__part"


@dataclass(frozen=True)
class Part:
    """One question: `frame`, whose columns are `columns` (in order)."""

    frame: DataFrame
    columns: Sequence[str]


def run_parts(parts: Mapping[str, Part]) -> dict[str, pl.DataFrame]:
    """Every part's rows, by name, from one query."""
    names = list(parts)
    if not names:
        return {}
    packed = [
        parts[name].frame.select(
            F.lit(index).alias(PART),
            *[column(c).alias(_packed(index, c)) for c in parts[name].columns],
        )
        for index, name in enumerate(names)
    ]
    union = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), packed)
    table = pl.from_arrow(arrow_table(union))
    assert isinstance(table, pl.DataFrame)
    return {
        name: table.filter(pl.col(PART) == index).select(
            pl.col(_packed(index, c)).alias(c) for c in parts[name].columns
        )
        for index, name in enumerate(names)
    }


def arrow_table(frame: DataFrame) -> Any:
    """`frame.toArrow()` without its schema request: `toArrow` asks the server for the
    schema first (an AnalyzePlan, one more round trip a query), then casts the answer to
    it; the query's own answer carries the same schema, cast to here as `toArrow` casts."""
    table, schema = cast(Any, frame)._to_table()
    if schema is None:
        return frame.toArrow()
    arrow_schema = to_arrow_schema(
        schema, error_on_duplicated_field_names_in_struct=True, timezone="UTC"
    )
    return table.cast(arrow_schema)


def _packed(index: int, name: str) -> str:
    return f"__part_{index}_{name}"
