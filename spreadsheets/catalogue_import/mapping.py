"""Which column holds which field: the mapping the person confirms on the mapping screen.

`suggest_mapping` proposes one from the preset (detected when not given), else from the headers'
names; `column_choices` and `sample_rows` are what the screen shows to confirm or change it. The
confirmed `ColumnMapping` is what the import reads the rows with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.utils.translation import gettext_lazy
from openpyxl.utils import get_column_letter

from .presets import HEADER_NAMES, SECTION_FROM_CODE, SECTION_FROM_SHEET, detect_preset, presets
from .tables import MAX_COLUMNS, SheetTable, WorkbookTables, find_header_row, header_key

SAMPLE_ROWS = 3

FIELDS = (
    "code",
    "section",
    "text_en",
    "text_zh",
    "help_en",
    "help_zh",
    "type",
    "options",
    "required",
)
REQUIRED_FIELDS = ("code", "text_en")
FIELD_LABELS = {
    "code": gettext_lazy("Question code"),
    "section": gettext_lazy("Section"),
    "text_en": gettext_lazy("Question (English)"),
    "text_zh": gettext_lazy("Question (Traditional Chinese)"),
    "help_en": gettext_lazy("Help (English)"),
    "help_zh": gettext_lazy("Help (Traditional Chinese)"),
    "type": gettext_lazy("Answer type"),
    "options": gettext_lazy("Options"),
    "required": gettext_lazy("Required"),
}


@dataclass(frozen=True)
class ColumnMapping:
    """Which column (1-based) holds which field, in which sheets, below which header row."""

    sheets: tuple[str, ...]
    header_row: int
    columns: Mapping[str, int]  # field → column; a field not mapped is absent
    section_from: str = SECTION_FROM_CODE  # when no column holds the section
    default_type: str = "text"
    default_required: bool = False
    default_options: tuple[tuple[str, str, str], ...] = ()  # (code, en, zh-hant)
    preset: str = ""


def suggest_mapping(tables: WorkbookTables, preset_key: str = "") -> ColumnMapping:
    """The mapping the screen starts from: the preset's (detected when not given), else the
    columns whose headers name a field. The sheets are those whose header row holds the code
    column; the header row is the first of the first rows that names one."""
    preset = presets().get(preset_key or detect_preset(tables))
    names: Mapping[str, tuple[str, ...]] = preset.headers if preset else HEADER_NAMES
    all_names = [name for field_names in names.values() for name in field_names]
    chosen: list[str] = []
    header_row = 1
    for sheet in tables.sheets:
        found = find_header_row(sheet, names["code"])
        if found is not None:
            if not chosen:
                header_row = found
            if found == header_row:
                chosen.append(sheet.name)
    if not chosen:
        first = tables.sheets[0]
        chosen = [first.name]
        header_row = find_header_row(first, all_names) or 1
    headers = tables.sheet(chosen[0]).headers(header_row)
    columns: dict[str, int] = {}
    for field_name in FIELDS:
        keys = [header_key(name) for name in names.get(field_name, ())]
        for wanted in keys:  # in the order given: the preferred name first
            match = next(
                (i for i, header in enumerate(headers, start=1) if header_key(header) == wanted),
                None,
            )
            if match is not None:
                columns[field_name] = match
                break
    section_from = preset.section_from if preset else SECTION_FROM_CODE
    if not preset and len(chosen) > 1:
        section_from = SECTION_FROM_SHEET
    return ColumnMapping(
        sheets=tuple(chosen),
        header_row=header_row,
        columns=columns,
        section_from=section_from,
        default_type=preset.default_type if preset else "text",
        default_required=preset.default_required if preset else False,
        default_options=preset.default_options if preset else (),
        preset=preset.key if preset else "",
    )


def column_choices(sheet: SheetTable, header_row: int) -> list[tuple[int, str]]:
    """Every column of the header row, as the mapping screen names it: "C — Question"."""
    headers = sheet.headers(header_row)
    width = sheet.width()
    return [
        (
            index,
            f"{get_column_letter(index)} — {headers[index - 1]}"
            if index <= len(headers) and headers[index - 1]
            else get_column_letter(index),
        )
        for index in range(1, min(width, MAX_COLUMNS) + 1)
    ]


def sample_rows(
    tables: WorkbookTables, mapping: ColumnMapping, count: int = SAMPLE_ROWS
) -> list[tuple[str, int, tuple[str, ...]]]:
    """The first rows under the header, for the mapping screen: (sheet, row, cells shown)."""
    samples = []
    for name in mapping.sheets:
        for number, cells in tables.sheet(name).data_rows(mapping.header_row):
            width = tables.sheet(name).width()
            samples.append((name, number, tuple(c.shown[:80] for c in cells[:width])))
            if len(samples) >= count:
                return samples
    return samples
