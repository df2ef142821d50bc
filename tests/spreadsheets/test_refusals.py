"""A file that is not this assessment's workbook, or not a workbook at all, is refused with a
clear message and no 500; a cell that holds no answer (a formula) is reported, not calculated."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.test import Client
from django.urls import reverse
from openpyxl import load_workbook

from assessments import factories
from spreadsheets.layout import WorkbookLayout
from tests.personas import member_of

from .conftest import fill, saved_answers, upload, waiting_assessment

pytestmark = pytest.mark.django_db


def download(client: Client, token: str, language: str = "en") -> bytes:
    return client.get(reverse("portal_workbook:download", args=[token, language])).content


def post(client: Client, token: str, content: bytes, name: str = "answers.xlsx"):
    return client.post(
        reverse("portal_workbook:page", args=[token]), {"workbook": upload(content, name)}
    )


def refusal(response) -> str:
    assert response.status_code == 400, response.status_code
    return " ".join(response.context["form"].errors["workbook"])


def resigned(content: bytes, **changes) -> bytes:
    """The workbook with its signature made anew by AVIA's own key, for another layout."""
    book = load_workbook(io.BytesIO(content))
    signature = book["avia"]
    found = WorkbookLayout.from_signed(signature["A1"].value)
    signature["A1"].value = WorkbookLayout(**{**found.__dict__, **changes}).signed()
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_a_file_that_is_not_a_workbook_is_refused(waiting, client):
    message = refusal(post(client, waiting.token, b"vendor,answer\nPRF-01,x\n", "answers.csv"))
    assert "not an Excel workbook" in message


def encrypted_workbook() -> bytes:
    """What Excel saves with "Encrypt with Password": not a zip archive but an OLE compound
    file whose streams are EncryptionInfo and EncryptedPackage (their names in UTF-16 in the
    file's directory)."""
    header = bytes.fromhex("d0cf11e0a1b11ae1") + bytes(504)
    directory = "".join(
        f"{name}".ljust(32, "\0") for name in ("Root Entry", "EncryptionInfo", "EncryptedPackage")
    ).encode("utf-16-le")
    return header + bytes(512) + directory + bytes(4096)


def test_a_password_protected_workbook_is_refused_for_that_reason(waiting, client):
    message = refusal(post(client, waiting.token, encrypted_workbook()))
    assert "password" in message
    assert "not an Excel workbook" not in message


def test_a_zip_bomb_is_refused_unopened(waiting, client):
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/worksheets/sheet1.xml", b"0" * (60 * 1024 * 1024))
    assert len(bomb.getvalue()) < 200_000
    assert "unpacks to more than" in refusal(post(client, waiting.token, bomb.getvalue()))


def test_a_broken_workbook_is_refused(waiting, client):
    broken = io.BytesIO()
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("[Content_Types].xml", b"<not-xml")
    assert "could not be read" in refusal(post(client, waiting.token, broken.getvalue()))


def test_a_file_over_the_size_limit_is_refused(waiting, client, settings):
    settings.WORKBOOK_MAX_BYTES = 1000
    assert "at most" in refusal(post(client, waiting.token, download(client, waiting.token)))


def test_a_workbook_without_a_signature_sheet_is_refused(waiting, client):
    book = load_workbook(io.BytesIO(download(client, waiting.token)))
    del book["avia"]
    out = io.BytesIO()
    book.save(out)
    assert "no AVIA signature sheet" in refusal(post(client, waiting.token, out.getvalue()))


def test_a_tampered_signature_is_refused(waiting, client):
    book = load_workbook(io.BytesIO(download(client, waiting.token)))
    signed = book["avia"]["A1"].value
    book["avia"]["A1"].value = signed[:-3] + ("AAA" if not signed.endswith("AAA") else "BBB")
    out = io.BytesIO()
    book.save(out)
    assert "signature sheet was changed" in refusal(post(client, waiting.token, out.getvalue()))


def test_a_workbook_of_another_assessment_is_refused(catalog, personas, client):
    ava = member_of(personas.ava)
    first, second = waiting_assessment(ava), waiting_assessment(ava)
    message = refusal(post(client, second.token, download(client, first.token)))
    assert "another assessment" in message
    # Another organization's assessment alike (its link reaches its own assessment only).
    outsider = waiting_assessment(member_of(personas.oscar))
    assert "another assessment" in refusal(
        post(client, outsider.token, download(client, first.token))
    )


