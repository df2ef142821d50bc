"""English / 繁體中文: the link's language by default, switched per link in the session."""

import pytest

from assessments.models import Channel
from assessments.services.vendor_links import vendor_link_issue
from tests.personas import member_of

from .conftest import portal_url

pytestmark = pytest.mark.urls("tests.portal.urls")


def test_it_starts_in_the_links_language(client, assessment, personas):
    _, token = vendor_link_issue(
        assessment=assessment,
        contact_email="hk@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
        language="zh-hant",
    )
    response = client.get(portal_url(token))
    assert "AI 推論服務租戶隔離問卷" in response.content.decode()
    assert response["Content-Language"] == "zh-hant"
    assert 'lang="zh-Hant-HK"' in response.content.decode()


def test_switching_shows_the_catalogues_traditional_chinese_text(client, token, assessment):
    spec = assessment.questionnaire.spec
    section_url = portal_url(token, "section", "PRF")
    english = client.get(section_url).content.decode()
    assert spec.questions["PRF-01"].text.en in english
    response = client.post(
        portal_url(token, "language"), {"language": "zh-hant", "next": section_url}
    )
    assert response.status_code == 302 and response["Location"] == section_url
    chinese = client.get(section_url).content.decode()
    assert spec.questions["PRF-01"].text.zh_hant in chinese
    assert spec.questions["PRF-03"].options[0].label.zh_hant in chinese
    assert spec.questions["PRF-01"].text.en not in chinese
    client.post(portal_url(token, "language"), {"language": "en", "next": section_url})
    assert spec.questions["PRF-01"].text.en in client.get(section_url).content.decode()


def test_the_choice_is_kept_per_link(client, token, assessment, personas):
    _, other_token = vendor_link_issue(
        assessment=assessment,
        contact_email="other@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    client.post(portal_url(token, "language"), {"language": "zh-hant"})
    assert client.get(portal_url(token))["Content-Language"] == "zh-hant"
    assert client.get(portal_url(other_token))["Content-Language"] == "en"


def test_it_only_redirects_within_the_link(client, token):
    for target in ("https://evil.test/", "//evil.test/", "/v/another-token/"):
        response = client.post(portal_url(token, "language"), {"language": "en", "next": target})
        assert response["Location"] == portal_url(token)


def test_it_ignores_unknown_languages(client, token):
    client.post(portal_url(token, "language"), {"language": "fr"})
    assert client.get(portal_url(token))["Content-Language"] == "en"


def test_the_choice_lasts_on_the_link_beyond_the_session(client, token, link):
    """Chosen once, the language is the link's: another browser (a new session) opens the link
    in it too."""
    client.post(portal_url(token, "language"), {"language": "zh-hant"})
    client.logout()  # a new session: the cookie is gone
    client.cookies.clear()
    assert client.get(portal_url(token))["Content-Language"] == "zh-hant"
    link.refresh_from_db()
    assert link.language == "zh-hant"
