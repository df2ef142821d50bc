"""A rescore batch's impact as CSV: one writer for the API's `changes.csv` and the web page's
download."""

from __future__ import annotations

import csv
import io

from django.http import HttpResponse

from spreadsheets.cells import csv_value
from spreadsheets.exports import attachment

from .selectors import Change

COLUMNS = [
    "assessment",
    "vendor",
    "before_ruleset",
    "before_risk_score",
    "before_risk_tier",
    "after_ruleset",
    "after_risk_score",
    "after_risk_tier",
    "added",
    "removed",
]


def changes_csv(changes: list[Change]) -> str:
    """The changes, worse first, as the API describes them; rule ids joined by spaces."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for change in changes:
        # Vendor names are typed outside the organization's control: formula-safe cells.
        writer.writerow(
            csv_value(value)
            for value in (
                change.assessment_id,
                change.vendor,
                change.before.ruleset,
                change.before.risk_score,
                change.before.risk_tier,
                change.after.ruleset,
                change.after.risk_score,
                change.after.risk_tier,
                " ".join(change.added),
                " ".join(change.removed),
            )
        )
    return out.getvalue()


def changes_filename(batch_id: int) -> str:
    return f"rescore-batch-{batch_id}-changes.csv"


def csv_download(batch_id: int, text: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    return attachment(response, changes_filename(batch_id))
