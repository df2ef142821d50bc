"""The owner's catalogue pages: upload a questionnaire with its ruleset, preview the draft as
the vendor will see it (in both languages), publish it, share it with client workspaces.

Thin: the checks and the writes are `scoring.services.catalogue_*`; what an organization may
see is `scoring.selectors` / `questionnaires.selectors`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.selectors import memberships_for_user
from accounts.tenancy import OrgContext
from assessments.answer_forms import CatalogueAnswersForm
from assessments.presenters.findings import Reference, reference
from core.errors import ServiceError
from core.web import add_errors, add_messages, confirm_page, error_summary
from questionnaires import bounds
from questionnaires.models import CatalogStatus, QuestionnaireVersion
from questionnaires.selectors import share_given, shares_given
from scoring.catalogue_files.problems import CatalogueInvalid
from scoring.models import Ruleset
from scoring.selectors import frameworks_for, ruleset_owned, rulesets_owned_by
from scoring.services import (
    catalogue_draft_delete,
    catalogue_publish,
    catalogue_share,
    catalogue_share_revoke,
    catalogue_upload,
)

from .forms import CatalogueShareForm, CatalogueUploadForm

LANGUAGES = (("en", "English"), ("zh-hant", "繁體中文"))


@member_page(capability=Capability.MANAGE_CATALOGUES)
def catalogues(request: HttpRequest, org: OrgContext) -> HttpResponse:
    """The organization's own questionnaires and rulesets, and the upload form."""
    form = CatalogueUploadForm(request.POST or None, request.FILES or None)
    problems: list[dict[str, Any]] = []
    status = 200
    if request.method == "POST":
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                draft = catalogue_upload(
                    context=org,
                    # One byte more than the limit: the service says the file is too large.
                    data=upload.read(bounds.CATALOGUE_FILE_BYTES_MAX + 1),
                    source_name=upload.name,
                )
            except CatalogueInvalid as invalid:
                problems = [problem.as_dict() for problem in invalid.problems]
            except ServiceError as error:
                add_errors(form, error)
            else:
                messages.success(request, _("The catalogue is saved as a draft. Check it here."))
                return redirect("portfolio:catalogue", draft.ruleset.pk)
        status = 400
    context = {
        "org": org,
        "form": form,
        "problems": problems,
        "rulesets": rulesets_owned_by(organization=org.organization).defer(
            "content", "questionnaire__content"
        ),
        "shares": shares_given(organization=org.organization),
        "error_summary": error_summary(form) if form.is_bound else [],
        "file_limit": bounds.CATALOGUE_FILE_BYTES_MAX,
    }
    return render(request, "portfolio/catalogues.html", context, status=status)


def _preview(questionnaire: QuestionnaireVersion) -> list[dict[str, Any]]:
    """The questionnaire as the vendor sees it, once per language: each section's questions as
    the portal draws them (unanswered)."""
    spec = questionnaire.spec
    shown = []
    for language, name in LANGUAGES:
        with translation.override(language):
            form = CatalogueAnswersForm(
                questionnaire=spec,
                section_codes=[section.code for section in spec.sections],
                language=language,
            )
            sections = [
                {
                    "section": section,
                    "title": section.title.get(language),
                    "intro": section.intro.get(language),
                    "html": render_to_string(
                        "answers/_questions.html", {"rows": form.rows(section)}
                    ),
                }
                for section in spec.sections
            ]
        shown.append({"language": language, "name": name, "sections": sections})
    return shown


def _citations(ruleset: Ruleset, language: str) -> list[tuple[str, list[Reference]]]:
    """What each question and each rule cites (`references:`), with the clauses' titles and
    whether they are known only as summarised: what an author checks before publishing."""
    frameworks = frameworks_for(ruleset=ruleset)
    cited = [
        (question.code, question.references)
        for question in ruleset.questionnaire.spec.iter_questions()
        if question.references
    ] + [(rule.id, rule.references) for rule in ruleset.spec.rules if rule.references]
    return [(code, [reference(ref, frameworks, language) for ref in refs]) for code, refs in cited]


