"""What the app's parts need of the app, as protocols: the pipeline (`PipelineHost`),
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

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.timer import Timer
    from textual.worker import Worker
    from textual.worker_manager import WorkerManager

    from tui_ledger.accounting.ledger import View
    from tui_ledger.accounting.prices import PriceTable
    from tui_ledger.load.early import EarlyLoad
    from tui_ledger.tui.snapshot import Request, Timings
    from tui_ledger.tui.widgets.summary_pane import SummaryPane


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


class PipelineHost(Host, Protocol):
    """What the pipeline needs of the app (`LedgerApp` is one): the user's settings as they
    stand, and the hooks that draw what the pipeline produced."""

    @property
    def paths(self) -> Sequence[str]: ...
    @property
    def load_options(self) -> dict[str, Any]: ...
    @property
    def prices(self) -> PriceTable | None: ...
    @property
    def watch_files(self) -> bool: ...

    early_load: EarlyLoad | None
    """The first load, if started before the app (`load.early`); the pipeline takes it."""

    @property
    def leaving(self) -> bool: ...
    @property
    def timings(self) -> Timings: ...
    @property
    def view(self) -> View: ...
    @property
    def filter_text(self) -> str: ...
    @property
    def summary(self) -> SummaryPane: ...

    def request(self) -> Request: ...
    def ledger_changed(self) -> None: ...
    def refilter(self) -> None: ...
    def filter_failed(self, message: str) -> None: ...
    def give_up(self, message: str) -> None: ...
    def set_loading(self, loading: bool) -> None: ...
    def show_title(self) -> None: ...
    def show_snapshot(self, first: bool) -> None: ...
    def show_summary(self) -> None: ...
    def show_coming(self) -> None: ...
    def show_checks(self) -> None: ...
