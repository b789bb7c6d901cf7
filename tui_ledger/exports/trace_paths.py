"""Where a plain ledger's `trace` column points, and the same files named from a written copy.

A `trace` names each attempt's trajectory file relative to the folder of the ledger file the
row came from (its `source`; `trajectory/atif.py` opens it by `trace_file`). A ledger written
elsewhere (`convert -o out/attempts.csv`, the app's export of attempts) is read back with its
own folder as that base, so `rebased_traces` rewrites each relative trace to be relative to
the written file's folder (absolute where no relative path exists), and `trace` then opens
the same file from the copy.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

import polars as pl

TRACE = "trace"
SOURCE = "source"


def _local_path(source: str) -> str | None:
    """`source` as a local path: a `file:` URI's path, a plain path as it is; None for a
    cluster's URI (`s3a://...`), whose folder is not this machine's."""
    parsed = urlparse(source)
    scheme = parsed.scheme.lower() if len(parsed.scheme) > 1 else ""  # one letter: a drive
    if scheme == "file":
        return unquote(parsed.path)
    return source if scheme == "" else None


def trace_base(source: object) -> Path:
    """The folder a row's `trace` is relative to: its source file's folder (here without one)."""
    if source is None or str(source) == "":
        return Path()
    local = _local_path(str(source))
    return Path(local).parent if local is not None else Path()


def trace_file(source: object, trace: object) -> Path:
    """The trajectory file a row's `trace` names (see the module's note)."""
    return trace_base(source) / str(trace).strip()


def _prefix(source: str | None, folder: str) -> str | None:
    """What a trace relative to `source`'s folder needs in front to be relative to `folder`:
    "" when the folders are the same, an absolute folder where no relative path exists, None
    when the source is no local file (its traces are left as they are)."""
    if source is None or _local_path(source) is None:
        return None
    base = os.path.abspath(trace_base(source))
    try:
        relative = os.path.relpath(base, folder)
    except ValueError:  # another drive: no relative path
        return base + os.sep
    return "" if relative == os.curdir else relative + "/"


def rebased_traces(frame: pl.DataFrame, target: str | Path) -> pl.DataFrame:
    """The attempts with each relative `trace` rewritten for a ledger written to `target`
    (absolute traces, and rows without a local source, as they were). One path computation
    per distinct source, not per row."""
    if TRACE not in frame.columns or SOURCE not in frame.columns:
        return frame
    if frame.schema[TRACE] not in (pl.String, pl.Categorical):
        return frame
    folder = os.path.abspath(Path(target).parent)
    sources = frame.get_column(SOURCE).cast(pl.String)
    distinct = sources.drop_nulls().unique().to_list()
    prefixes = {source: _prefix(source, folder) for source in distinct}
    if all(prefix in ("", None) for prefix in prefixes.values()):
        return frame
    prefix = sources.replace_strict(prefixes, default=None, return_dtype=pl.String)
    trace = pl.col(TRACE).cast(pl.String)
    stripped = trace.str.strip_chars()
    absolute = stripped.str.starts_with("/") | stripped.str.contains(r"^[A-Za-z]:[\\/]")
    rewritten = (
        pl.when(stripped.is_null() | (stripped == "") | absolute | pl.lit(prefix).is_null())
        .then(trace)
        .otherwise(pl.concat_str(pl.lit(prefix), stripped))
    )
    return frame.with_columns(rewritten.alias(TRACE))
