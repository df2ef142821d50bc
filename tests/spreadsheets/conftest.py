"""A vendor's assessment waiting for answers, and a person filling the workbook with openpyxl.

`fill` does what a person does in Excel: it finds each question's row by the code in column A
and types into the answer and comment columns; it knows nothing of how AVIA reads them back.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from openpyxl import load_workbook

from assessments import factories
from assessments.models import Assessment, Channel, Vendor, VendorLink
from assessments.services.answers import assessment_create, buyer_section_codes
from assessments.services.vendor_links import vendor_link_issue
from questionnaires.models import QuestionnaireVersion
from tests.personas import member_of

ANSWER_COLUMN, COMMENT_COLUMN = "E", "F"  # as the header row of every section sheet says
# The words of the yes/no drop-down, as a reader of each language reads them on the pages.
YES_NO = {
    "en": {"yes": "Yes", "no": "No", "unknown": "Unknown"},
    "zh-hant": {"yes": "是", "no": "否", "unknown": "不確定"},
}


@dataclass
class Waiting:
    assessment: Assessment
    link: VendorLink
    token: str


def waiting_assessment(
    member, *, questionnaire: str = "ai-inference-isolation@1", vendor_name: str = ""
) -> Waiting:
    """An assessment with the buyer's answers only, sent to the vendor's contact."""
    vendor = Vendor.objects.filter(
        organization=member.organization, name=vendor_name or factories.VENDOR_NAME
    ).first() or factories.incident_vendor(
        member=member, **({"name": vendor_name} if vendor_name else {})
    )
    launch = factories.example()
    spec = QuestionnaireVersion.objects.get(
        slug=questionnaire.split("@")[0], version=questionnaire.split("@")[1]
    ).spec
    buyer = buyer_section_codes(spec)
    assessment = assessment_create(
        organization=member.organization,
        vendor=vendor,
        questionnaire_key=questionnaire,
        actor=member.user,
        channel=Channel.WEB,
        answers={
            code: value
            for code, value in launch["answers"].items()
            if code in spec.questions and spec.questions[code].section in buyer
        },
    )
    link, token = vendor_link_issue(
        assessment=assessment,
        contact_email=factories.VENDOR_CONTACT,
        member=member,
        channel=Channel.WEB,
    )
    assessment.refresh_from_db()
    return Waiting(assessment=assessment, link=link, token=token)


@pytest.fixture
def waiting(catalog, personas) -> Waiting:
    return waiting_assessment(member_of(personas.ava))


def as_typed(spec, answers: Mapping[str, Any], language: str) -> dict[str, Any]:
    """Answers (codes) as a person types them in a workbook: option labels of the language,
    several separated by ";", numbers as numbers."""
    typed: dict[str, Any] = {}
    for code, value in answers.items():
        question = spec.questions[code]
        if question.type == "yes_no":
            typed[code] = YES_NO[language][value]
        elif question.type in ("choice", "multi_choice"):
            labels = {o.code: o.label.get(language) for o in question.options}
            chosen = value if isinstance(value, list) else [value]
            typed[code] = "; ".join(labels[c] for c in chosen)
        else:
            typed[code] = value
    return typed


def fill(
    content: bytes,
    answers: Mapping[str, Any],
    comments: Mapping[str, str] | None = None,
) -> bytes:
    """Type `answers` (and `comments`) into the rows of their codes; None empties a cell."""
    book = load_workbook(io.BytesIO(content))
    remaining = dict(answers)
    remaining_comments = dict(comments or {})
    for sheet in book.worksheets:
        if sheet.sheet_state != "visible":
            continue
        for (code_cell,) in sheet.iter_rows(min_col=1, max_col=1):
            code = code_cell.value
            row = code_cell.row
            if code in remaining:
                sheet[f"{ANSWER_COLUMN}{row}"].value = remaining.pop(code)
            if code in remaining_comments:
                sheet[f"{COMMENT_COLUMN}{row}"].value = remaining_comments.pop(code)
    assert not remaining and not remaining_comments, "codes not found in the workbook"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def cell_of(content: bytes, code: str, column: str = ANSWER_COLUMN) -> Any:
    book = load_workbook(io.BytesIO(content))
    for sheet in book.worksheets:
        for (code_cell,) in sheet.iter_rows(min_col=1, max_col=1):
            if code_cell.value == code:
                return sheet[f"{column}{code_cell.row}"]
    raise KeyError(code)


def upload(content: bytes, name: str = "answers.xlsx") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content)


def saved_answers(assessment: Assessment) -> dict[str, Any]:
    return dict(assessment.answers.exclude(value=None).values_list("question_code", "value"))
