"""The grader's audit in the app (README: "Can the grader vouch for it?"): `VouchedPipeline` is
the local pipeline that also audits each ledger it adopts, once, in a thread worker, and puts
the audit's frame where the accounting reads the attempts: the pipeline's ledger.

- **When.** Each ledger adopted whole (the first load, `r`, a `--watch` append) is audited in
  a worker once its first figures are drawn (`grader.audit_ledger` reads every attempt's logs:
  a large ledger's first screen never waits for it, nor shares the cores with it). Until the
  audit is in, the figures are as graded, and the header says so (`accepted_word`);
  `unsettled` names `audit` meanwhile.
- **The one place.** The accounting, the table, the checks and the exports all read
  `Pipeline.ledger.attempts`. Once the audit is in, that frame becomes `Audit.apply(frame,
  accepted)` (the ledger is adopted again, as after a load: a recompute, the checks), so
  every figure, rank, interval, noise verdict and the flip callout follow. `v`
  (`set_accepted`) applies the other mode to the same frame; the verdicts as given are kept
  (`_graded_outcome`) so the way back is exact. A ledger whose audit changes no figure (no
  signal that counts) keeps its frame, and its cube.
- **The ranking.** The worker also ranks the whole ledger by workflow both ways
  (`grader.ranking_change`): the callout says whether the ranking changes.

On Spark nothing is audited (`spark_pipeline.SparkPipeline` is not this class).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal, TypeVar

import polars as pl
from rich.text import Text
from textual.message import Message
from textual.worker import get_current_worker

from tui_ledger.text.textsafe import safe_text
from tui_ledger.text.wording import first_line, plural
from tui_ledger.tui.messages import Drawing, Loaded, Recomputed, Said, TitleChanged
from tui_ledger.tui.pipeline import Pipeline
from tui_ledger.tui.theme import CALLOUT_STYLE, LABEL_STYLE

if TYPE_CHECKING:
    from tui_ledger.grader import Audit, Health
    from tui_ledger.grader.ranking_change import RankingChange
    from tui_ledger.load import Ledger
    from tui_ledger.load.early import EarlyLoad
    from tui_ledger.tui.host import Inputs, PipelineHost
    from tui_ledger.tui.snapshot import Snapshot

Accepted = Literal["graded", "vouched"]
_Tagged = TypeVar("_Tagged")


class Audited(Message):
    """The audit worker's report: the audit of `attempts` (the frame as loaded), its ranking
    change and health, or why it failed (`error`)."""

    def __init__(
        self,
        attempts: pl.DataFrame,
        audit: Audit | None,
        ranking: RankingChange | None = None,
        health: Health | None = None,
        error: str | None = None,
    ) -> None:
        super().__init__()
        self.attempts = attempts
        self.audit = audit
        self.ranking = ranking
        self.health = health
        self.error = error


@dataclass
class Refigure(Drawing):
    """The grader's findings changed what the summary says, not its figures: redraw it."""


