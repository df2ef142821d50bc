"""Two-factor sign-in (TOTP apps and one-time backup codes, through django-otp).

A member enrols an authenticator app from a QR code drawn here (segno, no network) and gets ten
backup codes; from then on their password alone opens nothing. An owner can make an
organization require two-factor: its members then reach no organization page and no API
session until they have verified a device in this session (or enrolled one).
Personal API tokens are not affected (they are separate credentials, revocable by the owner).
"""

from __future__ import annotations

import base64
import math
import secrets
from collections.abc import Callable, Iterable

import segno
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django_otp import match_token, user_has_device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import Membership, Organization, User
from accounts.roles import Capability, role_can
from accounts.tenancy import org_context_for_request

BACKUP_CODE_COUNT = 10
TOTP_DEVICE_NAME = "authenticator"
BACKUP_DEVICE_NAME = "backup"
# Set in the session by a sign-in through an organization's identity provider (the sso app):
# the provider authenticated the user, so two-factor (for password sign-ins) is not asked.
IDENTITY_PROVIDER_SESSION_KEY = "signed_in_by_identity_provider"


# -- selectors ------------------------------------------------------------------------------


def two_factor_required(*, user: User) -> bool:
    """Whether any organization the user belongs to requires two-factor sign-in."""
    return Membership.objects.filter(user=user, organization__require_two_factor=True).exists()


def two_factor_needed(*, user: User, organization: Organization | None) -> bool:
    """Whether the user's session must pass a second factor: they have a device, or the
    organization the request acts in requires one (another organization's requirement applies
    there only: issue 28). One query (asked on every unverified request)."""
    if organization is not None and organization.require_two_factor:
        return True
    devices = [
        model.objects.filter(user=OuterRef("pk"), confirmed=True)
        for model in (TOTPDevice, StaticDevice)
    ]
    return User.objects.filter(pk=user.pk).filter(Exists(devices[0]) | Exists(devices[1])).exists()


def two_factor_enrolled(*, user: User) -> bool:
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def backup_codes_left(*, user: User) -> int:
    return StaticToken.objects.filter(device__user=user, device__confirmed=True).count()


def totp_pending_device(*, user: User) -> TOTPDevice | None:
    """The authenticator being set up (scanned, not yet confirmed with a code)."""
    return TOTPDevice.objects.filter(user=user, confirmed=False).order_by("-pk").first()


def totp_manual_key(*, device: TOTPDevice) -> str:
    """The secret as authenticator apps take it when typed in (base32, in groups of four)."""
    key = base64.b32encode(device.bin_key).decode().rstrip("=")
    return " ".join(key[index : index + 4] for index in range(0, len(key), 4))


def totp_qr_svg(*, device: TOTPDevice) -> str:
    """The device's otpauth:// URL as an inline SVG QR code (drawn here; nothing is fetched)."""
    return segno.make(device.config_url, error="m").svg_inline(scale=5, border=2)


# -- services -------------------------------------------------------------------------------


@transaction.atomic
def totp_enrolment_start(*, user: User, verified: bool = False) -> TOTPDevice:
    """The user's unconfirmed authenticator (a new secret each time enrolment starts).

    `verified`: the session passed the second factor. Replacing an authenticator needs it: a
    new device's code signs the session in as verified, so the password alone must not do."""
    _refuse_unverified_replacement(user=user, verified=verified)
    TOTPDevice.objects.filter(user=user, confirmed=False).delete()
    return TOTPDevice.objects.create(user=user, name=TOTP_DEVICE_NAME, confirmed=False)


@transaction.atomic
def totp_enrolment_confirm(
    *, user: User, code: str, verified: bool = False
) -> tuple[TOTPDevice, list[str]]:
    """Confirm the pending authenticator with a code from it; returns it and new backup codes
    (shown once). Any earlier authenticator is replaced (only in a verified session)."""
    _refuse_unverified_replacement(user=user, verified=verified)
    device = totp_pending_device(user=user)
    if device is None:
        raise ValidationError({"code": _("Start again: scan the new QR code first.")})
    _refuse_while_throttled([device])
    if not device.verify_token(_digits(code)):
        raise ValidationError({"code": _("That code is not right; enter the current six digits.")})
    TOTPDevice.objects.filter(user=user, confirmed=True).delete()
    device.confirmed = True
    device.save(update_fields=["confirmed"])
    return device, backup_codes_issue(user=user)


@transaction.atomic
def backup_codes_issue(*, user: User) -> list[str]:
    """Ten new one-time backup codes; the earlier ones stop working."""
    device, _created = StaticDevice.objects.get_or_create(
        user=user, name=BACKUP_DEVICE_NAME, defaults={"confirmed": True}
    )
    device.token_set.all().delete()
    codes = [secrets.token_hex(5) for _index in range(BACKUP_CODE_COUNT)]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=code) for code in codes)
    return codes


