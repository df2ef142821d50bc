"""The probe cannot be aimed inside the network (issue 28, break 3): loopback, private,
link-local, unique-local, multicast and cloud metadata addresses are refused — in the vendor's
portal form, on the member's page, by `manage.py probe` and by the worker's client on the
address it actually connects to (so DNS rebinding cannot get round it) — unless the operator
lists their network in PROBE_ALLOWED_NETWORKS."""

from __future__ import annotations

import io
import ipaddress
import time

import httpx
import pytest
from django.core.management import CommandError, call_command

from core.errors import ServiceError
from core.outbound import OutboundPolicy, outbound_client, parse_networks
from probes.client import Budget, ChatClient
from probes.endpoint import ApiKey, ProbeInputError, endpoint_validate
from probes.models import ProbeSetup
from probes.services.setup import probe_setup_save
from tests.probes.conftest import make_v2_assessment, setup_fields
from tests.probes.test_portal import form_data, probe_page
from tests.probes.vendor import reference_vendor

INTERNAL = [
    ("https://127.0.0.1", "loopback"),
    ("https://127.8.9.10:8443", "loopback"),
    ("https://10.0.0.1", "private"),
    ("https://192.168.1.20", "private"),
    ("https://172.16.0.1", "private"),
    ("https://169.254.169.254", "cloud metadata"),
    ("https://169.254.1.1", "link-local"),
    ("https://[::1]", "loopback"),
    ("https://[fd00::1]", "unique-local"),
    ("https://[fd00:ec2::254]", "cloud metadata"),
    ("https://[fe80::1]", "link-local"),
    ("https://[::ffff:127.0.0.1]", "loopback"),
    ("https://0.0.0.0", "unspecified"),
    ("https://224.0.0.1", "multicast"),
    ("https://240.0.0.1", "reserved"),
    ("https://100.100.100.200", "cloud metadata"),
    ("https://localhost:8443", "loopback"),  # a name that resolves to loopback
]
STRICT = OutboundPolicy()


@pytest.fixture
def strict(settings):
    """Production's default: no network listed."""
    settings.PROBE_ALLOWED_NETWORKS = ()


@pytest.mark.parametrize(("url", "kind"), INTERNAL)
def test_internal_addresses_are_refused_with_a_clear_message(url, kind):
    with pytest.raises(ProbeInputError) as refused:
        endpoint_validate(url, allow_http=True, policy=STRICT)
    message = refused.value.errors["base_url"][0]
    assert f"({kind})" in message and "PROBE_ALLOWED_NETWORKS" in message


def test_a_metadata_host_name_is_refused_even_when_it_does_not_resolve():
    with pytest.raises(ProbeInputError) as refused:
        endpoint_validate("https://metadata.google.internal", allow_http=False, policy=STRICT)
    assert "cloud metadata service" in refused.value.errors["base_url"][0]


def test_a_name_resolving_to_an_internal_address_is_refused():
    resolver = OutboundPolicy(resolve=lambda host, port: [ipaddress.ip_address("10.1.2.3")])
    with pytest.raises(ProbeInputError) as refused:
        endpoint_validate("https://api.vendor.example", allow_http=False, policy=resolver)
    assert "resolves to 10.1.2.3" in refused.value.errors["base_url"][0]


def test_public_addresses_and_listed_networks_are_allowed():
    assert endpoint_validate("https://8.8.8.8", allow_http=False, policy=STRICT)
    allowed = OutboundPolicy(parse_networks(["127.0.0.0/8", "10.0.0.0/8", "fd00::/8"]))
    for url in ("https://127.0.0.1", "https://10.0.0.1", "https://[fd00::1]", "http://localhost"):
        assert endpoint_validate(url, allow_http=False, policy=allowed) == url
    # A listed network opens what it lists, nothing more.
    with pytest.raises(ProbeInputError):
        endpoint_validate("https://169.254.169.254", allow_http=False, policy=allowed)
    with pytest.raises(ProbeInputError):
        endpoint_validate("https://metadata.google.internal", allow_http=False, policy=allowed)


def test_plain_http_to_loopback_needs_only_the_allowed_networks():
    with pytest.raises(ProbeInputError):
        endpoint_validate("http://127.0.0.1:8401", allow_http=True, policy=STRICT)
    allowed = OutboundPolicy(parse_networks(["127.0.0.0/8"]))
    assert endpoint_validate("http://127.0.0.1:8401", allow_http=False, policy=allowed)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9",
        "https://10.0.0.1",
        "https://169.254.169.254",
        "https://[::1]",
        "https://[fd00::1]",
        "https://metadata.google.internal",
        "https://localhost",
    ],
)
def test_the_vendors_portal_form_refuses_internal_addresses(strict, client, consented, keys, url):
    _assessment, token = consented

    response = client.post(probe_page(token), form_data(keys, base_url=url))

    assert response.status_code == 400
    assert "PROBE_ALLOWED_NETWORKS" in response.content.decode()
    assert not ProbeSetup.objects.exists()


