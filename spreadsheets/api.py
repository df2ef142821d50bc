"""REST endpoints of exports: an assessment's findings and the portfolio, as CSV or .xlsx.

Thin, like the other APIs: the organization is resolved by `OrganizationAPIView` (another
organization's assessment is a 404), the table is built by `exports` in the reader's language
(`language`, else the request's Accept-Language) and the organization's time zone.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.http import HttpResponseBase
from django.utils import translation
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.request import Request

from accounts.api import OrganizationAPIView
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments import selectors
from core.api.base import FirstRendererNegotiation, error_responses

from . import exports
from .layout import CONTENT_TYPE as XLSX_CONTENT_TYPE

LANGUAGE_PARAMETER = OpenApiParameter(
    "language",
    str,
    enum=[code for code, _name in settings.LANGUAGES],
    description="Language of the headers and labels (default: the request's Accept-Language).",
)
FILE_RESPONSES: dict[Any, Any] = {
    (200, "text/csv"): OpenApiResponse(OpenApiTypes.BINARY, description="CSV, UTF-8 with BOM."),
    (200, XLSX_CONTENT_TYPE): OpenApiResponse(OpenApiTypes.BINARY, description="A workbook."),
    **error_responses(400, 401, 403, 404),
}
FORMAT_NOTE = (
    " `file_format` is `csv` or `xlsx`. Dates are in the organization's time zone; every text "
    "that a spreadsheet could run as a formula is neutralised (a leading `'` in CSV, a text "
    "cell in the workbook)."
)


def _language(request: Request) -> str:
    language = request.query_params.get("language")
    if language is None:
        return translation.get_language() or settings.LANGUAGE_CODE
    if language not in dict(settings.LANGUAGES):
        raise exceptions.ValidationError({"language": [_("Use “en” or “zh-hant”.")]})
    return language


class FindingsExport(OrganizationAPIView):
    """The findings of an assessment's latest scoring run."""

    required_capability: ClassVar[dict[str, Any]] = {"GET": Capability.VIEW}
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        tags=["exports"],
        summary="Export an assessment's findings",
        description="The findings of the latest scoring run, one row per risk decision "
        "recorded on a finding (decision, justification, owner, expiry date); a finding "
        "without a decision has one row. Before scoring: the header row only." + FORMAT_NOTE,
        parameters=[LANGUAGE_PARAMETER],
        responses=FILE_RESPONSES,
    )
    def get(
        self, request: Request, org: OrgContext, assessment_id: int, file_format: str
    ) -> HttpResponseBase:
        assessment = selectors.assessment_get(
            organization=org.organization, assessment_id=assessment_id
        )
        table = exports.findings_table(
            assessment=assessment, language=_language(request), zone=org.organization.time_zone
        )
        return exports.export_response(table, file_format)


class PortfolioExport(OrganizationAPIView):
    """Every assessment of the caller's organization."""

    required_capability: ClassVar[dict[str, Any]] = {"GET": Capability.VIEW}
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        tags=["exports"],
        summary="Export the portfolio",
        description="One row per assessment, by vendor: questionnaire, status, risk tier and "
        "score, the ruleset of the latest scoring, due date and whether it is overdue. "
        "Streamed: any number of assessments." + FORMAT_NOTE,
        parameters=[LANGUAGE_PARAMETER],
        responses=FILE_RESPONSES,
    )
    def get(self, request: Request, org: OrgContext, file_format: str) -> HttpResponseBase:
        table = exports.portfolio_table(
            organization=org.organization,
            language=_language(request),
            zone=org.organization.time_zone,
        )
        return exports.export_response(table, file_format)
