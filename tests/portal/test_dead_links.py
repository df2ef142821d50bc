"""A link that no longer works: the vendor learns whose questionnaire it was and how to ask
for a new link, and nothing of the assessment; a token that never named a link learns nothing."""

import datetime as dt

import pytest
from django.utils import timezone

from assessments.models import Channel
from assessments.services.vendor_links import vendor_link_issue, vendor_link_revoke
from tests.personas import member_of

from .conftest import portal_url

pytestmark = pytest.mark.urls("tests.portal.urls")

# What only the assessment's readers may see: the vendor, the questionnaire, the due date.
SECRETS = (
    "Cloud Inference Co",
    "Tenant Isolation Questionnaire",
    "2030",
    "kv-team@cloud-inference.test",
)


def expire(link) -> None:
    link.expires_at = timezone.now() - dt.timedelta(seconds=1)
    link.save(update_fields=["expires_at"])


def assert_reveals_nothing(page: str) -> None:
    for secret in SECRETS:
        assert secret not in page, secret


def test_an_expired_link_names_the_buyer_and_who_to_ask_for_a_new_one(
    client, link, token, personas
):
    expire(link)
    response = client.get(portal_url(token))
    assert response.status_code == 404
    assert response["Cache-Control"].count("no-store") == 1
    page = response.content.decode()
    assert "This link has expired" in page
    assert "Acme Procurement" in page
    assert personas.ava.email in page  # who sent it: where to ask for a new one
    assert "ask for a new link" in page
    assert_reveals_nothing(page)


def test_a_replaced_link_says_a_newer_one_was_sent(client, assessment, link, token, personas):
    vendor_link_issue(
        assessment=assessment,
        contact_email=link.contact_email,
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    page = client.get(portal_url(token, "section", "PRF")).content.decode()
    assert "A newer link to Acme Procurement" in page
    assert_reveals_nothing(page)


def test_a_revoked_link_names_the_buyer(client, link, token, personas):
    vendor_link_revoke(link=link, member=member_of(personas.ava), channel=Channel.WEB)
    page = client.get(portal_url(token, "review")).content.decode()
    assert "Acme Procurement withdrew this link" in page
    assert_reveals_nothing(page)


def test_a_dead_link_speaks_the_links_language(client, assessment, personas):
    link, token = vendor_link_issue(
        assessment=assessment,
        contact_email="hk@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
        language="zh-hant",
    )
    expire(link)
    response = client.get(portal_url(token))
    assert response["Content-Language"] == "zh-hant"
    assert "此連結已過期" in response.content.decode()


def test_a_token_that_never_named_a_link_learns_nothing(client, token):
    response = client.get(portal_url("x" * 43))
    assert response.status_code == 404
    page = response.content.decode()
    assert "Acme Procurement" not in page
    assert_reveals_nothing(page)
    assert "This link does not work" in page
    assert "ask the person who sent you the link for a new one" in page
