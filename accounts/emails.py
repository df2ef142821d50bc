"""The emails of accounts: a member's invitation and a password reset, both through the outbox.

A password reset is looked up and written by a worker (`accounts.tasks.send_password_reset`),
never while the visitor waits: how long the answer takes must not tell a member's address from
an unknown one.

Both carry a one-time link made by Django's own password-reset token generator (tied to the
user's password and last login, so it stops working once used, and after
PASSWORD_RESET_TIMEOUT): the invitation's link opens a page that sets the new member's first
password; a member who already has one is told to sign in.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.tokens import default_token_generator
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from outbox.links import site_url
from outbox.models import EmailKind
from outbox.services import email_enqueue

from .limits import reset_email_allowed
from .models import Membership, MembershipInvitation, User
from .roles import Role


def password_link(user: User, view_name: str) -> str:
    """A one-time link to a page that sets the user's password."""
    uidb64 = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return site_url(view_name, uidb64=uidb64, token=token)


def member_invitation_send(*, membership: Membership | MembershipInvitation, actor: User) -> None:
    """A new member's invitation, or an existing account's invitation to accept (in the app,
    on the organizations page) or decline."""
    user = membership.user
    has_password = user.has_usable_password()
    pending = isinstance(membership, MembershipInvitation)
    email_enqueue(
        event_key=f"{'membership-invitation' if pending else 'member-invitation'}:{membership.pk}",
        kind=EmailKind.MEMBER_INVITATION,
        to=user.email,
        language=user.preferred_language,
        template="member_invitation",
        context={
            "membership": membership,
            "organization": membership.organization,
            # Lazy: read in the recipient's language when the email is rendered, not the inviter's.
            "role": Role(membership.role).label,
            "inviter": actor,
            "url": site_url("accounts:organizations")
            if pending
            else site_url("accounts:login")
            if has_password
            else password_link(user, "accounts:invitation_accept"),
            "has_password": has_password,
            "pending": pending,
        },
        organization=membership.organization,
        secret=not has_password,
    )


def password_reset_request(*, email: str, request_id: str) -> int:
    """Write the reset email of each account Django's reset would write to for `email` (active,
    with a usable password; none for an unknown address); returns how many were written.
    `request_id` names the request: run again, it writes nothing more."""
    form = OutboxPasswordResetForm({"email": email}, request_id=request_id)
    if not form.is_valid():
        return 0
    form.save(domain_override=urlsplit(settings.SITE_URL).netloc)
    return form.written


def _same_address(first: str, second: str) -> bool:
    def folded(text: str) -> str:
        return unicodedata.normalize("NFKC", text).casefold()

    return folded(first) == folded(second)


class OutboxPasswordResetForm(PasswordResetForm):
    """Django's password reset, its email sent through the outbox in the user's language.

    The page validates it; a worker saves it (`password_reset_request`)."""

    def __init__(self, *args: Any, request_id: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request_id = request_id
        self.written = 0

    def get_users(self, email: str) -> Iterator[User]:
        """Django's accounts (active, with a password) and members invited who never chose one:
        AVIA signs in by password only, and this is how an expired invitation is renewed (adding
        the member again is refused: they are one already)."""
        for user in User.objects.filter(email__iexact=email, is_active=True):
            # Django's own check that the database's case-insensitive match is not a lookalike.
            if _same_address(email, user.email) and (
                user.has_usable_password() or user.memberships.exists()
            ):
                yield user

    def send_mail(  # type: ignore[override]
        self,
        subject_template_name: str,
        email_template_name: str,
        context: dict[str, Any],
        from_email: str | None,
        to_email: str,
        html_email_template_name: str | None = None,
    ) -> None:
        user = context["user"]
        if not reset_email_allowed(to_address=to_email):
            return  # the limit of this address this hour (accounts.limits)
        written = email_enqueue(
            event_key=f"password-reset:{user.pk}:{self.request_id}",
            kind=EmailKind.PASSWORD_RESET,
            to=to_email,
            language=user.preferred_language,
            template="password_reset",
            context={
                **context,
                "url": site_url(
                    "accounts:password_reset_confirm", uidb64=context["uid"], token=context["token"]
                ),
            },
            secret=True,
        )
        self.written += written is not None
