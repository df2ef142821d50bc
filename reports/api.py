"""REST endpoints for reports: request one (`POST assessments/{id}/reports/`), follow it
(`GET reports/{id}/`) and download it (`GET reports/{id}/download/`); the same for portfolio
reports (`portfolio-reports/`). Following and downloading are one pair of views for every
kind of generated document (`generated_document_views`).

Thin on purpose, like `assessments.api`: shape checks in an input serializer, lookups through
the selectors (another organization's object is a 404), one service call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.api import OrganizationAPIView
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments import selectors as assessment_selectors
from assessments.models import Channel
from core.api.base import (
    FirstRendererNegotiation,
    InputSerializer,
    error_responses,
    invalid_input,
)
from core.ids import MAX_ID

from . import selectors, services
from .models import GeneratedDocument, PortfolioKind, PortfolioReport, Report, ReportLanguage
from .responses import pdf_response


class ReportRequestInputSerializer(InputSerializer):
    language = serializers.ChoiceField(
        choices=ReportLanguage.choices, help_text="`en` or `zh-hant`."
    )
    run = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="Id of the scoring run to report on (default: the latest). Any past run "
        "can be reported as it was scored.",
    )


STATUS_DESCRIPTION = "`status` is queued, rendering, ready or failed (`error` says why)."
DOWNLOAD_DESCRIPTION = "The stored PDF (`Content-Disposition: attachment`); 409 until ready."
DOWNLOAD_RESPONSES: dict[Any, Any] = {
    (200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY),
    **error_responses(401, 403, 404, 409),
}


class GeneratedDocumentSerializer(serializers.ModelSerializer):
    """What every report's representation has: its SHA-256 and download address once ready."""

    sha256 = serializers.SerializerMethodField(help_text="SHA-256 of the PDF, once ready.")
    download = serializers.SerializerMethodField(help_text="Address of the PDF, once ready.")
    # The download endpoint's name, and its argument's.
    download_route: ClassVar[tuple[str, str]] = ("api:report-download", "report_id")

    def get_sha256(self, report: GeneratedDocument) -> str | None:
        return report.sha256 or None

    def get_download(self, report: GeneratedDocument) -> str | None:
        if not report.is_ready:
            return None
        name, argument = self.download_route
        path = reverse(name, kwargs={argument: report.pk})
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class GeneratedDocumentView(OrganizationAPIView):
    """One generated document (a report, a portfolio report), looked up in the caller's
    organization. `generated_document_views` makes the detail and download views of each kind,
    naming its serializer and its selector."""

    required_capability: ClassVar[dict[str, Any]] = {"GET": Capability.VIEW}
    document_serializer: ClassVar[type[GeneratedDocumentSerializer]]
    # The selector, called `(organization=..., report_id=...)`: another organization's is a 404.
    document_get: ClassVar[Callable[..., GeneratedDocument]]

    def document(self, org: OrgContext, url_kwargs: Mapping[str, Any]) -> GeneratedDocument:
        """The document the URL names (by the argument its download route takes)."""
        _route, argument = self.document_serializer.download_route
        return type(self).document_get(
            organization=org.organization, report_id=url_kwargs[argument]
        )


class GeneratedDocumentDetail(GeneratedDocumentView):
    """Its status, and its SHA-256 and download address once ready."""

    def get(self, request: Request, org: OrgContext, **url_kwargs: Any) -> Response:
        document = self.document(org, url_kwargs)
        return Response(self.document_serializer(document, context={"request": request}).data)


class GeneratedDocumentDownload(GeneratedDocumentView):
    """Its PDF once ready, byte for byte as generated."""

    content_negotiation_class = FirstRendererNegotiation

    def get(self, request: Request, org: OrgContext, **url_kwargs: Any) -> HttpResponse:
        return pdf_response(self.document(org, url_kwargs))


def generated_document_views(
    *,
    what: str,
    serializer: type[GeneratedDocumentSerializer],
    document_get: Callable[..., GeneratedDocument],
) -> tuple[type[GeneratedDocumentDetail], type[GeneratedDocumentDownload]]:
    """The detail and download views of one kind of generated document, with their schema
    (`what`: "report", "portfolio report"; the classes are named after it)."""
    name = what.title().replace(" ", "")
    attributes = {
        "__module__": __name__,
        "document_serializer": serializer,
        "document_get": staticmethod(document_get),
    }
    detail_doc = f"One {what}: its status, and its SHA-256 and download address once ready."
    detail = type(
        f"{name}Detail", (GeneratedDocumentDetail,), {**attributes, "__doc__": detail_doc}
    )
    download = type(
        f"{name}Download",
        (GeneratedDocumentDownload,),
        {**attributes, "__doc__": f"The PDF of a ready {what}, byte for byte as generated."},
    )
    detail_schema = extend_schema(
        tags=["reports"],
        summary=f"A {what}'s status",
        description=STATUS_DESCRIPTION,
        responses={200: serializer, **error_responses(401, 403, 404)},
    )
    download_schema = extend_schema(
        tags=["reports"],
        summary=f"Download a {what}",
        description=DOWNLOAD_DESCRIPTION,
        responses=DOWNLOAD_RESPONSES,
    )
    return detail_schema(detail), download_schema(download)


