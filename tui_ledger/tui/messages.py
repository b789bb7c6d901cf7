"""What the app's workers report, as named messages: the app's pipeline, stage by stage.

Each worker runs in a thread on the arguments it was given, and ends by posting one of these
to the app (`App.post_message` is safe from any thread, and does not wait). `LedgerApp`
handles each in one `@on(...)` handler, on the screen's thread, which hands it to the
`Pipeline` (or, for the audits and the exports, shows or says it). In the order a load flows:

    load worker        -> Loaded | LoadFailed
    recompute worker   -> Recomputed          (its snapshot, or the filter's error)
    intervals worker   -> IntervalsReady      (once the figures are drawn)
    checks worker      -> ChecksReady | ChecksFailed
    compaction worker  -> Compacted           (large ledgers, once their figures are drawn)
    per-task worker    -> PerTaskReady        (`p`)
    export workers     -> Said                (what was written, or why not)

And what the pipeline asks the app to draw (`Drawing`, posted on the screen's thread; the
app's one handler for each draws it with `LedgerShell`'s drawing code):

    TitleChanged, LoadingChanged, ProgressChanged, LedgerChanged, ShowSnapshot,
    SummaryChanged, ComingChanged, ChecksChanged, FilterFailed, Refilter, StateChanged,
    GaveUp, and Said for a toast

A message that a newer one of its kind makes pointless says so in `can_replace`, and the
queue keeps only the newer one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    import polars as pl
    from textual.notifications import SeverityLevel

    from tui_ledger.accounting.checks import Check
    from tui_ledger.accounting.compact import TextValues
    from tui_ledger.accounting.ledger import Comparison, View
    from tui_ledger.accounting.verdicts import Pairs
    from tui_ledger.findings import Finding
    from tui_ledger.load import Ledger
    from tui_ledger.tui.snapshot import Snapshot


@dataclass
class Loaded(Message):
    """The files were read and priced (a first load, a reload, or a change `--watch` saw)."""

    ledger: Ledger
    price_warnings: list[Finding]
    workflows: int | None  # how many workflows; None: the first comparison counts them
    seconds: float  # what loading and pricing took
    first: bool  # the app's first load (a reload says so in a toast)
    # The file's first records only (`load.load_head`), shown while the whole file is read:
    # their figures are never final, and the whole file's `Loaded` follows.
    head: bool = False


@dataclass
class LoadFailed(Message):
    """The files could not be read: the first load ends the app, a reload keeps the screen."""

    error: Exception
    first: bool


@dataclass
class Recomputed(Message):
    """A recompute ended: its figures, None when a newer request superseded it, or (`failure`)
    why the filter could not run on these columns."""

    generation: int
    snapshot: Snapshot | None
    failure: str | None = None
    by: tuple[str, ...] | None = None
    """The grouping of the request (what a failure undoes if it was the grouping's)."""


@dataclass
class IntervalsReady(Message):
    """The figures on screen with their final intervals (bootstrap for small groups); `final`
    is None when they could not be computed (the delta-method ones stay). Never superseded in
    the queue (a stale one is ignored by its handler; which of two is newer is not known here,
    and a newer one lost would leave the app waiting)."""

    comparison: Comparison  # the comparison they were computed for
    final: Comparison | None
    seconds: float


@dataclass
class PairsReady(Message):
    """The pairwise verdicts of the figures on screen (`pairs.pairs_from_cells`); `pairs` is
    None when they could not be drawn (the summary then says nothing of noise). Never
    superseded in the queue, as `IntervalsReady`."""

    comparison: Comparison  # the comparison they were drawn for, as its recompute made it
    pairs: Pairs | None
    seconds: float


@dataclass
class ChecksReady(Message):
    """The fair-comparison checks of the figures of request `generation`."""

    generation: int
    checks: list[Check]
    seconds: float

    def can_replace(self, message: Message) -> bool:
        """A result for newer figures, queued next, supersedes this one. Only newer: results
        are queued in the order their workers end, and a superseded worker can end last (this
        one would then be lost, and the app wait for its checks for ever)."""
        return isinstance(message, ChecksReady) and message.generation >= self.generation


@dataclass
class ChecksFailed(Message):
    """The checks could not run (`reason`, one line); the warnings panel lists the warnings as
    they were read."""

    generation: int
    reason: str


@dataclass
class Compacted(Message):
    """A large ledger's frame, compacted (`compact.compact_text`): the same attempts."""

    attempts: pl.DataFrame  # the frame that was compacted (a reload may have replaced it)
    compacted: pl.DataFrame
    values: TextValues | None


@dataclass
class PerTaskReady(Message):
    """The focused group task by task (`p`), or why it could not be computed."""

    label: str
    keys: dict[str, Any]
    tasks: pl.DataFrame | None
    error: str | None = None


@dataclass
class Said(Message):
    """Something a worker has to tell the user (a file written, a file that could not be)."""

    text: str
    title: str
    severity: SeverityLevel = "information"
    timeout: float | None = None  # None: the toast's usual time


# ---------------------------------------------------------------------- what the app draws


class Drawing(Message):
    """What the pipeline asks the app to draw, posted on the screen's thread. The pipeline
    counts each until the app's handler has drawn it (`Pipeline.handled`), so
    `LedgerApp.unsettled` says "drawing" meanwhile."""


@dataclass
class TitleChanged(Drawing):
    """The header's counts (what is loaded, loading or failed to reload) changed."""


@dataclass
class LoadingChanged(Drawing):
    """The panes' loading indicator, on (the first load, in a worker) or off."""

    loading: bool


@dataclass
class ProgressChanged(Drawing):
    """What the summary pane says while the whole file is read behind its first rows
    (`load_progress.progress_text`); None: the figures are in, the pane shows them."""

    text: str | None


@dataclass
class LedgerChanged(Drawing):
    """A ledger was loaded: the app resets the settings its columns no longer allow, parses
    the filter again, redraws the header, then asks for its figures (`Pipeline.recompute`,
    `inline` as the pipeline says)."""

    inline: bool


@dataclass
class ShowSnapshot(Drawing):
    """The pipeline's snapshot changed: draw it (`first`: the first figures ever). `drawn`:
    the snapshot whose drawing the pipeline waits for; the app tells it once the frame is
    painted (`Pipeline.drawn`), and what follows the figures starts then."""

    first: bool
    drawn: Snapshot | None = None
    new_figures: bool = False


@dataclass
class SummaryChanged(Drawing):
    """The figures on screen changed in place (final intervals, pairwise verdicts): redraw
    the summary. `timing`: a stage to write to the timings file once painted."""

    timing: tuple[str, float] | None = None


@dataclass
class ComingChanged(Drawing):
    """What follows the figures changed (started, or ended without changing them): the
    summary's warnings line says what is still coming."""


@dataclass
class ChecksChanged(Drawing):
    """The checks of the figures on screen arrived: the warnings count, and the warnings
    panel if it is open."""


@dataclass
class FilterFailed(Drawing):
    """The filter parsed but could not run on these columns (e.g. a bad regex), or the
    grouping `by` could not be computed: the app goes back to the grouping on screen."""

    message: str
    by: tuple[str, ...] | None = None


@dataclass
class Refilter(Drawing):
    """The ledger's frame was compacted (`attempts`, the compact frame; `fresh`: a new frame,
    not the loaded one back): the app parses the filter again for its text values, then
    tells the pipeline (`Pipeline.refiltered`)."""

    attempts: pl.DataFrame
    fresh: bool


@dataclass
class PageFetched(Drawing):
    """On Spark: a page of `view`'s rows was appended; the table redraws if it shows `view`."""

    view: View


@dataclass
class StateChanged(Drawing):
    """On Spark: the summary's state line (`computing on Spark · 3.2 s`)."""

    text: str


@dataclass
class GaveUp(Drawing):
    """Nothing to show (the first load failed): the app leaves, saying why (`message`)."""

    message: str
