"""REST endpoints of the isolation probe: the set-up's state (never its keys), starting a run,
and following it.

Thin on purpose: shape checks in an input serializer, lookups through the selectors (another
organization's object is a 404), one service call.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.api import OrganizationAPIView
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments import selectors as assessment_selectors
from assessments.models import Channel
from core.api.base import InputSerializer, error_responses

from . import selectors
from .checks import MIN_PREFIX_TOKENS
from .models import ProbeRun, ProbeSetup
from .prefix_cache_statistics import MIN_SAMPLES
from .result import CHECKS
from .runner import TOO_FEW_SAMPLES, TOO_SHORT_PREFIX
from .services.runs import PROBE_RUN_CAPABILITIES, probe_run_request
from .services.setup import tokens_spent_under


class ProbeSetupSerializer(serializers.ModelSerializer):
    """What was set up and authorised. The keys are not fields: only whether they are held."""

    model = serializers.CharField(source="model_name")
    keys_present = serializers.BooleanField(
        help_text="Whether the two test keys are stored (they are destroyed after each run)."
    )
    entered_by = serializers.SerializerMethodField()
    tokens_spent_under_authorisation = serializers.SerializerMethodField()

    class Meta:
        model = ProbeSetup
        fields = [
            "base_url",
            "model",
            "declared_context",
            "signer_name",
            "spend_ceiling_tokens",
            "window_starts_at",
            "window_ends_at",
            "entered_at",
            "entered_via",
            "entered_by",
            "keys_present",
            "keys_destroyed_at",
            "tokens_spent_under_authorisation",
        ]
        read_only_fields = fields

    def get_entered_by(self, setup: ProbeSetup) -> str | None:
        if setup.entered_by is not None:
            return setup.entered_by.email
        if setup.entered_by_link is not None:
            return f"vendor link: {setup.entered_by_link.contact_email}"
        return None

    def get_tokens_spent_under_authorisation(self, setup: ProbeSetup) -> int:
        return tokens_spent_under(setup)


class ProbeRunSerializer(serializers.ModelSerializer):
    assessment = serializers.IntegerField(source="assessment_id")
    requested_by = serializers.SerializerMethodField()
    progress = serializers.JSONField(
        help_text="`percent`, `check` (the one running), `requests_sent`, `requests_planned`, "
        "`tokens_spent`, `checks_done`; updated about once a second while running."
    )
    result = serializers.JSONField(
        help_text='The probe\'s result once done: the JSON of `manage.py probe` (docs/probe.md, "Reading the result").'
    )
    evidence = serializers.IntegerField(
        source="evidence_id",
        allow_null=True,
        help_text="The evidence file (PRB-02) the result was attached as when the run finished; "
        "rescore the assessment to score it.",
    )

    class Meta:
        model = ProbeRun
        fields = [
            "id",
            "assessment",
            "status",
            "checks",
            "samples",
            "prefix_tokens",
            "budget_tokens",
            "progress",
            "tokens_spent",
            "requests_sent",
            "error",
            "result",
            "evidence",
            "requested_by",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_requested_by(self, run: ProbeRun) -> str | None:
        return run.requested_by.email if run.requested_by else None


class ProbeOverviewSerializer(serializers.Serializer):
    setup = ProbeSetupSerializer(allow_null=True)
    runs = ProbeRunSerializer(many=True)


class ProbeRunInputSerializer(InputSerializer):
    checks = serializers.ListField(
        child=serializers.ChoiceField(choices=CHECKS),
        required=False,
        allow_empty=False,
        min_length=1,  # allow_empty's rule as the schema's minItems
        help_text="Default: all three.",
    )
    # The runner's own minimums (probes.runner refuses fewer), stated in the schema.
    samples = serializers.IntegerField(
        required=False,
        min_value=MIN_SAMPLES,
        max_value=1000,
        error_messages={"min_value": _(TOO_FEW_SAMPLES)},
        help_text="Prefix-cache samples.",
    )
    prefix_tokens = serializers.IntegerField(
        required=False,
        min_value=MIN_PREFIX_TOKENS,
        max_value=1_000_000,
        error_messages={"min_value": _(TOO_SHORT_PREFIX)},
        help_text="Prefix length (tokens).",
    )


class AssessmentProbe(OrganizationAPIView):
    """The probe of one assessment: its set-up and its runs."""

    required_capability: ClassVar[dict[str, Any]] = {"GET": Capability.VIEW}

    @extend_schema(
        tags=["probe"],
        summary="The probe's set-up and runs",
        description="The endpoint and signed authorisation the vendor entered (never the keys; "
        "`keys_present` says whether they are held) and every run, newest first.",
        responses={200: ProbeOverviewSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request: Request, org: OrgContext, assessment_id: int) -> Response:
        assessment = assessment_selectors.assessment_get(
            organization=org.organization, assessment_id=assessment_id
        )
        setup = selectors.probe_setup_for(organization=org.organization, assessment=assessment)
        runs = selectors.probe_runs_for(organization=org.organization, assessment=assessment)
        return Response(ProbeOverviewSerializer({"setup": setup, "runs": runs}).data)


class AssessmentProbeRuns(OrganizationAPIView):
    """Starting a probe of the endpoint the vendor authorised."""

    required_capability: ClassVar[dict[str, Any]] = {"POST": PROBE_RUN_CAPABILITIES}

    @extend_schema(
        tags=["probe"],
        summary="Run the isolation probe",
        description="Queues a probe (202) of the vendor's endpoint, inside the authorised window "
        "and within what is left of the spend ceiling. Follow it at `GET probe-runs/{id}/`. "
        "Assessors and owners.",
        request=ProbeRunInputSerializer,
        responses={202: ProbeRunSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, org: OrgContext, assessment_id: int) -> Response:
        assessment = assessment_selectors.assessment_get(
            organization=org.organization, assessment_id=assessment_id
        )
        serializer = ProbeRunInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        run = probe_run_request(
            assessment=assessment, actor=org.user, channel=Channel.API, **serializer.validated_data
        )
        run = selectors.probe_run_get(organization=org.organization, probe_run_id=run.pk)
        return Response(ProbeRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class ProbeRunDetail(OrganizationAPIView):
    """One probe run: its status and progress, and its result once done."""

    required_capability: ClassVar[dict[str, Any]] = {"GET": Capability.VIEW}

    @extend_schema(
        tags=["probe"],
        summary="A probe run's status, progress and result",
        description="`status` is queued, running, done or failed (`error` says why).",
        responses={200: ProbeRunSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request: Request, org: OrgContext, probe_run_id: int) -> Response:
        run = selectors.probe_run_get(organization=org.organization, probe_run_id=probe_run_id)
        return Response(ProbeRunSerializer(run).data)
