"""The upload form of a filled questionnaire workbook."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _


class WorkbookUploadForm(forms.Form):
    workbook = forms.FileField(
        label=_("Filled workbook (.xlsx)"),
        help_text=_(
            "The workbook downloaded here, with the answers typed in. Every answer is checked "
            "as on the web pages; if any is not valid, nothing is saved."
        ),
        widget=forms.ClearableFileInput(
            attrs={
                "accept": ".xlsx,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
            }
        ),
    )
