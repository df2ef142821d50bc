"""Account pages: sign-in, organization switching, API tokens, members and branding.

Every organization page goes through `member_page` (404 for non-members, 403 without the
capability), then fetches objects only within the organization it resolved.
"""

import uuid
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.forms import Form
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseRedirect,
    QueryDict,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST
from django.views.i18n import set_language as django_set_language

from accounts.emails import OutboxPasswordResetForm, password_reset_request
from accounts.forms import (
    ApiTokenCreateForm,
    BrandingForm,
    EmailAuthenticationForm,
    MemberAddForm,
    MemberRoleForm,
    SwitchOrganizationForm,
)
from accounts.limits import reset_client_refused, reset_refused_message
from accounts.lockout import address_locked_out, lockout_response
from accounts.models import MembershipInvitation, Organization, User
from accounts.roles import Capability, Role, role_can
from accounts.selectors import (
    api_tokens_for,
    api_tokens_of_organization,
    engagement_of,
    invitations_for_user,
    members_of,
    memberships_for_user,
)
from accounts.services import (
    api_token_create,
    api_token_revoke,
    invitation_respond,
    membership_add,
    membership_change_role,
    membership_remove,
    organization_update_branding,
    user_preferred_language_set,
)
from accounts.tasks import send_password_reset
from accounts.tenancy import (
    OrgContext,
    member_page_context,
    org_context_for,
    org_context_for_request,
    switch_organization,
)
from core.errors import ServiceError
from core.queueing import publish
from core.web import add_errors, confirm_page, error_summary, logo_response

from .decorators import member_page, respond_in_language


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """The header's language switch: Django's `set_language` (cookie, safe redirect to `next`),
    and for a signed-in user the choice is also saved as their preferred language."""
    language = request.POST.get("language", "")
    if request.user.is_authenticated and language in dict(settings.LANGUAGES):
        user_preferred_language_set(user=request.user, language=language)
    return django_set_language(request)


class LoginView(auth_views.LoginView):
    template_name = "accounts/login.html"
    authentication_form = EmailAuthenticationForm
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if address_locked_out(request):  # guessing across accounts (accounts.lockout)
            return lockout_response(request, None, None)
        return super().post(request, *args, **kwargs)


class PasswordResetView(auth_views.PasswordResetView):
    """Django's own password reset; the email goes through the outbox, in the user's language.

    The page only checks the address's shape and hands it to a worker, which finds the account
    and writes the email: known and unknown addresses get the same answer in the same time."""

    template_name = "accounts/password_reset.html"
    form_class = OutboxPasswordResetForm
    success_url = reverse_lazy("accounts:password_reset_done")

    def form_valid(self, form: OutboxPasswordResetForm) -> HttpResponse:  # type: ignore[override]
        if reset_client_refused(self.request):
            form.add_error(None, reset_refused_message())
            response = self.form_invalid(form)
            response.status_code = 429
            return response
        email, request_id = form.cleaned_data["email"], uuid.uuid4().hex
        if not publish(send_password_reset, email, request_id):
            # The broker is down: do it here rather than lose the request.
            password_reset_request(email=email, request_id=request_id)
        return HttpResponseRedirect(self.get_success_url())


class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    template_name = "accounts/password_reset_done.html"


class PasswordSetView(auth_views.PasswordResetConfirmView):
    """Sets a password from a one-time link: a reset, or a new member's invitation."""

    template_name = "accounts/password_set.html"
    success_url = reverse_lazy("accounts:password_set_done")
    invitation = False

    def get_context_data(self, **kwargs: object) -> dict[str, object]:
        context = super().get_context_data(**kwargs)
        form = context.get("form")
        summary = error_summary(form) if isinstance(form, Form) else []
        return {**context, "invitation": self.invitation, "error_summary": summary}


class InvitationAcceptView(PasswordSetView):
    invitation = True

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # The page reads in the language the owner chose for the new member (the invitation
        # email's), unless this browser chose one; a browser's Accept-Language does not
        # outrank it. Only a valid link tells it.
        response = super().dispatch(request, *args, **kwargs)
        language = self.user.preferred_language if self.validlink and self.user else ""
        return respond_in_language(request, language, lambda: response)

    def get_user(self, uidb64: str) -> User | None:
        user = super().get_user(uidb64)
        # Removed before accepting: the invitation no longer leads to any organization, so it
        # must not make an account (the link's token outlives the membership).
        return user if user is not None and user.memberships.exists() else None


class PasswordSetDoneView(auth_views.PasswordResetCompleteView):
    template_name = "accounts/password_set_done.html"


class LogoutView(auth_views.LogoutView):
    next_page = reverse_lazy("accounts:login")


@login_required
def organizations(request: HttpRequest) -> HttpResponse:
    current = org_context_for_request(request)
    return render(
        request,
        "accounts/organizations.html",
        {
            "rows": [
                {
                    "membership": membership,
                    "can_manage_members": role_can(membership.role, Capability.MANAGE_MEMBERS),
                    "can_manage_branding": role_can(membership.role, Capability.MANAGE_BRANDING),
                }
                for membership in memberships_for_user(user=request.user)
            ],
            "current_organization_id": current.organization.pk if current else None,
            "invitations": invitations_for_user(user=request.user),
        },
    )


