"""Inviting and re-inviting vendor contacts, revoking links, and following the vendor's progress."""

import pytest
from django.core import mail
from django.urls import reverse

from assessments.models import Assessment, Channel, VendorLink
from assessments.services.answers import answers_save
from assessments.services.vendor_links import vendor_link_issue
from tests.personas import member_of

from .conftest import QUESTIONNAIRE, make_vendor, vendor_answers


def invite(client, assessment, **data):
    return client.post(
        reverse("assessments:invite", args=[assessment.pk]),
        {"contact_email": "kv-team@cloud-inference.test", "language": "en", **data},
    )


def test_the_invite_form_suggests_the_vendors_contact(client, personas, draft):
    client.force_login(personas.ava)
    page = client.get(reverse("assessments:detail", args=[draft.pk]))
    assert page.context["invite_form"]["contact_email"].value() == "kv-team@cloud-inference.test"


def test_an_assessor_invites_a_contact_who_gets_the_link_in_their_language(
    client, personas, draft, django_capture_on_commit_callbacks
):
    client.force_login(personas.ava)
    with django_capture_on_commit_callbacks(execute=True):
        response = invite(client, draft, contact_name="Mei Chan", language="zh-hant")
    assert response.status_code == 302
    assert response["Location"].endswith("#links")
    link = VendorLink.objects.get()
    assert (link.contact_name, link.language) == ("Mei Chan", "zh-hant")
    draft.refresh_from_db()
    assert draft.status == "sent"
    assert len(mail.outbox) == 1
    assert "/v/" in mail.outbox[0].body
    assert mail.outbox[0].to == ["kv-team@cloud-inference.test"]
    page = client.get(reverse("assessments:detail", args=[draft.pk])).content.decode()
    assert "Mei Chan" in page and "繁體中文" in page and "Active</span> until" in page


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"contact_email": "not-an-email"}, "contact_email"),
        ({"contact_email": ""}, "contact_email"),
        ({"language": "fr"}, "language"),
    ],
)
def test_a_bad_invitation_is_reported_beside_its_field(client, personas, draft, data, field):
    client.force_login(personas.ava)
    response = invite(client, draft, **data)
    assert response.status_code == 400
    assert field in response.context["invite_form"].errors
    body = response.content.decode()
    assert "The vendor was not invited" in body and f"#id_{field}" in body
    assert not VendorLink.objects.exists()
    draft.refresh_from_db()
    assert draft.status == "draft"


def test_the_vendor_cannot_be_invited_before_the_buyers_questions_are_answered(
    client, personas, vendor
):
    from assessments.services.answers import assessment_create

    bare = assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key=QUESTIONNAIRE,
        actor=personas.ava,
        channel=Channel.WEB,
    )
    client.force_login(personas.ava)
    page = client.get(reverse("assessments:detail", args=[bare.pk])).content.decode()
    assert "Answer the buyer's questions (USE-01, USE-02" in page
    response = invite(client, bare)
    assert response.status_code == 400
    assert "before inviting the vendor" in response.content.decode()
    assert not VendorLink.objects.exists()


def test_re_inviting_sends_a_fresh_link_and_retires_the_old_one(
    client, personas, draft, django_capture_on_commit_callbacks
):
    first, _token = vendor_link_issue(
        assessment=draft,
        contact_email="kv-team@cloud-inference.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
        language="zh-hant",
    )
    client.force_login(personas.ava)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("assessments:link_reinvite", args=[first.pk]))
    assert response.status_code == 302
    first.refresh_from_db()
    assert first.revoked_at is not None
    newest = VendorLink.objects.exclude(pk=first.pk).get()
    assert newest.is_active and newest.language == "zh-hant"
    assert len(mail.outbox) == 1


