"""Geometry of the report's SVG charts: pure arithmetic, no drawing.

The template `reports/_bar_chart.svg.html` draws what these functions lay out, so that every
label reaches the SVG through Django's auto-escaping and the numbers are preformatted strings
(the template never localizes a coordinate into "12,5").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CHART_WIDTH = 640
LABEL_WIDTH = 210
VALUE_WIDTH = 60
BAR_HEIGHT = 16
ROW_GAP = 8
TOP_PADDING = 4


@dataclass(frozen=True)
class ChartRow:
    """One input row: a label, a value in [0, maximum], the printed value, a fill colour."""

    label: str
    value: float
    value_label: str
    colour: str


@dataclass(frozen=True)
class Bar:
    label: str
    value_label: str
    colour: str
    y: str
    width: str
    text_y: str


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    label_width: int
    track_width: int
    bar_height: int
    value_x: int
    bars: tuple[Bar, ...]


def _number(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def bar_chart(rows: Sequence[ChartRow], *, maximum: float) -> BarChart:
    """Horizontal bars, one per row, scaled so that `maximum` fills the track."""
    track = CHART_WIDTH - LABEL_WIDTH - VALUE_WIDTH
    bars = []
    for index, row in enumerate(rows):
        y = TOP_PADDING + index * (BAR_HEIGHT + ROW_GAP)
        share = 0.0 if maximum <= 0 else max(0.0, min(1.0, row.value / maximum))
        bars.append(
            Bar(
                label=row.label,
                value_label=row.value_label,
                colour=row.colour,
                y=_number(y),
                width=_number(track * share),
                text_y=_number(y + BAR_HEIGHT - 4),
            )
        )
    height = TOP_PADDING * 2 + len(rows) * (BAR_HEIGHT + ROW_GAP) - ROW_GAP
    return BarChart(
        width=CHART_WIDTH,
        height=max(height, BAR_HEIGHT),
        label_width=LABEL_WIDTH,
        track_width=track,
        bar_height=BAR_HEIGHT,
        value_x=LABEL_WIDTH + track + 8,
        bars=tuple(bars),
    )
