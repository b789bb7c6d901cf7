"""Exact medians of token usage per group and view: in memory, and streamed in bounded memory.

`ledger.compare` needs the median usage per attempt of every group in both views. In memory,
polars' Float64 median is exact below 2**52 and recomputed exactly past it (`_exact_median`).
Streamed (attempts larger than memory), the rows are never held: `streamed_medians` narrows
each median's range pass by pass, counting values per slice (a selection algorithm).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from tui_ledger.schema import ACCEPTED, VIEWS

_outcome = pl.col("outcome")
_tokens = pl.col("tokens")


def medians_in_memory(
    frame: pl.LazyFrame, keys: list[str], cells: pl.LazyFrame, *, packed: bool = True
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The cells, and both views' medians from the rows (exactly, past 2**52).

    The medians are read by position: the known usage is sorted once by group then value, and
    a group's median is the mean of the values at its two middle positions (the same one for
    an odd count). polars' own median per group costs a selection in every group, 2.3 times
    as much at 200,000 groups of two attempts; the accepted attempts keep that sorted order,
    so the drop view's medians need no second sort, and each lands on its group's row by the
    group's number in that order, without a join.

    That sort is of one Int64 column where it can be (`packed`, `_Packing`): the Categorical
    keys' code, the usage and whether the attempt was accepted packed into one integer, which
    polars sorts several times faster than the same rows by two columns (10M rows, 8 groups:
    0.4-0.9 s against 3-4 s), and beside the cells' group_by, in one `collect_all`.

    Where the groups are few (a ledger's workflows, or workflow and model), the packed values
    are not sorted at all: the middle positions are found by counting them into buckets
    (`_Selection`). At 100M rows, `tokens>2000` kept, the comparison took 5.2-6.0 s against
    6.3-7.2 s with the sort (one run, alternating, a loaded machine).
    """
    packing = _Packing.of(frame, keys) if packed else None
    selection = packing.selection() if packing is not None else None
    if packing is not None and selection is not None:
        # No sort: each median is found by counting (`_Selection`), in two linear passes
        # over the packed values (10M rows: about a sixth of the sort's time).
        cell_frame, values_frame = pl.collect_all([cells, packing.values(frame)])
        median_frame = selection.medians(values_frame.get_column(_PACKED), cell_frame)
    elif packing is not None:
        ordered = packing.sorted(frame)
        # The accepted attempts' values are filtered from that sort in the same query (it is
        # sorted once), morsel by morsel: no full-length temporary, as an eager filter of the
        # sorted column makes (10M rows: 80-100 MB less at the peak, and 5-10% faster).
        cell_frame, ordered_frame, accepted_frame = pl.collect_all(
            [cells, ordered, packing.accepted(ordered)]
        )
        median_frame = packing.medians(
            ordered_frame.get_column(_PACKED), accepted_frame.get_column(_PACKED), cell_frame
        )
    else:
        cell_frame = cells.collect()
        groups, tokens, accepted, group_keys = _plain_sort(frame, keys)
        starts, keep = _middle_of_runs(groups, tokens)
        accepted_groups = groups.filter(accepted)
        accepted_starts, drop = _middle_of_runs(accepted_groups, tokens.filter(accepted))
        # Each drop median goes to its group's row by the group's number (no join).
        drop = pl.repeat(None, starts.len(), dtype=pl.Float64, eager=True).scatter(
            accepted_groups.gather(accepted_starts), drop
        )
        median_frame = group_keys.with_columns(
            keep.alias("keep__median_tokens_per_attempt"),
            drop.alias("drop__median_tokens_per_attempt"),
        )
    if _past_float_precision(median_frame):
        median_frame = (
            frame.group_by(keys)
            .agg(
                _exact_median(_tokens).alias("keep__median_tokens_per_attempt"),
                _exact_median(_tokens.filter(_outcome == ACCEPTED)).alias(
                    "drop__median_tokens_per_attempt"
                ),
            )
            .filter(pl.col("keep__median_tokens_per_attempt").is_not_null())
            .collect()
        )
    return cell_frame, median_frame


