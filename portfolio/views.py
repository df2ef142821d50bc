"""Member pages of the portfolio: assessments scored with an older ruleset and their rescore
batches, the reassessment policy, starting a reassessment, and the outbox.

Thin like every view: the selectors find objects within the member's organization (another
organization's batch is a 404), one service acts, errors are shown beside the form.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments.forms import ReassessForm
from assessments.models import Channel, RenewalReason
from assessments.selectors import assessment_get, assessments_changed_at, vendors_changed_at
from assessments.services.reassessment import (
    reassessment_policy_for,
    reassessment_policy_update,
    renewal_start,
)
from assessments.views.common import capabilities
from core.errors import ServiceError
from core.pagination import CountedPaginator
from core.web import add_errors, add_messages, error_summary
from outbox.selectors import emails_for_organization
from scoring.registry import default_ruleset

from . import selectors
from .exports import changes_csv, csv_download
from .forms import ReassessmentPolicyForm, RescoreFilterForm
from .models import BatchStatus
from .services import rescore_batch_create

PAGE_SIZE = 50
# How often the batch page asks for progress while the batch runs (htmx).
POLL_SECONDS = 2


@member_page
def rescore(request: HttpRequest, org: OrgContext) -> HttpResponse:
    """Assessments scored with another ruleset than the one chosen (by default the one choice
    of `scoring.registry.default_ruleset`, the newest), filtered; one button rescores all of
    them."""
    rulesets = selectors.rulesets_newest_first(organization=org.organization)
    data = request.POST if request.method == "POST" else (request.GET or None)
    form = RescoreFilterForm(data, ruleset_keys=[r.key for r in rulesets])
    chosen = form.cleaned_data.get("ruleset") if form.is_bound and form.is_valid() else ""
    ruleset = next((r for r in rulesets if r.key == chosen), None) or default_ruleset(rulesets)
    filters = form.filters()
    errors: list[str] = []
    status = 200
    if request.method == "POST" and ruleset is not None:
        org.require(Capability.EDIT_ASSESSMENT)
        try:
            batch = rescore_batch_create(
                member=org, ruleset_key=ruleset.key, filters=filters, channel=Channel.WEB
            )
        except ServiceError as error:
            errors, status = error.messages, error.status_code
        else:
            return redirect("portfolio:batch", batch_id=batch.pk)
    candidates = (
        selectors.rescore_candidates(organization=org.organization, ruleset=ruleset, **filters)
        if ruleset is not None
        else None
    )
    # A page of them, counted from the cache (a new ruleset makes the whole portfolio a
    # candidate: the page must not read every one). Scoring moves the assessments' version, a
    # rename the vendors' (the filter searches their names).
    if candidates is None:  # no ruleset loaded yet: nothing to list
        page = Paginator([], PAGE_SIZE).get_page(1)
    else:
        version = (
            assessments_changed_at(organization=org.organization),
            vendors_changed_at(organization=org.organization),
        )
        page = CountedPaginator(candidates, PAGE_SIZE, version=version).get_page(
            request.GET.get("page")
        )
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "portfolio/rescore.html",
        {
            "org": org,
            "can": capabilities(org),
            "form": form,
            "ruleset": ruleset,
            "page": page,
            "filtered": any(filters.values()),
            "query_without_page": query.urlencode(),
            "errors": errors,
            "batches": selectors.rescore_batches_for(organization=org.organization)[:10],
        },
        status=status,
    )


@member_page
def batch(request: HttpRequest, org: OrgContext, batch_id: int) -> HttpResponse:
    rescore_batch = selectors.rescore_batch_get(organization=org.organization, batch_id=batch_id)
    running = rescore_batch.status in (BatchStatus.QUEUED, BatchStatus.RUNNING)
    if request.htmx and request.GET.get("status") not in (None, rescore_batch.status):
        # The batch finished since the page was drawn: draw it again, with its impact.
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    page, worse = (
        (Paginator([], PAGE_SIZE).get_page(1), 0)
        if running
        else selectors.batch_changes_page(
            batch=rescore_batch, number=request.GET.get("page"), per_page=PAGE_SIZE
        )
    )
    return render(
        request,
        "portfolio/batch.html",
        {
            "org": org,
            "batch": rescore_batch,
            "progress": selectors.batch_progress(batch=rescore_batch),
            "poll_interval": POLL_SECONDS if running else None,
            "page": page,
            "worse": worse,
            "failures": [] if running else selectors.batch_failures(batch=rescore_batch),
        },
    )


@member_page
def batch_changes_csv(request: HttpRequest, org: OrgContext, batch_id: int) -> HttpResponse:
    rescore_batch = selectors.rescore_batch_get(organization=org.organization, batch_id=batch_id)
    return csv_download(rescore_batch.pk, changes_csv(selectors.batch_changes(batch=rescore_batch)))


@member_page(capability=Capability.MANAGE_POLICY)
def policy(request: HttpRequest, org: OrgContext) -> HttpResponse:
    current = reassessment_policy_for(organization=org.organization)
    initial = {tier: current.days_for(tier) for tier in ("critical", "high", "medium", "low")}
    form = ReassessmentPolicyForm(request.POST or None, initial=initial)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                reassessment_policy_update(member=org, days=form.cleaned_data, channel=Channel.WEB)
            except ServiceError as error:
                add_errors(form, error)
            else:
                messages.success(request, _("The reassessment policy is saved."))
                return redirect("portfolio:policy")
        status = 400
    context = {
        "org": org,
        "form": form,
        "policy": current,
        "error_summary": error_summary(form) if form.is_bound else [],
    }
    return render(request, "portfolio/policy.html", context, status=status)


@member_page(capability=Capability.EDIT_ASSESSMENT)
@require_POST
def reassess(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    """Start the vendor's next assessment now, or record a configuration change they reported."""
    assessment = assessment_get(organization=org.organization, assessment_id=assessment_id)
    form = ReassessForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose what changed, and keep the note short."))
        return redirect("assessments:detail", assessment.pk)
    changes = form.cleaned_data["changes"]
    try:
        renewal = renewal_start(
            assessment=assessment,
            reason=RenewalReason.CONFIGURATION_CHANGE if changes else RenewalReason.DUE,
            changes=changes,
            note=form.cleaned_data["note"],
            member=org,
            channel=Channel.WEB,
        )
    except ServiceError as error:
        add_messages(request, error)
        return redirect("assessments:detail", assessment.pk)
    messages.success(request, _("The reassessment is open, with the last answers filled in."))
    return redirect("assessments:detail", renewal.pk)


@member_page(capability=Capability.MANAGE_POLICY)
def outbox(request: HttpRequest, org: OrgContext) -> HttpResponse:
    emails = emails_for_organization(organization=org.organization)
    page = Paginator(emails, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "portfolio/outbox.html", {"org": org, "page": page})
