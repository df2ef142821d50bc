"""English and Traditional Chinese: the header switch, the member's saved preference, and pages,
catalogue texts and dates in the chosen language."""

import pytest
from django.conf import settings
from django.urls import reverse

from accounts.models import User

pytestmark = pytest.mark.django_db

SWITCH = reverse("accounts:set_language")


def test_switching_saves_the_members_preference_and_sets_the_cookie(client, personas, catalog):
    client.force_login(personas.ava)
    response = client.post(SWITCH, {"language": "zh-hant", "next": "/vendors/"})
    assert response.status_code == 302 and response["Location"] == "/vendors/"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hant"
    assert User.objects.get(pk=personas.ava.pk).preferred_language == "zh-hant"
    page = client.get(reverse("assessments:dashboard"))
    assert page["Content-Language"] == "zh-hant"
    assert 'lang="zh-Hant-HK"' in page.content.decode()


def test_the_saved_preference_applies_on_a_new_browser_after_signing_in(client, personas, catalog):
    User.objects.filter(pk=personas.vic.pk).update(preferred_language="zh-hant")
    client.force_login(User.objects.get(pk=personas.vic.pk))
    page = client.get(reverse("assessments:dashboard"))
    assert page["Content-Language"] == "zh-hant"
    assert 'lang="zh-Hant-HK"' in page.content.decode()
    # remembered for the pages of other apps too, through Django's language cookie
    assert page.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hant"


def test_a_choice_made_on_this_browser_wins_over_the_saved_preference(client, personas, catalog):
    User.objects.filter(pk=personas.vic.pk).update(preferred_language="zh-hant")
    client.force_login(User.objects.get(pk=personas.vic.pk))
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    page = client.get(reverse("assessments:dashboard"))
    assert page["Content-Language"] == "en"


def test_anonymous_visitors_switch_with_the_cookie_only(client, personas):
    response = client.post(SWITCH, {"language": "zh-hant", "next": "/accounts/login/"})
    assert response.status_code == 302
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hant"
    assert not User.objects.filter(preferred_language="zh-hant").exists()


@pytest.mark.parametrize("language", ["fr", "", "zh-hant'><script>"])
def test_an_unknown_language_changes_nothing(client, personas, language):
    client.force_login(personas.ava)
    response = client.post(SWITCH, {"language": language, "next": "/"})
    assert response.status_code == 302
    assert User.objects.get(pk=personas.ava.pk).preferred_language == "en"


def test_it_never_redirects_off_site(client, personas):
    client.force_login(personas.ava)
    response = client.post(SWITCH, {"language": "en", "next": "https://evil.test/"})
    assert response.status_code == 302 and "evil.test" not in response["Location"]


def test_switching_needs_a_post(client, personas):
    client.force_login(personas.ava)
    assert client.get(SWITCH, {"language": "zh-hant"}).status_code == 405


def test_the_header_switch_posts_here(client, personas, catalog):
    client.force_login(personas.ava)
    body = client.get(reverse("assessments:dashboard")).content.decode()
    assert f'action="{SWITCH}"' in body
    assert 'value="zh-hant" lang="zh-Hant-HK"' in body


def test_catalogue_texts_and_dates_in_traditional_chinese(client, personas, scored):
    client.force_login(personas.vic)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hant"
    page = client.get(reverse("assessments:detail", args=[scored.pk])).content.decode()
    spec = scored.questionnaire.spec
    assert spec.title.zh_hant in page
    assert spec.questions["PRF-03"].text.zh_hant in page
    assert spec.questions["PRF-03"].options[0].label.zh_hant in page  # the answer's label
    assert "2030年9月30日" in page  # the due date
    assert "已評分" in page  # the status, from the existing translations
