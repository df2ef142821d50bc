"""A questionnaire from any .xlsx with one question per row (issue 24, "Spreadsheets in").

Three steps, no ORM:

1. `read_tables` opens the upload the one way AVIA opens a workbook it did not write
   (`reading.opened_workbook`: size, zip-bomb and XML-entity defences, formulas never
   evaluated) and keeps each visible sheet's cells, refusing a sheet of more than
   `MAX_SHEET_ROWS` rows or a workbook of more than `MAX_QUESTIONS` question rows.
2. `suggest_mapping` proposes which column holds which field: a preset's headers (the Cloud
   Security Alliance's CAIQ v4 and AI-CAIQ layouts, AVIA's own questionnaire workbook), else
   the headers' names. The person confirms or changes it on the mapping screen.
3. `catalogue_document` turns the rows into a questionnaire document in the shape of
   docs/catalogue-format.md, or raises `WorkbookInvalid` with every bad row (sheet, row,
   column, code, reason, in the active language): all or nothing.

A formula in a cell is refused, never evaluated and never read as text: its text ("=A1&B1")
is not what the author meant the question to say, and AVIA does not calculate formulas (as
the answer workbook's import refuses them). Standard questionnaires are licensed: AVIA knows
their column headers only, never their questions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext
from openpyxl.utils import get_column_letter

from assessments.presenters.answers import yes_no_labels
from core.text import text_errors
from questionnaires import bounds
from questionnaires.spec import ANSWER_TYPES, LANGUAGES, YES_NO_CODES, code_to_identifier
from scoring.catalogue_files.document import CatalogueDocument, LineMap

from . import layout
from .reading import (
    CHOICE_SEPARATORS,
    ERROR,
    FORMULA,
    CellError,
    WorkbookInvalid,
    WorkbookRefused,
    cell_text,
    opened_workbook,
)
from .workbook import HOW_TO_ANSWER, OPTIONAL_LINE, REQUIRED_LINE, column_headers

# Bounds of an import (issue 24, "Safety"): those of every uploaded catalogue
# (questionnaires.bounds: questions, options, codes, texts), and the spreadsheet's own, far
# above any real questionnaire (CAIQ v4 has 261 questions, AI-CAIQ about 320) and low enough
# that a hostile file costs little to refuse.
MAX_QUESTIONS = bounds.CATALOGUE_QUESTIONS_MAX
MAX_OPTIONS = bounds.CATALOGUE_OPTIONS_MAX
MAX_SHEETS = bounds.CATALOGUE_SECTIONS_MAX
MAX_SHEET_ROWS = 5000  # rows read per sheet, blank ones included
MAX_COLUMNS = 40
HEADER_SEARCH_ROWS = 10  # the header row is one of the first rows
SAMPLE_ROWS = 3
CODE_MAX_LENGTH = bounds.CATALOGUE_CODE_CHARS_MAX
TEXT_MAX_LENGTH = bounds.CATALOGUE_TEXT_CHARS_MAX
LABEL_MAX_LENGTH = bounds.CATALOGUE_LABEL_CHARS_MAX

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
# Where a question's section comes from when no column holds it.
SECTION_FROM_SHEET, SECTION_FROM_CODE = "sheet", "code"


@dataclass(frozen=True)
class Cell:
    value: Any
    data_type: str = "n"  # openpyxl's: n, s, d, b, f(ormula), e(rror)

    @property
    def blank(self) -> bool:
        return self.value is None or (isinstance(self.value, str) and not self.value.strip())

    @property
    def shown(self) -> str:
        """The cell as the mapping screen shows it (a formula as its text, never calculated)."""
        return "" if self.value is None else cell_text(self.value)


@dataclass(frozen=True)
class SheetTable:
    """A visible sheet's rows as read (1-based row numbers), at most `MAX_COLUMNS` wide."""

    name: str
    rows: tuple[tuple[int, tuple[Cell, ...]], ...]

    def row(self, number: int) -> tuple[Cell, ...]:
        for found, cells in self.rows:
            if found == number:
                return cells
        return ()

    def headers(self, header_row: int) -> tuple[str, ...]:
        return tuple(cell.shown.strip() for cell in self.row(header_row))

    def data_rows(self, header_row: int) -> list[tuple[int, tuple[Cell, ...]]]:
        return [
            (number, cells)
            for number, cells in self.rows
            if number > header_row and any(not cell.blank for cell in cells)
        ]

    def width(self, rows: int = 50) -> int:
        """The last column holding anything in the first rows (a sheet's rows are read padded
        to `MAX_COLUMNS`)."""
        return max(
            (
                index
                for _number, cells in self.rows[:rows]
                for index, cell in enumerate(cells, start=1)
                if not cell.blank
            ),
            default=0,
        )

    @property
    def title(self) -> str:
        """The first text of the sheet's first row (AVIA's workbook: "PRF — Profile")."""
        return next((c.shown.strip() for c in self.row(1) if not c.blank), "")


