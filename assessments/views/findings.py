"""The findings of a scoring run: score, tier and formula, coverage per section, and each finding
with why it fired, what it rests on, the remediation and framework references; filters; risk
acceptances and mitigations recorded against a finding."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.forms import Form
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.errors import ServiceError
from core.text import is_ascii_number
from core.web import add_errors, error_summary
from scoring.selectors import frameworks_for

from .. import forms as web_forms
from .. import selectors
from ..models import Assessment, Channel, RiskDecision, RunStatus, ScoringRun
from ..presenters.charts import coverage_chart
from ..presenters.findings import FindingView, finding_views, score_explanation
from ..presenters.probe import probe_view_of_run
from ..services.reviews import risk_decision_record
from .common import assessment_for, assessment_tabs, page_language, poll_interval
from .review import review_blockers


@dataclass(frozen=True)
class FindingCard:
    """A finding as the page shows it: the shared view, and the risk decision form."""

    finding: FindingView
    form: Form | None = None
    open_form: bool = False

    @property
    def rule_id(self) -> str:
        return self.finding.rule_id


def _run_for(org: OrgContext, assessment: Assessment, run_id: str | None) -> ScoringRun | None:
    if run_id and is_ascii_number(run_id):
        run = selectors.run_get(organization=org.organization, run_id=run_id)
        return run if run.assessment_id == assessment.pk else None
    return assessment.latest_run


def _findings_page(
    request: HttpRequest,
    org: OrgContext,
    assessment: Assessment,
    *,
    invalid_rule: str = "",
    invalid_form: Form | None = None,
    status: int = 200,
) -> HttpResponse:
    spec = assessment.questionnaire.spec
    language = page_language()
    run = _run_for(org, assessment, request.GET.get("run"))
    frameworks = frameworks_for(ruleset=run.ruleset if run is not None else None)
    framework_choices = [
        (ref.id, f"{ref.id} — {ref.title.get(language)}")
        for ref in sorted(frameworks.values(), key=lambda r: (r.jurisdiction != "hk", r.id))
    ]
    section_choices = [(s.code, f"{s.code} — {s.title.get(language)}") for s in spec.sections]
    filter_form = web_forms.FindingFilterForm(
        request.GET
        if any(k in request.GET for k in ("severity", "section", "framework"))
        else None,
        sections=section_choices,
        frameworks=framework_choices,
    )
    filters = filter_form.filters() if filter_form.is_bound else {}
    context: dict[str, Any] = {
        "org": org,
        "assessment": assessment,
        "questionnaire": spec,
        "run": run,
        "filter_form": filter_form,
        "filters": filters,
        "poll_interval": poll_interval(assessment),
        "review_blockers": review_blockers(org, assessment),
        **assessment_tabs(org, "findings"),
    }
    if run is not None and run.ruleset_id and run.status == RunStatus.SUCCEEDED:
        ruleset = run.ruleset.spec
        rows = list(selectors.findings_for(run=run))
        # Scoped through the assessment, which was fetched within the organization.
        decisions: dict[str, list[RiskDecision]] = defaultdict(list)
        for decision in RiskDecision.objects.filter(assessment=assessment).select_related(
            "created_by"
        ):
            decisions[decision.rule_id].append(decision)
        views = finding_views(
            rows,
            spec=spec,
            ruleset=ruleset,
            answers=run.answers_snapshot or {},
            frameworks=frameworks,
            language=language,
            decisions=decisions,
            evidence_ids={
                (e.question_code, e.original_name): e.pk
                for e in selectors.evidence_for(assessment=assessment)
            },
            today=timezone.localdate(),
        )
        can_decide = org.can(Capability.EDIT_ASSESSMENT) and run.pk == assessment.latest_run_id
        cards = [
            FindingCard(
                finding=view,
                form=(
                    invalid_form
                    if invalid_form is not None and view.rule_id == invalid_rule
                    else web_forms.RiskDecisionForm(auto_id=f"id_{view.rule_id}_%s")
                )
                if can_decide
                else None,
                open_form=view.rule_id == invalid_rule,
            )
            for view in views
        ]
        shown = [
            card
            for card in cards
            if (not filters.get("severity") or card.finding.severity == filters["severity"])
            and (not filters.get("section") or card.finding.section == filters["section"])
            and (not filters.get("framework") or filters["framework"] in card.finding.framework_ids)
        ]
        context.update(
            {
                "ruleset": ruleset,
                "findings": shown,
                "finding_count": len(cards),
                "explanation": score_explanation(
                    risk_score=run.risk_score,
                    risk_tier=run.risk_tier,
                    ruleset=ruleset,
                    severities=[row.severity for row in rows],
                    language=language,
                ),
                "chart": coverage_chart(spec, [run.sections or {}], language),
                # The probe result this run read (PRB-02), as the PDF's chapter shows it.
                "probe": probe_view_of_run(run.evidence_snapshot, language),
                "framework_filter": frameworks.get(filters.get("framework", "")),
                "severity_counts": Counter(view.severity for view in views),
                "is_latest_run": run.pk == assessment.latest_run_id,
                "error_summary": error_summary(invalid_form) if invalid_form else [],
            }
        )
    return render(request, "assessments/findings.html", context, status=status)


@member_page
def assessment_findings(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    return _findings_page(request, org, assessment_for(org, assessment_id))


@member_page(capability=Capability.EDIT_ASSESSMENT)
@require_POST
def risk_decision_create(
    request: HttpRequest, org: OrgContext, assessment_id: int, rule_id: str
) -> HttpResponse:
    assessment = assessment_for(org, assessment_id)
    form = web_forms.RiskDecisionForm(request.POST, auto_id=f"id_{rule_id}_%s")
    if form.is_valid():
        try:
            risk_decision_record(
                assessment=assessment,
                rule_id=rule_id,
                kind=form.cleaned_data["kind"],
                justification=form.cleaned_data["justification"],
                owner=form.cleaned_data["owner"],
                expires_on=form.cleaned_data["expires_on"],
                member=org,
                channel=Channel.WEB,
            )
        except ServiceError as exc:
            add_errors(form, exc)
        else:
            messages.success(
                request,
                _("Recorded against %(rule)s. The finding stays listed.") % {"rule": rule_id},
            )
            url = reverse("assessments:findings", args=[assessment.pk])
            return redirect(f"{url}#finding-{rule_id}")
    return _findings_page(
        request, org, assessment, invalid_rule=rule_id, invalid_form=form, status=400
    )
