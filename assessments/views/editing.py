"""Creating an assessment (vendor, questionnaire version, due date and the buyer's answers) and
editing its due date and the buyer's answers while the vendor may still answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.db.models import F
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.errors import ServiceError
from core.text import is_ascii_number
from core.web import add_errors, error_summary
from questionnaires.models import QuestionnaireVersion
from questionnaires.selectors import questionnaire_visible, questionnaires_visible_to
from questionnaires.spec import QuestionnaireSpec

from .. import forms as web_forms
from .. import selectors
from ..answer_forms import CatalogueAnswersForm
from ..answering import Answerer, answer_form, autosave_response, keep_drafts, save
from ..lifecycle import EDITABLE_STATUSES
from ..models import Channel, Vendor
from ..services import answers as answer_services
from .common import assessment_for, assessment_tabs, page_language, vendor_search, vendors_page

# How many vendors a new assessment's form lists at once (a search finds the others).
VENDOR_CHOICES_SHOWN = 10


def _questionnaire_choices(org: OrgContext) -> list[tuple[str, str]]:
    language = translation.get_language() or "en"
    versions = (
        questionnaires_visible_to(organization=org.organization)
        .only("slug", "version", "title_en", "title_zh_hant")
        # The shipped questionnaires first (the default choice), then the organization's.
        .order_by(F("organization").asc(nulls_first=True), "slug", "-published_at")
    )
    return [
        (
            version.key,
            f"{version.title_zh_hant if language.startswith('zh') else version.title_en} "
            f"({version.key})",
        )
        for version in versions
    ]


def _questionnaire(org: OrgContext, key: str) -> QuestionnaireVersion | None:
    slug, _sep, version = (key or "").partition("@")
    return questionnaire_visible(organization=org.organization, slug=slug, version=version)


def _use_form(spec: QuestionnaireSpec, data: Any = None) -> CatalogueAnswersForm:
    """The buyer's questions of a new assessment (nothing saved yet, so no drafts)."""
    return CatalogueAnswersForm(
        data,
        questionnaire=spec,
        section_codes=answer_services.buyer_section_codes(spec),
        language=page_language(),
        require_answers=True,
    )


@member_page(capability=Capability.EDIT_ASSESSMENT)
def assessment_create(request: HttpRequest, org: OrgContext) -> HttpResponse:
    org.require(Capability.ANSWER_USE_SECTION)
    choices = _questionnaire_choices(org)
    vendors = selectors.vendors_for(organization=org.organization)
    default_key = choices[0][0] if choices else ""
    data = request.POST if request.method == "POST" else None
    vendor_query = vendor_search(request)
    shown_vendors, matching_vendors = _vendor_choices(
        org, vendor_query, chosen=(data or request.GET).get("vendor", "")
    )
    chosen_key = (data or request.GET).get("questionnaire") or default_key
    # Looked up only when it is one of the choices: any other text (a NUL, which PostgreSQL
    # refuses in a query) falls back to the default, and the form says it is not a choice.
    known = {key for key, _label in choices}
    questionnaire = _questionnaire(org, chosen_key if chosen_key in known else default_key)
    form = web_forms.AssessmentForm(
        data,
        vendors=vendors,
        shown_vendors=shown_vendors,
        questionnaires=choices,
        initial={"vendor": request.GET.get("vendor"), "questionnaire": chosen_key},
    )
    use_form = _use_form(questionnaire.spec, data) if questionnaire else None
    # The buyer's questions on the page were drawn for another questionnaire version (chosen
    # without JavaScript, which would have redrawn them): show that version's questions with
    # what was typed, and save nothing yet.
    switched = data is not None and data.get("rendered_for") != chosen_key
    if data is not None and not switched:
        valid = form.is_valid() & (use_form is not None and use_form.is_valid())
        if valid and use_form is not None:
            try:
                with transaction.atomic():
                    assessment = answer_services.assessment_create(
                        organization=org.organization,
                        vendor=form.cleaned_data["vendor"],
                        questionnaire_key=form.cleaned_data["questionnaire"],
                        actor=org.user,
                        channel=Channel.WEB,
                        due_date=form.cleaned_data["due_date"],
                        answers={k: v for k, v in use_form.answers().items() if v is not None},
                    )
                    if comments := {k: v for k, v in use_form.comments().items() if v}:
                        answer_services.answers_save(
                            assessment=assessment,
                            answers={},
                            comments=comments,
                            actor=org.user,
                            member=org,
                            channel=Channel.WEB,
                        )
            except ServiceError as exc:
                # Question codes go beside the buyer's questions, the rest beside the others.
                add_errors(use_form, _errors_of(exc, use_form.fields))
                add_errors(form, _errors_of(exc, form.fields, other=use_form.fields))
            else:
                messages.success(
                    request,
                    _("Assessment of %(vendor)s created. Invite the vendor's contact below.")
                    % {"vendor": assessment.vendor.name},
                )
                return redirect("assessments:detail", assessment_id=assessment.pk)
    elif switched:
        form = web_forms.AssessmentForm(
            None,
            vendors=vendors,
            shown_vendors=shown_vendors,
            questionnaires=choices,
            initial={key: data.get(key) for key in ("vendor", "questionnaire", "due_date")},
        )
    has_errors = bool(form.errors or (use_form is not None and use_form.errors and not switched))
    context = {
        "org": org,
        "switched": switched,
        "form": form,
        "use_form": use_form,
        "rows": use_form.rows() if use_form else [],
        "questionnaire": questionnaire.spec if questionnaire else None,
        "questionnaire_key": questionnaire.key if questionnaire else "",
        "has_vendors": vendors.exists(),
        "vendor_query": vendor_query,
        "shown_vendor_count": len(shown_vendors),
        "matching_vendor_count": matching_vendors,
        "error_summary": error_summary(form, *([use_form] if use_form and not switched else [])),
    }
    if request.htmx and request.method == "GET":  # type: ignore[attr-defined]
        if request.htmx.target == "vendor-choices":  # type: ignore[attr-defined]
            return render(request, "assessments/_vendor_choices.html", context)
        return render(request, "assessments/_use_questions.html", context)
    return render(
        request, "assessments/assessment_form.html", context, status=400 if has_errors else 200
    )


