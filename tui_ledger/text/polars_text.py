"""Columns as text, written one way everywhere: nested values (lists, structs) as their JSON,
raw bytes decoded with visible escapes.

The loader validates a nested cell as its JSON text and keeps a column whose type differs between
files as text; CSV exports write nested values the same way.
"""

from __future__ import annotations

import polars as pl


def decode_bytes(values: pl.Series) -> pl.Series:
    """Raw bytes as text, any byte that is not UTF-8 as a visible `\\xNN`."""
    return pl.Series(
        values.name,
        [None if raw is None else raw.decode("utf-8", "backslashreplace") for raw in values],
        dtype=pl.String,
    )


def nested_json(column: pl.Expr) -> pl.Expr:
    """A nested value (a list, a struct) as its JSON text; a null stays null."""
    encoded = pl.struct(column.alias("v")).struct.json_encode()
    return pl.when(column.is_not_null()).then(
        encoded.str.strip_prefix('{"v":').str.strip_suffix("}")
    )


def as_text(name: str, dtype: pl.DataType) -> pl.Expr:
    """Column `name` (of type `dtype`) as text: bytes decoded, nested values as their JSON."""
    column = pl.col(name)
    if dtype == pl.Binary:
        # Raw bytes (rare, Parquet only): decoded in Python, since polars' cast fails on the
        # first byte that is not UTF-8; such bytes show as \xNN, never as a silent null.
        return column.map_batches(decode_bytes, return_dtype=pl.String).alias(name)
    if not dtype.is_nested():
        return column.cast(pl.String)
    return nested_json(column).alias(name)
