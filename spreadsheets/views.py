"""Member pages: an assessment's questionnaire workbook (download and upload) and the exports
(an assessment's findings, the portfolio) as CSV or .xlsx."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments.answering import Answerer
from assessments.views.common import assessment_for, assessment_tabs, page_language

from . import exports, services
from .web import (
    require_language,
    workbook_page,
    workbook_response,
)


@member_page(capability=Capability.EDIT_ASSESSMENT)
def workbook(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    """The workbook of an assessment: download it in either language, upload it filled."""
    assessment = assessment_for(org, assessment_id)
    return workbook_page(
        request,
        Answerer(assessment=assessment, member=org),
        language=page_language(),
        template="spreadsheets/workbook.html",
        context={
            "org": org,
            "assessment": assessment,
            "questionnaire": assessment.questionnaire.spec,
            **assessment_tabs(org, "workbook"),
        },
        imported_url=reverse("assessments:detail", args=[assessment.pk]),
        download_url=lambda language: reverse(
            "spreadsheets:workbook_download", args=[assessment.pk, language]
        ),
    )


@member_page(capability=Capability.EDIT_ASSESSMENT)
def workbook_download(
    request: HttpRequest, org: OrgContext, assessment_id: int, language: str
) -> HttpResponse:
    assessment = assessment_for(org, assessment_id)
    exported = services.workbook_export(
        answerer=Answerer(assessment=assessment, member=org), language=require_language(language)
    )
    return workbook_response(exported)


@member_page
def findings_export(
    request: HttpRequest, org: OrgContext, assessment_id: int, file_format: str
) -> HttpResponse:
    table = exports.findings_table(
        assessment=assessment_for(org, assessment_id),
        language=page_language(),
        zone=org.organization.time_zone,
    )
    return exports.export_response(table, file_format)


@member_page
def portfolio_export(request: HttpRequest, org: OrgContext, file_format: str) -> HttpResponse:
    table = exports.portfolio_table(
        organization=org.organization, language=page_language(), zone=org.organization.time_zone
    )
    return exports.export_response(table, file_format)