@dataclass(frozen=True)
class WorkbookTables:
    sheets: tuple[SheetTable, ...]
    # AVIA's workbook keeps each drop-down's labels in a hidden sheet, a column each: they tell
    # where one label ends in "Choose one from the list: a, b, c" when a label holds a comma.
    option_lists: tuple[tuple[str, ...], ...] = ()

    @property
    def names(self) -> list[str]:
        return [sheet.name for sheet in self.sheets]

    def sheet(self, name: str) -> SheetTable:
        for sheet in self.sheets:
            if sheet.name == name:
                return sheet
        raise KeyError(name)


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


@dataclass(frozen=True)
class Preset:
    key: str
    label: Any
    headers: Mapping[str, tuple[str, ...]]  # field → the header texts that name it
    section_from: str
    default_type: str = "text"
    default_required: bool = False
    default_options: tuple[tuple[str, str, str], ...] = ()


# CSA's answer column is Yes / No / NA: a choice of three (AVIA's yes_no has "unknown", which
# is not "not applicable").
YES_NO_NA = (("yes", "Yes", "是"), ("no", "No", "否"), ("na", "Not applicable", "不適用"))


def _avia_headers() -> dict[str, tuple[str, ...]]:
    """AVIA's questionnaire workbook (spreadsheets.workbook): its header row in each language.
    The "How to answer" cell says whether a question is required, its type and its options."""
    by_language = {}
    for language in LANGUAGES:
        with translation.override(language):
            by_language[language] = {k: str(v) for k, v in column_headers().items()}
    english, chinese = by_language["en"], by_language["zh-hant"]
    how = (english[layout.HOW_COLUMN], chinese[layout.HOW_COLUMN])
    return {
        "code": (english[layout.CODE_COLUMN], chinese[layout.CODE_COLUMN]),
        "text_en": (english[layout.QUESTION_COLUMN],),
        "text_zh": (chinese[layout.QUESTION_COLUMN],),
        "help_en": (english[layout.HELP_COLUMN],),
        "help_zh": (chinese[layout.HELP_COLUMN],),
        "type": how,
        "options": how,
        "required": how,
    }


def presets() -> dict[str, Preset]:
    """The known layouts. CSA's column headers are as summarised from published copies of
    CAIQ v4.0.x and AI-CAIQ v1.x (header row 2, questions below); the presets match headers by
    name, so a moved column or another header row is still found."""
    return {
        "caiq-v4": Preset(
            key="caiq-v4",
            label=gettext_lazy("CSA CAIQ v4 (Question ID, Question, CSP CAIQ Answer)"),
            headers={
                "code": ("Question ID",),
                "text_en": ("Question",),
                "help_en": ("CCM Control Specification",),
            },
            section_from=SECTION_FROM_CODE,
            default_type="choice",
            default_required=True,
            default_options=YES_NO_NA,
        ),
        "ai-caiq": Preset(
            key="ai-caiq",
            label=gettext_lazy(
                "CSA AI-CAIQ (Question ID, Question, Service Provider AI-CAIQ Answer)"
            ),
            headers={
                "code": ("Question ID",),
                "text_en": ("Question",),
                "help_en": ("AICM Control Specification", "Control Specification"),
            },
            section_from=SECTION_FROM_CODE,
            default_type="choice",
            default_required=True,
            default_options=YES_NO_NA,
        ),
        "avia": Preset(
            key="avia",
            label=gettext_lazy("AVIA questionnaire workbook (one sheet per section)"),
            headers=_avia_headers(),
            section_from=SECTION_FROM_SHEET,
        ),
    }


