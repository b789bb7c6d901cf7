"""What is wrong with a CSV polars refused or read short: a row with more or fewer fields than
the header, a quoted cell that never closes, a quote inside an unquoted cell."""

from __future__ import annotations

import csv
import io
import re

import polars as pl

from tui_ledger.load.errors import LoadError
from tui_ledger.load.formats import field_separator, file_text
from tui_ledger.load.inputs import Input
from tui_ledger.load.opened import Opened


def check_ragged(opened: Opened, suspects: pl.Series) -> None:
    """Raise for a CSV row with fewer fields than the header, naming its line.

    polars fills a short row's missing cells with nulls, exactly as it reads empty cells, so
    `suspects` are the lines whose last cell is empty. polars counts their fields first; only
    where one looks short does Python's csv reader count exactly.
    """
    expected = len(opened.columns)
    if _screen_ragged(opened.item, expected, suspects):
        found = first_ragged_record(opened.item, expected)
        if found is not None:
            raise ragged(opened.item, found)


def _screen_ragged(item: Input, expected: int, suspects: pl.Series) -> bool:
    """Whether any of the `suspects` lines may have a field count other than `expected`.

    Counts separators outside quotes. Where every line holds an even number of quotes, records
    are lines, and only the suspects are looked at; otherwise a line that starts inside a
    quoted cell is read as if it began with the quote, and the lines of each record are added
    up. A quote inside an unquoted cell (`12" screen`) can fool it into a suspect, never into
    an error: `first_ragged_record` has the last word.
    """
    separator = field_separator(item.fmt)
    text = pl.col("text")
    quotes = text.str.count_matches('"', literal=True)
    unquoted = text.str.replace_all(r'"[^"]*"', "")
    odd = (quotes % 2 == 1).any()
    try:
        # Streamed: a file whose last column is often empty has many suspects, and the file
        # may be larger than memory (`scan`).
        scanned = pl.scan_lines(item.path, name="text", glob=False)
        any_odd = scanned.select(odd).collect(engine="streaming").item()
    except pl.exceptions.PolarsError:  # not UTF-8: decode it lossily here
        scanned = pl.LazyFrame({"text": file_text(item.path).split("\n")})
        any_odd = scanned.select(odd).collect().item()
    if not any_odd:
        fields = unquoted.str.count_matches(separator, literal=True) + 1
        numbered = scanned.with_row_index("__number", offset=1)
        found = (
            numbered.filter(
                pl.col("__number").cast(pl.Int64).is_in(suspects.cast(pl.Int64).implode())
            )
            .select((fields != expected).any())
            .collect(engine="streaming")
        )
        return bool(found.item())
    # Quotes hold line ends somewhere: the records are counted over the whole text, in memory.
    lines = scanned.collect()
    # Only lines holding or inside quotes need the regular expressions; every other line's
    # text stays out of them (null), so a file with few quotes costs one separator count.
    per_line = lines.with_columns(quotes.alias("quotes")).with_columns(
        ((pl.col("quotes").cum_sum() - pl.col("quotes")) % 2 == 1).alias("inside")
    )
    holding = pl.when(pl.col("inside") | (pl.col("quotes") > 0)).then(text)
    # A line that starts inside a quoted cell reads as if it began with the quote.
    quoted = pl.when(pl.col("inside")).then(pl.concat_str(pl.lit('"'), holding)).otherwise(holding)
    bare = quoted.str.replace_all(r'"[^"]*"', "").str.replace(r'"[^"]*$', "")
    separators = pl.coalesce(
        bare.str.count_matches(separator, literal=True),
        text.str.count_matches(separator, literal=True),
    )
    per_line = per_line.select(
        "inside",
        separators.alias("separators"),
        (text.str.strip_chars_end("\r") == "").alias("blank"),
    ).slice(1)  # the header
    # A record's separators: the running total at the next record's start minus at its own.
    total = per_line["separators"].sum()
    before = pl.col("separators").cum_sum() - pl.col("separators")
    records = (
        per_line.with_columns(before.alias("before"))
        .filter(~pl.col("inside"))
        .with_columns(
            (pl.col("before").shift(-1, fill_value=total) - pl.col("before")).alias("separators")
        )
    )
    return records.filter(~pl.col("blank") & (pl.col("separators") + 1 != expected)).height > 0


def first_ragged_record(item: Input, expected: int | None) -> tuple[int, int, int] | None:
    """(line, fields, header fields) of the first record whose field count is not the header's.

    Python's csv reader, which quotes as polars does, row by row: it only runs once polars or
    the screen has found a suspect, so a clean file never pays for it.
    """
    separator = field_separator(item.fmt)
    reader = csv.reader(io.StringIO(file_text(item.path), newline=""), delimiter=separator)
    header = next(reader, None)
    if header is None:
        return None
    wanted = expected if expected is not None else len(header)
    line = reader.line_num + 1
    for row in reader:
        if row and len(row) != wanted:
            return line, len(row), wanted
        line = reader.line_num + 1
    return None


def ragged(item: Input, found: tuple[int, int, int] | None) -> LoadError:
    """The error for a record whose field count is not the header's (`found`: line, fields,
    header fields), or for an unknown one."""
    if found is None:
        return LoadError(
            f"{item.display}: a row has more fields than the header; check for an unquoted "
            "separator inside a cell.",
            source=item.display,
        )
    line, fields, header = found
    more = "more" if fields > header else "fewer"
    return LoadError(
        f"{item.display} line {line}: {fields} fields where the header has {header} "
        f"({more} than the header); fix the row, or quote a cell that holds the separator.",
        source=item.display,
        line=line,
    )


def unclosed_quote(item: Input) -> LoadError | None:
    """A quoted cell that never closes (often a file cut off mid-row), named by its line."""
    opened_at: int | None = None
    inside = False
    for number, text in enumerate(file_text(item.path).split("\n"), start=1):
        if text.count('"') % 2:
            inside = not inside
            opened_at = number if inside else opened_at
    if not inside or opened_at is None:
        return None
    return LoadError(
        f"{item.display} line {opened_at}: a quoted cell starts here and never ends; the file "
        "may be cut off (export it again), or a closing quote is missing.",
        source=item.display,
        line=opened_at,
    )


def stray_quote(item: Input) -> LoadError:
    """polars refuses a quote inside an unquoted cell; name the first line that has one."""
    separator = field_separator(item.fmt)
    cell = re.escape(separator)
    lines = pl.DataFrame({"text": file_text(item.path).split("\n")}).with_row_index(
        "line", offset=1
    )
    stray = lines.filter(pl.col("text").str.contains(f'(^|{cell})[^"{cell}]+"'))
    where = f"{item.display} line {stray['line'][0]}" if stray.height else item.display
    return LoadError(
        f"{where}: a quote inside a cell that is not quoted; quote the cell and double the "
        'quote (12" wide -> "12"" wide"), or export the file again.',
        source=item.display,
        line=int(stray["line"][0]) if stray.height else None,
    )
