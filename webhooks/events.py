"""The events a webhook endpoint can subscribe to: their names on the wire, their labels, and
the payload each carries (documented in the OpenAPI schema, `webhooks.schema`).

Pure: no ORM. The apps that cause an event (assessments, reports, probes, portfolio) call
`webhooks.services.webhook_emit` with one of these names and the event's `data`.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class WebhookEvent(models.TextChoices):
    ASSESSMENT_SUBMITTED = "assessment.submitted", _("Assessment submitted")
    ASSESSMENT_SCORED = "assessment.scored", _("Assessment scored")
    ASSESSMENT_SIGNED_OFF = "assessment.signed_off", _("Assessment signed off")
    REPORT_READY = "report.ready", _("Report ready")
    PROBE_FINISHED = "probe.finished", _("Isolation probe finished")
    RISK_ACCEPTANCE_EXPIRING = "risk_acceptance.expiring", _("Risk acceptance expiring")
    RESCORE_BATCH_FINISHED = "rescore_batch.finished", _("Rescore batch finished")
    # Sent only by the "Send test event" button, to the one endpoint it was pressed for.
    TEST = "webhook.test", _("Test event")


# What an endpoint can subscribe to (the test event goes to the endpoint that asks for it).
SUBSCRIBABLE = tuple(event for event in WebhookEvent if event != WebhookEvent.TEST)
