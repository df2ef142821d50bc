"""The demo shows an over-claiming vendor: a v3 assessment whose stored probe result says the
endpoint serves half the declared context, so PROBE-CONTEXT-OVERCLAIMED is on its findings page.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from accounts.models import User
from assessments.models import Assessment
from probes.management.commands.load_demo import OVERCLAIMING_VENDOR, Command

pytestmark = pytest.mark.urls("tests.web.urls_with_reports")


def load_demo() -> str:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    return out.getvalue()


def overclaiming() -> Assessment:
    return Assessment.objects.select_related("questionnaire", "latest_run__ruleset").get(
        vendor__name=OVERCLAIMING_VENDOR
    )


def test_the_demo_has_a_v3_vendor_whose_probe_found_an_overclaimed_context(catalog, client):
    output = load_demo()

    assessment = overclaiming()
    assert "overclaimed-v3" in output
    assert assessment.questionnaire.key == "ai-inference-isolation@3"
    assert assessment.latest_run.ruleset.key == "incident-2026-kv@3"
    [probe] = assessment.evidence.filter(question_code="PRB-02")
    result = probe.parse_result
    assert result["checks"]["oversize"] == "overclaimed"
    oversize = result["probe"]["checks"]["oversize"]
    assert oversize["served_context"] * 2 <= result["declared_context"]
    assert oversize["limit_stated"] and oversize["bisection_requests"]
    assert {"prompt_tokens", "status", "measured", "target_tokens", "percent_of_declared"} <= set(
        oversize["below"]
    )
    assert {"served_model", "tokens_measured"} <= set(result["probe"])
    fired = set(assessment.latest_run.findings.values_list("rule_id", flat=True))
    assert "PROBE-CONTEXT-OVERCLAIMED" in fired
    client.force_login(User.objects.get(email="viewer@demo.avia"))
    page = client.get(reverse("assessments:findings", args=[assessment.pk]))
    assert "The endpoint serves less context than the vendor declared" in page.content.decode()


def test_a_workspace_made_before_v3_gains_the_overclaiming_vendor_once(catalog, monkeypatch):
    with monkeypatch.context() as before_v3:
        before_v3.setattr(Command, "overclaiming_vendor", lambda self, assessor: None)
        load_demo()
    assert not Assessment.objects.filter(vendor__name=OVERCLAIMING_VENDOR).exists()
    others = Assessment.objects.count()

    output = load_demo()
    load_demo()

    assert "demo workspace already present" in output
    assert Assessment.objects.filter(vendor__name=OVERCLAIMING_VENDOR).count() == 1
    assert Assessment.objects.count() == others + 1