@member_page(capability=Capability.MANAGE_CATALOGUES)
def catalogue(request: HttpRequest, org: OrgContext, ruleset_id: int) -> HttpResponse:
    """One ruleset version and its questionnaire: the preview, the rules, publish or delete a
    draft, share a published one."""
    ruleset = ruleset_owned(organization=org.organization, ruleset_id=ruleset_id)
    questionnaire = ruleset.questionnaire
    context = {
        "org": org,
        "ruleset": ruleset,
        "questionnaire": questionnaire,
        "english_only": questionnaire.english_only,
        "rules": ruleset.spec.rules,
        "preview": _preview(questionnaire),
        "citations": _citations(ruleset, translation.get_language()),
        "share_form": _share_form(org),
        "shares": shares_given(organization=org.organization).filter(slug=questionnaire.slug),
    }
    return render(request, "portfolio/catalogue.html", context)


def _share_form(org: OrgContext, data: Any = None) -> CatalogueShareForm:
    """Share with: the other organizations the member belongs to (a consultant's clients)."""
    others = [
        (membership.organization.pk, membership.organization.name)
        for membership in memberships_for_user(user=org.user).exclude(organization=org.organization)
    ]
    return CatalogueShareForm(data, organizations=others)


@member_page(capability=Capability.MANAGE_CATALOGUES)
def catalogue_publish_view(request: HttpRequest, org: OrgContext, ruleset_id: int) -> HttpResponse:
    ruleset = ruleset_owned(organization=org.organization, ruleset_id=ruleset_id)
    if request.method != "POST":
        return confirm_page(
            request,
            title=_("Publish %(key)s?") % {"key": ruleset.key},
            explanation=_(
                "A published version never changes: assessments and reports rely on it. New"
                " assessments can use it at once; to change it later, upload a new version."
            ),
            confirm_label=_("Publish"),
            cancel_url=_catalogue_url(ruleset),
            danger=False,
        )
    try:
        catalogue_publish(context=org, ruleset=ruleset)
    except ServiceError as error:
        add_messages(request, error)
    else:
        messages.success(request, _("%(key)s is published.") % {"key": ruleset.key})
    return redirect("portfolio:catalogue", ruleset.pk)


@member_page(capability=Capability.MANAGE_CATALOGUES)
@require_POST
def catalogue_delete(request: HttpRequest, org: OrgContext, ruleset_id: int) -> HttpResponse:
    ruleset = ruleset_owned(organization=org.organization, ruleset_id=ruleset_id)
    try:
        catalogue_draft_delete(context=org, ruleset=ruleset)
    except ServiceError as error:
        add_messages(request, error)
        return redirect("portfolio:catalogue", ruleset.pk)
    messages.success(request, _("The draft is deleted."))
    return redirect("portfolio:catalogues")


@member_page(capability=Capability.MANAGE_CATALOGUES)
@require_POST
def catalogue_share_view(request: HttpRequest, org: OrgContext, ruleset_id: int) -> HttpResponse:
    ruleset = ruleset_owned(organization=org.organization, ruleset_id=ruleset_id)
    form = _share_form(org, request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose an organization you are a member of."))
        return redirect("portfolio:catalogue", ruleset.pk)
    membership = (
        memberships_for_user(user=org.user)
        .filter(organization_id=int(form.cleaned_data["organization"]))
        .first()
    )
    try:
        if membership is None or ruleset.status != CatalogStatus.PUBLISHED:
            raise ServiceError(
                {"organization": [_("Publish the questionnaire before sharing it.")]}
            )
        catalogue_share(
            context=org, slug=ruleset.questionnaire.slug, organization=membership.organization
        )
    except ServiceError as error:
        add_messages(request, error)
    else:
        messages.success(
            request,
            _("%(name)s can now start assessments with this questionnaire.")
            % {"name": membership.organization.name},
        )
    return redirect("portfolio:catalogue", ruleset.pk)


@member_page(capability=Capability.MANAGE_CATALOGUES)
@require_POST
def catalogue_share_revoke_view(
    request: HttpRequest, org: OrgContext, share_id: int
) -> HttpResponse:
    share = share_given(organization=org.organization, share_id=share_id)
    catalogue_share_revoke(context=org, share=share)
    messages.success(
        request,
        _("Revoked: %(name)s can no longer start assessments with it; those it made are kept.")
        % {"name": share.shared_with.name},
    )
    return redirect("portfolio:catalogues")


def _catalogue_url(ruleset: Ruleset) -> str:
    return reverse("portfolio:catalogue", args=[ruleset.pk])
