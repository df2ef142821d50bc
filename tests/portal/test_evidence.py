"""Evidence uploads on file questions: parsed, kept when unparseable, removable, tenant-scoped."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from assessments.models import Channel, EvidenceFile
from assessments.services.evidence import evidence_add

from .conftest import log_upload, portal_url

pytestmark = pytest.mark.urls("tests.portal.urls")


def test_uploading_a_startup_log_shows_its_parse_result(client, token, assessment):
    response = client.post(
        portal_url(token, "section", "CTX"), {"upload": "CTX-08", "CTX-08": log_upload()}
    )
    assert response.status_code == 302
    assert response["Location"] == portal_url(token, "section", "CTX") + "#q-CTX-08"
    evidence = EvidenceFile.objects.get(assessment=assessment)
    assert evidence.parsed
    page = client.get(portal_url(token, "section", "CTX")).content.decode()
    assert "sglang-prefill-glm53-launch.log" in page
    assert "SGLang log: pool 681,280 tokens, context 1,048,576 tokens" in page
    assert f'name="remove" value="{evidence.pk}"' in page


def test_an_unparseable_upload_is_kept_and_marked_not_parsed(client, token, assessment):
    upload = SimpleUploadedFile("notes.txt", b"We restarted the servers on Tuesday.\n")
    response = client.post(
        portal_url(token, "section", "CTX"), {"upload": "CTX-08", "CTX-08": upload}
    )
    assert response.status_code == 302
    evidence = EvidenceFile.objects.get(assessment=assessment)
    assert not evidence.parsed
    page = client.get(portal_url(token, "section", "CTX")).content.decode()
    assert "notes.txt" in page
    assert "not parsed:" in page  # the parser's reason (its translation comes with evidence-v2)


def test_a_refused_file_type_is_reported_at_the_question(client, token, assessment):
    upload = SimpleUploadedFile("tool.bin", b"\x7fELF\x02\x01\x01" + b"\x00" * 64)
    response = client.post(
        portal_url(token, "section", "CTX"), {"upload": "CTX-08", "CTX-08": upload}
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert 'href="#q-CTX-08-file"' in page
    assert "CTX-08: Files of this type" in page
    assert not EvidenceFile.objects.filter(assessment=assessment).exists()


def test_an_upload_without_a_file_asks_for_one(client, token):
    response = client.post(portal_url(token, "section", "CTX"), {"upload": "CTX-08"})
    assert response.status_code == 400
    assert "Choose a file to upload." in response.content.decode()


def test_only_file_questions_of_vendor_sections_take_uploads(client, token, assessment):
    for code in ("CTX-01", "USE-01", "NOPE-1", ""):
        response = client.post(
            portal_url(token, "section", "PRF"), {"upload": code, code: log_upload()}
        )
        assert response.status_code == 404
    assert not EvidenceFile.objects.filter(assessment=assessment).exists()


def test_a_file_can_be_removed(client, token, assessment):
    client.post(portal_url(token, "section", "CTX"), {"upload": "CTX-08", "CTX-08": log_upload()})
    evidence = EvidenceFile.objects.get(assessment=assessment)
    response = client.post(portal_url(token, "section", "CTX"), {"remove": evidence.pk})
    assert response.status_code == 302
    assert not EvidenceFile.objects.filter(pk=evidence.pk).exists()
    assert "Removed" in client.get(response["Location"]).content.decode()


def test_an_upload_keeps_what_was_typed_in_the_section(client, token, assessment):
    """The upload button submits the whole section: typed answers are kept as drafts first."""
    response = client.post(
        portal_url(token, "section", "CTX"),
        {"upload": "CTX-08", "CTX-08": log_upload(), "CTX-01": "1M", "CTX-02": "681,280"},
    )
    assert response.status_code == 302
    drafts = dict(assessment.drafts.values_list("question_code", "value"))
    assert drafts == {"CTX-01": "1M", "CTX-02": "681,280"}
    assert not assessment.answers.filter(question_code__startswith="CTX").exists()
    page = client.get(portal_url(token, "section", "CTX")).content.decode()
    assert 'value="1M"' in page and 'value="681,280"' in page
    assert "Enter a whole number" in page  # the draft is shown with what is wrong with it


def test_an_upload_without_a_file_keeps_what_was_typed(client, token, assessment):
    response = client.post(
        portal_url(token, "section", "CTX"), {"upload": "CTX-08", "CTX-01": "1,048,576"}
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "Choose a file to upload." in page
    assert 'value="1,048,576"' in page
    assert assessment.drafts.get(question_code="CTX-01").value == "1,048,576"


def test_after_request_changes_files_of_closed_questions_stay(
    client, token, assessment, link, personas, inline_scoring, submitted_then_reopened
):
    evidence = evidence_add(
        assessment=assessment,
        question_code="CTX-08",
        upload=log_upload(),
        vendor_link=link,
        channel=Channel.VENDOR_LINK,
    )
    submitted_then_reopened(
        reopen=["CTX-03"],
        message="Give the decode pool.",
    )
    page = client.get(portal_url(token, "section", "CTX")).content.decode()
    assert "sglang-prefill-glm53-launch.log" in page  # shown, read-only
    assert f'name="remove" value="{evidence.pk}"' not in page
    response = client.post(portal_url(token, "section", "CTX"), {"remove": evidence.pk})
    assert response.status_code == 409
    assert EvidenceFile.objects.filter(pk=evidence.pk).exists()
    response = client.post(
        portal_url(token, "section", "CTX"), {"upload": "CTX-08", "CTX-08": log_upload()}
    )
    assert response.status_code == 400
    assert EvidenceFile.objects.filter(assessment=assessment).count() == 1


@pytest.mark.urls("config.urls")  # the site's own error pages
def test_a_body_larger_than_any_upload_is_refused_unread_with_a_413_page(
    client, token, assessment, settings
):
    settings.REQUEST_MAX_BYTES = 50_000  # in production several times the largest upload
    upload = SimpleUploadedFile("huge.log", b"INFO idle\n" * 10_000)
    response = client.post(
        portal_url(token, "section", "CTX"), {"upload": "CTX-08", "CTX-08": upload}
    )
    assert response.status_code == 413
    page = response.content.decode()
    assert "Too large to send" in page and "nothing was saved" in page
    assert not EvidenceFile.objects.filter(assessment=assessment).exists()
    stored = settings.MEDIA_ROOT / "evidence"
    assert not stored.exists() or not any(p.is_file() for p in stored.rglob("*"))

    # Under the bound, a file over its own limit still gets the message naming its question.
    settings.EVIDENCE_MAX_BYTES = 10_000
    over = SimpleUploadedFile("big.log", b"INFO idle\n" * 2_000)
    response = client.post(
        portal_url(token, "section", "CTX"), {"upload": "CTX-08", "CTX-08": over}
    )
    assert response.status_code == 400
    assert "CTX-08:" in response.content.decode()


def test_each_file_question_says_what_its_upload_is(client, catalog, personas):
    """PRF-10 asks for the model's config.json: its hint says so, not "a text log"; the
    startup log question (CTX-08) keeps the log hint."""
    from assessments.services.answers import assessment_create
    from assessments.services.vendor_links import vendor_link_issue
    from tests.personas import member_of

    from .conftest import make_assessment, use_answers

    vendor = make_assessment(personas.acme, personas.ava).vendor
    assessment = assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key="ai-inference-isolation@2",
        actor=personas.ava,
        channel=Channel.WEB,
        answers=use_answers(),
    )
    _link, token = vendor_link_issue(
        assessment=assessment,
        contact_email="kv@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    page = client.get(portal_url(token, "section", "PRF")).content.decode()
    hint = page.split('id="q-PRF-10-file-hint"', 1)[1].split("</p>", 1)[0]
    assert "config.json" in hint and "Hugging Face" in hint
    assert "text log" not in hint and "PDF" not in hint
    logs = client.get(portal_url(token, "section", "CTX")).content.decode()
    assert "A text log, a gzip-compressed log" in logs.split('id="q-CTX-08-file-hint"', 1)[1]
