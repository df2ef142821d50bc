"""Geometry of the bar charts — the one layout of the findings page, the comparison page and the
PDF: pure arithmetic, no drawing.

`templates/charts/_bar_chart.svg.html` draws what `bar_chart` lays out, so every label reaches
the SVG through Django's auto-escaping, and the numbers are preformatted strings (a template
never localizes a coordinate into "12,5"). A chart is groups of horizontal bars: one group per
section (or severity), one bar per compared run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from questionnaires.spec import QuestionnaireSpec
from scoring.spec import SEVERITIES

from .formats import severity_label

CHART_WIDTH = 640
VALUE_WIDTH = 112
# Room for "100 % covered — 12 of 12 rules fired" (and the same in Chinese) after the bars.
COVERAGE_VALUE_WIDTH = 224
BAR_HEIGHT = 16
BAR_GAP = 4
GROUP_GAP = 10
TOP = 4
AXIS_HEIGHT = 16
SERIES_LETTERS = "ABCDE"  # one per compared assessment (at most five)
SEVERITY_COLOURS = {
    "critical": "#8F1D21",
    "high": "#C2410C",
    "medium": "#A16207",
    "low": "#3F6212",
}
DEFAULT_COLOUR = "#0B5CAD"


@dataclass(frozen=True)
class ChartValue:
    """One bar's input: a value in [0, maximum], the printed value, an optional detail."""

    value: float
    label: str
    detail: str = ""
    colour: str = DEFAULT_COLOUR


@dataclass(frozen=True)
class Bar:
    series: int
    letter: str
    y: str
    width: str
    text_y: str
    value_label: str
    detail: str
    colour: str


@dataclass(frozen=True)
class BarGroup:
    code: str
    label: str  # printed beside the bars
    title: str  # the label's long form, as a tooltip and in the table
    label_y: str
    bars: tuple[Bar, ...]


@dataclass(frozen=True)
class Gridline:
    x: str
    percent: int


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    label_width: int
    track_width: int
    bar_height: int
    value_x: int
    groups: tuple[BarGroup, ...]
    series: tuple[str, ...]  # the compared runs' names (empty for a single series)
    gridlines: tuple[Gridline, ...]

    @property
    def summary(self) -> str:
        """Every value in words ("CTX: 40 % covered — 3 of 5 rules fired; …"): the chart's
        alternative text where a reader cannot see it (the PDF's figure /Alt)."""
        return "; ".join(
            f"{group.label}: "
            + ", ".join(
                " ".join(part for part in (bar.letter, bar.value_label, bar.detail) if part)
                for bar in group.bars
            )
            for group in self.groups
        )

    @property
    def legend(self) -> list[dict[str, object]]:
        return [
            {"index": index, "letter": SERIES_LETTERS[index], "name": name}
            for index, name in enumerate(self.series)
        ]


def _number(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def bar_chart(
    groups: Sequence[tuple[str, str, str, Sequence[ChartValue]]],
    *,
    maximum: float,
    label_width: int,
    series: Sequence[str] = (),
    percent_axis: bool = False,
    value_width: int = VALUE_WIDTH,
) -> BarChart:
    """Groups `(code, label, title, values)` of horizontal bars, scaled so that `maximum` fills
    the track; with several `series`, each bar is lettered A, B, C…"""
    track = CHART_WIDTH - label_width - value_width
    laid_out = []
    y = TOP
    for code, label, title, values in groups:
        top = y
        bars = []
        for index, item in enumerate(values):
            share = 0.0 if maximum <= 0 else max(0.0, min(1.0, item.value / maximum))
            bars.append(
                Bar(
                    series=index,
                    letter=SERIES_LETTERS[index] if len(series) > 1 else "",
                    y=_number(y),
                    width=_number(track * share),
                    text_y=_number(y + BAR_HEIGHT - 4),
                    value_label=item.label,
                    detail=item.detail,
                    colour=item.colour,
                )
            )
            y += BAR_HEIGHT + BAR_GAP
        laid_out.append(
            BarGroup(
                code=code,
                label=label,
                title=title,
                label_y=_number(top + (y - top - BAR_GAP) // 2 + 5),
                bars=tuple(bars),
            )
        )
        y += GROUP_GAP
    height = y - GROUP_GAP + TOP + (AXIS_HEIGHT if percent_axis else 0)
    gridlines = (
        tuple(Gridline(x=_number(label_width + track * p / 100), percent=p) for p in (0, 50, 100))
        if percent_axis
        else ()
    )
    return BarChart(
        width=CHART_WIDTH,
        height=max(height, BAR_HEIGHT + 2 * TOP),
        label_width=label_width,
        track_width=track,
        bar_height=BAR_HEIGHT,
        value_x=label_width + track + 6,
        groups=tuple(laid_out),
        series=tuple(series) if len(series) > 1 else (),
        gridlines=gridlines,
    )


def coverage_chart(
    spec: QuestionnaireSpec,
    runs_sections: Sequence[Mapping[str, Mapping[str, object]]],
    language: str,
    *,
    names: Sequence[str] = (),
    colour: str = DEFAULT_COLOUR,
    long_labels: bool = False,
) -> BarChart:
    """Per section, one bar per run: the share of the section's rules that did not fire.

    `runs_sections` are the runs' `ScoringRun.sections`; the page prints section codes beside
    the bars (the titles as tooltips), the PDF prints code and title (`long_labels`)."""
    groups = []
    for section in spec.sections:
        if not any(section.code in (sections or {}) for sections in runs_sections):
            continue
        values = []
        for sections in runs_sections:
            data = (sections or {}).get(section.code) or {}
            coverage = float(data.get("coverage", 1.0))  # type: ignore[arg-type]
            label, detail = coverage_text(
                coverage,
                int(data.get("fired", 0)),  # type: ignore[call-overload]
                int(data.get("rules", 0)),  # type: ignore[call-overload]
                language,
            )
            values.append(ChartValue(value=coverage, label=label, detail=detail, colour=colour))
        title = section.title.get(language)
        label = f"{section.code} {title}" if long_labels else section.code
        groups.append((section.code, label, title, values))
    return bar_chart(
        groups,
        maximum=1.0,
        label_width=210 if long_labels else 64,
        series=names,
        percent_axis=not long_labels,
        value_width=COVERAGE_VALUE_WIDTH,
    )


def coverage_text(coverage: float, fired: int, rules: int, language: str) -> tuple[str, str]:
    """A section's coverage as words: ("40 % covered", "— 3 of 5 rules fired"). Fired rules are
    findings, so they are never shown in brackets, where they could read as rules passed."""
    with translation.override(language):
        covered = _("%(percent)d %% covered") % {"percent": round(coverage * 100)}
        detail = ngettext(
            "— %(fired)d of %(rules)d rule fired",
            "— %(fired)d of %(rules)d rules fired",
            rules,
        ) % {"fired": fired, "rules": rules}
    return covered, detail


def severity_chart(counts: Mapping[str, int], language: str) -> BarChart:
    """Findings per severity, most severe first."""
    rows = [
        (
            severity,
            severity_label(severity, language),
            severity_label(severity, language),
            [
                ChartValue(
                    counts.get(severity, 0),
                    str(counts.get(severity, 0)),
                    "",
                    SEVERITY_COLOURS[severity],
                )
            ],
        )
        for severity in SEVERITIES
    ]
    return bar_chart(rows, maximum=max([*counts.values(), 1]), label_width=210)
