"""REST endpoints of rescore batches (`/api/v1/rescore-batches/`).

Thin like every endpoint: the input serializer checks the shape, the selectors find the batch
within the caller's organization (another organization's batch is a 404), one service acts.
"""

from __future__ import annotations

from types import SimpleNamespace

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.api import OrganizationAPIView
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments.models import Channel
from core.api.base import FirstRendererNegotiation, error_responses, invalid_input

from . import selectors, services
from .exports import changes_csv, csv_download
from .serializers import (
    RescoreBatchInputSerializer,
    RescoreBatchQueuedSerializer,
    RescoreBatchSerializer,
    RescoreBatchSummarySerializer,
)


class RescoreBatchList(OrganizationAPIView):
    """Rescore batches of the organization: the newest first, or a new one."""

    required_capability = {"GET": Capability.VIEW, "POST": Capability.EDIT_ASSESSMENT}
    serializer_class = RescoreBatchSummarySerializer

    @extend_schema(
        tags=["portfolio"],
        summary="Rescore batches of your organization",
        responses={200: RescoreBatchSummarySerializer(many=True), **error_responses(401, 403)},
    )
    def get(self, request: Request, org: OrgContext) -> Response:
        batches = selectors.rescore_batches_for(organization=org.organization)
        page = self.paginate_queryset(batches)
        return self.get_paginated_response(RescoreBatchSummarySerializer(page, many=True).data)

    @extend_schema(
        tags=["portfolio"],
        summary="Rescore assessments with a ruleset",
        request=RescoreBatchInputSerializer,
        responses={
            202: RescoreBatchQueuedSerializer,
            **error_responses(401, 403),
            **invalid_input(
                "`ruleset`: no published ruleset has this key; `assessments`: ids that are "
                "not assessments of your organization, or whose questionnaire the ruleset "
                "does not score."
            ),
        },
    )
    def post(self, request: Request, org: OrgContext) -> Response:
        serializer = RescoreBatchInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        batch = services.rescore_batch_create(
            member=org,
            ruleset_key=data["ruleset"],
            assessment_ids=data.get("assessments"),
            channel=Channel.API,
        )
        body = RescoreBatchQueuedSerializer({"id": batch.pk, "status": batch.status}).data
        return Response(body, status=status.HTTP_202_ACCEPTED)


class RescoreBatchDetail(OrganizationAPIView):
    """A batch's progress and its impact."""

    required_capability = {"GET": Capability.VIEW}

    @extend_schema(
        tags=["portfolio"],
        summary="Progress and impact of a rescore batch",
        responses={200: RescoreBatchSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request: Request, org: OrgContext, batch_id: int) -> Response:
        batch = selectors.rescore_batch_get(organization=org.organization, batch_id=batch_id)
        progress = selectors.batch_progress(batch=batch)
        body = SimpleNamespace(
            id=batch.pk,
            ruleset=batch.ruleset,
            status=batch.status,
            total=progress.total,
            created_at=batch.created_at,
            finished_at=batch.finished_at,
            done=progress.finished,
            failed=progress.failed,
            changes=selectors.batch_changes(batch=batch),
            failures=selectors.batch_failures(batch=batch),
        )
        return Response(RescoreBatchSerializer(body).data)


class RescoreBatchChangesCsv(OrganizationAPIView):
    """The batch's changes as CSV."""

    required_capability = {"GET": Capability.VIEW}
    # A download: the CSV whatever the Accept header (`text/csv` included), errors in JSON.
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        tags=["portfolio"],
        summary="A rescore batch's changes as CSV",
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR),
            **error_responses(401, 403, 404),
        },
    )
    def get(self, request: Request, org: OrgContext, batch_id: int) -> HttpResponse:
        batch = selectors.rescore_batch_get(organization=org.organization, batch_id=batch_id)
        return csv_download(batch.pk, changes_csv(selectors.batch_changes(batch=batch)))
