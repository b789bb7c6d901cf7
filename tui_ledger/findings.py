"""The one shape of a warning, whoever says it.

The load report (`load.LoadWarning`), the price table (`prices.PriceWarning`), the
fair-comparison checks (`checks.Check`) and the notes the CLI and the app add themselves
(`Notice`: matched tasks only, a summary streamed in bounded memory) all carry the same five
fields, and everything that shows a warning (the warnings panel, the JSON, the text formats,
`ledger-tui check`) reads them through `Finding`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class Finding(Protocol):
    """Something a reader of the figures should know: its kind (a snake_case name), one
    sentence, how many rows it concerns, and example lines with the file of each."""

    @property
    def kind(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def count(self) -> int: ...

    @property
    def lines(self) -> tuple[int, ...]: ...

    @property
    def sources(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class Notice:
    """A note the CLI or the app adds about what it did (kind `matched_tasks`, `streamed`)."""

    kind: str
    message: str
    count: int
    lines: tuple[int, ...] = ()
    sources: tuple[str, ...] = ()
