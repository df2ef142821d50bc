"""What the member pages and the portal pages of workbooks share: the download response, the
links to both languages' workbooks, and the workbook page itself (one upload handled the same
way for both)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import translation
from django.utils.translation import gettext as _

from assessments.answering import Answerer
from core.errors import ServiceError
from core.web import add_errors, error_summary

from .forms import WorkbookUploadForm
from .layout import CONTENT_TYPE
from .services import (
    CellError,
    ExportedWorkbook,
    ImportResult,
    WorkbookInvalid,
    workbook_editable_codes,
    workbook_import,
    workbook_sections,
)


def require_language(language: str) -> str:
    if language not in dict(settings.LANGUAGES):
        raise Http404
    return language


def workbook_response(exported: ExportedWorkbook) -> HttpResponse:
    response = HttpResponse(exported.content, content_type=CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{exported.filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response


def download_links(url_for: Callable[[str], str]) -> list[dict[str, str]]:
    """A link per language, each named in its own language ("English", "繁體中文")."""
    links = []
    for code, _name in settings.LANGUAGES:
        info = translation.get_language_info(code)
        links.append({"language": code, "name": info["name_local"], "url": url_for(code)})
    return links


@dataclass
class Upload:
    """An upload's outcome: the form (with any refusal of the file beside its field), the
    cells refused, and the status of the page that shows them."""

    form: WorkbookUploadForm
    cells: list[CellError] = field(default_factory=list)
    status: int = 200
    result: ImportResult | None = None


def handle_upload(request: HttpRequest, answerer: Answerer, language: str) -> Upload:
    form = WorkbookUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return Upload(form=form, status=400)
    try:
        result = workbook_import(
            answerer=answerer, upload=form.cleaned_data["workbook"], language=language
        )
    except WorkbookInvalid as exc:
        return Upload(form=form, cells=exc.cells, status=exc.status_code)
    except ServiceError as exc:
        add_errors(form, exc)  # a ForbiddenError is re-raised: the 403 page
        return Upload(form=form, status=exc.status_code)
    return Upload(form=form, result=result)


def page_context(upload: Upload | None) -> dict[str, Any]:
    form = upload.form if upload is not None else WorkbookUploadForm()
    return {"form": form, "cells": upload.cells if upload is not None else []}


def workbook_page(
    request: HttpRequest,
    answerer: Answerer,
    *,
    language: str,
    template: str,
    context: dict[str, Any],
    imported_url: str,
    download_url: Callable[[str], str],
) -> HttpResponse:
    """The workbook page of the portal and of the member pages: the downloads, and the upload
    (imported: a message and a redirect to `imported_url`; refused: the page again, with every
    problem and the refusal's status)."""
    upload = None
    if request.method == "POST":
        upload = handle_upload(request, answerer, language)
        if upload.result is not None:
            messages.success(
                request,
                _("Workbook “%(name)s” imported: %(count)s answers changed.")
                % {"name": upload.result.file_name, "count": len(upload.result.changed)},
            )
            return redirect(imported_url)
    sections = workbook_sections(answerer)
    shown = page_context(upload)
    return render(
        request,
        template,
        {
            **context,
            **shown,
            "sections": sections,
            "error_summary": error_summary(shown["form"]),
            "can_upload": bool(workbook_editable_codes(answerer, sections)),
            "downloads": download_links(download_url),
        },
        status=upload.status if upload is not None else 200,
    )
