"""The cube's range tables are built a bounded number of table entries at a time (issue 56:
at 1M rows the whole table's temporaries at once added about 80 MB to the app's peak), and
each cell's figures are the same whatever the chunk."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from tui_ledger.accounting import cube

CELLS, PER_CELL, WIDTH, SCALE = 100_000, 8, 16, 2**10


def _index() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A median index's arrays: CELLS cells of PER_CELL sorted values each, WIDTH edges."""
    rng = np.random.default_rng(7)
    offsets = np.sort(rng.integers(0, SCALE, size=(CELLS, PER_CELL)), axis=1)
    packed = (np.arange(CELLS, dtype=np.int64)[:, None] * SCALE + offsets).ravel()
    starts = np.arange(CELLS, dtype=np.int64) * PER_CELL
    known = np.full(CELLS, PER_CELL, dtype=np.int64)
    edges = np.linspace(0, SCALE, WIDTH).astype(np.int64)
    table = (offsets[:, :, None] < edges[None, None, :]).sum(axis=1).astype(np.int32)
    return packed, starts, known, table


def test_range_tables_hold_few_temporaries_beside_their_results() -> None:
    packed, starts, known, table = _index()
    results = 2 * CELLS * WIDTH * 8 + CELLS * 8  # sums, squares, centres
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        cube._range_tables(packed, starts, known, table, SCALE)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    # The whole table at once held about 5x its results in temporaries.
    assert peak < results + 16 * 2**20, f"{peak / 2**20:.0f} MiB for {results / 2**20:.0f} MiB"


def test_range_tables_are_the_same_whatever_the_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    packed, starts, known, table = _index()
    chunked = cube._range_tables(packed, starts, known, table, SCALE)
    monkeypatch.setattr(cube, "RANGE_CHUNK_ENTRIES", CELLS * WIDTH)
    whole = cube._range_tables(packed, starts, known, table, SCALE)
    for got, want in zip(chunked, whole, strict=True):
        np.testing.assert_array_equal(got, want)
    # Each cell's sum below the last edge is the sum of its offsets below it.
    offsets = (packed & (SCALE - 1)).reshape(CELLS, PER_CELL)
    below = np.where(offsets < SCALE, offsets, 0).sum(axis=1)
    np.testing.assert_array_equal(chunked[0][:, -1], below)