class ReportSerializer(GeneratedDocumentSerializer):
    assessment = serializers.IntegerField(source="assessment_id")
    run = serializers.IntegerField(source="run_id")
    ruleset = serializers.CharField(source="run.ruleset.key", help_text="slug@version")

    class Meta:
        model = Report
        fields = [
            "id",
            "number",
            "status",
            "language",
            "assessment",
            "run",
            "ruleset",
            "sha256",
            "size",
            "pages",
            "error",
            "created_at",
            "rendered_at",
            "download",
        ]
        read_only_fields = fields


class AssessmentReports(OrganizationAPIView):
    """Reports of one assessment."""

    required_capability: ClassVar[dict[str, Any]] = {"POST": services.REPORT_REQUEST_CAPABILITIES}

    @extend_schema(
        tags=["reports"],
        summary="Generate a PDF report",
        description="Queues the rendering (202) of a report of a scoring run (default: the "
        "latest) in English or Traditional Chinese. Follow it at `GET reports/{id}/`. "
        "Assessors, reviewers and owners.",
        request=ReportRequestInputSerializer,
        responses={
            202: ReportSerializer,
            **error_responses(401, 403, 404, 409),
            **invalid_input("`run`: no scoring run of this assessment has this id."),
        },
    )
    def post(self, request: Request, org: OrgContext, assessment_id: int) -> Response:
        assessment = assessment_selectors.assessment_get(
            organization=org.organization, assessment_id=assessment_id
        )
        serializer = ReportRequestInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        run = None
        if data.get("run") is not None:
            run = assessment_selectors.run_get(organization=org.organization, run_id=data["run"])
        report = services.report_request(
            assessment=assessment,
            run=run,
            language=data["language"],
            member=org,
            channel=Channel.API,
        )
        report = selectors.report_get(organization=org.organization, report_id=report.pk)
        return Response(
            ReportSerializer(report, context={"request": request}).data,
            status=status.HTTP_202_ACCEPTED,
        )


ReportDetail, ReportDownload = generated_document_views(
    what="report", serializer=ReportSerializer, document_get=selectors.report_get
)


# -- portfolio reports ---------------------------------------------------------------------


class PortfolioReportRequestInputSerializer(InputSerializer):
    language = serializers.ChoiceField(
        choices=ReportLanguage.choices, help_text="`en` or `zh-hant`."
    )
    kind = serializers.ChoiceField(
        choices=PortfolioKind.choices,
        required=False,
        default=PortfolioKind.ORGANIZATION,
        help_text="`organization` (default): the organization's vendors; `consultancy`: a "
        "consultancy's overview across its active clients (figures only).",
    )


class PortfolioReportSerializer(GeneratedDocumentSerializer):
    previous = serializers.SerializerMethodField(
        help_text="Number of the portfolio report the changes are counted from, if any."
    )
    download_route = ("api:portfolio-report-download", "portfolio_report_id")

    class Meta:
        model = PortfolioReport
        fields = [
            "id",
            "number",
            "kind",
            "status",
            "language",
            "previous",
            "sha256",
            "size",
            "pages",
            "error",
            "created_at",
            "rendered_at",
            "download",
        ]
        read_only_fields = fields

    def get_previous(self, report: PortfolioReport) -> str | None:
        return report.previous.number if report.previous is not None else None


class PortfolioReports(OrganizationAPIView):
    """Request a portfolio report of the organization."""

    required_capability: ClassVar[dict[str, Any]] = {"POST": Capability.VIEW}

    @extend_schema(
        tags=["reports"],
        summary="Generate a portfolio report",
        description="Queues the rendering (202) of a PDF across the organization's vendors — "
        "tiers, open findings by severity, decisions and their expiries, overdue and due-soon "
        "items, changes since the previous one — or, for a consultancy, its overview across "
        "its clients (403 in an organization that is no consultancy). Follow it at "
        "`GET portfolio-reports/{id}/`. Every member.",
        request=PortfolioReportRequestInputSerializer,
        responses={
            202: PortfolioReportSerializer,
            **error_responses(400, 401, 403),
        },
    )
    def post(self, request: Request, org: OrgContext) -> Response:
        serializer = PortfolioReportRequestInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        report = services.portfolio_report_request(
            member=org,
            language=serializer.validated_data["language"],
            kind=serializer.validated_data["kind"],
            channel=Channel.API,
        )
        return Response(
            PortfolioReportSerializer(report, context={"request": request}).data,
            status=status.HTTP_202_ACCEPTED,
        )


PortfolioReportDetail, PortfolioReportDownload = generated_document_views(
    what="portfolio report",
    serializer=PortfolioReportSerializer,
    document_get=selectors.portfolio_report_get,
)
