"""The app's two ways of writing files: `e` exports the summary and the filtered attempts, `s`
in the Pareto chart saves it as SVG.

Each asks for file names in a dialog, refuses names whose extension says no format, asks
before replacing a file (`write_asking_first`), then writes in a thread worker (atomically,
`export_files`) on what it was given when the user confirmed, which says what it wrote
(`messages.Said`).
Imported when the user first exports, not with the app.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import polars as pl

from tui_ledger.accounting.ledger import Comparison, ParetoMetric
from tui_ledger.findings import Finding
from tui_ledger.schema import SOURCE_COLUMN
from tui_ledger.text.numbers import format_count
from tui_ledger.tui.host import Host
from tui_ledger.tui.messages import Said
from tui_ledger.tui.snapshot import Snapshot

if TYPE_CHECKING:
    from tui_ledger.accounting.checks import Check
    from tui_ledger.tui.pipeline import Pipeline
    from tui_ledger.tui.screens.screens import ExportRequest


class ExportHost(Host, Protocol):
    """What the exports need of the app (`ExportHost` is one)."""

    @property
    def pipeline(self) -> Pipeline: ...
    @property
    def paths(self) -> Sequence[str]: ...
    @property
    def filtered(self) -> bool: ...
    @property
    def is_web(self) -> bool: ...

    def push_screen(self, screen: Any, callback: Any = None) -> Any: ...


def export(app: ExportHost, typed: ExportRequest | None = None) -> None:
    """`e`: ask for file names, then write (asking before replacing anything); `typed`: what
    the dialog held when "No" answered the question whether to replace (it opens again)."""
    snapshot = app.pipeline.snapshot
    if snapshot is None:
        return
    from tui_ledger.tui.screens.screens import ExportScreen

    screen = ExportScreen(
        typed.summary_path if typed else "ledger-summary.md",
        typed.attempts_path if typed else "ledger-attempts.csv",
        rows=snapshot.rows("keep"),
        filtered=app.filtered,
        raw=typed.raw if typed else False,
    )

    def answered(request: ExportRequest | None) -> None:
        if request is None:
            return
        typed = request
        problem = export_problem(request)
        if problem is not None:
            app.say(problem, title="export", severity="error")
            return
        placed = placed_exports(app, [request.summary_path, request.attempts_path], "export")
        if placed is None:
            return
        request = replace(request, summary_path=placed[0], attempts_path=placed[1])

        def write(overwrite: bool) -> None:
            pipeline = app.pipeline
            shown = pipeline.snapshot
            if shown is None:
                return
            ledger = pipeline.ledger
            warnings = [*ledger.report.warnings, *pipeline.price_warnings] if ledger else []
            app.run_worker(
                partial(
                    _write_exports,
                    app,
                    request,
                    overwrite,
                    shown,
                    warnings,
                    list(pipeline.checks or ()),
                    reads(app),
                ),
                name="_export_worker",
                group="export",
                exclusive=True,
                thread=True,
                exit_on_error=False,
            )

        write_asking_first(
            app, [request.summary_path, request.attempts_path], write, partial(export, app, typed)
        )

    app.push_screen(screen, answered)


def _write_exports(
    app: ExportHost,
    request: ExportRequest,
    overwrite: bool,
    snapshot: Snapshot,
    warnings: list[Finding],
    checks: Iterable[Check],
    protected: list[str],
) -> None:
    """Write the summary and the attempts (in a worker thread): never over a file the ledger
    reads (`protected`); CSV spreadsheet-safe unless the user asked for raw cells."""
    from tui_ledger.exports.export_files import (
        ExportError,
        format_for_path,
        write_attempts,
        write_text_atomic,
    )
    from tui_ledger.reports.report import SUMMARY_FORMATS, render_summary
    from tui_ledger.tui.serve.served_exports import deliver_staged, discard_staged

    paths = [request.summary_path, request.attempts_path]
    written: list[str] = []
    try:
        if request.summary_path:
            fmt = format_for_path(request.summary_path, SUMMARY_FORMATS)
            from tui_ledger.tui.vouching import tagged

            comparison = tagged(snapshot.comparison, app.pipeline)  # as graded or as vouched
            if snapshot.cap is not None and snapshot.cap_figures is not None:
                from tui_ledger.reports.cap_report import render_capped

                text = render_capped(
                    comparison,
                    snapshot.cap,
                    snapshot.cap_figures,
                    fmt=fmt,
                    warnings=warnings,
                    checks=list(checks),
                    spreadsheet_safe=not request.raw,
                )
            else:
                text = render_summary(
                    comparison,
                    fmt,
                    view=None,
                    warnings=warnings,
                    checks=checks,
                    spreadsheet_safe=not request.raw,
                )
            write_text_atomic(request.summary_path, text, overwrite=overwrite, protected=protected)
            written.append(request.summary_path)
        if request.attempts_path:
            # Locally the rows on screen; on Spark what the cluster returns (a query).
            attempts = app.pipeline.export_rows(snapshot)
            write_attempts(
                attempts,
                request.attempts_path,
                overwrite=overwrite,
                spreadsheet_safe=not request.raw,
                protected=protected,
            )
            written.append(f"{request.attempts_path} ({format_count(attempts.height)} rows)")
    except (ExportError, OSError, ValueError) as error:
        discard_staged(paths)
        app.post_message(Said(str(error), "export", "error"))
        return
    sent = app.call_from_thread(deliver_staged, app, paths)
    app.post_message(Said(sent or "wrote " + ", ".join(written), "export"))


def export_problem(request: ExportRequest) -> str | None:
    """Why the file names cannot be used (their extensions), or None."""
    from tui_ledger.exports.export_files import ATTEMPT_FORMATS, ExportError, format_for_path
    from tui_ledger.reports.report import SUMMARY_FORMATS

    try:
        if request.summary_path:
            format_for_path(request.summary_path, SUMMARY_FORMATS)
        if request.attempts_path:
            format_for_path(request.attempts_path, ATTEMPT_FORMATS)
    except ExportError as error:
        return str(error)
    return None


def save_chart(
    app: ExportHost, comparison: Comparison, metric: ParetoMetric, typed: str = ""
) -> None:
    """`s` in the chart: ask for a file name, then write the SVG (asking before replacing;
    after a no, the dialog again with the name as `typed`)."""
    from tui_ledger.tui.screens.screens import SaveScreen

    def answered(path: str | None) -> None:
        if not path:
            return
        if Path(path).suffix.lower() != ".svg":
            app.say(f"{path}: the chart is an SVG; name it .svg", title="chart", severity="error")
            return
        placed = placed_exports(app, [path], "chart")
        if placed is None:
            return
        (target,) = placed

        def write(overwrite: bool) -> None:
            app.run_worker(
                partial(_write_svg, app, target, comparison, metric, overwrite, reads(app)),
                name="_svg_worker",
                group="export",
                exclusive=True,
                thread=True,
                exit_on_error=False,
            )

        write_asking_first(app, [target], write, partial(save_chart, app, comparison, metric, path))

    app.push_screen(
        SaveScreen(
            typed or "ledger-pareto.svg",
            title="save the chart",
            what=f"Pass rate against {metric} per accepted result, both views · .svg",
        ),
        answered,
    )


def _write_svg(
    app: ExportHost,
    path: str,
    comparison: Comparison,
    metric: ParetoMetric,
    overwrite: bool,
    protected: list[str],
) -> None:
    """Write the chart (in a worker thread), never over a file the ledger reads."""
    from tui_ledger.exports.export_files import ExportError, write_text_atomic
    from tui_ledger.exports.pareto_svg import pareto_svg
    from tui_ledger.tui.serve.served_exports import deliver_staged, discard_staged

    try:
        write_text_atomic(
            path, pareto_svg(comparison, metric), overwrite=overwrite, protected=protected
        )
    except (ExportError, OSError) as error:
        discard_staged([path])
        app.post_message(Said(str(error), "chart", "error"))
        return
    sent = app.call_from_thread(deliver_staged, app, [path])
    app.post_message(Said(sent or f"wrote {path}", "chart"))


def placed_exports(app: ExportHost, paths: list[str], title: str) -> list[str] | None:
    """Where to write `paths`: as typed in a terminal; served (`ledger-tui serve`), staged
    for the browser or inside the owner's --export-dir. None (and said) when refused."""
    from tui_ledger.tui.serve.served_exports import place_exports

    placed = place_exports(paths, is_web=app.is_web, inputs=app.paths)
    if isinstance(placed, str):
        app.say(placed, title=title, severity="error")
        return None
    return placed


