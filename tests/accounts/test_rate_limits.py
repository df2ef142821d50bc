"""Rate limits on the emails anyone can make AVIA send (issue 28, break 6: thirty password resets
for one address in one second sent thirty emails).

Per address, counted in the outbox (the database): a reset or an invitation to one address is
written at most RESET_LIMIT_PER_ADDRESS / INVITATION_LIMIT_PER_ADDRESS times an hour, cache or
no cache. Per client address, counted in the cache: a visitor asking for many addresses' resets
is refused with 429; with the cache down that count is skipped (fails open) — the per-address
limit in the database still holds, so nobody's inbox can be flooded.
"""

import pytest
from django.test import Client
from django.urls import reverse

from outbox.models import EmailKind, OutboundEmail

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager(settings, django_capture_on_commit_callbacks):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the worker's part, here
    return lambda: django_capture_on_commit_callbacks(execute=True)


def resets_to(address: str) -> int:
    return OutboundEmail.objects.filter(kind=EmailKind.PASSWORD_RESET, to_address=address).count()


def ask_reset(address: str, client_address: str):
    return Client(REMOTE_ADDR=client_address).post(
        reverse("accounts:password_reset"), {"email": address}
    )


def test_thirty_resets_for_one_address_write_only_the_limit(personas, eager, settings):
    with eager():
        answers = [ask_reset("vic@acme.test", f"198.51.100.{n}").status_code for n in range(30)]
    assert set(answers) == {302}  # the same answer every time: nothing tells the limit
    assert resets_to("vic@acme.test") == settings.RESET_LIMIT_PER_ADDRESS


def test_the_per_address_limit_holds_with_the_cache_down(personas, eager, settings, dead_cache):
    with eager():
        answers = [ask_reset("vic@acme.test", "198.51.100.7").status_code for _ in range(30)]
    assert set(answers) == {302}
    assert resets_to("vic@acme.test") == settings.RESET_LIMIT_PER_ADDRESS


def test_one_client_asking_for_many_addresses_is_refused_after_the_limit(personas, settings):
    limit = settings.RESET_LIMIT_PER_CLIENT
    answers = [ask_reset(f"user{n}@acme.test", "203.0.113.9").status_code for n in range(limit)]
    assert set(answers) == {302}
    refused = ask_reset("vic@acme.test", "203.0.113.9")
    assert refused.status_code == 429
    assert "Too many password reset requests" in refused.content.decode()
    assert ask_reset("vic@acme.test", "203.0.113.10").status_code == 302  # another client


def invite(client, personas, email):
    return client.post(
        reverse("accounts:members", args=[personas.acme.slug]),
        {"email": email, "role": "viewer", "language": "en"},
    )


def test_invitations_of_one_organization_are_limited(client, personas, settings):
    settings.INVITATION_LIMIT_PER_ORGANIZATION = 5
    client.force_login(personas.alice)
    already = OutboundEmail.objects.filter(
        kind=EmailKind.MEMBER_INVITATION, organization=personas.acme
    ).count()  # the personas' own invitations
    answers = [invite(client, personas, f"new{n}@acme.test").status_code for n in range(8)]
    sent = OutboundEmail.objects.filter(
        kind=EmailKind.MEMBER_INVITATION, organization=personas.acme
    ).count()
    assert sent == max(already, 5)
    refused = invite(client, personas, "one-more@acme.test")
    assert refused.status_code == 400
    assert "Too many invitations" in refused.content.decode()
    assert answers.count(400) >= 8 - (5 - min(already, 5))


def test_inviting_one_address_again_and_again_is_limited(client, personas, settings):
    from accounts.models import Membership
    from accounts.services import membership_remove

    client.force_login(personas.alice)
    for _ in range(settings.INVITATION_LIMIT_PER_ADDRESS):
        assert invite(client, personas, "target@elsewhere.test").status_code == 302
        membership_remove(
            membership=Membership.objects.get(user__email="target@elsewhere.test"),
            actor=personas.alice,
        )
    refused = invite(client, personas, "target@elsewhere.test")
    assert refused.status_code == 400
    assert "Too many invitations" in refused.content.decode()
    to_target = OutboundEmail.objects.filter(to_address="target@elsewhere.test").count()
    assert to_target == settings.INVITATION_LIMIT_PER_ADDRESS
