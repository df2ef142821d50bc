import pytest

from accounts.roles import Capability, Role, role_can

# The whole matrix, written out so a change to it is a visible change to this table.
EXPECTED = {
    Role.OWNER: set(Capability.values),
    Role.ASSESSOR: {
        "view",
        "edit_assessment",
        "answer_use_section",
        "invite_vendor",
        "manage_tokens",
        "read_audit",
    },
    Role.REVIEWER: {"view", "review", "manage_tokens", "read_audit"},
    Role.VIEWER: {"view", "manage_tokens", "read_audit"},
}


@pytest.mark.parametrize("role", Role.values)
@pytest.mark.parametrize("capability", Capability.values)
def test_the_capability_map_grants_exactly_the_expected_capabilities(role, capability):
    assert role_can(role, capability) is (capability in EXPECTED[role])


def test_only_owners_manage_members_and_branding():
    for role in Role.values:
        owner = role == Role.OWNER
        assert role_can(role, "manage_members") is owner
        assert role_can(role, "manage_branding") is owner


def test_reviewers_cannot_edit_and_assessors_cannot_review():
    assert not role_can("reviewer", "edit_assessment")
    assert not role_can("assessor", "review")


def test_an_unknown_role_grants_nothing():
    assert not role_can("superuser", "view")
    assert not role_can("", "view")


def test_an_unknown_capability_is_a_programming_error():
    with pytest.raises(ValueError, match="approve_everything"):
        role_can("owner", "approve_everything")
