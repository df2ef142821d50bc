""" "Overdue" is read on the organization's clock everywhere: the dashboard, the assessment's
page, the portfolio export and the API's `is_overdue` must agree in the hours when the
organization's date and the server's (Hong Kong) date differ."""

import datetime as dt

import pytest
from django.urls import reverse

from assessments.models import Assessment
from tests.web.conftest import make_draft

pytestmark = pytest.mark.django_db

ZONE = "America/New_York"
# 22:00 on 3 December in New York, already 11:00 on 4 December in Hong Kong (the server).
EVENING_IN_NEW_YORK = dt.datetime(2026, 12, 4, 3, 0, tzinfo=dt.UTC)
DUE = dt.date(2026, 12, 3)  # due today in New York: not overdue there yet


def test_the_api_says_overdue_on_the_organizations_clock(
    catalog, personas, client, client_as, time_machine
):
    personas.acme.time_zone = ZONE
    personas.acme.save(update_fields=["time_zone"])
    time_machine.move_to(dt.datetime(2026, 11, 1, tzinfo=dt.UTC), tick=False)
    assessment = make_draft(personas, due_date=DUE)
    time_machine.move_to(EVENING_IN_NEW_YORK, tick=False)

    client.force_login(personas.ava)
    dashboard = client.get(reverse("assessments:dashboard"))
    assert dashboard.context["overdue_count"] == 0
    detail = client.get(reverse("assessments:detail", args=[assessment.pk])).content.decode()
    assert "overdue-badge" not in detail
    export = client.get(reverse("spreadsheets:portfolio_export", args=["csv"]))
    body = b"".join(export.streaming_content).decode("utf-8-sig").splitlines()
    assert body[1].split(",")[body[0].split(",").index("Overdue")] == "No"

    api = client_as(personas.ava)
    listed = api.get("/api/v1/assessments/").json()["results"]
    one = api.get(f"/api/v1/assessments/{assessment.pk}/").json()
    assert Assessment.objects.get().due_date == DUE
    assert [row["is_overdue"] for row in listed] == [False]
    assert one["is_overdue"] is False
