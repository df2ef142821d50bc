"""The owner's webhook pages: registering an endpoint (its secret shown once), its deliveries,
the test button; precise errors; another organization's endpoint is a 404."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from webhooks.models import WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_owner_registers_an_endpoint_and_sees_its_secret_once(
    personas, receiver, loopback_allowed, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    alice = signed_in(personas.alice)

    response = alice.post(
        reverse("webhooks:endpoints"),
        {"url": receiver.url, "events": ["assessment.scored", "report.ready"]},
    )

    endpoint = WebhookEndpoint.objects.get(organization=personas.acme)
    assert response.status_code == 302 and response["Location"].endswith(
        f"/webhooks/{endpoint.pk}/"
    )
    assert endpoint.events == ["assessment.scored", "report.ready"]
    first = alice.get(response["Location"]).content.decode()
    secret = first.split('id="webhook-secret">')[1].split("<")[0]
    assert secret.startswith("whsec_")
    assert secret not in alice.get(response["Location"]).content.decode()


def test_the_test_button_delivers_to_the_endpoint(
    personas, endpoint, receiver, django_capture_on_commit_callbacks, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    found, _secret = endpoint
    alice = signed_in(personas.alice)

    with django_capture_on_commit_callbacks(execute=True):
        alice.post(reverse("webhooks:endpoint_test", args=[found.pk]))

    (delivery,) = WebhookDelivery.objects.all()
    assert delivery.event == "webhook.test" and delivery.status == "delivered"
    assert len(receiver.requests) == 1
    page = alice.get(reverse("webhooks:endpoint", args=[found.pk])).content.decode()
    assert "HTTP 200" in page and "receiver says 200" in page


def test_a_private_address_is_refused_with_the_reason_and_nothing_is_saved(personas):
    alice = signed_in(personas.alice)

    response = alice.post(
        reverse("webhooks:endpoints"),
        {"url": "https://169.254.169.254/latest", "events": ["assessment.scored"]},
    )

    assert response.status_code == 400
    assert "private, loopback or reserved address" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_no_event_chosen_is_a_field_error(personas, receiver, loopback_allowed):
    response = signed_in(personas.alice).post(reverse("webhooks:endpoints"), {"url": receiver.url})

    assert response.status_code == 400 and "This field is required." in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_another_organizations_endpoint_is_not_found(personas, endpoint):
    found, _secret = endpoint
    oscar = signed_in(personas.oscar)

    assert oscar.get(reverse("webhooks:endpoint", args=[found.pk])).status_code == 404
    assert oscar.post(reverse("webhooks:endpoint_remove", args=[found.pk])).status_code == 404
    assert WebhookEndpoint.objects.filter(pk=found.pk).exists()


def test_an_assessor_cannot_manage_webhooks(personas, endpoint):
    assert signed_in(personas.ava).get(reverse("webhooks:endpoints")).status_code == 403
