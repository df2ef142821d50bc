import hashlib

import pytest

from accounts.models import ApiToken, Membership, Organization, User
from accounts.selectors import api_tokens_for, members_of, memberships_for_user
from accounts.services import (
    api_token_create,
    api_token_revoke,
    membership_add,
    membership_change_role,
    membership_remove,
    organization_create,
    organization_update_branding,
)
from core.errors import ForbiddenError, ServiceError
from tests.personas import join

pytestmark = pytest.mark.django_db


def membership(user, organization):
    return Membership.objects.get(user=user, organization=organization)


# organization_create -------------------------------------------------------------------


def test_creating_an_organization_creates_its_owner_with_an_unusable_password():
    organization = organization_create(name="  Beta Consulting ", owner_email="Bea@Beta.TEST")

    assert organization.name == "Beta Consulting"
    assert organization.slug == "beta-consulting"
    owner = User.objects.get(email="bea@beta.test")
    assert not owner.has_usable_password()
    assert membership(owner, organization).role == "owner"


def test_creating_an_organization_reuses_an_existing_user(personas):
    organization = organization_create(name="Second Client", owner_email="alice@acme.test")

    assert User.objects.filter(email="alice@acme.test").count() == 1
    assert personas.alice.check_password("correct-horse-battery")
    assert membership(personas.alice, organization).role == "owner"


def test_it_refuses_a_duplicate_organization_name_regardless_of_case(personas):
    with pytest.raises(ServiceError) as raised:
        organization_create(name="acme procurement", owner_email="x@example.test")
    assert "name" in raised.value.errors
    assert not User.objects.filter(email="x@example.test").exists()


def test_it_refuses_an_invalid_owner_email():
    with pytest.raises(ServiceError):
        organization_create(name="Nobody Inc", owner_email="not-an-email")
    assert not Organization.objects.filter(name="Nobody Inc").exists()


def test_slugs_stay_unique_when_names_slugify_alike(personas):
    organization = organization_create(name="Acme-Procurement", owner_email="z@example.test")
    assert organization.slug == "acme-procurement-2"


# memberships ---------------------------------------------------------------------------


def test_an_owner_adds_a_member_creating_the_user_if_needed(personas):
    added = membership_add(
        organization=personas.acme, email="New@Acme.test", role="assessor", actor=personas.alice
    )
    assert added.user.email == "new@acme.test"
    assert added.role == "assessor"


def test_a_consultant_can_belong_to_several_organizations(personas):
    join(personas.other, personas.ava, "viewer", personas.oscar)
    names = [m.organization.name for m in memberships_for_user(user=personas.ava)]
    assert names == ["Acme Procurement", "Other Org"]


@pytest.mark.parametrize("persona", ["ava", "rex", "vic", "oscar"])
def test_only_an_owner_of_the_organization_adds_members(personas, persona):
    with pytest.raises(ForbiddenError):
        membership_add(
            organization=personas.acme,
            email="new@acme.test",
            role="viewer",
            actor=getattr(personas, persona),
        )
    assert not User.objects.filter(email="new@acme.test").exists()


def test_adding_with_an_unknown_role_saves_nothing(personas):
    with pytest.raises(ServiceError) as raised:
        membership_add(
            organization=personas.acme, email="new@acme.test", role="admin", actor=personas.alice
        )
    assert "role" in raised.value.errors
    assert not User.objects.filter(email="new@acme.test").exists()


def test_adding_an_existing_member_again_is_refused(personas):
    with pytest.raises(ServiceError):
        membership_add(
            organization=personas.acme, email="ava@acme.test", role="viewer", actor=personas.alice
        )
    assert membership(personas.ava, personas.acme).role == "assessor"


def test_an_owner_changes_a_members_role(personas):
    membership_change_role(
        membership=membership(personas.vic, personas.acme), role="reviewer", actor=personas.alice
    )
    assert membership(personas.vic, personas.acme).role == "reviewer"


def test_a_non_owner_cannot_change_roles(personas):
    with pytest.raises(ForbiddenError):
        membership_change_role(
            membership=membership(personas.vic, personas.acme), role="owner", actor=personas.ava
        )
    assert membership(personas.vic, personas.acme).role == "viewer"


def test_the_last_owner_cannot_be_demoted(personas):
    with pytest.raises(ServiceError, match="last owner"):
        membership_change_role(
            membership=membership(personas.alice, personas.acme),
            role="viewer",
            actor=personas.alice,
        )
    assert membership(personas.alice, personas.acme).role == "owner"


