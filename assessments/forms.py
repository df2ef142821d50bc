"""Forms of the member pages. They check the shape of what was typed and give every problem as
a message beside its field, in the active language; the services check again and save.

Answers to catalogue questions are not here: the buyer's section and the vendor portal share one
form (`assessments.answer_forms`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from django import forms
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.ids import IdChoiceField
from questionnaires.spec import QuestionnaireSpec

from .answer_forms import DateInput
from .models import (
    AssessmentStatus,
    ConfigurationChange,
    ReviewDecision,
    RiskDecisionKind,
    RiskTier,
    Vendor,
)


def _future_date(value: dt.date | None, message: Any) -> dt.date | None:
    if value is not None and value <= timezone.localdate():
        raise forms.ValidationError(message, code="past")
    return value


# -- vendors -------------------------------------------------------------------------------


class VendorForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200)
    website = forms.URLField(
        label=_("Website"), required=False, max_length=200, assume_scheme="https"
    )
    contact_name = forms.CharField(label=_("Contact name"), max_length=200, required=False)
    contact_email = forms.EmailField(
        label=_("Contact email"),
        required=False,
        help_text=_("Suggested when you invite this vendor to answer an assessment."),
    )
    notes = forms.CharField(
        label=_("Notes"),
        max_length=4000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_("Only members of your organization see these notes."),
    )

    def clean_name(self) -> str:
        return self.cleaned_data["name"].strip()


# -- assessments -----------------------------------------------------------------------------


class AssessmentForm(forms.Form):
    """Vendor, questionnaire version and due date of a new assessment."""

    # Radios for the vendors the page shows (a bounded list: the first by name, or those a
    # search found); any of the organization's vendors is accepted when posted.
    vendor = IdChoiceField(
        label=_("Vendor"), queryset=Vendor.objects.none(), widget=forms.RadioSelect
    )
    questionnaire = forms.ChoiceField(
        label=_("Questionnaire version"),
        help_text=_("The vendor answers this version; it cannot change once the vendor starts."),
    )
    due_date = forms.DateField(
        label=_("Due date"),
        required=False,
        widget=DateInput(),
        help_text=_("When the vendor's answers are due. Overdue assessments are listed first."),
    )

    def __init__(
        self,
        *args: Any,
        vendors: Any,
        shown_vendors: Iterable[Vendor],
        questionnaires: Iterable[tuple[str, str]],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["vendor"].queryset = vendors
        self.fields["vendor"].widget.choices = [
            (vendor.pk, vendor.name) for vendor in shown_vendors
        ]
        self.fields["questionnaire"].choices = list(questionnaires)

    def clean_due_date(self) -> dt.date | None:
        return _future_date(
            self.cleaned_data.get("due_date"), _("The due date must be after today.")
        )


class DueDateAndLabelForm(forms.Form):
    label = forms.CharField(
        label=_("Label"),
        required=False,
        max_length=80,
        help_text=_(
            "Optional: a few words that tell this assessment apart from the vendor's others "
            "(e.g. “GLM-5.3 launch”), shown beside its number."
        ),
    )
    due_date = forms.DateField(
        label=_("Due date"),
        required=False,
        widget=DateInput(),
        help_text=_("Leave empty for no due date."),
    )


# -- vendor links ------------------------------------------------------------------------------


class InviteForm(forms.Form):
    contact_email = forms.EmailField(label=_("Contact email"))
    contact_name = forms.CharField(label=_("Contact name"), max_length=200, required=False)
    language = forms.ChoiceField(
        label=_("Language of the email and questionnaire"),
        choices=settings.LANGUAGES,
        initial="en",
        help_text=_("The vendor can switch language on every page."),
    )
    # The newest link of the assessment when the page was drawn (0: none): a second post of
    # the same form (a double click) must not replace the link the first one just emailed.
    links_seen = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)


# -- findings ---------------------------------------------------------------------------------


class FilterForm(forms.Form):
    """A GET form of list filters: an invalid value (e.g. an unknown status) filters nothing."""

    def filters(self) -> dict[str, Any]:
        self.is_valid()
        return {
            name: value
            for name, value in getattr(self, "cleaned_data", {}).items()
            if name not in self.errors and value not in ("", None, False)
        }


class FindingFilterForm(FilterForm):
    severity = forms.ChoiceField(label=_("Severity"), required=False)
    section = forms.ChoiceField(label=_("Section"), required=False)
    framework = forms.ChoiceField(label=_("Framework reference"), required=False)

    def __init__(
        self,
        *args: Any,
        sections: Iterable[tuple[str, str]],
        frameworks: Iterable[tuple[str, Any]],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["severity"].choices = [("", _("Any severity")), *RiskTier.choices]
        self.fields["section"].choices = [("", _("Any section")), *sections]
        self.fields["framework"].choices = [("", _("Any framework")), *frameworks]


class RiskDecisionForm(forms.Form):
    kind = forms.ChoiceField(
        label=_("Decision"),
        choices=RiskDecisionKind.choices,
        widget=forms.RadioSelect,
        initial=RiskDecisionKind.MITIGATION,
    )
    justification = forms.CharField(
        label=_("Justification"),
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("Why the risk is accepted, or what mitigates it. The finding stays listed."),
    )
    owner = forms.CharField(
        label=_("Owner"),
        max_length=200,
        help_text=_("The person accountable for this decision."),
    )
    expires_on = forms.DateField(
        label=_("Expiry date"),
        widget=DateInput(),
        help_text=_("The decision must be reviewed again by this date."),
    )

    def clean_expires_on(self) -> dt.date | None:
        return _future_date(
            self.cleaned_data.get("expires_on"), _("The expiry date must be in the future.")
        )


# -- review --------------------------------------------------------------------------------


class ReviewForm(forms.Form):
    decision = forms.ChoiceField(
        label=_("Decision"), choices=ReviewDecision.choices, widget=forms.RadioSelect
    )
    conditions = forms.CharField(
        label=_("Conditions"),
        required=False,
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("Required for “Approved with conditions”."),
    )
    message = forms.CharField(
        label=_("Message to the vendor"),
        required=False,
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("Required for “Changes requested”: the vendor sees it on their link."),
    )
    reopen_codes = forms.MultipleChoiceField(
        label=_("Questions to re-open"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_(
            "Required for “Changes requested”: only these questions can be changed by the vendor."
        ),
    )
    # The scoring run the page showed: a decision is about the findings the reviewer read.
    run = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    acknowledged_findings = forms.MultipleChoiceField(
        label=_("Approve despite these critical findings"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("To approve, tick each critical finding: you read it and approve anyway."),
    )

    def __init__(
        self,
        *args: Any,
        questionnaire: QuestionnaireSpec,
        language: str,
        critical: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["acknowledged_findings"].choices = [
            (rule_id, f"{rule_id} — {title}") for rule_id, title in (critical or {}).items()
        ]
        self.fields["reopen_codes"].choices = [
            (
                f"{section.code} — {section.title.get(language)}",
                [(q.code, f"{q.code} — {q.text.get(language)}") for q in section.questions],
            )
            for section in questionnaire.sections
            if section.vendor_facing
        ]
        # A message per question to re-open, posted in its clarification thread.
        for section in questionnaire.sections:
            if not section.vendor_facing:
                continue
            for question in section.questions:
                self.fields[f"thread_{question.code}"] = forms.CharField(
                    label=_("Message about %(code)s (optional)") % {"code": question.code},
                    required=False,
                    widget=forms.Textarea(attrs={"rows": 2}),
                )

    def thread_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.fields if name.startswith("thread_")]

    def threads_shown(self) -> bool:
        """Whether the messages' panel opens unfolded (one was typed, or refused)."""
        return any(field.errors or field.value() for field in self.thread_fields())

    def thread_notes(self) -> dict[str, str]:
        return {
            name.removeprefix("thread_"): value
            for name, value in self.cleaned_data.items()
            if name.startswith("thread_") and value
        }

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        decision = cleaned.get("decision")
        if (
            decision == ReviewDecision.APPROVED_WITH_CONDITIONS
            and not cleaned.get("conditions", "").strip()
        ):
            self.add_error("conditions", _("State the conditions of the approval."))
        if decision == ReviewDecision.CHANGES_REQUESTED:
            if not cleaned.get("reopen_codes"):
                self.add_error(
                    "reopen_codes", _("Choose the questions the vendor should answer again.")
                )
            if not cleaned.get("message", "").strip():
                self.add_error("message", _("Tell the vendor what to change."))
        return cleaned


