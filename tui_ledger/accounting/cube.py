"""A large frame's figures from a summary built once: its cells (`Cube`), not its rows.

A key in the filter of a 100M-row ledger cannot afford a pass over the rows (polars' own
filter and group_by take about a second there). But most filters and groupings name only
columns with few distinct values (workflow, task, model, outcome...), and the figures of any
such request are sums over the cells of one `group_by` of all those columns: `Cube.compare`
filters the cells with the same expression the rows would have been filtered with (they have
the same columns and dtypes), pools them per `[*by, "outcome"]` (`view_cells.pooled_cells`) and
hands them to the same tail as `ledger.compare` (`view_cells.aggregate_frame`,
`ledger.compare_aggregates`).

The medians are exact too: the known usage is sorted once by (cell, tokens) into one packed
integer array (`cell code * scale + tokens - low`), and a group's median over the cells it
selects is the k-th value across those cells' sorted runs (`_MedianIndex`).

A request is covered (`Cube.covers`) when every column its filter reads and every `by`
column is one of the cube's keys, or when the filter's terms on tokens make one range
(`tokens>2000`, `tokens>=10 tokens<1k`; `filtering.token_range`) and its other terms read
only keys. A range is counted from the sorted runs (`_MedianIndex.ranged`): per cell and
edge, the index also holds the sum of the values below the edge (exact, Int64) and their
squared distances from the cell's mean, so a cell's count, sum and `m2` within the range are
two table reads and the values of the bucket where each end of the range falls. A cost
column, a negated term on tokens (two ranges) or `tokens:null` takes the rows' path.

What differs from a count over the rows: the float columns (means, variances, cost sums, and
so the delta-method intervals) are pooled in another order, so they can differ in their last
bits (relative 1e-12 or so), never in a count, a token sum or a median. (Where a variance is
near 0 against the square of its mean, either path's rounding shows in an interval's bounds
at about 1.5e-8 of the estimate.)
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from tui_ledger.accounting.comparison import Comparison
from tui_ledger.accounting.ledger import compare_aggregates, group_column, has_cost
from tui_ledger.accounting.medians import _middle_mean, _past_float_precision
from tui_ledger.accounting.view_cells import _cell_aggregations, aggregate_frame, pooled_cells
from tui_ledger.schema import ACCEPTED, OUTCOME_COLUMN, known_zeros

CUBE_MIN_ROWS = 20_000
"""Smaller frames have no cube: a pass over their rows is quick anyway."""
MAX_CELLS = 2_000_000
"""At most this many cells, and at most a cell per `ROWS_PER_CELL` rows: past that, the key
with the most distinct values is left out (and the requests that read it take the rows)."""
ROWS_PER_CELL = 8
MAX_KEY_VALUES = 65_536
"""A column with more distinct values is no key (an id, a timestamp's text)."""
TABLE_ENTRIES = 2**24
"""The median index's table of counts below each edge, per cell (`_MedianIndex`): at most
this many entries (64 MB of Int32), and at most `MAX_EDGES` edges a cell."""
MAX_EDGES = 1024

_CELL = "__cell"  # a cell's row in the cube (and its run in the median index)
_CODE = "__code"  # a cell's keys' codes as one integer (`_Codes`)
_GROUP = "__group"


def _key_codes(frame: pl.DataFrame, rows_per_cell: int = ROWS_PER_CELL) -> _Codes:
    """The columns a cube of `frame` groups by, fewest distinct values first, as `_Codes`:
    `outcome`, then every Categorical, Enum or Boolean column with at most `MAX_KEY_VALUES`
    distinct values (and at most a value per `rows_per_cell` rows). One pass over them (and
    one more over the keys whose codes are sparse)."""
    candidates = [
        name
        for name, dtype in frame.schema.items()
        if name != OUTCOME_COLUMN and isinstance(dtype, (pl.Categorical, pl.Enum, pl.Boolean))
    ]
    names = [OUTCOME_COLUMN, *candidates]
    found = frame.select(
        *[
            expression.alias(f"__{index}_{part}")
            for index, name in enumerate(names)
            for part, expression in (
                ("count", pl.col(name).n_unique()),
                ("low", _physical(name).min()),
                ("high", _physical(name).max()),
            )
        ]
    ).row(0)
    limit = min(MAX_KEY_VALUES, max(frame.height // rows_per_cell, 1))
    counts = found[0::3]
    kept = sorted(
        (count, index) for index, count in enumerate(counts) if index > 0 and count <= limit
    )
    chosen = [0, *(index for _, index in kept)]
    keys = [names[index] for index in chosen]
    lows = [found[3 * index + 1] or 0 for index in chosen]
    spans = [(found[3 * index + 2] or 0) - low + 1 for index, low in zip(chosen, lows, strict=True)]
    # Categorical codes are the process's, not the frame's: a frame whose values came before
    # and after a million others has codes a million apart. Its codes are then replaced by
    # their places among its own distinct codes (a table to gather from).
    sparse = [
        position
        for position, index in enumerate(chosen)
        if spans[position] > 2 * counts[index] + 64 and spans[position] <= MAX_TABLE_SPAN
    ]
    places: list[pl.Series | None] = [None] * len(keys)
    if sparse:
        distinct = frame.select(
            _physical(keys[position]).drop_nulls().unique().implode().alias(str(position))
            for position in sparse
        ).row(0)
        for position, codes in zip(sparse, distinct, strict=True):
            table = np.zeros(spans[position], dtype=np.int64)
            offsets = np.sort(np.asarray(codes, dtype=np.int64)) - lows[position]
            table[offsets] = np.arange(offsets.size)
            places[position] = pl.Series(table)
            spans[position] = offsets.size
    return _Codes(tuple(keys), tuple(lows), tuple(spans), tuple(places))


MAX_TABLE_SPAN = 2**24
"""A key's codes spread over more than this many are read as they are (offset by the least)."""


@dataclass(frozen=True, eq=False)
class _Codes:
    """The keys' values as the digits of one integer: a key's digit is its physical code
    (a Boolean's 0 or 1) less the frame's least, or its place among the frame's distinct
    codes where those are sparse (`places`); null reads one past the largest digit, and each
    digit is in base its largest + 2."""

    keys: tuple[str, ...]
    lows: tuple[int, ...]  # per key: the least code
    spans: tuple[int, ...]  # per key: how many digits it has (null aside)
    places: tuple[pl.Series | None, ...]  # per key: code - low -> place, where sparse

    def without_last(self) -> _Codes:
        """The same but the last key (the one with the most distinct values)."""
        return _Codes(self.keys[:-1], self.lows[:-1], self.spans[:-1], self.places[:-1])

    @property
    def space(self) -> int:
        """How many codes there can be."""
        total = 1
        for span in self.spans:
            total *= span + 1
        return total

    def expression(self) -> pl.Expr:
        code: pl.Expr | None = None
        for name, low, span, places in zip(
            self.keys, self.lows, self.spans, self.places, strict=True
        ):
            offset = _physical(name) - low
            digit = offset if places is None else pl.lit(places).gather(offset)
            digit = digit.fill_null(span)
            code = digit if code is None else code * (span + 1) + digit
        assert code is not None
        return code.alias(_CODE)


def _physical(name: str) -> pl.Expr:
    """A key's physical code (a Boolean's 0 or 1) as Int64."""
    return pl.col(name).to_physical().cast(pl.Int64)


@dataclass(frozen=True)
class TokenRange:
    """Tokens from `low` to `high`, inclusive (None: unbounded; `low > high`: none), as a
    filter's terms on tokens say (`filtering.token_range`). `exact_below`: those terms compare
    as the rows' filter does only while every value is below this in magnitude (a float bound
    compares Int64 tokens as Float64)."""

    low: int | None
    high: int | None
    exact_below: float = math.inf


class Cube:
    """A frame's cells: one `group_by` of its key columns (`_key_codes`) with the cell
    aggregations `ledger.compare` counts, and the median index of its known usage. Built by
    `build_cube`; answers for that frame only."""

    def __init__(
        self,
        keys: tuple[str, ...],
        cells: pl.DataFrame,
        medians: _MedianIndex,
        with_cost: bool,
    ) -> None:
        self.keys = keys
        self.cells = cells  # the keys, `_CELL` (its row number), the cell aggregations
        self.medians = medians
        self.with_cost = with_cost

    def covers(
        self, where: pl.Expr | None, by: Sequence[str], tokens: TokenRange | None = None
    ) -> bool:
        """Whether the cube answers for this filter and grouping: every column either reads is
        one of its keys; and `tokens`, a range of tokens the rows must be in as well, one it
        can count (its range tables, no cost column, values a float bound compares exactly)."""
        read = set(by) if where is None else {*by, *where.meta.root_names()}
        if not by or not read <= set(self.keys) or any(group_column(k) != k for k in by):
            return False  # a key the accounting names a column of is grouped from the rows
        if tokens is None:
            return True
        index = self.medians
        exact = max(abs(index.low), abs(index.high)) < tokens.exact_below
        return not self.with_cost and index.sums is not None and exact

    def compare(
        self, where: pl.Expr | None, by: Sequence[str], tokens: TokenRange | None = None
    ) -> Comparison:
        """`ledger.compare(frame.filter(where), by, intervals="delta")` from the cells, of the
        attempts whose tokens are in `tokens` too, when given (the request must be covered,
        `covers`). Counts, token sums and medians are the same; float columns the same but
        for their last bits (see the module's note)."""
        if not self.covers(where, by, tokens):
            raise ValueError(f"the cube does not cover the filter {where} by {list(by)}")
        keys = list(by)
        chosen = self.cells if where is None else self.cells.filter(where)
        if tokens is not None:
            chosen = self.medians.ranged(chosen, tokens.low, tokens.high)
        cells = pooled_cells(chosen.lazy(), keys, self.with_cost)
        medians = self.medians.medians(chosen, keys)
        raw = aggregate_frame(cells, medians, keys, self.with_cost)
        return compare_aggregates(
            raw, keys, with_cost=self.with_cost, intervals="delta", bootstrap_rows=None
        )

    def estimated_size(self) -> int:
        """Bytes held (the cells and the median index)."""
        return int(self.cells.estimated_size()) + self.medians.nbytes


def build_cube(
    frame: pl.DataFrame,
    *,
    min_rows: int | None = None,
    rows_per_cell: int = ROWS_PER_CELL,
    max_edges: int = MAX_EDGES,
) -> Cube | None:
    """The cube of `frame`, or None when it has none: fewer than `min_rows` rows
    (`CUBE_MIN_ROWS`), no key column but `outcome`, or a median index past 63 bits. (The
    limits are arguments so tests can build cubes of a few rows, and of few edges.)"""
    least = CUBE_MIN_ROWS if min_rows is None else min_rows
    if frame.height < least or OUTCOME_COLUMN not in frame.columns:
        return None
    codes = _key_codes(frame, rows_per_cell)
    limit = min(MAX_CELLS, max(frame.height // rows_per_cell, 1))
    with_cost = has_cost(frame)
    cell_aggregations = _cell_aggregations(with_cost, known_zeros(frame.schema))
    tokens = pl.col("tokens")
    low, high = frame.select(tokens.min().alias("low"), tokens.max().alias("high")).row(0)
    bits = 0 if low is None else (high - low).bit_length()
    while len(codes.keys) > 1:
        keys = codes.keys
        if (codes.space - 1).bit_length() + bits <= 63:
            cells = (
                frame.lazy()
                .group_by(codes.expression())
                .agg(*[pl.col(name).first() for name in keys], *cell_aggregations)
                .sort(_CODE)
                .with_row_index(_CELL)
                .collect()
            )
            if cells.height <= limit:
                index = _MedianIndex.build(frame, codes, cells, low, bits, max_edges)
                return Cube(keys, cells.drop(_CODE), index, with_cost)
        codes = codes.without_last()
    return None


@dataclass(frozen=True)
class _MedianIndex:
    """The known usage sorted by (cell, tokens), packed as `code * scale + tokens - low` in
    one Int64 array, where each cell's values run together; `starts[c]` is where cell c's run
    starts, `known[c]` its length.

    A group's median over the cells it selects is the mean of the k-th values across their
    runs for its two middle ranks. Searching each run for every step of a binary search over
    the value costs a cache miss a level (1.6 us a probe at 100M values), so the index also
    holds, per cell, how many of its values fall below each of a few hundred edges (`table`;
    the edges are quantiles of all the usage, each with its value + 1 beside it, so a value
    that many attempts share is a bucket of its own). A search first finds, for every target
    at once, the bucket holding its rank (a binary search over the edges: each step sums one
    table entry per selected cell), then gathers only that bucket's values from the selected
    cells' runs and sorts those (`_select`)."""

    packed: np.ndarray  # Int64, sorted
    starts: np.ndarray  # Int64, per cell
    known: np.ndarray  # Int64, per cell
    edges: np.ndarray  # Int64 token offsets (tokens - low), from 0 to `scale`
    table: np.ndarray  # per cell, per edge: its values below the edge
    low: int
    scale: int
    high: int = 0  # the largest value
    # For ranges of tokens (`ranged`), per cell, per edge, over its values below the edge:
    sums: np.ndarray | None = None  # Int64: their offsets' sum (None: a cell's could wrap)
    squares: np.ndarray | None = None  # Float64: their squared distances from `centres`
    centres: np.ndarray | None = None  # Float64, per cell: its offsets' mean

    @property
    def nbytes(self) -> int:
        arrays = (self.packed, self.starts, self.known, self.edges, self.table)
        extra = (self.sums, self.squares, self.centres)
        return sum(array.nbytes for array in (*arrays, *extra) if array is not None)

    @classmethod
    def build(
        cls,
        frame: pl.DataFrame,
        codes: _Codes,
        cells: pl.DataFrame,
        low: int | None,
        bits: int,
        max_edges: int = MAX_EDGES,
    ) -> _MedianIndex:
        scale = 2**bits
        known = cells.get_column("known").cast(pl.Int64).to_numpy()
        if low is None:  # no known usage at all
            empty = np.zeros(0, dtype=np.int64)
            table = np.zeros((cells.height, 2), dtype=np.int64)
            edges = np.array([0, scale], dtype=np.int64)
            none = np.zeros(cells.height, np.int64)
            sums, squares = table.copy(), table.astype(np.float64)
            return cls(empty, none, known, edges, table, 0, scale, 0, sums, squares, none * 0.0)
        tokens = pl.col("tokens")
        packed = (
            frame.lazy()
            .filter(tokens.is_not_null())
            .select((codes.expression() * scale + (tokens - low)).alias("__packed"))
            .sort("__packed")
            .collect()
            .get_column("__packed")
            .to_numpy()
        )
        firsts = cells.get_column(_CODE).to_numpy().astype(np.int64) * scale
        starts = np.searchsorted(packed, firsts).astype(np.int64)
        most = min(max_edges, TABLE_ENTRIES // cells.height, 2 * packed.size // cells.height)
        edges = _edges(packed, scale, max(2, most))
        dtype = np.int32 if known.max(initial=0) < 2**31 else np.int64
        table = np.empty((cells.height, edges.size), dtype=dtype)
        for cell, (first, start, count) in enumerate(zip(firsts, starts, known, strict=True)):
            table[cell] = np.searchsorted(packed[start : start + count], first + edges)
        # The largest value: the greatest of each cell's last (its run is sorted).
        lasts = packed[(starts + known - 1)[known > 0]] & np.int64(scale - 1)
        high = int(lasts.max(initial=0)) + low
        # A cell's offsets must sum within Int64 for exact sums of a range (Int128 aside).
        totals = cells.get_column("sum_tokens").cast(pl.Float64).to_numpy() - known * float(low)
        if totals.size and totals.max() >= 2.0**62:
            return cls(packed, starts, known, edges, table, low, scale, high)
        sums, squares, centres = _range_tables(packed, starts, known, table, scale)
        return cls(packed, starts, known, edges, table, low, scale, high, sums, squares, centres)

    def ranged(self, chosen: pl.DataFrame, low: int | None, high: int | None) -> pl.DataFrame:
        """The `chosen` cells (`_CELL` and the cell aggregations) counting only their attempts
        whose tokens are in `low`..`high` (inclusive; None unbounded), as the rows' own
        `_cell_aggregations` would count them: every such attempt has known usage; sums and
        counts exact, the means and `m2` within their last bits. Cells left with no attempt
        are dropped; `__begin` and `__end` say where in its run each cell's range lies (for
        `medians`). Needs the range tables (`sums` not None) and no cost column."""
        assert self.sums is not None and self.squares is not None and self.centres is not None
        start = 0 if low is None else min(max(low - self.low, 0), self.scale)
        stop = self.scale if high is None else min(max(high - self.low + 1, 0), self.scale)
        cell = chosen.get_column(_CELL).cast(pl.Int64).to_numpy()
        if stop <= start:
            cell = cell[:0]
        below, sum_below, square_below = self._below(cell, start)
        upto, sum_upto, square_upto = self._below(cell, stop)
        count = upto - below
        total = sum_upto - sum_below
        centre = self.centres[cell]
        apart = total - count * centre  # the range's distance from the centre, summed
        spread = square_upto - square_below - apart * apart / np.maximum(count, 1)
        m2 = np.where(count > 1, np.maximum(spread, 0.0), 0.0)
        mean = total / np.maximum(count, 1) + self.low
        zero = start <= -self.low < stop  # every zero of a cell is in the range, or none
        kept = count > 0
        n = pl.Series("n", count[kept], dtype=pl.UInt32)
        return chosen.filter(pl.Series(kept) if cell.size else pl.lit(False)).with_columns(
            n,
            n.alias("known"),
            (pl.col("zeros") if zero else pl.lit(0)).cast(pl.UInt32).alias("zeros"),
            (
                pl.lit(pl.Series(total[kept])).cast(pl.Int128)
                + pl.lit(pl.Series(count[kept])).cast(pl.Int128) * pl.lit(self.low, dtype=pl.Int128)
            ).alias("sum_tokens"),
            pl.Series("mean_tokens", mean[kept], dtype=pl.Float64),
            pl.Series("m2_tokens", m2[kept], dtype=pl.Float64),
            pl.Series("__begin", below[kept], dtype=pl.Int64),
            pl.Series("__end", upto[kept], dtype=pl.Int64),
        )

    def _below(self, cell: np.ndarray, value: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per cell of `cell`: how many of its values have offsets below `value` (0..scale),
        their offsets' sum and their squared distances from the cell's centre, summed: the
        tables at the edge at or below `value`, and that edge's bucket's values below it."""
        assert self.sums is not None and self.squares is not None and self.centres is not None
        edge = int(np.searchsorted(self.edges, value, side="right")) - 1
        count = self.table[cell, edge].astype(np.int64)
        total = self.sums[cell, edge].copy()
        square = self.squares[cell, edge].copy()
        if edge + 1 >= self.edges.size or cell.size == 0 or self.edges[edge] == value:
            return count, total, square
        lengths = self.table[cell, edge + 1].astype(np.int64) - count
        filled = lengths > 0
        size = int(lengths.sum())
        if size == 0:
            return count, total, square
        offsets = np.cumsum(lengths) - lengths
        positions = np.repeat(self.starts[cell] + count - offsets, lengths) + np.arange(size)
        values = self.packed[positions] & np.int64(self.scale - 1)
        inside = values < value
        apart = values - np.repeat(self.centres[cell], lengths)
        starts = offsets[filled]
        count[filled] += np.add.reduceat(inside.astype(np.int64), starts)
        total[filled] += np.add.reduceat(np.where(inside, values, 0), starts)
        square[filled] += np.add.reduceat(np.where(inside, apart * apart, 0.0), starts)
        return count, total, square

    def medians(self, chosen: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        """Both views' medians per group of `keys` over the `chosen` cells (`_CELL`, the
        keys, `known`), for the groups with known usage; as `medians.medians_in_memory`
        gives them (Float64, or Decimal past 2**52 for every group)."""
        groups = chosen.select(keys).unique(maintain_order=True).with_row_index(_GROUP)
        pairs = chosen.join(groups, on=keys, how="left", nulls_equal=True, maintain_order="left")
        pairs = pairs.filter(pl.col("known") > 0)
        cell = pairs.get_column(_CELL).cast(pl.Int64).to_numpy()
        group = pairs.get_column(_GROUP).cast(pl.Int64).to_numpy()
        known = pairs.get_column("known").cast(pl.Int64).to_numpy()
        ranged = "__begin" in pairs.columns
        begin = pairs.get_column("__begin").to_numpy() if ranged else np.zeros_like(cell)
        end = pairs.get_column("__end").to_numpy() if ranged else self.known[cell]
        accepted = (pairs.get_column(OUTCOME_COLUMN) == ACCEPTED).to_numpy()
        count = groups.height
        columns: list[pl.Series] = []
        for view, picked in (("keep", np.ones(cell.size, dtype=bool)), ("drop", accepted)):
            view_cell, view_group = cell[picked], group[picked]
            totals = np.bincount(view_group, known[picked], minlength=count)
            totals = totals.astype(np.int64)
            columns.append(pl.Series(f"__{view}_has", totals > 0))
            run = (begin[picked], end[picked])
            for side, rank in (("low", np.maximum(totals - 1, 0) // 2), ("high", totals // 2)):
                values = self._select(view_cell, view_group, rank, count, run)
                columns.append(pl.Series(f"__{view}_{side}", values, dtype=pl.Int64))
        frame = groups.select(keys).with_columns(columns).filter(pl.col("__keep_has"))

        def middle(view: str, exact: bool) -> pl.Expr:
            low, high = pl.col(f"__{view}_low"), pl.col(f"__{view}_high")
            value = (
                _middle_mean(low, high)
                if exact
                else (low.cast(pl.Int128) + high.cast(pl.Int128)).cast(pl.Float64) / 2
            )
            return (
                pl.when(pl.col(f"__{view}_has"))
                .then(value)
                .alias(f"{view}__median_tokens_per_attempt")
            )

        floats = frame.select(*keys, middle("keep", False), middle("drop", False))
        if not _past_float_precision(floats):
            return floats
        return frame.select(*keys, middle("keep", True), middle("drop", True))

    def _select(
        self,
        cell: np.ndarray,
        group: np.ndarray,
        rank: np.ndarray,
        groups: int,
        run: tuple[np.ndarray, np.ndarray],
    ) -> np.ndarray:
        """Per group, the value of 0-based `rank` among the values of its cells' runs (`cell`
        and `group` pair each selected cell with its group; `run`: the part of each cell's
        run to take, from..to, relative to its start); a group with no value reads a
        placeholder (masked by the caller)."""
        begin, end = run

        def below(edge: np.ndarray) -> np.ndarray:  # per selected cell, in its part of the run
            return np.clip(self.table[cell, edge].astype(np.int64), begin, end)

        # Per group, the edges whose counts below bracket the rank: below[lo] <= rank < below[hi].
        lo = np.zeros(groups, dtype=np.int64)
        hi = np.full(groups, self.edges.size - 1, dtype=np.int64)
        while True:
            open_ = hi - lo > 1
            if not open_.any():
                break
            mid = (lo + hi) // 2
            counted = np.bincount(group, below(mid[group]) - begin, minlength=groups)
            lower = counted <= rank
            lo = np.where(open_ & lower, mid, lo)
            hi = np.where(open_ & ~lower, mid, hi)
        first = below(lo[group])
        before = np.bincount(group, first - begin, minlength=groups).astype(np.int64)
        # The bucket's values of every selected cell, gathered and sorted by (group, value).
        lengths = below(lo[group] + 1) - first
        total = int(lengths.sum())
        offsets = np.cumsum(lengths) - lengths
        positions = np.repeat(self.starts[cell] + first - offsets, lengths) + np.arange(total)
        mask = np.int64(self.scale - 1)
        values = (self.packed[positions] & mask) + np.repeat(group, lengths) * np.int64(self.scale)
        values.sort()
        counts = np.bincount(np.repeat(group, lengths), minlength=groups)
        placed = np.cumsum(counts) - counts + (rank - before)
        placed = np.clip(placed, 0, max(total - 1, 0))
        if total == 0:
            return np.zeros(groups, dtype=np.int64)
        return (values[placed] & mask) + self.low


RANGE_CHUNK = 2**22
"""The range tables are built over this many values at a time (their temporaries are a few
times its size)."""

RANGE_CHUNK_ENTRIES = 2**18
"""... and over this many table entries (cells x edges) at most: at 1M rows the whole table at
once added ~80 MB to the peak; each cell's figures are the same whatever the chunk."""


def _range_tables(
    packed: np.ndarray, starts: np.ndarray, known: np.ndarray, table: np.ndarray, scale: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell, per edge, over the cell's values below the edge: their offsets' sum (exact,
    Int64: the caller made sure no cell's total passes 2**62), and their squared distances
    from the cell's mean offset, summed bucket by bucket (a cell's sums never take in another
    cell's); and those means. A few cells' runs at a time (`RANGE_CHUNK` values)."""
    cells, width = table.shape
    sums = np.zeros((cells, width), dtype=np.int64)
    squares = np.zeros((cells, width), dtype=np.float64)
    centres = np.zeros(cells, dtype=np.float64)
    mask = np.int64(scale - 1)
    ends = starts + known
    first = 0
    while first < cells:
        last = int(np.searchsorted(ends, starts[first] + RANGE_CHUNK, side="right"))
        last = max(min(last, first + RANGE_CHUNK_ENTRIES // width), first + 1)
        begin, end = int(starts[first]), int(ends[last - 1])
        if end > begin:
            offsets = packed[begin:end] & mask
            running = np.zeros(offsets.size + 1, dtype=np.int64)
            np.cumsum(offsets, out=running[1:])  # wraps past 2**63; the differences do not
            local = (starts[first:last] - begin)[:, None] + table[first:last].astype(np.int64)
            sums[first:last] = running[local] - running[local[:, :1]]
            counts = known[first:last]
            centre = sums[first:last, -1] / np.maximum(counts, 1)
            centres[first:last] = centre
            apart = offsets - np.repeat(centre, counts)
            squared = apart * apart
            bucket_starts = local[:, :-1].ravel()
            filled = np.diff(local, axis=1).ravel() > 0
            per_bucket = np.zeros(bucket_starts.size, dtype=np.float64)
            if filled.any():
                # Only the filled buckets' starts: each sums up to the next filled one's start,
                # which is where its own values end (empty buckets between hold none).
                per_bucket[filled] = np.add.reduceat(squared, bucket_starts[filled])
            squares[first:last, 1:] = np.cumsum(per_bucket.reshape(last - first, -1), axis=1)
        first = last
    return sums, squares, centres


def _edges(packed: np.ndarray, scale: int, most: int) -> np.ndarray:
    """Up to `most` token offsets from 0 to `scale`: quantiles of a sample of the values, each
    beside its value + 1 (a value many attempts share then makes a bucket of its own)."""
    step = max(packed.size // 65_536, 1)
    sample = np.sort(packed[::step] & np.int64(scale - 1))
    inner = max((most - 2) // 2, 0)
    picks = np.linspace(0, sample.size - 1, inner).astype(np.int64)
    quantiles = sample[picks] if inner and sample.size else np.zeros(0, dtype=np.int64)
    edges = np.unique(np.concatenate([np.array([0, scale]), quantiles, quantiles + 1]))
    return edges[edges <= scale].astype(np.int64)


# The cubes built, per frame (held weakly: a frame let go takes its cube with it).
_cubes: list[tuple[weakref.ref[pl.DataFrame], Cube]] = []
_lock = threading.Lock()
MAX_FRAMES = 2


def cube_for(frame: pl.DataFrame) -> Cube | None:
    """The cube built for `frame` (the very object), if one is."""
    with _lock:
        for ref, cube in _cubes:
            if ref() is frame:
                return cube
    return None


def remember_cube(frame: pl.DataFrame, cube: Cube) -> None:
    """Keep `cube` as `frame`'s (`cube_for`), letting go of cubes of frames let go."""
    with _lock:
        alive = [(ref, other, ref()) for ref, other in _cubes]
        _cubes[:] = [
            (ref, other) for ref, other, held in alive if held is not None and held is not frame
        ]
        del alive  # (it holds the frames)
        _cubes.append((weakref.ref(frame), cube))
        del _cubes[:-MAX_FRAMES]
