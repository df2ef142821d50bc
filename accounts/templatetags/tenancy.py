"""`{% form_guard %}`: what every POST form of a member page starts with, in place of
`{% csrf_token %}` — the CSRF token and the organization the page was drawn for, which
accounts.tenancy checks when the form is submitted (a tab left open in another organization
cannot write into the current one). A page without an organization (sign in) gets the CSRF
token alone. `{% page_organization_id %}` is the same id for <body>'s htmx header."""

from __future__ import annotations

from django import template
from django.template.context import RequestContext
from django.template.defaulttags import CsrfTokenNode
from django.utils.html import format_html
from django.utils.safestring import SafeString

from accounts.tenancy import PAGE_ORGANIZATION_FIELD, page_organization

register = template.Library()


@register.simple_tag(takes_context=True)
def form_guard(context: RequestContext) -> SafeString:
    csrf = CsrfTokenNode().render(context)
    request = context.get("request")
    user = getattr(request, "user", None)
    organization = (
        page_organization(request) if user is not None and user.is_authenticated else None
    )
    if organization is None:
        return SafeString(csrf)
    return format_html(
        '{}<input type="hidden" name="{}" value="{}">',
        SafeString(csrf),
        PAGE_ORGANIZATION_FIELD,
        organization.pk,
    )


@register.simple_tag(takes_context=True)
def page_organization_id(context: RequestContext) -> str:
    """The id the page's htmx requests carry in their X-Page-Organization header ("" when none)."""
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return ""
    organization = page_organization(request)
    return str(organization.pk) if organization is not None else ""
