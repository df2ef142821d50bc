"""The cast every view and API test uses, built through the real services.

Acme Procurement: alice (owner), ava (assessor), rex (reviewer), vic (viewer).
Other Org: oscar (owner), the outsider for every Acme object.
"""

from dataclasses import dataclass
from functools import cache

from django.contrib.auth.hashers import make_password

from accounts.models import Membership, MembershipInvitation, Organization, User
from accounts.roles import Role
from accounts.services import invitation_respond, membership_add, organization_create
from accounts.tenancy import OrgContext, org_context_of

PASSWORD = "correct-horse-battery"


@dataclass(frozen=True)
class Personas:
    acme: Organization
    other: Organization
    alice: User  # owner of Acme
    ava: User  # assessor at Acme
    rex: User  # reviewer at Acme
    vic: User  # viewer at Acme
    oscar: User  # owner of Other Org: the outsider

    @property
    def acme_members(self) -> dict[str, User]:
        """Acme's members by role, for walking the permission matrix."""
        return {
            Role.OWNER: self.alice,
            Role.ASSESSOR: self.ava,
            Role.REVIEWER: self.rex,
            Role.VIEWER: self.vic,
        }


@cache
def _password_hash() -> str:
    # Hashing is deliberately slow; do it once per test run, not once per user.
    return make_password(PASSWORD)


def _with_password(user: User) -> User:
    user.password = _password_hash()
    user.save(update_fields=["password"])
    return user


def make_personas() -> Personas:
    acme = organization_create(name="Acme Procurement", owner_email="alice@acme.test")
    alice = _with_password(User.objects.get(email="alice@acme.test"))

    def add(email: str, role: str) -> User:
        membership = membership_add(organization=acme, email=email, role=role, actor=alice)
        return _with_password(membership.user)

    ava = add("ava@acme.test", Role.ASSESSOR)
    rex = add("rex@acme.test", Role.REVIEWER)
    vic = add("vic@acme.test", Role.VIEWER)
    other = organization_create(name="Other Org", owner_email="oscar@other.test")
    oscar = _with_password(User.objects.get(email="oscar@other.test"))
    return Personas(acme=acme, other=other, alice=alice, ava=ava, rex=rex, vic=vic, oscar=oscar)


def member_of(user: User, organization: Organization | None = None) -> OrgContext:
    """`user` acting in `organization` (default: the first organization they belong to), as a
    service that checks the caller's role expects it."""
    organization = organization or user.memberships.order_by("pk").first().organization
    return org_context_of(user=user, organization=organization)


def join(organization: Organization, user: User, role: str, actor: User) -> Membership:
    """An existing user made a member of another organization as it happens: invited by
    `actor`, then accepted by the user."""
    added = membership_add(organization=organization, email=user.email, role=role, actor=actor)
    if isinstance(added, MembershipInvitation):
        membership = invitation_respond(invitation=added, user=user, accept=True)
        assert membership is not None
        return membership
    return added
