"""A question row as a question of the catalogue: its code, texts, help, type and section.

A code becomes one AVIA's conditions can name (`question_code`: CSA's "A&A-01.1" is AA-01-1),
held to the catalogue's own code pattern. A questionnaire is bilingual when a Chinese question
column is mapped: then every question needs both texts. A question's section comes from its
column, else its sheet (AVIA's workbook), else its code's prefix (CSA's domains).
"""

from __future__ import annotations

import re
from typing import Any

from django.utils.translation import gettext as _

from scoring.catalogue_files.checking import CODE_PATTERN

from .answer_types import how_to_answer, required_of, type_and_options
from .presets import SECTION_FROM_SHEET
from .rows import CODE_MAX_LENGTH, LABEL_MAX_LENGTH, TEXT_MAX_LENGTH, QuestionRow, bilingual_texts
from .tables import Cell, SheetTable


def question_code(raw: str) -> str | None:
    """A code as AVIA's conditions can name it (`PRF-05` → `PRF_05`): "&" dropped, ".",
    spaces and "/" become "-" ("A&A-01.1" → "AA-01-1"), and a code that starts with a digit
    gets a "Q" ("1.2" → "Q1-2"). None if what is left is not letters, digits, "-" and "_"."""
    code = re.sub(r"[\s./]+", "-", raw.strip().replace("&", ""))
    code = re.sub(r"-{2,}", "-", code).strip("-")
    if code[:1].isdigit():
        code = "Q" + code
    if not code.isascii() or not CODE_PATTERN.fullmatch(code):
        return None
    return code


def row_question(row: QuestionRow, bilingual: bool) -> dict[str, Any] | None:
    """The row as a question of the document, or None once its problems are recorded."""
    problems_before = len(row.errors)
    raw_code = row.text("code", CODE_MAX_LENGTH)
    code = question_code(raw_code) if raw_code else None
    row.code = code or raw_code
    if not raw_code and len(row.errors) == problems_before:
        row.error(_("The question code is empty."), "code")
    elif raw_code and code is None:
        row.error(
            _(
                "“%(code)s” cannot be a question code: use letters, digits, “-” and “.”, "
                "starting with a letter or a digit."
            )
            % {"code": raw_code},
            "code",
        )
    text_en = row.text("text_en", TEXT_MAX_LENGTH)
    if (row.cell("text_en") or Cell(None)).blank:
        row.error(_("The English question text is empty."), "text_en")
    text_zh = row.text("text_zh", TEXT_MAX_LENGTH) if bilingual else ""
    if bilingual and (row.cell("text_zh") or Cell(None)).blank:
        row.error(
            _(
                "The Traditional Chinese question text is empty: a questionnaire with a Chinese "
                "column needs both texts of every question."
            ),
            "text_zh",
        )
    help_en = row.text("help_en", TEXT_MAX_LENGTH)
    help_zh = row.text("help_zh", TEXT_MAX_LENGTH) if bilingual else ""
    if bilingual and bool(help_en) != bool(help_zh) and "help_zh" in row.mapping.columns:
        row.error(
            _("The help is given in one language only: give both, or neither."),
            "help_zh" if help_en else "help_en",
        )
    how = how_to_answer(row)
    answer_type, options = type_and_options(row, bilingual, how)
    required = how.required if how is not None else required_of(row)
    if len(row.errors) > problems_before or code is None:
        return None
    question: dict[str, Any] = {
        "code": code,
        "type": answer_type,
        "required": required,
        "text": bilingual_texts(text_en, text_zh, bilingual),
    }
    if help_en and (help_zh or not bilingual):
        question["help"] = bilingual_texts(help_en, help_zh, bilingual)
    if options:
        question["options"] = options
    return question


def title_languages(title: str) -> tuple[str, str]:
    """A section's title in each language: "Hosting | 託管" gives both; a title without "|"
    (a code such as "A&A", a sheet's name) is the same in both."""
    english, _bar, chinese = title.partition("|")
    return english.strip() or title, chinese.strip() or english.strip() or title


def section_of(row: QuestionRow, sheet: SheetTable) -> tuple[str | None, str]:
    """The section's code (None: one is given) and title: from its column, else the sheet
    (AVIA's workbook: the sheet is the section's code, its first row "PRF — Profile"), else
    the question code's prefix (CSA's "A&A-01.1" is in domain "A&A", code AA)."""
    if "section" in row.mapping.columns:
        value = row.text("section", LABEL_MAX_LENGTH)
        if value:
            english = title_languages(value)[0]
            code = question_code(english) if len(english) <= 16 else None
            return (code.upper() if code else None), value
        return "GEN", _("General")
    if row.mapping.section_from == SECTION_FROM_SHEET:
        prefix = f"{sheet.name} — "
        title = sheet.title[len(prefix) :] if sheet.title.startswith(prefix) else sheet.name
        return question_code(sheet.name), title
    raw = row.text("code", CODE_MAX_LENGTH)
    prefix = re.split(r"[-.\s]", raw, maxsplit=1)[0] if re.search(r"[-.\s]", raw) else ""
    if prefix and question_code(prefix):
        return question_code(prefix), prefix
    return "GEN", _("General")
