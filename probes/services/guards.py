"""What the probe's set-up and its runs both check before they write: a decided assessment is
not probed, one run of an assessment at a time, and the probe connects only where the operator
allows; with the pure probe's messages in the request's language."""

from __future__ import annotations

from django.conf import settings
from django.utils.translation import gettext as _

from assessments.models import AssessmentStatus
from core.outbound import OutboundPolicy, TemplateText

from ..models import ProbeRunStatus

RUN_PENDING_STATUSES = (ProbeRunStatus.QUEUED, ProbeRunStatus.RUNNING)
# A decided assessment is not probed any more: its result could no longer be scored.
DECIDED_STATUSES = (AssessmentStatus.APPROVED, AssessmentStatus.REJECTED)


def problems_translated(errors: dict[str, list[str]]) -> dict[str, list[str]]:
    """The pure probe's messages (marked with gettext_noop) in the request's language."""
    return {
        field: [_translate(message) for message in messages] for field, messages in errors.items()
    }


def _translate(message: str) -> str:
    if isinstance(message, TemplateText):
        return _(message.template) % message.params
    return _(message)


def probe_outbound_policy() -> OutboundPolicy:
    """Where the probe may connect: public addresses and the operator's PROBE_ALLOWED_NETWORKS
    (for the web app, the worker and `manage.py probe` alike)."""
    return OutboundPolicy(allowed_networks=settings.PROBE_ALLOWED_NETWORKS)
