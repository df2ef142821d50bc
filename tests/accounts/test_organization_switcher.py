import pytest
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.db import SessionStore
from django.template.loader import render_to_string
from django.test import RequestFactory

from accounts.context_processors import organization
from tests.personas import join

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.accounts.urls")]


def request_for(user):
    request = RequestFactory().get("/somewhere/")
    request.user = user
    request.session = SessionStore()
    return request


def test_the_switcher_lists_the_users_organizations_with_the_current_one_selected(personas):
    join(personas.other, personas.ava, "viewer", personas.oscar)
    request = request_for(personas.ava)
    request.session["current_org_id"] = personas.other.pk

    html = render_to_string(
        "accounts/_organization_switcher.html", organization(request), request=request
    )

    assert 'action="/accounts/switch/"' in html
    assert "csrfmiddlewaretoken" in html
    assert f'<option value="{personas.other.pk}" selected>Other Org</option>' in html
    assert f'<option value="{personas.acme.pk}">Acme Procurement</option>' in html
    assert 'name="next" value="/somewhere/"' in html


def test_anonymous_visitors_get_no_switcher(personas):
    request = request_for(AnonymousUser())
    assert organization(request) == {}
    html = render_to_string(
        "accounts/_organization_switcher.html", organization(request), request=request
    )
    assert html.strip() == ""
