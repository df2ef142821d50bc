"""Bad input found by the input audit: each request is answered with a clear refusal (or
ignored where the input is only a filter), never a 500, and saves nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from assessments.models import AuditEvent, EvidenceFile
from tests.site_pages import build_world

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
SUPERSCRIPT_TWO = "\u00b2"  # str.isdigit() says yes, int() says no


@pytest.fixture
def world(catalog, personas, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    return build_world(personas)


def member_client(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


# -- digits that are not ASCII digits -------------------------------------------------------


def test_a_run_id_of_non_ascii_digits_shows_the_latest_run(world, personas):
    url = reverse("assessments:findings", args=[world.scored.pk])
    response = member_client(personas.ava).get(url, {"run": SUPERSCRIPT_TWO})
    assert response.status_code == 200


def test_compare_ignores_ids_of_non_ascii_digits(world, personas):
    response = member_client(personas.ava).get(
        reverse("assessments:compare"),
        {"assessments": [SUPERSCRIPT_TWO, str(world.scored.pk), str(world.remediated.pk)]},
    )
    assert response.status_code < 500


def test_removing_evidence_of_a_non_ascii_digit_id_is_a_404(world):
    before = EvidenceFile.objects.count(), AuditEvent.objects.count()
    response = Client(raise_request_exception=False).post(
        reverse("portal:section", args=[world.token, "CTX"]), {"remove": SUPERSCRIPT_TWO}
    )
    assert response.status_code == 404
    assert (EvidenceFile.objects.count(), AuditEvent.objects.count()) == before
