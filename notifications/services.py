"""Telling members what happened: `notify` writes each recipient's notification (in the app)
and email (through the outbox), in the recipient's language, as their preferences say.

Called inside the transaction of the change that caused the event, by the app that knows who
cares (`assessments.services.notices`); the keys make each event tell each member once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from django.utils import formats, timezone, translation
from django.utils.translation import gettext_lazy as _

from accounts.models import Membership, Organization, User
from accounts.roles import Capability, Role, role_can
from accounts.tenancy import organization_query
from core.db import create_once
from outbox.links import site_address, site_url
from outbox.models import EmailKind
from outbox.services import email_enqueue

from .models import Notification, NotificationEvent, NotificationPreference

# Each event's title, formatted in the recipient's language with the event's words.
TITLES = {
    NotificationEvent.SUBMITTED: _("%(vendor)s submitted its answers: ready for review"),
    NotificationEvent.TIER_CHANGED: _("%(vendor)s is now %(tier)s risk (was %(previous)s)"),
    NotificationEvent.CHANGES_ANSWERED: _("%(vendor)s answered the changes you requested"),
    NotificationEvent.SIGNED_OFF: _("%(vendor)s: %(decision)s by %(reviewer)s"),
    NotificationEvent.CONFIGURATION_CHANGE: _(
        "%(vendor)s declared a configuration change: %(changes)s"
    ),
    NotificationEvent.RISK_ACCEPTANCE_EXPIRING: _(
        "The acceptance of %(rule)s for %(vendor)s expires on %(date)s"
    ),
    NotificationEvent.THREAD_ANSWERED: _("%(vendor)s answered your question about %(code)s"),
}


def notify(
    *,
    organization: Organization,
    event: str,
    key: str,
    recipients: Iterable[User],
    words: Mapping[str, Any],
    path: str,
    email: bool = True,
) -> int:
    """Tell each of `recipients` still in `organization` about `event`; returns how many were
    told. `words` fill the event's title (lazy translations and dates are rendered in each
    recipient's language); `path` is the page the notification opens. `email=False`: the
    caller sends an email of its own (to `emailed_about` those who want one)."""
    members = {
        user.pk: user
        for user in recipients
        if user is not None
        and user.is_active
        and Membership.objects.filter(organization=organization, user=user).exists()
    }
    choices = {
        preference.user_id: preference
        for preference in NotificationPreference.objects.filter(user_id__in=members, event=event)
    }
    told = 0
    for user in members.values():
        choice = choices.get(user.pk)
        language = user.preferred_language or "en"
        with translation.override(language), timezone.override(organization.time_zone):
            title = str(TITLES[event]) % {name: _word(value) for name, value in words.items()}
        wrote = False
        if choice is None or choice.in_app:
            wrote = (
                create_once(
                    Notification,
                    organization=organization,
                    recipient=user,
                    event=event,
                    event_key=key[:200],
                    title=title[:300],
                    path=path,
                )
                is not None
            )
        if email and (choice is None or choice.email):
            sent = email_enqueue(
                event_key=f"notification:{key}:{user.pk}",
                kind=EmailKind.NOTIFICATION,
                to=user.email,
                language=language,
                template="notification",
                context={
                    "title": title,
                    # Opens in its own organization, whichever the reader is working in.
                    "url": site_address(f"{path}?{organization_query(organization)}"),
                    "settings_url": site_url("notifications:settings"),
                },
                organization=organization,
            )
            wrote = wrote or sent is not None
        told += wrote
    return told


def _word(value: Any) -> str:
    """A title's word in the active language: a date as the language writes dates."""
    if isinstance(value, dt.date):
        return formats.date_format(value, "DATE_FORMAT")
    return str(value)


def emailed_about(users: Iterable[User], event: str) -> list[User]:
    """Those of `users` who want `event` by email (everyone who has not said otherwise)."""
    users = list(users)
    declined = set(
        NotificationPreference.objects.filter(user__in=users, event=event, email=False).values_list(
            "user_id", flat=True
        )
    )
    return [user for user in users if user.pk not in declined]


def members_who_can(organization: Organization, capability: str) -> list[User]:
    """The organization's active members whose role grants `capability`."""
    return [
        membership.user
        for membership in Membership.objects.filter(
            organization=organization, user__is_active=True
        ).select_related("user")
        if role_can(membership.role, capability)
    ]


def owners_of(organization: Organization) -> list[User]:
    return [
        membership.user
        for membership in Membership.objects.filter(
            organization=organization, role=Role.OWNER, user__is_active=True
        ).select_related("user")
    ]


def reviewers_of(organization: Organization) -> list[User]:
    return members_who_can(organization, Capability.REVIEW)


def notifications_mark_read(
    *, user: User, organization: Organization, ids: Iterable[int] = ()
) -> int:
    """Mark the member's notifications read (those of `ids`, or all of them)."""
    unread = Notification.objects.filter(
        recipient=user, organization=organization, read_at__isnull=True
    )
    ids = list(ids)
    if ids:
        unread = unread.filter(pk__in=ids)
    return unread.update(read_at=timezone.now())


def preferences_save(*, user: User, choices: Mapping[str, tuple[bool, bool]]) -> None:
    """Save the member's choices: {event: (in_app, email)}."""
    for event, (in_app, email) in choices.items():
        NotificationPreference.objects.update_or_create(
            user=user, event=event, defaults={"in_app": in_app, "email": email}
        )


def preferences_of(user: User) -> dict[str, tuple[bool, bool]]:
    """{event: (in_app, email)} for every event, the defaults where nothing was chosen."""
    chosen = {
        preference.event: (preference.in_app, preference.email)
        for preference in NotificationPreference.objects.filter(user=user)
    }
    return {event: chosen.get(event, (True, True)) for event in NotificationEvent.values}
