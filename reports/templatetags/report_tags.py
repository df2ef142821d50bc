"""Template helpers of the reports: whether a report is still current."""

from __future__ import annotations

from django import template

from ..models import Report
from ..selectors import ReportCurrency, report_currency

register = template.Library()


@register.filter
def currency(report: Report) -> ReportCurrency:
    """`{% include "reports/_currency.html" with currency=report|currency %}` — superseded by a
    newer run, or made before the decision (one query: the decisions since)."""
    return report_currency(report=report)
