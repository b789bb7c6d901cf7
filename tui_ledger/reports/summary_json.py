"""The summary as JSON: one view keyed by group, or everything (`summary_json`); and the JSON
text every command prints (`json_text`): safe to print (every character that could act on a
terminal written as a `\\uXXXX` escape, read back as the same string) and exact (a token
figure past 2**53 keeps its digits; a float that is not exact stays a float)."""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from tui_ledger.accounting.ledger import VIEWS, Comparison, View
from tui_ledger.findings import Finding
from tui_ledger.reports.callout import callout, undecided
from tui_ledger.reports.pair_report import noise_rank_columns, pairs_json
from tui_ledger.schema import OUTCOMES
from tui_ledger.text.numbers import FLOAT_EXACT, exact_per_accepted, plain_number
from tui_ledger.text.textsafe import UNSAFE_CODEPOINTS

if TYPE_CHECKING:
    from tui_ledger.accounting.checks import Check


# Interval columns (`X_lo`, `X_hi`) become one `X_ci: [lo, hi]` entry; flags get clear names.
_INTERVALS = ("pass_rate", "tokens_per_accepted_result", "cost_per_accepted_result")
_RENAMED = {
    "lower_bound": "tokens_per_accepted_result_is_lower_bound",
    "cost_lower_bound": "cost_per_accepted_result_is_lower_bound",
}


def json_number(value: Any) -> Any:
    """`plain_number`, except that a float past 2**53 stays a float (`9007199254740992.0`):
    written as an integer it would pass for an exact count it is not."""
    if isinstance(value, float) and math.isfinite(value) and abs(value) >= FLOAT_EXACT:
        return value
    return plain_number(value)


def _group_record(row: dict[str, Any], by: Sequence[str]) -> dict[str, Any]:
    row = {**row, "tokens_per_accepted_result": exact_per_accepted(row)}
    record: dict[str, Any] = {}
    outcomes = {name: row[name] for name in OUTCOMES}
    for name, value in row.items():
        if name in by or name in OUTCOMES:
            continue
        if name in _RENAMED:
            record[_RENAMED[name]] = bool(value)
            continue
        base, _, end = name.rpartition("_")
        if base in _INTERVALS and end in ("lo", "hi"):
            if end == "lo":
                pair = [row[f"{base}_lo"], row[f"{base}_hi"]]
                record[f"{base}_ci"] = (
                    None if pair == [None, None] else [json_number(v) for v in pair]
                )
            continue
        record[name] = (
            json_number(value)
            if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)
            else value
        )
        if name == "pass_rate":
            record["outcomes"] = outcomes
    return record


def view_json(comparison: Comparison, view: View) -> dict[str, dict[str, Any]]:
    """One view as an object keyed by group: the article script's key names and more."""
    frame = comparison.view(view)
    records = {
        label: _group_record(row, comparison.key_columns)
        for label, row in zip(comparison.labels, frame.iter_rows(named=True), strict=True)
    }
    if comparison.pairs is not None:
        ranks = noise_rank_columns(comparison, view)
        for label, record in records.items():
            # The rank range the pairwise verdicts support (null: not compared, or capped).
            best, worst = ranks.get(label, (None, None))
            record["rank_noise_best"], record["rank_noise_worst"] = best, worst
    return records


