"""Creating an assessment (vendor, questionnaire version, due date and the buyer's answers) and
editing its due date and the buyer's answers while the vendor may still answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import translation
from django.utils.translation import gettext as _

from accounts.decorators import member_page
from accounts.tenancy import OrgContext
from core.errors import ServiceError
from core.web import add_errors, error_summary
from questionnaires.models import QuestionnaireVersion
from questionnaires.spec import QuestionnaireSpec

from .. import forms as web_forms
from .. import selectors, services
from ..lifecycle import EDITABLE_STATUSES
from ..models import Channel
from .common import assessment_for, assessment_tabs


def _questionnaire_choices() -> list[tuple[str, str]]:
    language = translation.get_language() or "en"
    versions = QuestionnaireVersion.objects.only(
        "slug", "version", "title_en", "title_zh_hant"
    ).order_by("slug", "-published_at")
    return [
        (
            version.key,
            f"{version.title_zh_hant if language.startswith('zh') else version.title_en} "
            f"({version.key})",
        )
        for version in versions
    ]


def _questionnaire(key: str) -> QuestionnaireVersion | None:
    slug, _sep, version = (key or "").partition("@")
    return QuestionnaireVersion.objects.filter(slug=slug, version=version).first()


def _use_form(
    spec: QuestionnaireSpec, data: Any = None, initial: Mapping[str, Any] | None = None
) -> web_forms.CatalogueAnswersForm:
    return web_forms.CatalogueAnswersForm(
        data,
        initial=initial,
        questionnaire=spec,
        section_codes=services.buyer_section_codes(spec),
        language=translation.get_language() or settings.LANGUAGE_CODE,
    )


def _typed(data: Any) -> dict[str, Any]:
    """What was posted, as initial values (lists kept for checkboxes)."""
    return {key: values if len(values) > 1 else values[0] for key, values in data.lists()}


@member_page(capability="edit_assessment")
def assessment_create(request: HttpRequest, org: OrgContext) -> HttpResponse:
    org.require("answer_use_section")
    choices = _questionnaire_choices()
    vendors = selectors.vendors_for(organization=org.organization)
    default_key = choices[0][0] if choices else ""
    data = request.POST if request.method == "POST" else None
    chosen_key = (data or request.GET).get("questionnaire") or default_key
    questionnaire = _questionnaire(chosen_key) or _questionnaire(default_key)
    form = web_forms.AssessmentForm(
        data,
        vendors=vendors,
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
                    assessment = services.assessment_create(
                        organization=org.organization,
                        vendor=form.cleaned_data["vendor"],
                        questionnaire_key=form.cleaned_data["questionnaire"],
                        actor=org.user,
                        channel=Channel.WEB,
                        due_date=form.cleaned_data["due_date"],
                        answers={k: v for k, v in use_form.answers().items() if v is not None},
                    )
                    if comments := {k: v for k, v in use_form.comments().items() if v}:
                        services.answers_save(
                            assessment=assessment,
                            answers={},
                            comments=comments,
                            actor=org.user,
                            member=org,
                            channel=Channel.WEB,
                        )
            except ServiceError as exc:
                # Question codes go beside the buyer's questions, the rest beside the others.
                add_errors(
                    use_form,
                    ServiceError({k: v for k, v in exc.raw_errors.items() if k in use_form.fields}),
                )
                add_errors(
                    form,
                    ServiceError(
                        {k: v for k, v in exc.raw_errors.items() if k not in use_form.fields}
                    ),
                )
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
            questionnaires=choices,
            initial={key: data.get(key) for key in ("vendor", "questionnaire", "due_date")},
        )
        use_form = _use_form(questionnaire.spec, initial=_typed(data)) if questionnaire else None
    has_errors = bool(form.errors or (use_form is not None and use_form.errors))
    context = {
        "org": org,
        "switched": switched,
        "form": form,
        "use_form": use_form,
        "questionnaire": questionnaire.spec if questionnaire else None,
        "questionnaire_key": questionnaire.key if questionnaire else "",
        "has_vendors": vendors.exists(),
        "error_summary": error_summary(form, *([use_form] if use_form else [])),
    }
    if request.htmx and request.method == "GET":  # type: ignore[attr-defined]
        return render(request, "assessments/_use_questions.html", context)
    return render(
        request, "assessments/assessment_form.html", context, status=400 if has_errors else 200
    )


@member_page(capability="edit_assessment")
def assessment_edit(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    """Due date, and the buyer's answers while the vendor may still answer."""
    assessment = assessment_for(org, assessment_id)
    spec = assessment.questionnaire.spec
    use_editable = assessment.status in EDITABLE_STATUSES and org.can("answer_use_section")
    data = request.POST if request.method == "POST" else None
    date_form = web_forms.DueDateForm(data, initial={"due_date": assessment.due_date})
    use_form = None
    if use_editable:
        stored = list(assessment.answers.all())
        initial = web_forms.catalogue_initial(
            services.answer_values(assessment),
            {a.question_code: a.comment for a in stored if a.comment},
        )
        use_form = _use_form(spec, data, initial=initial)
    if data is not None:
        valid = date_form.is_valid() & (use_form is None or use_form.is_valid())
        if valid:
            try:
                with transaction.atomic():
                    if "due_date" in date_form.changed_data:
                        services.assessment_update(
                            assessment=assessment,
                            actor=org.user,
                            channel=Channel.WEB,
                            due_date=date_form.cleaned_data["due_date"],
                        )
                    if use_form is not None:
                        services.answers_save(
                            assessment=assessment,
                            answers=use_form.answers(),
                            comments=use_form.comments(),
                            actor=org.user,
                            member=org,
                            channel=Channel.WEB,
                        )
            except ServiceError as exc:
                add_errors(use_form or date_form, exc)
            else:
                messages.success(request, _("Saved."))
                return redirect("assessments:detail", assessment_id=assessment.pk)
    forms_ = [date_form, *([use_form] if use_form else [])]
    return render(
        request,
        "assessments/assessment_edit.html",
        {
            "org": org,
            "assessment": assessment,
            "questionnaire": spec,
            "date_form": date_form,
            "use_form": use_form,
            "use_editable": use_editable,
            "error_summary": error_summary(*forms_),
            **assessment_tabs(org, "edit"),
        },
        status=400 if any(f.errors for f in forms_) else 200,
    )
