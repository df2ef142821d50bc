"""The demo accounts have the published password only on a site no other machine reaches."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import User
from probes.management.commands.load_demo import DEMO_PASSWORD

OWNER = "owner@demo.avia"


def signs_in(password: str) -> bool:
    return User.objects.get(email=OWNER).check_password(password)


def load_demo(*args: str) -> str:
    out = io.StringIO()
    call_command("load_demo", *args, stdout=out)
    return out.getvalue()


def printed_password(output: str) -> str:
    (line,) = [line for line in output.splitlines() if line.startswith("demo password: ")]
    return line.removeprefix("demo password: ")


def test_on_this_machine_alone_the_published_password_is_used(catalog, settings):
    settings.ALLOWED_HOSTS = ["localhost", "127.0.0.1"]
    assert printed_password(load_demo()) == DEMO_PASSWORD
    assert signs_in(DEMO_PASSWORD)


def test_a_site_other_machines_reach_gets_a_random_password_set_on_every_run(catalog, settings):
    settings.ALLOWED_HOSTS = ["localhost", "10.0.0.7"]
    first = printed_password(load_demo())
    assert first != DEMO_PASSWORD
    assert signs_in(first)
    assert not signs_in(DEMO_PASSWORD)

    again = printed_password(load_demo())  # the workspace is already there: still printed
    assert again != first
    assert signs_in(again)


def test_the_published_password_is_refused_for_such_a_site(catalog, settings):
    settings.ALLOWED_HOSTS = ["avia.example.com"]
    with pytest.raises(CommandError, match="avia.example.com"):
        load_demo("--password", DEMO_PASSWORD)


def test_the_printed_password_works_after_the_site_was_public(catalog, settings):
    settings.ALLOWED_HOSTS = ["10.0.0.7"]
    load_demo()
    settings.ALLOWED_HOSTS = ["localhost"]
    assert printed_password(load_demo()) == DEMO_PASSWORD
    assert signs_in(DEMO_PASSWORD)
