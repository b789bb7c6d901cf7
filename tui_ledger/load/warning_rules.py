"""The load's warnings as one table: each rule's row flag beside the sentence that says it.

A warning is something a file can hold that loads but looks wrong (a status that contradicts
`passed`, a usage of exactly 0, missing usage, ...). Each rule is a named boolean expression
over the rows (dataframely's idea: `validate.finish` evaluates every flag in the one pass
that also finds the first bad cell) and the sentence `LoadReport` prints, so adding a warning
is one row here. The order of the table is the order the report lists them in.

`checks` counts some of the same rules per group on an attempts frame that came from a load
(or not), where the loader's helper columns are gone: `frame_flag` is the rule as read there.
`watch` words a warning whose count grew with `warning_message`.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tui_ledger.load.helper_columns import CONTRADICTING, LOSSY, MISMATCH, ZERO
from tui_ledger.schema import STATUS_WORDS
from tui_ledger.text.wording import plural


@dataclass(frozen=True)
class WarningRule:
    """One warning: its kind, its sentence (`{n}` is the count with its noun) and its flag."""

    kind: str
    sentence: str
    flag: pl.Expr | None
    """Which rows the warning counts, over the loader's rows (helper columns included); None
    for a warning counted per file instead (`unterminated_last_line`)."""
    needs: str | None = None
    """The helper column the flag reads, when only some files have it."""
    noun: str = "attempt"
    frame_flag: pl.Expr | None = None
    """The same rule over an attempts frame as a load returns it (no helper columns); None
    where such a frame cannot tell."""


# A status word as the outcome it names (as the loader reads it), for a frame without the
# loader's helper columns.
_STATUS_OUTCOME = (
    pl.col("status")
    .cast(pl.String)
    .str.strip_chars()
    .str.to_lowercase()
    .str.replace_all(r"[\s.\-]+", "_")
    .replace_strict(STATUS_WORDS, default=None)
)

WARNING_RULES: tuple[WarningRule, ...] = (
    WarningRule(
        "contradicting_status",
        "{n} with a status that contradicts passed; passed decided the outcome",
        pl.col(CONTRADICTING).fill_null(False),
        frame_flag=pl.col("passed").fill_null(False)
        & _STATUS_OUTCOME.is_in(["failed", "timeout", "error"]),
    ),
    WarningRule(
        "bucket_mismatch",
        "{n} whose token buckets do not add up to tokens; tokens was used",
        pl.col(MISMATCH).fill_null(False),
        needs=MISMATCH,
    ),
    WarningRule(
        "suspect_zero",
        "{n} reporting exactly 0 tokens, which harnesses often write when usage was not "
        "recorded; kept as 0 (--zero-usage-is-missing reads them as missing)",
        pl.col(ZERO).fill_null(False),
        frame_flag=pl.col("tokens") == 0,
    ),
    WarningRule(
        "missing_usage",
        "{n} with missing usage (unknown, never counted as 0); tokens per accepted result "
        "is a lower bound for their groups",
        pl.col("tokens").is_null(),
        frame_flag=pl.col("tokens").is_null(),
    ),
    WarningRule(
        "ungraded",
        "{n} with no verdict, counted as ungraded (not accepted)",
        pl.col("outcome") == "ungraded",
        frame_flag=pl.col("outcome") == "ungraded",
    ),
    WarningRule(
        "unterminated_last_line",
        "{n} on a last line with no line end after it; if the file was cut off while "
        "being written, that attempt may be incomplete: check it, or export the file again",
        None,
    ),
    WarningRule(
        "lossy_decode",
        "{n} with bytes that are not UTF-8, read with \ufffd in their place; re-encode the "
        "file as UTF-8 to keep the text",
        pl.col(LOSSY).fill_null(False),
        needs=LOSSY,
        noun="row",
    ),
)
RULES: dict[str, WarningRule] = {rule.kind: rule for rule in WARNING_RULES}
FRAME_FLAGS: dict[str, pl.Expr] = {
    rule.kind: rule.frame_flag for rule in WARNING_RULES if rule.frame_flag is not None
}
"""kind -> the rule's flag over an attempts frame, for the rules such a frame can tell."""
WARNING_KINDS: tuple[str, ...] = tuple(RULES)
"""Every kind, in the order the report lists them."""


def row_flags(names: list[str]) -> dict[str, pl.Expr]:
    """kind -> flag of every rule counted by row that can be read on columns `names`."""
    return {
        rule.kind: rule.flag
        for rule in WARNING_RULES
        if rule.flag is not None and (rule.needs is None or rule.needs in names)
    }


def warning_message(kind: str, count: int) -> str:
    """The warning's sentence for `count` rows: `3 attempts with missing usage (...).`"""
    rule = RULES[kind]
    message = rule.sentence.format(n=plural(count, rule.noun)) + "."
    return message[0].upper() + message[1:]
