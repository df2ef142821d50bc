"""A member's notifications in the current organization, and what they choose to receive."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.decorators import member_page
from accounts.tenancy import OrgContext

from . import selectors
from .forms import PreferencesForm
from .services import notifications_mark_read, preferences_of, preferences_save

PAGE_SIZE = 50


@member_page
def notification_list(request: HttpRequest, org: OrgContext) -> HttpResponse:
    found = selectors.notifications_for(user=org.user, organization=org.organization)
    page = Paginator(found, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "notifications/list.html", {"org": org, "page": page})


@member_page
def notification_open(request: HttpRequest, org: OrgContext, notification_id: int) -> HttpResponse:
    """Open the page a notification is about, marking it read."""
    found = selectors.notification_get(
        user=org.user, organization=org.organization, notification_id=notification_id
    )
    if found.read_at is None:
        found.read_at = timezone.now()
        found.save(update_fields=["read_at"])
    # Written by AVIA, but checked all the same: only a path within this site is followed.
    safe = url_has_allowed_host_and_scheme(
        found.path, allowed_hosts=None
    ) and found.path.startswith("/")
    return redirect(found.path if safe else "notifications:list")


@member_page
@require_POST
def notifications_read(request: HttpRequest, org: OrgContext) -> HttpResponse:
    count = notifications_mark_read(user=org.user, organization=org.organization)
    messages.success(request, _("%(count)s notifications marked read.") % {"count": count})
    return redirect("notifications:list")


@member_page
def notification_settings(request: HttpRequest, org: OrgContext) -> HttpResponse:
    form = PreferencesForm(
        request.POST if request.method == "POST" else None,
        initial_choices=preferences_of(org.user),
    )
    if request.method == "POST" and form.is_valid():
        preferences_save(user=org.user, choices=form.choices())
        messages.success(request, _("Your choices are saved."))
        return redirect("notifications:settings")
    return render(request, "notifications/settings.html", {"org": org, "form": form})
