"""What the workbook holds: the reader's sections, their questions with help and how to answer
them, Excel's own checks on the answer cells, the current answers as labels, and protection."""

from __future__ import annotations

import io

import pytest
from django.test import Client
from django.urls import reverse
from openpyxl import load_workbook

from assessments import factories
from assessments.models import Channel
from assessments.services.answers import answers_save
from tests.personas import member_of

from .conftest import cell_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored(catalog, personas, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    return factories.incident_assessment(member=member_of(personas.ava), submit=False)


def member_workbook(personas, assessment, language="en") -> bytes:
    client = Client()
    client.force_login(personas.ava)
    response = client.get(reverse("spreadsheets:workbook_download", args=[assessment.pk, language]))
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    return response.content


def book_of(content: bytes):
    return load_workbook(io.BytesIO(content))


def row_of(sheet, code: str) -> int:
    for (cell,) in sheet.iter_rows(min_col=1, max_col=1):
        if cell.value == code:
            return cell.row
    raise KeyError(code)


def validation_of(sheet, coordinate: str):
    matches = [dv for dv in sheet.data_validations.dataValidation if coordinate in dv.sqref]
    assert len(matches) == 1, coordinate
    return matches[0]


def test_the_member_gets_every_section_and_the_vendor_only_theirs(scored, personas, client):
    member = book_of(member_workbook(personas, scored))
    sections = [s.code for s in scored.questionnaire.spec.sections]
    assert [s.title for s in member.worksheets if s.sheet_state == "visible"][1:] == sections
    from assessments.services.vendor_links import vendor_link_issue

    _link, token = vendor_link_issue(
        assessment=scored,
        contact_email="sec@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    vendor = book_of(client.get(reverse("portal_workbook:download", args=[token, "en"])).content)
    visible = [s.title for s in vendor.worksheets if s.sheet_state == "visible"]
    assert "USE" not in visible and "USE" in sections and "CTX" in visible


def test_choices_are_drop_downs_of_labels_in_the_workbooks_language(scored, personas):
    for language, shared, yes in (
        ("en", "Shared multi-tenant endpoint", "Yes"),
        ("zh-hant", None, "是"),
    ):
        book = book_of(member_workbook(personas, scored, language))
        sheet = book["PRF"]
        row = row_of(sheet, "PRF-03")
        check = validation_of(sheet, f"E{row}")
        assert check.type == "list"
        sheet_name, cells = check.formula1.split("!")
        first, last = cells.replace("$", "").split(":")
        lists = book[sheet_name]
        assert lists.sheet_state == "hidden"
        labels = [c.value for (c,) in lists[first:last]]
        spec = scored.questionnaire.spec
        expected = [o.label.get(language) for o in spec.questions["PRF-03"].options]
        assert labels == expected
        if shared:
            assert shared in labels
        # The current answer is prefilled as its label.
        assert (
            sheet[f"E{row}"].value
            == expected[
                [o.code for o in spec.questions["PRF-03"].options].index("shared_multi_tenant")
            ]
        )
        yes_no_row = row_of(sheet, "PRF-07")
        assert sheet[f"E{yes_no_row}"].value == yes


def test_numbers_dates_and_lists_are_explained_and_checked(scored, personas):
    book = book_of(member_workbook(personas, scored))
    ctx = book["CTX"]
    row = row_of(ctx, "CTX-01")
    check = validation_of(ctx, f"E{row}")
    assert (check.type, check.operator, check.formula1) == ("whole", "between", "0")
    assert "tokens" in ctx[f"D{row}"].value
    assert ctx[f"E{row}"].value == 1048576  # a number, shown grouped
    assert ctx[f"E{row}"].number_format == "#,##0"
    iso = book["ISO"]
    date_row = row_of(iso, "ISO-05")
    assert validation_of(iso, f"E{date_row}").type == "date"
    assert "YYYY-MM-DD" in iso[f"D{date_row}"].value
    prf = book["PRF"]
    multi = row_of(prf, "PRF-04")
    assert "“;”" in prf[f"D{multi}"].value
    assert prf[f"E{multi}"].value.count(";") == 4  # five regions, as the launch answers
    # A version is typed as text: Excel does not turn 0.5.19 into a date.
    assert prf[f"E{row_of(prf, 'PRF-06')}"].number_format == "@"


def test_conditions_are_stated_in_words(scored, personas):
    english = book_of(member_workbook(personas, scored))["INC"]
    chinese = book_of(member_workbook(personas, scored, "zh-hant"))["INC"]
    row = row_of(english, "INC-02")
    assert "Answer only if INC-01 = Yes." in english[f"D{row}"].value
    assert "INC-01 = 是" in chinese[f"D{row}"].value
    prf = book_of(member_workbook(personas, scored))["PRF"]
    assert "PRF-05 ≠ Proprietary" in prf[f"D{row_of(prf, 'PRF-06')}"].value


@pytest.mark.parametrize(
    ("language", "salt_from_request", "kv11_condition"),
    [
        ("en", "A salt or cache key taken from the request", "KV-06 = Yes and KV-05 = Isolated"),
        ("zh-hant", "取自請求的鹽值或快取鍵", "KV-06 = 是，且 KV-05 = 按租戶隔離"),
    ],
)
def test_version_3_asks_how_cache_isolation_is_enforced_with_its_conditions(
    catalog, personas, language, salt_from_request, kv11_condition
):
    """KV-10 to KV-12 (v3.md) in the KV sheet: their conditions in words, KV-10's and KV-11's
    options in the drop-down, KV-12 free text, and the answers already given."""
    v3 = factories.incident_assessment(
        member=member_of(personas.ava),
        answers_from=factories.OVERCLAIMED_V3,
        evidence=(),
        submit=False,
    )
    book = book_of(member_workbook(personas, v3, language))
    kv = book["KV"]
    rows = {code: row_of(kv, code) for code in ("KV-09", "KV-10", "KV-11", "KV-12")}
    assert rows["KV-09"] < rows["KV-10"] < rows["KV-11"] < rows["KV-12"]
    assert "KV-05 = " in kv[f"D{rows['KV-10']}"].value
    assert kv11_condition in kv[f"D{rows['KV-11']}"].value
    assert "KV-06 = " in kv[f"D{rows['KV-12']}"].value
    assert kv[f"E{rows['KV-10']}"].value == salt_from_request  # the answer, as its label
    for code, count in (("KV-10", 4), ("KV-11", 4)):
        check = validation_of(kv, f"E{rows[code]}")
        assert check.type == "list"
        first, last = check.formula1.split("!")[1].replace("$", "").split(":")
        assert len(book["lists"][first:last]) == count
    assert kv[f"E{rows['KV-12']}"].value.startswith("LMCache")
    assert not kv[f"E{rows['KV-12']}"].protection.locked


def test_file_questions_are_uploaded_in_the_portal(scored, personas):
    ctx = book_of(member_workbook(personas, scored))["CTX"]
    row = row_of(ctx, "CTX-08")
    assert factories.LAUNCH_LOG in ctx[f"E{row}"].value  # the file already uploaded
    assert ctx[f"E{row}"].protection.locked
    assert "portal" in ctx[f"D{row}"].value


def test_the_probe_result_is_neither_uploaded_nor_commented_in_the_workbook(catalog, personas):
    """PRB-02 is produced by AVIA: the portal and the forms take no file and no comment for
    it, so the workbook offers none (a comment typed there could only be refused)."""
    ava = member_of(personas.ava)
    draft = factories.incident_assessment(
        member=ava, answers_from=factories.LAUNCH_V2, evidence=(), submit=False
    )
    prb = book_of(member_workbook(personas, draft))["PRB"]
    row = row_of(prb, "PRB-02")
    assert prb[f"E{row}"].protection.locked and prb[f"F{row}"].protection.locked
    assert "portal" not in prb[f"D{row}"].value and "portal" not in (prb[f"E{row}"].value or "")
    assert "AVIA attaches" in prb[f"D{row}"].value
    assert not prb[f"F{row - 1}"].protection.locked  # PRB-01, the consent, is answered here


def test_only_answers_and_comments_can_be_typed_in(scored, personas):
    book = book_of(member_workbook(personas, scored))
    assert book.security.lockStructure
    assert book["avia"].sheet_state == "hidden"
    ctx = book["CTX"]
    assert ctx.protection.sheet
    row = row_of(ctx, "CTX-01")
    assert not ctx[f"E{row}"].protection.locked and not ctx[f"F{row}"].protection.locked
    assert ctx[f"A{row}"].protection.locked and ctx[f"B{row}"].protection.locked


def test_a_saved_text_that_looks_like_a_formula_stays_text(scored, personas):
    answers_save(
        assessment=scored,
        answers={"INC-01": "yes", "INC-02": '=HYPERLINK("http://x","y")'},
        comments={"CTX-01": "+1 more than the pool"},
        actor=personas.ava,
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    content = member_workbook(personas, scored)
    answer = cell_of(content, "INC-02")
    assert answer.data_type == "s" and answer.value == '=HYPERLINK("http://x","y")'
    comment = cell_of(content, "CTX-01", "F")
    assert comment.data_type == "s" and comment.value == "+1 more than the pool"


def test_a_closed_assessment_gives_a_workbook_with_nothing_to_type_in(catalog, personas, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    closed = factories.incident_assessment(member=member_of(personas.ava))
    ctx = book_of(member_workbook(personas, closed))["CTX"]
    row = row_of(ctx, "CTX-01")
    assert ctx[f"E{row}"].protection.locked
    assert "cannot be changed now" in ctx[f"D{row}"].value.lower()
