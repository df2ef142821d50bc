"""REST endpoints for vendors and assessments (`/api/v1/vendors/`, `/api/v1/assessments/`).

Thin on purpose: each handler checks the request's shape with an input serializer, looks
objects up through the selectors (another organization's object is a 404), calls one service
and presents the result. Errors leave through `core.api.base.exception_handler`.
"""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db.models import Prefetch, prefetch_related_objects
from django.http import Http404
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.api import OrganizationAPIView
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.api.base import ErrorsSerializer, StrictFilterSet, error_responses, invalid_input
from core.ids import MAX_ID
from questionnaires.spec import Text
from scoring.models import Rule

from . import selectors
from .models import Assessment, AssessmentStatus, Channel, RiskTier, ScoringRun
from .serializers import (
    AnswersInputSerializer,
    AnswersSerializer,
    AssessmentCreateInputSerializer,
    AssessmentDetailSerializer,
    AssessmentSerializer,
    AuditEventSerializer,
    EvidenceInputSerializer,
    EvidenceSerializer,
    ReviewInputSerializer,
    ReviewSerializer,
    RunDetailSerializer,
    RunQueuedSerializer,
    VendorInputSerializer,
    VendorSerializer,
    answers_by_code,
    comments_by_code,
)
from .services.answers import answers_save, assessment_create
from .services.evidence import evidence_add
from .services.reviews import review_record
from .services.submission import assessment_rescore, assessment_submit
from .services.vendors import vendor_create, vendor_update

# -- vendors -------------------------------------------------------------------------------


class VendorList(OrganizationAPIView):
    """The vendors of the caller's organization."""

    required_capability = {"GET": Capability.VIEW, "POST": Capability.EDIT_ASSESSMENT}
    cursor_ordering = ("name",)  # unique within the organization

    def count_version(self, request: Request) -> object:
        return selectors.vendors_changed_at(organization=self.kwargs["org"].organization)

    @extend_schema(
        tags=["vendors"],
        summary="Vendors of your organization",
        responses={200: VendorSerializer(many=True), **error_responses(401, 403)},
    )
    def get(self, request: Request, org: OrgContext) -> Response:
        page = self.paginate_queryset(selectors.vendors_for(organization=org.organization))
        return self.get_paginated_response(VendorSerializer(page, many=True).data)

    @extend_schema(
        tags=["vendors"],
        summary="Add a vendor",
        request=VendorInputSerializer,
        responses={201: VendorSerializer, **error_responses(400, 401, 403)},
    )
    def post(self, request: Request, org: OrgContext) -> Response:
        data = _valid(VendorInputSerializer(data=request.data))
        vendor = vendor_create(
            organization=org.organization, actor=org.user, channel=Channel.API, **data
        )
        return Response(VendorSerializer(vendor).data, status=status.HTTP_201_CREATED)


class VendorDetail(OrganizationAPIView):
    """One vendor of the caller's organization."""

    required_capability = {"GET": Capability.VIEW, "PATCH": Capability.EDIT_ASSESSMENT}

    @extend_schema(
        tags=["vendors"],
        summary="One vendor",
        responses={200: VendorSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request: Request, org: OrgContext, vendor_id: int) -> Response:
        vendor = selectors.vendor_get(organization=org.organization, vendor_id=vendor_id)
        return Response(VendorSerializer(vendor).data)

    @extend_schema(
        tags=["vendors"],
        summary="Change a vendor",
        request=VendorInputSerializer(partial=True),
        responses={200: VendorSerializer, **error_responses(400, 401, 403, 404)},
    )
    def patch(self, request: Request, org: OrgContext, vendor_id: int) -> Response:
        vendor = selectors.vendor_get(organization=org.organization, vendor_id=vendor_id)
        data = _valid(VendorInputSerializer(data=request.data, partial=True))
        vendor = vendor_update(vendor=vendor, actor=org.user, channel=Channel.API, **data)
        return Response(VendorSerializer(vendor).data)


# -- assessments ---------------------------------------------------------------------------


class IdFilter(django_filters.NumberFilter):
    """A row id: a whole number within the database's 64-bit range (a larger one would crash
    a foreign key lookup instead of matching nothing)."""

    field_class = forms.IntegerField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, min_value=1, max_value=MAX_ID, **kwargs)


