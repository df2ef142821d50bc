"""An assessment's overview: the next step, progress per section, vendor links, reports, scoring
runs, evidence files, the answers and the audit trail; and its buttons (invite, re-send or
revoke a link, score again)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template import TemplateDoesNotExist
from django.template.loader import select_template
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.errors import ServiceError
from core.web import add_errors, add_messages, confirm_page, error_summary
from questionnaires.spec import QuestionnaireSpec
from questionnaires.validation import missing_required

from .. import forms as web_forms
from .. import selectors
from ..lifecycle import allowed_events
from ..models import Assessment, AssessmentStatus, Channel
from ..presenters.answers import FileRef, answer_sections
from ..presenters.audit import audit_rows
from ..presenters.evidence import describe_evidence
from ..presenters.progress import section_progress
from ..services import answers as answer_services
from ..services import submission as submission_services
from ..services import vendor_links as vendor_link_services
from .common import assessment_for, assessment_tabs, page_language, poll_interval

# The reports app's block for the assessment page: the agreed name first, then the request form
# that app ships today.
REPORTS_TEMPLATES = ["reports/_assessment_reports.html", "reports/_request_form.html"]
AUDIT_ROWS = 50


def reports_template() -> str:
    """The block the reports app provides for the assessment page, or "" while it provides
    none (or its pages are not mounted yet, so its links could not be drawn)."""
    try:
        reverse("reports:assessment_reports", args=[0])
        return select_template(REPORTS_TEMPLATES).template.name
    except (TemplateDoesNotExist, NoReverseMatch):
        return ""


def _next_step(assessment: Assessment, missing_use: list[str]) -> str:
    """One sentence: what happens next."""
    status = assessment.status
    if status == AssessmentStatus.DRAFT:
        if missing_use:
            return _("Answer the buyer's questions (section USE), then invite the vendor.")
        return _("Invite the vendor's contact: they answer through a private link.")
    if status == AssessmentStatus.SENT:
        return _("Waiting for the vendor's answers. Their progress is shown below.")
    if status == AssessmentStatus.CHANGES_REQUESTED:
        return _("The vendor is answering the re-opened questions again.")
    if status == AssessmentStatus.SUBMITTED:
        return _("The vendor has submitted; scoring is in progress.")
    if status == AssessmentStatus.SCORING_FAILED:
        return _("Scoring could not finish. The answers are kept; score again to retry.")
    if status == AssessmentStatus.SCORED:
        return _("Scored: read the findings, then a reviewer signs off.")
    review = assessment.reviews.first()
    if review is None:
        return _("Signed off: %(status)s.") % {"status": assessment.get_status_display()}
    if review.conditions:
        return _("Signed off: %(decision)s. Conditions: %(conditions)s") % {
            "decision": review.get_decision_display(),
            "conditions": review.conditions,
        }
    return _("Signed off: %(status)s.") % {"status": review.get_decision_display()}


def _progress_context(assessment: Assessment, spec: QuestionnaireSpec) -> dict[str, Any]:
    values = answer_services.answer_values(assessment)
    evidence = list(selectors.evidence_for(assessment=assessment))
    progress = section_progress(spec, values, {e.question_code for e in evidence}, page_language())
    return {
        "assessment": assessment,
        "progress": progress,
        "vendor_progress": [p for p in progress if p.answered_by == "vendor"],
        "buyer_progress": [p for p in progress if p.answered_by != "vendor"],
        "poll_interval": poll_interval(assessment),
        "values": values,
        "evidence": evidence,
    }


@member_page
def assessment_detail(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    assessment = assessment_for(org, assessment_id)
    vendor = assessment.vendor
    active = selectors.vendor_links_for(assessment=assessment).filter(
        revoked_at__isnull=True, expires_at__gt=timezone.now()
    )
    # The vendor's usual contact is offered only while no link to them is active: inviting the
    # same address again would replace the link they just received.
    invited = active.filter(contact_email__iexact=vendor.contact_email).exists()
    initial = (
        {}
        if invited
        else {"contact_email": vendor.contact_email, "contact_name": vendor.contact_name}
    )
    invite_form = web_forms.InviteForm(initial=initial | {"links_seen": _newest_link(assessment)})
    return _render_detail(
        request, org, assessment, invite_form, issued_link=_issued_link(request, assessment.pk)
    )


def _render_detail(
    request: HttpRequest,
    org: OrgContext,
    assessment: Assessment,
    invite_form: web_forms.InviteForm,
    *,
    status: int = 200,
    issued_link: dict[str, str] | None = None,
) -> HttpResponse:
    spec = assessment.questionnaire.spec
    language = page_language()
    progress = _progress_context(assessment, spec)
    missing_use = missing_required(
        spec, progress["values"], sections=answer_services.buyer_section_codes(spec)
    )
    answers = list(assessment.answers.all())
    files: dict[str, list[FileRef]] = defaultdict(list)
    for evidence_file in progress["evidence"]:
        files[evidence_file.question_code].append(
            FileRef(name=evidence_file.original_name, evidence_id=evidence_file.pk)
        )
    events = allowed_events(assessment.status)
    can_audit = org.can(Capability.READ_AUDIT)
    links = list(selectors.vendor_links_for(assessment=assessment).select_related("created_by"))
    return render(
        request,
        "assessments/detail.html",
        {
            "org": org,
            "questionnaire": spec,
            **progress,
            "answer_sections": answer_sections(
                spec,
                progress["values"],
                language,
                comments={a.question_code: a.comment for a in answers if a.comment},
                reopened={a.question_code for a in answers if a.reopened},
                files=files,
            ),
            "threads": {
                thread.question_code: thread
                for thread in selectors.threads_for(assessment=assessment)
            },
            "evidence_rows": [
                {"file": e, "description": describe_evidence(e.parse_result, language)}
                for e in progress["evidence"]
            ],
            "runs": selectors.runs_for(assessment=assessment).defer(
                "answers_snapshot", "evidence_snapshot", "ruleset__content"
            ),
            "links": links,
            "active_links": [link for link in links if link.state == "active"],
            "awaiting_vendor": assessment.status
            in (AssessmentStatus.SENT, AssessmentStatus.CHANGES_REQUESTED),
            "issued_link": issued_link,
            "events": events,
            "can_invite_now": "invite" in events and org.can(Capability.INVITE_VENDOR),
            "missing_use": missing_use,
            "next_step": _next_step(assessment, missing_use),
            "invite_form": invite_form,
            "reassess_form": web_forms.ReassessForm(),
            "error_summary": error_summary(invite_form) if invite_form.is_bound else [],
            "latest_review": assessment.reviews.select_related("reviewer").first(),
            "reports_template": reports_template(),
            "audit": audit_rows(
                selectors.audit_events_for(organization=org.organization, assessment=assessment)[
                    :AUDIT_ROWS
                ],
                language,
            )
            if can_audit
            else None,
            **assessment_tabs(org, "overview"),
        },
        status=status,
    )


@member_page
def assessment_progress(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    """The progress block, for htmx to poll while the vendor answers or the worker scores. When
    the status has moved on since the page was drawn, the whole page is reloaded."""
    assessment = assessment_for(org, assessment_id)
    if not request.htmx:  # type: ignore[attr-defined]
        return redirect("assessments:detail", assessment_id=assessment.pk)
    if request.GET.get("status") != assessment.status:
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    context = _progress_context(assessment, assessment.questionnaire.spec)
    return render(request, "assessments/_progress.html", {"org": org, **context})


# -- vendor links ---------------------------------------------------------------------------


ISSUED_LINK_SESSION_KEY = "assessments:issued-link:%d"


@member_page(capability=Capability.INVITE_VENDOR)
@require_POST
def vendor_invite(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    assessment = assessment_for(org, assessment_id)
    form = web_forms.InviteForm(request.POST)
    if form.is_valid():
        try:
            _link, token = vendor_link_services.vendor_link_issue(
                assessment=assessment,
                contact_email=form.cleaned_data["contact_email"],
                contact_name=form.cleaned_data["contact_name"].strip(),
                language=form.cleaned_data["language"],
                member=org,
                channel=Channel.WEB,
                links_seen=form.cleaned_data["links_seen"],
            )
        except ServiceError as exc:
            # The page now shows the link sent meanwhile: posting again replaces it, on purpose.
            data = request.POST.copy()
            data["links_seen"] = str(_newest_link(assessment))
            form = web_forms.InviteForm(data)
            form.is_valid()
            add_errors(form, exc)
        else:
            _show_link_once(request, assessment.pk, token, form.cleaned_data["contact_email"])
            messages.success(
                request,
                _("A private link was sent to %(email)s.")
                % {"email": form.cleaned_data["contact_email"]},
            )
            # Post/Redirect/Get: the page comes back with an empty form, so reloading it or
            # clicking again cannot silently replace the link just sent.
            return redirect(f"{reverse('assessments:detail', args=[assessment.pk])}#links")
    assessment = assessment_for(org, assessment_id)  # the status may have changed meanwhile
    return _render_detail(request, org, assessment, form, status=400)


def _newest_link(assessment: Assessment) -> int:
    return assessment.vendor_links.order_by("-pk").values_list("pk", flat=True).first() or 0


def _show_link_once(request: HttpRequest, assessment_id: int, token: str, email: str) -> None:
    """Hand the new link to the next page view of the assessment, which shows it once (the
    database keeps only the token's hash; the session holds it until that page pops it)."""
    request.session[ISSUED_LINK_SESSION_KEY % assessment_id] = {
        "url": vendor_link_services.vendor_link_url(token),
        "email": email,
    }


def _issued_link(request: HttpRequest, assessment_id: int) -> dict[str, str] | None:
    return request.session.pop(ISSUED_LINK_SESSION_KEY % assessment_id, None)


@member_page(capability=Capability.INVITE_VENDOR)
@require_http_methods(["GET", "POST"])
def vendor_link_reinvite(request: HttpRequest, org: OrgContext, link_id: int) -> HttpResponse:
    """Send the same contact a fresh link (the earlier one stops working), after a confirm
    step."""
    link = selectors.vendor_link_get(organization=org.organization, link_id=link_id)
    links_url = f"{reverse('assessments:detail', args=[link.assessment_id])}#links"
    if request.method == "GET":
        return confirm_page(
            request,
            title=_("Send a new link to %(email)s?") % {"email": link.contact_email},
            explanation=_(
                "The link they have now stops working at once; the new one is emailed to them "
                "and shown to you once. Drafts and answers are kept."
            ),
            confirm_label=_("Send a new link"),
            cancel_url=links_url,
            danger=False,
        )
    try:
        _new_link, token = vendor_link_services.vendor_link_issue(
            assessment=link.assessment,
            contact_email=link.contact_email,
            contact_name=link.contact_name,
            language=link.language,
            member=org,
            channel=Channel.WEB,
            replacing=link,
        )
    except ServiceError as exc:
        add_messages(request, exc)
    else:
        _show_link_once(request, link.assessment_id, token, link.contact_email)
        messages.success(
            request, _("A new link was sent to %(email)s.") % {"email": link.contact_email}
        )
    return redirect(links_url)


@member_page(capability=Capability.INVITE_VENDOR)
@require_http_methods(["GET", "POST"])
def vendor_link_revoke(request: HttpRequest, org: OrgContext, link_id: int) -> HttpResponse:
    link = selectors.vendor_link_get(organization=org.organization, link_id=link_id)
    links_url = f"{reverse('assessments:detail', args=[link.assessment_id])}#links"
    if request.method == "GET":
        return confirm_page(
            request,
            title=_("Revoke the link of %(email)s?") % {"email": link.contact_email},
            explanation=_(
                "The vendor can no longer open the questionnaire with it. What they saved is "
                "kept; you can send them a new link later."
            ),
            confirm_label=_("Revoke the link"),
            cancel_url=links_url,
        )
    vendor_link_services.vendor_link_revoke(link=link, member=org, channel=Channel.WEB)
    messages.success(
        request, _("The link for %(email)s was revoked.") % {"email": link.contact_email}
    )
    return redirect(links_url)


@member_page(capability=Capability.EDIT_ASSESSMENT)
@require_POST
def assessment_rescore(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    assessment = assessment_for(org, assessment_id)
    try:
        submission_services.assessment_rescore(
            assessment=assessment, member=org, channel=Channel.WEB
        )
    except ServiceError as exc:
        add_messages(request, exc)
    else:
        messages.success(request, _("Scoring has been queued with the newest ruleset."))
    return redirect("assessments:detail", assessment_id=assessment.pk)
