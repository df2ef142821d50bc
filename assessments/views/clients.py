"""A consultancy's pages: its clients (open one), copying from another organization, and the
client's page that ends the consultancy's access (assessments.services.clients)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.selectors import clients_of, engagement_of, membership_for, memberships_for_user
from accounts.tenancy import (
    OrgContext,
    member_page_context,
    org_context_for,
    organization_query,
    switch_organization,
)
from core.errors import ServiceError
from core.web import add_errors, confirm_page, error_summary
from questionnaires.models import CatalogStatus
from scoring.selectors import rulesets_owned_by

from .. import forms as web_forms
from .. import selectors
from ..models import Channel
from ..services.clients import CopyResult, client_copy, client_engagement_end, client_open


@member_page
def clients(request: HttpRequest, org: OrgContext) -> HttpResponse:
    """The consultancy's clients (the URL names the consultancy), each opened in its own
    workspace (`?org=`), and, for its owner, the form that opens a new one. Only a consultancy
    has this page (403 elsewhere)."""
    if not org.organization.is_consultancy:
        raise PermissionDenied
    form = web_forms.ClientOpenForm(request.POST if request.method == "POST" else None)
    if request.method == "POST":
        org.require(Capability.MANAGE_MEMBERS)
        if form.is_valid():
            try:
                client = client_open(
                    member=org, name=form.cleaned_data["name"], channel=Channel.WEB
                )
            except ServiceError as error:
                add_errors(form, error)
            else:
                # The new workspace becomes the session's: the next pages act in it.
                switch_organization(request=request, organization_id=client.pk)
                messages.success(
                    request,
                    _("The client workspace %(client)s is open. Invite its people here.")
                    % {"client": client.name},
                )
                return redirect("accounts:members", organization_slug=client.slug)
    member_of = {membership.organization_id for membership in memberships_for_user(user=org.user)}
    return render(
        request,
        "assessments/clients.html",
        {
            "org": org,
            "form": form,
            "error_summary": error_summary(form),
            "can_open": org.can(Capability.MANAGE_MEMBERS),
            "rows": [
                {
                    "engagement": engagement,
                    "client": engagement.client,
                    "is_member": engagement.client_id in member_of,
                    "query": organization_query(engagement.client),
                }
                for engagement in clients_of(consultancy=org.organization)
            ],
        },
        status=400 if form.errors else 200,
    )


@member_page(capability=Capability.MANAGE_BRANDING)
def client_copy_view(request: HttpRequest, org: OrgContext) -> HttpResponse:
    """Copy vendors, the reassessment policy and branding into this organization (the URL's)
    from another one the member belongs to (`?from=<slug>`: a 404 unless a member of it)."""
    source_slug = (request.POST if request.method == "POST" else request.GET).get(
        "source" if request.method == "POST" else "from", ""
    )
    source = org_context_for(user=org.user, organization_slug=source_slug) if source_slug else None
    if source is not None and source.organization.pk == org.organization.pk:
        raise Http404
    form = None
    if source is not None:
        vendor_choices = [
            (vendor.pk, vendor.name)
            for vendor in selectors.vendors_for(organization=source.organization).order_by("name")
        ]
        catalogue_choices = [
            (ruleset.pk, ruleset.choice_label(translation.get_language() or "en"))
            for ruleset in rulesets_owned_by(organization=source.organization)
            .filter(status=CatalogStatus.PUBLISHED)
            .order_by("slug", "pk")
        ]
        form = web_forms.ClientCopyForm(
            request.POST if request.method == "POST" else None,
            vendor_choices=vendor_choices,
            catalogue_choices=catalogue_choices,
            initial={"source": source.organization.slug},
        )
        if request.method == "POST" and form.is_valid():
            try:
                result = client_copy(
                    source=source,
                    target=org,
                    vendor_ids=form.cleaned_data["vendors"],
                    policy=form.cleaned_data["policy"],
                    branding=form.cleaned_data["branding"],
                    catalogue_ids=form.cleaned_data.get("catalogues") or [],
                    channel=Channel.WEB,
                )
            except ServiceError as error:
                add_errors(form, error)
            else:
                _copied_messages(request, result, source=source, target=org)
                back = reverse("assessments:client_copy", args=[org.organization.slug])
                return redirect(f"{back}?{urlencode({'from': source.organization.slug})}")
    elif request.method == "POST":
        raise Http404
    sources = [
        membership.organization
        for membership in memberships_for_user(user=org.user)
        if membership.organization_id != org.organization.pk
    ]
    return render(
        request,
        "assessments/client_copy.html",
        {
            **member_page_context(org),
            "org": org,
            "source": source.organization if source else None,
            "sources": sources,
            "form": form,
            "error_summary": error_summary(form) if form is not None else [],
        },
        status=400 if form is not None and form.errors else 200,
    )


def _copied_messages(
    request: HttpRequest, result: CopyResult, *, source: OrgContext, target: OrgContext
) -> None:
    words = {"source": source.organization.name, "target": target.organization.name}
    # Vendors and questionnaires: the same two messages, naming what was copied or skipped.
    for what, copied, skipped in (
        (_("Vendors"), result.vendors, result.vendors_skipped),
        (_("Questionnaires"), result.catalogues, result.catalogues_skipped),
    ):
        if copied:
            messages.success(
                request,
                _("%(what)s copied from %(source)s to %(target)s: %(names)s.")
                % {**words, "what": what, "names": ", ".join(copied)},
            )
        if skipped:
            messages.info(
                request,
                _("%(target)s already has %(names)s: left as it is.")
                % {**words, "names": ", ".join(skipped)},
            )
    if result.policy:
        messages.success(request, _("The reassessment policy of %(source)s was copied.") % words)
    if result.branding:
        messages.success(request, _("The branding of %(source)s was copied.") % words)


@member_page(capability=Capability.MANAGE_MEMBERS)
@require_http_methods(["GET", "POST"])
def client_engagement_end_view(request: HttpRequest, org: OrgContext) -> HttpResponse:
    """The client ends the access of the consultancy that opened it (a confirm step first)."""
    engagement = engagement_of(client=org.organization)
    members = reverse("accounts:members", args=[org.organization.slug])
    if request.method == "GET":
        if engagement is None or not engagement.is_active:
            raise Http404
        return confirm_page(
            request,
            title=_("End the access of %(consultancy)s to %(client)s?")
            % {"consultancy": engagement.consultancy.name, "client": org.organization.name},
            explanation=_(
                "Every member of %(consultancy)s leaves %(client)s at once, and its reports, "
                "emails and vendor pages no longer name %(consultancy)s. What they did stays in "
                "the audit trail."
            )
            % {"consultancy": engagement.consultancy.name, "client": org.organization.name},
            confirm_label=_("End access"),
            cancel_url=members,
        )
    try:
        ended = client_engagement_end(member=org, channel=Channel.WEB)
    except ServiceError as error:
        for message in error.messages:
            messages.error(request, message)
        return redirect(members)
    messages.success(
        request,
        _("%(consultancy)s no longer has access to %(client)s.")
        % {"consultancy": ended.consultancy.name, "client": org.organization.name},
    )
    if membership_for(user=org.user, organization=org.organization) is None:
        return redirect("accounts:organizations")
    return redirect(members)
