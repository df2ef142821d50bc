"""Writes for organizations, memberships, branding and API tokens.

Every function is keyword-only and validates before it saves. Permission checks are
repeated here (not only in views) so that no caller can skip them.
"""

import hashlib
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from accounts.emails import member_invitation_send
from accounts.limits import invitation_problem
from accounts.models import (
    TOKEN_DISPLAY_PREFIX_LENGTH,
    TOKEN_KEY_PREFIX,
    ApiToken,
    Membership,
    MembershipInvitation,
    Organization,
    OrganizationKind,
    User,
)
from accounts.roles import Capability, Role, role_can
from accounts.validators import logo_content_type, validate_brand_colour, validate_time_zone
from core.errors import ForbiddenError, ServiceError
from core.text import text_errors

# Recording every request would turn each API read into a write.
API_TOKEN_USE_RECORD_INTERVAL = timedelta(minutes=1)


class ApiTokenInvalid(Exception):
    """The key is unknown, revoked, or its user may no longer act in its organization."""


# Organizations -------------------------------------------------------------------------


@transaction.atomic
def organization_create(
    *, name: str, owner_email: str, kind: str = OrganizationKind.ORGANIZATION
) -> Organization:
    """Create an organization (or, with ``kind``, a consultancy) owned by ``owner_email``,
    creating that user if needed.

    A new owner gets an unusable password: they sign in after an operator sets one.
    """
    name = name.strip()
    email = _normalized_email(owner_email, field="owner_email")
    if not name:
        raise ServiceError({"name": [_("Enter a name.")]})
    # The hostile-text rule of every name (no control characters or direction overrides) and
    # the column's length, as a refusal rather than the model's ValidationError.
    if problems := text_errors(name, max_length=Organization._meta.get_field("name").max_length):
        raise ServiceError({"name": problems})
    if Organization.objects.filter(name__iexact=name).exists():
        raise ServiceError({"name": [_("An organization with this name already exists.")]})
    if kind not in OrganizationKind.values:
        raise ServiceError({"kind": [_("Choose an organization or a consultancy.")]})
    organization = Organization(name=name, slug=_unique_slug(name), kind=kind)
    organization.full_clean(validate_unique=False, validate_constraints=False)
    organization.save()
    owner = _user_for_email(email)
    Membership.objects.create(user=owner, organization=organization, role=Role.OWNER)
    return organization


@transaction.atomic
def organization_update_branding(
    *,
    organization: Organization,
    actor: User,
    report_display_name: str,
    brand_colour: str,
    logo: bytes | None = None,
    remove_logo: bool = False,
    time_zone: str | None = None,
    email_sender_name: str | None = None,
    email_reply_to: str | None = None,
) -> Organization:
    """Change how reports present the organization. ``logo`` replaces the current one;
    ``time_zone`` (an IANA name; None leaves it) is the clock of its pages, reports and
    emails; ``email_sender_name`` and ``email_reply_to`` (None leaves them, "" clears) are the
    name its emails come from and the address replies go to (the envelope stays the
    operator's)."""
    _require_capability(
        actor=actor, organization_id=organization.pk, capability=Capability.MANAGE_BRANDING
    )
    errors: dict[str, list[str]] = {}
    report_display_name = report_display_name.strip()
    if len(report_display_name) > 200:
        errors["report_display_name"] = [_("Use at most 200 characters.")]
    elif problems := text_errors(report_display_name):
        errors["report_display_name"] = list(problems)
    brand_colour = brand_colour.strip().upper()
    if brand_colour:
        try:
            validate_brand_colour(brand_colour)
        except ValidationError as error:
            errors["brand_colour"] = error.messages
    content_type = ""
    if logo is not None:
        try:
            content_type = logo_content_type(logo)
        except ValidationError as error:
            errors["logo"] = error.messages
    if time_zone is not None:
        try:
            validate_time_zone(time_zone)
        except ValidationError as error:
            errors["time_zone"] = error.messages
    if email_sender_name is not None:
        email_sender_name = email_sender_name.strip()
        limit = Organization._meta.get_field("email_sender_name").max_length
        if problems := text_errors(email_sender_name, max_length=limit):
            errors["email_sender_name"] = list(problems)
    if email_reply_to:
        try:
            email_reply_to = _normalized_email(email_reply_to, field="email_reply_to")
        except ServiceError as error:
            errors.update(error.errors)
    if errors:
        raise ServiceError(errors)

    organization.report_display_name = report_display_name
    organization.brand_colour = brand_colour
    update_fields = ["report_display_name", "brand_colour"]
    if logo is not None:
        organization.logo = logo
        organization.logo_content_type = content_type
        update_fields += ["logo", "logo_content_type"]
    elif remove_logo:
        organization.logo = None
        organization.logo_content_type = ""
        update_fields += ["logo", "logo_content_type"]
    if time_zone is not None:
        organization.time_zone = time_zone
        update_fields.append("time_zone")
    if email_sender_name is not None:
        organization.email_sender_name = email_sender_name
        update_fields.append("email_sender_name")
    if email_reply_to is not None:
        organization.email_reply_to = email_reply_to.strip()
        update_fields.append("email_reply_to")
    organization.save(update_fields=update_fields)
    return organization


