"""Portfolio reports: one PDF across an organization's vendors, read back as a reader gets it.

The figures asserted are computed from what each test creates, through the selectors the report
reads (`portfolio_standing`) or from the scoring runs' own findings, never copied constants.
Rendering is real (WeasyPrint), through request → eager task → stored file → SHA-256.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Organization, OrganizationKind, User
from accounts.roles import Role
from accounts.services import membership_add, organization_create
from assessments import factories
from assessments.models import Assessment, Channel, Vendor
from assessments.presenters.formats import review_decision_label, severity_label
from assessments.selectors import portfolio_standing
from assessments.services.clients import client_engagement_end, client_open
from assessments.services.reviews import review_record, risk_decision_record
from assessments.services.vendors import vendor_create
from core.errors import ServiceError
from reports.labels import LABELS
from reports.models import PortfolioReport
from reports.services import portfolio_report_request, report_file, report_verify
from reports.sweeper import requeue_stuck
from tests.personas import member_of

from .conftest import pdf_text

pytestmark = pytest.mark.django_db


def squashed(text: str) -> str:
    return "".join(text.split())


def request_report(
    personas, language: str, inline_tasks, user=None, kind: str = "organization"
) -> PortfolioReport:
    with inline_tasks():
        report = portfolio_report_request(
            member=member_of(user or personas.vic),
            language=language,
            channel=Channel.WEB,
            kind=kind,
        )
    report.refresh_from_db()
    assert report.status == "ready", report.error
    return report


def section(text: str, start: str, end: str) -> str:
    """The text between two headings (squashed)."""
    whole = squashed(text)
    begin = whole.index(squashed(start)) + len(squashed(start))
    return whole[begin : whole.index(squashed(end), begin)]


def findings_of(assessment: Assessment) -> set[str]:
    assessment.refresh_from_db()
    return set(assessment.latest_run.findings.values_list("rule_id", flat=True))


def test_a_portfolio_report_counts_the_portfolio_and_then_says_what_changed(
    scored, personas, inline_tasks
):
    acme = personas.acme
    today = acme.local_date()
    # The scored vendor is signed off with conditions, one critical finding accepted for 10
    # days, and its next assessment date has passed.
    critical = factories.critical_rule_ids(scored)
    review_record(
        assessment=scored,
        member=member_of(personas.rex),
        decision="approved_with_conditions",
        conditions="Short prompts only.",
        acknowledged_findings=critical,
        channel=Channel.WEB,
    )
    risk_decision_record(
        assessment=scored,
        rule_id=critical[0],
        kind="acceptance",
        justification="Dedicated instance until the upgrade.",
        owner="CISO",
        expires_on=today + dt.timedelta(days=10),
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    Assessment.objects.filter(pk=scored.pk).update(reassess_by=today - dt.timedelta(days=3))
    for name in ("Quiet Vendor Ltd", "Gone Vendor Ltd"):
        vendor_create(organization=acme, actor=personas.ava, channel=Channel.WEB, name=name)

    first = request_report(personas, "en", inline_tasks)
    text = "\n".join(pdf_text(report_file(report=first)))
    flat = squashed(text)
    labels = LABELS["en"]
    standing = portfolio_standing(
        organization=acme, today=today, horizon_days=settings.DIGEST_HORIZON_DAYS
    )

    assert first.number in text
    assert acme.name in text
    tiers = section(text, labels["tier_distribution_note"], labels["open_findings"])
    assert tiers.endswith(
        squashed(
            "".join(
                f"{severity_label(tier, 'en') if tier else labels['not_scored']}{count}"
                for tier, count in standing.tier_counts().items()
            )
        )
    )
    severities = section(text, labels["open_findings_note"], labels["current_assessment"])
    assert (
        squashed(
            "".join(
                f"{severity_label(severity, 'en')}{count}"
                for severity, count in standing.severity_counts().items()
            )
        )
        in severities
    )
    assert standing.severity_counts()["critical"] == len(critical)
    assert squashed(review_decision_label("approved_with_conditions", "en")) in flat
    decisions = section(text, labels["risk_decisions"], labels["deadlines_heading"])
    assert critical[0] in decisions and squashed(labels["expiring_soon"]) in decisions
    overdue = section(text, labels["overdue_heading"], labels["due_on"])
    assert f"({len(standing.deadlines.overdue)})" in overdue
    assert len(standing.deadlines.overdue) == 1
    assert squashed(labels["first_report"]) in flat
    assert first.previous is None and first.figures["vendors"]

    # Since then: one vendor gone, one new, and the scored vendor assessed again, remediated.
    Vendor.objects.filter(organization=acme, name="Gone Vendor Ltd").delete()
    vendor_create(organization=acme, actor=personas.ava, channel=Channel.WEB, name="New Vendor Ltd")
    before = findings_of(scored)
    again = factories.incident_assessment(
        member=member_of(personas.ava),
        vendor=scored.vendor,
        answers_from=factories.REMEDIATED,
        evidence=factories.logs(factories.REMEDIATED_LOG),
    )
    after = findings_of(again)
    assert again.risk_tier != scored.risk_tier and before - after

    second = request_report(personas, "zh-hant", inline_tasks)
    assert second.previous_id == first.pk
    text = "\n".join(pdf_text(report_file(report=second)))
    zh = LABELS["zh-hant"]
    changes = section(text, zh["changes_heading"], zh["decisions_heading"])

    assert squashed(zh["changes_intro"].split("{")[0]) in changes
    assert first.number in changes
    tiers = section(text, zh["tiers_changed"], zh["vendors_added"])
    assert (
        squashed(
            f"{scored.vendor.name}{zh['colon']}{severity_label(scored.risk_tier, 'zh-hant')}→"
            f"{severity_label(again.risk_tier, 'zh-hant')}"
        )
        in tiers
    )
    assert "NewVendorLtd" in section(text, zh["vendors_added"], zh["vendors_removed"])
    assert "GoneVendorLtd" in section(text, zh["vendors_removed"], zh["findings_opened"])
    opened = section(text, zh["findings_opened"], zh["findings_closed"])
    closed = section(text, zh["findings_closed"], zh["decisions_heading"])
    assert {rule for rule in before | after if rule in closed} == before - after
    assert {rule for rule in before | after if rule in opened} == after - before
    assert "Executive summary" not in text and zh["executive_summary"] in text


def test_other_organizations_cannot_see_or_verify_a_portfolio_report(
    scored, personas, inline_tasks
):
    report = request_report(personas, "en", inline_tasks, user=personas.vic)
    pdf = report_file(report=report)

    def upload() -> SimpleUploadedFile:
        return SimpleUploadedFile("p.pdf", pdf, content_type="application/pdf")

    assert report_verify(organization=personas.acme, uploaded_file=upload()).portfolio_report == (
        report
    )
    assert not report_verify(organization=personas.other, uploaded_file=upload()).matched

    outsider = Client()
    outsider.force_login(personas.oscar)
    for name in ("reports:portfolio_report_status", "reports:portfolio_report_download"):
        assert outsider.get(reverse(name, args=[report.pk])).status_code == 404, name
    listed = outsider.get(reverse("reports:portfolio_reports"))
    assert listed.status_code == 200 and report.number not in listed.content.decode()

    viewer = Client()
    viewer.force_login(personas.vic)
    download = viewer.get(reverse("reports:portfolio_report_download", args=[report.pk]))
    assert download.status_code == 200 and download.content == pdf
    verified = viewer.post(reverse("reports:verify"), {"file": upload()})
    assert report.number in verified.content.decode()

    # The API: the same report, the same bytes; another organization's is not found.
    detail = viewer.get(reverse("api:portfolio-report-detail", args=[report.pk])).json()
    assert detail["sha256"] == report.sha256 and detail["number"] == report.number
    assert viewer.get(detail["download"]).content == pdf
    assert outsider.get(reverse("api:portfolio-report-detail", args=[report.pk])).status_code == 404
    refused = viewer.post(
        reverse("api:portfolio-reports"),
        {"language": "en", "kind": "consultancy"},
        content_type="application/json",
    )
    assert refused.status_code == 403 and "kind" in refused.json()["errors"]


def test_a_viewer_asks_for_one_from_the_dashboard_and_follows_its_status(
    catalog, personas, inline_tasks
):
    viewer = Client()
    viewer.force_login(personas.vic)
    dashboard = viewer.get(reverse("assessments:dashboard")).content.decode()
    assert reverse("reports:portfolio_reports") in dashboard

    with inline_tasks():
        response = viewer.post(reverse("reports:portfolio_reports"), {"language": "zh-hant"})
    report = PortfolioReport.objects.get(organization=personas.acme)
    assert response.status_code == 302
    assert response["Location"] == reverse("reports:portfolio_report_status", args=[report.pk])
    status = viewer.get(response["Location"]).content.decode()
    assert report.sha256 and report.sha256 in status
    assert 'hx-trigger="every 3s"' not in status  # ready: no more polling
    assert viewer.post(reverse("reports:portfolio_reports"), {"language": "fr"}).status_code == 400


def test_a_portfolio_report_whose_message_was_lost_is_rendered_by_the_sweeper(
    catalog, personas, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    # Requested without running what it queued on commit: as if the broker lost the message.
    report = portfolio_report_request(
        member=member_of(personas.vic), language="en", channel=Channel.WEB
    )
    later = timezone.now() + dt.timedelta(seconds=settings.SWEEPER_QUEUED_AFTER + 1)

    assert requeue_stuck(now=later)["portfolio reports"] == 1
    report.refresh_from_db()
    assert report.status == "ready" and report.attempts == 1
    assert requeue_stuck(now=later + dt.timedelta(hours=1))["portfolio reports"] == 0


# -- a consultancy's overview across its clients ---------------------------------------------


@dataclass(frozen=True)
class Practice:
    firm: Organization
    carol: User  # the consultancy's owner, who opened the clients
    viola: User  # a viewer of the consultancy, member of no client
    harbour: Organization  # active, one scored vendor
    northwind: Organization  # active, one vendor never scored
    former: Organization  # its own owner ended the engagement
    scored: Assessment


@pytest.fixture
def practice(catalog, personas) -> Practice:
    """Kowloon Risk Advisory and its clients, opened and ended through the services."""
    firm = organization_create(
        name="Kowloon Risk Advisory",
        owner_email="carol@kra.test",
        kind=OrganizationKind.CONSULTANCY,
    )
    carol = User.objects.get(email="carol@kra.test")
    viola = membership_add(
        organization=firm, email="viola@kra.test", role=Role.VIEWER, actor=carol
    ).user
    in_firm = member_of(carol, firm)
    harbour, northwind, former = (
        client_open(member=in_firm, name=name, channel=Channel.WEB)
        for name in ("Harbour Bank", "Northwind Trading", "Former Client Ltd")
    )
    scored = factories.incident_assessment(member=member_of(carol, harbour))
    vendor_create(organization=northwind, actor=carol, channel=Channel.WEB, name="Unscored Ltd")
    fay = membership_add(
        organization=former, email="fay@former.test", role=Role.OWNER, actor=carol
    ).user
    client_engagement_end(member=member_of(fay, former), channel=Channel.WEB)
    return Practice(firm, carol, viola, harbour, northwind, former, scored)


@pytest.mark.parametrize("language", ["en", "zh-hant"])
def test_the_overview_shows_each_active_clients_figures_and_nothing_of_their_vendors(
    practice, personas, inline_tasks, language
):
    report = request_report(
        personas, language, inline_tasks, user=practice.viola, kind="consultancy"
    )
    assert report.kind == "consultancy"
    text = "\n".join(pdf_text(report_file(report=report)))
    flat = squashed(text)

    for client in (practice.harbour, practice.northwind):
        standing = portfolio_standing(
            organization=client,
            today=client.local_date(),
            horizon_days=settings.DIGEST_HORIZON_DAYS,
        )
        tiers = f"{client.name}{len(standing.vendors)}" + "".join(
            str(n) for n in standing.tier_counts().values()
        )
        deadlines = standing.deadlines
        findings = (
            client.name
            + "".join(str(n) for n in standing.severity_counts().values())
            + f"{len(standing.open_findings)}{len(deadlines.overdue)}"
            + f"{len(deadlines.due_soon) + len(deadlines.reassessments_due)}"
        )
        assert squashed(tiers) in flat and squashed(findings) in flat, client.name
    assert squashed(practice.former.name) not in flat  # its engagement has ended
    assert squashed(personas.acme.name) not in flat  # never a client
    # Figures only: no vendor, no rule, no evidence file of any client.
    assert squashed(practice.scored.vendor.name) not in flat and "UnscoredLtd" not in flat
    fired = findings_of(practice.scored)
    assert fired and not [rule for rule in fired if rule in flat]
    assert ".log" not in text


def test_only_a_consultancys_members_reach_its_overview(practice, personas, inline_tasks):
    viewer = Client()
    viewer.force_login(practice.viola)
    url = reverse("reports:client_overview")
    page = viewer.get(url).content.decode()
    assert practice.harbour.name in page and practice.northwind.name in page
    assert practice.former.name not in page and practice.scored.vendor.name not in page
    with inline_tasks():
        response = viewer.post(url, {"language": "en"})
    report = PortfolioReport.objects.get(organization=practice.firm)
    assert response.status_code == 302 and report.kind == "consultancy"

    # Acme's members (not a consultancy, nor this one's) have no such page, nor its report.
    acme = Client()
    acme.force_login(personas.alice)
    assert acme.get(url).status_code == 404
    assert acme.get(reverse("reports:portfolio_report_status", args=[report.pk])).status_code == 404
    with pytest.raises(ServiceError):
        portfolio_report_request(
            member=member_of(personas.alice), language="en", channel=Channel.WEB, kind="consultancy"
        )
