"""The webhook payloads in the API's OpenAPI schema: one serializer per event's `data`, listed
under `x-webhooks` (OpenAPI 3.1's `webhooks` object, which the 3.0 schema AVIA serves has no
place for; `webhooks_as_extension` moves it there) with their components beside the API's.

These serializers only describe; `webhooks.services` and `assessments.services.webhook_events`
write the JSON, and a test checks a real delivery against this schema."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiWebhook, extend_schema
from rest_framework import serializers

from .events import WebhookEvent


class OrganizationRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class VendorRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class AssessmentRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.URLField(help_text="The assessment's page in AVIA (members sign in).")
    status = serializers.CharField()
    questionnaire = serializers.CharField(help_text="`slug@version`, e.g. ai-inference-isolation@2")
    vendor = VendorRefSerializer()
    risk_score = serializers.IntegerField(allow_null=True)
    risk_tier = serializers.CharField(allow_null=True)


class ScoringRunRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    ruleset = serializers.CharField()
    risk_score = serializers.IntegerField()
    risk_tier = serializers.CharField()


class ReviewRefSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["approved", "approved_with_conditions", "rejected"])
    conditions = serializers.CharField(allow_null=True)


class ReportRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.CharField()
    language = serializers.CharField()
    sha256 = serializers.CharField(help_text="Verify the downloaded PDF against it.")
    pages = serializers.IntegerField()
    url = serializers.URLField()


class ProbeRunRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    results = serializers.DictField(
        child=serializers.CharField(), help_text="Each check's outcome: {oversize: rejected, …}."
    )
    tokens_spent = serializers.IntegerField()


class RiskAcceptanceRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    rule_id = serializers.CharField()
    owner = serializers.CharField()
    expires_on = serializers.DateField()


class RescoreBatchRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    status = serializers.CharField()
    ruleset = serializers.CharField()
    total = serializers.IntegerField()
    failed = serializers.IntegerField()


# Each event's payload serializer, by event name (the tests validate real deliveries with them).
PAYLOADS: dict[str, type[serializers.Serializer]] = {}


def _event(event: WebhookEvent, data: dict[str, serializers.Field], summary: str) -> OpenApiWebhook:
    """A webhook: the envelope every delivery has, with this event's `data`."""
    name = "".join(part.title() for part in event.value.replace(".", "_").split("_"))
    data_serializer: Any = type(f"{name}DataSerializer", (serializers.Serializer,), data)
    payload: Any = type(
        f"{name}WebhookSerializer",
        (serializers.Serializer,),
        {
            "id": serializers.IntegerField(help_text="The delivery (also AVIA-Delivery)."),
            "event": serializers.ChoiceField(choices=[event.value]),
            "created": serializers.DateTimeField(),
            "organization": OrganizationRefSerializer(),
            "data": data_serializer(),
        },
    )
    PAYLOADS[event.value] = payload
    description = (
        "POSTed as JSON to each endpoint subscribed to this event, with the headers "
        "AVIA-Event, AVIA-Delivery and AVIA-Signature (`t=<unix time>,v1=<hex HMAC-SHA256 of "
        "'<t>.' + body, keyed by the endpoint's secret>`). Answer with any 2xx; anything else "
        "(or no answer within 10 s) is retried with a growing delay. Refuse a `t` more than five "
        "minutes from your clock."
    )
    return OpenApiWebhook(
        name=event.value,
        decorator=extend_schema(
            summary=summary, description=description, request=payload, responses={200: None}
        ),
    )


def _assessment(**more: serializers.Field) -> dict[str, serializers.Field]:
    return {"assessment": AssessmentRefSerializer(), **more}


assessment_submitted = _event(
    WebhookEvent.ASSESSMENT_SUBMITTED, _assessment(), "The vendor (or a member) submitted"
)
assessment_scored = _event(
    WebhookEvent.ASSESSMENT_SCORED, _assessment(run=ScoringRunRefSerializer()), "Scored"
)
assessment_signed_off = _event(
    WebhookEvent.ASSESSMENT_SIGNED_OFF,
    _assessment(review=ReviewRefSerializer()),
    "A reviewer approved or rejected",
)
report_ready = _event(
    WebhookEvent.REPORT_READY, _assessment(report=ReportRefSerializer()), "A PDF report is ready"
)
probe_finished = _event(
    WebhookEvent.PROBE_FINISHED,
    _assessment(probe_run=ProbeRunRefSerializer()),
    "An isolation probe finished",
)
risk_acceptance_expiring = _event(
    WebhookEvent.RISK_ACCEPTANCE_EXPIRING,
    _assessment(risk_acceptance=RiskAcceptanceRefSerializer()),
    "A risk acceptance expires soon",
)
rescore_batch_finished = _event(
    WebhookEvent.RESCORE_BATCH_FINISHED,
    {"rescore_batch": RescoreBatchRefSerializer()},
    "A rescore batch finished",
)
test_event = _event(
    WebhookEvent.TEST,
    {"message": serializers.CharField()},
    "The “Send test event” button",
)


def webhooks_as_extension(result: dict[str, Any], **_kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: OpenAPI 3.0 has no `webhooks` object; keep it as `x-webhooks`."""
    if "webhooks" in result:
        result["x-webhooks"] = result.pop("webhooks")
    return result
