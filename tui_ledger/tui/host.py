"""What the app's parts need of the app, as protocols: the pipeline (`pipeline.PipelineHost`),
the audits (`audits.AuditHost`) and the exports (`exporting.ExportHost`) are handed the app
typed as one of these, so none of them imports `app` (and `lint-imports` keeps it so, counting
`TYPE_CHECKING` imports). `LedgerApp` satisfies every one of them; a test can hand them a small
stand-in instead.

`Host` is the part every one of them uses: Textual's own ways to run work off the screen's
thread and to answer on it (`run_worker`, `post_message`, `call_after_refresh`, `set_timer`,
`call_from_thread`, `call_later`, and whether it runs and what runs in it), and the app's
toast (`say`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.timer import Timer
    from textual.worker import Worker
    from textual.worker_manager import WorkerManager


class Host(Protocol):
    """Textual's app surface the parts use, and the app's toast."""

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

    def call_after_refresh(
        self, callback: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> bool: ...

    def set_timer(
        self,
        delay: float,
        callback: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        pause: bool = False,
    ) -> Timer: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...

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
