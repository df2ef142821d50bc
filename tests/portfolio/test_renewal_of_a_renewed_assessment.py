"""An assessment already reassessed is not reassessed again from its old answers: the vendor's
earlier link (still valid) declaring a configuration change, or an assessor's stale page of the
old assessment, would open a second renewal of it — holding answers that the newer, decided
assessment replaced — beside the newer one, which comes due on its own."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from assessments.factories import EXAMPLES_DIR, LAUNCH_V2, critical_rule_ids
from assessments.models import Assessment, AssessmentStatus, Channel, RenewalReason
from assessments.services.answers import answers_save
from assessments.services.reassessment import renewal_start
from assessments.services.reviews import review_record
from assessments.services.scoring_runs import scoring_run_execute
from assessments.services.submission import assessment_submit
from core.errors import ConflictError
from tests.personas import member_of

from .conftest import answered_by_mei


def decided_renewal_of(assessment, personas, capture) -> Assessment:
    """The assessment's renewal, answered (the v2 example's answers, and KV-10, which the newest
    version asks), scored and approved."""
    ava = member_of(personas.ava)
    with capture(execute=True):
        renewal = renewal_start(
            assessment=assessment, reason=RenewalReason.DUE, member=ava, channel=Channel.WEB
        )
    v2 = json.loads((EXAMPLES_DIR / f"{LAUNCH_V2}.json").read_text(encoding="utf-8"))
    answers_save(
        assessment=renewal,
        answers={**v2["answers"], "KV-10": "salt_set_by_gateway"},
        actor=personas.ava,
        member=ava,
        channel=Channel.WEB,
    )
    with transaction.atomic():
        run = assessment_submit(assessment=renewal, actor=personas.ava, channel=Channel.WEB)
    scoring_run_execute(run_id=run.pk)
    review_record(
        assessment=Assessment.objects.get(pk=renewal.pk),
        member=member_of(personas.rex),
        decision="approved",
        acknowledged_findings=critical_rule_ids(Assessment.objects.get(pk=renewal.pk)),
        channel=Channel.WEB,
    )
    renewal.refresh_from_db()
    assert renewal.status == AssessmentStatus.APPROVED
    return renewal


def test_the_old_link_cannot_open_a_second_renewal_of_a_renewed_assessment(
    catalog, personas, client, django_capture_on_commit_callbacks
):
    old = answered_by_mei(personas, django_capture_on_commit_callbacks)
    newer = decided_renewal_of(old, personas, django_capture_on_commit_callbacks)

    # Mei's link to the old assessment still works; she declares a change through it.
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/v/{old.vendor_token}/configuration-change/",
            {"changes": ["parallelism"], "note": "TP4 → TP8"},
        )

    assert list(old.renewals.all()) == [newer], "a second renewal of the old assessment opened"


def test_an_assessor_cannot_reassess_an_assessment_a_newer_one_replaced(
    catalog, personas, django_capture_on_commit_callbacks
):
    old = answered_by_mei(personas, django_capture_on_commit_callbacks)
    newer = decided_renewal_of(old, personas, django_capture_on_commit_callbacks)

    with pytest.raises(ConflictError) as refused:
        renewal_start(
            assessment=Assessment.objects.get(pk=old.pk),
            reason=RenewalReason.DUE,
            member=member_of(personas.ava),
            channel=Channel.WEB,
        )
    assert str(newer.pk) in str(refused.value)
