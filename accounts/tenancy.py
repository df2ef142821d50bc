"""Which organization a request acts in: the one place that decides.

A request acts in exactly one organization: the token's when it was authenticated by
an ApiToken, otherwise the one the user switched to in this session. Views and API
endpoints ask here and pass the resulting ``OrgContext`` on; nothing is kept in
thread-locals.

The session alone is not enough for a member page, because one session has many tabs: a
consultant draws "Add vendor" in organization A, switches to B in another tab, and submits the
first tab. So every member page carries the organization it was drawn for, and a write checks
it here (`member_context_for_request`):

- every POST form of a member page says `{% form_guard %}` instead of `{% csrf_token %}`
  (accounts/templatetags/tenancy.py): the CSRF token and a hidden `page_organization` field;
- `<body>` sends the same id in the `X-Page-Organization` header with every htmx request;
- a write (POST, PUT, PATCH, DELETE) carrying another organization than the one it would act
  in raises `DrawnForAnotherOrganization`: `member_page` answers 409 with a page that names the
  organization the form was for and offers to switch to it, and nothing is saved;
- a GET with `?org=<slug>` (every link in a member's email carries it, `organization_query`)
  switches the session to that organization when the user is a member, and is a 404 otherwise,
  so an email of A opened while working in B opens in A.

Why the organization is carried in the page (option b) rather than put in every URL
(`/o/<slug>/…`, option a): it changes one decorator, one template tag and the forms' first line
instead of every URL, `reverse()` and test of the site, and old bookmarks and links keep
working without a redirect layer; the guarantee is the same for writes, which is where a stale
tab does harm. A request that carries no organization (a script with a session cookie, an old
page) acts in the session's, as before; a test renders every member page and checks that each
POST form carries the field, so a new form cannot forget it. API requests are not member pages:
a token is bound to its organization; the vendor portal is reached by its link.
"""

from dataclasses import dataclass

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.utils.translation import gettext_lazy as _

from accounts.models import ApiToken, Membership, Organization, User
from accounts.roles import Capability, Role, role_can
from core.errors import ForbiddenError
from core.ids import parse_id

SESSION_KEY = "current_org_id"
# What a member page carries: its organization's id, in every POST form (a hidden field) and in
# every htmx request (a header set on <body>).
PAGE_ORGANIZATION_FIELD = "page_organization"
PAGE_ORGANIZATION_HEADER = "X-Page-Organization"
# `?org=<slug>` on a link from an email: open the page in that organization.
ORGANIZATION_QUERY = "org"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


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
    # A request without a session (a template rendered with a bare request) has no choice made.
    session = getattr(request, "session", None)
    session_org_id = None if token or session is None else session.get(SESSION_KEY)
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


# -- member pages: the organization a page was drawn for ------------------------------------


class DrawnForAnotherOrganization(Exception):
    """A write from a page drawn for another organization than the one it would act in.

    ``drawn_for`` is that organization when the user is still a member of it, else None
    (the page named an organization they left, or no organization at all)."""

    def __init__(self, *, drawn_for: Organization | None, current: OrgContext) -> None:
        self.drawn_for = drawn_for
        self.current = current
        super().__init__(
            f"page drawn for organization {drawn_for.pk if drawn_for else '?'}, "
            f"request acts in {current.organization.pk}"
        )


_PAGE = "_avia_page_org_context"


def member_context_for_request(
    request: HttpRequest, organization_slug: str | None = None
) -> OrgContext:
    """The organization a member page acts in: the one its URL names (`organization_slug`), else
    the session's, after an email link's `?org=` switched it; checked against the organization
    the page was drawn for when the request writes. 403 without an organization, 404 for one the
    user is not a member of; `DrawnForAnotherOrganization` for a stale page's write."""
    if organization_slug is not None:
        context = org_context_for(user=request.user, organization_slug=organization_slug)
    else:
        _open_linked_organization(request)
        found = org_context_for_request(request)
        if found is None:
            raise PermissionDenied
        context = found
    _refuse_writes_drawn_elsewhere(request, context)
    vars(request)[_PAGE] = context
    return context


def page_organization(request: HttpRequest) -> Organization | None:
    """The organization a page drawn for this request acts in, which its forms carry: the
    member page's own (its URL may name another than the session's), else the session's."""
    context = vars(request).get(_PAGE)
    if context is None:
        context = org_context_for_request(request)
    return context.organization if context is not None else None


def organization_query(organization: Organization) -> str:
    """The query string that opens a linked page in ``organization`` (links in emails)."""
    return f"{ORGANIZATION_QUERY}={organization.slug}"


def _open_linked_organization(request: HttpRequest) -> None:
    slug = request.GET.get(ORGANIZATION_QUERY) if request.method in _SAFE_METHODS else None
    if not slug:
        return
    context = org_context_for(user=request.user, organization_slug=slug)  # 404 unless a member
    if request.session.get(SESSION_KEY) != context.organization.pk:
        request.session[SESSION_KEY] = context.organization.pk
        messages.info(
            request,
            _("You are now working in %(organization)s.") % {"organization": context.organization},
        )


def _refuse_writes_drawn_elsewhere(request: HttpRequest, context: OrgContext) -> None:
    if request.method in _SAFE_METHODS:
        return
    drawn = request.POST.get(PAGE_ORGANIZATION_FIELD) or request.headers.get(
        PAGE_ORGANIZATION_HEADER
    )
    if not drawn or drawn.strip() == str(context.organization.pk):
        return
    other = _context(user=context.user, organization_id=drawn)
    raise DrawnForAnotherOrganization(
        drawn_for=other.organization if other else None, current=context
    )


def member_page_context(context: OrgContext) -> dict[str, object]:
    """What every organization settings page's template needs: the organization, and which
    settings links its navigation shows to this member."""
    return {
        "org_context": context,
        "organization": context.organization,
        "can_manage_members": context.can(Capability.MANAGE_MEMBERS),
        "can_manage_branding": context.can(Capability.MANAGE_BRANDING),
        "can_manage_policy": context.can(Capability.MANAGE_POLICY),
        "can_manage_webhooks": context.can(Capability.MANAGE_WEBHOOKS),
        "can_manage_catalogues": context.can(Capability.MANAGE_CATALOGUES),
    }
