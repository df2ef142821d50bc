"""Reads of the rulesets in the database, by organization.

A ruleset is shipped (every organization's) or an organization's own, written for one of its own
questionnaires; an organization sees its own, the shipped ones, and those of a questionnaire
shared with it (`questionnaires.selectors`). Which ruleset scores an assessment's answers does
not depend on who asks: a ruleset always belongs to the owner of the questionnaire it scores
(the upload refuses anything else), so the assessment's questionnaire decides.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from accounts.models import Organization
from questionnaires.models import CatalogStatus, QuestionnaireVersion
from questionnaires.selectors import visible_to_filter

from .models import Framework, Ruleset
from .registry import default_ruleset
from .spec import FrameworkRef


def rulesets_visible_to(*, organization: Organization) -> QuerySet[Ruleset]:
    """The published rulesets `organization` may see and rescore with."""
    return Ruleset.objects.filter(visible_to_filter(organization, slug_field="questionnaire__slug"))


def ruleset_visible(*, organization: Organization, slug: str, version: str) -> Ruleset | None:
    return rulesets_visible_to(organization=organization).filter(slug=slug, version=version).first()


def rulesets_scoring(*, questionnaire: QuestionnaireVersion) -> QuerySet[Ruleset]:
    """The published rulesets that score answers of `questionnaire` (its owner's: an assessment
    made under a share keeps being scored after the share is revoked)."""
    return Ruleset.objects.filter(applies_to=questionnaire, status=CatalogStatus.PUBLISHED)


def default_ruleset_for(*, questionnaire: QuestionnaireVersion) -> Ruleset | None:
    """The published ruleset that scores answers of `questionnaire` by default (the one choice,
    `scoring.registry.default_ruleset`: the newest that applies to it), or None when none is
    loaded."""
    return default_ruleset(rulesets_scoring(questionnaire=questionnaire))


def rulesets_owned_by(*, organization: Organization) -> QuerySet[Ruleset]:
    """The organization's own ruleset versions, drafts included, with their questionnaire."""
    return Ruleset.objects.filter(organization=organization).select_related("questionnaire")


def ruleset_owned(*, organization: Organization, ruleset_id: int) -> Ruleset:
    """One of the organization's own ruleset versions (a draft or published); 404 otherwise,
    whether it does not exist or is another organization's."""
    found = rulesets_owned_by(organization=organization).filter(pk=ruleset_id).first()
    if found is None:
        raise Http404
    return found


def frameworks_for(*, ruleset: Ruleset | None = None) -> dict[str, FrameworkRef]:
    """The framework clauses a finding may cite: the shipped ones, and the ruleset's
    organization's own when it is an uploaded one (they live in its content)."""
    shipped = {framework.ref_id: framework.as_ref() for framework in Framework.objects.all()}
    return ruleset.frameworks(shipped) if ruleset is not None else shipped
