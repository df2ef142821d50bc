"""What the member pages and the portal pages of workbooks share: the download response, the
links to both languages' workbooks, and one upload handled the same way for both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import translation

from assessments.answering import Answerer
from core.errors import ServiceError
from core.web import add_errors

from .forms import WorkbookUploadForm
from .layout import CONTENT_TYPE
from .services import (
    CellError,
    ExportedWorkbook,
    ImportResult,
    WorkbookInvalid,
    workbook_import,
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