class AssessmentFilter(StrictFilterSet):
    status = django_filters.ChoiceFilter(
        choices=AssessmentStatus.choices, help_text="Only assessments in this status."
    )
    tier = django_filters.ChoiceFilter(
        field_name="risk_tier", choices=RiskTier.choices, help_text="Only this risk tier."
    )
    vendor = extend_schema_field(
        {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_ID,
            "description": "Only this vendor's assessments (vendor id).",
        }
    )(IdFilter(field_name="vendor_id"))
    due_before = django_filters.DateFilter(
        field_name="due_date", lookup_expr="lte", help_text="Due on or before this date."
    )
    due_after = django_filters.DateFilter(
        field_name="due_date", lookup_expr="gte", help_text="Due on or after this date."
    )

    class Meta:
        model = Assessment
        fields: list[str] = []


class AssessmentList(OrganizationAPIView):
    """The assessments of the caller's organization."""

    required_capability = {"GET": Capability.VIEW, "POST": Capability.EDIT_ASSESSMENT}
    filter_backends = [DjangoFilterBackend]
    filterset_class = AssessmentFilter
    # Never evaluated: names the model so the OpenAPI schema can type the filters.
    queryset = Assessment.objects.none()
    cursor_ordering = ("-created_at", "-id")

    def count_version(self, request: Request) -> object:
        return selectors.assessments_changed_at(organization=self.kwargs["org"].organization)

    @extend_schema(
        tags=["assessments"],
        summary="Assessments of your organization",
        responses={200: AssessmentSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request: Request, org: OrgContext) -> Response:
        assessments = self.filter_queryset(selectors.assessments_for(organization=org.organization))
        page = self.paginate_queryset(assessments)
        return self.get_paginated_response(AssessmentSerializer(page, many=True).data)

    @extend_schema(
        tags=["assessments"],
        summary="Start an assessment",
        request=AssessmentCreateInputSerializer,
        responses={
            201: AssessmentDetailSerializer,
            **error_responses(401, 403),
            **invalid_input(
                "`vendor`: no vendor of your organization has this id; `questionnaire`: no "
                "published questionnaire has this key; `answers`: by question code."
            ),
        },
    )
    def post(self, request: Request, org: OrgContext) -> Response:
        data = _valid(
            AssessmentCreateInputSerializer(
                data=request.data, vendors=selectors.vendors_for(organization=org.organization)
            )
        )
        assessment = assessment_create(
            organization=org.organization,
            vendor=data["vendor"],
            questionnaire_key=data["questionnaire"],
            due_date=data.get("due_date"),
            answers=data.get("answers"),
            label=data["label"],
            actor=org.user,
            channel=Channel.API,
        )
        return _detail_response(org, assessment.pk, status_code=status.HTTP_201_CREATED)


class AssessmentDetail(OrganizationAPIView):
    """One assessment: status, answers, latest findings, runs and evidence."""

    required_capability = {"GET": Capability.VIEW}

    @extend_schema(
        tags=["assessments"],
        summary="One assessment",
        description="Status, answers, the findings of the latest scoring run, every run and "
        "the evidence files.",
        responses={200: AssessmentDetailSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request: Request, org: OrgContext, assessment_id: int) -> Response:
        return _detail_response(org, assessment_id)


class AssessmentAnswers(OrganizationAPIView):
    """The answers of one assessment."""

    # Either capability lets the request in; each code is then checked against its section.
    required_capability = {
        "PATCH": (Capability.EDIT_ASSESSMENT, Capability.ANSWER_USE_SECTION),
    }

    @extend_schema(
        tags=["assessments"],
        summary="Save answers (all or nothing)",
        description='Any error saves nothing: 400 `{"errors": {"CODE": ["..."]}}`. Answering '
        "the buyer's USE section needs the answer_use_section capability; other questions "
        "need edit_assessment.",
        request=AnswersInputSerializer,
        responses={
            200: AnswersSerializer,
            **error_responses(401, 403, 404, 409),
            **invalid_input(
                "`answers`, `comments`: by question code, a code the questionnaire does not "
                "have included."
            ),
        },
    )
    def patch(self, request: Request, org: OrgContext, assessment_id: int) -> Response:
        assessment = _assessment(org, assessment_id)
        data = _valid(AnswersInputSerializer(data=request.data))
        answers, comments = data.get("answers"), data.get("comments")
        changed = answers_save(
            assessment=assessment,
            answers=answers,
            comments=comments,
            actor=org.user,
            member=org,
            channel=Channel.API,
        )
        prefetch_related_objects([assessment], "answers")
        body = {
            "answers": answers_by_code(assessment),
            "comments": comments_by_code(assessment),
            "changed": sorted(changed),
        }
        return Response(AnswersSerializer(body).data)


class AssessmentEvidence(OrganizationAPIView):
    """Evidence files of one assessment."""

    required_capability = {"POST": Capability.EDIT_ASSESSMENT}
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=["assessments"],
        summary="Attach an evidence file",
        description="Stores the file privately and parses it (engine startup logs); a file "
        "the parser cannot read is kept and marked `parsed: false`.",
        request={"multipart/form-data": EvidenceInputSerializer},
        responses={
            201: EvidenceSerializer,
            **error_responses(401, 403, 404, 409),
            **invalid_input("`question`: not a file question of the questionnaire."),
            507: OpenApiResponse(
                ErrorsSerializer,
                description="The file could not be stored (the disk may be full): nothing "
                "was saved; try again later.",
            ),
        },
    )
    def post(self, request: Request, org: OrgContext, assessment_id: int) -> Response:
        assessment = _assessment(org, assessment_id)
        data = _valid(EvidenceInputSerializer(data=request.data))
        evidence = evidence_add(
            assessment=assessment,
            question_code=data["question"],
            upload=data["file"],
            actor=org.user,
            channel=Channel.API,
        )
        return Response(EvidenceSerializer(evidence).data, status=status.HTTP_201_CREATED)


class AssessmentSubmit(OrganizationAPIView):
    """Submission of one assessment for scoring."""

    required_capability = {"POST": Capability.EDIT_ASSESSMENT}

    @extend_schema(
        tags=["assessments"],
        summary="Submit for scoring",
        description="Queues a scoring run (202). 400 lists the required questions still "
        "blank, by code.",
        request=None,
        responses={
            202: RunQueuedSerializer,
            **error_responses(401, 403, 404, 409),
            **invalid_input("The required questions still blank, by code."),
        },
    )
    def post(self, request: Request, org: OrgContext, assessment_id: int) -> Response:
        assessment = _assessment(org, assessment_id)
        run = assessment_submit(assessment=assessment, actor=org.user, channel=Channel.API)
        return _queued_response(run)


class AssessmentRescore(OrganizationAPIView):
    """Scoring one assessment again."""

    required_capability = {"POST": Capability.EDIT_ASSESSMENT}

    @extend_schema(
        tags=["assessments"],
        summary="Score again with the newest ruleset",
        description="Queues a new run (202); earlier runs and their findings are kept.",
        request=None,
        responses={202: RunQueuedSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, org: OrgContext, assessment_id: int) -> Response:
        assessment = _assessment(org, assessment_id)
        run = assessment_rescore(assessment=assessment, member=org, channel=Channel.API)
        return _queued_response(run)


class AssessmentRun(OrganizationAPIView):
    """One past or current scoring run of an assessment."""

    required_capability = {"GET": Capability.VIEW}

    @extend_schema(
        tags=["assessments"],
        summary="One scoring run, with its findings",
        responses={200: RunDetailSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request: Request, org: OrgContext, assessment_id: int, run_id: int) -> Response:
        assessment = _assessment(org, assessment_id)
        run = selectors.run_get(organization=org.organization, run_id=run_id)
        if run.assessment_id != assessment.pk:
            raise Http404
        prefetch_related_objects([run], "findings")
        context = {"rule_titles": _rule_titles(run)}
        return Response(RunDetailSerializer(run, context=context).data)


class AssessmentReview(OrganizationAPIView):
    """The reviewer's decision on a scored assessment."""

    required_capability = {"POST": Capability.REVIEW}

    @extend_schema(
        tags=["assessments"],
        summary="Record a review decision",
        description="approved, approved_with_conditions (state the conditions), rejected, or "
        "changes_requested (with a message and the vendor questions to re-open). A reviewer "
        "who created, edited or submitted the assessment may not decide (four eyes). "
        "Approving despite critical findings names each in `acknowledged_findings`.",
        request=ReviewInputSerializer,
        responses={
            201: ReviewSerializer,
            **error_responses(401, 403, 404, 409),
            # The four-eyes refusal is the reviewer's, not the assessment's state (that is a
            # 409): it comes with the body's other errors, in one 400.
            **invalid_input(
                "`reviewer` when the caller created, edited or submitted the assessment "
                "(four-eyes rule), `reopen_codes` naming no vendor question, `run` naming no "
                "run of this assessment, a missing `message` or `conditions`, "
                "`acknowledged_findings` leaving out a critical finding of an approval."
            ),
        },
    )
    def post(self, request: Request, org: OrgContext, assessment_id: int) -> Response:
        assessment = _assessment(org, assessment_id)
        data = _valid(ReviewInputSerializer(data=request.data))
        review = review_record(
            assessment=assessment,
            member=org,
            decision=data["decision"],
            conditions=data["conditions"],
            message=data["message"],
            reopen_codes=data["reopen_codes"],
            run_id=data.get("run"),
            acknowledged_findings=data["acknowledged_findings"],
            channel=Channel.API,
        )
        return Response(ReviewSerializer(review).data, status=status.HTTP_201_CREATED)


class AssessmentAudit(OrganizationAPIView):
    """The audit trail of one assessment."""

    required_capability = {"GET": Capability.READ_AUDIT}
    cursor_ordering = ("-created_at", "-id")

    @extend_schema(
        tags=["assessments"],
        summary="Audit trail of an assessment",
        description="Who did what, newest first; every member (the read_audit capability of "
        "each role). `answers.saved` names the question codes it changed in `detail.codes`.",
        responses={200: AuditEventSerializer(many=True), **error_responses(401, 403, 404)},
    )
    def get(self, request: Request, org: OrgContext, assessment_id: int) -> Response:
        assessment = _assessment(org, assessment_id)
        events = selectors.audit_events_for(organization=org.organization, assessment=assessment)
        page = self.paginate_queryset(events)
        return self.get_paginated_response(AuditEventSerializer(page, many=True).data)


# -- helpers -------------------------------------------------------------------------------


def _valid(serializer: Any) -> dict[str, Any]:
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _assessment(org: OrgContext, assessment_id: int) -> Assessment:
    return selectors.assessment_get(organization=org.organization, assessment_id=assessment_id)


def _detail_response(
    org: OrgContext, assessment_id: int, *, status_code: int = status.HTTP_200_OK
) -> Response:
    assessment = _assessment(org, assessment_id)
    # The runs' list shows each one's ruleset key and figures: not the rulesets' contents nor
    # the runs' snapshots (large JSON documents, decoded for nothing).
    runs = ScoringRun.objects.select_related("ruleset").defer(
        "ruleset__content", "answers_snapshot", "evidence_snapshot", "sections"
    )
    prefetch_related_objects(
        [assessment], "answers", "evidence", Prefetch("runs", queryset=runs), "latest_run__findings"
    )
    context = {"rule_titles": _rule_titles(assessment.latest_run)}
    return Response(
        AssessmentDetailSerializer(assessment, context=context).data, status=status_code
    )


def _queued_response(run: ScoringRun) -> Response:
    body = {"status": run.assessment.status, "run": run.pk}
    return Response(RunQueuedSerializer(body).data, status=status.HTTP_202_ACCEPTED)


def _rule_titles(run: ScoringRun | None) -> dict[str, Text]:
    """Titles of the rules of a run's ruleset (findings store only the rule id)."""
    if run is None:
        return {}
    rows = Rule.objects.filter(ruleset_id=run.ruleset_id).values_list(
        "rule_id", "title_en", "title_zh_hant"
    )
    return {rule_id: Text(en, zh_hant) for rule_id, en, zh_hant in rows}
