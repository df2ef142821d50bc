"""The import pages: upload a spreadsheet, see the mapping screen pre-filled from its layout,
submit it; the document goes to the catalogue's draft service only when every row is valid."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from questionnaires.models import QuestionnaireVersion
from scoring.models import Ruleset
from scoring.selectors import rulesets_owned_by
from scoring.services import catalogue_draft_create
from spreadsheets.catalogue_import.document import catalogue_document
from spreadsheets.catalogue_import.mapping import suggest_mapping
from spreadsheets.catalogue_import.tables import read_tables
from spreadsheets.workbook import questionnaire_workbook
from tests.personas import member_of

from .conftest import upload
from .test_catalogue_import import CAIQ_HEADERS, CAIQ_ROWS, workbook

pytestmark = pytest.mark.django_db


@pytest.fixture
def saved(personas):
    """The drafts saved in any organization (the catalogue's own draft service saves them)."""

    class Saved:
        def __eq__(self, other):
            return list(Ruleset.objects.filter(organization__isnull=False)) == other

    return Saved()


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def caiq_workbook(rows=CAIQ_ROWS) -> bytes:
    return workbook({"CAIQv4.0.3": [["CAIQ v4.0.3"], CAIQ_HEADERS, *rows]})


def uploaded(client: Client, content: bytes, **data):
    return client.post(
        reverse("spreadsheets:catalogue_import"),
        {"workbook": upload(content, "caiq.xlsx"), **data},
    )


def mapping_post(form) -> dict:
    """The mapping form as the page pre-filled it, as a browser would send it back."""
    data = {}
    for name in form.fields:
        value = form[name].value()
        if value is None or value is False:
            continue
        data[name] = value
    return data


def test_the_owner_imports_a_caiq_workbook_through_the_mapping_screen(personas, saved):
    client = signed_in(personas.alice)
    response = uploaded(client, caiq_workbook())
    assert response.status_code == 302
    page = client.get(response["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    assert "Question ID" in html and "Is an audit plan kept?" in html  # headers and first rows
    form = page.context["form"]
    assert form["code"].value() == "1" and form["text_en"].value() == "2"
    assert form["preset"].value() == "caiq-v4"
    data = {**mapping_post(form), "title_en": "Cloud questionnaire"}
    done = client.post(response["Location"], data)
    assert done.status_code == 302, done.context and done.context["form"].errors
    (draft,) = rulesets_owned_by(organization=personas.acme)
    assert done["Location"] == reverse("portfolio:catalogue", args=[draft.pk])
    assert draft.is_draft and draft.key == "cloud-questionnaire-rules@1"
    spec = draft.questionnaire.spec
    assert spec.key == "cloud-questionnaire@1"
    assert list(spec.questions) == ["AA-01-1", "AA-01-2", "IAM-02-1"]
    assert spec.questions["AA-01-1"].option_codes == ("yes", "no", "na")
    assert draft.questionnaire.english_only  # no Chinese column
    assert not rulesets_owned_by(organization=personas.other).exists()
    # The pending upload is gone with its draft made.
    assert client.get(response["Location"]).status_code == 302


def test_bad_rows_are_listed_and_nothing_reaches_the_draft_service(personas, saved):
    client = signed_in(personas.alice)
    rows = [*CAIQ_ROWS, ["IAM-02.1", "The same code again", None], ["", "No code", None]]
    response = uploaded(client, caiq_workbook(rows))
    page = client.get(response["Location"])
    data = {**mapping_post(page.context["form"]), "title_en": "Cloud"}
    refused = client.post(response["Location"], data)
    assert refused.status_code == 400
    cells = refused.context["cells"]
    assert [(c.sheet, c.row, c.column) for c in cells] == [
        ("CAIQv4.0.3", 6, "A"),
        ("CAIQv4.0.3", 7, "A"),
    ]
    assert "IAM-02-1" in refused.content.decode()
    assert saved == []


def test_the_errors_are_in_the_members_language(personas, saved):
    client = signed_in(personas.alice)
    response = uploaded(client, caiq_workbook([*CAIQ_ROWS, ["", "No code", None]]))
    page = client.get(response["Location"])
    data = {**mapping_post(page.context["form"]), "title_en": "Cloud"}
    client.cookies["django_language"] = "zh-hant"
    refused = client.post(response["Location"], data)
    (cell,) = refused.context["cells"]
    with translation.override("zh-hant"):
        assert cell.message == translation.gettext("The question code is empty.")
    assert cell.message != "The question code is empty."


def test_a_zip_bomb_is_refused_on_upload_and_nothing_is_kept(personas, saved):
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/worksheets/sheet1.xml", b"0" * (60 * 1024 * 1024))
    response = uploaded(signed_in(personas.alice), bomb.getvalue())
    assert response.status_code == 400
    assert "unpacks to more than" in " ".join(response.context["form"].errors["workbook"])
    assert saved == []


def test_a_code_longer_than_the_catalogue_takes_is_refused_at_its_cell(personas, saved):
    """The catalogue's bound on codes (questionnaires.bounds) holds for a spreadsheet too."""
    client = signed_in(personas.alice)
    long_code = "IAM-" + "1" * 20
    response = uploaded(client, caiq_workbook([*CAIQ_ROWS[:2], [long_code, "Long?", None]]))
    page = client.get(response["Location"])
    data = {**mapping_post(page.context["form"]), "title_en": "Cloud"}
    refused = client.post(response["Location"], data)
    assert refused.status_code == 400
    (cell,) = refused.context["cells"]
    assert (cell.row, cell.column) == (5, "A") and "20" in cell.message
    assert saved == []


def test_what_the_catalogues_own_checks_refuse_is_listed_and_nothing_is_saved(personas, saved):
    client = signed_in(personas.alice)
    response = uploaded(client, caiq_workbook())
    page = client.get(response["Location"])
    data = {**mapping_post(page.context["form"]), "title_en": "Cloud", "slug": "Cloud_Q"}
    refused = client.post(response["Location"], data)
    assert refused.status_code == 400
    problems = refused.context["problems"]  # the questionnaire's slug and its ruleset's
    assert problems and all(p["file"] == "caiq.xlsx" and "slug" in p["message"] for p in problems)
    assert "Cloud_Q" in refused.content.decode()
    assert saved == []


def test_only_roles_that_write_catalogues_may_import(personas):
    assert signed_in(personas.ava).get(reverse("spreadsheets:catalogue_import")).status_code == 403
    assert uploaded(signed_in(personas.vic), caiq_workbook()).status_code == 403


def test_an_upload_is_kept_for_its_member_only(personas, saved):
    response = uploaded(signed_in(personas.alice), caiq_workbook())
    address = response["Location"]
    # Another organization's owner with the same address: no such upload for them.
    outsider = signed_in(personas.oscar)
    assert outsider.get(address).status_code == 302
    assert outsider.post(address, {"title_en": "Stolen"}).status_code == 302
    assert saved == []


def test_avias_own_workbook_becomes_a_draft_the_catalogue_accepts(catalog, personas):
    """AVIA's questionnaire workbook, exported and imported again, through the catalogue's own
    draft service: every answer type of the shipped questionnaire is one it accepts."""
    spec = QuestionnaireVersion.objects.get(slug="ai-inference-isolation", version="3").spec
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
    tables = read_tables(io.BytesIO(content), size=len(content))
    document = catalogue_document(
        tables, suggest_mapping(tables), slug="our-copy", title_en="Our copy"
    )
    draft = catalogue_draft_create(context=member_of(personas.alice), document=document)
    imported = draft.questionnaire.spec
    assert list(imported.questions) == codes
    assert [q.type for q in imported.iter_questions()] == [
        "yes_no"
        if q.type == "choice" and set(q.option_codes) == {"yes", "no", "unknown"}
        else q.type
        for q in spec.iter_questions()
    ]
    assert draft.english_only


def test_choosing_another_layout_fills_the_mapping_again(personas):
    client = signed_in(personas.alice)
    response = uploaded(client, caiq_workbook())
    preset = client.get(response["Location"]).context["form"]
    assert preset["help_en"].value() == "8"  # CAIQ's control specification
    own = client.get(response["Location"], {"preset": "none"}).context["form"]
    assert own["preset"].value() == ""
    assert own["help_en"].value() is None  # no header is named "help"
    assert own["text_en"].value() == "2"  # "Question", by its name
