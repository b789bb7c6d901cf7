"""The Spark engine's errors: one line each, for people, and all of them `ValueError`s.

The CLI turns any `SparkEngineError` into its message and exit code 2, as it does a load error;
none of them needs pyspark to be imported, so the CLI can name them without the extra.
"""

from __future__ import annotations

from tui_ledger.text.textsafe import safe_text


class SparkEngineError(ValueError):
    """Something the Spark path cannot do as asked. `str(error)` is one line for people."""

    def __init__(self, message: str) -> None:
        # One line, and safe to print: paths, table names and cells are other people's text.
        super().__init__(safe_text(" ".join(message.split())))


class SparkExtraMissing(SparkEngineError):
    """The Spark Connect client is not installed (the `spark` extra)."""


class SparkUnreachable(SparkEngineError):
    """No Spark Connect server answers at the URL."""


class SparkInputError(SparkEngineError):
    """The input cannot be read: a missing path or table, an unknown format, no attempts, a
    column the accounting needs is absent or named twice."""


class SparkCellError(SparkEngineError):
    """A cell the accounting cannot read (a bad count, an outcome word outside the
    vocabularies, an empty workflow). `column`, `value` and `row` (the row's identifying
    columns: workflow, task, and an id or run column when there is one) say where."""

    def __init__(self, message: str, *, column: str, value: object, row: dict[str, object]) -> None:
        super().__init__(message)
        self.column = column
        self.value = value
        self.row = row


class SparkInputChanged(SparkEngineError):
    """The input changed between two queries of one answer (files added to a glob, a table
    written to), so their figures do not add up."""


class SparkQueryCancelled(SparkEngineError):
    """A query was interrupted (a newer keystroke superseded it)."""
