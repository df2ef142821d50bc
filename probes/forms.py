"""The probe's two forms: the vendor's set-up and authorisation (portal) and an assessor's
request for a run. Shape only; every rule that matters is checked by the services."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from assessments.presenters.probe import CHECK_TITLES

from .result import CHECKS
from .services.setup import MAX_CEILING_TOKENS, MAX_KEY_LENGTH

DATETIME_INPUT = "%Y-%m-%dT%H:%M"


class _LocalDateTimeInput(forms.DateTimeInput):
    """The browser's date-and-time picker; the value is read in the organization's time zone."""

    input_type = "datetime-local"

    def __init__(self) -> None:
        super().__init__(format=DATETIME_INPUT)


class _KeyInput(forms.PasswordInput):
    """A key is typed, never shown: not even back into the field after a refused form."""

    def __init__(self) -> None:
        super().__init__(render_value=False, attrs={"autocomplete": "off", "spellcheck": "false"})


class ProbeSetupForm(forms.Form):
    """What the vendor enters on the portal's probe page (the declared context is its answer to
    CTX-01, not typed again)."""

    base_url = forms.CharField(
        label=_("Base URL of the test endpoint"),
        max_length=2000,
        help_text=_(
            "For example https://api.vendor.example: the probe sends POST requests to "
            "{base URL}/v1/chat/completions. https only; no user name or password in it."
        ),
    )
    model_name = forms.CharField(
        label=_("Model name"),
        max_length=200,
        help_text=_("The model field of each request, as your API expects it."),
    )
    key_a = forms.CharField(
        label=_("API key of test tenant A"),
        max_length=MAX_KEY_LENGTH,
        strip=False,
        widget=_KeyInput(),
    )
    key_b = forms.CharField(
        label=_("API key of test tenant B"),
        max_length=MAX_KEY_LENGTH,
        strip=False,
        widget=_KeyInput(),
        help_text=_("A key of a different test tenant from A."),
    )
    signer_name = forms.CharField(
        label=_("Signed by (name and role)"),
        max_length=200,
        help_text=_("The person who authorises the probe for your organization."),
    )
    spend_ceiling_tokens = forms.IntegerField(
        label=_("Spend ceiling (prompt tokens)"),
        min_value=1,
        max_value=MAX_CEILING_TOKENS,
        help_text=_("The probe never spends more than this, over all its runs."),
    )
    window_starts_at = forms.DateTimeField(
        label=_("Authorised from"), input_formats=[DATETIME_INPUT], widget=_LocalDateTimeInput()
    )
    window_ends_at = forms.DateTimeField(
        label=_("Authorised until"), input_formats=[DATETIME_INPUT], widget=_LocalDateTimeInput()
    )
    # A short label (the error summary names the field by it); what is signed is the help.
    authorise = forms.BooleanField(
        label=_("I sign this authorisation for my organization"),
        help_text=_(
            "AVIA may send the requests described on this page to this endpoint, with these "
            "two test tenants' keys, inside this window and within this ceiling."
        ),
        error_messages={"required": _("Tick this box to sign: nothing is sent without it.")},
    )


class ProbeRunForm(forms.Form):
    """How an assessor asks for a run (the budget follows from the vendor's ceiling)."""

    checks = forms.MultipleChoiceField(
        label=_("Checks"),
        choices=[(name, CHECK_TITLES[name]) for name in CHECKS],
        widget=forms.CheckboxSelectMultiple,
    )
    samples = forms.IntegerField(
        label=_("Prefix-cache samples (n)"), min_value=1, max_value=1000, required=False
    )
    prefix_tokens = forms.IntegerField(
        label=_("Prefix length (tokens)"), min_value=1, max_value=1_000_000, required=False
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault(
            "initial",
            {
                "checks": list(CHECKS),
                "samples": settings.PROBE_SAMPLES,
                "prefix_tokens": settings.PROBE_PREFIX_TOKENS,
            },
        )
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
