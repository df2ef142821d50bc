"""Reads of the rulesets in the database, by organization.

A ruleset is shipped (every organization's) or an organization's own, written for one of its own
questionnaires; an organization sees its own, the shipped ones, and those of a questionnaire
shared with it (`questionnaires.selectors`). Which ruleset scores an assessment's answers does
not depend on who asks: a ruleset always belongs to the owner of the questionnaire it scores
(the upload refuses anything else), so the assessment's questionnaire decides.

Also the compiled engine of a ruleset (cached per process), and an organization's test cases of
a ruleset (the rule workbench).
"""

from __future__ import annotations

from functools import lru_cache

from django.db.models import Q, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from accounts.models import Organization
from questionnaires.models import CatalogStatus, QuestionnaireVersion
from questionnaires.selectors import visible_to_filter

from .engine import CompiledRuleset
from .models import Framework, Ruleset, RulesetTestCase
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


@lru_cache(maxsize=16)
def compiled_ruleset(
    ruleset_pk: int, ruleset_hash: str, questionnaire_hash: str
) -> CompiledRuleset:
    """Compiled once per process and ruleset version (content hashes key the cache): the engine
    the workers score with, and the rule workbench too."""
    ruleset = Ruleset.objects.select_related("questionnaire").get(pk=ruleset_pk)
    return CompiledRuleset(ruleset.spec, ruleset.questionnaire.spec)


def engine_for(ruleset: Ruleset) -> CompiledRuleset:
    return compiled_ruleset(ruleset.pk, ruleset.content_hash, ruleset.questionnaire.content_hash)


def ruleset_get(*, organization: Organization, ruleset_id: object) -> Ruleset:
    """One ruleset the organization may open in the rule workbench: one it sees (shipped, its
    own published, shared with it) or one of its own drafts; a 404 otherwise."""
    visible = rulesets_visible_to(organization=organization).values("pk")
    rulesets = Ruleset.objects.filter(Q(pk__in=visible) | Q(organization=organization))
    return get_object_or_404(rulesets.select_related("questionnaire"), pk=ruleset_id)


def test_cases_for(*, organization: Organization, ruleset: Ruleset) -> QuerySet[RulesetTestCase]:
    return RulesetTestCase.objects.filter(organization=organization, ruleset=ruleset)


def test_case_get(
    *, organization: Organization, ruleset: Ruleset, case_id: object
) -> RulesetTestCase:
    return get_object_or_404(test_cases_for(organization=organization, ruleset=ruleset), pk=case_id)
