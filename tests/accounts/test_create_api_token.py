import hashlib
from io import StringIO

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError

from accounts.models import ApiToken
from tests.personas import join

pytestmark = pytest.mark.django_db


def run(*args):
    stdout, stderr = StringIO(), StringIO()
    call_command("create_api_token", *args, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


def test_it_prints_the_token_alone_on_one_line(personas):
    stdout, stderr = run("ava@acme.test")

    assert stdout.count("\n") == 1 and stdout.endswith("\n")
    key = stdout.strip()
    assert key.startswith("avia_")
    assert stderr == ""
    token = ApiToken.objects.get(key_hash=hashlib.sha256(key.encode()).hexdigest())
    assert (token.user, token.organization) == (personas.ava, personas.acme)


def test_the_organization_option_picks_one_of_several(personas):
    join(personas.other, personas.ava, "viewer", personas.oscar)
    stdout, _stderr = run("ava@acme.test", "--organization", "other org")

    token = ApiToken.objects.get()
    assert token.organization == personas.other
    assert token.key_prefix == stdout.strip()[:8]


def test_it_refuses_an_unknown_user(personas):
    with pytest.raises(CommandError, match="nobody@acme.test"):
        run("nobody@acme.test")
    assert not ApiToken.objects.exists()


def test_it_refuses_an_organization_the_user_is_not_in(personas):
    with pytest.raises(CommandError, match="not a member"):
        run("ava@acme.test", "--organization", "Other Org")
    assert not ApiToken.objects.exists()


def test_it_refuses_an_unknown_organization(personas):
    with pytest.raises(CommandError, match="No organization"):
        run("ava@acme.test", "--organization", "Nope Ltd")


def test_it_refuses_a_user_without_any_membership(personas):
    membership = personas.vic.memberships.get()
    membership.delete()
    with pytest.raises(CommandError, match="not a member of any organization"):
        run("vic@acme.test")


def test_it_refuses_to_guess_between_several_organizations(personas):
    join(personas.other, personas.ava, "viewer", personas.oscar)
    with pytest.raises(CommandError, match="--organization") as raised:
        run("ava@acme.test")
    assert "Acme Procurement" in str(raised.value) and "Other Org" in str(raised.value)
    assert not ApiToken.objects.exists()


def test_errors_go_to_stderr_with_a_non_zero_exit_status(personas, monkeypatch, capsys):
    # run_from_argv is what manage.py calls: it prints CommandError to stderr and exits.
    # It also closes connections afterwards, which would end the test's transaction.
    # System checks are skipped: they import the project's URLconf, owned elsewhere.
    monkeypatch.setattr("django.core.management.base.connections.close_all", lambda: None)
    command = load_command_class("accounts", "create_api_token")

    with pytest.raises(SystemExit) as exited:
        command.run_from_argv(
            ["manage.py", "create_api_token", "nobody@acme.test", "--skip-checks"]
        )

    assert exited.value.code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "No user with the email address 'nobody@acme.test'" in captured.err
