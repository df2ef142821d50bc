"""Member pages: an assessment's questionnaire workbook (download and upload) and the exports
(an assessment's findings, the portfolio) as CSV or .xlsx."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments.answering import Answerer
from assessments.views.common import assessment_for, assessment_tabs, page_language
from core.web import error_summary

from . import exports, services
from .web import (
    download_links,
    handle_upload,
    page_context,
    require_language,
    workbook_response,
)


@member_page(capability=Capability.EDIT_ASSESSMENT)
def workbook(request: HttpRequest, org: OrgContext, assessment_id: int) -> HttpResponse:
    """The workbook of an assessment: download it in either language, upload it filled."""
    assessment = assessment_for(org, assessment_id)
    answerer = Answerer(assessment=assessment, member=org)
    upload = None
    if request.method == "POST":
        upload = handle_upload(request, answerer, page_language())
        if upload.result is not None:
            messages.success(
                request,
                _("Workbook “%(name)s” imported: %(count)s answers changed.")
                % {"name": upload.result.file_name, "count": len(upload.result.changed)},
            )
            return redirect("assessments:detail", assessment.pk)
    sections = services.workbook_sections(answerer)
    context = {
        "org": org,
        "assessment": assessment,
        "questionnaire": assessment.questionnaire.spec,
        **assessment_tabs(org, "workbook"),
        **page_context(upload),
        "sections": sections,
        "can_upload": bool(services.workbook_editable_codes(answerer, sections)),
        "downloads": download_links(
            lambda language: reverse(
                "spreadsheets:workbook_download", args=[assessment.pk, language]
            )
        ),
    }
    context["error_summary"] = error_summary(context["form"])
    return render(
        request,
        "spreadsheets/workbook.html",
        context,
        status=upload.status if upload is not None else 200,
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
