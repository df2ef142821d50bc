"""Who reaches what: the token, its rate limit, and objects looked up within the link's
assessment only."""

import datetime as dt

import pytest
from django.utils import timezone

from assessments.models import Channel, EvidenceFile
from assessments.services.evidence import evidence_add
from assessments.services.vendor_links import vendor_link_issue, vendor_link_revoke
from tests.personas import member_of

from .conftest import log_upload, make_assessment, portal_url

pytestmark = pytest.mark.urls("tests.portal.urls")


def test_the_link_opens_the_landing_page(client, token):
    response = client.get(portal_url(token))
    assert response.status_code == 200
    page = response.content.decode()
    assert "Acme Procurement" in page
    assert "Cloud Inference Co" in page
    assert "2030" in page  # the due date
    for code in ("PRF", "CTX", "KV", "ISO", "CHG", "INC", "GOV"):
        assert portal_url(token, "section", code) in page
    assert "0 of 7" in page  # PRF: 7 required questions visible (PRF-08 waits for PRF-07)
    assert response["Cache-Control"].count("no-store") == 1
    assert "noindex" in response["X-Robots-Tag"]


def test_it_never_lists_or_opens_the_buyers_section(client, token):
    page = client.get(portal_url(token)).content.decode()
    assert portal_url(token, "section", "USE") not in page
    assert "Buyer&#x27;s intended use" not in page and "Buyer's intended use" not in page
    assert client.get(portal_url(token, "section", "USE")).status_code == 404


def test_an_unknown_section_is_404(client, token):
    assert client.get(portal_url(token, "section", "NOPE")).status_code == 404


def test_it_rejects_unknown_tokens_with_a_page_that_reveals_nothing(client, token):
    response = client.get(portal_url("x" * 43))
    assert response.status_code == 404
    page = response.content.decode()
    assert "Acme Procurement" not in page
    assert "This link does not work" in page


def test_it_rejects_revoked_links(client, link, token, personas):
    vendor_link_revoke(link=link, member=member_of(personas.ava), channel=Channel.WEB)
    assert client.get(portal_url(token)).status_code == 404


def test_it_rejects_expired_links(client, link, token):
    link.expires_at = timezone.now() - dt.timedelta(seconds=1)
    link.save(update_fields=["expires_at"])
    assert client.get(portal_url(token)).status_code == 404


def test_it_rate_limits_failed_token_attempts_per_client_ip(client, token):
    for _ in range(20):
        assert client.get(portal_url("not-a-token")).status_code == 404
    response = client.get(portal_url("not-a-token"))
    assert response.status_code == 429
    assert "Too many attempts" in response.content.decode()
    assert response["Retry-After"] == "600"
    # Over the limit, every unknown token is refused, but a valid link still opens: behind a
    # shared NAT address a scanner must not lock the vendors out.
    assert client.get(portal_url("another-guess")).status_code == 429
    assert client.get(portal_url(token)).status_code == 200
    # Another address is not affected.
    assert client.get(portal_url("not-a-token"), REMOTE_ADDR="198.51.100.7").status_code == 404


def test_it_counts_only_failures(client, token):
    for _ in range(25):
        assert client.get(portal_url(token)).status_code == 200
    for _ in range(19):
        client.get(portal_url("not-a-token"))
    assert client.get(portal_url(token)).status_code == 200


def test_it_honours_a_configured_limit(client, settings, db):
    settings.PORTAL_TOKEN_FAILURE_LIMIT = 3
    for _ in range(3):
        assert client.get(portal_url("bad")).status_code == 404
    assert client.get(portal_url("bad")).status_code == 429


def test_another_assessments_evidence_is_404(client, token, assessment, personas):
    other = make_assessment(personas.other, personas.oscar, vendor_name="Someone Else")
    evidence = evidence_add(
        assessment=other,
        question_code="CTX-08",
        upload=log_upload(),
        actor=personas.oscar,
        channel=Channel.WEB,
    )
    response = client.post(portal_url(token, "section", "CTX"), {"remove": evidence.pk})
    assert response.status_code == 404
    assert EvidenceFile.objects.filter(pk=evidence.pk).exists()


def test_a_second_link_to_the_same_assessment_sees_the_same_answers(client, assessment, personas):
    _, first = vendor_link_issue(
        assessment=assessment,
        contact_email="a@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    _, second = vendor_link_issue(
        assessment=assessment,
        contact_email="b@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    client.post(portal_url(first, "section", "PRF"), {"PRF-01": "Inference Cloud"})
    assert "Inference Cloud" in client.get(portal_url(second, "section", "PRF")).content.decode()


def test_post_only_pages_refuse_get(client, token):
    assert client.get(portal_url(token, "autosave", "CTX")).status_code == 405
    assert client.get(portal_url(token, "language")).status_code == 405