def _vendor_choices(org: OrgContext, query: str, *, chosen: str) -> tuple[list[Vendor], int]:
    """The vendors a new assessment's form offers, and how many match `query` in all: the
    first VENDOR_CHOICES_SHOWN by name (an organization may hold thousands, and a page must not
    list them all), the chosen one first when it is not among them."""
    page = vendors_page(org, query, 1, per_page=VENDOR_CHOICES_SHOWN)
    shown = list(page.object_list)
    if is_ascii_number(chosen) and len(chosen) < 19 and all(v.pk != int(chosen) for v in shown):
        shown[:0] = selectors.vendors_for(organization=org.organization).filter(pk=int(chosen))
    return shown, page.paginator.count


def _errors_of(
    error: ServiceError, fields: Mapping[str, Any], *, other: Mapping[str, Any] | None = None
) -> ServiceError:
    """The part of a refusal that belongs to `fields` (with `other`: everything not in it)."""
    if other is None:
        return ServiceError({k: v for k, v in error.raw_errors.items() if k in fields})
    return ServiceError({k: v for k, v in error.raw_errors.items() if k not in other})


@member_page(capability=Capability.EDIT_ASSESSMENT)
def assessment_edit(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    """The due date, and the buyer's answers while the vendor may still answer. Like a vendor's
    section: "Save" checks and saves; "Back to the assessment" keeps what was typed as drafts;
    with htmx, drafts are kept as the member types."""
    assessment = assessment_for(org, assessment_id)
    spec = assessment.questionnaire.spec
    use_editable = assessment.status in EDITABLE_STATUSES and org.can(Capability.ANSWER_USE_SECTION)
    data = request.POST if request.method == "POST" else None
    date_form = web_forms.DueDateAndLabelForm(
        data, initial={"due_date": assessment.due_date, "label": assessment.label}
    )
    answerer = Answerer(assessment=assessment, member=org)
    use_form = (
        answer_form(
            answerer,
            answer_services.buyer_section_codes(spec),
            page_language(),
            data,
            require_answers=True,
        )
        if use_editable
        else None
    )
    status = 200
    if data is not None:
        if data.get("go") == "detail":
            if use_form is not None:
                keep_drafts(answerer, use_form)
            return redirect("assessments:detail", assessment_id=assessment.pk)
        refused = 400 if not date_form.is_valid() else None
        if use_form is not None:
            if refused is None:
                refused = save(answerer, use_form)
            else:
                use_form.is_valid()  # show every error at once
                keep_drafts(answerer, use_form)
        if refused is None:
            if {"due_date", "label"} & set(date_form.changed_data):
                answer_services.assessment_update(
                    assessment=assessment,
                    actor=org.user,
                    channel=Channel.WEB,
                    due_date=date_form.cleaned_data["due_date"],
                    label=date_form.cleaned_data["label"],
                )
            messages.success(request, _("Saved."))
            return redirect("assessments:detail", assessment_id=assessment.pk)
        status = refused
    rows = use_form.rows() if use_form else []
    return render(
        request,
        "assessments/assessment_edit.html",
        {
            "org": org,
            "assessment": assessment,
            "questionnaire": spec,
            "date_form": date_form,
            "use_form": use_form,
            "rows": rows,
            "drafts": [row.code for row in rows if row.draft],
            "use_editable": use_editable,
            "autosave_url": reverse("assessments:edit_autosave", args=[assessment.pk]),
            "error_summary": error_summary(date_form, *([use_form] if use_form else [])),
            **assessment_tabs(org, "edit"),
        },
        status=status,
    )


@member_page(capability=Capability.ANSWER_USE_SECTION)
@require_POST
def assessment_edit_autosave(
    request: HttpRequest, org: OrgContext, assessment_id: int
) -> HttpResponse:
    """htmx: keep the buyer's answers being typed as drafts."""
    assessment = assessment_for(org, assessment_id)
    answerer = Answerer(assessment=assessment, member=org)
    sections = answer_services.buyer_section_codes(assessment.questionnaire.spec)
    form = answer_form(answerer, sections, page_language(), request.POST)
    return autosave_response(request, answerer, form)
