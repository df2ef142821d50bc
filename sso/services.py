"""Configuring an organization's provider, and what a checked ID token lets in."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from accounts.models import Membership, Organization, User
from accounts.roles import Role
from core.encryption import secret_encrypt
from core.errors import ServiceError

from .models import SUBJECT_MAX_LENGTH, IdentityProvider, SubjectBinding, VouchedDomain
from .oidc import (
    SsoRefused,
    refusal_text,
    sso_outbound_policy,
    url_host_port,
    url_problem,
)
from .selectors import provider_for

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProviderSettings:
    issuer: str
    client_id: str
    client_secret: str  # empty: keep the stored one
    email_domains: list[str]
    allow_join: bool
    default_role: str
    require_sso: bool
    break_glass_owner_id: int | None


def _issuer_error(issuer: str) -> str | None:
    """Why single sign-on may not use `issuer`: not https://, or an internal address that the
    operator's SSO_ALLOWED_NETWORKS does not list (core.outbound; checked again on every call,
    on the address connected to). Plain http:// only to a listed network (development, tests)."""
    scheme = urlsplit(issuer).scheme
    target = url_host_port(issuer)
    if scheme not in ("https", "http") or target is None:
        return _("The issuer URL must start with https://.")
    if (refused := url_problem(issuer)) is not None:
        return refusal_text(refused)
    if scheme == "http" and not sso_outbound_policy().within_allowed_networks(*target):
        return _("The issuer URL must start with https://.")
    return None


def _normalized_domains(domains: list[str]) -> list[str]:
    cleaned = sorted({d.strip().lower().lstrip("@") for d in domains if d.strip()})
    for domain in cleaned:
        if "." not in domain or "@" in domain or " " in domain:
            raise ServiceError(
                {"email_domains": [_("“%(domain)s” is not an email domain.") % {"domain": domain}]}
            )
    if not cleaned:
        raise ServiceError({"email_domains": [_("Name at least one email domain.")]})
    return cleaned


@transaction.atomic
def provider_configure(
    *, organization: Organization, settings: ProviderSettings
) -> IdentityProvider:
    """Save the organization's provider. The caller has checked the owner's capability."""
    errors: dict[str, list[str]] = {}
    issuer = settings.issuer.strip().rstrip("/")
    if message := _issuer_error(issuer):
        errors["issuer"] = [message]
    if settings.default_role not in Role.values:
        errors["default_role"] = [_("Choose a role.")]
    existing = provider_for(organization=organization)
    if not settings.client_secret and existing is None:
        errors["client_secret"] = [_("Enter the client secret.")]
    break_glass = None
    if settings.break_glass_owner_id is not None:
        break_glass = User.objects.filter(
            pk=settings.break_glass_owner_id,
            memberships__organization=organization,
            memberships__role=Role.OWNER,
        ).first()
        if break_glass is None:
            errors["break_glass_owner"] = [_("Choose an owner of this organization.")]
    if settings.require_sso and settings.break_glass_owner_id is None:
        errors["break_glass_owner"] = [
            _("Choose the owner who keeps signing in with a password when SSO is required.")
        ]
    try:
        domains = _normalized_domains(settings.email_domains)
    except ServiceError as error:
        errors.update(error.raw_errors)
        domains = []
    taken = (
        VouchedDomain.objects.filter(domain__in=domains)
        .exclude(provider__organization=organization)
        .values_list("domain", flat=True)
    )
    if taken:
        errors["email_domains"] = [
            _("%(domain)s is already vouched for by another organization.") % {"domain": domain}
            for domain in taken
        ]
    if errors:
        raise ServiceError(errors)
    provider = existing or IdentityProvider(organization=organization)
    provider.issuer = issuer
    provider.client_id = settings.client_id.strip()
    if settings.client_secret:
        provider.client_secret_encrypted = secret_encrypt(settings.client_secret)
    provider.allow_join = settings.allow_join
    provider.default_role = settings.default_role
    provider.require_sso = settings.require_sso
    provider.break_glass_owner = break_glass
    provider.save()
    provider.domains.exclude(domain__in=domains).delete()
    try:
        with transaction.atomic():
            for domain in domains:
                VouchedDomain.objects.get_or_create(provider=provider, domain=domain)
    except IntegrityError:  # claimed by another organization meanwhile
        raise ServiceError(
            {"email_domains": [_("A domain is already vouched for by another organization.")]}
        ) from None
    return provider


