"""The assessor's probe page of an assessment: the vendor's set-up and authorisation (window,
ceiling, what is spent), starting a run, its progress (polled with htmx, or refreshed by hand
without JavaScript) and the result's figures — the same presenter as the findings page and
the PDF. Every page goes through `member_page` and finds the assessment within the member's
organization, so another organization's assessment or run is a 404."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments.models import Assessment, AssessmentStatus, Channel
from assessments.presenters.probe import CHECK_TITLES, probe_view
from assessments.services.answers import probe_consented
from assessments.views.common import assessment_for, assessment_tabs, page_language
from core.errors import ServiceError
from core.formats import list_text
from core.web import add_errors, error_summary

from . import selectors
from .forms import ProbeRunForm
from .models import ProbeRun, ProbeSetup
from .presenters import cost_plan, setup_facts
from .services.runs import probe_run_request

# Seconds between two looks at a running probe (its progress is written about once a second).
POLL_SECONDS = 2


@member_page
def assessment_probe(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    assessment = assessment_for(org, assessment_id)
    return _probe_page(request, org, assessment, ProbeRunForm())


@member_page(capability=Capability.EDIT_ASSESSMENT)
@require_POST
def probe_run_start(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    assessment = assessment_for(org, assessment_id)
    form = ProbeRunForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            probe_run_request(
                assessment=assessment,
                actor=org.user,
                channel=Channel.WEB,
                checks=data["checks"],
                samples=data["samples"],
                prefix_tokens=data["prefix_tokens"],
            )
        except ServiceError as exc:
            add_errors(form, exc)
            return _probe_page(request, org, assessment, form, status=exc.status_code)
        messages.success(request, _("The probe is queued; this page follows its progress."))
        return redirect("probes:assessment_probe", assessment_id=assessment.pk)
    return _probe_page(request, org, assessment, form, status=400)


@member_page
def probe_run_progress(request: HttpRequest, org: OrgContext, probe_run_id: int) -> HttpResponse:
    """htmx: the progress of a running probe, every few seconds; once it has ended, the whole
    page is reloaded to show the result. Without htmx, the probe page itself."""
    run = selectors.probe_run_get(organization=org.organization, probe_run_id=probe_run_id)
    if not request.htmx or not run.is_pending:  # type: ignore[attr-defined]
        if request.htmx:  # type: ignore[attr-defined]
            response = HttpResponse(status=204)
            response["HX-Refresh"] = "true"
            return response
        return redirect("probes:assessment_probe", assessment_id=run.assessment_id)
    return render(request, "probes/_run_progress.html", {"run": run, **_progress(run)})


def _probe_page(
    request: HttpRequest,
    org: OrgContext,
    assessment: Assessment,
    form: ProbeRunForm,
    *,
    status: int = 200,
) -> HttpResponse:
    language = page_language()
    setup = selectors.probe_setup_for(organization=org.organization, assessment=assessment)
    runs = list(selectors.probe_runs_for(organization=org.organization, assessment=assessment))
    pending = next((run for run in runs if run.is_pending), None)
    latest_done = selectors.probe_run_latest_done(
        organization=org.organization, assessment=assessment
    )
    context: dict[str, Any] = {
        "org": org,
        "assessment": assessment,
        "questionnaire": assessment.questionnaire.spec,
        "setup": setup,
        "setup_facts": setup_facts(setup) if setup else [],
        "window": _window(setup),
        "plan": cost_plan(setup.declared_context) if setup else None,
        "runs": [_run_row(run, language) for run in runs],
        "pending": pending,
        "poll_seconds": POLL_SECONDS,
        "latest": latest_done,
        "probe": probe_view(latest_done.result or {}, language) if latest_done else None,
        "rescore": _rescore_offer(org, assessment, latest_done),
        "has_probe_question": assessment.questionnaire.spec.probe_question is not None,
        # Scoring reads a probe result only under the vendor's consent (PRB-01 = yes shows
        # PRB-02; a hidden question's files are ignored): a member may still run one.
        "consented": probe_consented(assessment),
        "form": form,
        "can_start": org.can(Capability.EDIT_ASSESSMENT),
        "error_summary": error_summary(form),
        **assessment_tabs(org, "probe"),
    }
    if pending is not None:
        context.update(_progress(pending))
    return render(request, "probes/assessment_probe.html", context, status=status)


def _window(setup: ProbeSetup | None) -> str:
    """Whether the signed window is open now: "open", "not_started", "ended" or ""."""
    if setup is None:
        return ""
    now = timezone.now()
    if now < setup.window_starts_at:
        return "not_started"
    return "ended" if now >= setup.window_ends_at else "open"


def _progress(run: ProbeRun) -> dict[str, Any]:
    progress = run.progress or {}
    check = progress.get("check")
    return {
        "percent": int(progress.get("percent") or 0),
        "current_check": str(CHECK_TITLES[check]) if check in CHECK_TITLES else "",
        "requests_sent": progress.get("requests_sent") or 0,
        "requests_planned": progress.get("requests_planned") or 0,
        "tokens_spent": progress.get("tokens_spent") or 0,
        "progress_url": reverse("probes:run_progress", args=[run.pk]),
    }


def _run_row(run: ProbeRun, language: str) -> dict[str, Any]:
    return {
        "run": run,
        "checks": list_text(
            [str(CHECK_TITLES[name]) for name in run.checks if name in CHECK_TITLES], language
        ),
        "outcomes": [
            (str(CHECK_TITLES.get(name, name)), outcome) for name, outcome in run.outcomes.items()
        ],
    }


def _rescore_offer(org: OrgContext, assessment: Assessment, run: ProbeRun | None) -> bool:
    """Whether to offer "score again": a probe result was attached after the latest scoring
    run, and the assessment is scored (rescoring is then allowed)."""
    if run is None or run.evidence_id is None or not org.can(Capability.EDIT_ASSESSMENT):
        return False
    if assessment.status not in (AssessmentStatus.SCORED, AssessmentStatus.SCORING_FAILED):
        return False
    latest = assessment.latest_run
    return latest is None or (run.finished_at is not None and latest.created_at < run.finished_at)
