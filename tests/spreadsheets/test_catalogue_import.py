"""A questionnaire from a spreadsheet with one question per row (issue 24, "Spreadsheets in"):
the presets, a mapping of one's own, per-row errors and hostile files, without the database.

Every workbook here is made by the test in the layout it stands for, with short invented
questions: CSA's CAIQ and AI-CAIQ text is licensed and never part of AVIA.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from typing import Any

import pytest
from django.utils import translation
from openpyxl import Workbook

from questionnaires.spec import (
    builtin_questionnaire_files,
    load_questionnaire_file,
    parse_questionnaire,
)
from spreadsheets.catalogue_import import tables as catalogue_tables
from spreadsheets.catalogue_import.document import catalogue_document
from spreadsheets.catalogue_import.mapping import ColumnMapping, suggest_mapping
from spreadsheets.catalogue_import.tables import read_tables
from spreadsheets.reading import WorkbookInvalid, WorkbookRefused
from spreadsheets.workbook import questionnaire_workbook

CAIQ_HEADERS = [
    "Question ID",
    "Question",
    "CSP CAIQ Answer",
    "SSRM Control Ownership",
    "CSP Implementation Description (Optional/Recommended)",
    "CSC Responsibilities (Optional/Recommended)",
    "CCM Control ID",
    "CCM Control Specification",
    "CCM Control Title",
    "CCM Domain Title",
]
AI_CAIQ_HEADERS = [
    "Question ID",
    "Question",
    "Service Provider AI-CAIQ Answer",
    "SSRM Control Ownership",
    "Service Provider Implementation Description",
    "Service Customer Responsibilities",
]
# Invented questions, in the CSA layouts' shape (domain-number.sub-question codes).
CAIQ_ROWS = [
    [
        "A&A-01.1",
        "Is an audit plan kept?",
        None,
        None,
        None,
        None,
        "A&A-01",
        "Keep a plan.",
        "",
        "",
    ],
    [
        "A&A-01.2",
        "Is the plan reviewed yearly?",
        None,
        None,
        None,
        None,
        "A&A-01",
        "Review.",
        "",
        "",
    ],
    [
        "IAM-02.1",
        "Are admin accounts reviewed?",
        None,
        None,
        None,
        None,
        "IAM-02",
        "Review.",
        "",
        "",
    ],
]
AI_CAIQ_ROWS = [
    ["MDS-01.1", "Are model weights access-controlled?", None, None, None, None],
    ["MDS-01.2", "Is training data provenance recorded?", None, None, None, None],
    ["AIS-03.1", "Are prompts filtered for injection?", None, None, None, None],
]


def workbook(sheets: dict[str, Sequence[Sequence[Any]]]) -> bytes:
    book = Workbook()
    first = True
    for name, rows in sheets.items():
        sheet = book.active if first else book.create_sheet(name)
        assert sheet is not None
        sheet.title = name
        first = False
        for row in rows:
            sheet.append(list(row))
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def tables_of(content: bytes):
    return read_tables(io.BytesIO(content), size=len(content))


def document(content: bytes, mapping: ColumnMapping | None = None, **titles):
    tables = tables_of(content)
    return catalogue_document(
        tables,
        mapping or suggest_mapping(tables),
        slug=titles.pop("slug", "imported"),
        title_en=titles.pop("title_en", "Imported"),
        **titles,
    )


def questionnaire_of(doc) -> dict:
    return doc.data["questionnaire"]


def questions(doc) -> dict[str, dict]:
    return {
        q["code"]: q for section in questionnaire_of(doc)["sections"] for q in section["questions"]
    }


def problems(content: bytes, mapping: ColumnMapping | None = None) -> list:
    with pytest.raises(WorkbookInvalid) as refused:
        document(content, mapping)
    return refused.value.cells


def test_the_caiq_v4_preset_reads_csa_columns_below_their_title_row():
    content = workbook(
        {
            "CAIQv4.0.3": [
                ["Consensus Assessments Initiative Questionnaire v4.0.3"],
                CAIQ_HEADERS,
                *CAIQ_ROWS,
            ]
        }
    )
    tables = tables_of(content)
    mapping = suggest_mapping(tables)
    assert mapping.preset == "caiq-v4"
    assert mapping.header_row == 2
    assert mapping.columns == {"code": 1, "text_en": 2, "help_en": 8}
    doc = catalogue_document(tables, mapping, slug="caiq", title_en="CAIQ")
    # Sections are CSA's domains; codes are made fit for rule conditions (A&A → AA, "." → "-").
    assert [(s["code"], s["title"]["en"]) for s in questionnaire_of(doc)["sections"]] == [
        ("AA", "A&A"),
        ("IAM", "IAM"),
    ]
    found = questions(doc)
    assert list(found) == ["AA-01-1", "AA-01-2", "IAM-02-1"]
    question = found["AA-01-1"]
    assert question["text"] == {"en": "Is an audit plan kept?"}
    assert question["help"] == {"en": "Keep a plan."}
    # CSA's Yes / No / NA answer column: a required choice of three.
    assert question["type"] == "choice" and question["required"] is True
    assert [o["code"] for o in question["options"]] == ["yes", "no", "na"]
    # No Chinese column: English only, never the English copied in as the Chinese.
    assert all("zh-hant" not in q["text"] for q in found.values())
    # A starter ruleset: "No" to a control is a medium finding, for the author to review.
    ruleset = doc.data["ruleset"]
    assert ruleset["questionnaire"] == "caiq@1"
    assert [(r["id"], r["when"], r["severity"]) for r in ruleset["rules"]] == [
        ("AA-01-1-NO", 'AA_01_1 == "no"', "medium"),
        ("AA-01-2-NO", 'AA_01_2 == "no"', "medium"),
        ("IAM-02-1-NO", 'IAM_02_1 == "no"', "medium"),
    ]
    # Where each question is, for the catalogue's checks to name the cell.
    assert doc.lines.find(code=("question", "AA-01-2")) == "CAIQv4.0.3!A4"


def test_the_ai_caiq_preset_is_told_from_caiq_by_its_answer_column():
    content = workbook({"AI-CAIQ": [["AI-CAIQ v1.0"], AI_CAIQ_HEADERS, *AI_CAIQ_ROWS]})
    tables = tables_of(content)
    mapping = suggest_mapping(tables)
    assert mapping.preset == "ai-caiq"
    doc = catalogue_document(tables, mapping, slug="ai-caiq", title_en="AI-CAIQ")
    assert [s["code"] for s in questionnaire_of(doc)["sections"]] == ["MDS", "AIS"]
    found = questions(doc)
    assert found["MDS-01-2"]["text"]["en"] == "Is training data provenance recorded?"
    assert all(q["type"] == "choice" and len(q["options"]) == 3 for q in found.values())


def test_avias_own_workbook_comes_back_as_the_questionnaire_it_was_made_from():
    """The workbook spreadsheets.workbook exports (English): every question with its section,
    type, required flag and options' labels, read from its "How to answer" column."""
    path = next(p for p in builtin_questionnaire_files() if p.name.endswith("-v1.yaml"))
    spec = load_questionnaire_file(path)
    codes = [q.code for q in spec.iter_questions()]
    content = questionnaire_workbook(
        assessment_id=1,
        spec=spec,
        sections=spec.sections,
        values={},
        comments={},
        files={},
        editable=codes,
        language="en",
    )
    tables = tables_of(content)
    mapping = suggest_mapping(tables)
    assert mapping.preset == "avia"
    doc = catalogue_document(tables, mapping, slug="copy", title_en="Copy")
    sections = questionnaire_of(doc)["sections"]
    assert [s["code"] for s in sections] == [s.code for s in spec.sections]
    assert [s["title"]["en"] for s in sections] == [s.title.en for s in spec.sections]
    found = questions(doc)
    assert list(found) == codes
    for question in spec.iter_questions():
        imported = found[question.code]
        assert imported["text"]["en"] == question.text.en
        assert imported["required"] == question.required, question.code
        if question.type == "choice" and set(question.option_codes) == {"yes", "no", "unknown"}:
            assert imported["type"] in ("choice", "yes_no")
            continue
        assert imported["type"] == question.type, question.code
        labels = [o["label"]["en"] for o in imported.get("options", [])]
        assert labels == [o.label.en for o in question.options], question.code


