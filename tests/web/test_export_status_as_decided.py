"""The portfolio export's status is the one the dashboard's badge and the report show: an
approval with conditions reads "Approved with conditions", not "Approved"."""

import csv
import io

import pytest
from django.urls import reverse

from assessments.factories import critical_rule_ids

pytestmark = pytest.mark.django_db


def export_statuses(client) -> list[str]:
    response = client.get(reverse("spreadsheets:portfolio_export", args=["csv"]))
    body = b"".join(response.streaming_content).decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(body)))
    return [row[rows[0].index("Status")] for row in rows[1:]]


def test_an_approval_with_conditions_exports_as_the_dashboard_shows_it(client, personas, scored):
    client.force_login(personas.rex)
    decided = client.post(
        reverse("assessments:review", args=[scored.pk]),
        {
            "decision": "approved_with_conditions",
            "conditions": "Cap prompts at 200,000 tokens.",
            "acknowledged_findings": critical_rule_ids(scored),
        },
    )
    assert decided.status_code == 302
    dashboard = client.get(reverse("assessments:dashboard")).content.decode()
    assert "Approved with conditions" in dashboard

    assert export_statuses(client) == ["Approved with conditions"]