# Users ---------------------------------------------------------------------------------


def user_preferred_language_set(*, user: User, language: str) -> None:
    """Remember the language a user chose (applied on their next device's first page)."""
    if language not in dict(settings.LANGUAGES):
        raise ServiceError({"language": [_("Choose English or Traditional Chinese.")]})
    if user.preferred_language != language:
        User.objects.filter(pk=user.pk).update(preferred_language=language)
        user.preferred_language = language


# Memberships ---------------------------------------------------------------------------


@transaction.atomic
def membership_add(
    *,
    organization: Organization,
    email: str,
    role: str,
    actor: User,
    language: str | None = None,
) -> Membership | MembershipInvitation:
    """Add a user (created if unknown, with an unusable password, in `language`) to an
    organization, and email them an invitation (a new user's link sets their password). A user
    who already has an account is invited instead: a membership once they accept."""
    _require_capability(
        actor=actor, organization_id=organization.pk, capability=Capability.MANAGE_MEMBERS
    )
    _validate_role(role)
    if language is not None and language not in dict(settings.LANGUAGES):
        raise ServiceError({"language": [_("Choose English or Traditional Chinese.")]})
    email = _normalized_email(email, field="email")
    user = _user_for_email(email, language=language)
    if Membership.objects.filter(user=user, organization=organization).exists():
        raise ServiceError({"email": [_("%(email)s is already a member.") % {"email": user.email}]})
    if problem := invitation_problem(organization=organization, to_address=user.email):
        raise ServiceError({"email": [problem]})
    if _has_an_account(user):
        # Consent first: an existing account is only invited; it joins once it accepts.
        invitation, _created = MembershipInvitation.objects.update_or_create(
            user=user, organization=organization, defaults={"role": role, "invited_by": actor}
        )
        member_invitation_send(membership=invitation, actor=actor)
        return invitation
    membership = Membership.objects.create(user=user, organization=organization, role=role)
    member_invitation_send(membership=membership, actor=actor)
    return membership


def _has_an_account(user: User) -> bool:
    """Whether the user existed before this invitation: a password chosen, or a membership."""
    return user.has_usable_password() or Membership.objects.filter(user=user).exists()


@transaction.atomic
def invitation_respond(
    *, invitation: MembershipInvitation, user: User, accept: bool
) -> Membership | None:
    """Accept (the membership is created) or decline an invitation addressed to `user`."""
    if invitation.user_id != user.pk:
        raise ForbiddenError({"invitation": [_("This invitation is addressed to someone else.")]})
    membership = None
    if accept:
        membership, _created = Membership.objects.get_or_create(
            user=user, organization=invitation.organization, defaults={"role": invitation.role}
        )
    invitation.delete()
    return membership


@transaction.atomic
def membership_change_role(*, membership: Membership, role: str, actor: User) -> Membership:
    _require_capability(
        actor=actor,
        organization_id=membership.organization_id,
        capability=Capability.MANAGE_MEMBERS,
    )
    _validate_role(role)
    membership = _locked(membership)
    if membership.role == Role.OWNER and role != Role.OWNER:
        _refuse_if_last_owner(membership, message=_("The last owner cannot be demoted."))
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership, actor: User) -> None:
    """Remove a member (an owner's action) or leave (the member's own action).

    The member's tokens for the organization are revoked, so they stay dead even if
    the user is added again later.
    """
    if actor.pk != membership.user_id:
        _require_capability(
            actor=actor,
            organization_id=membership.organization_id,
            capability=Capability.MANAGE_MEMBERS,
        )
    membership = _locked(membership)
    if membership.role == Role.OWNER:
        _refuse_if_last_owner(membership, message=_("The last owner cannot be removed."))
    ApiToken.objects.filter(
        user_id=membership.user_id,
        organization_id=membership.organization_id,
        revoked_at__isnull=True,
    ).update(revoked_at=timezone.now())
    membership.delete()


