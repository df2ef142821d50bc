"""Forms of the portfolio pages: they check the shape of the input; the services decide."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from assessments.models import RiskTier
from assessments.services.reassessment import MAX_DAYS


class RescoreFilterForm(forms.Form):
    ruleset = forms.ChoiceField(label=_("Rescore with"), required=False)
    vendor = forms.CharField(label=_("Vendor name contains"), required=False, max_length=200)
    tier = forms.ChoiceField(
        label=_("Risk tier now"),
        required=False,
        choices=[("", _("Any tier")), *RiskTier.choices],
    )

    def __init__(self, *args: Any, ruleset_keys: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["ruleset"].choices = [(key, key) for key in ruleset_keys]

    def filters(self) -> dict[str, str]:
        data = self.cleaned_data if self.is_bound and self.is_valid() else {}
        return {key: data.get(key) or "" for key in ("vendor", "tier")}


def _days_field(label: str) -> forms.IntegerField:
    return forms.IntegerField(label=label, min_value=1, max_value=MAX_DAYS)


class ReassessmentPolicyForm(forms.Form):
    critical = _days_field(_("Critical: days until the next assessment"))
    high = _days_field(_("High: days until the next assessment"))
    medium = _days_field(_("Medium: days until the next assessment"))
    low = _days_field(_("Low: days until the next assessment"))


class CatalogueUploadForm(forms.Form):
    """A catalogue file (YAML, docs/catalogue-format.md). Its size is checked by the service,
    which reads at most one byte more than the limit."""

    file = forms.FileField(
        label=_("Catalogue file (YAML)"),
        help_text=_("A questionnaire with its ruleset, in the format of the catalogue guide."),
    )


class CatalogueShareForm(forms.Form):
    organization = forms.ChoiceField(label=_("Share with"))

    def __init__(self, *args: Any, organizations: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["organization"].choices = [(str(pk), name) for pk, name in organizations]
