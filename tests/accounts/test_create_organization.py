from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import Membership, Organization, User

pytestmark = pytest.mark.django_db


def run(*args):
    stdout, stderr = StringIO(), StringIO()
    call_command("create_organization", *args, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


def test_it_creates_the_organization_and_its_owner():
    stdout, stderr = run("Beta Consulting", "--owner", "bea@beta.test")

    organization = Organization.objects.get(name="Beta Consulting")
    owner = User.objects.get(email="bea@beta.test")
    assert Membership.objects.get(organization=organization, user=owner).role == "owner"
    assert "Beta Consulting" in stdout
    assert stderr == ""


def test_it_reuses_an_existing_owner():
    run("Beta Consulting", "--owner", "bea@beta.test")
    run("Gamma Audit", "--owner", "BEA@beta.test")

    assert User.objects.filter(email="bea@beta.test").count() == 1
    assert Membership.objects.filter(user__email="bea@beta.test", role="owner").count() == 2


def test_it_fails_when_the_organization_exists():
    run("Beta Consulting", "--owner", "bea@beta.test")

    with pytest.raises(CommandError, match="already exists") as raised:
        run("beta consulting", "--owner", "someone@else.test")

    assert raised.value.returncode != 0
    assert not User.objects.filter(email="someone@else.test").exists()


def test_it_fails_on_an_invalid_email():
    with pytest.raises(CommandError):
        run("Beta Consulting", "--owner", "not-an-email")
    assert not Organization.objects.exists()


def test_the_owner_option_is_required():
    with pytest.raises(CommandError, match="--owner"):
        run("Beta Consulting")


def test_it_creates_a_consultancy_when_asked():
    stdout, _stderr = run("Delta Advisory", "--owner", "dee@delta.test", "--consultancy")

    assert Organization.objects.get(name="Delta Advisory").is_consultancy
    assert "consultancy" in stdout
    run("Plain Buyer", "--owner", "dee@delta.test")
    assert not Organization.objects.get(name="Plain Buyer").is_consultancy
