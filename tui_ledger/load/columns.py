"""A file's columns onto the canonical ones: `--col`, then the aliases; the required columns;
and the types polars' CSV reader would give the columns nobody validates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from tui_ledger import schema
from tui_ledger.load.errors import LoadError
from tui_ledger.load.helper_columns import TYPED_TEXT, Engine
from tui_ledger.load.opened import Opened
from tui_ledger.text.wording import listing

_BOOLEAN_WORDS = ("true", "false", "True", "False", "TRUE", "FALSE")  # as polars' CSV reader


def already_typed(canonical: str, dtype: pl.DataType) -> bool:
    """Whether a column arrives in a type its validation reads directly: Int64 counts (a
    parser already refused anything but plain integers), a Boolean `passed` (Parquet, JSON:
    true, false or empty, nothing to refuse) or Categorical text (validated through its
    distinct values)."""
    if canonical in schema.INTEGER_COLUMNS:
        return dtype == pl.Int64
    if canonical == "passed" and dtype == pl.Boolean:
        return True
    return canonical in TYPED_TEXT and dtype == pl.Categorical


def free_name(name: str, taken: set[str]) -> str:
    """`name`, or `name_2`, `name_3`... : the first not in `taken` (which it joins)."""
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}_{number}", number + 1
    taken.add(candidate)
    return candidate


def map_columns(opened: Opened, explicit: Mapping[str, str]) -> dict[str, str]:
    """canonical -> file column: the explicit mapping first, then the aliases (as the reader
    found it, if it mapped the columns already: `Opened.mapping`)."""
    if opened.mapping is not None:
        return dict(opened.mapping)
    names = opened.columns
    header = {name: opened.duplicates.get(name, name) for name in names}
    return map_names(names, explicit, opened.item.display, header)


def map_names(
    names: Sequence[str],
    explicit: Mapping[str, str],
    display: str,
    header: Mapping[str, str] | None = None,
    what: str = "file",
) -> dict[str, str]:
    """canonical -> input column, from the input's column `names`: the explicit mapping
    (`--col`) first, then the aliases (SPEC.md section 1); two columns that both map to one
    canonical name are an error naming both. `header`: each name as the file's header wrote
    it (a repeated header name is read as `name_2`); `what`: the input's name in messages.
    The one rule of both engines: Spark's inputs raise its `LoadError`s as their own."""
    header = header or {name: name for name in names}
    mapping: dict[str, str] = {}
    claimed: dict[str, str] = {}
    for key, wanted in explicit.items():
        canonical = schema.normalise_name(key)
        if canonical not in schema.ALIASES:
            raise LoadError(
                f"--col {key}={wanted}: {key!r} is not a column ledger-tui knows; "
                f"use one of {', '.join(schema.ALIASES)}.",
                column=key,
            )
        if canonical in mapping:
            raise LoadError(
                f"--col {key}={wanted}: {canonical} is mapped twice; keep one --col {canonical}.",
                column=key,
            )
        name = _find_column(names, header, wanted)
        if name is None:
            raise LoadError(
                f"{display}: --col {key}={wanted} names no column of this {what}; "
                f"its columns are {listing(header[n] for n in names)}.",
                source=display,
                column=wanted,
            )
        if name in claimed:
            raise LoadError(
                f"{display}: column {header[name]!r} is given for both "
                f"{claimed[name]} and {canonical}; map each to a different column.",
                source=display,
                column=header[name],
            )
        mapping[canonical] = name
        claimed[name] = canonical
    found: dict[str, list[str]] = {}
    for name in names:
        if name in claimed:
            continue
        aliased = schema.canonical_for(header[name])
        if aliased is not None and aliased not in mapping:
            found.setdefault(aliased, []).append(name)
    for canonical, candidates in found.items():
        if len(candidates) > 1:
            shown = [header[name] for name in candidates]
            same = len(set(shown)) == 1
            what = (
                f"the header names {shown[0]!r} twice"
                if same
                else (
                    f"columns {listing(shown, quote=True, joiner='and')} "
                    f"{'both' if len(shown) == 2 else 'all'} name {canonical}"
                )
            )
            raise LoadError(
                f"{display}: {what}; rename one, or pick one with --col {canonical}=COLUMN.",
                source=display,
                column=shown[0],
            )
        mapping[canonical] = candidates[0]
    return mapping