class VouchedPipeline(Pipeline):
    """The local pipeline, with the grader's audit of each ledger and the vouched view."""

    def __init__(
        self,
        app: PipelineHost,
        inputs: Inputs,
        early: EarlyLoad | None = None,
        accepted: Accepted = "graded",
    ) -> None:
        super().__init__(app, inputs, early)
        self.accepted: Accepted = accepted
        """What counts as accepted: the verdicts as given, or those the grader vouches for."""
        self.audit: Audit | None = None
        """The audit of the ledger on screen (None until it is in)."""
        self.ranking: RankingChange | None = None
        self.health: Health | None = None
        self.audit_error: str | None = None
        self._auditing: pl.DataFrame | None = None  # the frame whose audit is under way
        self._graded_outcome: pl.Series | None = None  # the verdicts as given
        self._applied: Accepted | None = None  # what the ledger's frame is; None: as loaded
        self._audit_due: Ledger | None = None  # audited once its first figures are drawn

    # ------------------------------------------------------------------ the audit

    def loaded(self, loaded: Loaded, *, inline: bool = False) -> None:
        """A ledger adopted whole (not a head): audit it."""
        super().loaded(loaded, inline=inline)
        if not loaded.head and self.ledger is loaded.ledger:
            self._start_audit(loaded.ledger)

    def _start_audit(self, ledger: Ledger) -> None:
        """Audit `ledger` once its first figures are drawn (`drawn`): the audit's polars work
        (the health's group_by, the ranking's two compares) never competes with them."""
        attempts = ledger.attempts
        self.audit = self.ranking = self.health = None
        self.audit_error = None
        self._applied = None
        self._graded_outcome = attempts.get_column("outcome")
        self._auditing = attempts
        self._audit_due = ledger

    def drawn(self, snapshot: Snapshot, new_figures: bool) -> None:
        """A recompute's frame is painted: the audit of a ledger just adopted starts."""
        super().drawn(snapshot, new_figures)
        if self.partial is None:
            self._run_audit()

    def recomputed(self, recomputed: Recomputed) -> None:
        """A recompute that failed (a filter these columns cannot run) draws no figures: the
        audit due starts now rather than wait for figures that may never come."""
        super().recomputed(recomputed)
        if recomputed.failure is not None and self.partial is None:
            self._run_audit()

    def _run_audit(self) -> None:
        ledger = self._audit_due
        if ledger is None or self._auditing is not ledger.attempts:
            return
        self._audit_due = None
        self.app.run_worker(
            partial(self._audit_worker, ledger, tuple(self.inputs.paths)),
            name="_audit_worker",
            group="audit",
            exclusive=True,
            thread=True,
            exit_on_error=False,
        )

    def _audit_worker(self, ledger: Ledger, paths: tuple[str, ...]) -> None:
        from tui_ledger.grader import audit_ledger, grader_health
        from tui_ledger.grader.ranking_change import ranking_change

        attempts = ledger.attempts
        try:
            audit = audit_ledger(ledger, paths)
            ranking = ranking_change(attempts, audit)
            health = grader_health(attempts, audit)
        except Exception as error:  # a fault of ours: said, the figures stay as graded
            reason = safe_text(f"{type(error).__name__}: {first_line(error)}")
            report = Audited(attempts, None, error=reason)
        else:
            report = Audited(attempts, audit, ranking, health)
        if not get_current_worker().is_cancelled:
            self.app.post_message(report)

    def audited(self, report: Audited) -> None:
        """The audit is in (the app's handler): its frame becomes the one the figures read."""
        if report.attempts is not self._auditing:
            return  # a reload came meanwhile: its own audit follows
        self._auditing = None
        if report.audit is None:
            self.audit_error = report.error
            self._post(TitleChanged())
            self._post(
                Said(f"the figures stay as graded ({report.error})", "audit failed", "error")
            )
            return
        self.audit, self.ranking, self.health = report.audit, report.ranking, report.health
        self._post(TitleChanged())
        if not self._apply_accepted():
            self._post(Refigure())  # the callout says what the audit found

    def set_accepted(self, accepted: Accepted) -> None:
        """`v`: accepted as graded or as vouched; the figures follow once the audit is in."""
        self.accepted = accepted
        self._post(TitleChanged())
        if not self._apply_accepted():
            self._post(Refigure())

    def waiting(self) -> list[str]:
        """What the figures still wait for, the audit included."""
        waiting = super().waiting()
        if self._auditing is not None:
            waiting.append("audit")
        return waiting

    @property
    def auditing(self) -> bool:
        """Whether the audit of the ledger on screen is under way."""
        return self._auditing is not None

    @property
    def vouched(self) -> bool:
        """Whether the figures on screen count only the acceptances the grader vouches for."""
        return self.accepted == "vouched" and self.audit is not None

    def _target(self) -> Accepted | None:
        """The mode the ledger's frame should have; None: as loaded (the audit changes no
        figure: no attempt that never acted, and as graded or with nothing unvouched)."""
        audit = self.audit
        if audit is None:
            return None
        vouched = self.accepted == "vouched" and bool(audit.unvouched)
        if not vouched and not audit.never_acted:
            return None
        return "vouched" if vouched else "graded"

    def _apply_accepted(self) -> bool:
        """Give the ledger the frame of the mode asked for; whether it changed (then it is
        adopted again: a recompute and its checks follow, as after a load)."""
        target, ledger, audit = self._target(), self.ledger, self.audit
        if target == self._applied or ledger is None or audit is None:
            return False
        frame = ledger.attempts
        if self._graded_outcome is not None:
            frame = frame.with_columns(self._graded_outcome)
        if target is not None:
            frame = audit.apply(frame, target)
        self.ledger = dataclasses.replace(ledger, attempts=frame)
        self._applied = target
        if self._compacting is not None:  # its result is of the old frame: compact this one
            self._compacting, self._compacted = None, False
        elif self._compacted:
            self._start_cube(frame)
        self._ledger_changed(inline=False)
        return True


def accepted_word(pipeline: object) -> str | None:
    """The header's word for what accepted means, when not as graded: `VOUCHED`, and until
    the audit is in (or when it failed) that the figures are still as graded."""
    if not isinstance(pipeline, VouchedPipeline) or pipeline.accepted != "vouched":
        return None
    if pipeline.audit is not None:
        return "VOUCHED"
    if pipeline.auditing:
        return "VOUCHED: auditing…, figures as graded"
    return "VOUCHED: no audit, figures as graded"


def grader_note(pipeline: object) -> Text | None:
    """The callout's line about the grader: whether the ranking changes between graded and
    vouched (by workflow, the whole ledger), and the key that lists the flagged attempts."""
    if not isinstance(pipeline, VouchedPipeline):
        return None
    audit, ranking = pipeline.audit, pipeline.ranking
    if audit is None or ranking is None:
        return None
    text = Text()
    if ranking.unvouched:
        style = CALLOUT_STYLE if ranking.changes else ""
        text.append("» ", style=CALLOUT_STYLE)
        text.append(ranking.sentence, style=style)
        by = " · ".join(ranking.by)
        text.append(f" (by {by}, every attempt; v toggles, a lists them)", style=LABEL_STYLE)
    elif audit.signals.height:
        text.append(
            f"The grader's audit flags {plural(len(audit.flagged()), 'attempt')}, "
            "none of them accepted (a lists them).",
            style=LABEL_STYLE,
        )
    else:
        return None
    if audit.note:
        text.append(f" {audit.note}.", style=LABEL_STYLE)
    return text


def flagged_positions(pipeline: object) -> frozenset[int]:
    """The positions in the ledger's frame of the attempts the grader's audit flags (the
    attempts table's mark)."""
    if not isinstance(pipeline, VouchedPipeline) or pipeline.audit is None:
        return frozenset()
    return frozenset(pipeline.audit.flagged())


def tagged(comparison: _Tagged, pipeline: object) -> _Tagged:
    """`comparison` saying which acceptances it counts (its `accepted` field, which the summary
    JSON writes), as the pipeline computed it: what the app's exports write."""
    if not hasattr(comparison, "accepted") or not dataclasses.is_dataclass(comparison):
        return comparison  # (a Comparison that does not say which)
    vouched = isinstance(pipeline, VouchedPipeline) and pipeline.vouched
    accepted = "vouched" if vouched else "graded"
    if getattr(comparison, "accepted", None) == accepted:
        return comparison
    return dataclasses.replace(comparison, accepted=accepted)  # type: ignore[type-var]
