from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from accounts.roles import Role


class SsoStartForm(forms.Form):
    email = forms.EmailField(
        label=_("Work email address"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )


class ProviderForm(forms.Form):
    issuer = forms.URLField(
        label=_("Issuer URL"),
        max_length=500,
        assume_scheme="https",
        help_text=_(
            "Your provider's address; AVIA reads /.well-known/openid-configuration under it."
        ),
    )
    client_id = forms.CharField(label=_("Client ID"), max_length=255)
    client_secret = forms.CharField(
        label=_("Client secret"),
        required=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
        help_text=_("Stored encrypted. Leave empty to keep the saved secret."),
    )
    email_domains = forms.CharField(
        label=_("Email domains it vouches for"),
        help_text=_("One or more, separated by spaces or commas, for example example.com."),
    )
    allow_join = forms.BooleanField(
        label=_("New users with one of these domains may join"), required=False
    )
    default_role = forms.ChoiceField(
        label=_("Role of a new member"), choices=Role.choices, initial=Role.VIEWER
    )
    require_sso = forms.BooleanField(
        label=_("Require single sign-on for everyone but the break-glass owner"), required=False
    )
    break_glass_owner = forms.ModelChoiceField(
        label=_("Break-glass owner"),
        queryset=User.objects.none(),
        required=False,
        help_text=_(
            "Keeps signing in with a password and two-factor, for when the provider is down."
        ),
    )

    def __init__(self, *args: object, owners: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["break_glass_owner"].queryset = owners  # type: ignore[attr-defined]

    def domains(self) -> list[str]:
        return self.cleaned_data["email_domains"].replace(",", " ").split()
