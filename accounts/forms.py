"""Forms validate input shape for the pages; services re-validate and save."""

from django import forms
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from accounts.roles import Role
from accounts.validators import (
    LOGO_MAX_BYTES,
    known_time_zones,
    logo_content_type,
    validate_brand_colour,
)
from core.ids import IdField


class EmailAuthenticationForm(AuthenticationForm):
    username = forms.EmailField(
        label=_("Email address"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autofocus": True, "autocomplete": "email"}),
    )

    def clean_username(self) -> str:
        # Stored addresses are lower-case (see UserManager).
        return self.cleaned_data["username"].strip().lower()

    def confirm_login_allowed(self, user: User) -> None:
        super().confirm_login_allowed(user)
        # Checks of other apps (an organization that requires single sign-on), named in
        # settings.PASSWORD_SIGN_IN_CHECKS: each raises ValidationError to refuse.
        for check in settings.PASSWORD_SIGN_IN_CHECKS:
            import_string(check)(user)


class SwitchOrganizationForm(forms.Form):
    organization_id = IdField()


class ApiTokenCreateForm(forms.Form):
    name = forms.CharField(
        label=_("Name"),
        max_length=100,
        help_text=_("What the token is for, for example “procurement spreadsheet”."),
    )


class MemberAddForm(forms.Form):
    email = forms.EmailField(label=_("Email address"), max_length=254)
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices, initial=Role.VIEWER)
    language = forms.ChoiceField(
        label=_("Language of the invitation"),
        choices=settings.LANGUAGES,
        initial=settings.LANGUAGE_CODE,
        required=False,
        help_text=_("A new member's invitation and pages start in this language."),
    )


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(label=_("Role"), choices=Role.choices)


def time_zone_choices() -> list[tuple[str, str]]:
    """Every IANA zone this machine knows, by name (Asia/Hong_Kong, Europe/London, …)."""
    return [(zone, zone) for zone in known_time_zones()]


class BrandingForm(forms.Form):
    report_display_name = forms.CharField(
        label=_("Name shown on reports"),
        max_length=200,
        required=False,
        help_text=_("Leave empty to use the organization's name."),
    )
    brand_colour = forms.CharField(
        label=_("Brand colour"),
        max_length=7,
        required=False,
        validators=[validate_brand_colour],
        help_text=_("# followed by six hexadecimal digits, for example #1A5FB4."),
        widget=forms.TextInput(attrs={"placeholder": "#1A5FB4", "pattern": "#[0-9A-Fa-f]{6}"}),
    )
    logo = forms.FileField(
        label=_("Logo"),
        required=False,
        help_text=_("PNG or SVG, at most 1 MB."),
        widget=forms.FileInput(attrs={"accept": "image/png,image/svg+xml"}),
    )
    remove_logo = forms.BooleanField(label=_("Remove the current logo"), required=False)
    email_sender_name = forms.CharField(
        label=_("Email sender name"),
        max_length=100,
        required=False,
        help_text=_(
            "The name the organization's emails come from. Leave empty to use the name shown "
            "on reports."
        ),
    )
    email_reply_to = forms.EmailField(
        label=_("Reply-to address"),
        max_length=254,
        required=False,
        help_text=_("Replies to the organization's emails go here. Leave empty for none."),
    )
    time_zone = forms.ChoiceField(
        label=_("Time zone"),
        choices=time_zone_choices,
        required=False,  # not sent: the zone stays as it is
        help_text=_("Dates and times on pages, in reports and in emails use this time zone."),
    )

    def clean_logo(self) -> bytes | None:
        """The logo's bytes, checked by content rather than by name or declared type."""
        upload = self.cleaned_data.get("logo")
        if not upload:
            return None
        if upload.size > LOGO_MAX_BYTES:
            raise ValidationError(_("The logo must be 1 MB or smaller."), code="logo_too_large")
        data = upload.read()
        logo_content_type(data)
        return data
