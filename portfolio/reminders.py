"""The reminder sweep, run by Celery beat: reassessments opened when due, reminders to vendor
contacts before their due date and after it, risk acceptances nearing and past their expiry,
and a weekly digest to the assessors.

Every email goes through the outbox under a key that names its event (the assessment and its
due date, the acceptance and its expiry date, the member and the week), so the sweep can run
as often as beat likes — hourly by default — and each email still leaves once.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import Membership, Organization, User
from accounts.roles import Capability, Role, role_can
from accounts.tenancy import organization_query
from assessments.models import (
    CLOSED_STATUSES,
    RENEWABLE_STATUSES,
    Assessment,
    AssessmentStatus,
    Channel,
    RenewalReason,
    RiskDecision,
    RiskDecisionKind,
    Thread,
    ThreadStatus,
    ThreadTurn,
)
from assessments.selectors import AWAITING_VENDOR, deadlines_for
from assessments.services.notices import notify_risk_acceptance_expiring
from assessments.services.reassessment import renewal_start
from assessments.services.vendor_mail import due_date_remind, thread_question_notify
from assessments.services.webhook_events import assessment_event
from core.errors import ServiceError
from notifications.models import NotificationEvent
from notifications.services import emailed_about
from outbox.links import site_url
from outbox.models import EmailKind
from outbox.services import email_enqueue
from webhooks.events import WebhookEvent
from webhooks.services import webhooks_emit

logger = logging.getLogger(__name__)

# An acceptance that expired longer ago than this is history, not news: no email for it.
EXPIRED_NEWS_DAYS = 7
SWEEP_LIMIT = 1000


@dataclass
class SweepReport:
    renewals: int = 0
    due_soon: int = 0
    overdue: int = 0
    risk_expiring: int = 0
    risk_expired: int = 0
    digests: int = 0
    thread_reminders: int = 0


# Every organization's date lies between the date of the westernmost zone (UTC-12) and that
# of the easternmost (UTC+14): the sweep reads its candidates between the two, then each on its
# organization's clock, as its pages read "today" and "overdue".
_WESTERNMOST, _EASTERNMOST = ZoneInfo("Etc/GMT+12"), ZoneInfo("Etc/GMT-14")
Today = Callable[[Organization], dt.date]


def reminders_send(*, today: dt.date | None = None) -> SweepReport:
    """`today`, when given, is the date everywhere; otherwise each organization's own."""
    first = today or timezone.localdate(timezone=_WESTERNMOST)
    last = today or timezone.localdate(timezone=_EASTERNMOST)

    def today_of(organization: Organization) -> dt.date:
        return today if today is not None else organization.local_date()

    report = SweepReport()
    report.renewals = _open_renewals(last, today_of)
    for assessment in _awaiting_vendor().filter(due_date__lt=last)[:SWEEP_LIMIT]:
        if assessment.due_date < today_of(assessment.organization):
            if _opened_late(assessment):
                continue  # its invitation said it was late already: no second email about it
            report.overdue += due_date_remind(assessment=assessment, overdue=True) is not None
    notice = dt.timedelta(days=settings.REMINDER_DAYS_BEFORE_DUE)
    for assessment in _awaiting_vendor().filter(due_date__gte=first, due_date__lte=last + notice)[
        :SWEEP_LIMIT
    ]:
        local = today_of(assessment.organization)
        if local <= assessment.due_date <= local + notice:
            report.due_soon += due_date_remind(assessment=assessment, overdue=False) is not None
    report.risk_expiring, report.risk_expired = _risk_acceptances(first, last, today_of)
    report.digests = _digests(today_of)
    report.thread_reminders = _unanswered_threads()
    logger.info("reminder sweep of %s–%s: %s", first, last, report)
    return report


