"""One input, opened: its own columns as a LazyFrame, and what the rest of the loader needs to
know about how it was read."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from tui_ledger.load.errors import LoadError
from tui_ledger.load.inputs import Input


@dataclass
class Opened:
    """One input, opened: its frame and what its reader learned about it."""

    item: Input
    fmt: str  # csv, tsv, parquet, json, ndjson or importer
    frame: pl.LazyFrame  # the file's own columns plus LINE (and `source` from importers)
    columns: list[str]  # the file's own column names, in order
    unit: str  # what LINE counts: line, record or row
    lossy: bool = False
    in_memory: bool = True
    infer: bool = False  # CSV/TSV: give unvalidated columns their inferred types
    duplicates: dict[str, str] = field(default_factory=dict)  # polars name -> header name
    has_source: bool = False
    unterminated: bool = False  # CSV/TSV: the last line has no line end (cut off?)
    conventions: tuple[str, ...] = ()  # importers: which bucket convention was read, and why
    notes: tuple[tuple[str, str], ...] = ()  # (kind, sentence): importer and join warnings
    whole_files: frozenset[str] = frozenset()  # importers: sources holding one attempt each
    joined: tuple[str, ...] = ()  # --outcomes: what the join did, for the report's "Derived"


def refuse(item: Input, what: str) -> None:
    """Stop the load: the input cannot be read, for the reason `what`."""
    raise LoadError(f"{item.display}: {what}.", source=item.display)


def empty(item: Input) -> LoadError:
    """The error for a file with no attempts at all."""
    return LoadError(
        f"{item.display}: the file is empty (no attempts); check it is the right file.",
        source=item.display,
    )
