"""Report currency: the reports list, a report's page and the verify page say when a report was
made before the decision ("made before sign-off") or from a run that is no longer the latest
("superseded by run N"); status badges show the decision as made."""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.models import Membership
from accounts.tenancy import OrgContext
from assessments.factories import critical_rule_ids
from assessments.models import Assessment, Channel
from assessments.services.reviews import review_record
from portfolio.services import rescore_batch_create
from reports.services import report_file
from tests.personas import member_of

from .test_views import client_for, pdf_upload, reports_url

pytestmark = pytest.mark.urls("config.urls")


def pages(report, user):
    client = client_for(user)
    return {
        "list": client.get(reports_url(report.assessment)).content.decode(),
        "report": client.get(reverse("reports:status", args=[report.pk])).content.decode(),
        "verify": client.post(
            reverse("reports:verify"), {"file": pdf_upload(report_file(report=report))}
        ).content.decode(),
        "dashboard": client.get(reverse("assessments:dashboard")).content.decode(),
    }


def test_a_report_is_current_then_made_before_sign_off_then_superseded(
    ready_report, personas, inline_tasks
):
    before = pages(ready_report, personas.vic)
    assert all("currency-current" in before[name] for name in ("list", "report", "verify"))
    assert "made before sign-off" not in before["list"] + before["report"] + before["verify"]

    review_record(
        assessment=ready_report.assessment,
        member=member_of(personas.rex),
        decision="approved_with_conditions",
        conditions="Quarterly probe.",
        acknowledged_findings=critical_rule_ids(ready_report.assessment),
        channel=Channel.WEB,
    )
    decided = pages(ready_report, personas.vic)
    for name in ("list", "report", "verify"):
        assert "made before sign-off (Approved with conditions" in decided[name], name
    assert "It was made before sign-off" in decided["verify"]
    assert "This is an unaltered AVIA report." in decided["verify"]  # still unaltered
    assert "Approved with conditions" in decided["dashboard"]  # the badge, as decided

    member = OrgContext(
        user=personas.ava,
        organization=personas.acme,
        membership=Membership.objects.get(user=personas.ava, organization=personas.acme),
    )
    with inline_tasks():
        rescore_batch_create(
            member=member,
            ruleset_key=ready_report.run.ruleset.key,
            assessment_ids=[ready_report.assessment_id],
            channel=Channel.WEB,
        )
    newer = Assessment.objects.get(pk=ready_report.assessment_id).latest_run_id
    assert newer != ready_report.run_id
    superseded = pages(ready_report, personas.vic)
    for name in ("list", "report", "verify"):
        assert f"superseded by run {newer}" in superseded[name], name
        assert "currency-current" not in superseded[name]
    assert "It is no longer current" in superseded["verify"]