def _unanswered_threads() -> int:
    """A question to the vendor unanswered for THREAD_REMINDER_DAYS: one reminder per turn
    (the email's key names the thread and when the vendor's turn began)."""
    since = timezone.now() - dt.timedelta(days=settings.THREAD_REMINDER_DAYS)
    waiting = (
        Thread.objects.filter(
            status=ThreadStatus.OPEN,
            turn=ThreadTurn.VENDOR,
            turn_since__lte=since,
        )
        .exclude(assessment__status__in=CLOSED_STATUSES)
        .select_related("assessment__organization", "assessment__vendor")
        .order_by("turn_since", "pk")
    )
    return sum(
        thread_question_notify(thread=thread, reminder=True) is not None
        for thread in waiting[:SWEEP_LIMIT]
    )


def _opened_late(assessment: Assessment) -> bool:
    """A renewal opened after the date it is due (`renewal_start` keeps that date)."""
    opened_on = assessment.organization.local_date(assessment.created_at)
    return assessment.renewal_of_id is not None and assessment.due_date < opened_on


def _awaiting_vendor() -> QuerySet[Assessment]:
    return (
        Assessment.objects.filter(status__in=AWAITING_VENDOR, due_date__isnull=False)
        .select_related("organization", "vendor", "renewal_of")
        .order_by("due_date", "pk")
    )


def _open_renewals(last: dt.date, today_of: Today) -> int:
    """A reassessment opens RENEWAL_NOTICE_DAYS before the vendor is due, once per assessment
    (an assessment already renewed, however that renewal ended, is never renewed again)."""
    notice = dt.timedelta(days=settings.RENEWAL_NOTICE_DAYS)
    due = (
        Assessment.objects.filter(
            status__in=RENEWABLE_STATUSES, reassess_by__lte=last + notice, renewals__isnull=True
        )
        .select_related("organization")
        .order_by("reassess_by", "pk")
    )
    opened = 0
    for assessment in due[:SWEEP_LIMIT]:
        if assessment.reassess_by > today_of(assessment.organization) + notice:
            continue
        try:
            renewal_start(assessment=assessment, reason=RenewalReason.DUE, channel=Channel.SYSTEM)
        except ServiceError as exc:
            logger.warning("no reassessment opened for assessment %s: %s", assessment.pk, exc)
        else:
            opened += 1
    return opened


# -- risk acceptances ----------------------------------------------------------------------


def _members_to_tell(organization: Organization, recorded_by: User | None) -> list[User]:
    """The member who recorded the decision, or the owners if they have left."""
    if (
        recorded_by is not None
        and Membership.objects.filter(
            organization=organization, user=recorded_by, user__is_active=True
        ).exists()
    ):
        return [recorded_by]
    return list(
        User.objects.filter(
            memberships__organization=organization,
            memberships__role=Role.OWNER,
            is_active=True,
        ).order_by("pk")
    )


