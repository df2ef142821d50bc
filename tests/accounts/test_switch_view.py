import pytest
from django.test import Client

from tests.personas import join

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.accounts.urls")]

SWITCH = "/accounts/switch/"


@pytest.fixture
def consultant(personas):
    join(personas.other, personas.ava, "viewer", personas.oscar)
    return personas.ava


def test_it_switches_the_current_organization(client, personas, consultant):
    client.force_login(consultant)

    response = client.post(SWITCH, {"organization_id": personas.other.pk, "next": "/accounts/"})

    assert response.status_code == 302
    assert response["Location"] == "/accounts/"
    assert client.session["current_org_id"] == personas.other.pk
    assert client.get("/accounts/").context["current_organization_id"] == personas.other.pk


def test_switching_to_an_organization_you_are_not_in_is_404(client, personas):
    client.force_login(personas.vic)

    response = client.post(SWITCH, {"organization_id": personas.other.pk})

    assert response.status_code == 404
    assert "current_org_id" not in client.session


def test_it_ignores_an_offsite_next_url(client, personas, consultant):
    client.force_login(consultant)
    response = client.post(
        SWITCH, {"organization_id": personas.other.pk, "next": "https://evil.example/"}
    )
    assert response["Location"] == "/accounts/"


def test_it_only_accepts_post(client, personas):
    client.force_login(personas.vic)
    assert client.get(SWITCH).status_code == 405


def test_it_needs_a_csrf_token(personas):
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas.vic)
    assert client.post(SWITCH, {"organization_id": personas.acme.pk}).status_code == 403


def test_a_garbled_organization_id_is_a_bad_request(client, personas):
    client.force_login(personas.vic)
    assert client.post(SWITCH, {"organization_id": "acme"}).status_code == 400
