"""The portal's pages around the sections: the landing page (progress, what a reviewer re-opened),
review before submit, thanks, the vendor's configuration change and the language switch."""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.models import Organization
from accounts.validators import BRAND_COLOUR_PATTERN
from core.errors import ServiceError
from core.web import add_messages, logo_response
from questionnaires.validation import missing_required

from .. import lifecycle, selectors
from ..answering import answer_form, keep_drafts
from ..forms import ReassessForm
from ..models import (
    AssessmentStatus,
    Channel,
    RenewalReason,
    ReviewDecision,
)
from ..presenters.answers import FileRef, answer_sections
from ..presenters.progress import SectionProgress, section_progress
from ..services.answers import answer_values
from ..services.reassessment import renewal_start
from ..services.submission import assessment_submit
from ..services.vendor_links import vendor_link_language_set
from .access import Portal, language_session_key, portal_view
from .common import codes_with_evidence, portal_answerer, portal_context, portal_url, question_url


def _progress(portal: Portal) -> tuple[list[SectionProgress], list[str], set[str]]:
    """Per vendor section: answered required / visible required; the missing codes; the
    sections holding drafts (typed, not saved)."""
    assessment = portal.assessment
    codes = [s.code for s in portal.vendor_sections]
    values = answer_values(assessment)
    evidence_codes = codes_with_evidence(assessment)
    progress = section_progress(
        portal.spec,
        values,
        evidence_codes,
        portal.language,
        sections=codes,
        url_for=lambda code: portal_url("section", portal, code),
    )
    missing = missing_required(portal.spec, values, sections=codes, evidence_codes=evidence_codes)
    with_drafts = {
        portal.spec.questions[code].section
        for code in assessment.drafts.values_list("question_code", flat=True)
        if code in portal.spec.questions
    } & set(codes)
    return progress, missing, with_drafts


@portal_view
def landing(request: HttpRequest, portal: Portal) -> HttpResponse:
    progress, _missing, with_drafts = _progress(portal)
    change_request = None
    if portal.assessment.status == AssessmentStatus.CHANGES_REQUESTED:
        change_request = portal.assessment.reviews.filter(
            decision=ReviewDecision.CHANGES_REQUESTED
        ).first()
    reopened = [
        {"code": code, "url": question_url(portal, code)}
        for code in sorted(portal_answerer(portal).editable_codes() or ())
        if portal.assessment.status == AssessmentStatus.CHANGES_REQUESTED
    ]
    return render(
        request,
        "portal/landing.html",
        portal_context(
            portal,
            progress=progress,
            with_drafts=with_drafts,
            change_request=change_request,
            reopened=reopened,
            questionnaire_description=portal.spec.description.get(portal.language),
            change_form=ReassessForm(),
            threads=list(selectors.threads_for(assessment=portal.assessment)),
        ),
    )


@portal_view
def review(request: HttpRequest, portal: Portal) -> HttpResponse:
    errors: dict[str, list[str]] = {}
    status = 200
    if request.method == "POST":
        try:
            if not request.POST.get("confirm"):
                # Submitting cannot be undone: the box is the confirm step (no JavaScript).
                raise ServiceError(
                    {
                        "confirm": [
                            _(
                                "Tick “I have checked my answers” to confirm: once submitted, "
                                "the answers cannot be changed unless the buyer asks."
                            )
                        ]
                    }
                )
            assessment_submit(
                assessment=portal.assessment, vendor_link=portal.link, channel=Channel.VENDOR_LINK
            )
        except ServiceError as exc:
            errors, status = exc.errors, exc.status_code
        else:
            return redirect(portal_url("thanks", portal))
    progress, missing, with_drafts = _progress(portal)
    spec = portal.spec
    missing_rows = [
        {
            "code": code,
            "text": spec.questions[code].text.get(portal.language),
            "url": question_url(portal, code),
        }
        for code in missing
    ]
    summary = [
        {
            "label": code if code in spec.questions else "",
            "message": message,
            "href": question_url(portal, code)
            if code in spec.questions
            else ("#confirm" if code == "confirm" else ""),
        }
        for code, code_messages in errors.items()
        for message in code_messages
    ]
    assessment = portal.assessment
    files: dict[str, list[FileRef]] = {}
    for evidence_file in assessment.evidence.all():
        files.setdefault(evidence_file.question_code, []).append(
            FileRef(name=evidence_file.original_name)
        )
    answers = list(assessment.answers.all())
    sections = answer_sections(
        spec,
        answer_values(assessment),
        portal.language,
        comments={a.question_code: a.comment for a in answers if a.comment},
        reopened={a.question_code for a in answers if a.reopened},
        files=files,
        sections=[s.code for s in portal.vendor_sections],
    )
    can_submit = "submit" in lifecycle.allowed_events(portal.assessment.status)
    return render(
        request,
        "portal/review.html",
        portal_context(
            portal,
            progress=progress,
            with_drafts=[p for p in progress if p.code in with_drafts],
            draft_codes=with_drafts,
            missing=missing_rows,
            error_summary=summary,
            confirm_error=errors.get("confirm"),
            answer_sections=[
                {"section": section, "url": portal_url("section", portal, section.code)}
                for section in sections
            ],
            can_submit=can_submit,
        ),
        status=status,
    )