def test_a_mapping_of_ones_own_makes_a_bilingual_questionnaire_avia_accepts():
    content = workbook(
        {
            "Sheet1": [
                ["Ref", "Area", "Question", "問題", "Guidance", "說明", "Kind", "Choices", "Must"],
                [
                    "1.1",
                    "Hosting",
                    "Where is data stored?",
                    "資料存放於何處？",
                    "Region.",
                    "地區。",
                    "choice",
                    "hk = Hong Kong | 香港\nOther | 其他",
                    "yes",
                ],
                ["1.2", "Hosting", "Nodes?", "節點數目？", "Nodes.", "節點。", "integer", "", "no"],
                [
                    "2.1",
                    "People | 人員",
                    "Is staff vetted?",
                    "員工有否審查？",
                    "Checks.",
                    "審查。",
                    "yes/no",
                    "",
                    "",
                ],
            ]
        }
    )
    tables = tables_of(content)
    mapping = ColumnMapping(
        sheets=("Sheet1",),
        header_row=1,
        columns={
            "code": 1,
            "section": 2,
            "text_en": 3,
            "text_zh": 4,
            "help_en": 5,
            "help_zh": 6,
            "type": 7,
            "options": 8,
            "required": 9,
        },
    )
    doc = catalogue_document(tables, mapping, slug="own", title_en="Own", title_zh="自訂")
    spec = parse_questionnaire(questionnaire_of(doc))  # as the catalogue's YAML is read
    assert [s.code for s in spec.sections] == ["HOSTING", "PEOPLE"]
    assert spec.sections[1].title.as_dict() == {"en": "People", "zh-hant": "人員"}
    where = spec.questions["Q1-1"]
    assert where.type == "choice" and where.required
    assert [(o.code, o.label.en, o.label.zh_hant) for o in where.options] == [
        ("hk", "Hong Kong", "香港"),
        ("other", "Other", "其他"),
    ]
    assert where.help.zh_hant == "地區。"
    assert spec.questions["Q1-2"].type == "integer" and not spec.questions["Q1-2"].required
    assert spec.questions["Q2-1"].type == "yes_no"


