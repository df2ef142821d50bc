"""`POST/GET /api/v1/rescore-batches/` and `changes.csv` (api.md): the rescore flow through the
API, scored exactly as the rulesets say, within the caller's organization only."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from assessments.models import Assessment, AuditEvent, ScoringRun
from portfolio.models import RescoreBatch

from .conftest import V1, V2, expected

LIST = "/api/v1/rescore-batches/"


def detail_url(batch_id):
    return f"/api/v1/rescore-batches/{batch_id}/"


def post(client, body, capture):
    with capture(execute=True):  # the chunks are queued on commit, and run eagerly here
        return client.post(LIST, body, format="json")


@pytest.fixture
def eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.RESCORE_CHUNK_SIZE = 1  # one chunk per assessment: the fan-out is exercised


def test_it_rescores_every_outdated_assessment_and_reports_the_impact_worst_first(
    portfolio, personas, token_client, eager, django_capture_on_commit_callbacks
):
    (launch, remediated), other = portfolio
    before = {a.pk: expected(a, V1) for a in (launch, remediated)}
    after = {a.pk: expected(a, V2) for a in (launch, remediated)}
    client = token_client(personas.ava, personas.acme)

    response = post(client, {"ruleset": V2}, django_capture_on_commit_callbacks)

    assert response.status_code == 202
    assert response.json() == {"id": response.json()["id"], "status": "queued"}
    body = client.get(detail_url(response.json()["id"])).json()
    assert (body["status"], body["total"], body["done"], body["failed"]) == ("done", 2, 2, 0)
    changes = {change["assessment"]: change for change in body["changes"]}
    assert set(changes) == {launch.pk, remediated.pk}  # Other Org's assessment is not touched
    for pk, change in changes.items():
        b, a = before[pk], after[pk]
        assert change["before"] == {k: b[k] for k in ("ruleset", "risk_score", "risk_tier")}
        assert change["after"] == {k: a[k] for k in ("ruleset", "risk_score", "risk_tier")}
        assert change["added"] == sorted(set(a["rules"]) - set(b["rules"]))
        assert change["removed"] == sorted(set(b["rules"]) - set(a["rules"]))
    # Worse first: the one whose score rose more comes first.
    rises = [c["after"]["risk_score"] - c["before"]["risk_score"] for c in body["changes"]]
    assert rises == sorted(rises, reverse=True)
    # Every old run is kept; each assessment has exactly one new run, the latest.
    for assessment in (launch, remediated):
        runs = list(ScoringRun.objects.filter(assessment=assessment).order_by("pk"))
        assert [r.ruleset.key for r in runs] == [V1, V2]
        fresh = Assessment.objects.get(pk=assessment.pk)
        assert fresh.latest_run_id == runs[-1].pk
        assert fresh.risk_score == after[assessment.pk]["risk_score"]
        assert fresh.status == assessment.status
    assert Assessment.objects.get(pk=other.pk).latest_run.ruleset.key == V1
    assert AuditEvent.objects.filter(action="rescore_batch.requested").count() == 1


def test_a_second_batch_finds_nothing_left_to_rescore(
    portfolio, personas, token_client, eager, django_capture_on_commit_callbacks
):
    client = token_client(personas.alice, personas.acme)
    assert post(client, {"ruleset": V2}, django_capture_on_commit_callbacks).status_code == 202
    again = post(client, {"ruleset": V2}, django_capture_on_commit_callbacks)
    assert again.status_code == 400
    assert "incident-2026-kv@2" in again.json()["errors"]["assessments"][0]


def test_it_rescores_only_the_named_assessments(
    portfolio, personas, token_client, eager, django_capture_on_commit_callbacks
):
    (launch, remediated), _other = portfolio
    client = token_client(personas.ava, personas.acme)
    response = post(
        client, {"ruleset": V2, "assessments": [remediated.pk]}, django_capture_on_commit_callbacks
    )
    body = client.get(detail_url(response.json()["id"])).json()
    assert [c["assessment"] for c in body["changes"]] == [remediated.pk]
    assert body["changes"][0]["added"] == ["PROBE-NOT-RUN"]  # api.md's example, from the rules
    assert Assessment.objects.get(pk=launch.pk).latest_run.ruleset.key == V1


def test_the_csv_is_the_same_as_the_json(
    portfolio, personas, token_client, eager, django_capture_on_commit_callbacks
):
    client = token_client(personas.ava, personas.acme)
    batch_id = post(client, {"ruleset": V2}, django_capture_on_commit_callbacks).json()["id"]
    changes = client.get(detail_url(batch_id)).json()["changes"]

    response = client.get(f"{detail_url(batch_id)}changes.csv")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [
        (
            int(row["assessment"]),
            row["vendor"],
            row["before_ruleset"],
            int(row["before_risk_score"]),
            row["before_risk_tier"],
            row["after_ruleset"],
            int(row["after_risk_score"]),
            row["after_risk_tier"],
            row["added"].split(),
            row["removed"].split(),
        )
        for row in rows
    ] == [
        (
            c["assessment"],
            c["vendor"],
            c["before"]["ruleset"],
            c["before"]["risk_score"],
            c["before"]["risk_tier"],
            c["after"]["ruleset"],
            c["after"]["risk_score"],
            c["after"]["risk_tier"],
            c["added"],
            c["removed"],
        )
        for c in changes
    ]


def test_another_organizations_batch_is_not_found(
    portfolio, personas, token_client, eager, django_capture_on_commit_callbacks
):
    acme_client = token_client(personas.ava, personas.acme)
    batch_id = post(acme_client, {"ruleset": V2}, django_capture_on_commit_callbacks).json()["id"]
    outsider = token_client(personas.oscar, personas.other)
    assert outsider.get(detail_url(batch_id)).status_code == 404
    assert outsider.get(f"{detail_url(batch_id)}changes.csv").status_code == 404
    assert outsider.get(LIST).json()["results"] == []


def test_another_organizations_assessment_id_is_refused_and_nothing_is_saved(
    portfolio, personas, token_client, eager, django_capture_on_commit_callbacks
):
    (launch, _remediated), other = portfolio
    client = token_client(personas.ava, personas.acme)
    response = post(
        client,
        {"ruleset": V2, "assessments": [launch.pk, other.pk]},
        django_capture_on_commit_callbacks,
    )
    assert response.status_code == 400
    assert response.json() == {
        "errors": {"assessments": [f"Not assessments of this organization: {other.pk}."]}
    }
    assert not RescoreBatch.objects.exists()
    assert Assessment.objects.get(pk=launch.pk).latest_run.ruleset.key == V1


@pytest.mark.parametrize(
    "body, key, message",
    [
        ({"ruleset": "incident-2026-kv@9"}, "ruleset", "Unknown ruleset “incident-2026-kv@9”."),
        ({"ruleset": "nonsense"}, "ruleset", "Unknown ruleset “nonsense”."),
        ({"ruleset": V2, "assessments": []}, "assessments", "Name at least one assessment"),
        ({"ruleset": V2, "assessments": ["x"]}, "assessments.0", "A valid integer is required."),
        ({"ruleset": V2, "filter": "x"}, "filter", "Unknown field."),
        ({}, "ruleset", "This field is required."),
    ],
)
def test_bad_input_is_a_clear_400(portfolio, personas, token_client, body, key, message):
    response = token_client(personas.ava, personas.acme).post(LIST, body, format="json")
    assert response.status_code == 400
    assert any(m.startswith(message) for m in response.json()["errors"][key])
    assert not RescoreBatch.objects.exists()


def test_a_draft_cannot_be_rescored(portfolio, personas, token_client, draft_of_acme):
    response = token_client(personas.ava, personas.acme).post(
        LIST, {"ruleset": V2, "assessments": [draft_of_acme.pk]}, format="json"
    )
    assert response.status_code == 400
    assert str(draft_of_acme.pk) in response.json()["errors"]["assessments"][0]


@pytest.mark.parametrize("persona", ["rex", "vic"])
def test_reviewers_and_viewers_see_batches_but_cannot_start_one(
    portfolio, personas, token_client, persona
):
    client = token_client(getattr(personas, persona), personas.acme)
    assert client.post(LIST, {"ruleset": V2}, format="json").status_code == 403
    assert client.get(LIST).status_code == 200


@pytest.fixture
def draft_of_acme(portfolio, personas):
    from assessments.services.answers import assessment_create

    (launch, _remediated), _other = portfolio
    return assessment_create(
        organization=personas.acme,
        vendor=launch.vendor,
        questionnaire_key=launch.questionnaire.key,
        actor=personas.ava,
        channel="web",
    )


def test_the_schema_documents_the_endpoints(client):
    schema = client.get(reverse("api:schema")).content.decode()
    assert "/api/v1/rescore-batches/{batch_id}/changes.csv" in schema
