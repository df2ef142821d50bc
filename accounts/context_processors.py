"""Template context for the organization switcher in the site header.

Lazy, so pages that never show the switcher run no queries.
"""

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from accounts.selectors import memberships_for_user
from accounts.tenancy import org_context_for_request


def organization(request: HttpRequest) -> dict[str, object]:
    # An error page may be rendered for a request refused before AuthenticationMiddleware ran
    # (a Host not in ALLOWED_HOSTS): it has no user, and must still render as a 400.
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {
        "current_org_context": SimpleLazyObject(lambda: org_context_for_request(request)),
        "user_memberships": SimpleLazyObject(lambda: list(memberships_for_user(user=request.user))),
    }
