"""Exports re-read by an independent reader (python-calamine, not the library that wrote them)
show what the web pages show, in the reader's language and the organization's time zone, and
no text becomes a formula."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import zipfile

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from python_calamine import CalamineWorkbook

from accounts.services import api_token_create
from assessments import factories
from assessments.models import Channel, RiskDecision
from assessments.services.reviews import risk_decision_record
from tests.personas import member_of

pytestmark = pytest.mark.django_db
HOSTILE = '=HYPERLINK("http://x","y")'
ZONE = "America/New_York"  # far from the server's Hong Kong clock


@pytest.fixture
def world(catalog, personas, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    personas.acme.time_zone = ZONE
    personas.acme.save(update_fields=["time_zone"])
    ava = member_of(personas.ava)
    scored = factories.incident_assessment(
        member=ava, vendor=factories.incident_vendor(member=ava, name=HOSTILE)
    )
    risk_decision_record(
        assessment=scored,
        rule_id="KV-POOL-BELOW-CONTEXT",
        kind="acceptance",
        justification="-capped at 200,000 tokens",
        owner="@procurement",
        expires_on=scored.latest_run.as_of + dt.timedelta(days=365),
        member=ava,
        channel=Channel.WEB,
    )
    draft = factories.incident_assessment(
        member=ava,
        vendor=factories.incident_vendor(member=ava, name="Draft Vendor Ltd"),
        submit=False,
    )
    scored.refresh_from_db()
    return {"scored": scored, "draft": draft}


def member(personas, language: str = "en") -> Client:
    client = Client()
    client.force_login(personas.ava)
    client.cookies["django_language"] = language
    return client


def csv_rows(response) -> list[list[str]]:
    body = b"".join(response.streaming_content).decode("utf-8")
    assert body.startswith("\ufeff")  # Excel reads it as UTF-8
    return list(csv.reader(io.StringIO(body[1:])))


def xlsx_rows(response) -> list[list]:
    content = b"".join(response.streaming_content)
    book = CalamineWorkbook.from_filelike(io.BytesIO(content))
    return book.get_sheet_by_index(0).to_python()


def as_dicts(rows: list[list]) -> list[dict]:
    return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]


def test_the_findings_export_shows_what_the_findings_page_shows(world, personas):
    client = member(personas)
    scored = world["scored"]
    page = client.get(reverse("assessments:findings", args=[scored.pk])).context
    for file_format, read in (("csv", csv_rows), ("xlsx", xlsx_rows)):
        response = client.get(
            reverse("spreadsheets:findings_export", args=[scored.pk, file_format])
        )
        assert response.status_code == 200
        rows = as_dicts(read(response))
        rules = {row["Rule"] for row in rows}
        assert len(rules) == page["finding_count"]
        points = {row["Rule"]: int(float(row["Points"])) for row in rows}
        assert sum(points.values()) == page["explanation"].total
        shown = {card.rule_id: card.finding for card in page["findings"]}
        for row in rows:
            assert row["Severity"] == shown[row["Rule"]].severity_label
            assert row["Finding"] == shown[row["Rule"]].title
        decided = [row for row in rows if row["Decision"]]
        assert len(decided) == 1
        decision = RiskDecision.objects.get(assessment=scored)
        assert decided[0]["Decision"] == "Risk acceptance"
        assert decided[0]["Owner"] in ("@procurement", "'@procurement")
        expires = decided[0]["Expiry date"]
        assert (expires if isinstance(expires, str) else expires.isoformat()) == (
            decision.expires_on.isoformat()
        )
        local = timezone.localtime(decision.created_at, __import__("zoneinfo").ZoneInfo(ZONE))
        recorded = decided[0]["Recorded at"]
        if file_format == "csv":
            assert recorded == local.strftime("%Y-%m-%d %H:%M")
        else:
            assert recorded == local.replace(tzinfo=None, second=0, microsecond=0)


def test_the_portfolio_export_shows_the_dashboards_figures(world, personas):
    client = member(personas)
    scored = world["scored"]
    dashboard = client.get(reverse("assessments:dashboard")).content.decode()
    for file_format, read in (("csv", csv_rows), ("xlsx", xlsx_rows)):
        rows = as_dicts(
            read(client.get(reverse("spreadsheets:portfolio_export", args=[file_format])))
        )
        assert len(rows) == 2
        row = next(r for r in rows if int(float(r["Assessment"])) == scored.pk)
        assert int(float(row["Risk score"])) == scored.risk_score
        assert f"{scored.risk_score}/100" in dashboard or str(scored.risk_score) in dashboard
        assert row["Risk tier"] == scored.get_risk_tier_display()
        assert row["Status"] == scored.get_status_display()
        assert row["Ruleset"] == scored.latest_run.ruleset.key
        draft = next(r for r in rows if r is not row)
        assert draft["Risk score"] in ("", None)


def test_a_vendor_named_like_a_formula_exports_as_text(world, personas):
    client = member(personas)
    scored = world["scored"]
    for name, args in (
        ("spreadsheets:findings_export", [scored.pk]),
        ("spreadsheets:portfolio_export", []),
    ):
        rows = csv_rows(client.get(reverse(name, args=[*args, "csv"])))
        vendors = {row[0] for row in rows[1:]}
        assert "'" + HOSTILE in vendors and HOSTILE not in vendors
        response = client.get(reverse(name, args=[*args, "xlsx"]))
        content = b"".join(response.streaming_content)
        assert HOSTILE in {row[0] for row in xlsx_rows_of(content)[1:]}
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            sheet = archive.read("xl/worksheets/sheet1.xml").decode()
        assert "<f>" not in sheet and "<f " not in sheet  # no formula anywhere
    findings = as_dicts(
        csv_rows(client.get(reverse("spreadsheets:findings_export", args=[scored.pk, "csv"])))
    )
    decided = next(row for row in findings if row["Decision"])
    assert decided["Justification"] == "'-capped at 200,000 tokens"
    assert decided["Owner"] == "'@procurement"


def xlsx_rows_of(content: bytes) -> list[list]:
    return CalamineWorkbook.from_filelike(io.BytesIO(content)).get_sheet_by_index(0).to_python()


def test_exports_read_in_the_readers_language(world, personas):
    client = member(personas, "zh-hant")
    scored = world["scored"]
    rows = csv_rows(client.get(reverse("spreadsheets:findings_export", args=[scored.pk, "csv"])))
    assert "供應商" in rows[0]
    decided = next(row for row in as_dicts(rows) if row[rows[0][13]])
    assert decided[rows[0][7]] == "嚴重"  # the severity, as the glossary names it
    portfolio = csv_rows(client.get(reverse("spreadsheets:portfolio_export", args=["csv"])))
    assert portfolio[0][0] == "供應商"


def test_the_api_exports_within_the_tokens_organization_only(world, personas):
    _token, key = api_token_create(user=personas.alice, organization=personas.acme, name="x")
    api = Client(HTTP_AUTHORIZATION=f"Token {key}")
    scored = world["scored"]
    response = api.get(
        reverse("api:findings-export", args=[scored.pk, "xlsx"]), {"language": "zh-hant"}
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.openxmlformats")
    assert xlsx_rows_of(b"".join(response.streaming_content))[0][0] == "供應商"
    portfolio = api.get(reverse("api:portfolio-export", args=["csv"]))
    assert len(csv_rows(portfolio)) == 3
    assert (
        api.get(reverse("api:portfolio-export", args=["csv"]), {"language": "fr"}).status_code
        == 400
    )

    _token, other_key = api_token_create(user=personas.oscar, organization=personas.other, name="o")
    outsider = Client(HTTP_AUTHORIZATION=f"Token {other_key}")
    refused = outsider.get(reverse("api:findings-export", args=[scored.pk, "csv"]))
    assert refused.status_code == 404
    assert json.loads(refused.content) == {
        "errors": {"not_found": [refused.json()["errors"]["not_found"][0]]}
    }
    assert len(csv_rows(outsider.get(reverse("api:portfolio-export", args=["csv"])))) == 1
    web = Client()
    web.force_login(personas.oscar)
    assert (
        web.get(reverse("spreadsheets:findings_export", args=[scored.pk, "csv"])).status_code == 404
    )


def test_the_schema_documents_the_exports(client):
    schema = client.get(reverse("api:schema"), {"format": "json"}).json()
    paths = schema["paths"]
    findings = paths["/api/v1/assessments/{assessment_id}/findings.{file_format}"]["get"]
    assert set(findings["responses"]["200"]["content"]) == {
        "text/csv",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    }
    assert "/api/v1/portfolio.{file_format}" in paths


def test_the_portfolio_is_streamed_a_batch_of_rows_at_a_time(
    world, personas, django_assert_max_num_queries
):
    client = member(personas)
    response = client.get(reverse("spreadsheets:portfolio_export", args=["csv"]))
    assert response.streaming
    with django_assert_max_num_queries(3):
        rows = csv_rows(response)
    assert len(rows) == 3
