"""A small OpenID Connect provider of the tests' own, on Authlib's authorization server, run as
its own process on loopback (`python tests/sso/oidc_provider.py --port N ...`).

It speaks the real protocol: discovery, a JWKS of a fresh RSA key, the authorization-code flow
with PKCE (S256, required) and nonce, client authentication at the token endpoint, and RS256 ID
tokens. Test-only settings make it misbehave the ways a provider or an attacker can: tokens that
name another issuer or another audience, an expired token, another user's address, an address
it has not verified, a discovery document that names
token or key endpoints elsewhere (an internal address). Its sign-in and consent step approves at once the user the client names in
`login_hint` (no password page: the tests are about the relying party).
"""

from __future__ import annotations

import argparse
import os
import secrets
import time
from dataclasses import dataclass, field

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, grants
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from authlib.oidc.core.models import AuthorizationCodeMixin
from flask import Flask, jsonify, request
from joserfc.jwk import RSAKey


@dataclass
class Settings:
    issuer: str
    client_id: str
    client_secret: str
    claimed_issuer: str | None = None
    audience: str | None = None
    id_token_ttl: int = 300
    email: str | None = None
    email_verified: bool = True
    token_endpoint: str | None = None
    jwks_uri: str | None = None


@dataclass
class EndUser:
    email: str

    def get_user_id(self) -> str:
        return "user-" + self.email


@dataclass
class Client(ClientMixin):
    client_id: str
    client_secret: str

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return None

    def get_allowed_scope(self, scope: str) -> str:
        return " ".join(s for s in scope.split() if s in {"openid", "email", "profile"})

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return True  # test-only: the relying party's address changes with each test server

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in {"client_secret_basic", "client_secret_post"}

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "authorization_code"


@dataclass
class Code(AuthorizationCodeMixin):
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    nonce: str | None
    code_challenge: str | None
    code_challenge_method: str | None
    user: EndUser
    auth_time: int = field(default_factory=lambda: int(time.time()))

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def get_nonce(self) -> str | None:
        return self.nonce

    def get_auth_time(self) -> int:
        return self.auth_time

    def get_acr(self) -> str:
        return "0"

    def get_amr(self) -> list[str]:
        return []


def create_app(settings: Settings) -> Flask:
    app = Flask(__name__)
    key = RSAKey.generate_key(2048, parameters={"kid": secrets.token_hex(8), "use": "sig"})
    client = Client(settings.client_id, settings.client_secret)
    codes: dict[str, Code] = {}

    class CodeGrant(grants.AuthorizationCodeGrant):
        TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

        def save_authorization_code(self, code: str, req) -> None:  # noqa: ANN001
            payload = req.payload
            codes[code] = Code(
                code=code,
                client_id=req.client.get_client_id(),
                redirect_uri=payload.redirect_uri,
                scope=req.scope,
                nonce=payload.data.get("nonce"),
                code_challenge=payload.data.get("code_challenge"),
                code_challenge_method=payload.data.get("code_challenge_method"),
                user=req.user,
            )

        def query_authorization_code(self, code: str, client: Client) -> Code | None:
            found = codes.get(code)
            return found if found is not None and found.client_id == client.client_id else None

        def delete_authorization_code(self, authorization_code: Code) -> None:
            codes.pop(authorization_code.code, None)

        def authenticate_user(self, authorization_code: Code) -> EndUser:
            return authorization_code.user

    class IdToken(OpenIDCode):
        def exists_nonce(self, nonce: str, req) -> bool:  # noqa: ANN001
            return any(code.nonce == nonce for code in codes.values())

        def resolve_client_private_key(self, client: Client) -> RSAKey:
            return key

        def get_client_algorithm(self, client: Client) -> str:
            return "RS256"

        def get_encode_header(self, client: Client) -> dict:
            return {"alg": "RS256", "kid": key.kid}

        def get_client_claims(self, client: Client) -> dict:
            now = int(time.time())
            ttl = settings.id_token_ttl
            return {
                "iss": settings.claimed_issuer or settings.issuer,
                "aud": [settings.audience or client.get_client_id()],
                # An expired token was also issued in the past.
                "iat": now if ttl > 0 else now + ttl - 60,
                "exp": now + ttl,
            }

        def generate_user_info(self, user: EndUser, scope: str) -> UserInfo:
            return UserInfo(
                sub=user.get_user_id(), email=user.email, email_verified=settings.email_verified
            )

    server = AuthorizationServer(
        app,
        query_client=lambda client_id: client if client_id == client.client_id else None,
        save_token=lambda token, req: None,
    )
    server.register_grant(CodeGrant, [CodeChallenge(required=True), IdToken(require_nonce=True)])

    @app.get("/.well-known/openid-configuration")
    def discovery():  # noqa: ANN202
        return jsonify(
            issuer=settings.issuer,
            authorization_endpoint=settings.issuer + "/authorize",
            token_endpoint=settings.token_endpoint or settings.issuer + "/token",
            jwks_uri=settings.jwks_uri or settings.issuer + "/jwks",
            response_types_supported=["code"],
            subject_types_supported=["public"],
            id_token_signing_alg_values_supported=["RS256"],
            code_challenge_methods_supported=["S256"],
            scopes_supported=["openid", "email", "profile"],
            token_endpoint_auth_methods_supported=["client_secret_basic", "client_secret_post"],
        )

    @app.get("/jwks")
    def jwks():  # noqa: ANN202
        return jsonify(keys=[key.as_dict(private=False)])

    @app.get("/authorize")
    def authorize():  # noqa: ANN202
        # Auto-approve (test-only): the user the relying party named, or the one forced.
        email = settings.email or request.args.get("login_hint", "")
        return server.create_authorization_response(grant_user=EndUser(email))

    @app.post("/token")
    def token():  # noqa: ANN202
        return server.create_token_response()

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--client-secret", required=True)
    parser.add_argument("--claimed-issuer", help="the `iss` its ID tokens name (not its own)")
    parser.add_argument("--audience", help="the `aud` its ID tokens name (not the client)")
    parser.add_argument("--id-token-ttl", type=int, default=300, help="seconds; negative: expired")
    parser.add_argument("--email", help="the address it vouches for, whatever the client asked")
    parser.add_argument("--email-unverified", action="store_true")
    parser.add_argument("--token-endpoint", help="the token endpoint its discovery names")
    parser.add_argument("--jwks-uri", help="the key set its discovery names")
    args = parser.parse_args()
    settings = Settings(
        issuer=f"http://127.0.0.1:{args.port}",
        client_id=args.client_id,
        client_secret=args.client_secret,
        claimed_issuer=args.claimed_issuer,
        audience=args.audience,
        id_token_ttl=args.id_token_ttl,
        email=args.email,
        email_verified=not args.email_unverified,
        token_endpoint=args.token_endpoint,
        jwks_uri=args.jwks_uri,
    )
    os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")  # loopback http
    create_app(settings).run(host="127.0.0.1", port=args.port, threaded=True)


if __name__ == "__main__":
    main()