def _plain_sort(
    frame: pl.LazyFrame, keys: list[str]
) -> tuple[pl.Series, pl.Series, pl.Series, pl.DataFrame]:
    """The known usage sorted by the keys, then the value: each row's group (0, 1, 2, ... in
    that order), its tokens, whether it was accepted, and each group's keys in group order."""
    schema = frame.collect_schema()
    # Only adjacency matters, not the order: a Categorical sorts fastest by its codes.
    order = [
        pl.col(name).to_physical() if schema[name] == pl.Categorical else pl.col(name)
        for name in keys
    ]
    known = (
        frame.filter(_tokens.is_not_null())
        .select(*keys, "tokens", (_outcome == ACCEPTED).alias("__accepted"))
        .sort([*order, _tokens], nulls_last=True)
    )
    # polars' in-memory engine sorts these rows in a third of the time its default (streaming)
    # engine takes.
    ordered = known.collect(engine="in-memory")
    run = (pl.struct(keys) if len(keys) > 1 else pl.col(keys[0])).rle_id()
    groups = ordered.select(run).to_series()
    starts = _run_starts(groups)
    return (
        groups,
        ordered.get_column("tokens"),
        ordered.get_column("__accepted"),
        ordered.select(keys).gather(starts),
    )


_PACKED = "__packed"


