"""`--outcomes FILE`: a grading file's verdicts joined onto one opened input, whatever its
format (an importer's attempts or a plain table), before its columns are mapped and checked.

The join itself is `outcomes_join.join_outcomes`, on canonical names; here the input's own
columns are shown to it under their canonical names (`--col` and the aliases) and given back
their own names after, so the loader then maps, validates and counts the joined verdicts like
any file's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from tui_ledger import schema
from tui_ledger.load.columns import map_columns
from tui_ledger.load.errors import LoadError
from tui_ledger.load.helper_columns import LINE
from tui_ledger.load.opened import Opened
from tui_ledger.outcomes_join import OutcomesError, OutcomesJoin, join_outcomes
from tui_ledger.text.wording import plural

KIND = "outcomes_join"
# The canonical columns the join reads or writes (its key may be any of the others too).
_VERDICT_COLUMNS = ("passed", "status", "task")


def join_file(
    opened: Opened,
    outcomes: Path,
    key: str | None,
    explicit: Mapping[str, str] | None,
    *,
    require_match: bool,
) -> tuple[Opened, OutcomesJoin]:
    """`opened` with the outcomes file's verdicts joined onto its attempts by `key`.

    Raises `LoadError` (one line naming the outcomes file and the key) when the file cannot
    be joined, or, with `require_match`, when none of its keys matches an attempt.
    """
    mapping = map_columns(opened, explicit or {})
    own = opened.frame.collect()
    renamed: dict[str, str] = {}
    for canonical, name in mapping.items():
        if name != canonical and canonical not in own.columns:
            renamed[name] = canonical
    frame = own.rename(renamed)
    casts = []
    for name in _VERDICT_COLUMNS:
        if name in frame.columns:
            dtype = frame.schema[name]
            if not (name == "passed" and dtype == pl.Boolean) and dtype != pl.String:
                casts.append(pl.col(name).cast(pl.String))
    if casts:
        frame = frame.with_columns(casts)
    try:
        joined = join_outcomes(frame, outcomes, key=key, require_match=require_match)
    except OutcomesError as error:
        raise LoadError(str(error), source=str(outcomes)) from None
    back = {canonical: name for name, canonical in renamed.items()}
    result = joined.attempts.rename(back)
    if opened.infer:
        # A CSV's unvalidated columns arrive as text and get their types inferred later
        # (`columns.infer_types`): the columns the join added arrive the same way.
        added = [name for name in result.columns if name not in own.columns]
        result = result.with_columns(pl.col(added).cast(pl.String))
    helpers = {LINE, schema.SOURCE_COLUMN} if opened.has_source else {LINE}
    added = [name for name in result.columns if name not in helpers and name not in own.columns]
    # The file's last column stays last: a CSV's short rows are those where it is empty.
    columns = [*opened.columns[:-1], *added, *opened.columns[-1:]]
    said = (
        f"the verdict of {plural(joined.matched, 'attempt')} (of {joined.attempts.height}) "
        f"from {outcomes}, joined by {joined.key}"
    )
    replaced = dataclasses.replace(
        opened,
        frame=result.lazy(),
        columns=columns,
        in_memory=True,
        joined=(said,),
        mapping=None,  # the verdict columns are new: mapped again
    )
    return replaced, joined


def join_all(
    opened: Sequence[Opened],
    outcomes: Path,
    key: str | None,
    explicit: Mapping[str, str] | None,
) -> list[Opened]:
    """Every input with the outcomes joined, and the join's warnings on the first of them.

    One input: the join must match at least one of its attempts. Several: at least one of
    all their attempts (each input may hold only some of the graded ones).
    """
    single = len(opened) == 1
    results = [join_file(item, outcomes, key, explicit, require_match=single) for item in opened]
    joins = [join for _, join in results]
    if not any(join.matched for join in joins):
        keys = sorted({join.key for join in joins})
        raise LoadError(
            f"{outcomes}: none of its keys matches an attempt's {' or '.join(keys)} in "
            f"{plural(len(opened), 'input')}; check the file, or name the key column with "
            "--outcomes-key.",
            source=str(outcomes),
        )
    if single:
        notes = [(KIND, sentence) for sentence in joins[0].warnings]
    else:
        without = sum(join.without_outcome for join in joins)
        notes = (
            [
                (
                    KIND,
                    f"{plural(without, 'attempt')} without an outcome in {outcomes} (no "
                    f"{joins[0].key} row): left as they were",
                )
            ]
            if without
            else []
        )
    items = [item for item, _ in results]
    items[0] = dataclasses.replace(items[0], notes=(*items[0].notes, *notes))
    return items