def _find_column(names: Sequence[str], header: Mapping[str, str], wanted: str) -> str | None:
    exact = [name for name in names if header[name] == wanted or name == wanted]
    if exact:
        return exact[0]
    key = schema.normalise_name(wanted)
    loose = [name for name in names if schema.normalise_name(header[name]) == key]
    return loose[0] if len(loose) == 1 else None


def require(opened: Opened, mapping: Mapping[str, str]) -> None:
    """Stop a file that lacks a workflow, an outcome or a tokens column, naming its columns."""
    require_names(mapping, opened.columns, opened.item.display)


def require_names(mapping: Mapping[str, str], names: Sequence[str], display: str) -> None:
    """`require` from an input's column names (both engines)."""
    has = f"its columns are {listing(names)}" if names else "it has no columns"
    if "workflow" not in mapping:
        raise LoadError(
            f"{display}: no workflow column ({has}); name it one of "
            f"{', '.join(schema.ALIASES['workflow'])}, or pass --col workflow=COLUMN.",
            source=display,
        )
    if "passed" not in mapping and "status" not in mapping:
        raise LoadError(
            f"{display}: no outcome column ({has}); add a passed column "
            f"({', '.join(schema.ALIASES['passed'])}) or a status column "
            f"({', '.join(schema.ALIASES['status'])}), or pass --col passed=COLUMN "
            "or --col status=COLUMN.",
            source=display,
        )
    if "tokens" not in mapping and not any(bucket in mapping for bucket in schema.BUCKETS):
        raise LoadError(
            f"{display}: no tokens column ({has}); name it one of "
            f"{', '.join(schema.ALIASES['tokens'])}, give token buckets "
            f"({', '.join(schema.BUCKETS)}), or pass --col tokens=COLUMN.",
            source=display,
        )


def infer_types(
    frame: pl.LazyFrame,
    candidates: list[str],
    mapping: dict[str, str],
    kept_as: dict[str, str],
    *,
    engine: Engine,
) -> pl.LazyFrame:
    """Give CSV text columns that nobody validates the type polars' reader would infer."""
    renamed = {name: canonical for canonical, name in mapping.items()}
    targets = [kept_as.get(name, renamed.get(name, name)) for name in candidates]
    targets += [c for c in ("model", "run", "timestamp", "duration_s", "cost") if c in mapping]
    if not targets:
        return frame
    types = frame.collect_schema()
    categorical = {name for name in targets if types[name] == pl.Categorical}
    probes: list[pl.Expr] = []
    for index, name in enumerate(targets):
        column = pl.col(name)
        if name in categorical:
            # Every value parses exactly when every distinct value does.
            column = column.unique().cast(pl.String)
        present = column.is_not_null().sum()
        probes += [
            present.alias(f"n{index}"),
            column.str.to_integer(strict=False).is_not_null().sum().alias(f"i{index}"),
            column.cast(pl.Float64, strict=False).is_not_null().sum().alias(f"f{index}"),
            column.is_in(_BOOLEAN_WORDS).sum().alias(f"b{index}"),
        ]
    counts = frame.select(probes).collect(engine=engine).row(0, named=True)
    casts: list[pl.Expr] = []
    for index, name in enumerate(targets):
        present = counts[f"n{index}"]
        if present == 0:
            continue
        text = pl.col(name).cast(pl.String) if name in categorical else pl.col(name)
        if counts[f"i{index}"] == present:
            casts.append(text.str.to_integer(strict=False))
        elif counts[f"f{index}"] == present:
            casts.append(text.cast(pl.Float64, strict=False))
        elif counts[f"b{index}"] == present:
            casts.append(text.str.to_lowercase() == "true")
    return frame.with_columns(casts) if casts else frame
