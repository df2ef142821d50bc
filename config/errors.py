"""Error pages Django's own handlers cannot tell apart: a body refused for its size is a 413 that
says so (Django reports it as a 400, "bad request")."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.views import defaults


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        limits = {
            "evidence_limit": settings.EVIDENCE_MAX_BYTES,
            "workbook_limit": settings.WORKBOOK_MAX_BYTES,
        }
        context = {name: filesizeformat(size) for name, size in limits.items()}
        return render(request, "413.html", context, status=413)
    return defaults.bad_request(request, exception)
