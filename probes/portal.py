"""The vendor portal's probe page: where a vendor that answered PRB-01 "yes" gives the test
endpoint, the model, two test tenants' keys and the signed authorisation.

It goes through the portal's one access helper (`portal_view`): the link reaches its own
assessment only, and anything else is the portal's 404. The keys are typed into password
fields, saved encrypted by `probe_setup_save` and never shown again — not on this page, not
back into the form after a refused post, not in any message. The page says that they are held
and lets the vendor replace them.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.debug import sensitive_post_parameters

from assessments.models import Channel
from assessments.portal.access import Portal, portal_view
from assessments.portal.common import portal_context, question_url
from assessments.services.answers import answer_values, probe_consented
from core.errors import ServiceError
from core.formats import format_tokens
from core.web import add_errors, error_summary

from .endpoint import HTTPS_ONLY_MESSAGE
from .forms import DATETIME_INPUT, ProbeSetupForm
from .models import ProbeSetup
from .presenters import cost_plan, setup_facts
from .services.setup import consent_codes, probe_setup_check, probe_setup_save

# The shared spec's probe.md sizes the prompts from the context the vendor advertises (CTX-01).
DECLARED_CONTEXT_QUESTION = "CTX-01"
VENDOR_HTTPS_MESSAGE = gettext_noop(
    "Use an https:// address: plain http:// is accepted only for an endpoint on this server "
    "itself (127.0.0.1, ::1, localhost)."
)


@sensitive_post_parameters("key_a", "key_b")
@portal_view
def probe_setup(request: HttpRequest, portal: Portal) -> HttpResponse:
    if portal.spec.probe_question is None:
        raise Http404  # questionnaire version 1 asks for no probe
    setup = ProbeSetup.objects.filter(assessment=portal.assessment).first()
    declared_context = answer_values(portal.assessment).get(DECLARED_CONTEXT_QUESTION)
    consented = probe_consented(portal.assessment)
    if request.method != "POST":
        form = ProbeSetupForm(initial=_initial(setup))
        return _render(request, portal, form, setup, declared_context, consented)
    form = ProbeSetupForm(request.POST)
    status = 400
    if not form.is_valid():
        _add_the_other_problems(form, declared_context)
    else:
        data = form.cleaned_data
        try:
            probe_setup_save(
                assessment=portal.assessment,
                base_url=data["base_url"],
                model_name=data["model_name"],
                declared_context=declared_context,
                key_a=data["key_a"],
                key_b=data["key_b"],
                signer_name=data["signer_name"],
                spend_ceiling_tokens=data["spend_ceiling_tokens"],
                window_starts_at=data["window_starts_at"],
                window_ends_at=data["window_ends_at"],
                channel=Channel.VENDOR_LINK,
                vendor_link=portal.link,
            )
        except ServiceError as exc:
            add_errors(form, _for_this_page(exc))
            status = exc.status_code
        else:
            messages.success(
                request,
                _(
                    "Saved. The two keys are held encrypted; they are never shown again and "
                    "are destroyed when the probe ends."
                ),
            )
            return redirect(reverse("probes:portal_setup", args=[portal.token]))
    return _render(request, portal, form, setup, declared_context, consented, status=status)


def _add_the_other_problems(form: ProbeSetupForm, declared_context: int | None) -> None:
    """A form refused for some fields (an unticked box, a missing name) also shows what the
    service would refuse in the others, so that one round shows every problem."""
    data = form.cleaned_data
    try:
        probe_setup_check(
            base_url=data.get("base_url", ""),
            model_name=data.get("model_name", ""),
            declared_context=declared_context,
            key_a=data.get("key_a", ""),
            key_b=data.get("key_b", ""),
            signer_name=data.get("signer_name", ""),
            spend_ceiling_tokens=data.get("spend_ceiling_tokens"),
            window_starts_at=data.get("window_starts_at"),
            window_ends_at=data.get("window_ends_at"),
        )
    except ServiceError as exc:
        refused = set(form.errors)
        if refused & {"window_starts_at", "window_ends_at"}:
            refused |= {"window_starts_at", "window_ends_at"}  # the window is judged whole
        others = {f: m for f, m in _for_this_page(exc).errors.items() if f not in refused}
        if others:
            add_errors(form, ServiceError(others))


def _for_this_page(error: ServiceError) -> ServiceError:
    """The service names the declared context by its field; this page takes it from CTX-01,
    so the message says which answer to change. The vendor is told the https rule in plain
    words, not the operator setting that could relax it."""
    errors = dict(error.errors)
    if "base_url" in errors:
        errors["base_url"] = [
            _(VENDOR_HTTPS_MESSAGE) if message == _(HTTPS_ONLY_MESSAGE) else message
            for message in errors["base_url"]
        ]
    if "declared_context" in errors:
        messages_ = errors.pop("declared_context")
        errors[DECLARED_CONTEXT_QUESTION] = [
            f"{DECLARED_CONTEXT_QUESTION}: {message}" for message in messages_
        ]
    return type(error)(errors)


def _initial(setup: ProbeSetup | None) -> dict[str, Any]:
    """The saved set-up's fields for the form — everything except the keys."""
    if setup is None:
        return {}
    return {
        "base_url": setup.base_url,
        "model_name": setup.model_name,
        "signer_name": setup.signer_name,
        "spend_ceiling_tokens": setup.spend_ceiling_tokens,
        "window_starts_at": timezone.localtime(setup.window_starts_at).strftime(DATETIME_INPUT),
        "window_ends_at": timezone.localtime(setup.window_ends_at).strftime(DATETIME_INPUT),
    }


def _render(
    request: HttpRequest,
    portal: Portal,
    form: ProbeSetupForm,
    setup: ProbeSetup | None,
    declared_context: int | None,
    consented: bool,
    *,
    status: int = 200,
) -> HttpResponse:
    language = portal.language
    section = portal.spec.section(portal.spec.probe_question.section)  # type: ignore[union-attr]
    return render(
        request,
        "probes/portal_setup.html",
        portal_context(
            portal,
            form=form,
            error_summary=error_summary(form),
            setup=setup,
            setup_facts=setup_facts(setup) if setup else [],
            keys_held=setup is not None and setup.keys_present,
            consented=consented,
            consent_codes=consent_codes(portal.assessment),
            section_url=reverse("portal:section", args=[portal.token, section.code]),
            section_code=section.code,
            context_question=DECLARED_CONTEXT_QUESTION,
            context_url=question_url(portal, DECLARED_CONTEXT_QUESTION),
            declared_context=format_tokens(declared_context, language)
            if isinstance(declared_context, int)
            else "",
            plan=cost_plan(declared_context) if isinstance(declared_context, int) else None,
            time_zone=portal.assessment.organization.time_zone,
        ),
        status=status,
    )
