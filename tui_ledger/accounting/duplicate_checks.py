"""The duplicate checks: the same attempt id more than once, an attempt number repeated within
a group and task, exact copies of a row. Read from the rows (`_duplicates`), not from the
checks' cells; the Spark engine counts the same things itself and words them with the same
`duplicate_*_check` constructors.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from tui_ledger.accounting.check_text import EXAMPLES, Check, _examples, _label, _name
from tui_ledger.schema import LINE_COLUMN, SOURCE_COLUMN
from tui_ledger.text.wording import plural

# Columns that make two identical rows unlikely by chance: with one of them, an exact copy of
# a row is a duplicate; without (e.g. workflow, tokens, passed only) identical rows are normal.
IDENTIFYING_COLUMNS: tuple[str, ...] = ("timestamp", "duration_s", "run", "attempt")
# Columns that identify one attempt.
ID_COLUMNS: tuple[str, ...] = (
    "attempt_id",
    "id",
    "uuid",
    "trial_id",
    "trial_uuid",
    "sample_uuid",
)
_WHERE = (LINE_COLUMN, SOURCE_COLUMN)


def _duplicates(attempts: pl.DataFrame | pl.LazyFrame, keys: list[str]) -> list[Check]:
    found: list[Check] = []
    columns = attempts.collect_schema().names()
    frame = attempts.lazy()
    id_column = next((name for name in ID_COLUMNS if name in columns), None)
    if id_column is not None:
        repeated = frame.filter(
            pl.col(id_column).is_not_null() & pl.col(id_column).is_duplicated()
        ).collect()
        if repeated.height:
            ids = repeated[id_column].cast(pl.String).unique(maintain_order=True).to_list()
            found.append(
                duplicate_ids_check(
                    id_column, repeated.height, len(ids), ids[:EXAMPLES], *_examples(repeated)
                )
            )
    # Several attempts of one task inside one run are normal (harnesses repeat trials), so only
    # an explicit attempt number repeated within a workflow and task is a likely copy.
    for column in ("attempt",):
        if column not in columns or "task" not in columns:
            continue
        identity = [*dict.fromkeys([*keys, "task", column])]
        repeated = frame.filter(
            pl.col(column).is_not_null() & pl.struct(identity).is_duplicated()
        ).collect()
        if repeated.height:
            # Labels of the first few identities only (a label can be megabytes).
            sample = (
                repeated.select(identity)
                .unique(maintain_order=True)
                .head(3)
                .select(_label(identity).alias("who"))["who"]
                .map_elements(_name, return_dtype=pl.String)
            )
            found.append(
                duplicate_attempts_check(
                    identity,
                    repeated.height,
                    sample.len(),
                    sample.head(3).to_list(),
                    *_examples(repeated),
                )
            )
    if not any(name in columns for name in (*IDENTIFYING_COLUMNS, *ID_COLUMNS)):
        return found
    content = [name for name in columns if name not in _WHERE]
    copies = frame.filter(pl.struct(content).is_duplicated()).collect()
    if copies.height:
        extra = copies.height - copies.select(content).n_unique()
        found.append(duplicate_rows_check(extra, *_examples(copies)))
    return found


def _shown_names(names: Sequence[str], total: int, limit: int) -> str:
    """`listing` of the first names when only those and the total are known."""
    if total > limit:
        return f"{', '.join(names[:limit])} and {total - limit:,} more"
    return ", ".join(names)


def duplicate_ids_check(
    id_column: str,
    rows: int,
    ids: int,
    examples: Sequence[str],
    lines: tuple[int, ...] = (),
    sources: tuple[str, ...] = (),
) -> Check:
    """`rows` attempts carry one of `ids` id values that appear more than once."""
    return Check(
        "duplicate_ids",
        "warning",
        f"{plural(ids, id_column + ' value')} appear more than once "
        f"({plural(rows, 'attempt')}): the same attempt may be counted "
        f"twice. E.g. {_shown_names([str(i) for i in examples], ids, EXAMPLES)}.",
        rows - ids,
        [],
        lines,
        sources,
    )


def duplicate_attempts_check(
    identity: Sequence[str],
    rows: int,
    groups: int,
    examples: Sequence[str],
    lines: tuple[int, ...] = (),
    sources: tuple[str, ...] = (),
) -> Check:
    """`rows` attempts in `groups` share their keys, task and attempt number."""
    return Check(
        "duplicate_attempt",
        "warning",
        f"{plural(rows, 'attempt')} share their "
        f"{' · '.join(identity)} with another attempt (e.g. "
        f"{_shown_names(list(examples), groups, 3)}): a repeated attempt may be a copy.",
        rows,
        [],
        lines,
        sources,
    )


def duplicate_rows_check(
    extra: int, lines: tuple[int, ...] = (), sources: tuple[str, ...] = ()
) -> Check:
    """`extra` rows are exact copies of another."""
    return Check(
        "duplicate_rows",
        "warning",
        f"{plural(extra, 'attempt')} "
        f"{'is an exact copy' if extra == 1 else 'are exact copies'} of another row "
        "(every column but the file and line alike): was a file loaded twice?",
        extra,
        [],
        lines,
        sources,
    )
