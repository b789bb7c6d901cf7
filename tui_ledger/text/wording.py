"""How messages read, the same in every module: a count with its noun, a list of names, the
first line of an error.

The loader's errors, the checks, the watcher and the app all say these things; one definition
each keeps them saying it one way. Figures themselves read as `numbers` writes them.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

NO_ATTEMPTS_MATCH = "No attempts match the filter."
"""What a selection with no attempt says, in the app's summary and every summary's callout."""


def plural(count: int, noun: str) -> str:
    """A count and its noun: `1 attempt`, `2 attempts`, `1,204 attempts`."""
    return f"{count:,} {noun if count == 1 else noun + 's'}"


def count_expr(count: pl.Expr) -> pl.Expr:
    """An integer column as `plural` writes its count (`1,204`), for many rows at once."""
    return count.map_batches(_counts_text, return_dtype=pl.String)


def _counts_text(counts: pl.Series) -> pl.Series:
    """`count_expr` of a column: separators only where a count needs them (most counts are
    under 1,000, and the regex costs 80 ms over 200,000 of them)."""
    text = counts.cast(pl.String)
    long = (text.str.strip_prefix("-").str.len_bytes() > 3).fill_null(False)
    if not long.any():
        return text
    rows = long.arg_true()
    grouped = (
        text.gather(rows)
        .str.reverse()
        .str.replace_all(r"(\d{3})", "${1},")
        .str.replace(r",(-?)$", "${1}")
        .str.reverse()
    )
    return text.scatter(rows, grouped)


def plural_expr(count: pl.Expr, noun: str) -> pl.Expr:
    """`plural` for many rows at once: `1 attempt`, `2 attempts`, `1,204 attempts`."""
    return pl.concat_str(
        count_expr(count),
        pl.lit(" "),
        pl.when(count == 1).then(pl.lit(noun)).otherwise(pl.lit(noun + "s")),
    )


def listing(
    names: Iterable[str],
    *,
    limit: int = 12,
    quote: bool = False,
    joiner: str = "",
    total: int | None = None,
) -> str:
    """Names in a sentence: `a, b, c`; `a, b and c` with `joiner="and"`; past `limit` names,
    the first `limit` and `and 3 more`. `quote` shows each name as its repr. `total`: how many
    names there are in all, when `names` holds only the first ones."""
    shown = [repr(name) if quote else name for name in names]
    count = len(shown) if total is None else max(total, len(shown))
    if count > limit:
        return f"{', '.join(shown[:limit])} and {count - limit:,} more"
    if joiner and len(shown) > 1:
        return f"{', '.join(shown[:-1])} {joiner} {shown[-1]}"
    return ", ".join(shown)


def first_line(error: BaseException) -> str:
    """The first line of an error's message, or the name of its type when it has none."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