def two_factor_verify(*, user: User, code: str) -> TOTPDevice | StaticDevice:
    """The device that accepts `code` (an authenticator code or an unused backup code)."""
    # One attempt per code: every failed attempt slows the device down (django-otp throttling).
    cleaned = code.strip().lower().replace(" ", "").replace("-", "")
    _refuse_while_throttled(TOTPDevice.objects.filter(user=user, confirmed=True))
    device = match_token(user, cleaned)
    if device is None:
        raise ValidationError({"code": _("That code is not right.")})
    return device


def _refuse_while_throttled(devices: Iterable[TOTPDevice]) -> None:
    """During django-otp's throttle every code is refused, the right one too: say so, rather
    than "That code is not right" (issue 28)."""
    for device in devices:
        allowed, details = device.verify_is_allowed()
        if not allowed:
            locked_until = (details or {}).get("locked_until")
            seconds = (
                max(1, math.ceil((locked_until - timezone.now()).total_seconds()))
                if locked_until
                else 1
            )
            raise ValidationError(
                {
                    "code": ngettext(
                        "Too many wrong codes: wait %(seconds)s second, then enter the current "
                        "code.",
                        "Too many wrong codes: wait %(seconds)s seconds, then enter the current "
                        "code.",
                        seconds,
                    )
                    % {"seconds": seconds}
                }
            )


@transaction.atomic
def two_factor_disable(*, user: User) -> None:
    if two_factor_required(user=user):
        raise ValidationError(
            {"code": _("An organization you belong to requires two-factor sign-in.")}
        )
    TOTPDevice.objects.filter(user=user).delete()
    StaticDevice.objects.filter(user=user).delete()


@transaction.atomic
def organization_require_two_factor(
    *, organization: Organization, actor: User, actor_verified: bool, required: bool
) -> Organization:
    membership = Membership.objects.filter(user=actor, organization=organization).first()
    if membership is None or not role_can(membership.role, Capability.MANAGE_MEMBERS):
        raise PermissionDenied(_("You may not do this in this organization."))
    if required and not actor_verified:
        # Otherwise the owner would lock themselves out of the page they are on.
        raise ValidationError(
            {"require_two_factor": _("Set up two-factor sign-in for yourself first.")}
        )
    organization.require_two_factor = required
    organization.save(update_fields=["require_two_factor"])
    return organization


def _refuse_unverified_replacement(*, user: User, verified: bool) -> None:
    if not verified and two_factor_enrolled(user=user):
        raise PermissionDenied(_("Verify with your current authenticator first."))


def _digits(code: str) -> str:
    return "".join(character for character in code if character.isdigit())[:8]


# -- the gate -------------------------------------------------------------------------------

# Reachable without a verified device: signing in and out, two-factor itself, the language
# switch, the vendor portal (vendors have no account), the health check and static files.
_OPEN_URL_NAMES = {
    "accounts:login",
    "accounts:logout",
    "accounts:two_factor",
    "accounts:two_factor_verify",
    # Working in an organization that does not require it stays possible (the requirement is
    # the organization's own): switching there needs no second factor.
    "accounts:switch_organization",
    "set_language",
    "accounts:set_language",  # the header's switch
    "assessments:set_language",
    "healthz",
}
_OPEN_PREFIXES = ("/v/", "/static/")


class TwoFactorRequiredMiddleware:
    """Sends a signed-in user who has a device, or who acts in an organization that requires
    two-factor, to verification (or enrolment) before anything else; API calls in such a
    session get 403."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view_func: Callable, view_args: tuple, view_kwargs: dict
    ) -> HttpResponse | None:
        user = request.user
        if not user.is_authenticated or user.is_verified():
            return None
        if request.session.get(IDENTITY_PROVIDER_SESSION_KEY):
            return None
        match = request.resolver_match
        if match is not None and match.view_name in _OPEN_URL_NAMES:
            return None
        context = org_context_for_request(request)
        organization = context.organization if context else None
        if request.path.startswith(_OPEN_PREFIXES) or not two_factor_needed(
            user=user, organization=organization
        ):
            return None
        if request.path.startswith("/api/"):
            message = (
                _("Your organization requires two-factor sign-in: verify in the web app.")
                if organization is not None and organization.require_two_factor
                else _("Your account uses two-factor sign-in: verify in the web app.")
            )
            return JsonResponse({"errors": {"two_factor": [message]}}, status=403)
        page = "accounts:two_factor_verify" if user_has_device(user) else "accounts:two_factor"
        return redirect(f"{reverse(page)}?{urlencode({'next': request.get_full_path()})}")


def is_safe_next(request: HttpRequest, url: str) -> bool:
    return bool(url) and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
