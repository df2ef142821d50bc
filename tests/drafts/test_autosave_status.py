"""The autosave's status line ("Kept as a draft at 14:03…", or what is wrong) is announced to
screen-reader users: it is a live region that stays in the page, and each autosave swaps only
its text (a live region that is itself replaced is not announced)."""

import pytest
from django.urls import reverse

from assessments.models import Channel
from assessments.services.vendor_links import vendor_link_issue
from tests.html_elements import Elements
from tests.personas import member_of
from tests.web.conftest import make_draft

pytestmark = pytest.mark.django_db


def elements(response) -> Elements:
    page = Elements()
    page.feed(response.content.decode())
    return page


def assert_status_stays(page_response, autosave_response) -> None:
    page = elements(page_response)
    (form,) = [e for e in page.all if e["tag"] == "form" and "hx-post" in e["attrs"]]
    assert form["attrs"].get("hx-swap") == "none", form["attrs"]  # nothing replaced whole
    assert page.by_id("draft-status")["attrs"].get("role") == "status"
    status = elements(autosave_response).by_id("draft-status")
    assert status["attrs"].get("hx-swap-oob") == "innerHTML"
    assert "Kept as a draft" in status["text"]


@pytest.fixture
def token(catalog, personas) -> str:
    """The private link to a fresh draft of Acme, as its vendor contact got it."""
    _link, token = vendor_link_issue(
        assessment=make_draft(personas),
        contact_email="kv-team@cloud-inference.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    return token


def test_the_portal_autosave_swaps_only_the_text_of_its_status_line(client, token):
    page = client.get(reverse("portal:section", args=[token, "CTX"]))
    saved = client.post(
        reverse("portal:autosave", args=[token, "CTX"]), {"CTX-01": "1M"}, HTTP_HX_REQUEST="true"
    )
    assert saved.status_code == 200
    assert_status_stays(page, saved)


def test_the_member_autosave_swaps_only_the_text_of_its_status_line(client, catalog, personas):
    draft = make_draft(personas)
    client.force_login(personas.ava)
    page = client.get(reverse("assessments:edit", args=[draft.pk]))
    saved = client.post(
        reverse("assessments:edit_autosave", args=[draft.pk]),
        {"USE-03": "abc"},
        HTTP_HX_REQUEST="true",
    )
    assert saved.status_code == 200
    assert_status_stays(page, saved)


def test_the_autosave_updates_only_draft_markers_the_page_has(client, token):
    """A question not shown (not applicable) has no marker on the page: the autosave sends
    none for it (htmx would log an error for each marker it cannot place)."""
    page = elements(client.get(reverse("portal:section", args=[token, "CTX"])))
    saved = elements(
        client.post(
            reverse("portal:autosave", args=[token, "CTX"]),
            {"CTX-01": "1M"},
            HTTP_HX_REQUEST="true",
        )
    )

    def markers(parsed):
        return {
            e["attrs"]["id"] for e in parsed.all if "draft-marker" in e["attrs"].get("class", "")
        }

    assert markers(saved) and markers(saved) <= markers(page), markers(saved) - markers(page)


def test_the_status_line_says_which_questions_an_answer_brought_or_took_away(client, token):
    """The questions are shown or hidden in place when an answer changes which are asked
    (KV-04 "yes" asks KV-05); a screen-reader user hears which, from the status line."""
    url = reverse("portal:autosave", args=[token, "KV"])
    shown = client.post(url, {"KV-04": "yes"}, HTTP_HX_REQUEST="true")
    assert '<template data-question="KV-05">' in shown.content.decode()
    status = " ".join(elements(shown).by_id("draft-status")["text"].split())
    assert "Now asked because of your answer: KV-05." in status, status
    hidden = client.post(url, {"KV-04": "no"}, HTTP_HX_REQUEST="true")
    status = " ".join(elements(hidden).by_id("draft-status")["text"].split())
    assert "No longer asked: KV-05." in status, status
    unchanged = client.post(url, {"KV-04": "no"}, HTTP_HX_REQUEST="true")
    assert "asked" not in elements(unchanged).by_id("draft-status")["text"]
