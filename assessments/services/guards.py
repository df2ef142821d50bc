"""The checks every write in this app applies first: the caller's role and organization, and
the lifecycle event the assessment's status must allow."""

from __future__ import annotations

from django.utils.translation import gettext as _

from accounts.tenancy import OrgContext
from core.errors import ServiceError

from .. import lifecycle
from ..models import Assessment


def require_member(member: OrgContext, assessment: Assessment, capability: str) -> None:
    """The rule every member-facing service applies first: the caller's role grants the
    capability (403), and the object belongs to the caller's organization."""
    member.require(capability)
    if assessment.organization_id != member.organization.pk:
        raise ServiceError({"assessment": [_("Unknown assessment.")]})


def transition(assessment: Assessment, event: str) -> None:
    # An event the status does not allow raises `IllegalTransition`, a `ConflictError`.
    assessment.status = lifecycle.next_status(event, assessment.status)
