from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from .events import SUBSCRIBABLE


class EndpointForm(forms.Form):
    url = forms.URLField(
        label=_("Endpoint address"),
        max_length=500,
        assume_scheme="https",
        help_text=_("An https:// address of the system that receives the events."),
    )
    description = forms.CharField(
        label=_("Description"),
        max_length=200,
        required=False,
        help_text=_("What receives the events, for example “Service desk (ServiceNow)”."),
    )
    events = forms.MultipleChoiceField(
        label=_("Events"),
        choices=[(event.value, event.label) for event in SUBSCRIBABLE],
        widget=forms.CheckboxSelectMultiple,
    )
