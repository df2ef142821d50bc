"""The vendor's probe page in the portal: consent first (PRB-01), then the endpoint, two test
keys and the signed authorisation — saved encrypted, never shown again, never echoed back into
the form, never in the audit trail; the probe's result (PRB-02) is never uploaded."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from assessments.models import AuditEvent, Channel, EvidenceFile
from assessments.services.answers import answers_save
from assessments.services.vendor_links import vendor_link_issue
from probes.keystore import key_decrypt
from probes.models import ProbeSetup
from tests.personas import member_of

from .conftest import make_v2_assessment
from .test_services import database_dump

FORM_TIME = "%Y-%m-%dT%H:%M"


def probe_page(token: str) -> str:
    return reverse("probes:portal_setup", args=[token])


def section_page(token: str, code: str = "PRB") -> str:
    return reverse("portal:section", args=[token, code])


def linked(assessment, personas) -> str:
    _link, token = vendor_link_issue(
        assessment=assessment,
        contact_email="sec@inferno.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    return token


def vendor_answers(assessment, **answers) -> None:
    link = assessment.vendor_links.get()
    answers_save(
        assessment=assessment, answers=answers, vendor_link=link, channel=Channel.VENDOR_LINK
    )


def form_data(keys: dict[str, str], **overrides) -> dict:
    now = timezone.localtime()
    return {
        "base_url": "https://api.inferno.example",
        "model_name": "glm-5.3",
        **keys,
        "signer_name": "Wei Chan, CISO",
        "spend_ceiling_tokens": "8000000",
        "window_starts_at": (now - dt.timedelta(hours=1)).strftime(FORM_TIME),
        "window_ends_at": (now + dt.timedelta(days=7)).strftime(FORM_TIME),
        "authorise": "on",
        **overrides,
    }


@pytest.fixture
def unconsented(catalog, personas):
    assessment = make_v2_assessment(personas.acme, personas.ava, consent=None)
    return assessment, linked(assessment, personas)


@pytest.fixture
def consented(unconsented):
    assessment, token = unconsented
    vendor_answers(assessment, **{"PRB-01": "yes", "CTX-01": 1_048_576})
    return assessment, token


def test_the_page_waits_for_the_vendors_consent(client, unconsented, keys):
    assessment, token = unconsented

    page = client.get(probe_page(token)).content.decode()
    assert "once you have answered “yes”" in page
    assert 'name="key_a"' not in page
    section = client.get(section_page(token)).content.decode()
    assert 'value="probe"' not in section  # no way to the probe page yet

    refused = client.post(probe_page(token), form_data(keys))
    assert refused.status_code == 409
    assert "PRB-01" in refused.content.decode()
    assert not ProbeSetup.objects.exists()


def test_after_consent_the_section_leads_to_the_probe_page(client, consented):
    _assessment, token = consented

    section = client.get(section_page(token)).content.decode()
    assert 'name="go" value="probe"' in section
    response = client.post(section_page(token), {"section": "PRB", "go": "probe"})
    assert response.status_code == 302 and response["Location"] == probe_page(token)
    page = client.get(probe_page(token)).content.decode()
    # What will be sent and what it costs, for the context the vendor declared (CTX-01).
    assert "/v1/chat/completions" in page
    assert "1,048,576 tokens" in page
    assert "2,097,152" in page  # oversize: 0.9 C + 1.1 C
    assert 'name="key_a"' in page and 'type="password"' in page


def test_the_set_up_is_saved_with_the_keys_encrypted_and_never_shown_again(client, consented, keys):
    assessment, token = consented

    response = client.post(probe_page(token), form_data(keys))

    assert response.status_code == 302, response.content.decode()[:2000]
    setup = ProbeSetup.objects.get(assessment=assessment)
    assert setup.entered_via == Channel.VENDOR_LINK and setup.entered_by_link is not None
    assert setup.declared_context == 1_048_576  # from CTX-01, not typed again
    assert setup.key_a_ciphertext != keys["key_a"]
    assert key_decrypt(setup.key_a_ciphertext).reveal() == keys["key_a"]
    assert key_decrypt(setup.key_b_ciphertext).reveal() == keys["key_b"]
    page = client.get(probe_page(token)).content.decode()
    assert "Held, encrypted" in page
    assert "https://api.inferno.example" in page and "Wei Chan, CISO" in page
    for key in keys.values():
        assert key not in page
        assert key not in database_dump()
    audit = AuditEvent.objects.get(action="probe.setup_saved")
    assert audit.channel == Channel.VENDOR_LINK
    assert audit.detail["signer_name"] == "Wei Chan, CISO"
    assert all(key not in str(audit.detail) for key in keys.values())


def test_a_refused_form_never_echoes_the_keys(client, consented, keys):
    _assessment, token = consented

    response = client.post(probe_page(token), form_data({**keys, "key_b": keys["key_a"]}))

    assert response.status_code == 400
    page = response.content.decode()
    assert "two different test tenants" in page
    assert keys["key_a"] not in page and keys["key_b"] not in page
    assert not ProbeSetup.objects.exists()


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"base_url": "http://api.inferno.example"}, "base_url", "https://"),
        ({"base_url": "https://user:pw@api.inferno.example"}, "base_url", "user name"),
        ({"signer_name": ""}, "signer_name", "required"),
        ({"authorise": ""}, "authorise", "required"),
        ({"spend_ceiling_tokens": "0"}, "spend_ceiling_tokens", "greater than or equal to 1"),
    ],
)
def test_bad_input_is_reported_by_field_and_saves_nothing(
    client, consented, keys, change, field, message
):
    _assessment, token = consented

    response = client.post(probe_page(token), form_data(keys, **change))

    assert response.status_code == 400
    page = response.content.decode()
    assert f'href="#id_{field}' in page and message in page
    assert not ProbeSetup.objects.exists()


def test_a_window_that_has_ended_is_refused(client, consented, keys):
    _assessment, token = consented
    past = timezone.localtime() - dt.timedelta(days=1)
    data = form_data(
        keys,
        window_starts_at=(past - dt.timedelta(days=1)).strftime(FORM_TIME),
        window_ends_at=past.strftime(FORM_TIME),
    )

    response = client.post(probe_page(token), data)

    assert response.status_code == 400
    assert "already ended" in response.content.decode()


def test_replacing_the_set_up_replaces_the_keys(client, consented, keys):
    assessment, token = consented
    client.post(probe_page(token), form_data(keys))
    new_keys = {"key_a": "sk-new-a-0123456789", "key_b": "sk-new-b-0123456789"}

    page = client.get(probe_page(token)).content.decode()
    assert 'value="https://api.inferno.example"' in page  # the form starts from the record…
    assert 'name="key_a" autocomplete="off"' in page or 'name="key_a"' in page
    response = client.post(probe_page(token), form_data(new_keys, model_name="glm-5.3-long"))

    assert response.status_code == 302
    setup = ProbeSetup.objects.get(assessment=assessment)
    assert key_decrypt(setup.key_a_ciphertext).reveal() == new_keys["key_a"]
    assert setup.model_name == "glm-5.3-long"
    assert AuditEvent.objects.filter(action="probe.setup_saved").count() == 2


def test_a_link_sets_up_its_own_assessment_only(client, consented, personas, keys):
    assessment, token = consented
    other = make_v2_assessment(personas.acme, personas.ava, vendor_name="Other vendor")
    other_token = linked(other, personas)

    client.post(probe_page(token), form_data(keys))

    assert list(ProbeSetup.objects.values_list("assessment_id", flat=True)) == [assessment.pk]
    # The other link's page knows nothing of it.
    other_page = client.get(probe_page(other_token)).content.decode()
    assert "api.inferno.example" not in other_page
    assert client.get(probe_page("x" * len(token))).status_code == 404


def test_a_version_1_questionnaire_has_no_probe_page(client, catalog, personas):
    from tests.portal.conftest import make_assessment

    token = linked(make_assessment(personas.acme, personas.ava), personas)

    assert client.get(probe_page(token)).status_code == 404


def test_the_probe_result_question_has_no_upload_anywhere(client, consented, keys):
    assessment, token = consented

    section = client.get(section_page(token)).content.decode()
    assert 'id="q-PRB-02-file"' not in section
    assert 'value="PRB-02"' not in section
    assert "AVIA attaches it here" in section
    upload = SimpleUploadedFile("probe.json", b'{"endpoint": "https://x", "checks": {}}')
    response = client.post(section_page(token), {"upload": "PRB-02", "PRB-02": upload})

    assert response.status_code == 400
    assert "AVIA attaches this evidence itself" in response.content.decode()
    assert not EvidenceFile.objects.filter(assessment=assessment).exists()


def summary_items(page: str) -> list[str]:
    summary = page.split('class="error-summary"', 1)[1].split("</ul>", 1)[0]
    return [item.split("</li>", 1)[0] for item in summary.split("<li>")[1:]]


def test_every_problem_of_the_form_is_shown_at_once(client, consented, keys):
    """The unticked box does not hide the other problems until it is ticked: one round shows
    them all, each under a short name."""
    _assessment, token = consented
    response = client.post(
        probe_page(token),
        form_data(
            {**keys, "key_b": keys["key_a"]},
            base_url="http://api.inferno.example",
            signer_name="",
            authorise="",
        ),
    )
    assert response.status_code == 400
    items = summary_items(response.content.decode())
    linked_fields = {item.split('href="#id_', 1)[1].split('"', 1)[0] for item in items}
    assert linked_fields == {"authorise", "base_url", "key_b", "signer_name"}, items
    authorise = next(item for item in items if "#id_authorise" in item)
    name = authorise.split(">", 1)[1].split(":", 1)[0]
    assert len(name.split()) <= 8, name  # not the 40-word sentence that is signed
    assert not ProbeSetup.objects.exists()


def test_the_vendor_is_told_plain_words_not_operator_settings(client, consented, keys):
    _assessment, token = consented
    response = client.post(probe_page(token), form_data(keys, base_url="http://api.example"))
    page = response.content.decode()
    assert "PROBE_ALLOW_HTTP" not in page and "operator" not in page
    assert "https://" in page
