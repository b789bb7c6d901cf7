"""The Pareto chart as a standalone SVG for a slide: pass rate against spend per accepted
result, both views, the frontier; and the axis choices the app's own chart shares with it
(`log_axis_bounds`, `nice_step`)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

import polars as pl

from tui_ledger.accounting.ledger import NOT_RECORDED, VIEWS, Comparison, ParetoMetric
from tui_ledger.accounting.pareto import pareto_points
from tui_ledger.text.labels import fit_labels
from tui_ledger.text.numbers import format_compact, format_money
from tui_ledger.text.textsafe import safe_text
from tui_ledger.text.wording import NO_ATTEMPTS_MATCH

_PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
_FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
_WIDTH, _HEIGHT = 880, 560
_LEFT, _RIGHT, _TOP, _BOTTOM = 84, 40, 92, 96
_LABEL_LIMIT = 30  # past this many groups only frontier points are labelled
_POINT_LABEL = 28  # characters of a name beside its point
_FOOTER_CHARS = 120  # characters of a footer line at 12 px (the chart's width)
_FOOTER_LINE = 16  # pixels from one footer line to the next


def _svg_text(value: object) -> str:
    """Text for an SVG element: visible escapes for control characters, then XML-escaped."""
    # Imported here: xml.sax pulls in urllib (about 5 ms on every start, `summary` included).
    from xml.sax.saxutils import escape

    return escape(safe_text(value))


def nice_step(span: float, target: int = 6) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) giving about `target` intervals."""
    raw = span / max(target, 1)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def log_axis_bounds(values: Sequence[float]) -> tuple[float, float] | None:
    """The decades a spend axis spans when it should be log scale, or None for linear.

    Both Pareto charts (this SVG and the app's) use it, so they agree on when spend per
    accepted result spans enough (more than 20x) to need a log axis.
    """
    positive = [v for v in values if v > 0]
    if not positive or max(positive) / min(positive) <= 20:
        return None
    return 10 ** math.floor(math.log10(min(positive))), 10 ** math.ceil(math.log10(max(positive)))


class _Axis:
    """Maps spend per accepted result to x: linear from 0, or log10 for wide ranges."""

    def __init__(self, values: Sequence[float]) -> None:
        bounds = log_axis_bounds(values)
        self.log = bounds is not None
        if bounds is not None:
            self.low, self.high = bounds
        else:
            self.low = 0.0
            top = max(values) if values else 1.0
            step = nice_step(top * 1.1 if top > 0 else 1.0)
            self.high = step * math.ceil((top * 1.1 if top > 0 else 1.0) / step)
            self.step = step

    def x(self, value: float) -> float:
        span = _WIDTH - _LEFT - _RIGHT
        if self.log:
            value = max(value, self.low)
            share = (math.log10(value) - math.log10(self.low)) / (
                math.log10(self.high) - math.log10(self.low)
            )
        else:
            share = (value - self.low) / (self.high - self.low) if self.high > self.low else 0
        return _LEFT + share * span

    def ticks(self) -> list[float]:
        if self.log:
            ticks: list[float] = []
            power = self.low
            while power <= self.high * 1.0001:
                ticks.extend(t for t in (power, 2 * power, 5 * power) if t <= self.high * 1.0001)
                power *= 10
            return ticks
        count = round((self.high - self.low) / self.step)
        return [self.low + i * self.step for i in range(count + 1)]


def not_recorded_groups(comparison: Comparison, metric: ParetoMetric = "tokens") -> list[str]:
    """The groups whose usage (or cost) was not recorded at all (SPEC.md section 1): no
    point on either chart, and a note naming them instead."""
    column = "cost_usage" if metric == "cost" else "usage"
    keep = comparison.keep
    if column not in keep.columns:
        return []
    rows = (keep[column] == NOT_RECORDED).fill_null(False).arg_true()
    labels = comparison.labels
    return [labels[row] for row in rows]


def _y(rate: float) -> float:
    return _TOP + (1.0 - rate) * (_HEIGHT - _TOP - _BOTTOM)


