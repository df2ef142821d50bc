"""Reads of organizations, memberships and API tokens. Writes live in services."""

from django.db.models import QuerySet

from accounts.models import (
    ApiToken,
    ClientEngagement,
    Membership,
    MembershipInvitation,
    Organization,
    User,
)


def memberships_for_user(*, user: User) -> QuerySet[Membership]:
    """The organizations a user belongs to, with their role, by organization name."""
    return (
        Membership.objects.filter(user=user)
        .select_related("organization")
        .defer("organization__logo")
        .order_by("organization__name")
    )


def membership_for(*, user: User, organization: Organization) -> Membership | None:
    return Membership.objects.filter(user=user, organization=organization).first()


def members_of(*, organization: Organization) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(organization=organization)
        .select_related("user")
        .order_by("user__email")
    )


def organization_by_name(*, name: str) -> Organization | None:
    """Names are unique regardless of case, so at most one organization matches."""
    return Organization.objects.filter(name__iexact=name.strip()).defer("logo").first()


def api_tokens_for(
    *, user: User, organization: Organization, include_revoked: bool = False
) -> QuerySet[ApiToken]:
    """A user's own tokens in one organization, newest first."""
    tokens = ApiToken.objects.filter(user=user, organization=organization)
    if not include_revoked:
        tokens = tokens.filter(revoked_at__isnull=True)
    return tokens.order_by("-created_at", "-pk")


def api_tokens_of_organization(*, organization: Organization) -> QuerySet[ApiToken]:
    """Every member's active tokens in an organization, for its owners to review."""
    return (
        ApiToken.objects.filter(organization=organization, revoked_at__isnull=True)
        .select_related("user")
        .order_by("user__email", "-created_at", "-pk")
    )


def invitations_for_user(*, user: User) -> QuerySet[MembershipInvitation]:
    """The invitations waiting for the user's answer, oldest first."""
    return (
        MembershipInvitation.objects.filter(user=user)
        .select_related("organization", "invited_by")
        .defer("organization__logo")
        .order_by("created_at", "pk")
    )


# Consultancies and their clients -------------------------------------------------------


def clients_of(*, consultancy: Organization) -> QuerySet[ClientEngagement]:
    """The consultancy's active client engagements (`engagement.client` is the workspace), by
    client name. Ended ones are left out: their clients are no longer the consultancy's."""
    return (
        ClientEngagement.objects.filter(consultancy=consultancy, ended_at__isnull=True)
        .select_related("client")
        .defer("client__logo")
        .order_by("client__name")
    )


def client_organizations_of(*, consultancy: Organization) -> QuerySet[Organization]:
    """The organizations the consultancy has active engagements with, by name."""
    return Organization.objects.filter(
        consultancy_engagement__consultancy=consultancy,
        consultancy_engagement__ended_at__isnull=True,
    ).order_by("name")


def engagement_of(*, client: Organization) -> ClientEngagement | None:
    """The client's engagement with the consultancy that opened it, active or ended (None for
    an organization no consultancy opened)."""
    return (
        ClientEngagement.objects.filter(client=client)
        .select_related("consultancy", "ended_by")
        .first()
    )


def preparing_consultancy(*, organization: Organization) -> Organization | None:
    """The consultancy that prepares the organization's outputs (`Organization.prepared_by`):
    the one whose engagement is active, else None."""
    return organization.prepared_by()