@login_required
@require_POST
def invitation_respond_view(request: HttpRequest, invitation_id: int, answer: str) -> HttpResponse:
    """Accept or decline an invitation to another organization (only the invited user's own)."""
    if answer not in ("accept", "decline"):
        raise Http404
    invitation = get_object_or_404(invitations_for_user(user=request.user), pk=invitation_id)
    organization = invitation.organization
    invitation_respond(invitation=invitation, user=request.user, accept=answer == "accept")
    if answer == "accept":
        messages.success(request, _("You joined %(org)s.") % {"org": organization.name})
    else:
        messages.success(
            request, _("You declined the invitation to %(org)s.") % {"org": organization.name}
        )
    return redirect("accounts:organizations")


@login_required
@require_POST
def switch(request: HttpRequest) -> HttpResponse:
    form = SwitchOrganizationForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest()
    context = switch_organization(
        request=request, organization_id=form.cleaned_data["organization_id"]
    )
    messages.success(
        request,
        _("You are now working in %(organization)s.") % {"organization": context.organization},
    )
    next_url = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(next_url)
    return redirect("accounts:organizations")


_CURRENT_ORGANIZATION_PAGES = {"tokens", "members", "branding"}


@login_required
def current_organization_page(request: HttpRequest, page: str) -> HttpResponse:
    """Stable links (/accounts/tokens/ …) to a page of whichever organization is current."""
    if page not in _CURRENT_ORGANIZATION_PAGES:
        raise Http404
    context = org_context_for_request(request)
    if context is None:
        return redirect("accounts:organizations")
    return redirect(f"accounts:{page}", organization_slug=context.organization.slug)


# API tokens ----------------------------------------------------------------------------


@member_page(capability=Capability.MANAGE_TOKENS)
def tokens(request: HttpRequest, context: OrgContext) -> HttpResponse:
    form = ApiTokenCreateForm(_posted(request))
    new_key = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                _token, new_key = api_token_create(
                    user=request.user,
                    organization=context.organization,
                    name=form.cleaned_data["name"],
                )
            except ServiceError as error:
                add_errors(form, error)
            else:
                form = ApiTokenCreateForm()
        if new_key is None:
            status = 400
    response = render(
        request,
        "accounts/tokens.html",
        {
            **member_page_context(context),
            "form": form,
            "error_summary": error_summary(form),
            "new_key": new_key,
            "tokens": api_tokens_for(user=request.user, organization=context.organization),
            "organization_tokens": (
                api_tokens_of_organization(organization=context.organization)
                if context.can(Capability.MANAGE_MEMBERS)
                else None
            ),
        },
        status=status,
    )
    if new_key:
        # The key is shown once: keep it out of every cache.
        response["Cache-Control"] = "no-store"
    return response


@member_page(capability=Capability.MANAGE_TOKENS)
@require_POST
def token_revoke(request: HttpRequest, context: OrgContext, token_id: int) -> HttpResponse:
    # Members see (and so may revoke) their own tokens; owners every member's.
    if context.can(Capability.MANAGE_MEMBERS):
        visible = api_tokens_of_organization(organization=context.organization)
    else:
        visible = api_tokens_for(user=request.user, organization=context.organization)
    token = get_object_or_404(visible, pk=token_id)
    api_token_revoke(token=token, actor=request.user)
    messages.success(request, _("The token %(name)s was revoked.") % {"name": token.name})
    return redirect("accounts:tokens", organization_slug=context.organization.slug)


# Members -------------------------------------------------------------------------------


@member_page(capability=Capability.MANAGE_MEMBERS)
def members(request: HttpRequest, context: OrgContext) -> HttpResponse:
    form = MemberAddForm(_posted(request))
    if request.method == "POST":
        if form.is_valid():
            try:
                membership = membership_add(
                    organization=context.organization,
                    email=form.cleaned_data["email"],
                    role=form.cleaned_data["role"],
                    actor=request.user,
                    language=form.cleaned_data["language"] or None,
                )
            except ServiceError as error:
                add_errors(form, error)
            else:
                template = (
                    _("%(email)s was invited as %(role)s: they join once they accept.")
                    if isinstance(membership, MembershipInvitation)
                    else _("%(email)s was added as %(role)s and invited by email.")
                )
                messages.success(
                    request,
                    template
                    % {"email": membership.user.email, "role": Role(membership.role).label},
                )
                return redirect("accounts:members", organization_slug=context.organization.slug)
        return _render_members(request, context, add_form=form, status=400)
    return _render_members(request, context, add_form=form)