def reads(app: ExportHost) -> list[str]:
    """What the ledger reads: the paths it was opened on, and every file its attempts came
    from (a folder's files, an importer's trials). No export may replace one of them."""
    found = list(app.paths)
    ledger = app.pipeline.ledger
    if ledger is not None and SOURCE_COLUMN in ledger.attempts.columns:
        sources = ledger.attempts.get_column(SOURCE_COLUMN).cast(pl.String).unique()
        found += [str(source) for source in sources.drop_nulls().to_list()]
    return found


def write_asking_first(
    app: ExportHost,
    paths: list[str],
    write: Callable[[bool], None],
    declined: Callable[[], None] | None = None,
) -> None:
    """Call `write(overwrite)`: at once when no file is in the way, else after a yes (after a
    no, `declined`: the dialog again, as typed); never (said in one line) when a file is one
    the ledger reads."""
    from tui_ledger.exports.export_files import input_problem

    protected = reads(app)
    for path in paths:
        problem = input_problem(path, protected) if path else None
        if problem is not None:
            app.say(problem, title="export", severity="error")
            return
    existing = [path for path in paths if path and Path(path).exists()]
    if not existing:
        write(False)
        return
    question = (
        f"{' and '.join(existing)} already exist{'s' if len(existing) == 1 else ''}. Replace?"
    )

    from tui_ledger.tui.screens.screens import ConfirmScreen

    def confirmed(yes: bool | None) -> None:
        if yes:
            write(True)
            return
        app.say("Nothing was written.", title="export", timeout=3)
        if yes is False and declined is not None:
            declined()

    app.push_screen(ConfirmScreen(question), confirmed)
