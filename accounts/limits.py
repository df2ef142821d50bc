"""Rate limits on the emails anyone can make AVIA send: password resets (anyone who knows an
address) and member invitations (an owner, or a stolen owner session).

* Per recipient address, counted in the outbox (the database): at most RESET_LIMIT_PER_ADDRESS
  reset emails and INVITATION_LIMIT_PER_ADDRESS invitations to one address an hour, and at most
  INVITATION_LIMIT_PER_ORGANIZATION invitations from one organization. The database is always
  there, so these hold with the cache down.
* Per client address, counted in the cache: at most RESET_LIMIT_PER_CLIENT reset requests an
  hour. With the cache down this count is skipped (it fails open): refusing every reset during
  an outage would lock members out, and the per-address limit above still keeps anyone's inbox
  from being flooded.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext as _

from core.cache import cache_count
from outbox.models import EmailKind
from outbox.selectors import emails_written_since

from .models import Organization

WINDOW = dt.timedelta(hours=1)


def _since() -> dt.datetime:
    return timezone.now() - WINDOW


def reset_email_allowed(*, to_address: str) -> bool:
    """Whether one more reset email may be written to the address (the page's answer is the
    same either way: the limit tells nothing about the account)."""
    written = emails_written_since(kind=EmailKind.PASSWORD_RESET, since=_since())
    return written.filter(to_address__iexact=to_address).count() < settings.RESET_LIMIT_PER_ADDRESS


def reset_client_refused(request: HttpRequest) -> bool:
    """Count a reset request of the client's address; True past the limit (never with the
    cache down)."""
    address = (request.META.get("REMOTE_ADDR") or "unknown")[:64]
    count = cache_count(f"reset-requests:{address}", window_seconds=int(WINDOW.total_seconds()))
    return count is not None and count > settings.RESET_LIMIT_PER_CLIENT


def reset_refused_message() -> str:
    return _("Too many password reset requests from your network: try again in an hour.")


def invitation_problem(*, organization: Organization, to_address: str) -> str | None:
    """Why one more invitation may not be sent now (None when it may)."""
    written = emails_written_since(kind=EmailKind.MEMBER_INVITATION, since=_since())
    if (
        written.filter(organization=organization).count()
        >= settings.INVITATION_LIMIT_PER_ORGANIZATION
        or written.filter(to_address__iexact=to_address).count()
        >= settings.INVITATION_LIMIT_PER_ADDRESS
    ):
        return _("Too many invitations were sent in the last hour: try again later.")
    return None
