from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from accounts.models import ApiToken, Membership
from accounts.services import (
    api_token_create,
    api_token_revoke,
    membership_change_role,
    membership_remove,
)
from tests.personas import join

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.accounts.urls")]

WHOAMI = "/api/whoami/"


def client_with(key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_token_authenticates_as_its_user_in_its_organization(personas):
    _token, key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")

    response = client_with(key).get(WHOAMI)

    assert response.status_code == 200
    assert response.json() == {
        "user": "ava@acme.test",
        "organization": "Acme Procurement",
        "role": "assessor",
    }


def test_a_token_acts_in_its_own_organization_whatever_the_session_says(personas):
    join(personas.other, personas.ava, "viewer", personas.oscar)
    _token, key = api_token_create(user=personas.ava, organization=personas.other, name="ci")
    client = client_with(key)
    client.force_login(personas.ava)
    session = client.session
    session["current_org_id"] = personas.acme.pk
    session.save()

    assert client.get(WHOAMI).json()["organization"] == "Other Org"


def test_a_request_without_credentials_is_refused_with_401(personas):
    response = APIClient().get(WHOAMI)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize(
    "header",
    ["Token", "Token a b", "Token avia_not-a-real-key", "Token not-even-the-prefix"],
)
def test_malformed_and_unknown_tokens_are_refused(personas, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert client.get(WHOAMI).status_code == 401


def test_a_revoked_token_is_refused(personas):
    token, key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    api_token_revoke(token=token, actor=personas.ava)

    response = client_with(key).get(WHOAMI)

    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid or revoked token."}


def test_the_token_of_an_organization_the_user_left_is_refused(personas):
    _token, key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    membership_remove(
        membership=Membership.objects.get(user=personas.ava, organization=personas.acme),
        actor=personas.alice,
    )
    assert client_with(key).get(WHOAMI).status_code == 401


def test_a_token_is_refused_when_its_membership_is_gone_even_if_never_revoked(personas):
    # Memberships deleted outside the services (an operator's shell, a cascade) leave the
    # token unrevoked; authentication checks the membership itself.
    token, key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    Membership.objects.filter(user=personas.ava, organization=personas.acme).delete()
    token.refresh_from_db()
    assert token.revoked_at is None

    assert client_with(key).get(WHOAMI).status_code == 401


def test_a_readded_member_does_not_get_their_old_tokens_back(personas):
    _token, key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    membership_remove(
        membership=Membership.objects.get(user=personas.ava, organization=personas.acme),
        actor=personas.alice,
    )
    join(personas.acme, personas.ava, "assessor", personas.alice)
    assert client_with(key).get(WHOAMI).status_code == 401


def test_the_token_of_an_inactive_user_is_refused(personas):
    _token, key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    personas.ava.is_active = False
    personas.ava.save()
    assert client_with(key).get(WHOAMI).status_code == 401


def test_a_token_follows_role_changes(personas):
    _token, key = api_token_create(user=personas.vic, organization=personas.acme, name="ci")
    membership_change_role(
        membership=Membership.objects.get(user=personas.vic, organization=personas.acme),
        role="reviewer",
        actor=personas.alice,
    )
    assert client_with(key).get(WHOAMI).json()["role"] == "reviewer"


def test_last_use_is_recorded_at_most_once_a_minute(personas):
    token, key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    client = client_with(key)

    client.get(WHOAMI)
    token.refresh_from_db()
    first_use = token.last_used_at
    assert first_use is not None

    client.get(WHOAMI)
    token.refresh_from_db()
    assert token.last_used_at == first_use

    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first_use - timedelta(minutes=2))
    client.get(WHOAMI)
    token.refresh_from_db()
    assert token.last_used_at > first_use - timedelta(minutes=1)
    assert token.last_used_at <= timezone.now()


def test_a_token_request_within_a_minute_of_the_last_runs_two_reads_and_no_write(personas):
    _token, key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    client = client_with(key)
    client.get(WHOAMI)

    with CaptureQueriesContext(connection) as captured:
        client.get(WHOAMI)

    statements = [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]
    # One query authenticates (token, user, organization and membership check at once);
    # one resolves the organization context.
    assert len(statements) == 2
    assert all(sql.startswith("SELECT") for sql in statements)


def test_the_schema_documents_the_token_scheme(personas):
    schema = SchemaGenerator().get_schema(request=None, public=True)

    scheme = schema["components"]["securitySchemes"]["ApiToken"]
    assert (scheme["type"], scheme["in"], scheme["name"]) == ("apiKey", "header", "Authorization")
    assert {"ApiToken": []} in schema["paths"][WHOAMI]["get"]["security"]
