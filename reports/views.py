"""Web pages for reports: the reports of an assessment (and the request form), a report's status
page, its download, the organization's portfolio reports (the same three), and the
verification page.

Every view goes through `member_page` and fetches through the selectors, so another
organization's reports are 404 and a role without the capability gets 403.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from accounts.decorators import member_page
from accounts.tenancy import OrgContext
from assessments import selectors as assessment_selectors
from assessments.models import Channel, RunStatus, ScoringRun
from core.errors import ServiceError, StorageUnavailableError
from core.formats import format_datetime
from core.web import add_errors, add_messages, error_summary

from . import selectors, services
from .models import GeneratedDocument, PortfolioKind, ReportLanguage
from .portfolio_context import consultancy_overview_context
from .responses import pdf_response


def can_request_reports(org: OrgContext) -> bool:
    return any(org.can(capability) for capability in services.REPORT_REQUEST_CAPABILITIES)


class ReportRequestForm(forms.Form):
    language = forms.ChoiceField(label=gettext_lazy("Language"), choices=ReportLanguage.choices)
    # Empty: the latest run (the assessment page's one-click form sends none).
    run = forms.TypedChoiceField(
        label=gettext_lazy("Scoring run"), coerce=int, required=False, empty_value=None
    )
    include_threads = forms.BooleanField(
        label=gettext_lazy("Include the questions to the vendor (clarification threads)"),
        required=False,
    )

    def __init__(
        self, *args: object, runs: list[ScoringRun], language: str, **kwargs: object
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["run"].choices = [
            (
                run.pk,
                f"#{run.pk} · {format_datetime(run.created_at, language)} · {run.ruleset.key} · "
                f"{run.get_risk_tier_display()} {run.risk_score}",
            )
            for run in runs
        ]


class VerifyForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("Report (PDF)"))


@member_page
@require_http_methods(["GET", "POST"])
def assessment_reports(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    """The reports of one assessment; POST requests a new one (assessors and reviewers)."""
    assessment = assessment_selectors.assessment_get(
        organization=org.organization, assessment_id=assessment_id
    )
    runs = list(
        assessment_selectors.runs_for(assessment=assessment).filter(status=RunStatus.SUCCEEDED)
    )
    can_request = can_request_reports(org)
    form = ReportRequestForm(
        request.POST if request.method == "POST" else None,
        runs=runs,
        language=translation.get_language() or request.LANGUAGE_CODE,
        initial={"language": request.LANGUAGE_CODE, "run": assessment.latest_run_id},
    )
    if request.method == "POST":
        org.require(*services.REPORT_REQUEST_CAPABILITIES)
        if form.is_valid():
            run_id = form.cleaned_data["run"] or assessment.latest_run_id
            run = (
                assessment_selectors.run_get(organization=org.organization, run_id=run_id)
                if run_id
                else None
            )
            try:
                report = services.report_request(
                    assessment=assessment,
                    run=run,
                    language=form.cleaned_data["language"],
                    include_threads=form.cleaned_data["include_threads"],
                    member=org,
                    channel=Channel.WEB,
                )
            except ServiceError as exc:
                add_messages(request, exc)
            else:
                messages.success(
                    request,
                    _("Report %(number)s is being generated.") % {"number": report.number},
                )
                return redirect("reports:status", report_id=report.pk)
    return render(
        request,
        "reports/assessment_reports.html",
        {
            "org": org,
            "assessment": assessment,
            "reports": selectors.reports_for(organization=org.organization, assessment=assessment),
            "form": form if can_request and runs else None,
        },
    )


@member_page
def report_status(request: HttpRequest, org: OrgContext, report_id: int) -> HttpResponse:
    report = selectors.report_get(organization=org.organization, report_id=report_id)
    return render(request, "reports/status.html", {"org": org, "report": report})


@member_page
def report_download(request: HttpRequest, org: OrgContext, report_id: int) -> HttpResponse:
    """The stored PDF, exactly as generated (checked against its SHA-256 before it is sent)."""
    report = selectors.report_get(organization=org.organization, report_id=report_id)
    return _pdf_download(request, report, "reports:status", "report_id")


def _pdf_download(
    request: HttpRequest, report: GeneratedDocument, status_page: str, id_name: str
) -> HttpResponse:
    """A ready report's PDF (of either kind); back to its status page with the reason if not."""
    if not report.is_ready:
        messages.error(request, _("This report is not ready to download."))
        return redirect(status_page, **{id_name: report.pk})
    try:
        return pdf_response(report)
    except (services.ReportIntegrityError, StorageUnavailableError) as exc:
        add_messages(request, exc)
        return redirect(status_page, **{id_name: report.pk})


