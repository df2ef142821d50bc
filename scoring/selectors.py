"""Reads of the published catalogue in the database (shared by every organization)."""

from __future__ import annotations

from questionnaires.models import QuestionnaireVersion

from .models import Ruleset
from .registry import default_ruleset


def default_ruleset_for(*, questionnaire: QuestionnaireVersion) -> Ruleset | None:
    """The published ruleset that scores answers of `questionnaire` by default (the one choice,
    `scoring.registry.default_ruleset`: the newest that applies to it), or None when none is
    loaded."""
    return default_ruleset(Ruleset.objects.filter(applies_to=questionnaire))
