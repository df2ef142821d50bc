"""The dashboard (assessments by urgency, with counts by status and tier) and the vendors."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _

from accounts.decorators import member_page
from accounts.tenancy import OrgContext
from core.errors import ServiceError
from core.web import add_errors, error_summary

from .. import forms as web_forms
from .. import selectors
from ..models import AssessmentStatus, Channel, RiskTier, overdue
from ..services import vendors as vendor_services
from .common import (
    PAGE_SIZE,
    capabilities,
    vendor_search,
    vendors_page,
)


@member_page
def dashboard(request: HttpRequest, org: OrgContext) -> HttpResponse:
    today = timezone.localdate()
    form = web_forms.DashboardFilterForm(request.GET or None)
    filters = form.filters() if request.GET else {}
    assessments = selectors.assessments_for(organization=org.organization)
    if query := filters.get("q", "").strip():
        assessments = assessments.filter(vendor__name__icontains=query)
    if status := filters.get("status"):
        assessments = assessments.filter(status=status)
    if tier := filters.get("tier"):
        assessments = (
            assessments.filter(risk_tier="")
            if tier == web_forms.NOT_SCORED
            else assessments.filter(risk_tier=tier)
        )
    if filters.get("overdue"):
        assessments = assessments.filter(overdue(today))
    # Overdue first, then what is still in progress, then what is signed off; by due date.
    # Read stage by stage through an index, and counted from the cache: the page costs the
    # same for 100 assessments or 100,000, on page 1 or page 1,000.
    changed_at = selectors.assessments_changed_at(organization=org.organization)
    # A search by vendor name counts what the vendors are called now: a rename moves it too.
    version = (
        (changed_at, selectors.vendors_changed_at(organization=org.organization))
        if query
        else changed_at
    )
    ordered = selectors.UrgencyOrdered(
        selectors.list_rows(assessments), today=today, version=version
    )
    page = Paginator(ordered, PAGE_SIZE).get_page(request.GET.get("page"))
    counts = selectors.portfolio_counts(
        organization=org.organization, today=today, changed_at=changed_at
    )
    by_status, by_tier, overdue_count = counts["by_status"], counts["by_tier"], counts["overdue"]
    query_without_page = urlencode(
        [(key, v) for key, values in request.GET.lists() if key != "page" for v in values]
    )
    return render(
        request,
        "assessments/dashboard.html",
        {
            "org": org,
            "can": capabilities(org),
            "form": form,
            "page": page,
            # A badge per assessment whose vendor answered a question and waits for a member.
            "threads_waiting": selectors.threads_awaiting_members(
                organization=org.organization, assessment_ids=[a.pk for a in page]
            ),
            "filtered": bool(filters),
            "query_without_page": query_without_page,
            "status_counts": [
                {"value": value, "label": label, "count": by_status.get(value, 0)}
                for value, label in AssessmentStatus.choices
            ],
            "tier_counts": [
                {"value": value, "label": label, "count": by_tier.get(value, 0)}
                for value, label in RiskTier.choices
            ],
            "overdue_count": overdue_count,
            "total": sum(by_status.values()),
        },
    )


@member_page
def vendor_list(request: HttpRequest, org: OrgContext) -> HttpResponse:
    query = vendor_search(request)
    # A page of vendors by name (the unique index), counted from the cache; their assessments
    # are counted for this page only.
    page = vendors_page(org, query, request.GET.get("page"), per_page=PAGE_SIZE)
    counts = selectors.vendor_assessment_counts(
        organization=org.organization, vendors=list(page.object_list)
    )
    for vendor in page.object_list:
        vendor.assessment_count = counts[vendor.pk]["total"]
        vendor.open_count = counts[vendor.pk]["open"]
    return render(
        request,
        "assessments/vendor_list.html",
        {"org": org, "can": capabilities(org), "vendors": page.object_list, "page": page,
         "query": query, "query_without_page": urlencode({"q": query} if query else {})},
    )  # fmt: skip


@member_page(capability="edit_assessment")
def vendor_create(request: HttpRequest, org: OrgContext) -> HttpResponse:
    form = web_forms.VendorForm(request.POST or None)
    then_assess = request.GET.get("then") == "assess" or request.POST.get("then") == "assess"
    if request.method == "POST" and form.is_valid():
        try:
            vendor = vendor_services.vendor_create(
                organization=org.organization,
                actor=org.user,
                channel=Channel.WEB,
                **form.cleaned_data,
            )
        except ServiceError as exc:
            add_errors(form, exc)
        else:
            messages.success(request, _("Vendor “%(name)s” added.") % {"name": vendor.name})
            if then_assess:
                return redirect(f"{reverse('assessments:create')}?vendor={vendor.pk}")
            return redirect("assessments:vendor_list")
    return render(
        request,
        "assessments/vendor_form.html",
        {
            "org": org,
            "form": form,
            "vendor": None,
            "then_assess": then_assess,
            "error_summary": error_summary(form),
        },
        status=400 if form.errors else 200,
    )


@member_page(capability="edit_assessment")
def vendor_edit(request: HttpRequest, org: OrgContext, vendor_id: int) -> HttpResponse:
    vendor = selectors.vendor_get(organization=org.organization, vendor_id=vendor_id)
    initial = {
        name: getattr(vendor, name)
        for name in ("name", "website", "contact_name", "contact_email", "notes")
    }
    form = web_forms.VendorForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        changed = {name: form.cleaned_data[name] for name in form.changed_data}
        try:
            if changed:
                vendor_services.vendor_update(
                    vendor=vendor, actor=org.user, channel=Channel.WEB, **changed
                )
        except ServiceError as exc:
            add_errors(form, exc)
        else:
            messages.success(request, _("Vendor “%(name)s” saved.") % {"name": vendor.name})
            return redirect("assessments:vendor_list")
    assessments = selectors.list_rows(
        selectors.assessments_for(organization=org.organization).filter(vendor=vendor)
    )
    return render(
        request,
        "assessments/vendor_form.html",
        {
            "org": org,
            "form": form,
            "vendor": vendor,
            "assessments": assessments,
            "error_summary": error_summary(form),
        },
        status=400 if form.errors else 200,
    )