def test_suggest_mapping_finds_columns_by_their_headers():
    content = workbook(
        {
            "Qs": [["Code", "Section", "Question", "Type", "Options", "Required"]]
            + [["X-1", "S", "Why?", "text", "", "yes"]]
        }
    )
    tables = tables_of(content)
    mapping = suggest_mapping(tables)
    assert mapping.preset == ""
    assert mapping.columns == {
        "code": 1,
        "section": 2,
        "text_en": 3,
        "type": 4,
        "options": 5,
        "required": 6,
    }
    (question,) = questions(catalogue_document(tables, mapping, slug="s", title_en="S")).values()
    assert "help" not in question  # none given: none invented


def test_every_bad_row_is_reported_with_where_it_is_and_nothing_is_made():
    content = workbook(
        {
            "Qs": [
                ["Code", "Question", "Type", "Options", "Required"],
                ["OK-1", "Fine?", "text", "", "yes"],
                ["", "No code here", "text", "", ""],
                ["OK-1", "Same code again", "text", "", ""],
                ["OK-3", "", "text", "", ""],
                ["OK-4", "Odd type", "slider", "", ""],
                ["OK-5", "Pick one", "choice", "", ""],
                ["OK-6", "Required?", "text", "", "perhaps"],
                ["日本-1", "Bad code", "text", "", ""],
            ]
        }
    )
    found = {(c.row, c.column): c for c in problems(content)}
    assert set(found) == {(3, "A"), (4, "A"), (5, "B"), (6, "C"), (7, "D"), (8, "E"), (9, "A")}
    assert "empty" in found[(3, "A")].message
    assert "used twice" in found[(4, "A")].message and "row 2" in found[(4, "A")].message
    assert found[(4, "A")].code == "OK-1"
    assert "slider" in found[(6, "C")].message and "yes_no" in found[(6, "C")].message
    assert "needs options" in found[(7, "D")].message
    assert "perhaps" in found[(8, "E")].message
    assert (
        found[(5, "B")].text
        == "Sheet Qs, row 5, column B (OK-3): The English question text is empty."
    )