# CSA's answer columns: what tells CAIQ v4 from AI-CAIQ (their other headers are alike).
PRESET_MARKERS = {
    "caiq-v4": ("CSP CAIQ Answer",),
    "ai-caiq": ("Service Provider AI-CAIQ Answer", "CSP AI-CAIQ Answer"),
}

# Header names of a workbook without a preset, matched case and punctuation aside.
HEADER_NAMES = {
    "code": ("code", "id", "question id", "question code", "ref", "ref id", "no", "代碼", "編號"),
    "section": ("section", "domain", "category", "section code", "部分", "類別", "範疇"),
    "text_en": ("question", "question en", "question english", "question text", "text"),
    "text_zh": ("question zh", "question zh hant", "question chinese", "問題", "題目"),
    "help_en": ("help", "help en", "help english", "guidance", "description", "notes"),
    "help_zh": ("help zh", "help zh hant", "help chinese", "說明"),
    "type": ("type", "answer type", "question type", "答案類型", "類型"),
    "options": ("options", "choices", "answer options", "allowed answers", "選項"),
    "required": ("required", "mandatory", "必答", "必填"),
}


# -- reading ---------------------------------------------------------------------------------


def read_tables(upload: IO[bytes], *, size: int) -> WorkbookTables:
    """Every visible sheet's cells; `WorkbookRefused` for a file that cannot be trusted or is
    too large (nothing is kept)."""
    with opened_workbook(
        upload,
        size=size,
        not_a_workbook=_(
            "This file is not an Excel workbook (.xlsx). Save it as one and upload it again."
        ),
    ) as book:
        sheets = []
        visible = [s for s in book.worksheets if getattr(s, "sheet_state", "visible") == "visible"]
        if len(visible) > MAX_SHEETS:
            raise WorkbookRefused(
                _("The workbook has %(count)s sheets; at most %(limit)s are read.")
                % {"count": len(visible), "limit": MAX_SHEETS}
            )
        kept = 0  # rows with something in them, in every sheet
        lists = next(
            (s for s in book.worksheets if s.title == layout.LISTS_SHEET and s not in visible),
            None,
        )
        option_lists = _columns(lists) if lists is not None else ()
        for sheet in visible:
            rows = []
            for number, cells in enumerate(sheet.iter_rows(max_col=MAX_COLUMNS), start=1):
                if number > MAX_SHEET_ROWS:
                    raise WorkbookRefused(
                        _(
                            "Sheet %(sheet)s has more than %(limit)s rows: it is not a questionnaire."
                        )
                        % {"sheet": sheet.title, "limit": f"{MAX_SHEET_ROWS:,}"}
                    )
                row = tuple(
                    Cell(getattr(c, "value", None), getattr(c, "data_type", "n") or "n")
                    for c in cells
                )
                if any(not cell.blank for cell in row):
                    rows.append((number, row))
                    kept += 1
                    # Each sheet may have a few title and header rows above its questions.
                    if kept > MAX_QUESTIONS + HEADER_SEARCH_ROWS * len(visible):
                        raise WorkbookRefused(too_many_questions(kept))
            sheets.append(SheetTable(name=sheet.title, rows=tuple(rows)))
    if not any(sheet.rows for sheet in sheets):
        raise WorkbookRefused(_("The workbook is empty."))
    return WorkbookTables(sheets=tuple(sheets), option_lists=option_lists)


