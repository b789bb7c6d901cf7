"""`LoadError`, the one error a load raises, and `shown`, how its messages quote a cell. Imported
by every reader, so it imports nothing of the loader's own (no module of `load` is in a circle).
"""

from __future__ import annotations

from tui_ledger.text.textsafe import safe_text


class LoadError(Exception):
    """A file that cannot be loaded as it is. `str(error)` is one line for people.

    The message says what is wrong, where (file, line or record, column) and what to do.
    `source`, `line` and `column` repeat the where for programs, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: str | None = None,
    ) -> None:
        # Always one line, and safe to print: a file's own text (a cell, a column name, a
        # file name) may hold terminal escapes, and this message reaches terminals.
        super().__init__(safe_text(message.replace("\r", " ").replace("\n", " ")))
        self.source = source
        self.line = line
        self.column = column


def shown(value: object) -> str:
    """A cell's value quoted for a message, cut short past 40 characters."""
    text = str(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return repr(text)