# API tokens ----------------------------------------------------------------------------


def api_token_hash(key: str) -> str:
    """SHA-256 suffices: the key holds 256 random bits, so there is nothing to guess."""
    return hashlib.sha256(key.encode()).hexdigest()


@transaction.atomic
def api_token_create(*, user: User, organization: Organization, name: str) -> tuple[ApiToken, str]:
    """Create a token for ``user`` in ``organization``; return it with its key.

    The key is returned only here: the database keeps its hash.
    """
    name = name.strip()
    if not name:
        raise ServiceError({"name": [_("Enter a name.")]})
    if len(name) > 100:
        raise ServiceError({"name": [_("Use at most 100 characters.")]})
    if (
        not user.is_active
        or not Membership.objects.filter(user=user, organization=organization).exists()
    ):
        raise ForbiddenError(
            {
                "permission_denied": [
                    _("%(user)s is not a member of %(organization)s.")
                    % {"user": user.email, "organization": organization.name}
                ]
            }
        )
    key = TOKEN_KEY_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        organization=organization,
        name=name,
        key_prefix=key[:TOKEN_DISPLAY_PREFIX_LENGTH],
        key_hash=api_token_hash(key),
    )
    return token, key


@transaction.atomic
def api_token_revoke(*, token: ApiToken, actor: User) -> ApiToken:
    """Revoke a token: its own user or an owner of its organization may. Idempotent."""
    if actor.pk != token.user_id:
        _require_capability(
            actor=actor, organization_id=token.organization_id, capability=Capability.MANAGE_MEMBERS
        )
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


@transaction.atomic
def api_token_authenticate(*, key: str, now: datetime | None = None) -> ApiToken:
    """The active token for ``key``, its use recorded; raise ApiTokenInvalid otherwise."""
    if not key.startswith(TOKEN_KEY_PREFIX):
        raise ApiTokenInvalid
    token = (
        ApiToken.objects.select_related("user", "organization")
        .defer("organization__logo")
        .annotate(
            user_is_member=Exists(
                Membership.objects.filter(
                    user_id=OuterRef("user_id"), organization_id=OuterRef("organization_id")
                )
            )
        )
        .filter(key_hash=api_token_hash(key))
        .first()
    )
    if (
        token is None
        or token.revoked_at is not None
        or not token.user.is_active
        or not token.user_is_member
    ):
        raise ApiTokenInvalid
    now = now or timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= API_TOKEN_USE_RECORD_INTERVAL:
        ApiToken.objects.filter(pk=token.pk).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - API_TOKEN_USE_RECORD_INTERVAL)
        ).update(last_used_at=now)
        token.last_used_at = now
    return token


# Helpers -------------------------------------------------------------------------------


def _require_capability(*, actor: User, organization_id: int, capability: str) -> None:
    membership = Membership.objects.filter(user=actor, organization_id=organization_id).first()
    if not actor.is_active or membership is None or not role_can(membership.role, capability):
        raise ForbiddenError(
            {"permission_denied": [_("You may not do this in this organization.")]}
        )


def _validate_role(role: str) -> None:
    if role not in Role.values:
        raise ServiceError({"role": [_("%(role)s is not a role.") % {"role": role}]})


def _normalized_email(email: str, *, field: str) -> str:
    email = email.strip().lower()
    try:
        validate_email(email)
    except ValidationError as error:
        raise ServiceError({field: error.messages}) from error
    return email


def _user_for_email(email: str, *, language: str | None = None) -> User:
    user = User.objects.filter(email=email).first()
    if user is None:
        user = User.objects.create_user(email=email, password=None)
        if language:
            user.preferred_language = language
            user.save(update_fields=["preferred_language"])
    return user


def _unique_slug(name: str) -> str:
    base = slugify(name)[:180] or "organization"
    slug, suffix = base, 2
    while Organization.objects.filter(slug=slug).exists():
        slug, suffix = f"{base}-{suffix}", suffix + 1
    return slug


def _locked(membership: Membership) -> Membership:
    """Reload the membership under a row lock, so two owners cannot demote each other at once."""
    return (
        Membership.objects.select_for_update()
        .select_related("organization", "user")
        .defer("organization__logo")
        .get(pk=membership.pk)
    )


def _refuse_if_last_owner(membership: Membership, *, message: str) -> None:
    owners = list(
        Membership.objects.select_for_update()
        .filter(organization_id=membership.organization_id, role=Role.OWNER)
        .values_list("pk", flat=True)
    )
    if len(owners) <= 1:
        raise ServiceError({"membership": [message]})