def _columns(sheet: Any) -> tuple[tuple[str, ...], ...]:
    """A sheet's text read column by column (AVIA's hidden lists of options)."""
    columns: dict[int, list[str]] = {}
    for number, cells in enumerate(sheet.iter_rows(max_col=MAX_COLUMNS), start=1):
        if number > MAX_OPTIONS:
            break
        for index, cell in enumerate(cells):
            value = getattr(cell, "value", None)
            if isinstance(value, str) and value.strip():
                columns.setdefault(index, []).append(value.strip())
    return tuple(tuple(labels) for labels in columns.values())


def too_many_questions(count: int) -> str:
    return _("The workbook has %(count)s question rows; at most %(limit)s are accepted.") % {
        "count": f"{count:,}",
        "limit": f"{MAX_QUESTIONS:,}",
    }


# -- the mapping -----------------------------------------------------------------------------


def _key(header: str) -> str:
    """A header as compared: case, punctuation and spacing aside ("Question ID:" = "question id")."""
    return " ".join(re.sub(r"[^\w]+", " ", header.casefold()).split())


def _find_header_row(sheet: SheetTable, wanted: Iterable[str]) -> int | None:
    wanted_keys = {_key(name) for name in wanted}
    for number, cells in sheet.rows:
        if number > HEADER_SEARCH_ROWS:
            break
        if wanted_keys & {_key(cell.shown) for cell in cells if not cell.blank}:
            return number
    return None


