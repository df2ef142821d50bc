"""Sign-off: anyone may read the review page; a reviewer who took no part in the assessment
decides (approve, approve with conditions, reject, or send questions back to the vendor)."""

from __future__ import annotations

from collections import Counter

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from accounts.decorators import member_page
from accounts.tenancy import OrgContext
from core.errors import ConflictError, ServiceError
from core.web import add_errors, error_summary
from scoring.spec import SEVERITIES

from .. import forms as web_forms
from .. import selectors
from ..models import CLOSED_STATUSES, Assessment, AssessmentStatus, Channel, ReviewDecision
from ..services.reviews import review_record, reviewer_conflict
from .common import assessment_for, assessment_tabs, page_language

# After a decision: signed off, or back with the vendor until they submit again.
DECIDED_STATUSES = (*CLOSED_STATUSES, AssessmentStatus.CHANGES_REQUESTED)


def review_blockers(org: OrgContext, assessment: Assessment) -> list[str]:
    """Why this member cannot sign off this assessment now (empty: they can)."""
    reasons = []
    if not org.can("review"):
        reasons.append(
            _("Only reviewers and owners can sign off; your role is %(role)s.")
            % {"role": org.membership.get_role_display()}
        )
    if assessment.status != AssessmentStatus.SCORED or assessment.latest_run is None:
        reasons.append(
            _("Sign-off is possible once the assessment is scored; it is now “%(status)s”.")
            % {"status": assessment.get_status_display()}
        )
    if org.can("review") and reviewer_conflict(assessment=assessment, reviewer=org.user):
        reasons.append(
            _(
                "You created, edited or submitted this assessment: another reviewer must decide "
                "(four-eyes rule)."
            )
        )
    return reasons


@member_page
def assessment_review(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    """Sign-off: anyone may read it; a reviewer who did not take part decides."""
    if request.method == "POST":
        org.require("review")
    assessment = assessment_for(org, assessment_id)
    spec = assessment.questionnaire.spec
    language = page_language()
    run = assessment.latest_run
    critical = selectors.critical_findings_for(run=run) if run is not None else {}
    form = web_forms.ReviewForm(
        request.POST if request.method == "POST" else None,
        initial={"run": assessment.latest_run_id},
        questionnaire=spec,
        language=language,
        critical=critical,
    )
    blockers = review_blockers(org, assessment)
    # Once decided, the page says what was decided (not why one cannot decide again).
    decided = (
        assessment.reviews.select_related("reviewer").first()
        if assessment.status in DECIDED_STATUSES
        else None
    )
    status = 200
    if request.method == "POST":
        if blockers:
            for reason in blockers:
                form.add_error(None, reason)
        elif form.is_valid():
            try:
                review = review_record(
                    assessment=assessment,
                    member=org,
                    decision=form.cleaned_data["decision"],
                    conditions=form.cleaned_data["conditions"],
                    message=form.cleaned_data["message"],
                    reopen_codes=form.cleaned_data["reopen_codes"],
                    run_id=form.cleaned_data["run"],
                    thread_notes=form.thread_notes(),
                    acknowledged_findings=form.cleaned_data["acknowledged_findings"],
                    channel=Channel.WEB,
                )
            except ConflictError as exc:
                # Scored again since the page was read: show the new run, keep what was typed,
                # and carry the new run's id, so that the next post decides on what is shown.
                assessment.refresh_from_db()
                data = request.POST.copy()
                data["run"] = str(assessment.latest_run_id or "")
                run = assessment.latest_run
                critical = selectors.critical_findings_for(run=run) if run is not None else {}
                form = web_forms.ReviewForm(
                    data, questionnaire=spec, language=language, critical=critical
                )
                form.is_valid()
                for message in exc.messages:
                    form.add_error(None, message)
                status = 409
            except ServiceError as exc:
                add_errors(form, exc)
            else:
                messages.success(
                    request,
                    _("Decision recorded: %(decision)s.")
                    % {"decision": review.get_decision_display()},
                )
                return redirect("assessments:review", assessment_id=assessment.pk)
    severity_counts: Counter[str] = Counter()
    if run is not None:
        severity_counts = Counter(
            selectors.findings_for(run=run).values_list("severity", flat=True)
        )
    return render(
        request,
        "assessments/review.html",
        {
            "org": org,
            "assessment": assessment,
            "questionnaire": spec,
            "run": run,
            "severity_counts": [(s, severity_counts.get(s, 0)) for s in SEVERITIES],
            "form": form,
            "blockers": blockers,
            "decided": decided,
            "reviews": assessment.reviews.select_related("reviewer", "run"),
            "decisions": ReviewDecision,
            "error_summary": error_summary(form),
            **assessment_tabs(org, "review"),
        },
        status=status if status != 200 else (400 if form.errors else 200),
    )
