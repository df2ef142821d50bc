"""Consent before a membership binds an existing user (issue 28, break 7): another
organization's owner adding a user who already has an account creates an invitation that user
accepts or declines in the app, not a membership. And an organization's two-factor requirement
applies in that organization only."""

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts.models import Membership, MembershipInvitation
from accounts.two_factor import organization_require_two_factor
from tests.security.test_accounts import enrol

pytestmark = pytest.mark.django_db


def add_member(personas, email, role="viewer"):
    """Oscar, owner of Other Org, adds someone."""
    client = Client()
    client.force_login(personas.oscar)
    return client.post(
        reverse("accounts:members", args=[personas.other.slug]),
        {"email": email, "role": role, "language": "en"},
    )


def test_adding_a_user_of_another_organization_invites_them_instead(
    personas, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = add_member(personas, "vic@acme.test")

    assert response.status_code == 302
    assert not Membership.objects.filter(user=personas.vic, organization=personas.other).exists()
    invitation = MembershipInvitation.objects.get(user=personas.vic)
    assert (invitation.organization, invitation.role) == (personas.other, "viewer")
    (email,) = mail.outbox
    assert email.to == ["vic@acme.test"] and reverse("accounts:organizations") in email.body


def test_the_invited_user_accepts_in_the_app(personas):
    add_member(personas, "vic@acme.test", role="assessor")
    invitation = MembershipInvitation.objects.get(user=personas.vic)
    vic = Client()
    vic.force_login(personas.vic)
    page = vic.get(reverse("accounts:organizations")).content.decode()
    assert "Other Org" in page and "Accept" in page

    accepted = vic.post(reverse("accounts:invitation_respond", args=[invitation.pk, "accept"]))

    assert accepted.status_code == 302
    membership = Membership.objects.get(user=personas.vic, organization=personas.other)
    assert membership.role == "assessor"
    assert not MembershipInvitation.objects.exists()


def test_a_declined_invitation_binds_nothing(personas):
    add_member(personas, "vic@acme.test")
    invitation = MembershipInvitation.objects.get(user=personas.vic)
    vic = Client()
    vic.force_login(personas.vic)

    vic.post(reverse("accounts:invitation_respond", args=[invitation.pk, "decline"]))

    assert not Membership.objects.filter(user=personas.vic, organization=personas.other).exists()
    assert not MembershipInvitation.objects.exists()


def test_only_the_invited_user_can_answer_an_invitation(personas):
    add_member(personas, "vic@acme.test")
    invitation = MembershipInvitation.objects.get(user=personas.vic)
    rex = Client()
    rex.force_login(personas.rex)
    response = rex.post(reverse("accounts:invitation_respond", args=[invitation.pk, "accept"]))
    assert response.status_code == 404
    assert not Membership.objects.filter(organization=personas.other, user=personas.rex).exists()


def test_a_new_address_becomes_a_member_as_before(personas):
    add_member(personas, "newcomer@elsewhere.test")
    assert Membership.objects.filter(
        user__email="newcomer@elsewhere.test", organization=personas.other
    ).exists()


def test_another_organizations_two_factor_requirement_applies_there_only(personas):
    add_member(personas, "vic@acme.test")
    vic = Client()
    vic.force_login(personas.vic)
    invitation = MembershipInvitation.objects.get(user=personas.vic)
    vic.post(reverse("accounts:invitation_respond", args=[invitation.pk, "accept"]))
    enrol(personas.oscar)
    organization_require_two_factor(
        organization=personas.other, actor=personas.oscar, actor_verified=True, required=True
    )

    vic.post(reverse("accounts:switch_organization"), {"organization_id": personas.acme.pk})
    assert vic.get("/vendors/").status_code == 200  # Acme does not require it

    vic.post(reverse("accounts:switch_organization"), {"organization_id": personas.other.pk})
    forced = vic.get("/vendors/")
    assert forced.status_code == 302
    assert forced["Location"].startswith(reverse("accounts:two_factor"))
