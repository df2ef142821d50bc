"""Writes for the scoring app: mirroring the catalogue into the database, and the rule
workbench's test cases."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.errors import ForbiddenError, ServiceError
from core.text import text_errors
from questionnaires.models import Option, Question, QuestionnaireVersion, Section
from questionnaires.spec import CatalogError, QuestionnaireSpec
from questionnaires.validation import validate_answers

from .models import Framework, Rule, Ruleset, RulesetTestCase
from .registry import Catalog, split_key
from .selectors import engine_for


@dataclass
class CatalogLoadReport:
    created: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    frameworks_updated: int = 0


class PublishedVersionChanged(CatalogError):
    """A file changes the content of a version already published: make a new version instead."""


@transaction.atomic
def catalog_load(*, catalog: Catalog) -> CatalogLoadReport:
    """Load the catalogue; idempotent. Refuses — changing nothing — if the content of a published
    questionnaire or ruleset version differs from what was published."""
    report = CatalogLoadReport()
    _refuse_changed_versions(catalog)
    for ref in catalog.frameworks.values():
        Framework.objects.update_or_create(
            ref_id=ref.id,
            defaults={
                "jurisdiction": ref.jurisdiction,
                "family_en": ref.family.en,
                "family_zh_hant": ref.family.zh_hant,
                "title_en": ref.title.en,
                "title_zh_hant": ref.title.zh_hant,
                "confidence": ref.confidence,
            },
        )
        report.frameworks_updated += 1
    for spec in catalog.questionnaires.values():
        if QuestionnaireVersion.objects.filter(slug=spec.slug, version=spec.version).exists():
            report.unchanged.append(f"questionnaire {spec.key}")
        else:
            _create_questionnaire(spec, catalog)
            report.created.append(f"questionnaire {spec.key}")
    frameworks = {f.ref_id: f for f in Framework.objects.all()}
    for spec in catalog.rulesets.values():
        if Ruleset.objects.filter(slug=spec.slug, version=spec.version).exists():
            report.unchanged.append(f"ruleset {spec.key}")
            continue
        slug, version = spec.questionnaire.split("@", 1)
        ruleset = Ruleset.objects.create(
            slug=spec.slug,
            version=spec.version,
            questionnaire=QuestionnaireVersion.objects.get(slug=slug, version=version),
            title_en=spec.title.en,
            title_zh_hant=spec.title.zh_hant,
            content=_raw_content(catalog, "ruleset", spec.key),
            content_hash=spec.content_hash,
        )
        ruleset.applies_to.set(
            [
                QuestionnaireVersion.objects.get(slug=s, version=v)
                for s, v in map(split_key, spec.applies_to)
            ]
        )
        compiled = catalog.compiled(spec.key)
        for position, rule in enumerate(compiled.rules):
            row = Rule.objects.create(
                ruleset=ruleset,
                rule_id=rule.spec.id,
                position=position,
                severity=rule.spec.severity,
                section=rule.section,
                condition=rule.spec.when,
                title_en=rule.spec.title.en,
                title_zh_hant=rule.spec.title.zh_hant,
            )
            row.references.set([frameworks[ref] for ref in rule.spec.references])
        report.created.append(f"ruleset {spec.key}")
    return report


def _refuse_changed_versions(catalog: Catalog) -> None:
    problems = []
    for spec in catalog.questionnaires.values():
        stored = QuestionnaireVersion.objects.filter(slug=spec.slug, version=spec.version).first()
        if stored and stored.content_hash != spec.content_hash:
            problems.append(f"questionnaire {spec.key}")
    for ruleset in catalog.rulesets.values():
        stored_ruleset = Ruleset.objects.filter(slug=ruleset.slug, version=ruleset.version).first()
        if stored_ruleset and stored_ruleset.content_hash != ruleset.content_hash:
            problems.append(f"ruleset {ruleset.key}")
    if problems:
        raise PublishedVersionChanged(
            "refused: the content of published "
            + ", ".join(problems)
            + " differs from the data files. A published version never changes, because saved"
            " assessments and reports rely on it: restore the file, or publish the change as a"
            " new version (raise `version:` in the file). Nothing was loaded."
        )


def _raw_content(catalog: Catalog, kind: str, key: str) -> dict:
    return catalog.raw[(kind, key)]


def _create_questionnaire(spec: QuestionnaireSpec, catalog: Catalog) -> QuestionnaireVersion:
    version = QuestionnaireVersion.objects.create(
        slug=spec.slug,
        version=spec.version,
        title_en=spec.title.en,
        title_zh_hant=spec.title.zh_hant,
        content=_raw_content(catalog, "questionnaire", spec.key),
        content_hash=spec.content_hash,
    )
    position = 0
    for section_position, section_spec in enumerate(spec.sections):
        section = Section.objects.create(
            questionnaire=version,
            code=section_spec.code,
            position=section_position,
            answered_by=section_spec.answered_by,
            title_en=section_spec.title.en,
            title_zh_hant=section_spec.title.zh_hant,
        )
        for question_spec in section_spec.questions:
            question = Question.objects.create(
                questionnaire=version,
                section=section,
                code=question_spec.code,
                position=position,
                answer_type=question_spec.type,
                required=question_spec.required,
                show_if=question_spec.show_if or "",
                unit=question_spec.unit or "",
                text_en=question_spec.text.en,
                text_zh_hant=question_spec.text.zh_hant,
            )
            position += 1
            Option.objects.bulk_create(
                Option(
                    question=question,
                    code=option.code,
                    position=option_position,
                    exclusive=option.exclusive,
                    label_en=option.label.en,
                    label_zh_hant=option.label.zh_hant,
                )
                for option_position, option in enumerate(question_spec.options)
            )
    return version


# -- the rule workbench's test cases ------------------------------------------------------------

TEST_CASE_NAME_MAX = 120


def answers_as_stored(values: Mapping[str, Any]) -> dict[str, Any]:
    """Validated answers in their JSON form (a date as "YYYY-MM-DD"), as an answer set is kept."""
    return {code: v.isoformat() if isinstance(v, dt.date) else v for code, v in values.items()}


@transaction.atomic
def ruleset_test_case_save(
    *,
    member: OrgContext,
    ruleset: Ruleset,
    name: str,
    answers: Mapping[str, Any] | None,
    as_of: dt.date,
) -> RulesetTestCase:
    """Save an answer set (the API's `answers` shape) as a test case of the ruleset version for
    the member's organization, with the result the engine gives now as the accepted one. A case
    of the same name is replaced: saving again accepts the new result."""
    member.require(Capability.EDIT_ASSESSMENT)
    name = (name or "").strip()
    problems = text_errors(name, max_length=TEST_CASE_NAME_MAX)
    if not name:
        problems.append(_("Give the test case a name."))
    if problems:
        raise ServiceError({"name": problems})
    values = validate_answers(ruleset.questionnaire.spec, answers).values
    result = engine_for(ruleset).score(values, as_of=as_of)
    case, _created = RulesetTestCase.objects.update_or_create(
        organization=member.organization,
        ruleset=ruleset,
        name=name,
        defaults={
            "answers": answers_as_stored(values),
            "risk_score": result.risk_score,
            "risk_tier": result.risk_tier,
            "findings": sorted(result.fired_rule_ids),
            "created_by": member.user,
        },
    )
    return case


def ruleset_test_case_delete(*, member: OrgContext, case: RulesetTestCase) -> None:
    member.require(Capability.EDIT_ASSESSMENT)
    if case.organization_id != member.organization.pk:  # found by the caller within it
        raise ForbiddenError({"permission_denied": [_("This test case is not yours.")]})
    case.delete()