def pareto_svg(comparison: Comparison, metric: ParetoMetric = "tokens") -> str:
    """A standalone SVG for a slide: pass rate against spend per accepted result.

    Filled points are the honest figures (failures kept); hollow dashed ghosts are where the
    same groups land when failures are dropped, joined to their real point. The line joins
    the keep-view frontier (no group is both cheaper and more often accepted). Groups with
    no accepted attempt cannot be placed and are named below the chart. All text is escaped.
    """
    from xml.sax.saxutils import quoteattr

    points = pareto_points(comparison, metric)
    fmt = format_money if metric == "cost" else format_compact
    unit = "cost (USD)" if metric == "cost" else "tokens"
    plotted = points.filter(
        pl.col("per_accepted").is_not_null() & pl.col("per_accepted").is_finite()
    )
    axis = _Axis(plotted["per_accepted"].to_list())
    colours = {label: _PALETTE[i % len(_PALETTE)] for i, label in enumerate(comparison.labels)}
    by_view = {
        view: {
            row["group"]: row
            for row in plotted.filter(pl.col("view") == view).iter_rows(named=True)
        }
        for view in VIEWS
    }
    not_recorded = set(not_recorded_groups(comparison, metric))
    unplaced = [
        label
        for label in comparison.labels
        if label not in by_view["keep"]
        and label not in by_view["drop"]
        and label not in not_recorded
    ]
    footer = []
    if not_recorded:
        names = ", ".join(label for label in comparison.labels if label in not_recorded)
        footer.append(
            f"Not plotted ({unit} not recorded: every attempt reads 0 or nothing): {names}"
        )
    if unplaced:
        footer.append(f"Not plotted (no accepted attempt): {', '.join(unplaced)}")
    if any(row["lower_bound"] for row in by_view["keep"].values()):
        footer.append(
            "≥ and →: some usage or cost is missing, so the figure is a lower bound "
            "(the true one lies at or right of the point)"
        )
    # Wrapped to the chart's width; the picture grows downwards to hold them all.
    footer = [piece for line in footer for piece in textwrap.wrap(line, _FOOTER_CHARS)]
    height = _HEIGHT + _FOOTER_LINE * max(0, len(footer) - 2)
    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height}" '
        f'viewBox="0 0 {_WIDTH} {height}" font-family={quoteattr(_FONT)} font-size="13">',
        f"<title>{_svg_text(f'Pass rate vs {unit} per accepted result')}</title>",
        f'<rect width="{_WIDTH}" height="{height}" fill="#ffffff"/>',
        f'<text x="{_LEFT}" y="34" font-size="20" font-weight="600" fill="#222">'
        f"{_svg_text(f'Pass rate vs {unit} per accepted result')}</text>",
        f'<text x="{_LEFT}" y="58" fill="#555">'
        f"{_svg_text('● failures kept (honest)    ○ failures dropped (the trap)    ')}"
        f"{_svg_text('— frontier with failures kept')}</text>",
    ]
    # Axes and grid.
    bottom, right = _HEIGHT - _BOTTOM, _WIDTH - _RIGHT
    for rate in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(rate)
        out.append(f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#e6e6e6"/>')
        out.append(
            f'<text x="{_LEFT - 8}" y="{y + 4:.1f}" text-anchor="end" fill="#555">'
            f"{rate * 100:.0f}%</text>"
        )
    if plotted.height == 0:
        # Nothing to place: no ticks of an empty range (`0 0 0 1 1 1`), a word instead.
        nothing = (
            NO_ATTEMPTS_MATCH
            if comparison.keep.height == 0
            else "Nothing to plot: no group has an accepted attempt with recorded usage."
        )
        out.append(
            f'<text x="{(_LEFT + right) / 2:.1f}" y="{(_TOP + bottom) / 2:.1f}" '
            f'text-anchor="middle" font-size="16" fill="#555">{_svg_text(nothing)}</text>'
        )
    for tick in axis.ticks() if plotted.height else ():
        x = axis.x(tick)
        out.append(f'<line x1="{x:.1f}" y1="{_TOP}" x2="{x:.1f}" y2="{bottom}" stroke="#f0f0f0"/>')
        out.append(
            f'<text x="{x:.1f}" y="{bottom + 18}" text-anchor="middle" fill="#555">'
            f"{_svg_text(fmt(tick))}</text>"
        )
    out.append(
        f'<line x1="{_LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#888"/>'
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{bottom}" stroke="#888"/>'
    )
    scale = " (log scale)" if axis.log else ""
    x_title = f"{unit[0].upper()}{unit[1:]} per accepted result{scale}; lower is better"
    out.append(
        f'<text x="{(_LEFT + right) / 2:.1f}" y="{bottom + 42}" text-anchor="middle" '
        f'fill="#333">{_svg_text(x_title)}</text>'
    )
    out.append(
        f'<text transform="translate(22 {(_TOP + bottom) / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" fill="#333">{_svg_text("Pass rate (higher is better)")}</text>'
    )
    # The keep-view frontier.
    frontier = sorted(
        (row for row in by_view["keep"].values() if row["frontier"]),
        key=lambda row: row["per_accepted"],
    )
    if len(frontier) > 1:
        path = " ".join(
            f"{axis.x(row['per_accepted']):.1f},{_y(row['pass_rate']):.1f}" for row in frontier
        )
        out.append(f'<polyline points="{path}" fill="none" stroke="#333" stroke-width="1.5"/>')
    # Ghost -> real, then the points, then the labels on top.
    for label in comparison.labels:
        real, ghost = by_view["keep"].get(label), by_view["drop"].get(label)
        if real is not None and ghost is not None:
            out.append(
                f'<line x1="{axis.x(ghost["per_accepted"]):.1f}" y1="{_y(ghost["pass_rate"]):.1f}" '
                f'x2="{axis.x(real["per_accepted"]):.1f}" y2="{_y(real["pass_rate"]):.1f}" '
                f'stroke={quoteattr(colours[label])} stroke-opacity="0.45" stroke-dasharray="3 3"/>'
            )
    labelled = len(comparison.labels) <= _LABEL_LIMIT
    # Names beside points are cut together (`fit_labels`), so none read alike; tooltips and
    # the footer keep them whole.
    placed = list(by_view["keep"])
    short = dict(zip(placed, fit_labels(placed, _POINT_LABEL), strict=True))
    for label in comparison.labels:
        colour = quoteattr(colours[label])
        ghost = by_view["drop"].get(label)
        if ghost is not None:
            tip = f"{label}, failures dropped: {fmt(ghost['per_accepted'])} per accepted result"
            gx, gy = axis.x(ghost["per_accepted"]), _y(ghost["pass_rate"])
            out.append(
                f'<circle cx="{gx:.1f}" cy="{gy:.1f}" r="6" fill="none" stroke={colour} '
                'stroke-width="1.5" stroke-dasharray="2 2">'
                f"<title>{_svg_text(tip)}</title></circle>"
            )
        real = by_view["keep"].get(label)
        if real is None:
            continue
        value = fmt(real["per_accepted"])
        shown = f"≥ {value}" if real["lower_bound"] else value
        if real["lower_bound"]:
            # A lower bound: the true figure lies at or right of the point, toward more spend.
            x, y = axis.x(real["per_accepted"]), _y(real["pass_rate"])
            arrow_end = min(x + 34, right)
            out.append(
                f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{arrow_end - 6:.1f}" y2="{y:.1f}" '
                f'stroke={colour} stroke-width="2"/>'
                f'<polygon points="{arrow_end:.1f},{y:.1f} {arrow_end - 7:.1f},{y - 4:.1f} '
                f'{arrow_end - 7:.1f},{y + 4:.1f}" fill={colour}>'
                f"<title>{_svg_text(f'{label}: a lower bound, the figure is {shown}')}</title>"
                "</polygon>"
            )
        out.append(
            f'<circle cx="{axis.x(real["per_accepted"]):.1f}" cy="{_y(real["pass_rate"]):.1f}" '
            f'r="6.5" fill={colour} stroke="#ffffff" stroke-width="1">'
            f"<title>{_svg_text(f'{label}, failures kept: {shown} per accepted result')}"
            "</title></circle>"
        )
        if labelled or real["frontier"]:
            text = f"{short[label]} ({shown})"
            x = axis.x(real["per_accepted"])
            # About 7 px a character at 13 px: a name that would run off the right edge
            # ends at its point instead.
            anchor = ' text-anchor="end"' if x + 10 + 7 * len(text) > _WIDTH else ""
            out.append(
                f'<text x="{x - 10 if anchor else x + 10:.1f}"{anchor} '
                f'y="{_y(real["pass_rate"]) - 8:.1f}" fill="#222">{_svg_text(text)}</text>'
            )
    for index, line in enumerate(footer):
        out.append(
            f'<text x="{_LEFT}" y="{_HEIGHT - 40 + index * _FOOTER_LINE}" '
            f'fill="#666" font-size="12">{_svg_text(line)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
