"""What the member pages of assessments share: access to an assessment, the header's tabs,
list rows, polling."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.paginator import Page
from django.http import HttpRequest
from django.utils import translation

from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.pagination import CountedPaginator

from .. import selectors
from ..models import CLOSED_STATUSES, OPEN_STATUSES, Assessment, AssessmentStatus  # noqa: F401

PAGE_SIZE = 25
# How often (seconds) an open page asks whether the vendor or the worker has moved on.
POLL_WHILE_ANSWERING = 10
POLL_WHILE_SCORING = 2


def page_language() -> str:
    """The language of the page being drawn (the member's, or the browser's choice)."""
    return translation.get_language() or settings.LANGUAGE_CODE


def vendor_search(request: HttpRequest) -> str:
    """A list's search by vendor name (`?q=`), as its query can take it: at most 200
    characters and no NUL (PostgreSQL refuses one in a query's text, a 500; no name holds one)."""
    return request.GET.get("q", "").replace("\x00", "").strip()[:200]


def vendors_page(org: OrgContext, query: str, number: object, *, per_page: int) -> Page:
    """A page of the organization's vendors by name, those whose name contains `query` when
    given; counted from the cache (a rename or a new vendor moves its version)."""
    vendors = selectors.vendors_for(organization=org.organization).order_by("name")
    if query:
        vendors = vendors.filter(name__icontains=query)
    version = selectors.vendors_changed_at(organization=org.organization)
    return CountedPaginator(vendors, per_page, version=version).get_page(number)


def capabilities(org: OrgContext) -> dict[str, bool]:
    """`{{ can.edit_assessment }}` in templates: the member's role, asked once per page."""
    return {capability: org.can(capability) for capability in Capability.values}


def assessment_tabs(org: OrgContext, current: str) -> dict[str, Any]:
    """The assessment pages' shared header: which tab is current, what the member may do."""
    return {"tab": current, "can": capabilities(org)}


def assessment_for(org: OrgContext, assessment_id: int) -> Assessment:
    return selectors.assessment_get(organization=org.organization, assessment_id=assessment_id)


def poll_interval(assessment: Assessment) -> int | None:
    if assessment.status in (AssessmentStatus.SENT, AssessmentStatus.CHANGES_REQUESTED):
        return POLL_WHILE_ANSWERING
    if assessment.status == AssessmentStatus.SUBMITTED:
        return POLL_WHILE_SCORING
    return None
