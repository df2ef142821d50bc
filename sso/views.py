"""Single sign-on pages: the start (an address finds its organization), the provider's
callback, and the owner's settings page."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.decorators import member_page
from accounts.models import User
from accounts.roles import Capability, Role
from accounts.tenancy import OrgContext, member_page_context
from accounts.two_factor import IDENTITY_PROVIDER_SESSION_KEY, is_safe_next
from core.errors import ServiceError
from core.web import add_errors, error_summary

from . import oidc
from .forms import ProviderForm, SsoStartForm
from .models import IdentityProvider
from .selectors import client_secret, email_domains, provider_for, provider_for_email
from .services import ProviderSettings, provider_configure, sign_in_member

# Flows started in this browser and not finished, by state; each is used once.
PENDING_SESSION_KEY = "sso_pending"
PENDING_MAX = 5
PENDING_SECONDS = 600


def _refused(request: HttpRequest, error: oidc.SsoRefused, status: int = 403) -> HttpResponse:
    form = SsoStartForm()
    return render(
        request,
        "sso/start.html",
        {"form": form, "refusal": error.message, "refusal_code": error.code},
        status=status,
    )


def _redirect_uri(request: HttpRequest) -> str:
    return request.build_absolute_uri(reverse("sso:callback"))


@never_cache
@require_http_methods(["GET", "POST"])
def start(request: HttpRequest) -> HttpResponse:
    form = SsoStartForm(request.POST if request.method == "POST" else None)
    if request.method != "POST":
        return render(
            request, "sso/start.html", {"form": form, "next": request.GET.get("next", "")}
        )
    if not form.is_valid():
        return render(
            request,
            "sso/start.html",
            {"form": form, "error_summary": error_summary(form)},
            status=400,
        )
    email = form.cleaned_data["email"].strip().lower()
    try:
        provider = provider_for_email(email=email)
        endpoints = oidc.discover(provider.issuer)
        url, flow = oidc.authorization_url(
            endpoints=endpoints,
            client_id=provider.client_id,
            redirect_uri=_redirect_uri(request),
            login_hint=email,
        )
    except oidc.SsoRefused as error:
        return _refused(request, error)
    now = time.time()
    pending = {
        state: entry
        for state, entry in request.session.get(PENDING_SESSION_KEY, {}).items()
        if now - entry["at"] < PENDING_SECONDS
    }
    next_url = request.POST.get("next", "")
    pending[flow.state] = {
        "provider": provider.pk,
        "nonce": flow.nonce,
        "verifier": flow.code_verifier,
        "next": next_url if is_safe_next(request, next_url) else "",
        "at": now,
    }
    newest = sorted(pending.items(), key=lambda item: item[1]["at"])[-PENDING_MAX:]
    request.session[PENDING_SESSION_KEY] = dict(newest)
    # A page that moves on by itself rather than a redirect: the login form's content security
    # policy (form-action 'self') makes the browser refuse a redirect to another origin.
    return render(
        request,
        "sso/continue.html",
        {"provider_url": url, "provider_host": urlsplit(url).netloc},
    )


@never_cache
def callback(request: HttpRequest) -> HttpResponse:
    state = request.GET.get("state", "")
    pending = request.session.get(PENDING_SESSION_KEY, {})
    entry = pending.pop(state, None)  # once: a replayed state finds nothing
    request.session[PENDING_SESSION_KEY] = pending
    if entry is None or time.time() - entry["at"] >= PENDING_SECONDS:
        return _refused(
            request,
            oidc.SsoRefused(
                _("This sign-in was already used or has expired. Start again."),
                code="replayed_state",
            ),
            status=400,
        )
    provider = (
        IdentityProvider.objects.select_related("organization").filter(pk=entry["provider"]).first()
    )
    if provider is None:
        return _refused(
            request,
            oidc.SsoRefused(
                _("Your organization no longer signs in with single sign-on."),
                code="unknown_organization",
            ),
        )
    if request.GET.get("error") or not request.GET.get("code"):
        return _refused(
            request,
            oidc.SsoRefused(
                _("Your organization's sign-in service refused the sign-in. Start again."),
                code="provider_error",
            ),
        )
    try:
        endpoints = oidc.discover(provider.issuer)
        claims = oidc.signed_in_claims(
            endpoints=endpoints,
            client_id=provider.client_id,
            client_secret=client_secret(provider=provider),
            redirect_uri=_redirect_uri(request),
            code=request.GET["code"],
            flow=oidc.PendingFlow(
                state=state, nonce=entry["nonce"], code_verifier=entry["verifier"]
            ),
        )
        user = sign_in_member(provider=provider, claims=claims)
    except oidc.SsoRefused as error:
        return _refused(request, error)
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    # Two-factor is for password sign-ins: the provider did the authenticating.
    request.session[IDENTITY_PROVIDER_SESSION_KEY] = provider.organization_id
    return redirect(entry["next"] or "/")


@member_page(capability=Capability.MANAGE_MEMBERS)
def provider_settings(request: HttpRequest, org: OrgContext) -> HttpResponse:
    organization = org.organization
    provider = provider_for(organization=organization)
    owners = User.objects.filter(
        memberships__organization=organization, memberships__role=Role.OWNER
    ).order_by("email")
    initial = (
        {
            "issuer": provider.issuer,
            "client_id": provider.client_id,
            "email_domains": " ".join(email_domains(provider=provider)),
            "allow_join": provider.allow_join,
            "default_role": provider.default_role,
            "require_sso": provider.require_sso,
            "break_glass_owner": provider.break_glass_owner_id,
        }
        if provider is not None
        else {"default_role": Role.VIEWER}
    )
    form = ProviderForm(
        request.POST if request.method == "POST" else None, initial=initial, owners=owners
    )
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                provider_configure(
                    organization=organization,
                    settings=ProviderSettings(
                        issuer=data["issuer"],
                        client_id=data["client_id"],
                        client_secret=data["client_secret"],
                        email_domains=form.domains(),
                        allow_join=data["allow_join"],
                        default_role=data["default_role"],
                        require_sso=data["require_sso"],
                        break_glass_owner_id=(
                            data["break_glass_owner"].pk if data["break_glass_owner"] else None
                        ),
                    ),
                )
            except ServiceError as error:
                add_errors(form, error)
            else:
                messages.success(request, _("Single sign-on settings are saved."))
                return redirect("sso:settings")
        status = 400
    context = {
        **member_page_context(org),
        "provider": provider,
        "form": form,
        "callback_url": _redirect_uri(request),
        "error_summary": error_summary(form) if form.is_bound else [],
    }
    return render(request, "sso/settings.html", context, status=status)
