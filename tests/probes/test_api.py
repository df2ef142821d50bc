"""The probe's REST endpoints: assessors start a run and everyone in the organization reads its
status and result; other organizations get 404; no key material in any answer."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from probes.models import ProbeRun
from tests.portal.conftest import make_assessment

from .vendor import reference_vendor

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def client_of(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def test_an_assessor_starts_a_probe_and_follows_it_to_its_result(
    tmp_path, assessment, set_up_probe, personas, keys, settings, inline_scoring
):
    settings.PROBE_RATE_PER_KEY = 50
    client = client_of(personas.ava)
    with reference_vendor(tmp_path, "launch-day") as vendor:
        set_up_probe(assessment, base_url=vendor.base_url)
        with inline_scoring():
            started = client.post(
                f"/api/v1/assessments/{assessment.pk}/probe-runs/",
                {"checks": ["oversize", "canary"]},
                format="json",
            )

    assert started.status_code == 202, started.content
    body = started.json()
    assert body["status"] == "queued" and body["checks"] == ["oversize", "canary"]
    assert body["progress"]["percent"] == 0

    detail = client_of(personas.vic).get(f"/api/v1/probe-runs/{body['id']}/")
    assert detail.status_code == 200
    run = detail.json()
    assert run["status"] == "done" and run["progress"]["percent"] == 100
    assert run["result"]["checks"]["oversize"]["result"] == "accepted"
    assert run["result"]["checks"]["canary"]["result"] == "leak"
    assert run["tokens_spent"] == run["result"]["tokens_spent"] > 0

    overview = client.get(f"/api/v1/assessments/{assessment.pk}/probe/").json()
    assert overview["setup"]["keys_present"] is False  # destroyed after the run
    assert overview["setup"]["tokens_spent_under_authorisation"] == run["tokens_spent"]
    assert [r["id"] for r in overview["runs"]] == [body["id"]]
    for answer in (started.content, detail.content, str(overview)):
        text = answer.decode() if isinstance(answer, bytes) else answer
        assert keys["key_a"] not in text and keys["key_b"] not in text
        assert "ciphertext" not in text


def test_the_set_up_shows_whether_keys_are_held_never_the_keys(
    assessment, set_up_probe, personas, keys
):
    setup = set_up_probe(assessment)

    response = client_of(personas.vic).get(f"/api/v1/assessments/{assessment.pk}/probe/")

    assert response.status_code == 200
    body = response.json()
    assert body["setup"]["keys_present"] is True and body["runs"] == []
    assert body["setup"]["entered_by"] == personas.ava.email
    text = response.content.decode()
    assert keys["key_a"] not in text and setup.key_a_ciphertext not in text


def test_viewers_and_reviewers_cannot_start_a_probe(assessment, set_up_probe, personas):
    set_up_probe(assessment)
    for user in (personas.vic, personas.rex):
        response = client_of(user).post(
            f"/api/v1/assessments/{assessment.pk}/probe-runs/", {}, format="json"
        )
        assert response.status_code == 403
    assert not ProbeRun.objects.exists()


def test_another_organization_sees_nothing_of_the_probe(assessment, set_up_probe, personas):
    set_up_probe(assessment)
    run = ProbeRun.objects.create(
        organization=personas.acme,
        assessment=assessment,
        setup=assessment.probe_setup,
        samples=6,
        prefix_tokens=1024,
        budget_tokens=1000,
    )
    outsider = client_of(personas.oscar)

    assert outsider.get(f"/api/v1/probe-runs/{run.pk}/").status_code == 404
    assert outsider.get(f"/api/v1/assessments/{assessment.pk}/probe/").status_code == 404
    started = outsider.post(f"/api/v1/assessments/{assessment.pk}/probe-runs/", {}, format="json")
    assert started.status_code == 404
    assert ProbeRun.objects.count() == 1


def test_bad_run_options_are_400_by_field(assessment, set_up_probe, personas):
    set_up_probe(assessment)
    response = client_of(personas.ava).post(
        f"/api/v1/assessments/{assessment.pk}/probe-runs/",
        {"checks": ["oversize", "telepathy"], "samples": 3, "colour": "red"},
        format="json",
    )
    assert response.status_code == 400
    assert "colour" in response.json()["errors"]
    response = client_of(personas.ava).post(
        f"/api/v1/assessments/{assessment.pk}/probe-runs/",
        {"checks": ["oversize", "telepathy"], "samples": 3},
        format="json",
    )
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"checks.1", "samples"}
    response = client_of(personas.ava).post(
        f"/api/v1/assessments/{assessment.pk}/probe-runs/", {"samples": 3}, format="json"
    )
    assert response.status_code == 400 and set(response.json()["errors"]) == {"samples"}
    assert not ProbeRun.objects.exists()


def test_without_a_set_up_starting_is_a_409(catalog, personas):
    assessment = make_assessment(personas.acme, personas.ava)
    response = client_of(personas.ava).post(
        f"/api/v1/assessments/{assessment.pk}/probe-runs/", {}, format="json"
    )
    assert response.status_code == 409
    assert "probe" in response.json()["errors"]
