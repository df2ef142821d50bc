"""Reads of the single sign-on settings."""

from __future__ import annotations

from django.utils.translation import gettext as _

from accounts.models import Organization
from core.encryption import secret_decrypt

from .models import IdentityProvider, VouchedDomain
from .oidc import SsoRefused


def provider_for(*, organization: Organization) -> IdentityProvider | None:
    return IdentityProvider.objects.filter(organization=organization).first()


def provider_for_email(*, email: str) -> IdentityProvider:
    """The provider vouching for the address's domain, or a refusal naming the domain."""
    domain = email.rpartition("@")[2].strip().lower()
    found = (
        VouchedDomain.objects.select_related("provider__organization").filter(domain=domain).first()
        if domain
        else None
    )
    if found is None:
        raise SsoRefused(
            _("No organization signs in with single sign-on for addresses at %(domain)s.")
            % {"domain": domain or email},
            code="unknown_organization",
        )
    return found.provider


def client_secret(*, provider: IdentityProvider) -> str:
    return secret_decrypt(provider.client_secret_encrypted)


def email_domains(*, provider: IdentityProvider) -> list[str]:
    return list(provider.domains.values_list("domain", flat=True))
