"""Who among the members is told of what happens to an assessment (`notifications.notify`
writes and sends it): the assessor who created it, the reviewers when it waits for one, the
reviewer who asked for changes when they are answered, the owners of a configuration change.
One function per event, called in the transaction of the change."""

from __future__ import annotations

from django.utils.translation import pgettext_lazy

from accounts.models import User
from notifications.models import NotificationEvent
from notifications.services import notify, owners_of, reviewers_of
from outbox.links import site_path

from ..models import (
    Assessment,
    ConfigurationChange,
    Review,
    ReviewDecision,
    RiskDecision,
    RiskTier,
    ScoringRun,
)


def notify_submitted(
    *, assessment: Assessment, run: ScoringRun, submitter: User | None, answering_changes: bool
) -> None:
    """A vendor (or a member) submitted: the reviewers may review it, or the reviewer who asked
    for changes reads their answer. The assessor who created it is told either way."""
    if answering_changes:
        asked = (
            Review.objects.filter(assessment=assessment, decision=ReviewDecision.CHANGES_REQUESTED)
            .order_by("-pk")
            .select_related("reviewer")
            .first()
        )
        event = NotificationEvent.CHANGES_ANSWERED
        recipients = [assessment.created_by, asked.reviewer if asked else None]
    else:
        event = NotificationEvent.SUBMITTED
        recipients = [assessment.created_by, *reviewers_of(assessment.organization)]
    notify(
        organization=assessment.organization,
        event=event,
        key=f"{event}:run:{run.pk}",
        recipients=[user for user in recipients if user is not None and user != submitter],
        words={"vendor": assessment.vendor.name},
        path=site_path("assessments:detail", assessment.pk),
    )


def notify_tier_changed(*, assessment: Assessment, run: ScoringRun, previous_tier: str) -> None:
    """A run scored the assessment with another tier than its last one (a first score is no
    change: the submission told them)."""
    if not previous_tier or previous_tier == run.risk_tier:
        return
    notify(
        organization=assessment.organization,
        event=NotificationEvent.TIER_CHANGED,
        key=f"{NotificationEvent.TIER_CHANGED}:run:{run.pk}",
        recipients=[assessment.created_by],
        words={
            "vendor": assessment.vendor.name,
            "tier": RiskTier(run.risk_tier).label,
            "previous": RiskTier(previous_tier).label,
        },
        path=site_path("assessments:findings", assessment.pk),
    )


def notify_signed_off(*, review: Review) -> None:
    assessment = review.assessment
    if review.decision == ReviewDecision.CHANGES_REQUESTED:
        return  # the vendor is told; the assessment is not signed off
    notify(
        organization=assessment.organization,
        event=NotificationEvent.SIGNED_OFF,
        key=f"{NotificationEvent.SIGNED_OFF}:review:{review.pk}",
        recipients=[assessment.created_by] if assessment.created_by != review.reviewer else [],
        words={
            "vendor": assessment.vendor.name,
            "decision": ReviewDecision(review.decision).label,
            "reviewer": review.reviewer.get_full_name() or review.reviewer.email,
        },
        path=site_path("assessments:detail", assessment.pk),
    )


def notify_configuration_change(*, renewal: Assessment, changes: list[str]) -> None:
    """A vendor declared a change of its deployment: the renewal's assessor and the owners."""
    original = renewal.renewal_of
    notify(
        organization=renewal.organization,
        event=NotificationEvent.CONFIGURATION_CHANGE,
        key=f"{NotificationEvent.CONFIGURATION_CHANGE}:renewal:{renewal.pk}",
        recipients=[
            original.created_by if original else None,
            *owners_of(renewal.organization),
        ],
        words={
            "vendor": renewal.vendor.name,
            "changes": _Joined([ConfigurationChange(change).label for change in changes]),
        },
        path=site_path("assessments:detail", renewal.pk),
    )


def notify_risk_acceptance_expiring(*, decision: RiskDecision, recipients: list[User]) -> None:
    notify(
        organization=decision.assessment.organization,
        event=NotificationEvent.RISK_ACCEPTANCE_EXPIRING,
        key=(
            f"{NotificationEvent.RISK_ACCEPTANCE_EXPIRING}:{decision.pk}:"
            f"{decision.expires_on.isoformat()}"
        ),
        recipients=recipients,
        words={
            "rule": decision.rule_id,
            "vendor": decision.assessment.vendor.name,
            "date": decision.expires_on,
        },
        path=site_path("assessments:findings", decision.assessment_id),
        email=False,  # the reminder sweep's own email says more (portfolio.reminders)
    )


class _Joined:
    """Labels joined in the language active when the title is written (", " or "、")."""

    def __init__(self, labels: list[str]) -> None:
        self.labels = labels

    def __str__(self) -> str:
        return str(pgettext_lazy("between the items of a list", ", ")).join(
            str(label) for label in self.labels
        )
