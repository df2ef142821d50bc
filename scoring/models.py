"""Rulesets and framework references, mirrored from the YAML catalogue.

A ruleset version, once loaded, never changes (`load_catalog` refuses); scoring runs record which
version they used, and `spec()` rebuilds exactly that ruleset from the stored content.
"""

from __future__ import annotations

from functools import cached_property

from django.conf import settings
from django.db import models

from accounts.models import Organization
from questionnaires.models import (
    PublishedCatalogVersion,
    QuestionnaireVersion,
    catalog_version_constraints,
)
from questionnaires.spec import Text

from .spec import SEVERITIES, FrameworkRef, RulesetSpec, parse_frameworks, parse_ruleset


class Framework(models.Model):
    """One citable clause (e.g. HK-PDPO-DPP4-1) with its bilingual citation."""

    ref_id = models.CharField(max_length=60, unique=True)
    jurisdiction = models.CharField(max_length=20)
    family_en = models.CharField(max_length=200)
    family_zh_hant = models.CharField(max_length=200)
    title_en = models.TextField()
    title_zh_hant = models.TextField()
    confidence = models.CharField(max_length=1, choices=[("V", "primary"), ("S", "secondary")])

    class Meta:
        ordering = ["ref_id"]

    def __str__(self) -> str:
        return self.ref_id

    def as_ref(self) -> FrameworkRef:
        return FrameworkRef(
            id=self.ref_id,
            jurisdiction=self.jurisdiction,
            family=Text(self.family_en, self.family_zh_hant),
            title=Text(self.title_en, self.title_zh_hant),
            confidence=self.confidence,
        )


class Ruleset(PublishedCatalogVersion):
    # The questionnaire version the ruleset is written (and compiled) for.
    questionnaire = models.ForeignKey(
        QuestionnaireVersion, on_delete=models.PROTECT, related_name="rulesets"
    )
    # Every questionnaire version whose answers it scores: its own and older ones it lists under
    # `applies_to` (ruleset v2 scores v1 answers; v2-only questions are then blank).
    applies_to = models.ManyToManyField(QuestionnaireVersion, related_name="applicable_rulesets")

    class Meta(PublishedCatalogVersion.Meta):
        constraints = catalog_version_constraints("ruleset")

    @cached_property
    def spec(self) -> RulesetSpec:
        # The parse holds the framework references too: a change to them is a new parse.
        frameworks = {f.ref_id: f.as_ref() for f in Framework.objects.all()}
        return self.parsed_once(
            lambda: parse_ruleset(self.content, self.frameworks(frameworks), source=self.key),
            frozenset(frameworks.items()),
        )

    def frameworks(self, shipped: dict[str, FrameworkRef]) -> dict[str, FrameworkRef]:
        """The framework references its rules may cite: the shipped ones, and an
        organization's own, kept in the content of its uploaded ruleset."""
        own = self.content.get("frameworks") if self.organization_id else None
        if not own:
            return shipped
        return {**shipped, **parse_frameworks({"frameworks": own}, source=self.key)}


class Rule(models.Model):
    ruleset = models.ForeignKey(Ruleset, on_delete=models.CASCADE, related_name="rules")
    rule_id = models.CharField(max_length=60)
    position = models.PositiveIntegerField()
    severity = models.CharField(max_length=10, choices=[(s, s) for s in SEVERITIES])
    section = models.CharField(max_length=20)
    condition = models.TextField()
    title_en = models.TextField()
    title_zh_hant = models.TextField()
    references = models.ManyToManyField(Framework, related_name="rules")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["ruleset", "rule_id"], name="unique_rule_id")
        ]
        ordering = ["ruleset", "position"]

    def __str__(self) -> str:
        return self.rule_id


class RulesetTestCase(models.Model):
    """A named answer set an organization saved on a ruleset version in the rule workbench,
    with the result its author accepted then: the score, the tier and the rules that fired.
    Scored again with another version, it shows what that version changes."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    ruleset = models.ForeignKey(Ruleset, on_delete=models.CASCADE, related_name="test_cases")
    name = models.CharField(max_length=120)
    # The answers as stored (JSON: a date as "YYYY-MM-DD"), in the API's `answers` shape.
    answers = models.JSONField(default=dict)
    risk_score = models.PositiveIntegerField()
    risk_tier = models.CharField(max_length=10)
    findings = models.JSONField(default=list)  # the ids of the rules that fired, sorted
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "ruleset", "name"], name="unique_test_case_name"
            )
        ]
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name
