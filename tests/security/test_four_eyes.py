"""Four eyes: uploading (or removing) evidence is editing, so the uploader cannot sign off."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from assessments.models import Channel
from assessments.services.evidence import evidence_add, evidence_remove
from assessments.services.reviews import reviewer_conflict
from assessments.services.submission import assessment_submit
from tests.api.conftest import LOGS

pytestmark = pytest.mark.django_db


def upload_log(assessment, user):
    return evidence_add(
        assessment=assessment,
        question_code="CTX-08",
        upload=SimpleUploadedFile(
            "prefill.log", (LOGS / "sglang-prefill-glm53-launch.log").read_bytes()
        ),
        actor=user,
        channel=Channel.WEB,
    )


def submit(assessment, personas, inline_scoring):
    with inline_scoring():
        assessment_submit(assessment=assessment, actor=personas.ava, channel=Channel.WEB)
    assessment.refresh_from_db()
    assert assessment.status == "scored"


def test_an_owner_who_uploaded_evidence_cannot_approve(
    personas, answered, client_as, inline_scoring
):
    upload_log(answered, personas.alice)
    submit(answered, personas, inline_scoring)
    response = client_as(personas.alice).post(
        f"/api/v1/assessments/{answered.pk}/review/", {"decision": "approved"}, format="json"
    )
    assert response.status_code == 400
    assert "four-eyes" in response.json()["errors"]["reviewer"][0]
    # Someone who did not touch it may.
    assert reviewer_conflict(assessment=answered, reviewer=personas.rex) is False


def test_removing_the_evidence_again_does_not_clear_the_conflict(
    personas, answered, inline_scoring
):
    evidence = upload_log(answered, personas.rex)
    evidence_remove(evidence=evidence, actor=personas.rex, vendor_link=None, channel=Channel.WEB)
    submit(answered, personas, inline_scoring)
    assert reviewer_conflict(assessment=answered, reviewer=personas.rex) is True