@pytest.mark.django_db
def test_the_members_set_up_refuses_internal_addresses(strict, catalog, personas, keys):
    assessment = make_v2_assessment(personas.acme, personas.ava)
    with pytest.raises(ServiceError) as refused:
        probe_setup_save(
            assessment=assessment,
            actor=personas.ava,
            **setup_fields(keys, base_url="https://169.254.169.254"),
        )
    assert "cloud metadata" in refused.value.errors["base_url"][0]
    assert not ProbeSetup.objects.exists()


def test_the_command_refuses_internal_addresses(strict, monkeypatch):
    monkeypatch.setenv("OUTBOUND_KEY_A", "sk-a-0123456789")
    monkeypatch.setenv("OUTBOUND_KEY_B", "sk-b-0123456789")
    with pytest.raises(CommandError) as refused:
        call_command(
            "probe",
            "--base-url=https://10.0.0.1",
            "--model=m",
            "--declared-context=1048576",
            "--key-a-env=OUTBOUND_KEY_A",
            "--key-b-env=OUTBOUND_KEY_B",
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
    assert "PROBE_ALLOWED_NETWORKS" in str(refused.value)


# -- on connecting: the address actually connected to ----------------------------------------------


class Rebinding:
    """A resolver that answers a public address first, then loopback: DNS rebinding."""

    def __init__(self) -> None:
        self.answers = [ipaddress.ip_address("93.184.216.34")]

    def __call__(self, host: str, port: int):
        answer = self.answers
        self.answers = [ipaddress.ip_address("127.0.0.1")]
        return answer


def test_dns_rebinding_is_refused_on_connecting(tmp_path):
    with reference_vendor(tmp_path, "launch-day") as vendor:
        port = int(vendor.base_url.rsplit(":", 1)[1])
        policy = OutboundPolicy(resolve=Rebinding())
        url = f"http://vendor.example:{port}"
        endpoint_validate(url, allow_http=True, policy=policy)  # public when entered...
        with outbound_client(policy) as client:
            with pytest.raises(httpx.ConnectError) as refused:
                client.get(url)  # ...loopback when connected to
        assert "127.0.0.1" in str(refused.value) and "loopback" in str(refused.value)


def test_the_workers_client_refuses_loopback_unless_listed(tmp_path):
    with reference_vendor(tmp_path, "launch-day") as vendor:

        def send(policy):
            client = ChatClient(
                base_url=vendor.base_url,
                model="glm-5.3",
                budget=Budget(100_000),
                rate_per_key=100,
                deadline=time.monotonic() + 30,
                outbound=policy,
            )
            with client:
                return client.complete(
                    key=ApiKey("sk-a-0123456789"),
                    tenant="A",
                    prompt="hello",
                    estimate_tokens=10,
                    max_tokens=5,
                )

        refused = send(OutboundPolicy())
        assert refused.status is None
        assert send(OutboundPolicy(parse_networks(["127.0.0.0/8"]))).status is not None


def test_webhook_deliveries_go_through_the_same_policy_on_connecting(settings):
    """Webhooks landed with their own copy of the check, at entry only: the delivering client
    connected anywhere. They use the one policy (core.outbound), with WEBHOOK_ALLOWED_NETWORKS."""
    from webhooks.destinations import http_client

    settings.WEBHOOK_ALLOWED_NETWORKS = []
    with http_client(timeout=2) as client, pytest.raises(httpx.ConnectError) as refused:
        client.post("http://127.0.0.1:9/hook", json={})
    assert "loopback" in str(refused.value)


def test_single_sign_on_goes_through_the_same_policy_on_connecting(settings):
    """Single sign-on called the issuer with httpx directly: an owner could aim the web server
    at any address. Its calls use the one policy, with SSO_ALLOWED_NETWORKS."""
    from sso.oidc import SsoRefused, discover

    settings.SSO_ALLOWED_NETWORKS = ()
    with pytest.raises(SsoRefused) as refused:
        discover("http://127.0.0.1:9")
    assert refused.value.code == "internal_address" and "loopback" in refused.value.message
