"""Login lockout that a guesser cannot turn into a lockout of the owner (issue 28): failures
lock the (account, client address) pair, never the account for every address, and a client
address that fails on many accounts is stopped across them."""

import pytest
from django.contrib.auth import SESSION_KEY
from django.test import Client

from tests.personas import PASSWORD

pytestmark = pytest.mark.django_db
LOGIN = "/accounts/login/"


def sign_in(address: str, email: str, password: str):
    return Client(REMOTE_ADDR=address).post(LOGIN, {"username": email, "password": password})


def test_a_guesser_locks_only_its_own_address_out_of_the_account(personas, settings):
    for attempt in range(settings.AXES_FAILURE_LIMIT):
        sign_in("203.0.113.66", "ava@acme.test", f"wrong-{attempt}")
    # The guesser is locked out of Ava's account, even with the right password...
    assert sign_in("203.0.113.66", "ava@acme.test", PASSWORD).status_code == 429
    # ...Ava, from her own address, is not.
    owner = Client(REMOTE_ADDR="198.51.100.20")
    assert owner.post(LOGIN, {"username": "ava@acme.test", "password": PASSWORD}).status_code == 302
    assert SESSION_KEY in owner.session


def test_an_address_guessing_across_many_accounts_is_stopped(personas, settings):
    settings.LOGIN_FAILURE_LIMIT_PER_ADDRESS = 15
    emails = ["ava@acme.test", "rex@acme.test", "vic@acme.test", "alice@acme.test"]
    answers = [
        sign_in("203.0.113.77", emails[n % len(emails)], f"wrong-{n}").status_code
        for n in range(15)
    ]
    assert 429 not in answers  # fewer than AXES_FAILURE_LIMIT per account
    assert sign_in("203.0.113.77", "oscar@other.test", PASSWORD).status_code == 429
    # Everyone else signs in as usual.
    assert sign_in("198.51.100.20", "oscar@other.test", PASSWORD).status_code == 302
