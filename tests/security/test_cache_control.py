"""Member pages, API answers and the vendor portal carry `Cache-Control: private, no-store`: a
shared proxy or the browser's disk cache must never keep an organization's assessments (issue
28). Static files stay cacheable."""

import pytest
from django.test import Client

from assessments.models import Channel
from assessments.services.vendor_links import vendor_link_issue
from tests.personas import member_of

pytestmark = pytest.mark.django_db


def private_no_store(response) -> bool:
    directives = {d.strip() for d in response.get("Cache-Control", "").split(",")}
    return {"private", "no-store"} <= directives


def test_member_pages_are_private_and_not_stored(client, personas, answered):
    client.force_login(personas.ava)
    for path in ("/", "/vendors/", f"/assessments/{answered.pk}/", "/assessments/new/"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert private_no_store(response), (path, response.get("Cache-Control"))


def test_api_answers_are_private_and_not_stored(personas, token_client, answered):
    client = token_client(personas.ava, personas.acme)
    for path in ("/api/v1/vendors/", f"/api/v1/assessments/{answered.pk}/", "/api/v1/nowhere/"):
        response = client.get(path)
        assert private_no_store(response), (path, response.get("Cache-Control"))


def test_the_vendor_portal_is_private_and_not_stored(personas, answered):
    _link, token = vendor_link_issue(
        assessment=answered,
        contact_email="vendor@inferno.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    response = Client().get(f"/v/{token}/")
    assert response.status_code == 200
    assert private_no_store(response)


def test_static_files_stay_cacheable(settings):
    settings.WHITENOISE_USE_FINDERS = True  # served from static/, as without collectstatic
    settings.WHITENOISE_AUTOREFRESH = True
    response = Client().get("/static/avia.css")
    assert response.status_code == 200
    assert "no-store" not in response.get("Cache-Control", "")
