"""A member is the provider's person (`iss`, `sub`), not an email address: the first single
sign-on binds the pair to the user, later sign-ins are matched by it, and a token whose address
names a member bound to another subject is refused (a provider that reassigns an address to
someone else must not sign them in as the member)."""

from __future__ import annotations

import logging

import pytest
from django.test import Client

from accounts.models import User
from sso.models import SubjectBinding
from sso.oidc import SsoRefused
from sso.services import sign_in_member

from .conftest import configure, sso_sign_in

pytestmark = pytest.mark.django_db


def _bound(user: User) -> list[tuple[str, str]]:
    return list(SubjectBinding.objects.filter(user=user).values_list("issuer", "subject"))


def test_the_first_sign_in_binds_the_providers_subject(personas, oidc_providers):
    good = oidc_providers["good"]
    configure(personas.acme, good)

    response, _ = sso_sign_in(Client(), "vic@acme.test")

    assert response.status_code == 302
    assert _bound(personas.vic) == [(good.issuer, "user-vic@acme.test")]
    again, _ = sso_sign_in(Client(), "vic@acme.test")  # matched by the pair, bound once
    assert again.status_code == 302 and SubjectBinding.objects.count() == 1


def test_a_joining_user_is_bound_too(personas, oidc_providers):
    good = oidc_providers["good"]
    configure(personas.acme, good, allow_join=True)

    sso_sign_in(Client(), "nina@acme.test")

    assert _bound(User.objects.get(email="nina@acme.test")) == [
        (good.issuer, "user-nina@acme.test")
    ]


def test_later_sign_ins_are_matched_by_subject_not_by_address(personas, oidc_providers):
    """Vic's address at the provider changed to victor@; the provider's `sub` did not."""
    good = oidc_providers["good"]
    configure(personas.acme, good)
    SubjectBinding.objects.create(
        user=personas.vic, issuer=good.issuer, subject="user-victor@acme.test"
    )
    client = Client()

    response, _ = sso_sign_in(client, "victor@acme.test")

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(personas.vic.pk)
    assert not User.objects.filter(email="victor@acme.test").exists()


def test_an_address_of_a_member_bound_to_another_subject_is_refused(
    personas, oidc_providers, caplog
):
    """The provider gave vic@ to another person (another `sub`) after Vic's first sign-in."""
    good = oidc_providers["good"]
    configure(personas.acme, good)
    SubjectBinding.objects.create(
        user=personas.vic, issuer=good.issuer, subject="user-the-first-vic"
    )
    client = Client()

    with caplog.at_level(logging.WARNING, logger="sso.services"):
        response, _ = sso_sign_in(client, "vic@acme.test")

    assert response.status_code == 403
    assert response.context["refusal_code"] == "subject_mismatch"
    assert "belongs to another person at your organization" in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert _bound(personas.vic) == [(good.issuer, "user-the-first-vic")]
    assert "user-vic@acme.test" in caplog.text and str(personas.vic.pk) in caplog.text


@pytest.mark.parametrize(
    ("claims", "code"),
    [
        ({"email": "vic@acme.test", "email_verified": True}, "no_subject"),
        ({"sub": "", "email": "vic@acme.test", "email_verified": True}, "no_subject"),
        ({"sub": "s" * 256, "email": "vic@acme.test", "email_verified": True}, "no_subject"),
        # email_verified is required, sent or not: the address binds the first sign-in.
        ({"sub": "user-1", "email": "vic@acme.test"}, "email_not_verified"),
        (
            {"sub": "user-1", "email": "vic@acme.test", "email_verified": "true"},
            "email_not_verified",
        ),
    ],
)
def test_a_token_without_a_subject_or_a_verified_address_is_refused(personas, claims, code):
    provider = configure(personas.acme, "https://login.acme.test", allow_join=True)

    with pytest.raises(SsoRefused) as refused:
        sign_in_member(provider=provider, claims=claims)

    assert refused.value.code == code
    assert not SubjectBinding.objects.exists()
