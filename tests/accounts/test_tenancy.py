import pytest
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.db import SessionStore
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.test import RequestFactory

from accounts.models import Membership, User
from accounts.services import api_token_create, membership_remove
from accounts.tenancy import (
    OrgContext,
    org_context_for,
    org_context_for_request,
    switch_organization,
)
from tests.personas import join

pytestmark = pytest.mark.django_db


def request_for(user, session_org_id=None):
    request = RequestFactory().get("/")
    request.user = user
    request.session = SessionStore()
    if session_org_id is not None:
        request.session["current_org_id"] = session_org_id
    return request


@pytest.fixture
def consultant(personas):
    """ava, assessor at Acme, also a viewer at Other Org (joined later)."""
    join(personas.other, personas.ava, "viewer", personas.oscar)
    return personas.ava


def test_a_user_with_no_choice_yet_acts_in_their_first_organization(personas, consultant):
    context = org_context_for_request(request_for(consultant))
    assert context.organization == personas.acme
    assert context.role == "assessor"


def test_the_session_choice_wins_over_the_first_membership(personas, consultant):
    context = org_context_for_request(request_for(consultant, personas.other.pk))
    assert context.organization == personas.other
    assert context.role == "viewer"
    assert not context.can("edit_assessment")


def test_a_stale_choice_for_an_organization_the_user_left_is_ignored(personas, consultant):
    membership_remove(
        membership=Membership.objects.get(user=consultant, organization=personas.other),
        actor=consultant,
    )
    context = org_context_for_request(request_for(consultant, personas.other.pk))
    assert context.organization == personas.acme


def test_a_choice_of_another_users_organization_is_ignored(personas):
    context = org_context_for_request(request_for(personas.vic, personas.other.pk))
    assert context.organization == personas.acme


def test_a_garbled_session_value_is_ignored(personas):
    context = org_context_for_request(request_for(personas.vic, "not-a-number"))
    assert context.organization == personas.acme


def test_anonymous_users_and_users_without_membership_have_no_context(personas):
    loner = User.objects.create_user(email="loner@example.test")
    assert org_context_for_request(request_for(AnonymousUser())) is None
    assert org_context_for_request(request_for(loner)) is None


def test_switching_stores_the_choice_in_the_session(personas, consultant):
    request = request_for(consultant)
    context = switch_organization(request=request, organization_id=personas.other.pk)
    assert context.organization == personas.other
    assert request.session["current_org_id"] == personas.other.pk
    assert org_context_for_request(request).organization == personas.other


def test_switching_to_an_organization_you_are_not_in_is_404(personas):
    request = request_for(personas.ava)
    with pytest.raises(Http404):
        switch_organization(request=request, organization_id=personas.other.pk)
    assert "current_org_id" not in request.session


def test_switching_to_a_missing_organization_is_the_same_404(personas):
    with pytest.raises(Http404):
        switch_organization(request=request_for(personas.ava), organization_id=999_999)


def test_a_token_authenticated_request_cannot_switch(personas):
    token, _key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    request = request_for(personas.ava)
    request.auth = token
    with pytest.raises(PermissionDenied):
        switch_organization(request=request, organization_id=personas.acme.pk)


def test_the_context_for_a_url_slug_is_404_for_outsiders(personas):
    assert org_context_for(user=personas.vic, organization_slug="acme-procurement").role == (
        "viewer"
    )
    with pytest.raises(Http404):
        org_context_for(user=personas.oscar, organization_slug="acme-procurement")
    with pytest.raises(Http404):
        org_context_for(user=personas.oscar, organization_slug="no-such-org")


def test_require_raises_permission_denied_for_missing_capabilities(personas):
    context = org_context_for(user=personas.vic, organization_slug="acme-procurement")
    assert isinstance(context, OrgContext)
    context.require("view")
    with pytest.raises(PermissionDenied):
        context.require("manage_members")


# -- one read per request, never a stale one ---------------------------------------------------


def test_a_second_question_in_the_same_request_reads_nothing(
    personas, consultant, django_assert_num_queries
):
    request = request_for(consultant, personas.other.pk)
    first = org_context_for_request(request)
    with django_assert_num_queries(0):
        assert org_context_for_request(request) is first


def test_switching_within_a_request_is_seen_by_the_next_question(personas, consultant):
    request = request_for(consultant)
    assert org_context_for_request(request).organization == personas.acme

    switch_organization(request=request, organization_id=personas.other.pk)

    assert org_context_for_request(request).organization == personas.other


def test_another_user_signed_in_within_a_request_gets_their_own_context(personas, consultant):
    request = request_for(consultant, personas.other.pk)
    assert org_context_for_request(request).role == "viewer"

    request.user = personas.oscar
    context = org_context_for_request(request)

    assert (context.user, context.organization) == (personas.oscar, personas.other)
    request.user = AnonymousUser()
    assert org_context_for_request(request) is None


def test_an_api_request_acts_in_its_tokens_organization_whatever_the_django_request_knew(
    personas, consultant
):
    from rest_framework.request import Request

    django_request = request_for(consultant, personas.acme.pk)
    assert org_context_for_request(django_request).organization == personas.acme
    token, _key = api_token_create(user=consultant, organization=personas.other, name="ci")
    api_request = Request(django_request)
    api_request._user, api_request._auth = consultant, token  # as DRF's authentication sets them

    context = org_context_for_request(api_request)

    assert (context.organization, context.role) == (personas.other, "viewer")
