"""What the app's parts need of the app, as protocols: the pipeline (`PipelineHost`),
the audits (`audits.AuditHost`) and the exports (`exporting.ExportHost`) are handed the app
typed as one of these, so none of them imports `app` (and `lint-imports` keeps it so, counting
`TYPE_CHECKING` imports). `LedgerApp` satisfies every one of them; a test can hand them a small
stand-in instead.

`PipelineHost` is what a worker needs, and all the pipeline may call on the app: start a
worker (`run_worker`), post a message (`post_message`: what a worker reports, and what the
pipeline asks the app to draw), a timer (`set_timer`), and, for the Spark pipeline's queries,
`call_from_thread`. The settings it reads are handed to it as data (`Inputs`).

`Host` adds what the audits, the exports and `--watch` use besides: `call_after_refresh`,
`call_later`, the workers and whether the app runs, and the app's toast (`say`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.timer import Timer
    from textual.worker import Worker
    from textual.worker_manager import WorkerManager

    from tui_ledger.accounting.prices import PriceTable
    from tui_ledger.tui.snapshot import Request, Timings


class PipelineHost(Protocol):
    """What a worker needs of the app, and all the pipeline calls on it (`LedgerApp` is one)."""

    def run_worker(
        self,
        work: Any,
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[Any]: ...

    def post_message(self, message: Message) -> bool: ...

    def set_timer(
        self,
        delay: float,
        callback: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        pause: bool = False,
    ) -> Timer: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...


class Host(PipelineHost, Protocol):
    """Textual's app surface the audits, the exports and `--watch` use, and the app's toast."""

    def call_after_refresh(
        self, callback: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> bool: ...

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    @property
    def workers(self) -> WorkerManager: ...

    @property
    def is_running(self) -> bool: ...

    def say(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> None: ...


@dataclass(frozen=True)
class Inputs:
    """What the app hands its pipeline, as data: the files and how to read and price them
    (fixed for the app's life), the timings it records, and `settings`, the user's settings
    as they stand, as a plain `Request` (called on the screen's thread when a recompute or the
    checks start; the pipeline never changes the app's settings)."""

    paths: Sequence[str]
    load_options: Mapping[str, Any]
    prices: PriceTable | None
    watch_files: bool
    timings: Timings
    settings: Callable[[], Request]
