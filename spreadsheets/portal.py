"""The vendor portal's workbook page: download the vendor's sections as a workbook, upload it
filled. Mounted under /v/<token>/ beside the portal's other pages, through the same access
helper (`portal_view`): an unknown token is the portal's 404, the page is in the link's
language and the buyer's section never appears."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from assessments.answering import Answerer
from assessments.portal.access import Portal, portal_view
from assessments.portal.common import portal_context
from core.web import error_summary

from . import services
from .web import download_links, handle_upload, page_context, require_language, workbook_response


def _answerer(portal: Portal) -> Answerer:
    return Answerer(assessment=portal.assessment, vendor_link=portal.link)


@portal_view
def workbook(request: HttpRequest, portal: Portal) -> HttpResponse:
    answerer = _answerer(portal)
    upload = None
    if request.method == "POST":
        upload = handle_upload(request, answerer, portal.language)
        if upload.result is not None:
            messages.success(
                request,
                _("Workbook “%(name)s” imported: %(count)s answers changed.")
                % {"name": upload.result.file_name, "count": len(upload.result.changed)},
            )
            return redirect("portal:landing", portal.token)
    sections = services.workbook_sections(answerer)
    extra = page_context(upload)
    return render(
        request,
        "spreadsheets/portal_workbook.html",
        portal_context(
            portal,
            **extra,
            error_summary=error_summary(extra["form"]),
            can_upload=bool(services.workbook_editable_codes(answerer, sections)),
            downloads=download_links(
                lambda language: reverse("portal_workbook:download", args=[portal.token, language])
            ),
        ),
        status=upload.status if upload is not None else 200,
    )


@portal_view
def workbook_download(request: HttpRequest, portal: Portal, language: str) -> HttpResponse:
    exported = services.workbook_export(
        answerer=_answerer(portal), language=require_language(language)
    )
    return workbook_response(exported)
