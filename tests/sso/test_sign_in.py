"""Signing in through an organization's OpenID provider: a real provider process on loopback
(tests/sso/oidc_provider.py), the browser's legs driven by Django's test client and httpx."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import translation

from accounts.models import Membership, User
from accounts.roles import Role
from sso.models import IdentityProvider
from tests.personas import PASSWORD

from .conftest import CLIENT_SECRET, configure, sso_sign_in

pytestmark = pytest.mark.django_db


def _refusal(response) -> str:  # noqa: ANN001
    assert response.status_code in (400, 403), response.status_code
    return response.context["refusal_code"]


def test_an_existing_member_signs_in_and_is_not_asked_for_two_factor(personas, oidc_providers):
    acme = personas.acme
    acme.require_two_factor = True
    acme.save(update_fields=["require_two_factor"])
    configure(acme, oidc_providers["good"])
    client = Client()

    response, _ = sso_sign_in(client, "vic@acme.test")

    assert response.status_code == 302 and response["Location"] == "/"
    assert client.session["_auth_user_id"] == str(personas.vic.pk)
    page = client.get("/accounts/")
    assert page.status_code == 200  # not sent to two-factor: the provider authenticated


def test_the_client_secret_is_encrypted_at_rest(personas, oidc_providers):
    configure(personas.acme, oidc_providers["good"])
    stored = IdentityProvider.objects.get(organization=personas.acme).client_secret_encrypted
    assert CLIENT_SECRET not in stored


def test_a_new_user_of_a_vouched_domain_joins_with_the_default_role(personas, oidc_providers):
    configure(personas.acme, oidc_providers["good"], allow_join=True)

    response, _ = sso_sign_in(Client(), "nina@acme.test")

    assert response.status_code == 302
    membership = Membership.objects.get(user__email="nina@acme.test")
    assert membership.organization == personas.acme and membership.role == Role.VIEWER
    assert not membership.user.has_usable_password()


def test_a_new_user_is_refused_when_joining_is_not_allowed(personas, oidc_providers):
    configure(personas.acme, oidc_providers["good"], allow_join=False)

    response, _ = sso_sign_in(Client(), "nina@acme.test")

    assert _refusal(response) == "join_not_allowed"
    assert b"new users may not join" in response.content
    assert not User.objects.filter(email="nina@acme.test").exists()


@pytest.mark.parametrize(
    ("provider", "code", "message"),
    [
        ("wrong_issuer", "wrong_issuer", "issued by another provider"),
        ("wrong_audience", "wrong_audience", "issued for another application"),
        ("expired", "expired", "the token has expired"),
        ("foreign_email", "email_outside_domains", "outside the email domains"),
        ("unverified", "email_not_verified", "has not verified"),
    ],
)
def test_a_bad_token_is_refused_with_a_clear_message(
    personas, oidc_providers, provider, code, message
):
    configure(personas.acme, oidc_providers[provider], allow_join=True)
    client = Client()

    response, _ = sso_sign_in(client, "vic@acme.test")

    assert _refusal(response) == code
    assert message in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_replayed_state_is_refused(personas, oidc_providers):
    configure(personas.acme, oidc_providers["good"])
    client = Client()
    first, callback = sso_sign_in(client, "vic@acme.test")
    assert first.status_code == 302
    client.logout()

    again = client.get(callback)

    assert _refusal(again) == "replayed_state"
    assert "already used or has expired" in again.content.decode()
    assert "_auth_user_id" not in client.session


def test_an_address_no_organization_vouches_for_is_refused(personas, oidc_providers):
    configure(personas.acme, oidc_providers["good"])

    response = Client().post("/accounts/sso/", {"email": "someone@nowhere.test"})

    assert _refusal(response) == "unknown_organization"
    assert "nowhere.test" in response.content.decode()


def test_a_refusal_is_in_traditional_chinese(personas, oidc_providers):
    configure(personas.acme, oidc_providers["good"])

    with translation.override("zh-hant"):
        response = Client(headers={"accept-language": "zh-hant"}).post(
            "/accounts/sso/", {"email": "someone@nowhere.test"}
        )

    assert _refusal(response) == "unknown_organization"
    assert "單一登入" in response.content.decode()


def test_password_sign_in_is_refused_when_sso_is_required_but_for_the_break_glass_owner(
    personas, oidc_providers
):
    configure(
        personas.acme,
        oidc_providers["good"],
        require_sso=True,
        break_glass_owner_id=personas.alice.pk,
    )
    login = "/accounts/login/"

    refused = Client().post(login, {"username": "vic@acme.test", "password": PASSWORD})
    owner = Client().post(login, {"username": "alice@acme.test", "password": PASSWORD})
    outsider = Client().post(login, {"username": "oscar@other.test", "password": PASSWORD})

    assert refused.status_code == 200
    assert "signs in with single sign-on" in refused.content.decode()
    assert owner.status_code == 302
    assert outsider.status_code == 302


def test_a_member_of_an_sso_only_organization_still_signs_in_by_sso(personas, oidc_providers):
    configure(
        personas.acme,
        oidc_providers["good"],
        require_sso=True,
        break_glass_owner_id=personas.alice.pk,
    )
    response, _ = sso_sign_in(Client(), "vic@acme.test")
    assert response.status_code == 302
