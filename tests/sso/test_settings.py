"""The owner's single sign-on settings page: saved through the service, checked per field."""

from __future__ import annotations

import pytest
from django.test import Client

from core.encryption import secret_decrypt
from sso.models import IdentityProvider, VouchedDomain
from sso.services import ProviderSettings, provider_configure

pytestmark = pytest.mark.django_db

URL = "/accounts/sso/settings/"


def _form(**overrides: object) -> dict[str, object]:
    data: dict[str, object] = {
        "issuer": "https://login.acme.test/realms/acme",
        "client_id": "avia",
        "client_secret": "s3cret-value",
        "email_domains": "acme.test, acme-hk.test",
        "default_role": "viewer",
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not None}


def _owner(personas) -> Client:  # noqa: ANN001
    client = Client()
    client.force_login(personas.alice)
    return client


def test_an_owner_saves_the_provider_with_the_secret_encrypted(personas):
    response = _owner(personas).post(
        URL,
        _form(allow_join="on", require_sso="on", break_glass_owner=personas.alice.pk),
    )

    assert response.status_code == 302
    provider = IdentityProvider.objects.get(organization=personas.acme)
    assert provider.issuer == "https://login.acme.test/realms/acme"
    assert provider.allow_join and provider.require_sso
    assert provider.break_glass_owner == personas.alice
    assert "s3cret-value" not in provider.client_secret_encrypted
    assert secret_decrypt(provider.client_secret_encrypted) == "s3cret-value"
    assert sorted(provider.domains.values_list("domain", flat=True)) == [
        "acme-hk.test",
        "acme.test",
    ]
    page = _owner(personas).get(URL).content.decode()
    assert "s3cret-value" not in page and "acme-hk.test" in page


def test_an_empty_secret_keeps_the_saved_one(personas):
    client = _owner(personas)
    client.post(URL, _form())
    assert client.post(URL, _form(client_secret="", client_id="avia-2")).status_code == 302
    provider = IdentityProvider.objects.get(organization=personas.acme)
    assert provider.client_id == "avia-2"
    assert secret_decrypt(provider.client_secret_encrypted) == "s3cret-value"


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"issuer": "http://login.acme.test"}, "issuer", "must start with https://"),
        ({"email_domains": "not a domain"}, "email_domains", "is not an email domain"),
        ({"require_sso": "on"}, "break_glass_owner", "keeps signing in with a password"),
        ({"client_secret": ""}, "client_secret", "Enter the client secret"),
    ],
)
def test_bad_settings_are_refused_per_field_and_nothing_is_saved(
    personas, overrides, field, message
):
    response = _owner(personas).post(URL, _form(**overrides))

    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    assert not IdentityProvider.objects.exists()


def test_the_break_glass_owner_must_be_an_owner_of_this_organization(personas):
    response = _owner(personas).post(
        URL, _form(require_sso="on", break_glass_owner=personas.vic.pk)
    )
    assert response.status_code == 400
    assert "break_glass_owner" in response.context["form"].errors


def test_a_domain_vouched_for_by_another_organization_is_refused(personas):
    provider_configure(
        organization=personas.other,
        settings=ProviderSettings(
            issuer="https://login.other.test",
            client_id="avia",
            client_secret="x",
            email_domains=["acme-hk.test"],
            allow_join=False,
            default_role="viewer",
            require_sso=False,
            break_glass_owner_id=None,
        ),
    )

    response = _owner(personas).post(URL, _form())

    assert response.status_code == 400
    assert "already vouched for" in " ".join(response.context["form"].errors["email_domains"])
    assert VouchedDomain.objects.filter(domain="acme.test").count() == 0


def test_the_settings_nav_shows_single_sign_on_to_owners_only(personas):
    owner_page = _owner(personas).get("/accounts/orgs/acme-procurement/members/").content.decode()
    assert URL in owner_page
    viewer = Client()
    viewer.force_login(personas.vic)
    assert URL not in viewer.get("/accounts/orgs/acme-procurement/tokens/").content.decode()