@portal_view
def thanks(request: HttpRequest, portal: Portal) -> HttpResponse:
    if portal.assessment.status in lifecycle.EDITABLE_STATUSES:
        return redirect(portal_url("review", portal))
    return render(request, "portal/thanks.html", portal_context(portal))


@portal_view
@require_POST
def configuration_change(request: HttpRequest, portal: Portal) -> HttpResponse:
    """The vendor declares that the deployment changed: a reassessment opens without the CTX
    answers and the startup log, and its new private link is emailed to this contact."""
    form = ReassessForm(request.POST)
    changes = form.cleaned_data["changes"] if form.is_valid() else []
    try:
        renewal_start(
            assessment=portal.assessment,
            reason=RenewalReason.CONFIGURATION_CHANGE,
            changes=changes,
            note=form.cleaned_data.get("note", "") if form.is_valid() else "",
            vendor_link=portal.link,
            channel=Channel.VENDOR_LINK,
        )
    except ServiceError as error:
        add_messages(request, error)
    else:
        messages.success(
            request,
            _(
                "Thank you. We emailed a new private link to %(email)s: answer the context-window "
                "questions for the new deployment there and upload its startup log."
            )
            % {"email": portal.link.contact_email},
        )
    return redirect(portal_url("landing", portal))


@portal_view
@require_POST
def language(request: HttpRequest, portal: Portal) -> HttpResponse:
    """Switch the portal's language. From a section page, the switch submits the section's
    form: what was typed is kept as drafts first, and the section comes back."""
    chosen = request.POST.get("language", "")
    if chosen in dict(settings.LANGUAGES):
        request.session[language_session_key(portal.link)] = chosen
        vendor_link_language_set(link=portal.link, language=chosen)
    if code := request.POST.get("section"):
        section = portal.vendor_section(code)
        answerer = portal_answerer(portal)
        keep_drafts(answerer, answer_form(answerer, [code], portal.language, request.POST))
        return redirect(portal_url("section", portal, section.code))
    landing_url = portal_url("landing", portal)
    target = request.POST.get("next", "")
    if not (
        target.startswith(landing_url)
        and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()})
    ):
        target = landing_url
    return redirect(target)


@portal_view
def brand_stylesheet(request: HttpRequest, portal: Portal) -> HttpResponse:
    """The client's colour for the portal's header (a stylesheet: the content security policy
    allows no inline style). Validated when saved, and again here because it is written into
    CSS."""
    colour = portal.assessment.organization.brand_colour
    css = (
        f".portal-brand {{ color: {colour}; }}\n"
        f".site-header {{ border-bottom: 4px solid {colour}; }}\n"
        if re.fullmatch(BRAND_COLOUR_PATTERN, colour or "")
        else ""
    )
    return HttpResponse(css, content_type="text/css; charset=utf-8")


@portal_view
def logo(request: HttpRequest, portal: Portal) -> HttpResponse:
    """The client's logo (or its consultancy's, `?of=consultancy`) for the portal's header."""
    organization: Organization | None = portal.assessment.organization
    if request.GET.get("of") == "consultancy":
        organization = organization.prepared_by() if organization is not None else None
    if organization is None or not organization.has_logo:
        raise Http404
    return logo_response(organization)