def test_the_last_owner_cannot_be_removed(personas):
    with pytest.raises(ServiceError, match="last owner"):
        membership_remove(
            membership=membership(personas.alice, personas.acme), actor=personas.alice
        )
    assert Membership.objects.filter(user=personas.alice, organization=personas.acme).exists()


def test_an_owner_may_step_down_once_there_is_another_owner(personas):
    membership_change_role(
        membership=membership(personas.rex, personas.acme), role="owner", actor=personas.alice
    )
    membership_change_role(
        membership=membership(personas.alice, personas.acme), role="viewer", actor=personas.alice
    )
    roles = {m.user.email: m.role for m in members_of(organization=personas.acme)}
    assert roles["alice@acme.test"] == "viewer"
    assert roles["rex@acme.test"] == "owner"


def test_a_member_may_leave_an_organization(personas):
    membership_remove(membership=membership(personas.vic, personas.acme), actor=personas.vic)
    assert not Membership.objects.filter(user=personas.vic).exists()


def test_a_non_owner_cannot_remove_someone_else(personas):
    with pytest.raises(ForbiddenError):
        membership_remove(membership=membership(personas.vic, personas.acme), actor=personas.ava)


def test_removing_a_member_revokes_their_tokens_in_that_organization(personas):
    token, _key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    membership_remove(membership=membership(personas.ava, personas.acme), actor=personas.alice)
    token.refresh_from_db()
    assert token.revoked_at is not None


# API tokens ----------------------------------------------------------------------------


def test_a_token_is_stored_as_a_hash_and_shown_once(personas):
    token, key = api_token_create(user=personas.ava, organization=personas.acme, name=" ci ")

    assert key.startswith("avia_")
    assert len(key) == len("avia_") + 43
    assert token.name == "ci"
    assert token.key_prefix == key[:8]
    assert token.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert all(key not in str(row) for row in ApiToken.objects.values())


def test_tokens_are_different_every_time(personas):
    keys = {
        api_token_create(user=personas.ava, organization=personas.acme, name="t")[1]
        for _ in range(5)
    }
    assert len(keys) == 5


def test_a_token_is_refused_for_an_organization_the_user_is_not_in(personas):
    with pytest.raises(ForbiddenError):
        api_token_create(user=personas.oscar, organization=personas.acme, name="sneaky")
    assert not ApiToken.objects.exists()


def test_a_token_needs_a_name(personas):
    with pytest.raises(ServiceError):
        api_token_create(user=personas.ava, organization=personas.acme, name="   ")


def test_a_user_revokes_their_own_token(personas):
    token, _key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    api_token_revoke(token=token, actor=personas.ava)
    assert list(api_tokens_for(user=personas.ava, organization=personas.acme)) == []
    assert api_tokens_for(user=personas.ava, organization=personas.acme, include_revoked=True)


def test_an_owner_revokes_a_members_token(personas):
    token, _key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    api_token_revoke(token=token, actor=personas.alice)
    token.refresh_from_db()
    assert token.revoked_at is not None


@pytest.mark.parametrize("persona", ["rex", "vic", "oscar"])
def test_nobody_else_revokes_a_members_token(personas, persona):
    token, _key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    with pytest.raises(ForbiddenError):
        api_token_revoke(token=token, actor=getattr(personas, persona))
    token.refresh_from_db()
    assert token.revoked_at is None


def test_revoking_twice_keeps_the_first_revocation_time(personas):
    token, _key = api_token_create(user=personas.ava, organization=personas.acme, name="ci")
    first = api_token_revoke(token=token, actor=personas.ava).revoked_at
    assert api_token_revoke(token=token, actor=personas.ava).revoked_at == first


# branding ------------------------------------------------------------------------------


def test_an_owner_sets_the_branding(personas):
    organization_update_branding(
        organization=personas.acme,
        actor=personas.alice,
        report_display_name="Acme Procurement Ltd",
        brand_colour="#1a5fb4",
    )
    personas.acme.refresh_from_db()
    assert personas.acme.display_name == "Acme Procurement Ltd"
    assert personas.acme.brand_colour == "#1A5FB4"


def test_a_non_owner_cannot_change_the_branding(personas):
    with pytest.raises(ForbiddenError):
        organization_update_branding(
            organization=personas.acme,
            actor=personas.ava,
            report_display_name="Hacked",
            brand_colour="",
        )
