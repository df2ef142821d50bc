"""DRF authentication by personal API token: ``Authorization: Token <key>``."""

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from accounts.models import ApiToken, User
from accounts.services import ApiTokenInvalid, api_token_authenticate


class ApiTokenAuthentication(BaseAuthentication):
    """Authenticates a personal ApiToken; ``request.auth`` is then that token.

    The request acts in the token's organization only (see accounts.tenancy).
    """

    keyword = "Token"

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None  # Not ours: let other authentication classes try.
        if len(parts) != 2:
            raise AuthenticationFailed(_("Invalid token header: use 'Token <key>'."))
        try:
            key = parts[1].decode("ascii")
        except UnicodeDecodeError as error:
            raise AuthenticationFailed(_("Invalid token.")) from error
        try:
            token = api_token_authenticate(key=key)
        except ApiTokenInvalid as error:
            # One message for unknown, revoked and orphaned tokens: nothing to probe.
            raise AuthenticationFailed(_("Invalid or revoked token.")) from error
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        # Makes DRF answer 401 (with WWW-Authenticate) rather than 403.
        return self.keyword


class ApiTokenAuthenticationScheme(OpenApiAuthenticationExtension):
    """Documents the token scheme in the OpenAPI schema (drf-spectacular)."""

    target_class = ApiTokenAuthentication
    name = "ApiToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": str(
                _(
                    "A personal API token, created in the web interface, sent as "
                    "'Authorization: Token avia_…'. It acts for one user within the one "
                    "organization it was created for."
                )
            ),
        }