@member_page(capability=Capability.MANAGE_MEMBERS)
@require_POST
def member_change_role(
    request: HttpRequest, context: OrgContext, membership_id: int
) -> HttpResponse:
    membership = get_object_or_404(members_of(organization=context.organization), pk=membership_id)
    form = MemberRoleForm(request.POST)
    if form.is_valid():
        try:
            membership_change_role(
                membership=membership, role=form.cleaned_data["role"], actor=request.user
            )
        except ServiceError as error:
            add_errors(form, error)
        else:
            messages.success(
                request,
                _("%(email)s is now %(role)s.")
                % {"email": membership.user.email, "role": Role(form.cleaned_data["role"]).label},
            )
            return _after_member_change(request, context)
    return _render_members(request, context, page_errors=_all_errors(form), status=400)


@member_page(capability=Capability.MANAGE_MEMBERS)
@require_http_methods(["GET", "POST"])
def member_remove(request: HttpRequest, context: OrgContext, membership_id: int) -> HttpResponse:
    membership = get_object_or_404(members_of(organization=context.organization), pk=membership_id)
    if request.method == "GET":
        return confirm_page(
            request,
            title=_("Remove %(email)s from %(organization)s?")
            % {"email": membership.user.email, "organization": context.organization.name},
            explanation=_(
                "They lose access to this organization's assessments at once. What they did "
                "stays in the audit trail; an owner can add them again."
            ),
            confirm_label=_("Remove"),
            cancel_url=reverse("accounts:members", args=[context.organization.slug]),
        )
    try:
        membership_remove(membership=membership, actor=request.user)
    except ServiceError as error:
        return _render_members(request, context, page_errors=error.messages, status=400)
    messages.success(
        request,
        _("%(email)s was removed from %(organization)s.")
        % {"email": membership.user.email, "organization": context.organization},
    )
    return _after_member_change(request, context)


def _after_member_change(request: HttpRequest, context: OrgContext) -> HttpResponse:
    # An owner who demoted or removed themselves can no longer see the members page.
    try:
        fresh = org_context_for(user=request.user, organization_slug=context.organization.slug)
    except Http404:
        return redirect("accounts:organizations")
    if not fresh.can(Capability.MANAGE_MEMBERS):
        return redirect("accounts:organizations")
    return redirect("accounts:members", organization_slug=context.organization.slug)


def _render_members(
    request: HttpRequest,
    context: OrgContext,
    *,
    add_form: MemberAddForm | None = None,
    page_errors: list[str] | None = None,
    status: int = 200,
) -> HttpResponse:
    add_form = add_form or MemberAddForm()
    page_errors = page_errors or []
    summary = error_summary(add_form) + [
        {"label": "", "message": message, "href": ""} for message in page_errors
    ]
    return render(
        request,
        "accounts/members.html",
        {
            **member_page_context(context),
            "members": members_of(organization=context.organization),
            "engagement": engagement_of(client=context.organization),
            "add_form": add_form,
            "role_choices": Role.choices,
            "page_errors": page_errors,
            "error_summary": summary,
        },
        status=status,
    )


# Branding ------------------------------------------------------------------------------


@member_page(capability=Capability.MANAGE_BRANDING)
def branding(request: HttpRequest, context: OrgContext) -> HttpResponse:
    organization = context.organization
    form = BrandingForm(
        _posted(request),
        request.FILES if request.method == "POST" else None,
        initial={
            "report_display_name": organization.report_display_name,
            "brand_colour": organization.brand_colour,
            "time_zone": organization.time_zone,
            "email_sender_name": organization.email_sender_name,
            "email_reply_to": organization.email_reply_to,
        },
    )
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                organization_update_branding(
                    organization=organization,
                    actor=request.user,
                    report_display_name=form.cleaned_data["report_display_name"],
                    brand_colour=form.cleaned_data["brand_colour"],
                    logo=form.cleaned_data["logo"],
                    remove_logo=form.cleaned_data["remove_logo"],
                    time_zone=form.cleaned_data["time_zone"] or None,
                    email_sender_name=form.cleaned_data["email_sender_name"],
                    email_reply_to=form.cleaned_data["email_reply_to"],
                )
            except ServiceError as error:
                add_errors(form, error)
            else:
                messages.success(request, _("The branding was saved."))
                return redirect("accounts:branding", organization_slug=organization.slug)
        status = 400
    return render(
        request,
        "accounts/branding.html",
        {**member_page_context(context), "form": form, "error_summary": error_summary(form)},
        status=status,
    )


@member_page
def logo(request: HttpRequest, context: OrgContext) -> HttpResponse:
    """The organization's logo, for its members only."""
    organization = (
        Organization.objects.filter(pk=context.organization.pk)
        .only("logo", "logo_content_type")
        .get()
    )
    if not organization.has_logo:
        raise Http404
    return logo_response(organization)


# Helpers -------------------------------------------------------------------------------


def _posted(request: HttpRequest) -> QueryDict | None:
    """The POST data to bind a form to, or None on GET (an empty POST is still a POST)."""
    return request.POST if request.method == "POST" else None


def _all_errors(form: Form) -> list[str]:
    return [message for messages_ in form.errors.values() for message in messages_]
