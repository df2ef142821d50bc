"""A decision is about the scoring run the reviewer read: when the assessment was scored again
after the review page was loaded (a rescore batch keeps it `scored` and gives it a new latest
run), the decision is refused and the page shows the new run — it never signs off findings the
reviewer never saw."""

from __future__ import annotations

import re

from django.urls import reverse

from assessments.factories import critical_rule_ids
from assessments.models import Assessment, Review, ScoringRun
from assessments.services.scoring_runs import scoring_run_execute
from scoring.models import Ruleset
from tests.api.conftest import token_client  # noqa: F401 (a fixture, shared)
from tests.personas import member_of

REVIEW = "assessments:review"


def hidden_inputs(html: str) -> dict[str, str]:
    """The hidden fields of the page's form, as the browser would post them back."""
    fields = {}
    for tag in re.findall(r"<input[^>]*>", html):
        if 'type="hidden"' in tag and "csrfmiddlewaretoken" not in tag:
            name = re.search(r'name="([^"]*)"', tag)
            value = re.search(r'value="([^"]*)"', tag)
            if name:
                fields[name.group(1)] = value.group(1) if value else ""
    return fields


def scored_with_v1(personas, scored) -> Assessment:
    """`scored`, as it stood when scored with ruleset v1 (before v2 was published)."""
    v1 = Ruleset.objects.get(slug="incident-2026-kv", version="1")
    run = scored.latest_run
    ScoringRun.objects.filter(pk=run.pk).update(ruleset=v1)
    scoring_run_execute(run_id=run.pk)
    return Assessment.objects.get(pk=scored.pk)


def rescore_in_a_batch(personas, assessment, capture, settings) -> ScoringRun:
    from portfolio.services import rescore_batch_create

    settings.CELERY_TASK_ALWAYS_EAGER = True
    with capture(execute=True):
        rescore_batch_create(
            member=member_of(personas.ava),
            ruleset_key="incident-2026-kv@2",
            assessment_ids=[assessment.pk],
            channel="web",
        )
    assessment.refresh_from_db()
    return assessment.latest_run


def test_a_decision_posted_from_a_page_of_an_earlier_run_is_refused(
    client, personas, scored, settings, django_capture_on_commit_callbacks
):
    assessment = scored_with_v1(personas, scored)
    seen = assessment.latest_run
    client.force_login(personas.rex)
    page = client.get(reverse(REVIEW, args=[assessment.pk]))
    assert page.context["run"] == seen
    form = hidden_inputs(page.content.decode())

    # Meanwhile an assessor's rescore batch scores it again: still `scored`, a new latest run.
    new = rescore_in_a_batch(personas, assessment, django_capture_on_commit_callbacks, settings)
    assert new.pk != seen.pk and assessment.status == "scored"

    response = client.post(reverse(REVIEW, args=[assessment.pk]), form | {"decision": "approved"})

    assessment.refresh_from_db()
    assert assessment.status == "scored"
    assert not Review.objects.filter(assessment=assessment).exists()
    assert response.status_code == 409
    body = response.content.decode()
    assert f"run {new.pk}" in body  # what changed is said, and the new run is shown
    assert response.context["run"] == new


def test_the_api_refuses_a_decision_about_a_run_that_is_no_longer_the_latest(
    personas,
    scored,
    settings,
    django_capture_on_commit_callbacks,
    token_client,  # noqa: F811 (the shared fixture)
):
    assessment = scored_with_v1(personas, scored)
    seen = assessment.latest_run
    new = rescore_in_a_batch(personas, assessment, django_capture_on_commit_callbacks, settings)

    client = token_client(personas.rex, personas.acme)
    url = f"/api/v1/assessments/{assessment.pk}/review/"
    response = client.post(url, {"decision": "approved", "run": seen.pk}, format="json")
    assert response.status_code == 409, response.content
    assert "run" in response.json()["errors"]
    assert not Review.objects.filter(assessment=assessment).exists()

    acknowledged = critical_rule_ids(assessment)
    response = client.post(
        url,
        {"decision": "approved", "run": new.pk, "acknowledged_findings": acknowledged},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["run"] == new.pk
