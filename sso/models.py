"""An organization's OpenID Connect provider, as its owner configured it.

The provider vouches for the addresses of some email domains; a domain is vouched for by one
organization at most (a unique row), so an address finds its organization without asking. A
person at a provider (its issuer and their `sub`) is bound to one user on their first sign-in.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.roles import Role


class IdentityProvider(models.Model):
    organization = models.OneToOneField(
        "accounts.Organization", on_delete=models.CASCADE, related_name="identity_provider"
    )
    issuer = models.URLField(_("issuer URL"), max_length=500)
    client_id = models.CharField(_("client ID"), max_length=255)
    # Encrypted at rest (core.encryption); never shown again once saved.
    client_secret_encrypted = models.TextField()
    allow_join = models.BooleanField(_("new users may join"), default=False)
    default_role = models.CharField(
        _("role of a new member"), max_length=20, choices=Role.choices, default=Role.VIEWER
    )
    require_sso = models.BooleanField(_("require single sign-on"), default=False)
    # The one owner who keeps signing in with a password (and two-factor) when SSO is required.
    break_glass_owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(require_sso=True, break_glass_owner__isnull=True),
                name="sso_required_has_break_glass_owner",
            )
        ]

    def __str__(self) -> str:
        return self.issuer


class VouchedDomain(models.Model):
    provider = models.ForeignKey(IdentityProvider, on_delete=models.CASCADE, related_name="domains")
    domain = models.CharField(max_length=253, unique=True)

    class Meta:
        ordering = ["domain"]

    def __str__(self) -> str:
        return self.domain


# OpenID Connect: `sub` is at most 255 ASCII characters.
SUBJECT_MAX_LENGTH = 255


class SubjectBinding(models.Model):
    """The provider's person (issuer, `sub`) an AVIA user is: bound on the user's first single
    sign-on, then the sign-in is matched by it (not by the address, which a provider may give
    to someone else). One person per user and issuer; one user per person."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_subjects"
    )
    issuer = models.URLField(max_length=500)
    subject = models.CharField(max_length=SUBJECT_MAX_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="sso_subject_one_user"),
            models.UniqueConstraint(
                fields=["user", "issuer"], name="sso_user_one_subject_per_issuer"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
