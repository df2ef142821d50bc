"""The owner's webhook pages: the endpoints, each one's deliveries, and the test button."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.errors import ServiceError
from core.web import add_errors, error_summary

from . import selectors
from .forms import EndpointForm
from .services import endpoint_create, endpoint_delete, endpoint_test_send

PAGE_SIZE = 50
# The new endpoint's secret, shown once on the page after it was created.
SECRET_SESSION_KEY = "webhook_secret_once"


@member_page(capability=Capability.MANAGE_WEBHOOKS)
def endpoints(request: HttpRequest, org: OrgContext) -> HttpResponse:
    form = EndpointForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                endpoint, secret = endpoint_create(
                    organization=org.organization, actor=org.user, **form.cleaned_data
                )
            except ServiceError as error:
                add_errors(form, error)
            else:
                request.session[SECRET_SESSION_KEY] = {"id": endpoint.pk, "secret": secret}
                messages.success(request, _("The endpoint is registered."))
                return redirect("webhooks:endpoint", endpoint.pk)
        status = 400
    context = {
        "org": org,
        "form": form,
        "endpoints": selectors.endpoints_for(organization=org.organization),
        "error_summary": error_summary(form) if form.is_bound else [],
    }
    return render(request, "webhooks/endpoints.html", context, status=status)


@member_page(capability=Capability.MANAGE_WEBHOOKS)
def endpoint(request: HttpRequest, org: OrgContext, endpoint_id: int) -> HttpResponse:
    found = selectors.endpoint_get(organization=org.organization, endpoint_id=endpoint_id)
    shown = request.session.get(SECRET_SESSION_KEY)
    secret = None
    if shown and shown.get("id") == found.pk:
        secret = shown["secret"]
        del request.session[SECRET_SESSION_KEY]  # once: never shown again
    page = Paginator(selectors.deliveries_for(endpoint=found), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    context = {"org": org, "endpoint": found, "secret": secret, "page": page}
    return render(request, "webhooks/endpoint.html", context)


@member_page(capability=Capability.MANAGE_WEBHOOKS)
@require_POST
def endpoint_test(request: HttpRequest, org: OrgContext, endpoint_id: int) -> HttpResponse:
    found = selectors.endpoint_get(organization=org.organization, endpoint_id=endpoint_id)
    endpoint_test_send(endpoint=found)
    messages.success(request, _("A test event is on its way; its delivery is listed below."))
    return redirect("webhooks:endpoint", found.pk)


@member_page(capability=Capability.MANAGE_WEBHOOKS)
@require_POST
def endpoint_remove(request: HttpRequest, org: OrgContext, endpoint_id: int) -> HttpResponse:
    found = selectors.endpoint_get(organization=org.organization, endpoint_id=endpoint_id)
    endpoint_delete(endpoint=found)
    messages.success(request, _("The endpoint is removed; it receives no more events."))
    return redirect("webhooks:endpoints")
