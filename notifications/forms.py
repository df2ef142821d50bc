from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import NotificationEvent


class PreferencesForm(forms.Form):
    """Two boxes per event: in the app, by email."""

    def __init__(self, *args, initial_choices: dict[str, tuple[bool, bool]], **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        for event in NotificationEvent:
            in_app, email = initial_choices[event.value]
            self.fields[f"{event.value}__in_app"] = forms.BooleanField(
                label=_("In AVIA"), required=False, initial=in_app
            )
            self.fields[f"{event.value}__email"] = forms.BooleanField(
                label=_("By email"), required=False, initial=email
            )

    def rows(self) -> list[tuple[str, forms.BoundField, forms.BoundField]]:
        return [
            (event.label, self[f"{event.value}__in_app"], self[f"{event.value}__email"])
            for event in NotificationEvent
        ]

    def choices(self) -> dict[str, tuple[bool, bool]]:
        return {
            event: (self.cleaned_data[f"{event}__in_app"], self.cleaned_data[f"{event}__email"])
            for event in NotificationEvent.values
        }
