"""Member pages: an assessment's questionnaire workbook (download and upload), the exports
(an assessment's findings, the portfolio) as CSV or .xlsx, and a questionnaire imported from
a spreadsheet (upload, then the column mapping)."""

from __future__ import annotations

from typing import Any

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
from core.errors import ServiceError
from core.web import add_errors, add_messages, error_summary
from scoring.catalogue_files.problems import CatalogueInvalid

from . import exports, services
from .catalogue_import.mapping import column_choices, sample_rows, suggest_mapping
from .forms import ColumnMappingForm, QuestionnaireSpreadsheetForm, preset_choices
from .reading import CellError, WorkbookInvalid
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


# -- a questionnaire from a spreadsheet (issue 24) -------------------------------------------

# Who may import a questionnaire: whoever may write the organization's catalogues.
CATALOGUE_IMPORT_CAPABILITY = Capability.MANAGE_CATALOGUES


@member_page(capability=CATALOGUE_IMPORT_CAPABILITY)
def catalogue_import(request: HttpRequest, org: OrgContext) -> HttpResponse:
    """Step one: upload a spreadsheet with one question per row (checked, kept for step two)."""
    form = QuestionnaireSpreadsheetForm()
    status = 200
    if request.method == "POST":
        form = QuestionnaireSpreadsheetForm(request.POST, request.FILES)
        status = 400
        if form.is_valid():
            try:
                pending = services.catalogue_upload_keep(
                    organization_id=org.organization.pk,
                    user_id=org.user.pk,
                    upload=form.cleaned_data["workbook"],
                    preset=form.cleaned_data["preset"],
                )
            except ServiceError as exc:
                add_errors(form, exc)
            else:
                return redirect("spreadsheets:catalogue_import_mapping", token=pending.token)
    return render(
        request,
        "spreadsheets/catalogue_import.html",
        {"org": org, "form": form, "error_summary": error_summary(form)},
        status=status,
    )


@member_page(capability=CATALOGUE_IMPORT_CAPABILITY)
def catalogue_import_mapping(request: HttpRequest, org: OrgContext, token: str) -> HttpResponse:
    """Step two: which column holds what (pre-filled from the layout), with the first rows to
    see it by; on submit, the questionnaire becomes a draft, or every bad row is listed."""
    pending = services.catalogue_upload_get(
        organization_id=org.organization.pk, user_id=org.user.pk, token=token
    )
    if pending is None:
        messages.error(
            request, _("The uploaded spreadsheet is no longer kept here. Upload it again.")
        )
        return redirect("spreadsheets:catalogue_import")
    try:
        tables = pending.tables()
    except ServiceError as exc:  # checked on upload; a changed limit may refuse it now
        add_messages(request, exc)
        return redirect("spreadsheets:catalogue_import")
    chosen = request.GET.get("preset", pending.preset)
    # A preset named (or none: NO_PRESET matches none, so the headers' names are used).
    suggested = suggest_mapping(tables, chosen)
    form = ColumnMappingForm(tables=tables, suggested=suggested)
    cells: list[CellError] = []
    problems: list[dict[str, Any]] = []
    status = 200
    if request.method == "POST":
        form = ColumnMappingForm(request.POST, tables=tables, suggested=suggested)
        status = 400
        if form.is_valid():
            mapping = form.mapping()
            try:
                draft = services.catalogue_draft_from_upload(
                    context=org,
                    pending=pending,
                    mapping=mapping,
                    slug=form.slug_value(),
                    title_en=form.cleaned_data["title_en"],
                    title_zh=form.cleaned_data["title_zh"],
                )
            except WorkbookInvalid as exc:
                cells = exc.cells
            except CatalogueInvalid as invalid:
                problems = [problem.as_dict() for problem in invalid.problems]
            except ServiceError as exc:
                add_errors(form, exc)
            else:
                messages.success(
                    request,
                    _("Questionnaire “%(title)s” imported from %(name)s as a draft.")
                    % {"title": form.cleaned_data["title_en"], "name": pending.file_name},
                )
                return redirect("portfolio:catalogue", draft.ruleset.pk)
    shown = suggested
    return render(
        request,
        "spreadsheets/catalogue_mapping.html",
        {
            "org": org,
            "form": form,
            "pending": pending,
            "cells": cells,
            "problems": problems,
            "samples": sample_rows(tables, shown),
            "headers": column_choices(tables.sheet(shown.sheets[0]), shown.header_row),
            "preset_choices": preset_choices(),
            "preset": chosen,
            "error_summary": error_summary(form),
        },
        status=status,
    )
