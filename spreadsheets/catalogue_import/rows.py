"""One question row being read: its cells by field, its text checked, its problems with their cell.

`QuestionRow` reads a field's cell through the mapping; a formula or an error value is a
problem of the row, never calculated, and a text is held to the catalogue's bounds
(`questionnaires.bounds`) by the one text check (`core.text.text_errors`). Every problem goes to
the import's one list with its sheet, row, column and the row's question code, so the import
names every bad row at once; each question's cells ("PRF!B7") are kept for the catalogue's own
checks to name.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _
from openpyxl.utils import get_column_letter

from core.text import text_errors
from questionnaires import bounds
from scoring.catalogue_files.document import LineMap

from ..reading import ERROR, FORMULA, CellError, cell_text
from .mapping import ColumnMapping
from .tables import Cell

# A cell's text is held to the bounds of every uploaded catalogue (questionnaires.bounds).
CODE_MAX_LENGTH = bounds.CATALOGUE_CODE_CHARS_MAX
TEXT_MAX_LENGTH = bounds.CATALOGUE_TEXT_CHARS_MAX
LABEL_MAX_LENGTH = bounds.CATALOGUE_LABEL_CHARS_MAX


@dataclass
class QuestionRow:
    """One question row being read; its problems go to the shared list, with where they are."""

    sheet: str
    number: int
    cells: tuple[Cell, ...]
    mapping: ColumnMapping
    errors: list[CellError]
    option_lists: tuple[tuple[str, ...], ...] = ()
    code: str = ""

    def cell(self, field_name: str) -> Cell | None:
        column = self.mapping.columns.get(field_name)
        if column is None:
            return None
        return self.cells[column - 1] if column <= len(self.cells) else Cell(None)

    def error(self, message: str, field_name: str | None = None) -> None:
        column = self.mapping.columns.get(field_name) if field_name else None
        self.errors.append(
            CellError(
                sheet=self.sheet,
                row=self.number,
                code=self.code,
                message=message,
                column=get_column_letter(column) if column else "",
            )
        )

    def ref(self, field_name: str = "code") -> str:
        """Where a field of this row is, as Excel names a cell: "PRF!B7" (else its row)."""
        column = self.mapping.columns.get(field_name) or self.mapping.columns.get("code")
        letter = get_column_letter(column) if column else ""
        return f"{self.sheet}!{letter}{self.number}"

    def record_cells(self, cells: LineMap, code: str) -> None:
        """Where the question and each of its fields are, for the catalogue's checks to name."""
        cells.by_code.setdefault(("question", code), []).append(self.ref("code"))
        for key, field_name in (
            ("text", "text_en"),
            ("help", "help_en"),
            ("type", "type"),
            ("options", "options"),
            ("required", "required"),
        ):
            if field_name in self.mapping.columns:
                cells.by_code.setdefault(("question", f"{code}.{key}"), []).append(
                    self.ref(field_name)
                )

    def text(self, field_name: str, max_length: int) -> str:
        """The cell's text ("" when blank or not mapped); a formula or an error value is a
        problem of the row, never calculated."""
        cell = self.cell(field_name)
        if cell is None or cell.value is None:
            return ""
        if cell.data_type == FORMULA:
            self.error(
                _(
                    "This cell holds a formula; AVIA never calculates formulas. "
                    "Type the text itself."
                ),
                field_name,
            )
            return ""
        if cell.data_type == ERROR:
            self.error(
                _("This cell shows an error (%(value)s); type the text itself.")
                % {"value": str(cell.value)[:20]},
                field_name,
            )
            return ""
        text = cell_text(cell.value).strip()
        problems = text_errors(text, max_length=max_length) if text else []
        for problem in problems:
            self.error(problem, field_name)
        return "" if problems else text


def bilingual_texts(english: str, chinese: str, bilingual: bool) -> dict[str, str]:
    """A text of the document: both languages, or `en` alone in an English-only questionnaire
    (never the English copied as its Chinese)."""
    return {"en": english, "zh-hant": chinese} if bilingual else {"en": english}