class PortfolioReportRequestForm(forms.Form):
    language = forms.ChoiceField(label=gettext_lazy("Language"), choices=ReportLanguage.choices)


def _portfolio_report_requested(
    request: HttpRequest, org: OrgContext, form: PortfolioReportRequestForm, kind: str
) -> HttpResponse | None:
    """Queue the report the valid `form` asks for and go to its status page; None (with the
    reason in the page's messages) when it is refused."""
    try:
        report = services.portfolio_report_request(
            member=org, language=form.cleaned_data["language"], channel=Channel.WEB, kind=kind
        )
    except ServiceError as exc:
        add_messages(request, exc)
        return None
    messages.success(
        request, _("Portfolio report %(number)s is being generated.") % {"number": report.number}
    )
    return redirect("reports:portfolio_report_status", portfolio_report_id=report.pk)


@member_page
@require_http_methods(["GET", "POST"])
def portfolio_reports(request: HttpRequest, org: OrgContext) -> HttpResponse:
    """The organization's portfolio reports; POST requests a new one (every member)."""
    form = PortfolioReportRequestForm(
        request.POST if request.method == "POST" else None,
        initial={"language": request.LANGUAGE_CODE},
    )
    if request.method == "POST" and form.is_valid():
        if requested := _portfolio_report_requested(request, org, form, PortfolioKind.ORGANIZATION):
            return requested
    return render(
        request,
        "reports/portfolio_reports.html",
        {
            "org": org,
            "form": form,
            "reports": selectors.portfolio_reports_for(organization=org.organization),
        },
        status=400 if form.errors else 200,
    )


@member_page
@require_http_methods(["GET", "POST"])
def client_overview(request: HttpRequest, org: OrgContext) -> HttpResponse:
    """A consultancy's clients, each one's figures now (counts only); POST asks for the
    overview as a PDF. Another kind of organization has no such page (404)."""
    if not org.organization.is_consultancy:
        raise Http404
    form = PortfolioReportRequestForm(
        request.POST if request.method == "POST" else None,
        initial={"language": request.LANGUAGE_CODE},
    )
    if request.method == "POST" and form.is_valid():
        if requested := _portfolio_report_requested(request, org, form, PortfolioKind.CONSULTANCY):
            return requested
    language = request.LANGUAGE_CODE if request.LANGUAGE_CODE in ReportLanguage.values else "en"
    overview, _figures = consultancy_overview_context(
        consultancy=org.organization, language=language, number="", generated_at=timezone.now()
    )
    return render(
        request,
        "reports/client_overview.html",
        {
            "org": org,
            "form": form,
            "report": overview,
            "L": overview.labels,
            "reports": selectors.portfolio_reports_for(
                organization=org.organization, kind=PortfolioKind.CONSULTANCY
            ),
        },
        status=400 if form.errors else 200,
    )


@member_page
def portfolio_report_status(
    request: HttpRequest, org: OrgContext, portfolio_report_id: int
) -> HttpResponse:
    report = selectors.portfolio_report_get(
        organization=org.organization, report_id=portfolio_report_id
    )
    return render(request, "reports/portfolio_status.html", {"org": org, "report": report})


@member_page
def portfolio_report_download(
    request: HttpRequest, org: OrgContext, portfolio_report_id: int
) -> HttpResponse:
    report = selectors.portfolio_report_get(
        organization=org.organization, report_id=portfolio_report_id
    )
    return _pdf_download(request, report, "reports:portfolio_report_status", "portfolio_report_id")


@member_page
@require_http_methods(["GET", "POST"])
def report_verify(request: HttpRequest, org: OrgContext) -> HttpResponse:
    """Upload a PDF: is it an unaltered AVIA report of this organization, and of what?"""
    form = VerifyForm(request.POST or None, request.FILES or None)
    verification = None
    if request.method == "POST" and form.is_valid():
        try:
            verification = services.report_verify(
                organization=org.organization, uploaded_file=form.cleaned_data["file"]
            )
        except ServiceError as exc:
            add_errors(form, exc)
    return render(
        request,
        "reports/verify.html",
        {
            "org": org,
            "form": form,
            "verification": verification,
            "error_summary": error_summary(form) if form.is_bound else [],
        },
    )