def _subject(claims: dict[str, object]) -> str:
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject or len(subject) > SUBJECT_MAX_LENGTH:
        raise SsoRefused(
            _("The sign-in was refused: your organization's provider did not say who you are."),
            code="no_subject",
        )
    return subject


def _subject_bound_elsewhere(*, user: User, issuer: str, subject: str, email: str) -> SsoRefused:
    # Not in the audit trail: sign-ins are not audited events (assessments' trail is per
    # organization's work); the log is where an operator looks for refused sign-ins.
    logger.warning(
        "SSO sign-in refused: %s at %s names user %s, who is bound to another subject there "
        "(token's sub %r)",
        email,
        issuer,
        user.pk,
        subject,
    )
    return SsoRefused(
        _(
            "The sign-in was refused: the AVIA account of %(email)s belongs to another person at your organization's provider (bound at their first single sign-on). Ask an owner."
        )
        % {"email": email},
        code="subject_mismatch",
    )


def _bind(*, user: User, issuer: str, subject: str, email: str) -> None:
    """Bind the provider's person to the user on their first single sign-on."""
    try:
        with transaction.atomic():
            SubjectBinding.objects.create(user=user, issuer=issuer, subject=subject)
    except IntegrityError:  # a sign-in of the same person or user meanwhile
        if not SubjectBinding.objects.filter(user=user, issuer=issuer, subject=subject).exists():
            raise _subject_bound_elsewhere(
                user=user, issuer=issuer, subject=subject, email=email
            ) from None


@transaction.atomic
def sign_in_member(*, provider: IdentityProvider, claims: dict[str, object]) -> User:
    """The member the checked claims name: the user bound to the provider's person (`iss`,
    `sub`), else the user of the address on their first sign-in (then bound), else joined with
    the default role when the owner allows it; otherwise a refusal. The address must be verified
    (`email_verified: true`, whether or not sent: the address decides the first binding) and
    within the vouched domains."""
    subject = _subject(claims)
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email:
        raise SsoRefused(
            _(
                "The sign-in was refused: your organization's provider did not give your email address."
            ),
            code="no_email",
        )
    email = email.strip().lower()
    if claims.get("email_verified") is not True:
        raise SsoRefused(
            _("The sign-in was refused: your organization's provider has not verified %(email)s.")
            % {"email": email},
            code="email_not_verified",
        )
    domain = email.rpartition("@")[2]
    if not provider.domains.filter(domain=domain).exists():
        raise SsoRefused(
            _(
                "The sign-in was refused: %(email)s is outside the email domains your organization's provider vouches for."
            )
            % {"email": email},
            code="email_outside_domains",
        )
    issuer = provider.issuer
    binding = (
        SubjectBinding.objects.select_related("user").filter(issuer=issuer, subject=subject).first()
    )
    user = binding.user if binding is not None else User.objects.filter(email=email).first()
    if (
        binding is None
        and user is not None
        and SubjectBinding.objects.filter(user=user, issuer=issuer).exists()
    ):
        raise _subject_bound_elsewhere(user=user, issuer=issuer, subject=subject, email=email)
    organization = provider.organization
    if (
        user is not None
        and Membership.objects.filter(user=user, organization=organization).exists()
    ):
        if not user.is_active:
            raise SsoRefused(_("This account is switched off."), code="inactive")
    else:
        if not provider.allow_join:
            raise SsoRefused(
                _(
                    "%(email)s is not a member of %(organization)s, and new users may not join by single sign-on. Ask an owner to add you."
                )
                % {"email": email, "organization": organization.name},
                code="join_not_allowed",
            )
        if user is None:
            user = User.objects.create_user(email)
        Membership.objects.create(user=user, organization=organization, role=provider.default_role)
    if binding is None:
        _bind(user=user, issuer=issuer, subject=subject, email=email)
    return user


def password_sign_in_check(user: User) -> None:
    """Refuse a password sign-in to a member of an organization that requires single sign-on,
    unless they are its break-glass owner (settings.PASSWORD_SIGN_IN_CHECKS)."""
    requiring = (
        IdentityProvider.objects.filter(require_sso=True, organization__memberships__user=user)
        .exclude(break_glass_owner=user)
        .select_related("organization")
        .first()
    )
    if requiring is not None:
        raise ValidationError(
            _(
                "%(organization)s signs in with single sign-on: use “Sign in with your organization's SSO” below."
            )
            % {"organization": requiring.organization.name},
            code="sso_required",
        )