# -- dashboard and comparison ---------------------------------------------------------------

NOT_SCORED = "unscored"


class DashboardFilterForm(FilterForm):
    q = forms.CharField(label=_("Vendor name"), required=False, max_length=200)
    status = forms.ChoiceField(
        label=_("Status"),
        required=False,
        choices=[("", _("Any status")), *AssessmentStatus.choices],
    )
    tier = forms.ChoiceField(
        label=_("Risk tier"),
        required=False,
        choices=[("", _("Any tier")), *RiskTier.choices, (NOT_SCORED, _("Not scored"))],
    )
    overdue = forms.BooleanField(label=_("Overdue only"), required=False)


MIN_COMPARED, MAX_COMPARED = 2, 5


class CompareForm(forms.Form):
    assessments = forms.MultipleChoiceField(
        label=_("Scored assessments"),
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Choose two to five."),
    )

    def __init__(self, *args: Any, choices: Iterable[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["assessments"].choices = list(choices)

    def clean_assessments(self) -> list[str]:
        chosen = self.cleaned_data["assessments"]
        if not MIN_COMPARED <= len(chosen) <= MAX_COMPARED:
            raise forms.ValidationError(
                _("Choose between %(min)s and %(max)s assessments; you chose %(count)s.")
                % {"min": MIN_COMPARED, "max": MAX_COMPARED, "count": len(chosen)},
                code="count",
            )
        return chosen


def add_service_errors(form: forms.Form, errors: Mapping[str, list[str]]) -> None:
    """Put a service's `{field: [messages]}` on the form: beside the field it names, or at the
    top of the form for anything else."""
    for key, messages in errors.items():
        for message in messages:
            form.add_error(key if key in form.fields else None, message)


class ReassessForm(forms.Form):
    """Start a reassessment now (`portfolio:reassess`): periodic, or after a declared change."""

    changes = forms.MultipleChoiceField(
        label=_("What changed in the deployment (leave empty for a periodic reassessment)"),
        choices=ConfigurationChange.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    note = forms.CharField(
        label=_("Note"), widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=4000
    )


class ThreadMessageForm(forms.Form):
    # Checked by the service (`core.text`, the length): one message per error, named there.
    body = forms.CharField(
        label=_("Message"), required=False, widget=forms.Textarea(attrs={"rows": 4})
    )


class ClientOpenForm(forms.Form):
    name = forms.CharField(
        label=_("Client's name"),
        max_length=200,
        help_text=_("A new organization of its own: you become its owner."),
    )


class ClientCopyForm(forms.Form):
    """What to copy from another organization the member belongs to (`source` by its slug)."""

    source = forms.SlugField(widget=forms.HiddenInput)
    vendors = forms.TypedMultipleChoiceField(
        label=_("Vendors"),
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("A vendor whose name this organization already has is left as it is."),
    )
    policy = forms.BooleanField(label=_("Reassessment policy"), required=False)
    branding = forms.BooleanField(
        label=_("Branding: colour, logo and time zone"),
        required=False,
        help_text=_("Names stay this organization's own."),
    )

    def __init__(self, *args: Any, vendor_choices: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["vendors"].choices = vendor_choices
