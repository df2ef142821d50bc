"""The upload form of a filled questionnaire workbook, and the two steps of a questionnaire
import from a spreadsheet (the file, then the mapping of its columns)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _

from questionnaires.spec import ANSWER_TYPES

from .catalogue_import.mapping import (
    FIELD_LABELS,
    FIELDS,
    REQUIRED_FIELDS,
    ColumnMapping,
    column_choices,
)
from .catalogue_import.presets import presets
from .catalogue_import.rows import LABEL_MAX_LENGTH
from .catalogue_import.tables import HEADER_SEARCH_ROWS, WorkbookTables
from .layout import CONTENT_TYPE

XLSX_ACCEPT = f".xlsx,{CONTENT_TYPE}"  # what a file input offers to pick


class WorkbookUploadForm(forms.Form):
    workbook = forms.FileField(
        label=_("Filled workbook (.xlsx)"),
        help_text=_(
            "The workbook downloaded here, with the answers typed in. Every answer is checked "
            "as on the web pages; if any is not valid, nothing is saved."
        ),
        widget=forms.ClearableFileInput(attrs={"accept": XLSX_ACCEPT}),
    )


class QuestionnaireSpreadsheetForm(forms.Form):
    """Step one of a questionnaire import: the spreadsheet, and the layout it has."""

    workbook = forms.FileField(
        label=_("Questionnaire spreadsheet (.xlsx)"),
        help_text=_(
            "Any Excel workbook with one question per row. Next you choose which column holds "
            "what; nothing is saved until the whole sheet is valid."
        ),
        widget=forms.ClearableFileInput(attrs={"accept": XLSX_ACCEPT}),
    )
    preset = forms.ChoiceField(
        label=_("Layout"),
        required=False,
        help_text=_("Recognised from the column headers when left as it is."),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["preset"].choices = preset_choices()


def preset_choices() -> list[tuple[str, Any]]:
    return [
        ("", _("Recognise it from the headers")),
        *((key, preset.label) for key, preset in presets().items()),
        (NO_PRESET, _("My own layout: I map the columns")),
    ]


NO_PRESET = "none"


class ColumnMappingForm(forms.Form):
    """Step two: which column holds which field, pre-filled from the preset or the headers."""

    title_en = forms.CharField(
        label=_("Questionnaire title (English)"), max_length=LABEL_MAX_LENGTH
    )
    title_zh = forms.CharField(
        label=_("Questionnaire title (Traditional Chinese)"),
        max_length=LABEL_MAX_LENGTH,
        required=False,
        help_text=_("Needed when the questions have a Chinese column."),
    )
    slug = forms.SlugField(
        label=_("Short name"),
        max_length=60,
        required=False,
        help_text=_("Letters, digits and hyphens; made from the English title when left empty."),
    )
    sheets = forms.MultipleChoiceField(
        label=_("Sheets holding questions"), widget=forms.CheckboxSelectMultiple
    )
    header_row = forms.IntegerField(
        label=_("Header row"),
        min_value=1,
        max_value=HEADER_SEARCH_ROWS,
        help_text=_("The row with the column names; the questions are the rows below it."),
    )
    default_type = forms.ChoiceField(
        label=_("Answer type when the row gives none"), choices=[(t, t) for t in ANSWER_TYPES]
    )
    default_required = forms.BooleanField(
        label=_("Questions are required when the row does not say"), required=False
    )
    preset = forms.CharField(widget=forms.HiddenInput, required=False)

    def __init__(
        self, *args: Any, tables: WorkbookTables, suggested: ColumnMapping, **kwargs: Any
    ) -> None:
        kwargs.setdefault(
            "initial",
            {
                "sheets": list(suggested.sheets),
                "header_row": suggested.header_row,
                "default_type": suggested.default_type,
                "default_required": suggested.default_required,
                "preset": suggested.preset,
                **{name: str(column) for name, column in suggested.columns.items()},
            },
        )
        super().__init__(*args, **kwargs)
        self.tables = tables
        self.suggested = suggested
        self.fields["sheets"].choices = [(name, name) for name in tables.names]
        first = tables.sheet(suggested.sheets[0])
        columns = [("", _("— not in the workbook —"))] + [
            (str(index), label) for index, label in column_choices(first, suggested.header_row)
        ]
        for name in FIELDS:
            self.fields[name] = forms.ChoiceField(
                label=FIELD_LABELS[name], choices=columns, required=name in REQUIRED_FIELDS
            )
        self.order_fields(
            ["title_en", "title_zh", "slug", "sheets", "header_row", *FIELDS, "default_type"]
        )

    def mapping(self) -> ColumnMapping:
        data = self.cleaned_data
        preset = presets().get(data.get("preset") or "")
        same_defaults = preset is not None and data["default_type"] == preset.default_type
        return ColumnMapping(
            sheets=tuple(data["sheets"]),
            header_row=data["header_row"],
            columns={name: int(data[name]) for name in FIELDS if data.get(name)},
            section_from=preset.section_from if preset else self.suggested.section_from,
            default_type=data["default_type"],
            default_required=data["default_required"],
            default_options=preset.default_options if preset and same_defaults else (),
            preset=preset.key if preset else "",
        )

    def slug_value(self) -> str:
        return (
            self.cleaned_data.get("slug")
            or slugify(self.cleaned_data["title_en"])[:60]
            or "imported"
        )
