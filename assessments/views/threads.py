"""A question's clarification thread, for members: its messages, a form to write to the vendor
(assessors and owners), and the button that resolves or reopens it."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.errors import ServiceError
from core.web import add_errors, add_messages, error_summary

from .. import forms as web_forms
from .. import selectors
from ..models import Channel
from ..services.answers import vendor_question_codes
from ..services.threads import thread_ask, thread_resolve
from .common import assessment_for, assessment_tabs, page_language


@member_page
def thread_page(
    request: HttpRequest, org: OrgContext, assessment_id: int, question_code: str
) -> HttpResponse:
    if request.method == "POST":
        org.require(Capability.EDIT_ASSESSMENT)
    assessment = assessment_for(org, assessment_id)
    spec = assessment.questionnaire.spec
    if question_code not in vendor_question_codes(spec):
        raise Http404
    form = web_forms.ThreadMessageForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            thread_ask(
                assessment=assessment,
                member=org,
                question_code=question_code,
                body=form.cleaned_data["body"],
                channel=Channel.WEB,
            )
        except ServiceError as exc:
            add_errors(form, exc)
        else:
            messages.success(request, _("Message sent to the vendor."))
            return redirect("assessments:thread", assessment.pk, question_code)
    return render(
        request,
        "assessments/thread.html",
        {
            "org": org,
            "assessment": assessment,
            "question": spec.questions[question_code],
            "question_text": spec.questions[question_code].text.get(page_language()),
            "thread": selectors.thread_find(assessment=assessment, question_code=question_code),
            "form": form,
            "error_summary": error_summary(form),
            "questionnaire": spec,
            **assessment_tabs(org, "overview"),
        },
        status=400 if form.errors else 200,
    )


@require_POST
@member_page(capability=Capability.EDIT_ASSESSMENT)
def thread_status(
    request: HttpRequest, org: OrgContext, assessment_id: int, question_code: str
) -> HttpResponse:
    """Resolve the thread (`resolved=1`) or reopen it (`resolved=0`)."""
    assessment = assessment_for(org, assessment_id)
    if question_code not in vendor_question_codes(assessment.questionnaire.spec):
        raise Http404  # checked first: an unknown code never reaches the database
    thread = selectors.thread_find(assessment=assessment, question_code=question_code)
    if thread is None:
        raise Http404
    resolved = request.POST.get("resolved") != "0"
    try:
        thread_resolve(thread=thread, member=org, channel=Channel.WEB, resolved=resolved)
    except ServiceError as exc:
        add_messages(request, exc)
    else:
        messages.success(
            request,
            _("Thread resolved.") if resolved else _("Thread reopened: the vendor may answer."),
        )
    return redirect("assessments:thread", assessment.pk, question_code)
