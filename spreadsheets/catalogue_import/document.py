"""The confirmed mapping's rows as an uploaded catalogue: a questionnaire and its starter rules.

All or nothing: every row is read, and `WorkbookInvalid` names every bad row (sheet, row,
column, code, reason, in the active language) before anything is made. The result is a
`CatalogueDocument` (scoring.catalogue_files), the same as an uploaded YAML file gives, with
each question's cell for the catalogue's own checks to name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from scoring.catalogue_files.document import CatalogueDocument, LineMap

from ..reading import CellError, WorkbookInvalid, WorkbookRefused
from .mapping import ColumnMapping
from .questions import row_question, section_of, title_languages
from .rows import QuestionRow, bilingual_texts
from .starter_rules import starter_ruleset
from .tables import MAX_QUESTIONS, WorkbookTables, too_many_questions


@dataclass
class _Section:
    code: str
    title: str
    questions: list[dict[str, Any]] = field(default_factory=list)


def catalogue_document(
    tables: WorkbookTables,
    mapping: ColumnMapping,
    *,
    slug: str,
    title_en: str,
    title_zh: str = "",
    source_name: str = "questionnaire.xlsx",
) -> CatalogueDocument:
    """The spreadsheet as an uploaded catalogue (docs/catalogue-format.md, "Uploading a
    catalogue"): its questionnaire — version "1", every section answered by the vendor — with
    a starter ruleset (`starter_ruleset`), and the cell of each question ("PRF!A7") for the
    catalogue's checks to name. Raises `WorkbookInvalid` naming every bad row, or
    `WorkbookRefused`.

    A questionnaire is bilingual when a Chinese question column is mapped: then every question
    needs both texts. Without one it is English-only: its texts carry `en` alone, never a copy
    of the English as its Chinese (the catalogue marks such a version English-only)."""
    bilingual = "text_zh" in mapping.columns
    errors: list[CellError] = []
    cells = LineMap()
    sections: dict[str, _Section] = {}  # by title
    seen: dict[str, tuple[str, int]] = {}
    count = 0
    for sheet_name in mapping.sheets:
        sheet = tables.sheet(sheet_name)
        for number, row_cells in sheet.data_rows(mapping.header_row):
            count += 1
            if count > MAX_QUESTIONS:
                raise WorkbookRefused(too_many_questions(count))
            row = QuestionRow(sheet_name, number, row_cells, mapping, errors, tables.option_lists)
            question = row_question(row, bilingual)
            if question is None:
                continue
            if question["code"] in seen:
                first_sheet, first_row = seen[question["code"]]
                row.error(
                    _(
                        "Question code %(code)s is used twice (first in sheet %(sheet)s, "
                        "row %(row)s)."
                    )
                    % {"code": question["code"], "sheet": first_sheet, "row": first_row},
                    "code",
                )
                continue
            seen[question["code"]] = (sheet_name, number)
            row.record_cells(cells, question["code"])
            code, title = section_of(row, sheet)
            if title not in sections:
                taken = {section.code for section in sections.values()}
                if not code or code in taken:
                    code = f"S{len(sections) + 1}"
                sections[title] = _Section(code=code, title=title)
                cells.by_code.setdefault(("section", code), []).append(row.ref("section"))
            sections[title].questions.append(question)
    if errors:
        raise WorkbookInvalid(errors)
    if not sections:
        raise WorkbookRefused(
            _("No question rows were found under row %(row)s of the sheets chosen.")
            % {"row": mapping.header_row}
        )
    questionnaire: dict[str, Any] = {
        "slug": slug,
        "version": "1",
        "title": bilingual_texts(title_en, title_zh, bilingual),
        "sections": [
            {
                "code": section.code,
                "answered_by": "vendor",
                "title": bilingual_texts(*title_languages(section.title), bilingual),
                "questions": section.questions,
            }
            for section in sections.values()
        ],
    }
    return CatalogueDocument(
        data={
            "questionnaire": questionnaire,
            "ruleset": starter_ruleset(questionnaire, bilingual=bilingual),
        },
        source_name=source_name,
        lines=cells,
    )
