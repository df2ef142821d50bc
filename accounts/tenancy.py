"""Which organization a request acts in: the one place that decides.

A request acts in exactly one organization: the token's when it was authenticated by
an ApiToken, otherwise the one the user switched to in this session. Views and API
endpoints ask here and pass the resulting ``OrgContext`` on; nothing is kept in
thread-locals.
"""

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.utils.translation import gettext_lazy as _

from accounts.models import ApiToken, Membership, Organization, User
from accounts.roles import Role, role_can
from core.errors import ForbiddenError
from core.ids import parse_id

SESSION_KEY = "current_org_id"


@dataclass(frozen=True)
class OrgContext:
    user: User
    organization: Organization
    membership: Membership

    @property
    def role(self) -> str:
        return self.membership.role

    @property
    def is_owner(self) -> bool:
        return self.membership.role == Role.OWNER

    def can(self, capability: str) -> bool:
        return role_can(self.membership.role, capability)

    def require(self, *capabilities: str) -> None:
        """Raise `ForbiddenError` (a 403, also a PermissionDenied) unless the member's role
        grants one of ``capabilities``. Views and services both ask here: the same rule in
        every app."""
        if not any(self.can(capability) for capability in capabilities):
            raise ForbiddenError(
                {"permission_denied": [_("Your role in this organization does not allow this.")]}
            )


def org_context_for_request(request: HttpRequest) -> OrgContext | None:
    """The organization the request acts in, or None for anonymous users and non-members.

    Works for Django requests and DRF requests alike (DRF sets ``request.auth`` to the
    ApiToken that authenticated the request).
    """
    user = request.user
    if not user.is_authenticated or not user.is_active:
        return None
    token = getattr(request, "auth", None)
    token = token if isinstance(token, ApiToken) else None
    session_org_id = None if token else request.session.get(SESSION_KEY)
    # Asked by the view and again by the page's template: read once per request, for as long
    # as the user, the token and the session's choice stay what they were (`vars`, not
    # getattr: a DRF request must not find what its Django request remembered).
    key = (user.pk, token.pk if token else None, session_org_id)
    remembered = vars(request).get(_REMEMBERED)
    if remembered is not None and remembered[0] == key:
        return remembered[1]
    context = _context_for(user, token, session_org_id)
    vars(request)[_REMEMBERED] = (key, context)
    return context


_REMEMBERED = "_avia_org_context"


def _context_for(
    user: User, token: ApiToken | None, session_org_id: int | None
) -> OrgContext | None:
    if token is not None:
        return _context(user=user, organization_id=token.organization_id)
    if session_org_id is not None:
        context = _context(user=user, organization_id=session_org_id)
        if context is not None:
            return context
    # No choice made yet, or a stale one (the user left that organization).
    first = (
        Membership.objects.filter(user=user)
        .select_related("organization")
        .defer("organization__logo")
        .order_by("created_at", "pk")
        .first()
    )
    return (
        OrgContext(user=user, organization=first.organization, membership=first) if first else None
    )


def org_context_for(*, user: User, organization_slug: str) -> OrgContext:
    """The user's context in the organization named by a URL; 404 unless a member.

    Missing and forbidden organizations look the same, so slugs cannot be probed.
    """
    membership = (
        Membership.objects.filter(user=user, organization__slug=organization_slug)
        .select_related("organization")
        .defer("organization__logo")
        .first()
    )
    if membership is None or not user.is_active:
        raise Http404
    return OrgContext(user=user, organization=membership.organization, membership=membership)


def org_context_of(*, user: User, organization: Organization) -> OrgContext:
    """The user's context in an organization they belong to, for callers without a request
    (commands, the demo, benchmarks, tests); 404 unless a member."""
    context = _context(user=user, organization_id=organization.pk)
    if context is None:
        raise Http404
    return context


def switch_organization(*, request: HttpRequest, organization_id: int) -> OrgContext:
    """Make ``organization_id`` the session's current organization; 404 unless a member."""
    if isinstance(getattr(request, "auth", None), ApiToken):
        # A token acts in the one organization it was created for.
        raise PermissionDenied
    context = _context(user=request.user, organization_id=organization_id)
    if context is None:
        raise Http404
    request.session[SESSION_KEY] = context.organization.pk
    return context


def _context(*, user: User, organization_id: object) -> OrgContext | None:
    if not user.is_authenticated or not user.is_active:
        return None
    bounded_id = parse_id(organization_id)
    if bounded_id is None:
        return None
    membership = (
        Membership.objects.filter(user=user, organization_id=bounded_id)
        .select_related("organization")
        .defer("organization__logo")
        .first()
    )
    if membership is None:
        return None
    return OrgContext(user=user, organization=membership.organization, membership=membership)
