"""A rescore batch started twice (a double click on "Rescore these", an API client that sends
its request again) while the first is still queued or running: the second is refused and
names the batch already rescoring those assessments, so no assessment is scored twice."""

from __future__ import annotations

from django.urls import reverse

from assessments.models import ScoringRun
from portfolio.models import RescoreBatch
from tests.api.conftest import token_client  # noqa: F401 (a fixture, shared)

from .conftest import V2

RESCORE = reverse("portfolio:rescore")


def test_a_double_click_on_rescore_starts_one_batch(client, personas, portfolio, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    (launch, remediated), _other = portfolio
    client.force_login(personas.ava)
    runs_before = ScoringRun.objects.count()

    # Two posts of the same form, before the first batch's worker has started.
    first = client.post(RESCORE, {"ruleset": V2})
    second = client.post(RESCORE, {"ruleset": V2})

    assert first.status_code == 302
    batch = RescoreBatch.objects.order_by("pk").first()
    assert RescoreBatch.objects.count() == 1, "the second click started a second batch"
    assert second.status_code in (400, 409)
    assert f"Batch {batch.pk} is rescoring" in second.content.decode()
    assert ScoringRun.objects.count() == runs_before


def test_the_api_refuses_assessments_a_running_batch_is_rescoring(
    personas,
    portfolio,
    settings,
    token_client,  # noqa: F811 (the shared fixture)
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    (launch, remediated), _other = portfolio
    api = token_client(personas.ava, personas.acme)
    body = {"ruleset": V2, "assessments": [launch.pk, remediated.pk]}

    assert api.post("/api/v1/rescore-batches/", body, format="json").status_code == 202
    again = api.post("/api/v1/rescore-batches/", body, format="json")

    assert again.status_code == 409, again.content
    batch = RescoreBatch.objects.get()
    message = " ".join(again.json()["errors"]["assessments"])
    assert str(launch.pk) in message and f"Batch {batch.pk}" in message
