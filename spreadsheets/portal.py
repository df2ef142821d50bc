"""The vendor portal's workbook page: download the vendor's sections as a workbook, upload it
filled. Mounted under /v/<token>/ beside the portal's other pages, through the same access
helper (`portal_view`): an unknown token is the portal's 404, the page is in the link's
language and the buyer's section never appears."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from assessments.answering import Answerer
from assessments.portal.access import Portal, portal_view
from assessments.portal.common import portal_context

from . import services
from .web import require_language, workbook_page, workbook_response


def _answerer(portal: Portal) -> Answerer:
    return Answerer(assessment=portal.assessment, vendor_link=portal.link)


@portal_view
def workbook(request: HttpRequest, portal: Portal) -> HttpResponse:
    return workbook_page(
        request,
        _answerer(portal),
        language=portal.language,
        template="spreadsheets/portal_workbook.html",
        context=portal_context(portal),
        imported_url=reverse("portal:landing", args=[portal.token]),
        download_url=lambda language: reverse(
            "portal_workbook:download", args=[portal.token, language]
        ),
    )


@portal_view
def workbook_download(request: HttpRequest, portal: Portal, language: str) -> HttpResponse:
    exported = services.workbook_export(
        answerer=_answerer(portal), language=require_language(language)
    )
    return workbook_response(exported)
