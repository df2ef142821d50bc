"""The questionnaire as an Excel workbook, to answer offline (issue 13).

One sheet per section the reader may answer, one row per question: its code, the question, its
help, how to answer it (the options, the unit, the date format, when it is asked), the answer
cell prefilled with the current answer as the reader reads it (option labels, not codes) and a
comment cell. Answer cells carry Excel's own checks (a drop-down of the options, whole numbers
of 0 or more, dates); only the answer and comment cells of questions the reader may change are
unlocked, and the workbook's structure is protected. A hidden sheet holds the signed layout
(`layout.WorkbookLayout`) that ties the file to its assessment and questionnaire version.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from openpyxl import Workbook
from openpyxl.styles import Alignment, Font, PatternFill, Protection
from openpyxl.utils import get_column_letter
from openpyxl.workbook.protection import WorkbookProtection
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.worksheet import Worksheet

from assessments.presenters.answers import condition_text, option_labels
from assessments.services.evidence import PRODUCED_BY_AVIA_MESSAGE
from core.formats import format_datetime, list_text
from questionnaires.bounds import integer_maximum
from questionnaires.spec import Question, QuestionnaireSpec, Section
from questionnaires.validation import TEXT_MAX_LENGTH

from . import layout
from .cells import set_cell

MULTI_CHOICE_SEPARATOR = ";"
INTEGER_FORMAT = "#,##0"
DATE_FORMAT = "yyyy-mm-dd"
TEXT_FORMAT = "@"  # Excel keeps what is typed as text: "0.5.22" stays a version, not a date
# Excel's limits on a data validation's messages.
PROMPT_LIMIT = 250
TITLE_LIMIT = 32
# Excel's serial numbers of 1900-01-01 and 9999-12-31: any real date.
FIRST_DATE, LAST_DATE = 1, 2958465

# What the "How to answer" cell says of each answer type, by type: the one list of these
# phrases, which the workbook writes and the questionnaire import reads back
# (spreadsheets.catalogue_import.answer_types) in either language.
REQUIRED_LINE = gettext_lazy("Required.")
OPTIONAL_LINE = gettext_lazy("Optional.")
CHOOSE_ONE = gettext_lazy("Choose one from the list: %(options)s.")
ONE_OR_MORE = gettext_lazy("One or more of: %(options)s. Separate them with “;”.")
WHOLE_NUMBER_IN = gettext_lazy(
    "A whole number (%(unit)s) of 0 or more, such as 1048576 — not “1M”."
)
WHOLE_NUMBER = gettext_lazy("A whole number of 0 or more — not “1M”.")
A_DATE = gettext_lazy("A date: YYYY-MM-DD.")
A_VERSION = gettext_lazy("A version, such as 0.5.22.")
UPLOAD_IN_PORTAL = gettext_lazy("Upload in the portal: a workbook cannot carry files.")
HOW_TO_ANSWER: tuple[tuple[str, Any], ...] = (
    ("choice", CHOOSE_ONE),
    ("multi_choice", ONE_OR_MORE),
    ("integer", WHOLE_NUMBER_IN),
    ("integer", WHOLE_NUMBER),
    ("date", A_DATE),
    ("version", A_VERSION),
    ("file", UPLOAD_IN_PORTAL),
    ("file", PRODUCED_BY_AVIA_MESSAGE),
)

BOLD = Font(bold=True)
TITLE = Font(bold=True, size=14)
HEADER_FILL = PatternFill("solid", fgColor="DDE3EA")
TO_FILL = PatternFill("solid", fgColor="FFF8DC")  # the cells to type in
WRAP = Alignment(wrap_text=True, vertical="top")
UNLOCKED = Protection(locked=False)


def questionnaire_workbook(
    *,
    assessment_id: int,
    spec: QuestionnaireSpec,
    sections: Sequence[Section],
    values: Mapping[str, Any],
    comments: Mapping[str, str],
    files: Mapping[str, Sequence[str]],
    editable: Iterable[str],
    language: str,
    title_facts: Sequence[tuple[str, str]] = (),
) -> bytes:
    """The workbook of `sections`, prefilled with `values` (validated Python values) and
    `comments`; `files` names the evidence already uploaded per file question. Only the
    questions in `editable` can be changed in it."""
    editable = set(editable)
    with translation.override(language):
        book = Workbook()
        readme = book.active
        assert readme is not None
        _instructions(readme, spec, language, title_facts)
        lists = book.create_sheet(layout.LISTS_SHEET)
        list_columns: dict[str, str] = {}
        positions: list[layout.QuestionPosition] = []
        headers = column_headers()
        for section in sections:
            sheet = book.create_sheet(section.code)
            positions += _section_sheet(
                sheet,
                spec,
                section,
                headers=headers,
                values=values,
                comments=comments,
                files=files,
                editable=editable,
                language=language,
                lists=lists,
                list_columns=list_columns,
            )
        signature = book.create_sheet(layout.SIGNATURE_SHEET)
        signed = layout.WorkbookLayout(
            assessment_id=assessment_id,
            questionnaire=spec.key,
            language=language,
            positions=tuple(positions),
            headers=tuple(headers.values()),
        ).signed()
        set_cell(signature[layout.SIGNATURE_CELL], signed)
        set_cell(
            signature["A2"],
            _("This sheet ties the workbook to its assessment. Changing it makes the upload fail."),
        )
        for hidden in (lists, signature):
            hidden.sheet_state = "hidden"
            hidden.protection.sheet = True
        # Sheets cannot be added, removed, renamed or shown again without removing this.
        book.security = WorkbookProtection(lockStructure=True)
        out = io.BytesIO()
        book.save(out)
    return out.getvalue()


def _instructions(
    sheet: Worksheet,
    spec: QuestionnaireSpec,
    language: str,
    title_facts: Sequence[tuple[str, str]],
) -> None:
    sheet.title = _("Read me")[:31]
    set_cell(sheet["A1"], spec.title.get(language)).font = TITLE
    row = 3
    facts = [
        *title_facts,
        (_("Questionnaire"), spec.key),
        (_("Exported"), format_datetime(timezone.now(), language)),
    ]
    for label, value in facts:
        set_cell(sheet.cell(row, 1), label).font = BOLD
        set_cell(sheet.cell(row, 2), value)
        row += 1
    row += 1
    for line in (
        _(
            "Each section of the questionnaire is a sheet. Type each answer in the yellow “Answer” column; a comment is optional."
        ),
        _("Choices: pick from the drop-down list. Labels in English or Chinese are both accepted."),
        _("Several choices: type their labels separated by “;”."),
        _("Numbers: whole numbers such as 1048576 or 1,048,576 — not “1M”, “1e6” or a decimal."),
        _("Dates: YYYY-MM-DD, such as 2026-10-26."),
        _("Some questions are asked only after a given answer to another: their row says when."),
        _("Files (evidence) cannot travel in a workbook: upload them in the portal."),
        _(
            "Do not add, remove or move rows or sheets: the upload checks the workbook against its signature."
        ),
        _(
            "Upload the filled workbook where you downloaded it. If any answer is not valid, nothing is saved and every problem is listed by sheet, row and code."
        ),
    ):
        set_cell(sheet.cell(row, 1), line).alignment = Alignment(wrap_text=False)
        row += 1
    sheet.column_dimensions["A"].width = 28
    sheet.column_dimensions["B"].width = 60
    sheet.protection.sheet = True


def column_headers() -> dict[int, str]:
    """The header row of a section sheet, by column, in the active language."""
    return {
        layout.CODE_COLUMN: _("Code"),
        layout.QUESTION_COLUMN: _("Question"),
        layout.HELP_COLUMN: _("Help"),
        layout.HOW_COLUMN: _("How to answer"),
        layout.ANSWER_COLUMN: _("Answer"),
        layout.COMMENT_COLUMN: _("Comment (optional)"),
    }


def _section_sheet(
    sheet: Worksheet,
    spec: QuestionnaireSpec,
    section: Section,
    *,
    headers: Mapping[int, str],
    values: Mapping[str, Any],
    comments: Mapping[str, str],
    files: Mapping[str, Sequence[str]],
    editable: set[str],
    language: str,
    lists: Worksheet,
    list_columns: dict[str, str],
) -> list[layout.QuestionPosition]:
    set_cell(sheet["A1"], f"{section.code} — {section.title.get(language)}").font = TITLE
    set_cell(sheet["A2"], section.intro.get(language))
    for column, header in headers.items():
        cell = set_cell(sheet.cell(layout.HEADER_ROW, column), header)
        cell.font, cell.fill = BOLD, HEADER_FILL
    positions = []
    for offset, question in enumerate(section.questions):
        row = layout.FIRST_QUESTION_ROW + offset
        positions.append(layout.QuestionPosition(sheet=sheet.title, row=row, code=question.code))
        can_change = question.code in editable
        set_cell(sheet.cell(row, layout.CODE_COLUMN), question.code).font = BOLD
        set_cell(sheet.cell(row, layout.QUESTION_COLUMN), question.text.get(language))
        set_cell(sheet.cell(row, layout.HELP_COLUMN), _help(question, language))
        set_cell(sheet.cell(row, layout.HOW_COLUMN), _how(spec, question, language, can_change))
        answer = sheet.cell(row, layout.ANSWER_COLUMN)
        comment = sheet.cell(row, layout.COMMENT_COLUMN)
        if question.type == "file":
            names = files.get(question.code, ())
            if names:
                set_cell(answer, list_text(list(names), language))
            elif not question.produced_by_avia:  # AVIA attaches that one: "How to answer" says so
                set_cell(answer, _("Upload in the portal"))
        else:
            set_cell(answer, shown_in_cell(question, values.get(question.code), language))
            answer.number_format = _number_format(question)
            if can_change:
                _validate(sheet, answer, question, language, lists, list_columns)
        set_cell(comment, comments.get(question.code, ""))
        comment.number_format = TEXT_FORMAT
        for cell in sheet[row]:
            cell.alignment = WRAP
        if can_change:
            for cell in (answer, comment) if question.type != "file" else (comment,):
                cell.protection, cell.fill = UNLOCKED, TO_FILL
    widths = {
        **layout.COLUMN_WIDTHS,
        layout.ANSWER_COLUMN: layout.ANSWER_WIDTH,
        layout.COMMENT_COLUMN: layout.COMMENT_WIDTH,
    }
    for column, width in widths.items():
        sheet.column_dimensions[get_column_letter(column)].width = width
    sheet.freeze_panes = sheet.cell(layout.FIRST_QUESTION_ROW, layout.QUESTION_COLUMN)
    # Locked cells stay locked; columns and rows may still be resized.
    sheet.protection.sheet = True
    sheet.protection.formatColumns = False
    sheet.protection.formatRows = False
    return positions


def shown_in_cell(question: Question, value: Any, language: str) -> Any:
    """An answer as its cell holds it: option labels (several separated by ";"), a whole number,
    a date, or the text as typed."""
    if value is None or value == [] or value == "":
        return None
    if question.type in ("yes_no", "choice", "multi_choice"):
        labels = option_labels(question, language)
        chosen = value if isinstance(value, list) else [value]
        return f"{MULTI_CHOICE_SEPARATOR} ".join(
            labels.get(str(code), str(code)) for code in chosen
        )
    if question.type == "date" and isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            return value
    return value


def _number_format(question: Question) -> str:
    if question.type == "integer":
        return INTEGER_FORMAT
    if question.type == "date":
        return DATE_FORMAT
    return TEXT_FORMAT


def _help(question: Question, language: str) -> str:
    # Catalogue text marks what is quoted from a log or a setting with backticks (`name=`);
    # a cell keeps them, as the pages show such text in a code font.
    text = question.help.get(language)
    if question.blank_means:
        text += "\n" + _("Leave blank if: %(meaning)s.") % {
            "meaning": question.blank_means.get(language)
        }
    return text


def _unit(question: Question, language: str) -> str:
    return question.unit_label.get(language) if question.unit_label else ""


def _how(spec: QuestionnaireSpec, question: Question, language: str, can_change: bool) -> str:
    """How to answer, in one cell: required or not, when it is asked, and what to type."""
    lines = [str(REQUIRED_LINE if question.required else OPTIONAL_LINE)]
    if condition := condition_text(spec, question.code, language):
        lines.append(condition)
    labels = list(option_labels(question, language).values())  # [] unless a choice
    if question.type in ("yes_no", "choice"):
        lines.append(CHOOSE_ONE % {"options": list_text(labels, language)})
    elif question.type == "multi_choice":
        lines.append(ONE_OR_MORE % {"options": f"{MULTI_CHOICE_SEPARATOR} ".join(labels)})
    elif question.type == "integer":
        unit = _unit(question, language)
        lines.append(WHOLE_NUMBER_IN % {"unit": unit} if unit else str(WHOLE_NUMBER))
    elif question.type == "date":
        lines.append(str(A_DATE))
    elif question.type == "version":
        lines.append(str(A_VERSION))
    elif question.produced_by_avia:
        lines.append(_(PRODUCED_BY_AVIA_MESSAGE))
    elif question.type == "file":
        lines.append(str(UPLOAD_IN_PORTAL))
    if not can_change:
        lines.append(_("Cannot be changed now."))
    return "\n".join(lines)


def _validate(
    sheet: Worksheet,
    cell: Any,
    question: Question,
    language: str,
    lists: Worksheet,
    list_columns: dict[str, str],
) -> None:
    """Excel's own check of an answer cell (what it refuses as it is typed; the upload checks
    everything again, as the forms do)."""
    prompt = ""
    if question.type in ("yes_no", "choice"):
        column = list_columns.get(question.code)
        labels = list(option_labels(question, language).values())
        if column is None:
            column = get_column_letter(len(list_columns) + 1)
            list_columns[question.code] = column
            for index, label in enumerate(labels, start=1):
                set_cell(lists[f"{column}{index}"], label)
        check = DataValidation(
            type="list",
            formula1=f"{layout.LISTS_SHEET}!${column}$1:${column}${len(labels)}",
            allow_blank=True,
        )
        check.error = _("Choose one of the options in the list.")
    elif question.type == "integer":
        check = DataValidation(
            type="whole",
            operator="between",
            formula1="0",
            formula2=str(integer_maximum(question.code)),
            allow_blank=True,
        )
        unit = _unit(question, language)
        check.error = (
            _("A whole number (%(unit)s) of 0 or more.") % {"unit": unit}
            if unit
            else _("A whole number of 0 or more.")
        )
        prompt = str(check.error)
    elif question.type == "date":
        check = DataValidation(
            type="date",
            operator="between",
            formula1=str(FIRST_DATE),
            formula2=str(LAST_DATE),
            allow_blank=True,
        )
        check.error = str(A_DATE)
        prompt = str(check.error)
    elif question.type == "text":
        check = DataValidation(
            type="textLength", operator="lessThanOrEqual", formula1=str(TEXT_MAX_LENGTH)
        )
        check.error = _("At most %(count)s characters.") % {"count": f"{TEXT_MAX_LENGTH:,}"}
    else:
        return
    check.error = str(check.error)[:PROMPT_LIMIT]
    check.errorTitle = question.code[:TITLE_LIMIT]
    check.showErrorMessage = True
    if prompt:
        check.prompt, check.promptTitle = prompt[:PROMPT_LIMIT], question.code[:TITLE_LIMIT]
        check.showInputMessage = True
    sheet.add_data_validation(check)
    check.add(cell)
