"""Reads of the catalogue in the database: the rulesets an organization may use, their compiled
engines, and an organization's test cases of a ruleset (the rule workbench)."""

from __future__ import annotations

from functools import lru_cache

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.models import Organization
from questionnaires.models import QuestionnaireVersion

from .engine import CompiledRuleset
from .models import Ruleset, RulesetTestCase
from .registry import default_ruleset


def default_ruleset_for(*, questionnaire: QuestionnaireVersion) -> Ruleset | None:
    """The published ruleset that scores answers of `questionnaire` by default (the one choice,
    `scoring.registry.default_ruleset`: the newest that applies to it), or None when none is
    loaded."""
    return default_ruleset(Ruleset.objects.filter(applies_to=questionnaire))


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


def rulesets_visible_to(*, organization: Organization) -> QuerySet[Ruleset]:
    """The rulesets an organization may open: the shipped catalogue's."""
    return Ruleset.objects.select_related("questionnaire")


def ruleset_get(*, organization: Organization, ruleset_id: object) -> Ruleset:
    """One ruleset the organization may open, or a 404."""
    return get_object_or_404(rulesets_visible_to(organization=organization), pk=ruleset_id)


def test_cases_for(*, organization: Organization, ruleset: Ruleset) -> QuerySet[RulesetTestCase]:
    return RulesetTestCase.objects.filter(organization=organization, ruleset=ruleset)


def test_case_get(
    *, organization: Organization, ruleset: Ruleset, case_id: object
) -> RulesetTestCase:
    return get_object_or_404(test_cases_for(organization=organization, ruleset=ruleset), pk=case_id)
