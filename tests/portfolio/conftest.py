"""Fixtures of the portfolio tests: assessments scored last year with ruleset v1, built through
the real services, and the results the rules give for them."""

from __future__ import annotations

import json
from functools import cache

import pytest
from django.core import mail
from django.db import transaction

from assessments.factories import incident_assessment, incident_vendor
from assessments.models import Assessment, Channel, ScoringRun
from assessments.services.answers import answer_values
from assessments.services.scoring_runs import scoring_run_execute
from assessments.services.submission import assessment_submit
from assessments.services.vendor_links import vendor_link_issue
from scoring.models import Ruleset
from scoring.registry import builtin_catalog
from tests.api.conftest import token_client  # noqa: F401 (a fixture, shared)
from tests.conftest import EXAMPLES
from tests.personas import member_of

V1, V2, V3 = "incident-2026-kv@1", "incident-2026-kv@2", "incident-2026-kv@3"


def answer_file(name: str) -> dict:
    return json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))["answers"]


def scored_with(
    ruleset_key: str, *, organization, actor, vendor_name: str, fixture: str, evidence=()
):
    """An assessment of `vendor_name` answered as in `examples/<fixture>.json` (with the
    `evidence` files: question code, path), submitted and scored with `ruleset_key` (as it was
    before a newer ruleset was published)."""
    member = member_of(actor, organization)
    assessment = incident_assessment(
        member=member,
        vendor=incident_vendor(member=member, name=vendor_name),
        answers_from=fixture,
        evidence=evidence,
        score=False,
    )
    run = assessment.runs.get()
    slug, version = ruleset_key.split("@")
    ScoringRun.objects.filter(pk=run.pk).update(
        ruleset=Ruleset.objects.get(slug=slug, version=version)
    )
    scoring_run_execute(run_id=run.pk)
    return Assessment.objects.get(pk=assessment.pk)


def outdated_assessments(personas, count: int) -> list[Assessment]:
    """`count` Acme assessments of vendors "Vendor 00"…, scored with v1, alternately as at
    launch and after remediation."""
    return [
        scored_with(
            V1,
            organization=personas.acme,
            actor=personas.ava,
            vendor_name=f"Vendor {i:02d}",
            fixture="incident-2026-remediated" if i % 2 else "incident-2026-launch",
        )
        for i in range(count)
    ]


def answered_by_mei(
    personas, capture, *, startup_log: bool = True, then_invited: tuple[str, ...] = ()
) -> Assessment:
    """The incident vendor of Acme (`assessments.factories`, with its launch-day answers and,
    optionally, the startup log), sent to Mei, who answers in Traditional Chinese, submitted
    through her link and scored. `vendor_token` is her private link, as her invitation gave it.
    `then_invited`: contacts invited after her, before she submits."""
    ava = member_of(personas.ava)
    assessment = incident_assessment(member=ava, evidence=None if startup_log else (), submit=False)
    with capture(execute=True):
        link, token = vendor_link_issue(
            assessment=assessment,
            contact_email="mei@inferno.test",
            contact_name="Mei Chan",
            language="zh-hant",
            member=ava,
            channel=Channel.WEB,
        )
        for email in then_invited:
            vendor_link_issue(
                assessment=assessment, contact_email=email, member=ava, channel=Channel.WEB
            )
    with transaction.atomic():
        run = assessment_submit(
            assessment=assessment, vendor_link=link, channel=Channel.VENDOR_LINK
        )
    scoring_run_execute(run_id=run.pk)
    mail.outbox.clear()
    scored = Assessment.objects.get(pk=assessment.pk)
    scored.vendor_token = token
    return scored


@cache
def _catalog():
    return builtin_catalog()


def expected(assessment: Assessment, ruleset_key: str) -> dict:
    """What the rules of `ruleset_key` say about the assessment's stored answers."""
    result = (
        _catalog()
        .compiled(ruleset_key)
        .score(answer_values(assessment), as_of=assessment.latest_run.as_of)
    )
    return {
        "ruleset": ruleset_key,
        "risk_score": result.risk_score,
        "risk_tier": result.risk_tier,
        "rules": sorted(f.rule_id for f in result.findings),
    }


@pytest.fixture
def portfolio(catalog, personas):
    """Acme's two vendors scored with v1 (launch day: critical; remediated: high) and Other
    Org's one."""
    acme = [
        scored_with(V1, organization=personas.acme, actor=personas.ava, vendor_name=name, fixture=f)
        for name, f in (
            ("Inferno AI", "incident-2026-launch"),
            ("Blue Harbour Compute", "incident-2026-remediated"),
        )
    ]
    other = scored_with(
        V1,
        organization=personas.other,
        actor=personas.oscar,
        vendor_name="Other's Vendor",
        fixture="incident-2026-remediated",
    )
    return acme, other
