"""The web side of `core.errors`, in one place: a service's refusal shown on the page that
asked for it. A `ForbiddenError` is never shown beside a field: it is the 403 page."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .errors import ForbiddenError, ServiceError


def add_errors(form: forms.Form, error: ServiceError) -> None:
    """Put each message beside the field it names (a question code is a field of the answer
    forms), or at the top of the form for anything else."""
    if isinstance(error, ForbiddenError):
        raise error
    for key, key_messages in error.errors.items():
        for message in key_messages:
            form.add_error(key if key in form.fields else None, message)


def add_messages(request: HttpRequest, error: ServiceError) -> None:
    """For a page without a form (a button that redirects): each message as an error notice."""
    if isinstance(error, ForbiddenError):
        raise error
    for message in error.messages:
        messages.error(request, message)


def error_summary(*forms_: forms.Form) -> list[dict[str, str]]:
    """Every error of the forms, each linked to its field, for the summary at the top of a
    page. An answer field (named by its question code) is labelled by the code."""
    items = []
    for form in forms_:
        for message in form.non_field_errors():
            items.append({"label": "", "message": message, "href": ""})
        for name, field_messages in form.errors.items():
            if name not in form.fields:
                continue
            bound = form[name]
            target = _focus_target(bound)
            label = name if getattr(form.fields[name], "question", None) else str(bound.label)
            for message in field_messages:
                items.append({"label": label, "message": message, "href": f"#{target}"})
    return items


def _focus_target(bound: forms.BoundField) -> str:
    """The id of the control a summary link should focus: for a group of radio buttons or
    checkboxes, its first option (the group's wrapper, which some widgets give the field's id,
    cannot take the focus)."""
    if isinstance(bound.field.widget, forms.RadioSelect | forms.CheckboxSelectMultiple):
        for option in bound.subwidgets:
            if option.id_for_label:
                return option.id_for_label
        # No option on the page (a search that found nothing): the field itself, as
        # `assessments/_field.html` wraps it.
        return f"field-{bound.auto_id}"
    return bound.id_for_label or f"{bound.auto_id}_0"


def confirm_page(
    request: HttpRequest,
    *,
    title: str,
    explanation: str,
    confirm_label: str,
    cancel_url: str,
    danger: bool = True,
) -> HttpResponse:
    """The confirm step of a destructive or irreversible button, without JavaScript: the
    button's GET shows this page, whose form POSTs back to the same address to act."""
    return render(
        request,
        "confirm.html",
        {
            "title": title,
            "explanation": explanation,
            "confirm_label": confirm_label,
            "cancel_url": cancel_url,
            "danger": danger,
            "action": request.get_full_path(),
        },
    )


def logo_response(organization: Any) -> HttpResponse:
    """An organization's logo (an `accounts.Organization` with one, read by its attributes),
    for its members' pages and its vendors' portal: private, never sniffed, and an SVG opened
    directly runs nothing, even if validation missed something."""
    response = HttpResponse(bytes(organization.logo), content_type=organization.logo_content_type)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    response["Cache-Control"] = "private, max-age=300"
    return response
