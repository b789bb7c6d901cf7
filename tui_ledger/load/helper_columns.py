"""The helper columns that live only inside the loader (none reaches the attempts frame), and
the few names every validation step shares."""

from __future__ import annotations

from typing import Literal

from tui_ledger import schema

# Helper columns live only inside the loader; none of them reaches the attempts frame.
LINE = "__ledger_line"  # the row's line (record, row) in its file, as the file's reader numbers it
FRAME = "__ledger_frame"  # the index of the file the row came from
SHORT = "__ledger_short"  # CSV: the last cell is empty (the row may have fewer fields)
LOSSY = "__ledger_lossy"  # a cell holds U+FFFD from bytes that were not UTF-8
MISMATCH = "__ledger_mismatch"  # the token buckets do not add up to tokens
ZERO = "__ledger_zero"  # the usage read was exactly 0
FILLED = "__ledger_filled"  # some cell of the row is not empty
PHYSICAL = "__ledger_physical"  # CSV: the line a record starts on, as an editor counts
CONTRADICTING = "__ledger_contradicting"  # the status contradicts passed
STATUS_WORD = "__ledger_status_word"  # the outcome a status names
WHY = "__ledger_why_"  # + canonical name: why a cell is not acceptable (null when it is)
BAD = "__ledger_bad_"  # + canonical name: the offending text (null when fine)

REPLACEMENT = "\ufffd"  # what a lossy decode puts in place of bytes that are not UTF-8
EXAMPLES = 5  # example lines a warning keeps

# Canonical columns the loader validates cell by cell; and the key columns it trims.
VALIDATED = frozenset({"passed", "status", *schema.INTEGER_COLUMNS})
TEXT_KEYS = ("workflow", "task")
# Columns a CSV is read with as Categorical (the keys and the outcome words).
TYPED_TEXT = ("workflow", "task", "model", "run", "passed", "status")
# The engine of a validation query: polars' default for a frame in memory; the streaming
# engine, in bounded memory, for a file `scan` reads on demand.
Engine = Literal["auto", "streaming"]
