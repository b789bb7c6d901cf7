"""The cap sweep as a standalone SVG (`summary --cap-svg`): tokens per accepted result against
the token cap, one line per group, each group's best cap marked (`cap_sweep.Sweep`). Both axes
are log scale when they span more than 20x (`pareto_svg.log_axis_bounds`, as the Pareto chart).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from xml.sax.saxutils import quoteattr

from tui_ledger.accounting.cap_sweep import Sweep
from tui_ledger.accounting.comparison import group_labels
from tui_ledger.exports.pareto_svg import _FONT, _PALETTE, _svg_text, log_axis_bounds, nice_step
from tui_ledger.text.labels import fit_labels
from tui_ledger.text.numbers import format_compact

_WIDTH, _HEIGHT = 880, 560
_LEFT, _RIGHT, _TOP, _BOTTOM = 84, 220, 72, 64
_LEGEND = 26  # characters of a name in the legend


class _Scale:
    """Maps a value to a pixel between `start` and `end`: log10 for wide ranges, else linear
    from 0."""

    def __init__(self, values: Sequence[float], start: float, end: float) -> None:
        self.start, self.end = start, end
        bounds = log_axis_bounds(values)
        self.log = bounds is not None
        if bounds is not None:
            self.low, self.high = bounds
        else:
            top = max(values, default=1.0) * 1.1 or 1.0
            self.step = nice_step(top)
            self.low, self.high = 0.0, self.step * math.ceil(top / self.step)

    def at(self, value: float) -> float:
        if self.log:
            share = (math.log10(max(value, self.low)) - math.log10(self.low)) / (
                math.log10(self.high) - math.log10(self.low)
            )
        else:
            share = (value - self.low) / (self.high - self.low)
        return self.start + share * (self.end - self.start)

    def ticks(self) -> list[float]:
        if self.log:
            ticks, power = [], self.low
            while power <= self.high * 1.0001:
                ticks += [t for t in (power, 2 * power, 5 * power) if t <= self.high * 1.0001]
                power *= 10
            return ticks
        return [self.low + i * self.step for i in range(round(self.high / self.step) + 1)]


def cap_svg(sweep: Sweep) -> str:
    """The chart as SVG text; every name is escaped."""
    labels = group_labels(sweep.best, list(sweep.by))
    curve_labels = group_labels(sweep.curve, list(sweep.by))
    lines: dict[str, list[tuple[int, float]]] = {label: [] for label in labels}
    for label, row in zip(curve_labels, sweep.curve.iter_rows(named=True), strict=True):
        if row["tokens_per_accepted_result"] is not None:
            lines[label].append((row["cap"], row["tokens_per_accepted_result"]))
    caps = [float(cap) for cap in sweep.caps] or [1.0]
    figures = [value for points in lines.values() for _, value in points] or [1.0]
    bottom, right = _HEIGHT - _BOTTOM, _WIDTH - _RIGHT
    x = _Scale(caps, _LEFT, right)
    y = _Scale(figures, bottom, _TOP)
    title = "Tokens per accepted result under a token cap"
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" font-family={quoteattr(_FONT)} font-size="13">',
        f"<title>{_svg_text(title)}</title>",
        f'<rect width="{_WIDTH}" height="{_HEIGHT}" fill="#ffffff"/>',
        f'<text x="{_LEFT}" y="34" font-size="20" font-weight="600" fill="#222">'
        f"{_svg_text(title)}</text>",
        f'<text x="{_LEFT}" y="56" fill="#555">'
        f"{_svg_text('one line per group; ● its best cap (lowest tokens per accepted result)')}"
        "</text>",
    ]
    for tick in x.ticks():
        px = x.at(tick)
        out.append(
            f'<line x1="{px:.1f}" y1="{_TOP}" x2="{px:.1f}" y2="{bottom}" stroke="#f0f0f0"/>'
        )
        out.append(
            f'<text x="{px:.1f}" y="{bottom + 18}" text-anchor="middle" fill="#555">'
            f"{_svg_text(format_compact(tick))}</text>"
        )
    for tick in y.ticks():
        py = y.at(tick)
        out.append(
            f'<line x1="{_LEFT}" y1="{py:.1f}" x2="{right}" y2="{py:.1f}" stroke="#e6e6e6"/>'
        )
        out.append(
            f'<text x="{_LEFT - 8}" y="{py + 4:.1f}" text-anchor="end" fill="#555">'
            f"{_svg_text(format_compact(tick))}</text>"
        )
    out.append(
        f'<line x1="{_LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#888"/>'
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{bottom}" stroke="#888"/>'
    )
    x_title = f"Token cap per attempt{' (log scale)' if x.log else ''}"
    out.append(
        f'<text x="{(_LEFT + right) / 2:.1f}" y="{bottom + 42}" text-anchor="middle" '
        f'fill="#333">{_svg_text(x_title)}</text>'
    )
    y_title = f"Tokens per accepted result{' (log)' if y.log else ''}; lower is better"
    out.append(
        f'<text transform="translate(22 {(_TOP + bottom) / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" fill="#333">{_svg_text(y_title)}</text>'
    )
    short = dict(zip(labels, fit_labels(labels, _LEGEND), strict=True))
    for index, (label, row) in enumerate(
        zip(labels, sweep.best.iter_rows(named=True), strict=True)
    ):
        colour = quoteattr(_PALETTE[index % len(_PALETTE)])
        points = lines[label]
        if len(points) > 1:
            path = " ".join(f"{x.at(cap):.1f},{y.at(value):.1f}" for cap, value in points)
            out.append(
                f'<polyline points="{path}" fill="none" stroke={colour} stroke-width="1.8">'
                f"<title>{_svg_text(label)}</title></polyline>"
            )
        best = row["cap"]
        if best is not None:
            tip = (
                f"{label}: best cap {best:,} tokens, "
                f"{format_compact(row['tokens_per_accepted_result'])} per accepted result, "
                f"{row['accepted']:,} accepted kept, {row['accepted_lost']:,} lost"
            )
            out.append(
                f'<circle cx="{x.at(best):.1f}" cy="{y.at(row["tokens_per_accepted_result"]):.1f}" '
                f'r="5.5" fill={colour} stroke="#222" stroke-width="1">'
                f"<title>{_svg_text(tip)}</title></circle>"
            )
        legend_y = _TOP + 8 + index * 18
        if legend_y < bottom:
            best_text = "—" if best is None else format_compact(best)
            out.append(
                f'<rect x="{right + 16}" y="{legend_y - 9}" width="12" height="3" fill={colour}/>'
                f'<text x="{right + 34}" y="{legend_y}" fill="#222" font-size="12">'
                f"{_svg_text(f'{short[label]} (best {best_text})')}</text>"
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"
