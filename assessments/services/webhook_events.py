"""What a webhook says about an assessment: the one shape of the `assessment` object in every
event's `data` (submitted, scored, signed off, report ready, probe finished, risk acceptance
expiring), documented in the OpenAPI schema by `webhooks.schema`."""

from __future__ import annotations

from typing import Any

from outbox.links import site_url
from webhooks.services import Event

from ..models import Assessment


def assessment_event(assessment: Assessment, event: str, key: str, **data: Any) -> Event:
    """The event `event` of `assessment`, its `data` carrying the assessment and `data`."""
    return Event(
        organization_id=assessment.organization_id,
        event=event,
        key=key,
        data={
            "assessment": {
                "id": assessment.pk,
                "url": site_url("assessments:detail", assessment.pk),
                "status": assessment.status,
                "questionnaire": assessment.questionnaire.key,
                "vendor": {"id": assessment.vendor_id, "name": assessment.vendor.name},
                "risk_score": assessment.risk_score,
                "risk_tier": assessment.risk_tier or None,
            },
            **data,
        },
    )
