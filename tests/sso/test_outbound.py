"""Single sign-on cannot be aimed inside the network (issue 28: the probe's outbound-address
policy applies to every outbound call). The issuer an owner enters, and the token and key
endpoints its discovery document names, are refused at loopback, private, link-local and cloud
metadata addresses unless the operator lists their network in SSO_ALLOWED_NETWORKS, when the
issuer is saved, when a sign-in starts and on the address actually connected to."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest
from django.test import Client

from core.outbound import parse_networks
from sso.models import IdentityProvider
from tests.security.test_outbound_policy import Rebinding

from .conftest import Provider, configure, provider_leg
from .test_settings import URL, _form, _owner

pytestmark = pytest.mark.django_db

INTERNAL_ISSUERS = [
    ("https://127.0.0.1", "(loopback)"),
    ("https://169.254.169.254", "(cloud metadata)"),
    ("https://10.0.0.1", "(private)"),
    ("https://metadata.google.internal", "cloud metadata service"),
]


@pytest.fixture
def strict(settings):
    """Production's default: no network listed."""
    settings.SSO_ALLOWED_NETWORKS = ()


def _refusal(response) -> str:  # noqa: ANN001
    assert response.status_code == 403, response.status_code
    return response.context["refusal_code"]


@pytest.mark.parametrize(("issuer", "reason"), INTERNAL_ISSUERS)
def test_an_owner_cannot_save_an_issuer_at_an_internal_address(strict, personas, issuer, reason):
    response = _owner(personas).post(URL, _form(issuer=issuer))

    assert response.status_code == 400
    message = " ".join(response.context["form"].errors["issuer"])
    assert reason in message and "SSO_ALLOWED_NETWORKS" in message
    assert not IdentityProvider.objects.exists()


def test_the_issuers_refusal_is_in_traditional_chinese(strict, personas):
    client = _owner(personas)
    client.cookies["django_language"] = "zh-hant"

    response = client.post(URL, _form(issuer="https://169.254.169.254"))

    assert response.status_code == 400
    message = " ".join(response.context["form"].errors["issuer"])
    assert "解析為內部位址 169.254.169.254" in message and "SSO_ALLOWED_NETWORKS" in message
    assert not IdentityProvider.objects.exists()


def test_the_operator_setting_lets_a_provider_inside_the_network_be_saved(settings, personas):
    settings.SSO_ALLOWED_NETWORKS = parse_networks(["10.20.0.0/16"])

    saved = _owner(personas).post(URL, _form(issuer="http://10.20.0.5:8080/realms/acme"))
    outside = _owner(personas).post(URL, _form(issuer="https://10.30.0.5/realms/acme"))

    assert saved.status_code == 302
    assert outside.status_code == 400 and "(private)" in str(outside.context["form"].errors)
    assert IdentityProvider.objects.get().issuer == "http://10.20.0.5:8080/realms/acme"


def test_a_sign_in_whose_issuer_is_now_internal_is_refused(settings, personas, oidc_providers):
    """Saved while the operator allowed loopback; the setting has changed since."""
    configure(personas.acme, oidc_providers["good"])
    settings.SSO_ALLOWED_NETWORKS = ()
    client = Client()

    response = client.post("/accounts/sso/", {"email": "vic@acme.test"})

    assert _refusal(response) == "internal_address"
    page = response.content.decode()
    assert "127.0.0.1" in page and "loopback" in page and "SSO_ALLOWED_NETWORKS" in page
    assert "_auth_user_id" not in client.session


def test_the_callback_does_not_call_an_issuer_that_became_internal(
    settings, personas, oidc_providers
):
    configure(personas.acme, oidc_providers["good"])
    client = Client()
    start = client.post("/accounts/sso/", {"email": "vic@acme.test"})
    back = urlsplit(provider_leg(start.context["provider_url"]))
    settings.SSO_ALLOWED_NETWORKS = ()

    response = client.get(f"{back.path}?{back.query}")

    assert _refusal(response) == "internal_address"
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize(
    ("provider", "address"),
    [("internal_token", "169.254.169.254"), ("internal_jwks", "10.0.0.1")],
)
def test_a_discovery_document_naming_internal_endpoints_is_refused(
    personas, oidc_providers, provider, address
):
    """The issuer is allowed (loopback, listed); the endpoints its document names are not."""
    configure(personas.acme, oidc_providers[provider])

    response = Client().post("/accounts/sso/", {"email": "vic@acme.test"})

    assert _refusal(response) == "internal_address"
    assert address in response.content.decode()


def test_dns_rebinding_is_refused_on_connecting(strict, personas, oidc_providers, monkeypatch):
    """A name that resolves to a public address when the owner saves it, and to the provider on
    127.0.0.1 when a sign-in calls it."""
    good = oidc_providers["good"]
    port = int(good.issuer.rsplit(":", 1)[1])
    rebinding, real_getaddrinfo = Rebinding(), socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if host != "idp.rebinding.test":
            return real_getaddrinfo(host, *args, **kwargs)
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", (str(address), port))
            for address in rebinding(host, port)
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    configure(personas.acme, Provider(f"https://idp.rebinding.test:{port}", good.process))

    response = Client().post("/accounts/sso/", {"email": "vic@acme.test"})

    assert _refusal(response) == "internal_address"
    page = response.content.decode()
    assert "resolves to 127.0.0.1" in page and "loopback" in page
