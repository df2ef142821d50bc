"""Web pages for members: the dashboard, an assessment with its findings, vendor links, evidence.

Every view resolves the organization once (`member_context`) and fetches through the selectors,
so another organization's objects are 404 and a role without the capability gets 403.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Case, IntegerField, Value, When
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.tenancy import OrgContext, org_context_for_request

from . import selectors, services
from .lifecycle import allowed_events
from .models import AssessmentStatus, Channel
from .storage import evidence_storage


def member_context(request: HttpRequest, capability: str = "view") -> OrgContext:
    context = org_context_for_request(request)
    if context is None:
        raise PermissionDenied
    context.require(capability)
    return context


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    org = member_context(request)
    today = timezone.localdate()
    open_statuses = [
        AssessmentStatus.DRAFT,
        AssessmentStatus.SENT,
        AssessmentStatus.CHANGES_REQUESTED,
    ]
    assessments = (
        selectors.assessments_for(organization=org.organization)
        .annotate(
            overdue=Case(
                When(due_date__lt=today, status__in=open_statuses, then=Value(0)),
                default=Value(1),
                output_field=IntegerField(),
            )
        )
        .order_by("overdue", "due_date", "-created_at")
    )
    status = request.GET.get("status")
    if status in AssessmentStatus.values:
        assessments = assessments.filter(status=status)
    return render(
        request,
        "assessments/dashboard.html",
        {
            "org": org,
            "assessments": assessments,
            "statuses": AssessmentStatus.choices,
            "status": status,
        },
    )


@login_required
def assessment_detail(request: HttpRequest, assessment_id: int) -> HttpResponse:
    org = member_context(request)
    assessment = selectors.assessment_get(
        organization=org.organization, assessment_id=assessment_id
    )
    run_id = request.GET.get("run")
    run = (
        selectors.run_get(organization=org.organization, run_id=run_id)
        if run_id and run_id.isdigit()
        else assessment.latest_run
    )
    if run is not None and run.assessment_id != assessment.pk:
        run = None
    spec = assessment.questionnaire.spec
    ruleset = run.ruleset.spec if run else None
    findings = []
    if run is not None:
        for finding in selectors.findings_for(run=run):
            rule = ruleset.rules_by_id.get(finding.rule_id) if ruleset else None
            findings.append({"row": finding, "rule": rule})
    can_audit = org.can("review") or org.is_owner
    return render(
        request,
        "assessments/detail.html",
        {
            "org": org,
            "assessment": assessment,
            "questionnaire": spec,
            "answers": {a.question_code: a for a in assessment.answers.all()},
            "run": run,
            "runs": selectors.runs_for(assessment=assessment),
            "findings": findings,
            "evidence": selectors.evidence_for(assessment=assessment),
            "links": selectors.vendor_links_for(assessment=assessment),
            "events": allowed_events(assessment.status),
            "audit": selectors.audit_events_for(
                organization=org.organization, assessment=assessment
            )[:50]
            if can_audit
            else None,
        },
    )


@login_required
@require_POST
def vendor_invite(request: HttpRequest, assessment_id: int) -> HttpResponse:
    org = member_context(request, "invite_vendor")
    assessment = selectors.assessment_get(
        organization=org.organization, assessment_id=assessment_id
    )
    try:
        services.vendor_link_issue(
            assessment=assessment,
            contact_email=request.POST.get("contact_email", "").strip(),
            contact_name=request.POST.get("contact_name", "").strip(),
            language=request.POST.get("language", "en"),
            actor=org.user,
            channel=Channel.WEB,
        )
    except services.ServiceError as exc:
        for field, errors in exc.errors.items():
            messages.error(request, f"{field}: {' '.join(errors)}")
    else:
        messages.success(request, _("The vendor has been sent a private link."))
    return redirect("assessments:detail", assessment_id=assessment.pk)


@login_required
@require_POST
def vendor_link_revoke(request: HttpRequest, link_id: int) -> HttpResponse:
    org = member_context(request, "invite_vendor")
    link = selectors.vendor_link_get(organization=org.organization, link_id=link_id)
    services.vendor_link_revoke(link=link, actor=org.user, channel=Channel.WEB)
    messages.success(request, _("The link has been revoked."))
    return redirect("assessments:detail", assessment_id=link.assessment_id)


@login_required
@require_POST
def assessment_rescore(request: HttpRequest, assessment_id: int) -> HttpResponse:
    org = member_context(request, "edit_assessment")
    assessment = selectors.assessment_get(
        organization=org.organization, assessment_id=assessment_id
    )
    try:
        services.assessment_rescore(assessment=assessment, actor=org.user, channel=Channel.WEB)
    except services.ServiceError as exc:
        messages.error(request, " ".join(m for ms in exc.errors.values() for m in ms))
    else:
        messages.success(request, _("Scoring has been queued with the newest ruleset."))
    return redirect("assessments:detail", assessment_id=assessment.pk)


@login_required
def evidence_download(request: HttpRequest, evidence_id: int) -> FileResponse:
    org = member_context(request)
    evidence = selectors.evidence_get(organization=org.organization, evidence_id=evidence_id)
    handle = evidence_storage().open(evidence.storage_name, "rb")
    # Always an attachment of an inert type: vendor files are never rendered by the browser.
    response = FileResponse(
        handle,
        as_attachment=True,
        filename=evidence.original_name,
        content_type="application/octet-stream",
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response