def summary_json(
    comparison: Comparison,
    view: View | None = None,
    warnings: Iterable[Finding] = (),
    checks: Iterable[Check] = (),
) -> dict[str, Any]:
    """The JSON document of `summary`: one view keyed by group, or everything.

    Everything: `views` (keep and drop, keyed by group), `trap`, the totals, `callout`,
    `warnings` (what the loader and the price table said), `checks` (every fair-comparison
    check, those warnings included) and `intervals` (how the 95% intervals were computed).
    """
    if view is not None:
        return view_json(comparison, view)
    from tui_ledger.accounting.checks import (
        check_json,  # the checks' own JSON (imported when needed)
    )

    trap = {
        label: {
            name: json_number(value)
            for name, value in row.items()
            if name not in comparison.key_columns
        }
        for label, row in zip(comparison.labels, comparison.trap.iter_rows(named=True), strict=True)
    }
    document: dict[str, Any] = {
        "by": list(comparison.by),
        "accepted": comparison.accepted,
        "views": {name: view_json(comparison, name) for name in VIEWS},
        "trap": trap,
        "hidden_tokens": comparison.hidden_tokens,
    }
    if comparison.has_cost:
        document["hidden_cost"] = plain_number(comparison.hidden_cost)
    document.update(
        {
            # true / false only where every value the bounds allow agrees; null: undecided.
            "ranking_flips": None if comparison.flip_undecided() else comparison.flips(),
            "ranking_undecided": undecided(comparison) if comparison.flip_undecided() else None,
            "usage_not_recorded": comparison.not_recorded(),
            # Groups whose rank may differ between the views; `certain`: it does, whatever the
            # missing usage was. keep_rank / drop_rank are the best places, *_worst the worst.
            "moves": [
                {
                    "group": m.group,
                    "keep_rank": m.keep_rank,
                    "keep_rank_worst": m.keep_worst,
                    "drop_rank": m.drop_rank,
                    "drop_rank_worst": m.drop_worst,
                    "certain": m.certain,
                }
                for m in comparison.possible_moves()
            ],
            "callout": callout(comparison),
            # Every pair's ratio, 95% interval and verdict per view (null until drawn).
            "pairs": pairs_json(comparison),
            "intervals": {
                "level": 0.95,
                "method": comparison.intervals.method,
                "description": comparison.intervals.describe(),
                "bootstrap_resamples": comparison.intervals.resamples,
                "bootstrap_seed": comparison.intervals.seed,
                "bootstrap_below_attempts": comparison.intervals.bootstrap_below,
            },
            "warnings": [_warning_json(w) for w in warnings],
            "checks": [check_json(c) for c in checks],
        }
    )
    return document


def _warning_json(warning: Finding) -> dict[str, Any]:
    return {
        "kind": warning.kind,
        "message": warning.message,
        "count": warning.count,
        "lines": list(warning.lines),
        "sources": list(warning.sources),
    }


# Characters JSON may carry raw but a terminal could act on (C1 controls, DEL, bidi and
# zero-width characters); JSON itself already escapes C0 controls.
_JSON_ESCAPES = {
    codepoint: "".join(
        f"\\u{unit:04x}"
        for unit in (
            [codepoint]
            if codepoint < 0x10000
            else [0xD800 + ((codepoint - 0x10000) >> 10), 0xDC00 + ((codepoint - 0x10000) & 0x3FF)]
        )
    )
    for codepoint in UNSAFE_CODEPOINTS
    if codepoint >= 0x20  # json.dumps escapes C0 in strings; outside them, \n is layout
}


def json_text(document: Any) -> str:
    """`document` as indented JSON that is safe to print and exact to read back.

    Non-ASCII text stays readable, but every character `safe_text` would escape is written as
    a `\\uXXXX` escape (valid JSON, read back as the same string), so printing the JSON
    cannot act on a terminal. A `Decimal` (an exact ratio past 2**53) is written with all
    its digits, never through a float.
    """
    exact: list[str] = []
    nonce = secrets.token_hex(8)  # no string from a file can forge a marker

    def encode(value: Any) -> Any:
        if isinstance(value, Decimal):
            exact.append(format(value, "f"))
            return f"\x00{nonce}:{len(exact) - 1}\x00"
        raise TypeError(f"{type(value).__name__} is not JSON")

    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False, default=encode)
    text = text.translate(_JSON_ESCAPES)
    for index, digits in enumerate(exact):
        # The marker's NULs are `\u0000` escapes now; the quoted marker becomes a number.
        text = text.replace(f'"\\u0000{nonce}:{index}\\u0000"', digits, 1)
    return text + "\n"
