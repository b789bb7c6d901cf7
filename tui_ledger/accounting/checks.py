"""Fair-comparison checks: what could make one group's figures not comparable with another's.

`run_checks(attempts, by, report)` returns every `Check` that applies, in plain words that name
groups, tasks and counts. What the loader already counted (missing usage, suspect zeros,
ungraded attempts, contradicting statuses, bucket mismatches) is taken from its report, not
recomputed, and given a per-group breakdown; price warnings can be merged the same way. Every
check is a vectorised polars query. Decisions are in docs/ACCOUNTING.md ("Checks").

The checks work on group ids (`gid`, the group's place in key order), never on labels: a
group's label is made once, for the groups table, and only the labels a sentence names are
read, cut to `textsafe.LABEL_WIDTH` cells. So a 5 MB label costs its size once, not once per task.

What a `Check` is and how checks read (names, lines, JSON) is check_text.py; the duplicate
checks, read from the rows, are duplicate_checks.py. Their names are here too, where the app,
the reports and the Spark engine have always found them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

from tui_ledger.accounting.check_text import (
    EXAMPLES as EXAMPLES,
)
from tui_ledger.accounting.check_text import (
    NO_ISSUE as NO_ISSUE,
)
from tui_ledger.accounting.check_text import (
    SEVERITIES,
    Check,
    Severity,
    _details,
    _examples,
    _label,
    _name,
    _name_column,
    _names,
    check_json,
    check_lines,
)
from tui_ledger.accounting.check_text import (
    is_warning as is_warning,
)
from tui_ledger.accounting.check_text import (
    warnings_of as warnings_of,
)
from tui_ledger.accounting.duplicate_checks import (
    ID_COLUMNS as ID_COLUMNS,
)
from tui_ledger.accounting.duplicate_checks import (
    IDENTIFYING_COLUMNS as IDENTIFYING_COLUMNS,
)
from tui_ledger.accounting.duplicate_checks import (
    _duplicates,
)
from tui_ledger.accounting.duplicate_checks import (
    duplicate_attempts_check as duplicate_attempts_check,
)
from tui_ledger.accounting.duplicate_checks import (
    duplicate_ids_check as duplicate_ids_check,
)
from tui_ledger.accounting.duplicate_checks import (
    duplicate_rows_check as duplicate_rows_check,
)
from tui_ledger.accounting.key_order import sorted_by_text
from tui_ledger.accounting.ledger import DEFAULT_BY, group_labels
from tui_ledger.findings import Finding
from tui_ledger.load.load_report import LoadWarning
from tui_ledger.load.warning_rules import FRAME_FLAGS, warning_message
from tui_ledger.schema import ACCEPTED, normalise_name
from tui_ledger.text.wording import count_expr, plural, plural_expr

SMALL_ATTEMPTS = 10
SMALL_ACCEPTED = 5
UNEVEN_MISSING_SHARE = 0.05  # a group with at least this share of missing usage is a warning

# Columns that name what ran inside a group; more than one value in a group mixes them.
VERSION_COLUMNS: tuple[str, ...] = (
    "model",
    "model_name",
    "model_id",
    "model_version",
    "version",
    "checkpoint",
    "revision",
    "model_revision",
    "agent_version",
    "harness_version",
)
# Loader warning kinds that get a per-group breakdown, and the row flag behind each (the
# loader's own rules, `load.warning_rules`, as read on an attempts frame).
_LOADER_FLAGS: dict[str, pl.Expr] = {
    kind: FRAME_FLAGS[kind] for kind in ("missing_usage", "suspect_zero", "ungraded")
}
# What a cell counts (`_cells`, and the Spark engine's `check_cells`); its other columns say
# which cell it is.
CELL_COUNTS: tuple[str, ...] = ("attempts", "accepted", "recorded_usage", *_LOADER_FLAGS)
# Merged notes that say what was done rather than what is wrong.
_INFO_KINDS = frozenset({"matched_tasks"})


def _keys(by: Sequence[str]) -> list[str]:
    if not by:
        raise ValueError("group by needs at least one column")
    return list(by)


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "—"


# --------------------------------------------------------------------------- the checks


def run_checks(
    attempts: pl.DataFrame | pl.LazyFrame,
    by: Sequence[str] = DEFAULT_BY,
    report: Any = None,
    *,
    warnings: Iterable[Finding] = (),
) -> list[Check]:
    """Every check that applies to these attempts grouped by `by`, warnings first.

    `report` is the loader's `LoadReport` (its warnings become checks, with a per-group
    breakdown where one helps); without it, the checks the loader would have made are made
    here from the frame. `warnings` are more loader-shaped warnings to merge (e.g. from
    `prices.apply_prices`).

    A LazyFrame (the app's filter of its one frame) is read by queries, one per check, and
    only the rows a check names are collected.
    """
    keys = _keys(by)
    columns = attempts.collect_schema().names()
    for name in keys:
        if name not in columns:
            raise ValueError(f"no column {name!r} to group by")
    loader = list(report.warnings) if report is not None else _frame_warnings(attempts)
    return checks_from_cells(
        _cells(attempts, keys),
        keys,
        columns,
        loader=loader,
        warnings=warnings,
        duplicates=_duplicates(attempts, keys),
    )


def checks_from_cells(
    cells: pl.DataFrame,
    keys: list[str],
    columns: Sequence[str],
    *,
    loader: Iterable[Finding],
    warnings: Iterable[Finding] = (),
    duplicates: Sequence[Check] = (),
) -> list[Check]:
    """The engine seam: every check from the cells (`_cells`' frame, whichever engine counted
    it), the attempts' column names, the loader's warnings and the duplicate checks."""
    cells, named = _with_group_ids(cells, keys)
    groups = _group_counts(cells, named, keys)
    found: list[Check] = []
    found += [_from_warning(w, groups) for w in loader]
    found += [_from_warning(w, groups) for w in warnings]
    found += _task_checks(cells, keys, groups)
    found += _mixed_versions(
        cells, pl.DataFrame(schema=dict.fromkeys(columns, pl.Null)), keys, groups
    )
    found += duplicates
    found += _not_recorded(groups)
    found += _no_accepted(groups)
    found += _small_samples(groups)
    order = {severity: index for index, severity in enumerate(SEVERITIES)}
    return sorted(found, key=lambda check: order[check.severity])


def _cells(attempts: pl.DataFrame | pl.LazyFrame, keys: list[str]) -> pl.DataFrame:
    """The one pass over the attempts: counts per group, task and model/version value.

    Every group-, task- and version-level figure the checks need is a sum over these cells,
    so a ledger of millions of rows is read once however many checks run.
    """
    schema = attempts.collect_schema()
    flags = [
        flag.fill_null(False).sum().cast(pl.Int64).alias(kind)
        for kind, flag in _LOADER_FLAGS.items()
        if all(name in schema for name in flag.meta.root_names())
    ]
    task = ["task"] if "task" in schema and "task" not in keys else []
    columns = [*keys, *task, *_version_columns(schema.names(), keys)]
    # Text keys are grouped as Categorical (hashing each distinct text once, not every row's:
    # 3x faster on 10M rows); the few cells come back as String, so a Categorical input reads,
    # sorts and labels exactly as text does.
    text = [name for name in columns if schema[name] in (pl.String, pl.Categorical)]
    cells = (
        attempts.lazy()
        .with_columns(pl.col(text).cast(pl.Categorical))
        .group_by(columns)
        .agg(
            pl.len().cast(pl.Int64).alias("attempts"),
            (pl.col("outcome") == ACCEPTED).sum().cast(pl.Int64).alias("accepted"),
            *flags,
            *(
                [(pl.col("tokens") > 0).sum().cast(pl.Int64).alias("recorded_usage")]
                if "tokens" in schema
                else []
            ),
        )
        .collect()
    )
    return cells  # text stays Categorical until `_with_group_ids` has joined on it


def _with_group_ids(cells: pl.DataFrame, keys: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The cells with a group id in place of their keys, and the groups' keys by id.

    The group id is a group's place among the groups in key order (text keys sorted as text);
    the keys themselves stay in `named`, one row per group, so a long label is held once, not
    once per cell.
    """
    text = [name for name, dtype in cells.schema.items() if dtype in (pl.String, pl.Categorical)]
    text_keys = [name for name in keys if name in text]
    named = sorted_by_text(cells.select(keys).unique(), keys).with_row_index("gid")
    others = [name for name in text if name not in keys]
    cells = (
        cells.join(named, on=keys, how="left", nulls_equal=True)
        .drop(keys)
        .with_columns(pl.col(others).cast(pl.String))
    )
    return cells, named.with_columns(pl.col(text_keys).cast(pl.String))


def _group_counts(cells: pl.DataFrame, named: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per group (in `gid` order): its keys, label, attempts, accepted, and the counts behind
    loader warnings."""
    counts = [name for name in cells.columns if name in CELL_COUNTS]
    # Every group has a cell (`named` is made from them), so its sums line up with `named`.
    per_group = cells.group_by("gid").agg(pl.col(counts).sum()).sort("gid")
    return named.hstack(per_group.drop("gid")).with_columns(_label(keys).alias("group"))


def _frame_warnings(attempts: pl.DataFrame | pl.LazyFrame) -> list[LoadWarning]:
    """What the loader would have warned about, for a frame that did not come from it: the
    loader's rules and sentences (`load.warning_rules`), read on the frame."""
    found: list[LoadWarning] = []
    columns = attempts.collect_schema().names()
    for kind in (*_LOADER_FLAGS, "contradicting_status"):
        flag = FRAME_FLAGS[kind]
        if not all(name in columns for name in flag.meta.root_names()):
            continue
        rows = attempts.lazy().filter(flag.fill_null(False)).collect()
        if rows.height:
            message = warning_message(kind, rows.height)
            found.append(LoadWarning(kind, message, rows.height, *_examples(rows)))
    return found


def _from_warning(warning: Finding, groups: pl.DataFrame) -> Check:
    """A loader- or price-shaped warning as a check, with its per-group counts as details."""
    kind = warning.kind
    details: list[str] = []
    if kind in groups.columns and groups.height > 1:
        hit = groups.filter(pl.col(kind) > 0).sort(kind, descending=True, maintain_order=True)
        details = [
            f"{_name(row['group'])}: {row[kind]:,} of {row['attempts']:,} "
            f"({_share(row[kind], row['attempts'])})"
            for row in hit.iter_rows(named=True)
        ]
    severity: Severity = "info" if kind in _INFO_KINDS else "warning"
    if kind == "missing_usage" and kind in groups.columns:
        shares = groups.select((pl.col(kind) / pl.col("attempts")).max()).item()
        severity = "warning" if (shares or 0) >= UNEVEN_MISSING_SHARE else "info"
    return Check(
        kind=kind,
        severity=severity,
        message=warning.message,
        count=int(warning.count or 0),
        details=details,
        # Warnings made elsewhere (a script's own) may come without example places.
        lines=tuple(getattr(warning, "lines", ()) or ()),
        sources=tuple(getattr(warning, "sources", ()) or ()),
    )


def _task_checks(cells: pl.DataFrame, keys: list[str], groups: pl.DataFrame) -> list[Check]:
    if "task" not in cells.columns or "task" in keys or groups.height < 2:
        return []
    per_task = cells.filter(pl.col("task").is_not_null())
    if any(name not in ("gid", "task", *CELL_COUNTS) for name in cells.columns):  # version columns
        per_task = per_task.group_by("gid", "task").agg(pl.col("attempts").sum().alias("n"))
    else:  # a cell is already one group's one task
        per_task = per_task.select("gid", "task", pl.col("attempts").alias("n"))
    return [*_unmatched(per_task, groups), *_unequal(per_task, groups)]


def _unmatched(per_task: pl.DataFrame, groups: pl.DataFrame) -> list[Check]:
    tasks = per_task.select("task").unique().sort("task").with_row_index("tid")
    all_tasks = tasks.height
    # Which tasks each short group skipped: the first EXAMPLES task numbers it has no cell
    # for (no group x task cross product: that grows with groups times tasks). With its task
    # numbers t_0 < t_1 < ... , t_i - i numbers are missing below t_i, so the j-th missing
    # number is j + #{i : t_i - i <= j}: a sum per group, not a list per group.
    # The rows are sorted by group, so no group_by: a row's place in its group is its row
    # number less its group's first row number (carried forward), and a group's sums are the
    # running sums at its last row less those at the group before's (4x faster than grouping).
    row = pl.int_range(pl.len(), dtype=pl.Int64)
    first = pl.when(pl.col("gid").is_first_distinct()).then(row).forward_fill()
    gap = pl.col("tid").cast(pl.Int64) - (row - first)
    below = [f"__below_{j}" for j in range(EXAMPLES)]
    counted = ["tasks", *below]
    attempted = (
        per_task.join(tasks, on="task")
        .select("gid", "tid")
        .sort("gid", "tid")
        .with_columns(gap.alias("__gap"))
        .select(
            "gid",
            pl.lit(1, dtype=pl.Int64).alias("tasks"),
            *[(pl.col("__gap") <= j).cast(pl.Int64).alias(below[j]) for j in range(EXAMPLES)],
        )
        .with_columns(pl.col(counted).cum_sum())
        .filter(pl.col("gid").is_last_distinct())
        .with_columns(pl.col(counted).diff().fill_null(pl.col(counted)))
    )
    short = (
        groups.select("gid")
        .join(attempted, on="gid", how="left", maintain_order="left")
        .with_columns(pl.col("tasks", *below).fill_null(0))
        .filter(pl.col("tasks") < all_tasks)
        .with_columns((all_tasks - pl.col("tasks")).alias("skipped"))
        .sort("skipped", descending=True, maintain_order=True)
    )
    if short.height == 0:
        return []
    names = tasks.select(pl.col("tid"), _name_column(tasks.get_column("task")).alias("task"))
    labels = groups.get_column("group")
    examples = pl.concat_str(
        [
            pl.when(j < pl.col("skipped")).then(
                (pl.col(below[j]) + j)
                .cast(pl.UInt32)
                .replace_strict(names["tid"], names["task"], default=None)
            )
            for j in range(EXAMPLES)
        ],
        separator=", ",
        ignore_nulls=True,
    )
    details = _details(
        short.select(labels.gather(short["gid"]).alias("name"), "skipped", *below),
        ": skipped ",
        plural_expr(pl.col("skipped"), "task"),
        f" of {all_tasks:,} (e.g. ",
        examples,
        ")",
    )
    # One row per group and task (`_task_checks`), so a task's rows count its groups.
    matched = per_task.group_by("task").len().filter(pl.col("len") == groups.height).height
    missing = int(short["skipped"].sum())
    named = _names(labels.gather(short["gid"]))
    shared = (
        "no task was attempted by every group"
        if matched == 0
        else f"only {plural(matched, 'task')} {'was' if matched == 1 else 'were'} attempted "
        "by every group"
    )
    return [
        Check(
            "unmatched_tasks",
            "warning",
            f"Groups attempted different task sets: {named} did not attempt every one of the "
            f"{all_tasks:,} tasks; {shared}. "
            "Easier or harder task mixes move pass rates and spend; compare on matched tasks "
            "only (--matched-tasks).",
            missing,
            details,
        )
    ]


def _unequal(per_task: pl.DataFrame, groups: pl.DataFrame) -> list[Check]:
    spread = (
        per_task.group_by("task")
        .agg(
            pl.col("n").min().alias("least"),
            pl.col("n").max().alias("most"),
            pl.len().alias("groups"),
        )
        .filter(pl.col("groups") > 1)
    )
    uneven = spread.filter(pl.col("least") != pl.col("most")).sort("task")
    if uneven.height == 0:
        return []
    # Only the tasks a sentence names get their per-group counts written out.
    shown = uneven.head(EXAMPLES).get_column("task")
    labels = groups.get_column("group")
    counts = per_task.filter(pl.col("task").is_in(shown.implode()))
    details = []
    for task in shown.to_list():
        rows = counts.filter(pl.col("task") == task)
        parts = sorted(
            f"{_name(labels[gid])} {n}" for gid, n in zip(rows["gid"], rows["n"], strict=True)
        )
        details.append(f"{_name(task)}: {', '.join(parts)}")
    if uneven.height > EXAMPLES:
        details.append(f"and {uneven.height - EXAMPLES:,} more tasks")
    return [
        Check(
            "unequal_attempts",
            "warning",
            f"Attempts per task differ between groups on {plural(uneven.height, 'task')} of "
            f"the {spread.height:,} that several groups attempted: a group that tried a task "
            "more often had more chances to pass it and more spend on it.",
            uneven.height,
            details,
        )
    ]


def _version_columns(columns: Sequence[str], keys: list[str]) -> list[str]:
    wanted = set(VERSION_COLUMNS)
    return [
        name
        for name in columns
        if name not in keys
        and (normalise_name(name) in wanted or normalise_name(name).endswith("_version"))
    ]


def _mixed_versions(
    cells: pl.DataFrame, attempts: pl.DataFrame, keys: list[str], groups: pl.DataFrame
) -> list[Check]:
    found: list[Check] = []
    labels = groups.get_column("group")
    for column in _version_columns(attempts.columns, keys):
        values = (
            cells.filter(pl.col(column).is_not_null())
            .group_by("gid", column)
            .agg(pl.col("attempts").sum().alias("n"))
            .with_columns(pl.col(column).n_unique().over("gid").alias("kinds"))
            .filter(pl.col("kinds") > 1)
            .sort("gid", "n", column, descending=[False, True, False], nulls_last=True)
        )
        if values.height == 0:
            continue
        mixed = values.group_by("gid", maintain_order=True).agg(
            pl.col(column).cast(pl.String).fill_null("—").alias("values"),
            pl.col("n").alias("counts"),
        )
        details = [
            f"{_name(labels[row['gid']])}: "
            + ", ".join(
                f"{_name(v)} ({n:,})" for v, n in zip(row["values"], row["counts"], strict=True)
            )
            for row in mixed.iter_rows(named=True)
        ]
        affected = int(values["n"].sum())
        names = _names(labels.gather(mixed["gid"]))
        found.append(
            Check(
                "mixed_models" if column.startswith("model") else "mixed_versions",
                "warning",
                f"More than one {column} inside a group: {names}. Its figures blend what "
                f"different {column} values did; group by {column} too to separate them "
                f"(--by {','.join([*keys, column])}).",
                affected,
                details,
            )
        )
    return found


def _not_recorded(groups: pl.DataFrame) -> list[Check]:
    """Groups none of whose attempts recorded usage (every one missing or 0): SPEC.md's usage
    not recorded, which no figure or rank may pass off as free."""
    if "recorded_usage" not in groups.columns:
        return []
    none = groups.filter(pl.col("recorded_usage") == 0)
    if none.height == 0:
        return []
    details = [
        f"{_name(row['group'])}: {plural(row['attempts'], 'attempt')}, "
        f"{row.get('missing_usage', 0) or 0:,} missing, {row.get('suspect_zero', 0) or 0:,} at 0"
        for row in none.iter_rows(named=True)
    ]
    one = none.height == 1
    return [
        Check(
            "usage_not_recorded",
            "warning",
            f"{_names(none.get_column('group'))} recorded no usage (every "
            "attempt's tokens missing or 0, as harnesses write for agents they cannot meter): "
            f"{'its' if one else 'their'} totals and tokens per accepted result read "
            f"'not recorded', never 0, and {'it is' if one else 'they are'} left out of the "
            "ranking.",
            none.height,
            details,
        )
    ]


def _no_accepted(groups: pl.DataFrame) -> list[Check]:
    none = groups.filter(pl.col("accepted") == 0)
    if none.height == 0:
        return []
    details = _details(
        none.select(pl.col("group").alias("name"), "attempts"),
        ": 0 of ",
        count_expr(pl.col("attempts")),
        " accepted",
    )
    return [
        Check(
            "no_accepted",
            "warning",
            f"{_names(none['group'])} "
            f"{'has' if none.height == 1 else 'have'} no "
            "accepted attempt: tokens per accepted result is undefined (shown as —, never 0), "
            f"and dropping failures removes every one of {'its' if none.height == 1 else 'their'} "
            "attempts from the arithmetic.",
            none.height,
            details,
        )
    ]


def _small_samples(groups: pl.DataFrame) -> list[Check]:
    small = groups.filter(
        (pl.col("attempts") < SMALL_ATTEMPTS)
        | ((pl.col("accepted") < SMALL_ACCEPTED) & (pl.col("accepted") > 0))
    )
    if small.height == 0:
        return []
    details = _details(
        small.select(pl.col("group").alias("name"), "accepted", "attempts"),
        ": ",
        count_expr(pl.col("accepted")),
        " accepted of ",
        count_expr(pl.col("attempts")),
    )
    return [
        Check(
            "small_sample",
            "warning",
            f"Small samples (under {SMALL_ATTEMPTS} attempts or under {SMALL_ACCEPTED} "
            f"accepted): {_names(small['group'])}. "
            "Their figures can "
            "move a lot with a few more attempts; read the 95% intervals before ranking them.",
            small.height,
            details,
        )
    ]


__all__ = [
    "Check",
    "check_json",
    "check_lines",
    "group_labels",
    "run_checks",
]
