"""The assessment lifecycle, in one place.

    draft → sent (vendor invited) → submitted → scored → approved | rejected
                                               scored → changes_requested → submitted
    submitted → scoring_failed (scoring could not finish; answers are kept) → submitted (retry)
    scored | approved | rejected → (the same) when a rescore batch scores them again

Every status change goes through `transition()`; an event that is not allowed from the current
status raises `IllegalTransition` instead of being silently ignored.
"""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from core.errors import ConflictError

from .models import AssessmentStatus as S


class IllegalTransition(ConflictError):
    """An event the current status does not allow (HTTP 409, keyed `status`)."""

    def __init__(self, event: str, status: str) -> None:
        self.event, self.status = event, status
        super().__init__(
            {
                "status": [
                    _("“%(event)s” is not possible while the assessment is %(status)s.")
                    % {"event": event.replace("_", " "), "status": S(status).label}
                ]
            }
        )


TRANSITIONS: dict[str, dict[str, str]] = {
    # event: {from status: to status}
    "invite": {S.DRAFT: S.SENT, S.SENT: S.SENT, S.CHANGES_REQUESTED: S.CHANGES_REQUESTED},
    "submit": {S.DRAFT: S.SUBMITTED, S.SENT: S.SUBMITTED, S.CHANGES_REQUESTED: S.SUBMITTED},
    # A run that finishes while the assessment is already scored or decided is a portfolio
    # rescore (`portfolio`): the new result is recorded and the decision stands as made.
    "scoring_succeeded": {
        S.SUBMITTED: S.SCORED,
        S.SCORING_FAILED: S.SCORED,
        S.SCORED: S.SCORED,
        S.APPROVED: S.APPROVED,
        S.REJECTED: S.REJECTED,
    },
    "scoring_failed": {S.SUBMITTED: S.SCORING_FAILED, S.SCORING_FAILED: S.SCORING_FAILED},
    "rescore": {S.SCORED: S.SUBMITTED, S.SCORING_FAILED: S.SUBMITTED},
    "approve": {S.SCORED: S.APPROVED},
    "reject": {S.SCORED: S.REJECTED},
    "request_changes": {S.SCORED: S.CHANGES_REQUESTED},
}

# Statuses in which answers may still change (by the assessor, or the vendor through a link).
EDITABLE_STATUSES = frozenset({S.DRAFT, S.SENT, S.CHANGES_REQUESTED})


def next_status(event: str, status: str) -> str:
    try:
        return TRANSITIONS[event][status]
    except KeyError:
        raise IllegalTransition(event, status) from None


def allowed_events(status: str) -> list[str]:
    return [event for event, moves in TRANSITIONS.items() if status in moves]