def test_revoking_a_link_stops_it(client, personas, draft):
    link, token = vendor_link_issue(
        assessment=draft,
        contact_email="a@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    client.force_login(personas.ava)
    response = client.post(reverse("assessments:link_revoke", args=[link.pk]))
    assert response.status_code == 302
    link.refresh_from_db()
    assert link.revoked_at is not None
    assert client.get(reverse("portal:landing", args=[token])).status_code == 404


def test_invitations_are_refused_once_the_vendor_has_submitted(client, personas, scored):
    client.force_login(personas.ava)
    page = client.get(reverse("assessments:detail", args=[scored.pk]))
    assert page.context["can_invite_now"] is False
    response = invite(client, scored)
    assert response.status_code == 400
    assert "not possible while the assessment is Scored" in response.content.decode()
    link = scored.vendor_links.get()
    response = client.post(reverse("assessments:link_reinvite", args=[link.pk]), follow=True)
    assert "not possible while the assessment is Scored" in response.content.decode()
    assert scored.vendor_links.count() == 1


def test_the_assessor_sees_each_sections_answered_and_required_counts(client, personas, draft):
    link, _token = vendor_link_issue(
        assessment=draft,
        contact_email="a@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    answers = vendor_answers()
    prf = {code: value for code, value in answers.items() if code.startswith("PRF-")}
    prf.pop("PRF-02")
    answers_save(assessment=draft, answers=prf, vendor_link=link, channel=Channel.VENDOR_LINK)
    client.force_login(personas.vic)
    response = client.get(reverse("assessments:detail", args=[draft.pk]))
    progress = {row.code: row for row in response.context["progress"]}
    # PRF: 8 required once PRF-07 = yes shows PRF-08; PRF-02 is missing
    assert (progress["PRF"].answered, progress["PRF"].required) == (7, 8)
    assert (progress["CTX"].answered, progress["CTX"].required) == (0, 6)  # CTX-03 shown
    assert (progress["USE"].answered, progress["USE"].required) == (5, 5)
    body = response.content.decode()
    assert "7 of 8" in body
    # while the vendor answers, htmx re-fetches the block
    assert 'hx-trigger="every 10s"' in body


def test_the_progress_block_refreshes_and_reloads_the_page_when_the_status_moves_on(
    client, personas, draft
):
    client.force_login(personas.vic)
    url = reverse("assessments:progress", args=[draft.pk])
    block = client.get(url, {"status": "draft"}, headers={"HX-Request": "true"})
    assert block.status_code == 200
    assert block.content.decode().lstrip().startswith('<div id="progress"')
    moved = client.get(url, {"status": "sent"}, headers={"HX-Request": "true"})
    assert moved.status_code == 204 and moved["HX-Refresh"] == "true"
    # without htmx it is the assessment page
    plain = client.get(url)
    assert plain.status_code == 302
    assert plain["Location"] == reverse("assessments:detail", args=[draft.pk])


def test_the_detail_page_shows_answers_evidence_runs_and_audit(client, personas, scored):
    client.force_login(personas.alice)
    response = client.get(reverse("assessments:detail", args=[scored.pk]))
    body = response.content.decode()
    assert "1,048,576 tokens" in body  # CTX-01, grouped, with its unit
    assert "Shared multi-tenant endpoint" in body  # an option label, not its code
    assert "sglang-prefill-glm53-launch.log" in body
    assert "SGLang log: pool 681,280 tokens, context 1,048,576 tokens, line 42" in body
    assert "assessment.submitted" in body  # the audit trail, for owners and reviewers
    assert "reports_template" in response.context


@pytest.mark.parametrize("persona", ["alice", "ava", "rex", "vic"])
def test_every_member_reads_the_audit_trail_with_the_questions_saved(
    client, personas, scored, persona
):
    url = reverse("assessments:detail", args=[scored.pk])
    client.force_login(getattr(personas, persona))
    audit = client.get(url).context["audit"]
    assert audit is not None
    saved = [row for row in audit if row.action == "answers.saved"]
    assert saved and all(row.subject for row in saved)
    assert any("CTX-01" in row.subject for row in saved)


def test_the_reports_block_appears_when_the_reports_app_provides_it(
    client, personas, scored, settings, tmp_path
):
    folder = tmp_path / "templates" / "reports"
    folder.mkdir(parents=True)
    (folder / "_assessment_reports.html").write_text(
        "<p id='reports-hook'>reports for {{ assessment.pk }}, run {{ run.pk }}</p>",
        encoding="utf-8",
    )
    settings.TEMPLATES = [
        {**settings.TEMPLATES[0], "DIRS": [tmp_path / "templates", *settings.TEMPLATES[0]["DIRS"]]}
    ]
    settings.ROOT_URLCONF = "tests.web.urls_with_reports"
    client.force_login(personas.vic)
    body = client.get(reverse("assessments:detail", args=[scored.pk])).content.decode()
    assert f"reports for {scored.pk}, run {scored.latest_run_id}" in body


def test_the_reports_apps_own_block_is_used_once_its_pages_are_mounted(
    client, personas, scored, settings
):
    settings.ROOT_URLCONF = "tests.web.urls_with_reports"
    client.force_login(personas.vic)
    response = client.get(reverse("assessments:detail", args=[scored.pk]))
    assert response.status_code == 200
    assert response.context["reports_template"].startswith("reports/")


def test_without_the_reports_pages_the_block_says_reports_are_not_available(
    client, personas, scored, settings
):
    settings.ROOT_URLCONF = "tests.web.urls_without_reports"
    client.force_login(personas.vic)
    response = client.get(reverse("assessments:detail", args=[scored.pk]))
    assert response.context["reports_template"] == ""
    assert "Reports are not available yet." in response.content.decode()


def test_it_works_for_a_vendor_with_no_contact_and_no_due_date(client, personas, catalog):
    from .conftest import make_draft

    vendor = make_vendor(personas, "Bare Vendor")
    vendor.contact_email = ""
    vendor.save()
    assessment = make_draft(personas, vendor, due_date=None)
    client.force_login(personas.ava)
    assert client.get(reverse("assessments:detail", args=[assessment.pk])).status_code == 200
    assert Assessment.objects.get(pk=assessment.pk).due_date is None


def test_after_inviting_the_page_shows_the_link_once_and_an_empty_form(
    client, personas, draft, django_capture_on_commit_callbacks
):
    client.force_login(personas.ava)
    with django_capture_on_commit_callbacks(execute=True):
        response = invite(client, draft)
    assert response.status_code == 302  # Post/Redirect/Get
    emailed = mail.outbox[0].body
    page = client.get(reverse("assessments:detail", args=[draft.pk]))
    shown = page.context["issued_link"]["url"]
    assert shown in emailed and shown.startswith("http://") and "/v/" in shown
    assert 'data-copy="#issued-link"' in page.content.decode()
    # The form no longer offers the contact just invited: a second click cannot silently
    # replace the link they received.
    assert page.context["invite_form"]["contact_email"].value() is None
    again = client.get(reverse("assessments:detail", args=[draft.pk]))
    assert again.context["issued_link"] is None  # shown once: only its hash is stored
    assert shown not in again.content.decode()
    assert again.context["active_links"]


def test_links_use_the_site_url_the_app_runs_on(
    client, personas, draft, settings, django_capture_on_commit_callbacks
):
    settings.SITE_URL = "http://127.0.0.1:8123"
    client.force_login(personas.ava)
    with django_capture_on_commit_callbacks(execute=True):
        invite(client, draft)
    assert "http://127.0.0.1:8123/v/" in mail.outbox[0].body


def test_revoke_and_send_a_new_link_ask_for_confirmation_first(client, personas, draft):
    link, _token = vendor_link_issue(
        assessment=draft,
        contact_email="a@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    client.force_login(personas.ava)
    for name, button in (("link_revoke", "Revoke the link"), ("link_reinvite", "Send a new link")):
        url = reverse(f"assessments:{name}", args=[link.pk])
        page = client.get(url)
        assert page.status_code == 200
        content = page.content.decode()
        assert f'<form method="post" action="{url}">' in content and button in content
        assert reverse("assessments:detail", args=[draft.pk]) in content  # Cancel
    link.refresh_from_db()
    assert link.revoked_at is None and VendorLink.objects.count() == 1  # nothing happened


def test_a_replaced_link_reads_replaced_without_buttons_and_a_revoked_one_revoked(
    client, personas, draft
):
    ava = member_of(personas.ava)
    old, _ = vendor_link_issue(
        assessment=draft, contact_email="a@vendor.test", member=ava, channel=Channel.WEB
    )
    new, _ = vendor_link_issue(
        assessment=draft, contact_email="a@vendor.test", member=ava, channel=Channel.WEB
    )
    old.refresh_from_db()
    assert old.replaced_by == new and old.state == "replaced" and new.state == "active"
    client.force_login(personas.ava)
    page = client.get(reverse("assessments:detail", args=[draft.pk])).content.decode()
    assert "Replaced</span>" in page
    assert reverse("assessments:link_revoke", args=[old.pk]) not in page
    assert reverse("assessments:link_reinvite", args=[old.pk]) not in page
    assert reverse("assessments:link_revoke", args=[new.pk]) in page
    client.post(reverse("assessments:link_revoke", args=[new.pk]))
    page = client.get(reverse("assessments:detail", args=[draft.pk])).content.decode()
    assert "Revoked</span>" in page
    assert 'id="no-active-link"' in page  # sent to the vendor, but nothing they can open


def test_a_hidden_question_says_why_in_the_members_language(catalog):
    from assessments.presenters.answers import not_applicable_reason
    from questionnaires.models import QuestionnaireVersion

    spec = QuestionnaireVersion.objects.get(slug="ai-inference-isolation", version=1).spec
    assert not_applicable_reason(spec, "PRF-08", {}, "zh-hant") == "不適用：因 PRF-07 = 未有作答"
    assert (
        not_applicable_reason(spec, "PRF-08", {"PRF-07": "no"}, "zh-hant")
        == "不適用：因 PRF-07 = 否"
    )
    assert (
        not_applicable_reason(spec, "PRF-08", {}, "en")
        == "Not applicable: because PRF-07 = not answered"
    )