@dataclass(frozen=True)
class _Packing:
    """The Categorical keys, the usage and the outcome as one sortable integer:
    `code * scale + (tokens - low) * 2 + accepted`, where `code` is the group's: its keys'
    Categorical codes (null as one past each key's largest) read as the digits of one number,
    each key's digit in base its largest code + 2, and `scale` is 2**(bits of the usage's
    range + 1). Sorted, a group's values run together in value order (failed before accepted
    among equal values; the medians read positions only, so that order serves as well as
    any). Several keys (workflow and model) so sort as one column too: at 1M rows 0.1 s
    instead of the plain path's 1 s.

    A UInt32 where the packing fits 32 bits (a few groups, usage within a range of about a
    billion: every ledger seen so far), an Int64 otherwise: the sort and the accepted
    attempts' copy are then half the size (10M rows: about 100 MB less at the peak)."""

    keys: tuple[str, ...]
    low: int
    scale: int
    null_codes: tuple[int, ...]  # per key: the code its null reads as (its largest + 1)
    dtype: type[pl.UInt32] | type[pl.Int64] = pl.Int64

    @classmethod
    def of(cls, frame: pl.LazyFrame, keys: list[str]) -> _Packing | None:
        """The packing of these rows (one small query: the usage's range, the largest codes);
        None (sort the plain way) for a key that is not Categorical, no known usage, or a
        packing that needs more than 63 bits."""
        schema = frame.collect_schema()
        if not keys or any(schema[name] != pl.Categorical for name in keys):
            return None
        codes = [
            pl.col(name).to_physical().cast(pl.Int64).max().alias(f"__largest_{index}")
            for index, name in enumerate(keys)
        ]
        ends = frame.select(_tokens.min().alias("low"), _tokens.max().alias("high"), *codes)
        low, high, *largest = ends.collect().row(0)
        if low is None or high is None:
            return None
        null_codes = tuple((code if code is not None else 0) + 1 for code in largest)
        groups = 1
        for null_code in null_codes:
            groups *= null_code + 1
        bits = (high - low).bit_length() + 1
        width = (groups - 1).bit_length() + bits
        if width > 63:
            return None
        dtype = pl.UInt32 if width <= 32 else pl.Int64
        return cls(tuple(keys), low, 2**bits, null_codes, dtype)

    def _code(self) -> pl.Expr:
        code: pl.Expr | None = None
        for name, null_code in zip(self.keys, self.null_codes, strict=True):
            digit = pl.col(name).to_physical().cast(pl.Int64).fill_null(null_code)
            code = digit if code is None else code * (null_code + 1) + digit
        assert code is not None
        return code

    def values(self, frame: pl.LazyFrame) -> pl.LazyFrame:
        """The known usage's packed values, in the frame's order."""
        packed = (
            self._code() * self.scale
            + (_tokens - self.low) * 2
            + (_outcome == ACCEPTED).cast(pl.Int64)
        )
        packed = packed.cast(self.dtype)
        return frame.filter(_tokens.is_not_null()).select(packed.alias(_PACKED))

    def sorted(self, frame: pl.LazyFrame) -> pl.LazyFrame:
        """The known usage's packed values, sorted (polars' default engine: twice as fast as
        its in-memory one on this single column)."""
        return self.values(frame).sort(_PACKED)

    def selection(self) -> _Selection | None:
        """How to find the medians by counting (`_Selection`); None when the groups are so
        many that each could have only a few buckets (there the sort is the faster way)."""
        groups = 1
        for null_code in self.null_codes:
            groups *= null_code + 1
        bits = self.scale.bit_length() - 1  # the value and the outcome bit of a packed value
        # Buckets of 2**shift packed values (shift >= 1: the outcome bit is counted apart),
        # as many per group as the budget allows.
        per_group = max(SELECTION_BUCKETS // groups, 1).bit_length() - 1
        shift = max(bits - per_group, 1)
        if bits - shift < MIN_BUCKET_BITS:
            return None
        return _Selection(self, groups, shift)

    @staticmethod
    def accepted(ordered: pl.LazyFrame) -> pl.LazyFrame:
        """The accepted attempts' packed values (odd: the lowest bit) of `sorted`'s query, in
        its order."""
        return ordered.filter((pl.col(_PACKED) % 2) == 1)

    def medians(self, ordered: pl.Series, accepted: pl.Series, cells: pl.DataFrame) -> pl.DataFrame:
        """Both views' medians per group with known usage, from the sorted packed values
        (`ordered`) and the accepted attempts' among them (`accepted`, in the same order).

        A group's values are the run between its code's first packed value and the next
        code's, found by binary search (`search_sorted`), so nothing of the rows' length is
        unpacked: only the middle values are gathered and decoded. The accepted attempts keep
        the sorted order, so their runs are searched the same way in their filtered copy.
        Each group's key is read from the cells (which hold every group) by its code."""
        names = (
            cells.select(*self.keys, self._code().alias("__code")).unique("__code").sort("__code")
        )
        codes = names.get_column("__code")
        lows, counts = self._runs(ordered, codes)
        present = counts > 0
        names, lows, counts = names.filter(present), lows.filter(present), counts.filter(present)
        codes = names.get_column("__code")
        accepted_lows, accepted_counts = self._runs(accepted, codes)
        drop = self._middle(accepted, accepted_lows, accepted_counts)
        return names.select(self.keys).with_columns(
            self._middle(ordered, lows, counts).alias("keep__median_tokens_per_attempt"),
            pl.when(accepted_counts > 0)
            .then(drop)
            .otherwise(None)
            .alias("drop__median_tokens_per_attempt"),
        )

    def _runs(self, ordered: pl.Series, codes: pl.Series) -> tuple[pl.Series, pl.Series]:
        """Where each code's run starts in `ordered` (sorted), and how long it is."""
        first = (codes * self.scale).cast(self.dtype)
        # The run's last possible value, not the next code's first: that could pass Int64.
        last = (codes * self.scale + (self.scale - 1)).cast(self.dtype)
        starts = ordered.search_sorted(first, side="left")
        ends = ordered.search_sorted(last, side="right")
        return starts.cast(pl.Int64), (ends.cast(pl.Int64) - starts.cast(pl.Int64))

    def _middle(self, ordered: pl.Series, starts: pl.Series, counts: pl.Series) -> pl.Series:
        """The Float64 mean of each run's two middle values, decoded (as `_middle_of_runs`);
        a run of none reads a placeholder position (masked by the caller)."""
        last = max(ordered.len() - 1, 0)
        low = (starts + (counts - 1).clip(lower_bound=0) // 2).clip(upper_bound=last)
        high = (starts + counts // 2).clip(upper_bound=last)

        def decoded(positions: pl.Series) -> pl.Series:
            if ordered.len() == 0:
                return pl.repeat(None, positions.len(), dtype=pl.Float64, eager=True)
            values = ordered.gather(positions).cast(pl.Int64)
            return ((values % self.scale) // 2 + self.low).cast(pl.Float64)

        return (decoded(low) + decoded(high)) / 2


SELECTION_BUCKETS = 2**20
"""The most buckets (over every group) the counting selection of medians counts into: two
counts a bucket (every attempt, the accepted ones), 16 MB."""
MIN_BUCKET_BITS = 4
"""Fewer than 2**4 buckets a group and the counting selection gives way to the sort."""
SELECTION_CHUNK = 2**23
"""Packed values counted or picked at once: bounded temporaries, and the GIL handed back to
the screen's thread between chunks."""


@dataclass(frozen=True)
class _Selection:
    """Both views' medians of every group by counting, not sorting: a selection.

    The packed values (`_Packing`) are split into buckets of `2**shift` consecutive values,
    each bucket inside one group (`shift` never passes the group's bits). One pass counts
    every bucket's values, and its accepted ones apart (the lowest bit); running totals within
    each group then say which bucket holds each middle position, and how many values come
    before it. A second pass keeps only the values in those buckets (a few per group), sorts
    those, and reads the middle values at their offsets. The figures are the sort's, value for
    value: the same positions of the same order."""

    packing: _Packing
    groups: int  # the packed codes' range: codes 0 .. groups - 1
    shift: int

    @property
    def per_group(self) -> int:
        return 2 ** (self.packing.scale.bit_length() - 1 - self.shift)

    def medians(self, values: pl.Series, cells: pl.DataFrame) -> pl.DataFrame:
        """Both views' medians per group with known usage (as `_Packing.medians`)."""
        packing = self.packing
        packed = values.to_numpy()
        counts = self._counts(packed)  # groups x buckets x (failed, accepted)
        every = counts.sum(axis=2)
        accepted = counts[:, :, 1]
        keep_total, drop_total = every.sum(axis=1), accepted.sum(axis=1)
        present = np.flatnonzero(keep_total > 0)
        wanted = np.zeros(self.groups * self.per_group, dtype=bool)
        picks = []
        for view_counts, totals in ((every, keep_total), (accepted, drop_total)):
            view_counts, totals = view_counts[present], totals[present]
            running = np.cumsum(view_counts, axis=1)
            middles = []
            for rank in (np.maximum(totals - 1, 0) // 2, totals // 2):
                bucket = (running > rank[:, None]).argmax(axis=1)
                before = (
                    running[np.arange(present.size), bucket]
                    - view_counts[np.arange(present.size), bucket]
                )
                flat = present * self.per_group + bucket
                wanted[flat[totals > 0]] = True
                middles.append((flat, rank - before))
            picks.append((totals, middles))
        chosen = self._chosen(packed, wanted)
        accepted_chosen = chosen[(chosen & 1) == 1]
        medians = []
        for (totals, middles), pool in zip(picks, (chosen, accepted_chosen), strict=True):
            halves = []
            for flat, offset in middles:
                # A bucket's values are consecutive in the sorted pool: its first is found by
                # the bucket's lowest packed value.
                start = np.searchsorted(pool, (flat << self.shift).astype(pool.dtype))
                position = np.minimum(start + offset, max(pool.size - 1, 0))
                taken = pool[position] if pool.size else np.zeros(position.size, pool.dtype)
                decoded = (taken.astype(np.int64) % packing.scale) // 2 + packing.low
                halves.append(decoded.astype(np.float64))
            median = (halves[0] + halves[1]) / 2
            medians.append(pl.Series(np.where(totals > 0, median, np.nan)).fill_nan(None))
        names = (
            cells.select(*packing.keys, packing._code().alias("__code"))
            .unique("__code")
            .sort("__code")
        )
        found = pl.DataFrame({"__code": present.astype(np.int64)})
        return (
            found.with_columns(
                medians[0].alias("keep__median_tokens_per_attempt"),
                medians[1].alias("drop__median_tokens_per_attempt"),
            )
            .join(names.with_columns(pl.col("__code").cast(pl.Int64)), on="__code", how="left")
            .select(
                *packing.keys, "keep__median_tokens_per_attempt", "drop__median_tokens_per_attempt"
            )
        )

    def _counts(self, packed: np.ndarray) -> np.ndarray:
        """How many values fall in each bucket, failed and accepted apart."""
        size = self.groups * self.per_group * 2
        counts = np.zeros(size, dtype=np.int64)
        shift = packed.dtype.type(self.shift)
        one = packed.dtype.type(1)
        for start in range(0, packed.size, SELECTION_CHUNK):
            chunk = packed[start : start + SELECTION_CHUNK]
            key = ((chunk >> shift) << one) | (chunk & one)
            counts += np.bincount(key, minlength=size)
        return counts.reshape(self.groups, self.per_group, 2)

    def _chosen(self, packed: np.ndarray, wanted: np.ndarray) -> np.ndarray:
        """The values in the wanted buckets, sorted."""
        shift = packed.dtype.type(self.shift)
        parts = [
            chunk[wanted[chunk >> shift]]
            for chunk in (
                packed[start : start + SELECTION_CHUNK]
                for start in range(0, packed.size, SELECTION_CHUNK)
            )
        ]
        chosen = np.concatenate(parts) if parts else packed[:0]
        chosen.sort()
        return chosen


def _run_starts(groups: pl.Series) -> pl.Series:
    """Where each run of equal `groups` starts."""
    return (groups != groups.shift(1)).fill_null(True).arg_true()


def _middle_of_runs(groups: pl.Series, tokens: pl.Series) -> tuple[pl.Series, pl.Series]:
    """Where each run of equal `groups` starts, and the Float64 mean of its two middle
    `tokens` (sorted within the run): polars' median, read by position."""
    starts = _run_starts(groups)
    counts = starts.shift(-1, fill_value=groups.len()) - starts
    low = tokens.gather(starts + (counts - 1) // 2).cast(pl.Float64)
    high = tokens.gather(starts + counts // 2).cast(pl.Float64)
    return starts, (low + high) / 2


# The most (target, bucket) cells one narrowing pass of `streamed_medians` counts.
MEDIAN_BUCKETS = 2**16
_TARGET = "__target"


def streamed_medians(frame: pl.LazyFrame, keys: list[str], cells: pl.DataFrame) -> pl.DataFrame:
    """Both views' exact medians without holding the rows: a selection by narrowing ranges.

    Each median is the mean of the values at two positions of the group's sorted known usage
    (the same position twice for an odd count), as `_exact_median` takes it. Every such
    target starts with the group's [min, max] range (`__lo`, `__hi` of its cells); each pass
    over the attempts counts, per target, the values in each of up to `MEDIAN_BUCKETS /
    targets` equal slices of its range (a streaming group_by of that many cells, whatever the
    rows), and keeps the slice holding its position: a range of 200,000 values takes two
    passes. Float64 as the in-memory path gives it, or Decimal(38, 1) when a median reaches
    2**52 (as there too).
    """
    outcome = pl.col("outcome")
    known = (
        cells.group_by(keys)
        .agg(
            pl.col("known").sum().cast(pl.Int64).alias("keep"),
            pl.col("known").filter(outcome == ACCEPTED).sum().cast(pl.Int64).alias("drop"),
            pl.col("__lo").min(),
            pl.col("__hi").max(),
        )
        .filter(pl.col("keep") > 0)
    )
    targets = pl.concat(
        [
            known.filter(pl.col(view) > 0).select(
                *keys,
                pl.lit(view).alias("__view"),
                pl.lit(end).alias("__end"),
                (pl.col(view) - 1 + offset).floordiv(2).alias("__rank"),
                "__lo",
                (pl.col("__hi") + 1).alias("__hi"),
                pl.lit(0, dtype=pl.Int64).alias("__below"),
            )
            for view in VIEWS
            for end, offset in (("low", 0), ("high", 1))
        ]
    ).with_row_index(_TARGET)
    stream = frame.filter(_tokens.is_not_null()).select(
        *keys, _tokens.cast(pl.Int128).alias("__value"), (outcome == ACCEPTED).alias("__accepted")
    )
    while True:
        active = targets.filter(pl.col("__hi") - pl.col("__lo") > 1)
        if active.height == 0:
            break
        slices = max(2, MEDIAN_BUCKETS // active.height)
        active = active.with_columns(
            ((pl.col("__hi") - pl.col("__lo") + slices - 1) // slices).alias("__width")
        )
        value, lo = pl.col("__value"), pl.col("__lo")
        counts = (
            stream.join(
                active.lazy().select(_TARGET, *keys, "__view", "__lo", "__hi", "__width"),
                on=keys,
                how="inner",
                nulls_equal=True,
            )
            .filter(
                (value >= lo)
                & (value < pl.col("__hi"))
                & ((pl.col("__view") == "keep") | pl.col("__accepted"))
            )
            .group_by(_TARGET, ((value - lo) // pl.col("__width")).alias("__slice"))
            .agg(pl.len().cast(pl.Int64).alias("__count"))
            .collect(engine="streaming")
        )
        # Per target, the slice where the running count first passes its position.
        running = pl.col("__running")
        chosen = (
            counts.sort(_TARGET, "__slice")
            .with_columns(pl.col("__count").cum_sum().over(_TARGET).alias("__running"))
            .join(
                active.select(_TARGET, "__rank", "__below", "__lo", "__hi", "__width"), on=_TARGET
            )
            .with_columns(running + pl.col("__below"))
            .filter(
                (running > pl.col("__rank")) & (running - pl.col("__count") <= pl.col("__rank"))
            )
            .select(
                _TARGET,
                (lo + pl.col("__slice") * pl.col("__width")).alias("__new_lo"),
                pl.min_horizontal(
                    lo + (pl.col("__slice") + 1) * pl.col("__width"), pl.col("__hi")
                ).alias("__new_hi"),
                (running - pl.col("__count")).alias("__new_below"),
            )
        )
        targets = (
            targets.join(chosen, on=_TARGET, how="left", maintain_order="left")
            .with_columns(
                pl.coalesce(f"__new_{name}", f"__{name}").alias(f"__{name}")
                for name in ("lo", "hi", "below")
            )
            .drop("__new_lo", "__new_hi", "__new_below")
        )
    ends = targets.pivot(on=["__view", "__end"], index=keys, values="__lo")
    for view in VIEWS:
        for end in ("low", "high"):
            name = f'{{"{view}","{end}"}}'
            if name not in ends.columns:
                ends = ends.with_columns(pl.lit(None, dtype=pl.Int128).alias(name))
    low = {view: pl.col(f'{{"{view}","low"}}') for view in VIEWS}
    high = {view: pl.col(f'{{"{view}","high"}}') for view in VIEWS}
    sums = {view: low[view] + high[view] for view in VIEWS}
    exact = bool(
        ends.select(
            pl.any_horizontal(sum_.abs() >= 2 * _HALVES_EXACT for sum_ in sums.values()).any()
        ).item()
    )
    return ends.select(
        *keys,
        *[
            (
                _middle_mean(low[view], high[view]) if exact else sums[view].cast(pl.Float64) / 2
            ).alias(f"{view}__median_tokens_per_attempt")
            for view in VIEWS
        ],
    )


# Below 2**52 a float holds every integer and every half exactly, so a Float64 median of
# integer tokens is exact there; past it the median is recomputed exactly (`_exact_median`).
_HALVES_EXACT = 2**52
MEDIAN_EXACT_DTYPE = pl.Decimal(38, 1)


def _past_float_precision(medians: pl.DataFrame) -> bool:
    """Whether any Float64 median may have lost digits (its magnitude is 2**52 or more)."""
    names = [name for name in medians.columns if name.endswith("median_tokens_per_attempt")]
    large = pl.any_horizontal(pl.col(names).abs() >= _HALVES_EXACT).any()
    return bool(medians.select(large).item())


def _exact_median(values: pl.Expr) -> pl.Expr:
    """The median of integer `values` with every digit: the mean of the two middle values as a
    Decimal with one place (an even count of integers can end in .5); null when none is known.

    Slower than polars' Float64 median (a sort per group), so `medians_in_memory` only takes
    this path when a Float64 median reaches 2**52, the first magnitude where a float can round
    it.
    """
    ordered = values.drop_nulls().sort()
    count = ordered.len()
    low = ordered.get((count - 1) // 2, null_on_oob=True)
    high = ordered.get(count // 2, null_on_oob=True)
    return _middle_mean(low, high)


def _middle_mean(low: pl.Expr, high: pl.Expr) -> pl.Expr:
    """The median from its two middle integers (the same one for an odd count), exactly."""
    return (low.cast(pl.Int128) + high.cast(pl.Int128)).cast(MEDIAN_EXACT_DTYPE) / 2