def test_a_workbook_of_another_questionnaire_version_is_refused(waiting, client):
    content = resigned(download(client, waiting.token), questionnaire="ai-inference-isolation@2")
    message = refusal(post(client, waiting.token, content))
    assert "ai-inference-isolation@2" in message and "ai-inference-isolation@1" in message


def test_moved_rows_are_refused(waiting, client):
    book = load_workbook(io.BytesIO(download(client, waiting.token)))
    book["CTX"].insert_rows(5)
    out = io.BytesIO()
    book.save(out)
    message = refusal(post(client, waiting.token, out.getvalue()))
    assert "moved" in message and "CTX" in message


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda sheet: sheet.insert_cols(5), id="a-column-added-before-the-answers"),
        pytest.param(lambda sheet: sheet.delete_cols(3), id="the-help-column-removed"),
    ],
)
def test_moved_columns_are_refused(catalog, personas, client, change):
    """A sheet's protection has no password: someone may unprotect it and add a column of
    their own, or remove one. The answers are then in another column than AVIA reads: the
    workbook is refused as moved, never read from the wrong column ("required" everywhere, or
    a comment taken for an answer)."""
    ava = member_of(personas.ava)
    draft = factories.incident_assessment(
        member=ava, submit=False, comments={"PRF-09": "Served from Hong Kong."}
    )
    owner = Client()
    owner.force_login(personas.ava)
    book = load_workbook(
        io.BytesIO(
            owner.get(reverse("spreadsheets:workbook_download", args=[draft.pk, "en"])).content
        )
    )
    change(book["PRF"])
    out = io.BytesIO()
    book.save(out)
    before = saved_answers(draft)
    response = owner.post(
        reverse("spreadsheets:workbook", args=[draft.pk]), {"workbook": upload(out.getvalue())}
    )
    message = refusal(response)
    assert "column" in message and "PRF" in message
    assert saved_answers(draft) == before


def test_a_formula_is_reported_never_calculated(waiting, client):
    content = fill(download(client, waiting.token), {"CTX-01": "=1024*1024"})
    response = post(client, waiting.token, content)
    assert response.status_code == 400
    messages = {c.code: c.message for c in response.context["cells"]}
    assert "formula" in messages["CTX-01"]
    assert "CTX-01" not in saved_answers(waiting.assessment)


def test_nothing_changes_once_the_answers_are_submitted(catalog, personas, client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    ava = member_of(personas.ava)
    scored = factories.incident_assessment(member=ava)
    owner = Client()
    owner.force_login(personas.ava)
    content = owner.get(reverse("spreadsheets:workbook_download", args=[scored.pk, "en"])).content
    response = owner.post(
        reverse("spreadsheets:workbook", args=[scored.pk]),
        {"workbook": upload(fill(content, {"CTX-01": 2000000}))},
    )
    assert response.status_code == 409
    assert saved_answers(scored)["CTX-01"] == 1048576


def rezipped(content: bytes, replace: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(content)) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            target.writestr(item.filename, replace.get(item.filename, source.read(item.filename)))
    return out.getvalue()


LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">&lol4;</workbook>"""


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda content: b"", id="empty"),
        pytest.param(lambda content: bytes(range(256)) * 40, id="random-bytes"),
        pytest.param(lambda content: content[: len(content) // 2], id="cut-short"),
        pytest.param(
            lambda content: rezipped(content, {"xl/workbook.xml": LAUGHS}), id="xml-entities"
        ),
        pytest.param(
            lambda content: rezipped(content, {"xl/worksheets/sheet3.xml": b"<worksheet"}),
            id="broken-sheet",
        ),
    ],
)
def test_no_file_gives_a_500(waiting, client, make):
    before = saved_answers(waiting.assessment)
    content = make(download(client, waiting.token))
    response = post(client, waiting.token, content)
    assert response.status_code == 400
    assert response.context["form"].errors["workbook"]
    assert saved_answers(waiting.assessment) == before
