"""Forms of the portfolio pages: they check the shape of the input; the services decide."""

from __future__ import annotations

import json
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


# -- the rule workbench ---------------------------------------------------------------------------

# An answer set is a few kilobytes; a file far larger is not one.
ANSWERS_FILE_MAX_BYTES = 256 * 1024


def answers_from_json(text: str | bytes) -> dict[str, Any]:
    """The `answers` of a JSON document in the API's shape (`{"answers": {...}}`), or a bare
    object of question codes; `ValueError` saying what is wrong."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(
            _("The file is not JSON (line %(line)s): %(reason)s")
            % {"line": getattr(exc, "lineno", 1), "reason": getattr(exc, "msg", str(exc))}
        ) from None
    if isinstance(data, dict) and isinstance(data.get("answers"), dict):
        data = data["answers"]
    if not isinstance(data, dict):
        raise ValueError(_("The file must hold an object of answers by question code."))
    return data


class AnswersUploadForm(forms.Form):
    """A set of answers as a JSON file, in the API's `answers` shape."""

    answers_file = forms.FileField(
        label=_("Answers file (JSON)"),
        help_text=_(
            'As the API takes them: {"answers": {"PRF-05": "sglang", ...}}, or the object of '
            "answers alone."
        ),
    )

    def clean_answers_file(self) -> dict[str, Any]:
        upload = self.cleaned_data["answers_file"]
        if upload.size > ANSWERS_FILE_MAX_BYTES:
            raise forms.ValidationError(
                _("The file is larger than %(size)s KB.") % {"size": ANSWERS_FILE_MAX_BYTES // 1024}
            )
        try:
            return answers_from_json(upload.read(ANSWERS_FILE_MAX_BYTES + 1))
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None


class AssessmentPickForm(forms.Form):
    assessment = forms.TypedChoiceField(label=_("Assessment"), coerce=int)

    def __init__(self, *args: Any, assessments: list[Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["assessment"].choices = [
            (a.pk, f"{a.vendor.name} {a.reference}") for a in assessments
        ]


class TestCaseForm(forms.Form):
    """Saving the answers just tried as a test case: its name, and the answers as JSON."""

    name = forms.CharField(label=_("Test case name"), max_length=120)
    answers_json = forms.CharField(widget=forms.HiddenInput, max_length=ANSWERS_FILE_MAX_BYTES)

    def clean_answers_json(self) -> dict[str, Any]:
        try:
            return answers_from_json(self.cleaned_data["answers_json"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None


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
