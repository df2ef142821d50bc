"""The vendor's side of the clarification threads: one question's thread of their link's
assessment (never another's: the thread is looked up within the link's assessment)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from core.errors import ServiceError
from core.web import add_errors, error_summary

from .. import selectors
from ..forms import ThreadMessageForm
from ..services.threads import thread_reply_vendor
from .access import Portal, portal_view
from .common import portal_context, portal_url, question_url


@portal_view
def thread(request: HttpRequest, portal: Portal, question_code: str) -> HttpResponse:
    # The catalogue first: a code it does not hold (a NUL, 10,000 characters) never reaches
    # the database.
    if question_code not in portal.spec.questions:
        raise Http404
    found = selectors.thread_find(assessment=portal.assessment, question_code=question_code)
    if found is None:
        raise Http404
    form = ThreadMessageForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            thread_reply_vendor(
                vendor_link=portal.link, question_code=question_code, body=form.cleaned_data["body"]
            )
        except ServiceError as exc:
            add_errors(form, exc)
        else:
            messages.success(request, _("Your answer was sent."))
            return redirect(portal_url("thread", portal, question_code))
    question = portal.spec.questions[question_code]
    return render(
        request,
        "portal/thread.html",
        portal_context(
            portal,
            thread=found,
            question=question,
            question_text=question.text.get(portal.language),
            answer_url=question_url(portal, question_code),
            form=form,
            error_summary=error_summary(form),
        ),
        status=400 if form.errors else 200,
    )
