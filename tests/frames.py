"""Comparing attempts frames in tests."""

from __future__ import annotations

import polars as pl
from polars.testing import assert_frame_equal


def assert_same_attempts(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    """The same attempts, whether a text column is held as text or as Categorical (`load`
    reads a CSV's keys as Categorical; `scan` keeps them as text)."""
    as_text = pl.col(pl.Categorical).cast(pl.String)
    assert_frame_equal(got.with_columns(as_text), expected.with_columns(as_text))
