"""Writes for the scoring app: mirroring the shipped catalogue into the database, the
catalogues organizations upload (drafts, publishing, sharing), and the rule workbench's test
cases."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from accounts.models import Membership, Organization
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.errors import ConflictError, ForbiddenError, ServiceError
from core.text import text_errors
from questionnaires.models import (
    CatalogStatus,
    CatalogueShare,
    Option,
    Question,
    QuestionnaireVersion,
    Section,
)
from questionnaires.selectors import questionnaires_owned_by, slug_taken_for
from questionnaires.spec import CatalogError, QuestionnaireSpec
from questionnaires.validation import validate_answers

from .catalogue_files.checking import check_catalogue_document
from .catalogue_files.compiling import CheckedCatalogue
from .catalogue_files.document import CatalogueDocument, LineMap
from .catalogue_files.problems import CatalogueInvalid, CatalogueProblem
from .catalogue_files.reading import read_catalogue_file
from .engine import CompiledRuleset
from .models import Framework, Rule, Ruleset, RulesetTestCase
from .registry import Catalog, split_key
from .selectors import engine_for, rulesets_owned_by


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
        if _shipped(QuestionnaireVersion).filter(slug=spec.slug, version=spec.version).exists():
            report.unchanged.append(f"questionnaire {spec.key}")
        else:
            _create_questionnaire(spec, _raw_content(catalog, "questionnaire", spec.key))
            report.created.append(f"questionnaire {spec.key}")
    for spec in catalog.rulesets.values():
        if _shipped(Ruleset).filter(slug=spec.slug, version=spec.version).exists():
            report.unchanged.append(f"ruleset {spec.key}")
            continue
        _create_ruleset(
            catalog.compiled(spec.key),
            _raw_content(catalog, "ruleset", spec.key),
            {
                key: _shipped(QuestionnaireVersion).get(slug=s, version=v)
                for key, (s, v) in ((key, split_key(key)) for key in spec.applies_to)
            },
        )
        report.created.append(f"ruleset {spec.key}")
    return report


def _shipped(model: type[QuestionnaireVersion] | type[Ruleset]) -> Any:
    """The shipped versions of a catalogue model (`load_catalog` never touches an
    organization's)."""
    return model.objects.filter(organization__isnull=True)


def _create_ruleset(
    compiled: CompiledRuleset,
    content: dict,
    questionnaires: Mapping[str, QuestionnaireVersion],
    *,
    organization: Organization | None = None,
    status: str = CatalogStatus.PUBLISHED,
) -> Ruleset:
    """The rows of a ruleset version: the ruleset, the questionnaires it applies to and its
    rules (`questionnaires`: the version rows by `slug@version`, its own among them)."""
    spec = compiled.ruleset
    ruleset = Ruleset.objects.create(
        organization=organization,
        status=status,
        slug=spec.slug,
        version=spec.version,
        questionnaire=questionnaires[spec.questionnaire],
        title_en=spec.title.en,
        title_zh_hant=spec.title.zh_hant,
        content=content,
        content_hash=spec.content_hash,
    )
    ruleset.applies_to.set([questionnaires[key] for key in spec.applies_to])
    # An organization's own framework references live in the ruleset's content only.
    frameworks = {f.ref_id: f for f in Framework.objects.all()}
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
        row.references.set([frameworks[ref] for ref in rule.spec.references if ref in frameworks])
    return ruleset


def _refuse_changed_versions(catalog: Catalog) -> None:
    problems = []
    for spec in catalog.questionnaires.values():
        stored = _shipped(QuestionnaireVersion).filter(slug=spec.slug, version=spec.version).first()
        if stored and stored.content_hash != spec.content_hash:
            problems.append(f"questionnaire {spec.key}")
    for ruleset in catalog.rulesets.values():
        stored_ruleset = (
            _shipped(Ruleset).filter(slug=ruleset.slug, version=ruleset.version).first()
        )
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


def _create_questionnaire(
    spec: QuestionnaireSpec,
    content: dict,
    *,
    organization: Organization | None = None,
    status: str = CatalogStatus.PUBLISHED,
) -> QuestionnaireVersion:
    version = QuestionnaireVersion.objects.create(
        organization=organization,
        status=status,
        slug=spec.slug,
        version=spec.version,
        title_en=spec.title.en,
        title_zh_hant=spec.title.zh_hant,
        content=content,
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


# -- catalogues uploaded by organizations ----------------------------------------------------


@dataclass(frozen=True)
class CatalogueDraft:
    """An uploaded catalogue saved as a draft: its ruleset version and the questionnaire
    version it is written for (a draft of the same upload, or one already published)."""

    ruleset: Ruleset
    questionnaire: QuestionnaireVersion
    english_only: bool
    missing_chinese: int = 0


class _OwnedQuestionnaires(Mapping[str, Mapping[str, Any]]):
    """The content of the organization's published questionnaire versions by `slug@version`,
    read only when asked (a version can hold a large questionnaire)."""

    def __init__(self, organization: Organization) -> None:
        self._versions = questionnaires_owned_by(organization=organization).filter(
            status=CatalogStatus.PUBLISHED
        )
        self._keys = {f"{slug}@{version}" for slug, version in self._versions.values_list(
            "slug", "version"
        )}  # fmt: skip

    def __getitem__(self, key: str) -> Mapping[str, Any]:
        if key not in self._keys:
            raise KeyError(key)
        slug, version = split_key(key)
        return self._versions.values_list("content", flat=True).get(slug=slug, version=version)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys


def catalogue_upload(*, context: OrgContext, data: bytes, source_name: str) -> CatalogueDraft:
    """Read an uploaded YAML catalogue file and save it as a draft (`catalogue_draft_create`).
    Raises `CatalogueInvalid` (nothing saved) naming the line, the code and the problem."""
    context.require(Capability.MANAGE_CATALOGUES)
    document = read_catalogue_file(data, source_name=source_name)
    return catalogue_draft_create(context=context, document=document)


@transaction.atomic
def catalogue_draft_create(
    *, context: OrgContext, document: CatalogueDocument | Mapping[str, Any], source_name: str = ""
) -> CatalogueDraft:
    """Check a catalogue document (`{questionnaire?, ruleset, frameworks?}`, the shape of
    docs/catalogue-format.md) and save it as a draft of `context`'s organization, replacing a
    draft of the same `slug@version`. A plain mapping (e.g. read from a spreadsheet) is taken
    as a document named `source_name`. Raises `CatalogueInvalid` — with every problem's file,
    line or cell, code and message — and saves nothing when anything is wrong."""
    context.require(Capability.MANAGE_CATALOGUES)
    if not isinstance(document, CatalogueDocument):
        document = CatalogueDocument(data=document, source_name=source_name, lines=LineMap())
    organization = context.organization
    checked = check_catalogue_document(
        document,
        shipped_frameworks={f.ref_id: f.as_ref() for f in Framework.objects.all()},
        owned_questionnaires=_OwnedQuestionnaires(organization),
    )
    _refuse_taken_names(document, checked, organization)
    ruleset_spec = checked.ruleset
    _drafts_replaced(organization, checked)
    questionnaires: dict[str, QuestionnaireVersion] = {
        version.key: version
        for version in questionnaires_owned_by(organization=organization).filter(
            Q(status=CatalogStatus.PUBLISHED)
        )
        if version.key in ruleset_spec.applies_to
    }
    if checked.questionnaire is not None:
        assert checked.questionnaire_content is not None
        questionnaires[checked.questionnaire.key] = _create_questionnaire(
            checked.questionnaire,
            checked.questionnaire_content,
            organization=organization,
            status=CatalogStatus.DRAFT,
        )
    ruleset = _create_ruleset(
        checked.compiled,
        checked.ruleset_content,
        questionnaires,
        organization=organization,
        status=CatalogStatus.DRAFT,
    )
    return CatalogueDraft(
        ruleset=ruleset,
        questionnaire=questionnaires[ruleset_spec.questionnaire],
        english_only=checked.english_only,
        missing_chinese=checked.missing_chinese,
    )


def _refuse_taken_names(
    document: CatalogueDocument, checked: CheckedCatalogue, organization: Organization
) -> None:
    """A custom slug may not be a shipped one, nor one shared with the organization; a published
    version never changes."""
    problems = []
    named: list[tuple[str, str, str, type[QuestionnaireVersion] | type[Ruleset]]] = [
        ("ruleset", checked.ruleset.slug, checked.ruleset.version, Ruleset)
    ]
    if checked.questionnaire is not None:
        named.insert(
            0,
            (
                "questionnaire",
                checked.questionnaire.slug,
                checked.questionnaire.version,
                QuestionnaireVersion,
            ),
        )
    for part, slug, version, model in named:
        line = document.lines.find((part, "slug"))
        taken = (
            slug_taken_for(organization=organization, slug=slug)
            if model is QuestionnaireVersion
            else ("shipped" if _shipped(Ruleset).filter(slug=slug).exists() else None)
        )
        if taken == "shipped":
            message = (
                gettext_noop(
                    "“%(slug)s” is the name of a shipped questionnaire; choose another slug."
                )
                if model is QuestionnaireVersion
                else gettext_noop(
                    "“%(slug)s” is the name of a shipped ruleset; choose another slug."
                )
            )
        elif taken == "shared":
            message = gettext_noop(
                "“%(slug)s” is the name of a questionnaire shared with your organization;"
                " choose another slug."
            )
        elif model.objects.filter(
            organization=organization,
            slug=slug,
            version=version,
            status=CatalogStatus.PUBLISHED,
        ).exists():
            message = gettext_noop(
                "%(slug)s@%(version)s is published and never changes; raise 'version' to"
                " publish a change."
            )
        else:
            continue
        problems.append(
            CatalogueProblem(
                document.source_name,
                message,
                {"slug": slug, "version": version, "part": part},
                code=slug,
                line=line if isinstance(line, int) else None,
                cell=line if isinstance(line, str) else None,
            )
        )
    if problems:
        raise CatalogueInvalid(problems)


def _drafts_replaced(organization: Organization, checked: CheckedCatalogue) -> None:
    """Delete the organization's drafts that the upload replaces: the ruleset draft of the same
    `slug@version`, and the questionnaire draft of the same one with every draft ruleset
    written for it."""
    drafts = rulesets_owned_by(organization=organization).filter(status=CatalogStatus.DRAFT)
    drafts.filter(slug=checked.ruleset.slug, version=checked.ruleset.version).delete()
    if checked.questionnaire is not None:
        replaced = questionnaires_owned_by(organization=organization).filter(
            status=CatalogStatus.DRAFT,
            slug=checked.questionnaire.slug,
            version=checked.questionnaire.version,
        )
        drafts.filter(questionnaire__in=replaced).delete()
        replaced.delete()


def _own_ruleset(context: OrgContext, ruleset: Ruleset) -> Ruleset:
    if ruleset.organization_id != context.organization.pk:
        raise Ruleset.DoesNotExist  # another organization's: as if it did not exist
    return ruleset


@transaction.atomic
def catalogue_draft_delete(*, context: OrgContext, ruleset: Ruleset) -> None:
    """Delete a draft ruleset, and its questionnaire when that is a draft no other ruleset
    uses. A published version is never deleted."""
    context.require(Capability.MANAGE_CATALOGUES)
    ruleset = _own_ruleset(context, ruleset)
    if not ruleset.is_draft:
        raise ConflictError({"ruleset": [_("A published version never changes.")]})
    questionnaire = ruleset.questionnaire
    ruleset.delete()
    if questionnaire.is_draft and not questionnaire.rulesets.exists():
        questionnaire.delete()


@transaction.atomic
def catalogue_publish(*, context: OrgContext, ruleset: Ruleset) -> Ruleset:
    """Publish a draft ruleset, with its questionnaire when that is a draft too. From then on
    neither changes; new assessments may use the questionnaire, and a rescore batch may use
    the ruleset."""
    context.require(Capability.MANAGE_CATALOGUES)
    ruleset = Ruleset.objects.select_for_update().get(pk=_own_ruleset(context, ruleset).pk)
    if not ruleset.is_draft:
        raise ConflictError({"ruleset": [_("This version is already published.")]})
    questionnaire = ruleset.questionnaire
    if questionnaire.is_draft:
        taken = slug_taken_for(organization=context.organization, slug=questionnaire.slug)
        if taken is not None:  # a share of the same slug arrived since the upload
            raise ConflictError(
                {"questionnaire": [_("Another questionnaire of this name is now shared with"
                                     " your organization; upload it under another slug.")]}
            )  # fmt: skip
    if ruleset.applies_to.filter(status=CatalogStatus.DRAFT).exclude(pk=questionnaire.pk).exists():
        raise ConflictError(
            {"ruleset": [_("The ruleset applies to a questionnaire that is still a draft.")]}
        )
    now = timezone.now()
    if questionnaire.is_draft:
        QuestionnaireVersion.objects.filter(pk=questionnaire.pk).update(
            status=CatalogStatus.PUBLISHED, published_at=now
        )
    Ruleset.objects.filter(pk=ruleset.pk).update(status=CatalogStatus.PUBLISHED, published_at=now)
    ruleset.refresh_from_db()
    return ruleset


@transaction.atomic
def catalogue_share(
    *, context: OrgContext, slug: str, organization: Organization
) -> CatalogueShare:
    """Share the organization's questionnaire `slug` (every published version, with its
    rulesets) with `organization`."""
    context.require(Capability.MANAGE_CATALOGUES)
    owner = context.organization
    if (
        not questionnaires_owned_by(organization=owner)
        .filter(slug=slug, status=CatalogStatus.PUBLISHED)
        .exists()
    ):
        raise ServiceError({"slug": [_("Publish the questionnaire before sharing it.")]})
    # Shared only with an organization the member belongs to too (a consultant's client
    # workspace): nobody can probe or fill another tenant's list.
    if (
        organization.pk == owner.pk
        or not Membership.objects.filter(user=context.user, organization=organization).exists()
    ):
        raise ServiceError({"organization": [_("Choose an organization you are a member of.")]})
    if (
        QuestionnaireVersion.objects.filter(organization=organization, slug=slug).exists()
        or CatalogueShare.objects.filter(
            shared_with=organization, slug=slug, revoked_at__isnull=True
        )
        .exclude(owner=owner)
        .exists()
    ):
        raise ConflictError(
            {"organization": [_("That organization already has a questionnaire of this name.")]}
        )
    share, _created = CatalogueShare.objects.get_or_create(
        owner=owner, slug=slug, shared_with=organization, revoked_at=None
    )
    return share


@transaction.atomic
def catalogue_share_revoke(*, context: OrgContext, share: CatalogueShare) -> CatalogueShare:
    """Stop sharing: the other organization can no longer start assessments with the
    questionnaire; the assessments it made keep it and are scored as before."""
    context.require(Capability.MANAGE_CATALOGUES)
    if share.owner_id != context.organization.pk:
        raise CatalogueShare.DoesNotExist
    if share.revoked_at is None:
        share.revoked_at = timezone.now()
        share.save(update_fields=["revoked_at"])
    return share


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
    member.require(Capability.EDIT_ASSESSMENT, Capability.MANAGE_CATALOGUES)
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
    member.require(Capability.EDIT_ASSESSMENT, Capability.MANAGE_CATALOGUES)
    if case.organization_id != member.organization.pk:  # found by the caller within it
        raise ForbiddenError({"permission_denied": [_("This test case is not yours.")]})
    case.delete()
