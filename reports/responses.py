"""The HTTP answer that the pages and the API share: a report's stored PDF."""

from __future__ import annotations

from django.http import HttpResponse

from . import services
from .models import GeneratedDocument


def pdf_response(report: GeneratedDocument) -> HttpResponse:
    """A ready report's stored PDF (of either kind) as an attachment; 409 until ready, and when
    the file no longer matches its SHA-256 (`services.report_file`)."""
    response = HttpResponse(services.report_file(report=report), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{report.filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response