def detect_preset(tables: WorkbookTables) -> str:
    """The preset whose layout the workbook has ("" if none)."""
    for key, markers in PRESET_MARKERS.items():
        if any(_find_header_row(sheet, markers) for sheet in tables.sheets):
            return key
    avia = presets()["avia"]
    if any(
        _find_header_row(sheet, avia.headers["required"]) is not None
        and _find_header_row(sheet, avia.headers["code"]) is not None
        for sheet in tables.sheets
    ):
        return "avia"
    return ""


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
        found = _find_header_row(sheet, names["code"])
        if found is not None:
            if not chosen:
                header_row = found
            if found == header_row:
                chosen.append(sheet.name)
    if not chosen:
        first = tables.sheets[0]
        chosen = [first.name]
        header_row = _find_header_row(first, all_names) or 1
    headers = tables.sheet(chosen[0]).headers(header_row)
    columns: dict[str, int] = {}
    for field_name in FIELDS:
        keys = [_key(name) for name in names.get(field_name, ())]
        for wanted in keys:  # in the order given: the preferred name first
            match = next(
                (i for i, header in enumerate(headers, start=1) if _key(header) == wanted), None
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


# -- the document ----------------------------------------------------------------------------


@dataclass
class _Row:
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
            row = _Row(sheet_name, number, row_cells, mapping, errors, tables.option_lists)
            question = _question(row, bilingual)
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
            code, title = _section_of(row, sheet)
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
        "title": _texts(title_en, title_zh, bilingual),
        "sections": [
            {
                "code": section.code,
                "answered_by": "vendor",
                "title": _texts(*_title_languages(section.title), bilingual),
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


# Points per severity of a starter ruleset: those of the shipped rulesets.
STARTER_POINTS = {"critical": 40, "high": 15, "medium": 5, "low": 1}


def starter_ruleset(questionnaire: Mapping[str, Any], *, bilingual: bool) -> dict[str, Any]:
    """A first ruleset for an imported questionnaire, for its author to change in the rule
    workbench before publishing (a catalogue needs one): each question that can be answered
    "no" (yes/no, and CSA's Yes / No / NA) is a medium finding when it is — a control the vendor
    says it lacks. Without any such question, the first required question left blank is a low
    one. At most `bounds.CATALOGUE_RULES_MAX` rules."""
    questions = [q for section in questionnaire["sections"] for q in section["questions"]]
    rules: list[dict[str, Any]] = []
    for question in questions:
        codes = (
            YES_NO_CODES
            if question["type"] == "yes_no"
            else [o["code"] for o in question.get("options", ())]
            if question["type"] == "choice"
            else ()
        )
        if "no" not in codes or len(rules) >= bounds.CATALOGUE_RULES_MAX:
            continue
        code = question["code"]
        rules.append(
            {
                "id": f"{code}-NO",
                "severity": "medium",
                "when": f'{code_to_identifier(code)} == "no"',
                **_rule_texts(
                    bilingual,
                    code=code,
                    title=gettext_lazy("%(code)s answered “No”"),
                    rationale=gettext_lazy(
                        "The vendor says it does not meet %(code)s. (A starter rule made on "
                        "import: check its severity and wording before publishing.)"
                    ),
                    remediation=gettext_lazy(
                        "Ask the vendor how and when it will meet %(code)s, or accept the risk."
                    ),
                ),
            }
        )
    if not rules:
        readable = [q for q in questions if q["type"] != "file"] or questions
        first = next((q for q in readable if q["required"]), readable[0])
        code = first["code"]
        rules.append(
            {
                "id": f"{code}-BLANK",
                "severity": "low",
                "when": f"{code_to_identifier(code)} == null",
                "fires_when_blank": [code],
                **_rule_texts(
                    bilingual,
                    code=code,
                    title=gettext_lazy("%(code)s left blank"),
                    rationale=gettext_lazy(
                        "The vendor did not answer %(code)s. (A starter rule made on import: "
                        "write the questionnaire's own rules before publishing.)"
                    ),
                    remediation=gettext_lazy("Ask the vendor to answer %(code)s."),
                ),
            }
        )
    title = questionnaire["title"]
    return {
        "slug": f"{questionnaire['slug']}-rules"[: bounds.CATALOGUE_SLUG_CHARS_MAX],
        "version": "1",
        "questionnaire": f"{questionnaire['slug']}@{questionnaire['version']}",
        "title": {
            language: f"{text} ({_in(language, STARTER_LABEL)})" for language, text in title.items()
        },
        "points": dict(STARTER_POINTS),
        "rules": rules,
    }


STARTER_LABEL = gettext_lazy("starter rules")


def _in(language: str, text: Any, **params: Any) -> str:
    with translation.override(language):
        return str(text) % params if params else str(text)


def _rule_texts(bilingual: bool, *, code: str, **texts: Any) -> dict[str, dict[str, str]]:
    languages = LANGUAGES if bilingual else ("en",)
    return {
        name: {language: _in(language, text, code=code) for language in languages}
        for name, text in texts.items()
    }


def _texts(english: str, chinese: str, bilingual: bool) -> dict[str, str]:
    return {"en": english, "zh-hant": chinese} if bilingual else {"en": english}


def question_code(raw: str) -> str | None:
    """A code as AVIA's conditions can name it (`PRF-05` → `PRF_05`): "&" dropped, ".",
    spaces and "/" become "-" ("A&A-01.1" → "AA-01-1"), and a code that starts with a digit
    gets a "Q" ("1.2" → "Q1-2"). None if what is left is not letters, digits, "-" and "_"."""
    code = re.sub(r"[\s./]+", "-", raw.strip().replace("&", ""))
    code = re.sub(r"-{2,}", "-", code).strip("-")
    if code[:1].isdigit():
        code = "Q" + code
    if not code.isascii() or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", code):
        return None
    return code


def _question(row: _Row, bilingual: bool) -> dict[str, Any] | None:
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
    how = _how_to_answer(row)
    answer_type, options = _type_and_options(row, bilingual, how)
    required = how.required if how is not None else _required(row)
    if len(row.errors) > problems_before or code is None:
        return None
    question: dict[str, Any] = {
        "code": code,
        "type": answer_type,
        "required": required,
        "text": _texts(text_en, text_zh, bilingual),
    }
    if help_en and (help_zh or not bilingual):
        question["help"] = _texts(help_en, help_zh, bilingual)
    if options:
        question["options"] = options
    return question


def _title_languages(title: str) -> tuple[str, str]:
    """A section's title in each language: "Hosting | 託管" gives both; a title without "|"
    (a code such as "A&A", a sheet's name) is the same in both."""
    english, _bar, chinese = title.partition("|")
    return english.strip() or title, chinese.strip() or english.strip() or title


def _section_of(row: _Row, sheet: SheetTable) -> tuple[str | None, str]:
    """The section's code (None: one is given) and title: from its column, else the sheet
    (AVIA's workbook: the sheet is the section's code, its first row "PRF — Profile"), else
    the question code's prefix (CSA's "A&A-01.1" is in domain "A&A", code AA)."""
    if "section" in row.mapping.columns:
        value = row.text("section", LABEL_MAX_LENGTH)
        if value:
            english = _title_languages(value)[0]
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


# -- answer types, options and "required" ----------------------------------------------------

TYPE_WORDS = {
    "yes_no": ("yes_no", "yesno", "boolean", "bool", "是否", "是_否"),
    "choice": ("choice", "single_choice", "select", "dropdown", "list", "單選", "選擇"),
    "multi_choice": ("multi_choice", "multiple_choice", "multi_select", "checkboxes", "多選"),
    "integer": ("integer", "int", "number", "whole_number", "整數", "數字"),
    "date": ("date", "日期"),
    "version": ("version", "版本"),
    "text": ("text", "free_text", "string", "文字"),
    "file": ("file", "upload", "evidence", "檔案", "文件"),
}
TRUE_WORDS = ("yes", "y", "true", "1", "required", "mandatory", "x", "是", "必答", "必填")
FALSE_WORDS = ("no", "n", "false", "0", "optional", "否", "選答", "選填")


@dataclass(frozen=True)
class _HowToAnswer:
    """What AVIA's own "How to answer" cell says (spreadsheets.workbook)."""

    required: bool
    type: str
    options: tuple[str, ...] = ()


def _how_to_answer(row: _Row) -> _HowToAnswer | None:
    """A cell written by AVIA's workbook ("Required.\nChoose one from the list: …"), in
    either language, read with the workbook's own phrases (spreadsheets.workbook.HOW_TO_ANSWER);
    None for any other cell. A line saying when the question is asked is not read: conditions
    are not imported."""
    for field_name in ("type", "required", "options"):
        cell = row.cell(field_name)
        if cell is None or cell.blank or not isinstance(cell.value, str):
            continue
        lines = [line.strip() for line in cell.value.splitlines() if line.strip()]
        for language in LANGUAGES:
            with translation.override(language):
                first = {str(REQUIRED_LINE): True, str(OPTIONAL_LINE): False}
                if lines[0] not in first:
                    continue
                answer_type = "text"
                options: tuple[str, ...] = ()
                for line in lines[1:]:
                    found = _phrase(line, row.option_lists)
                    if found is not None:
                        answer_type, options = found
                        break
                if answer_type == "choice" and set(options) == set(
                    yes_no_labels(language).values()
                ):
                    answer_type, options = "yes_no", ()
                return _HowToAnswer(required=first[lines[0]], type=answer_type, options=options)
    return None


def _phrase(
    line: str, option_lists: Iterable[tuple[str, ...]] = ()
) -> tuple[str, tuple[str, ...]] | None:
    """The answer type (and options) a line of "How to answer" names, in the active language."""
    for answer_type, phrase in HOW_TO_ANSWER:
        text = _(str(phrase))
        parts = re.split(r"%\(\w+\)s", text, maxsplit=1)
        if len(parts) == 1:
            if line == text:
                return answer_type, ()
            continue
        before, after = parts
        if len(line) < len(before) + len(after):
            continue
        if not (line.startswith(before) and line.endswith(after)):
            continue
        if "%(options)s" not in text:
            return answer_type, ()
        held = line[len(before) : len(line) - len(after)]
        separator = pgettext("list separator", ", ") if answer_type == "choice" else ";"
        for labels in option_lists:
            if separator.join(labels) == held:
                return answer_type, labels
        return answer_type, tuple(item.strip() for item in held.split(separator) if item.strip())
    return None


def _type_and_options(
    row: _Row, bilingual: bool, how: _HowToAnswer | None
) -> tuple[str, list[dict[str, Any]]]:
    typed: list[tuple[str | None, str, str]]
    # The preset's own options (CSA's Yes / No / NA): AVIA's text, not the sheet's, unchecked.
    preset_options: list[tuple[str | None, str, str]] = list(row.mapping.default_options)
    if how is not None:
        answer_type: str | None = how.type
        typed = [(None, label, "") for label in how.options]
    else:
        typed = _typed_options(row)
        answer_type = _answer_type(row)
        if answer_type == "":  # no type given
            if typed:
                answer_type = "choice"
            else:
                answer_type = row.mapping.default_type
                typed = preset_options
    if answer_type is None:
        return "text", []
    if answer_type not in ("choice", "multi_choice"):
        if typed and answer_type != "yes_no" and how is None:
            row.error(
                _("A question of type %(type)s has no options; leave the options cell empty.")
                % {"type": answer_type},
                "options",
            )
        return answer_type, []
    if not typed:
        row.error(_("A %(type)s question needs options.") % {"type": answer_type}, "options")
        return answer_type, []
    if len(typed) > MAX_OPTIONS:
        row.error(
            _("The question has %(count)s options; at most %(limit)s are accepted.")
            % {"count": len(typed), "limit": MAX_OPTIONS},
            "options",
        )
        return answer_type, []
    options = []
    for index, (code, english, chinese) in enumerate(typed, start=1):
        if bilingual and not chinese:
            row.error(
                _("Option “%(option)s” has no Traditional Chinese label (write “English | 中文”).")
                % {"option": english[:LABEL_MAX_LENGTH]},
                "options",
            )
        for label in () if typed is preset_options else (english, chinese):
            for problem in text_errors(label, max_length=LABEL_MAX_LENGTH) if label else ():
                row.error(problem, "options")
        option_code = code or _option_code(english) or f"option_{index}"
        options.append({"code": option_code, "label": _texts(english, chinese, bilingual)})
    codes = [option["code"] for option in options]
    if len(set(codes)) != len(codes):
        row.error(
            _("Two options have the same code; give each option its own label or code."),
            "options",
        )
    return answer_type, options


def _answer_type(row: _Row) -> str | None:
    """The type the row's type cell names; "" when it names none, None when it is unknown."""
    text = row.text("type", 40)
    if not text:
        return ""
    key = re.sub(r"[\s/\-]+", "_", text.casefold()).strip("_")
    for answer_type, words in TYPE_WORDS.items():
        if key in words:
            return answer_type
    row.error(
        _("Unknown answer type “%(type)s”: use one of %(types)s.")
        % {"type": text, "types": ", ".join(ANSWER_TYPES)},
        "type",
    )
    return None


def _typed_options(row: _Row) -> list[tuple[str | None, str, str]]:
    """The options cell: one option a line (or separated by ";"), each "Label", "Label |
    中文標籤" or "code = Label | 中文標籤"."""
    text = row.text("options", MAX_OPTIONS * (LABEL_MAX_LENGTH + 10))
    for separator in CHOICE_SEPARATORS:
        text = text.replace(separator, "\n")
    options: list[tuple[str | None, str, str]] = []
    for item in (line.strip() for line in text.splitlines()):
        if not item:
            continue
        code = None
        explicit = re.match(r"^([a-z][a-z0-9_]{0,39})\s*=\s*(.+)$", item)
        if explicit:
            code, item = explicit.group(1), explicit.group(2)
        english, _bar, chinese = item.partition("|")
        options.append((code, english.strip(), chinese.strip()))
    return options


def _option_code(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.casefold()).strip("_")[: bounds.CATALOGUE_ID_CHARS_MAX]


def _required(row: _Row) -> bool:
    text = row.text("required", 40)
    if not text:
        return row.mapping.default_required
    word = text.casefold().rstrip(".。")
    if word in TRUE_WORDS:
        return True
    if word not in FALSE_WORDS:
        row.error(
            _("“%(value)s” is not yes or no: write yes (required) or no (optional).")
            % {"value": text},
            "required",
        )
    return False