def _risk_acceptances(first: dt.date, last: dt.date, today_of: Today) -> tuple[int, int]:
    notice = dt.timedelta(days=settings.RISK_ACCEPTANCE_NOTICE_DAYS)
    news = dt.timedelta(days=EXPIRED_NEWS_DAYS)
    decisions = (
        RiskDecision.objects.filter(
            kind=RiskDecisionKind.ACCEPTANCE,
            expires_on__lte=last + notice,
            expires_on__gte=first - news,
        )
        .select_related("assessment__organization", "assessment__vendor", "created_by")
        .order_by("expires_on", "pk")
    )
    expiring = expired = 0
    for decision in decisions[:SWEEP_LIMIT]:
        today = today_of(decision.assessment.organization)
        if not today - news <= decision.expires_on <= today + notice:
            continue
        has_expired = decision.expires_on <= today
        kind = (
            EmailKind.RISK_ACCEPTANCE_EXPIRED if has_expired else EmailKind.RISK_ACCEPTANCE_EXPIRING
        )
        organization = decision.assessment.organization
        if not has_expired:  # once per decision and expiry date: the key says so
            webhooks_emit(
                [
                    assessment_event(
                        decision.assessment,
                        WebhookEvent.RISK_ACCEPTANCE_EXPIRING,
                        f"risk_acceptance.expiring:{decision.pk}:{decision.expires_on.isoformat()}",
                        risk_acceptance={
                            "id": decision.pk,
                            "rule_id": decision.rule_id,
                            "owner": decision.owner,
                            "expires_on": decision.expires_on.isoformat(),
                        },
                    )
                ]
            )
        members = _members_to_tell(organization, decision.created_by)
        if not has_expired:
            # In the app through the notifications; by email below, to those who want it.
            notify_risk_acceptance_expiring(decision=decision, recipients=members)
            members = emailed_about(members, NotificationEvent.RISK_ACCEPTANCE_EXPIRING)
        for member in members:
            sent = email_enqueue(
                event_key=f"{kind}:{decision.pk}:{decision.expires_on.isoformat()}:{member.pk}",
                kind=kind,
                to=member.email,
                language=member.preferred_language,
                template="risk_acceptance",
                context={
                    "decision": decision,
                    "assessment": decision.assessment,
                    "organization": organization,
                    "member": member,
                    "expired": has_expired,
                    "url": site_url(
                        "assessments:findings",
                        decision.assessment_id,
                        query=organization_query(organization),
                    ),
                },
                organization=organization,
            )
            if sent is not None:
                expired += has_expired
                expiring += not has_expired
    return expiring, expired


# -- the weekly digest ---------------------------------------------------------------------


@dataclass
class Digest:
    overdue: list[Assessment] = field(default_factory=list)
    due_soon: list[Assessment] = field(default_factory=list)
    reassessments_due: list[Assessment] = field(default_factory=list)
    renewals_to_send: list[Assessment] = field(default_factory=list)
    acceptances_expiring: list[RiskDecision] = field(default_factory=list)

    def __bool__(self) -> bool:
        return any(
            (
                self.overdue,
                self.due_soon,
                self.reassessments_due,
                self.renewals_to_send,
                self.acceptances_expiring,
            )
        )


def digest_for(*, organization: Organization, today: dt.date) -> Digest:
    horizon = today + dt.timedelta(days=settings.DIGEST_HORIZON_DAYS)
    deadlines = deadlines_for(organization=organization, today=today, horizon=horizon)
    return Digest(
        overdue=deadlines.overdue,
        due_soon=deadlines.due_soon,
        reassessments_due=deadlines.reassessments_due,
        renewals_to_send=list(
            Assessment.objects.filter(
                organization=organization,
                status=AssessmentStatus.DRAFT,
                renewal_of__isnull=False,
            )
            .select_related("vendor")
            .order_by("due_date", "pk")
        ),
        acceptances_expiring=deadlines.acceptances_expiring,
    )


def _digests(today_of: Today) -> int:
    """Once a week (ISO week), to every member who edits assessments, if there is news."""
    sent = 0
    organizations = Organization.objects.filter(memberships__isnull=False).distinct()
    for organization in organizations.order_by("pk"):
        today = today_of(organization)
        year, week, _weekday = today.isocalendar()
        digest = digest_for(organization=organization, today=today)
        if not digest:
            continue
        members = Membership.objects.filter(
            organization=organization, user__is_active=True
        ).select_related("user")
        for membership in members.order_by("pk"):
            if not role_can(membership.role, Capability.EDIT_ASSESSMENT):
                continue
            user = membership.user
            email = email_enqueue(
                event_key=f"digest:{organization.pk}:{user.pk}:{year}-W{week:02d}",
                kind=EmailKind.DIGEST,
                to=user.email,
                language=user.preferred_language,
                template="digest",
                context={
                    "digest": digest,
                    "organization": organization,
                    "member": user,
                    "today": today,
                    "dashboard_url": site_url(
                        "assessments:dashboard", query=organization_query(organization)
                    ),
                    "site_url": settings.SITE_URL.rstrip("/"),
                    "in_organization": f"?{organization_query(organization)}",
                },
                organization=organization,
            )
            sent += email is not None
    return sent
