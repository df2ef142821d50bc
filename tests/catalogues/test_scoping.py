"""A custom catalogue is seen, used and scored only by its owner and the organizations it is
shared with; revoking a share stops new assessments only."""

import pytest
from rest_framework.test import APIClient

from accounts.roles import Role
from assessments.models import Channel
from assessments.services.answers import answers_save, assessment_create
from assessments.services.submission import assessment_submit
from assessments.services.vendors import vendor_create
from core.errors import ServiceError
from portfolio.services import rescore_batch_create
from questionnaires.selectors import questionnaires_visible_to
from scoring.selectors import rulesets_visible_to
from scoring.services import catalogue_publish, catalogue_share, catalogue_share_revoke
from tests.catalogues.conftest import upload
from tests.personas import join, member_of

pytestmark = pytest.mark.django_db

ANSWERS = {"GOV-01": "no", "GOV-02": "abroad"}


def api(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def new_assessment(organization, actor, key="vendor-dd@1"):
    vendor = vendor_create(
        organization=organization,
        actor=actor,
        channel=Channel.WEB,
        name=f"Vendor {organization.assessments.count()} {actor.pk}",
    )
    return assessment_create(
        organization=organization,
        vendor=vendor,
        questionnaire_key=key,
        actor=actor,
        channel=Channel.WEB,
    )


def keys(organization) -> set[str]:
    return {q.key for q in questionnaires_visible_to(organization=organization)}


def test_a_draft_is_seen_by_nobody_and_a_published_version_by_its_owner_only(catalog, personas):
    upload(personas)
    assert "vendor-dd@1" not in keys(personas.acme)
    assert new_assessment_refused(personas.acme, personas.alice)


def new_assessment_refused(organization, actor) -> bool:
    try:
        new_assessment(organization, actor)
    except ServiceError as error:
        assert "questionnaire" in error.errors
        return True
    return False


def test_another_organization_can_neither_see_nor_use_nor_rescore_with_it(published, personas):
    assert "vendor-dd@1" in keys(personas.acme)
    assert "vendor-dd@1" not in keys(personas.other)
    assert "ai-inference-isolation@1" in keys(personas.other)
    outsider = api(personas.oscar)
    assert outsider.get("/api/v1/questionnaires/vendor-dd/").status_code == 404
    listed = outsider.get("/api/v1/questionnaires/").json()["results"]
    assert "vendor-dd@1" not in {q["key"] for q in listed}
    assert api(personas.alice).get("/api/v1/questionnaires/vendor-dd/").status_code == 200
    assert new_assessment_refused(personas.other, personas.oscar)
    assert not rulesets_visible_to(organization=personas.other).filter(slug="vendor-dd-rules")
    with pytest.raises(ServiceError) as raised:
        rescore_batch_create(
            member=member_of(personas.oscar), ruleset_key="vendor-dd-rules@1", channel="web"
        )
    assert "ruleset" in raised.value.errors


def test_the_owner_assesses_and_scores_with_it(published, personas, inline_scoring):
    assessment = new_assessment(personas.acme, personas.alice)
    answers_save(assessment=assessment, answers=ANSWERS, actor=personas.alice, channel="web")
    with inline_scoring():
        assessment_submit(assessment=assessment, actor=personas.alice, channel=Channel.WEB)
    assessment.refresh_from_db()
    assert assessment.latest_run.ruleset == published.ruleset
    findings = set(assessment.latest_run.findings.values_list("rule_id", flat=True))
    assert findings == {"DD-NO-REGISTER", "DD-DATA-ABROAD"}


def test_a_share_lets_a_client_workspace_use_it_until_revoked(published, personas, inline_scoring):
    join(personas.other, personas.alice, Role.OWNER, personas.oscar)
    share = catalogue_share(
        context=member_of(personas.alice, personas.acme),
        slug="vendor-dd",
        organization=personas.other,
    )
    assert "vendor-dd@1" in keys(personas.other)
    made = new_assessment(personas.other, personas.oscar)
    catalogue_share_revoke(context=member_of(personas.alice, personas.acme), share=share)
    assert "vendor-dd@1" not in keys(personas.other)
    assert new_assessment_refused(personas.other, personas.oscar)
    # The assessment made before the revocation keeps its questionnaire and is scored.
    answers_save(assessment=made, answers=ANSWERS, actor=personas.oscar, channel="web")
    with inline_scoring():
        assessment_submit(assessment=made, actor=personas.oscar, channel=Channel.WEB)
    made.refresh_from_db()
    assert made.status == "scored" and made.latest_run.ruleset == published.ruleset


def test_a_share_is_only_with_an_organization_the_member_belongs_to(published, personas):
    with pytest.raises(ServiceError):
        catalogue_share(
            context=member_of(personas.alice, personas.acme),
            slug="vendor-dd",
            organization=personas.other,
        )


RULESET_V2 = b"""
ruleset:
  slug: vendor-dd-rules
  version: "2"
  questionnaire: vendor-dd@1
  title: {en: Vendor due diligence rules, zh-hant: \xe4\xbe\x9b\xe6\x87\x89\xe5\x95\x86\xe7\x9b\xa1\xe8\x81\xb7\xe5\xaf\xa9\xe6\x9f\xa5\xe8\xa6\x8f\xe5\x89\x87}
  points: {critical: 40, high: 15, medium: 5, low: 1}
  rules:
    - id: DD-HK-ONLY
      severity: critical
      when: 'GOV_02 == "hk"'
      title: {en: Processed in Hong Kong, zh-hant: \xe5\x9c\xa8\xe9\xa6\x99\xe6\xb8\xaf\xe8\x99\x95\xe7\x90\x86}
      rationale: {en: A test rule., zh-hant: \xe6\xb8\xac\xe8\xa9\xa6\xe3\x80\x82}
      remediation: {en: None., zh-hant: \xe7\x84\xa1\xe3\x80\x82}
"""


def test_a_new_version_of_a_custom_ruleset_rescores_as_a_batch(published, personas, inline_scoring):
    assessment = new_assessment(personas.acme, personas.alice)
    answers_save(
        assessment=assessment, answers={"GOV-01": "yes", "GOV-02": "hk"}, actor=personas.alice,
        channel="web",
    )  # fmt: skip
    with inline_scoring():
        assessment_submit(assessment=assessment, actor=personas.alice, channel=Channel.WEB)
    owner = member_of(personas.alice, personas.acme)
    draft = upload(personas, RULESET_V2)  # a ruleset alone, for the published questionnaire
    assert draft.questionnaire == published.questionnaire
    catalogue_publish(context=owner, ruleset=draft.ruleset)
    with inline_scoring():
        batch = rescore_batch_create(member=owner, ruleset_key="vendor-dd-rules@2", channel="web")
    assert batch.ruleset == draft.ruleset
    assessment.refresh_from_db()
    assert assessment.latest_run.ruleset == draft.ruleset and assessment.risk_tier == "critical"