def test_errors_are_in_the_readers_language():
    content = workbook({"Qs": [["Code", "Question"], ["", "Why?"]]})
    with translation.override("zh-hant"):
        (cell,) = problems(content)
        assert "工作表" in cell.text or "Qs" in cell.text
        assert cell.message != "The question code is empty."


def test_a_chinese_column_needs_both_texts_of_every_question():
    content = workbook(
        {"Qs": [["Code", "Question", "問題"], ["A-1", "One?", "一？"], ["A-2", "Two?", None]]}
    )
    (cell,) = problems(content)
    assert (cell.row, cell.column, cell.code) == (3, "C", "A-2")
    assert "Traditional Chinese" in cell.message


def test_a_formula_is_refused_never_calculated_nor_read_as_text():
    content_book = Workbook()
    sheet = content_book.active
    sheet.append(["Code", "Question"])
    sheet.append(["F-1", '=HYPERLINK("http://example.invalid","Click")'])
    sheet.append(["F-2", "Plain?"])
    out = io.BytesIO()
    content_book.save(out)
    (cell,) = problems(out.getvalue())
    assert (cell.row, cell.column, cell.code) == (2, "B", "F-1")
    assert "formula" in cell.message


def test_a_zip_bomb_is_refused_unopened():
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/worksheets/sheet1.xml", b"0" * (60 * 1024 * 1024))
    assert len(bomb.getvalue()) < 200_000
    with pytest.raises(WorkbookRefused, match="unpacks to more than"):
        tables_of(bomb.getvalue())


def test_a_file_that_is_not_a_workbook_is_refused():
    with pytest.raises(WorkbookRefused, match="not an Excel workbook"):
        tables_of(b"Code,Question\nA-1,Why?\n")


def test_an_oversized_file_is_refused(settings):
    settings.WORKBOOK_MAX_BYTES = 1000
    content = workbook(
        {"Qs": [["Code", "Question"], *[[f"A-{n}", "Why?" * 20] for n in range(50)]]}
    )
    with pytest.raises(WorkbookRefused, match="at most"):
        tables_of(content)


def test_too_many_question_rows_are_refused():
    rows = [[f"Q-{n}", f"Question {n}?"] for n in range(catalogue_tables.MAX_QUESTIONS + 1)]
    content = workbook({"Qs": [["Code", "Question"], *rows]})
    with pytest.raises(WorkbookRefused, match="1,001 question rows; at most 1,000"):
        document(content)
    # A workbook far over the bound is refused as it is read, before it is held in memory.
    rows = [[f"Q-{n}", "Why?"] for n in range(catalogue_tables.MAX_QUESTIONS + 100)]
    with pytest.raises(WorkbookRefused, match="question rows"):
        tables_of(workbook({"Qs": [["Code", "Question"], *rows]}))


def test_a_sheet_of_too_many_rows_is_refused(monkeypatch):
    monkeypatch.setattr(catalogue_tables, "MAX_SHEET_ROWS", 30)
    content = workbook({"Qs": [["Code", "Question"], *([[None, None]] * 40), ["A-1", "Why?"]]})
    with pytest.raises(WorkbookRefused, match="more than 30 rows"):
        tables_of(content)


def test_hidden_sheets_are_not_read():
    book = Workbook()
    visible = book.active
    visible.title = "Qs"
    visible.append(["Code", "Question"])
    visible.append(["A-1", "Shown?"])
    hidden = book.create_sheet("Secret")
    hidden.append(["Code", "Question"])
    hidden.append(["B-1", "Hidden?"])
    hidden.sheet_state = "hidden"
    out = io.BytesIO()
    book.save(out)
    tables = tables_of(out.getvalue())
    assert tables.names == ["Qs"]
