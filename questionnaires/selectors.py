"""Reads of questionnaire versions, by organization: the one place that decides which
questionnaires an organization sees and may use.

An organization sees the shipped questionnaires (no owner), its own published ones, and the
published ones another organization shares with it (`CatalogueShare`, not revoked). Every page,
endpoint and service that lists or accepts a questionnaire asks here; another organization's
custom questionnaire is then a 404 like any other tenant object.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404

from accounts.models import Organization

from .models import CatalogStatus, CatalogueShare, QuestionnaireVersion


def shares_received(*, organization: Organization) -> QuerySet[CatalogueShare]:
    """The shares made to `organization` that are not revoked."""
    return CatalogueShare.objects.filter(shared_with=organization, revoked_at__isnull=True)


def visible_to_filter(organization: Organization, *, slug_field: str = "slug") -> Q:
    """The condition on a catalogue version (a questionnaire, or a ruleset with
    `slug_field="questionnaire__slug"`) that `organization` may see: shipped, its own, or
    shared with it."""
    shared = shares_received(organization=organization).filter(
        owner=OuterRef("organization"), slug=OuterRef(slug_field)
    )
    return (Q(organization__isnull=True) | Q(organization=organization) | Q(Exists(shared))) & Q(
        status=CatalogStatus.PUBLISHED
    )


def questionnaires_visible_to(*, organization: Organization) -> QuerySet[QuestionnaireVersion]:
    """The published questionnaire versions `organization` may see and start assessments with."""
    return QuestionnaireVersion.objects.filter(visible_to_filter(organization))


def questionnaire_visible(
    *, organization: Organization, slug: str, version: str
) -> QuestionnaireVersion | None:
    """`slug@version` among the questionnaires `organization` may use, or None (a slug is never
    both shipped and custom, nor both an organization's own and shared with it: the upload and
    the share refuse it)."""
    return (
        questionnaires_visible_to(organization=organization)
        .filter(slug=slug, version=version)
        .first()
    )


def questionnaires_owned_by(*, organization: Organization) -> QuerySet[QuestionnaireVersion]:
    """The organization's own questionnaire versions, drafts included."""
    return QuestionnaireVersion.objects.filter(organization=organization)


def shares_given(*, organization: Organization) -> QuerySet[CatalogueShare]:
    return CatalogueShare.objects.filter(owner=organization).select_related("shared_with")


def slug_taken_for(*, organization: Organization, slug: str) -> str | None:
    """Why `organization` may not name a questionnaire of its own `slug`: "shipped" (a shipped
    questionnaire has it) or "shared" (another organization shares one of that slug with it),
    else None. Keeps `slug@version` one version in what an organization sees."""
    if QuestionnaireVersion.objects.filter(organization__isnull=True, slug=slug).exists():
        return "shipped"
    if shares_received(organization=organization).filter(slug=slug).exists():
        return "shared"
    return None


def share_given(*, organization: Organization, share_id: int) -> CatalogueShare:
    """One of the organization's shares; 404 for any other."""
    found = shares_given(organization=organization).filter(pk=share_id).first()
    if found is None:
        raise Http404
    return found
