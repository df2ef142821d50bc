"""REST endpoints for published questionnaires (`/api/v1/questionnaires/`).

An organization sees the shipped questionnaires, its own published ones and those shared with
it (`questionnaires.selectors.questionnaires_visible_to`); another organization's custom
questionnaire is a 404.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.api import OrganizationAPIView
from accounts.models import Organization
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.api.base import error_responses

from .models import QuestionnaireVersion
from .selectors import questionnaires_visible_to
from .serializers import QuestionnaireSerializer
from .spec import version_key


def questionnaire_versions(organization: Organization) -> QuerySet[QuestionnaireVersion]:
    return questionnaires_visible_to(organization=organization).order_by("slug", "version")


def questionnaire_version_get(
    *, organization: Organization, slug: str, version: str | None = None
) -> QuestionnaireVersion:
    """The published version of `slug` the organization may see (its newest when `version` is
    None); 404 otherwise."""
    versions = list(questionnaire_versions(organization).filter(slug=slug))
    if version is not None:
        versions = [v for v in versions if v.version == version]
    if not versions:
        raise Http404
    return max(versions, key=lambda v: version_key(v.version))


class QuestionnaireList(OrganizationAPIView):
    """Published questionnaires."""

    required_capability = {"GET": Capability.VIEW}

    @extend_schema(
        tags=["questionnaires"],
        summary="Published questionnaires",
        description="Every published questionnaire version the organization can use (the "
        "shipped catalogue, its own, and those shared with it), with its sections, questions, "
        "options and show_if conditions.",
        responses={200: QuestionnaireSerializer(many=True), **error_responses(401, 403)},
    )
    def get(self, request: Request, org: OrgContext) -> Response:
        page = self.paginate_queryset(questionnaire_versions(org.organization))
        specs = [version.spec for version in page or []]
        return self.get_paginated_response(QuestionnaireSerializer(specs, many=True).data)


class QuestionnaireDetail(OrganizationAPIView):
    """One published questionnaire."""

    required_capability = {"GET": Capability.VIEW}

    @extend_schema(
        tags=["questionnaires"],
        summary="One questionnaire",
        description="The newest published version of the questionnaire, or the one `version` "
        "names.",
        parameters=[
            OpenApiParameter(
                "version",
                str,
                OpenApiParameter.QUERY,
                description='A published version, e.g. "1" (default: the newest).',
            )
        ],
        responses={200: QuestionnaireSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request: Request, org: OrgContext, slug: str) -> Response:
        version = request.query_params.get("version") or None
        questionnaire = questionnaire_version_get(
            organization=org.organization, slug=slug, version=version
        )
        return Response(QuestionnaireSerializer(questionnaire.spec).data)
