"""Pages of two-factor sign-in: set up (QR code and backup codes), verify, switch off; and the
owner's switch that makes an organization require it."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import rotate_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from django_otp import login as otp_login
from django_otp.models import Device

from accounts.tenancy import org_context_for
from accounts.two_factor import (
    backup_codes_issue,
    backup_codes_left,
    is_safe_next,
    organization_require_two_factor,
    totp_enrolment_confirm,
    totp_enrolment_start,
    totp_manual_key,
    totp_pending_device,
    totp_qr_svg,
    two_factor_disable,
    two_factor_enrolled,
    two_factor_required,
    two_factor_verify,
)


class CodeForm(forms.Form):
    code = forms.CharField(
        label=gettext_lazy("Code"),
        max_length=20,
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "autofocus": True}
        ),
    )


class RequireTwoFactorForm(forms.Form):
    require_two_factor = forms.BooleanField(required=False)


def _next_url(request: HttpRequest) -> str:
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    return candidate if is_safe_next(request, candidate) else ""


def _verified_session(request: HttpRequest, device: Device) -> None:
    """Mark the session verified by `device`, under a new session key and CSRF token (as
    Django's own sign-in does): a key seen while only the password was given stays unverified."""
    request.session.cycle_key()
    rotate_token(request)
    otp_login(request, device)


def _add_errors(form: forms.Form, error: ValidationError) -> None:
    for field, messages_ in error.message_dict.items():
        form.add_error(field if field in form.fields else None, messages_)


@never_cache
@login_required
def two_factor(request: HttpRequest) -> HttpResponse:
    """Status and enrolment: scan the QR code, confirm with a code, get backup codes."""
    user = request.user
    changes_devices = request.method == "POST" or bool(request.GET.get("replace"))
    if changes_devices and not user.is_verified() and two_factor_enrolled(user=user):
        # New backup codes, or a new authenticator (whose code would verify this session):
        # only after the current second factor, never on the password alone.
        query = urlencode({"next": reverse("accounts:two_factor")})
        return redirect(f"{reverse('accounts:two_factor_verify')}?{query}")
    form = CodeForm(request.POST if request.method == "POST" else None)
    backup_codes: list[str] | None = None
    status = 200
    if request.method == "POST" and request.POST.get("action") == "backup_codes":
        if not user.is_verified():
            return redirect("accounts:two_factor_verify")
        backup_codes = backup_codes_issue(user=user)
        form = CodeForm()
    elif request.method == "POST":
        if form.is_valid():
            try:
                device, backup_codes = totp_enrolment_confirm(
                    user=user, code=form.cleaned_data["code"], verified=user.is_verified()
                )
            except ValidationError as error:
                _add_errors(form, error)
            else:
                _verified_session(request, device)
                messages.success(request, _("Two-factor sign-in is set up."))
                form = CodeForm()
        if backup_codes is None:
            status = 400
    enrolled = two_factor_enrolled(user=user)
    pending = None
    if request.method == "GET" and (not enrolled or request.GET.get("replace")):
        # A new secret for each fresh page.
        pending = totp_enrolment_start(user=user, verified=user.is_verified())
    elif status == 400:
        pending = totp_pending_device(user=user)  # the code was wrong: same QR code again
    return render(
        request,
        "accounts/two_factor.html",
        {
            "enrolled": enrolled,
            "verified": user.is_verified(),
            "required": two_factor_required(user=user),
            "qr_svg": totp_qr_svg(device=pending) if pending is not None else "",
            "manual_key": totp_manual_key(device=pending) if pending is not None else "",
            "form": form,
            "backup_codes": backup_codes,
            "backup_codes_left": backup_codes_left(user=user),
            "next": _next_url(request),
        },
        status=status,
    )


@never_cache
@login_required
def two_factor_verify_view(request: HttpRequest) -> HttpResponse:
    form = CodeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            device = two_factor_verify(user=request.user, code=form.cleaned_data["code"])
        except ValidationError as error:
            _add_errors(form, error)
        else:
            _verified_session(request, device)
            return redirect(_next_url(request) or "/")
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "accounts/two_factor_verify.html",
        {"form": form, "next": _next_url(request)},
        status=status,
    )


@never_cache
@login_required
def two_factor_disable_view(request: HttpRequest) -> HttpResponse:
    """Switch two-factor off; asks for a current code, so a borrowed session cannot."""
    form = CodeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            two_factor_verify(user=request.user, code=form.cleaned_data["code"])
            two_factor_disable(user=request.user)
        except ValidationError as error:
            _add_errors(form, error)
        else:
            messages.success(request, _("Two-factor sign-in is switched off."))
            return redirect("accounts:two_factor")
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "accounts/two_factor_disable.html",
        {"form": form, "required": two_factor_required(user=request.user)},
        status=status,
    )


@login_required
@require_POST
def organization_two_factor(request: HttpRequest, organization_slug: str) -> HttpResponse:
    context = org_context_for(user=request.user, organization_slug=organization_slug)
    form = RequireTwoFactorForm(request.POST)
    form.is_valid()  # a checkbox: always valid
    required = bool(form.cleaned_data.get("require_two_factor"))
    try:
        organization_require_two_factor(
            organization=context.organization,
            actor=request.user,
            actor_verified=request.user.is_verified(),
            required=required,
        )
    except ValidationError as error:
        for message in error.messages:
            messages.error(request, message)
    else:
        messages.success(
            request,
            _("Members must now use two-factor sign-in.")
            if required
            else _("Two-factor sign-in is no longer required."),
        )
    return redirect("accounts:members", organization_slug=context.organization.slug)
