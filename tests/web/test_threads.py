"""Clarification threads: an assessor asks the vendor about an answer, the vendor answers through
their link, the assessor resolves it; the audit trail, the vendor's email and its reminder, the
members' notification, the pages of both sides."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone

from assessments.models import AuditEvent, Channel, Thread, ThreadStatus, ThreadTurn
from assessments.presenters.audit import audit_action_label
from assessments.services.threads import thread_ask, thread_reply_vendor, thread_resolve
from assessments.services.vendor_links import vendor_link_issue
from core.errors import ServiceError
from notifications.models import Notification, NotificationEvent
from outbox.models import EmailKind, OutboundEmail
from portfolio.reminders import reminders_send
from tests.personas import member_of

from .conftest import make_draft, make_vendor

CODE = "KV-01"


@pytest.fixture
def invited(catalog, personas, draft):
    link, token = vendor_link_issue(
        assessment=draft,
        contact_email="kv-team@cloud-inference.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    return draft, link, token


def ask(personas, assessment, body="Which GPU memory fraction is that?", code=CODE, who=None):
    return thread_ask(
        assessment=assessment,
        member=member_of(who or personas.ava),
        question_code=code,
        body=body,
        channel=Channel.WEB,
    )


def another_assessments_link(personas):
    """A link to another assessment of Acme (another vendor's)."""
    other = make_draft(personas, make_vendor(personas, "Other Vendor"))
    return vendor_link_issue(
        assessment=other,
        contact_email="x@other.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )


def actions(assessment) -> list[str]:
    return list(
        AuditEvent.objects.filter(assessment=assessment, action__startswith="thread.")
        .order_by("pk")
        .values_list("action", flat=True)
    )


# -- services ---------------------------------------------------------------------------------


def test_asking_opens_the_thread_records_it_and_emails_the_vendor(personas, invited):
    assessment, link, _token = invited
    message = ask(personas, assessment)
    thread = message.thread
    assert (thread.status, thread.turn, thread.question_code) == ("open", "vendor", CODE)
    assert thread.created_by == personas.ava
    assert actions(assessment) == ["thread.opened", "thread.message_posted"]
    email = OutboundEmail.objects.get(kind=EmailKind.THREAD_QUESTION)
    assert email.to_address == "kv-team@cloud-inference.test"
    assert CODE in email.subject
    assert "Which GPU memory fraction is that?" in email.body


def test_the_vendor_answers_and_the_assessor_is_notified(personas, invited):
    assessment, link, _token = invited
    ask(personas, assessment)
    thread_reply_vendor(vendor_link=link, question_code=CODE, body="0.85, see the startup log.")
    thread = Thread.objects.get()
    assert thread.turn == ThreadTurn.MEMBER
    assert [m.from_vendor for m in thread.messages.all()] == [False, True]
    notification = Notification.objects.get(event=NotificationEvent.THREAD_ANSWERED)
    assert notification.recipient == personas.ava
    assert CODE in notification.title and "Cloud Inference Co" in notification.title
    assert notification.path == reverse("assessments:thread", args=[assessment.pk, CODE])
    vendor_event = AuditEvent.objects.filter(action="thread.message_posted").order_by("pk").last()
    assert vendor_event.channel == Channel.VENDOR_LINK


def test_resolving_closes_the_thread_to_the_vendor_and_reopening_opens_it(personas, invited):
    assessment, link, _token = invited
    thread = ask(personas, assessment).thread
    thread_resolve(thread=thread, member=member_of(personas.ava), channel=Channel.WEB)
    thread_resolve(thread=thread, member=member_of(personas.ava), channel=Channel.WEB)  # twice
    with pytest.raises(ServiceError) as refused:
        thread_reply_vendor(vendor_link=link, question_code=CODE, body="late")
    assert "resolved" in refused.value.errors["question_code"][0]
    thread_resolve(
        thread=thread, member=member_of(personas.ava), channel=Channel.WEB, resolved=False
    )
    thread_reply_vendor(vendor_link=link, question_code=CODE, body="now")
    assert actions(assessment) == [
        "thread.opened",
        "thread.message_posted",
        "thread.resolved",
        "thread.reopened",
        "thread.message_posted",
    ]


def test_a_second_question_continues_the_thread(personas, invited):
    assessment, _link, _token = invited
    first = ask(personas, assessment)
    second = ask(personas, assessment, body="And the tensor parallelism?")
    assert first.thread_id == second.thread_id
    assert Thread.objects.count() == 1
    assert OutboundEmail.objects.filter(kind=EmailKind.THREAD_QUESTION).count() == 2


@pytest.mark.parametrize(
    ("code", "body", "field"),
    [
        ("NOPE-1", "Why?", "question_code"),
        ("USE-01", "Why?", "question_code"),  # the buyer's own question: not the vendor's
        (CODE, "   ", "body"),
        (CODE, "bad \x00 byte", "body"),
        (CODE, "x" * 4001, "body"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_nothing_is_kept(
    personas, invited, code, body, field
):
    assessment, _link, _token = invited
    with pytest.raises(ServiceError) as refused:
        ask(personas, assessment, body=body, code=code)
    assert field in refused.value.errors
    assert not Thread.objects.exists() and not actions(assessment)


def test_only_editors_ask_and_only_in_their_organization(personas, invited):
    assessment, _link, _token = invited
    for who in (personas.rex, personas.vic):
        with pytest.raises(PermissionDenied):
            ask(personas, assessment, who=who)
    with pytest.raises(ServiceError):
        thread_ask(
            assessment=assessment,
            member=member_of(personas.oscar, personas.other),
            question_code=CODE,
            body="Hello",
            channel=Channel.WEB,
        )
    assert not Thread.objects.exists()


def test_a_link_cannot_answer_another_assessments_thread(personas, invited):
    assessment, _link, _token = invited
    ask(personas, assessment)
    other_link, _ = another_assessments_link(personas)
    with pytest.raises(ServiceError):
        thread_reply_vendor(vendor_link=other_link, question_code=CODE, body="Hi")
    assert Thread.objects.get().messages.count() == 1


def test_the_audit_trail_words_the_thread_events_in_both_languages():
    for action in ("thread.opened", "thread.message_posted", "thread.resolved", "thread.reopened"):
        assert audit_action_label(action, "en") != action
        assert audit_action_label(action, "zh-hant") != audit_action_label(action, "en")


# -- the reminder -----------------------------------------------------------------------------


def test_an_unanswered_question_is_reminded_once(personas, invited, settings):
    settings.THREAD_REMINDER_DAYS = 3
    assessment, link, _token = invited
    thread = ask(personas, assessment).thread
    reminders_send()
    assert not OutboundEmail.objects.filter(kind=EmailKind.THREAD_REMINDER).exists()  # too soon
    Thread.objects.filter(pk=thread.pk).update(turn_since=timezone.now() - dt.timedelta(days=4))
    assert reminders_send().thread_reminders == 1
    assert reminders_send().thread_reminders == 0
    reminder = OutboundEmail.objects.get(kind=EmailKind.THREAD_REMINDER)
    assert "still waiting" in reminder.body and CODE in reminder.body
    # Answered: nothing more to remind of.
    thread_reply_vendor(vendor_link=link, question_code=CODE, body="Done")
    Thread.objects.filter(pk=thread.pk).update(turn_since=timezone.now() - dt.timedelta(days=9))
    assert reminders_send().thread_reminders == 0


# -- pages ------------------------------------------------------------------------------------


def test_the_assessor_asks_from_the_assessment_page(client, personas, invited):
    assessment, _link, _token = invited
    client.force_login(personas.ava)
    detail = client.get(reverse("assessments:detail", args=[assessment.pk])).content.decode()
    url = reverse("assessments:thread", args=[assessment.pk, CODE])
    assert url in detail
    response = client.post(url, {"body": "Which fraction?"})
    assert response.status_code == 302
    page = client.get(url).content.decode()
    assert "Which fraction?" in page and "Waiting for the vendor" in page
    detail = client.get(reverse("assessments:detail", args=[assessment.pk])).content.decode()
    assert "waiting for the vendor" in detail


def test_an_empty_message_is_a_400_naming_the_field(client, personas, invited):
    assessment, _link, _token = invited
    client.force_login(personas.ava)
    response = client.post(reverse("assessments:thread", args=[assessment.pk, CODE]), {"body": ""})
    assert response.status_code == 400
    assert "Write the message." in response.content.decode()
    assert not Thread.objects.exists()


def test_the_vendor_answers_in_the_portal_and_the_assessor_resolves(client, personas, invited):
    assessment, _link, token = invited
    ask(personas, assessment)
    landing = client.get(reverse("portal:landing", args=[token])).content.decode()
    url = reverse("portal:thread", args=[token, CODE])
    assert url in landing and "question waiting for you" in landing
    section = client.get(reverse("portal:section", args=[token, "KV"])).content.decode()
    assert f'value="thread:{CODE}"' in section
    # The section's button keeps what was typed, then opens the thread.
    response = client.post(reverse("portal:section", args=[token, "KV"]), {"go": f"thread:{CODE}"})
    assert response.status_code == 302 and response["Location"] == url
    assert "Which GPU memory fraction" in client.get(url).content.decode()
    assert client.post(url, {"body": "0.85"}).status_code == 302
    client.force_login(personas.ava)
    member_url = reverse("assessments:thread", args=[assessment.pk, CODE])
    assert "0.85" in client.get(member_url).content.decode()
    status_url = reverse("assessments:thread_status", args=[assessment.pk, CODE])
    assert client.post(status_url, {"resolved": "1"}).status_code == 302
    assert Thread.objects.get().status == ThreadStatus.RESOLVED
    portal_page = client.get(url).content.decode()
    assert 'id="thread-form"' not in portal_page and "resolved" in portal_page


def test_the_portal_thread_page_is_in_the_links_language(client, personas, catalog, draft):
    link, token = vendor_link_issue(
        assessment=draft,
        contact_email="kv-team@cloud-inference.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
        language="zh-hant",
    )
    ask(personas, draft)
    page = client.get(reverse("portal:thread", args=[token, CODE])).content.decode()
    assert "買方" in page  # "the buyer", in the page's heading


def test_a_link_never_reaches_another_assessments_thread(client, personas, invited):
    assessment, _link, _token = invited
    ask(personas, assessment)
    _other_link, other_token = another_assessments_link(personas)
    url = reverse("portal:thread", args=[other_token, CODE])
    assert client.get(url).status_code == 404
    assert client.post(url, {"body": "Hi"}).status_code == 404
    assert Thread.objects.get().messages.count() == 1


# -- a request for changes carries its thread -------------------------------------------------


def test_the_reviewer_attaches_a_message_to_a_reopened_question(client, personas, scored):
    client.force_login(personas.rex)
    url = reverse("assessments:review", args=[scored.pk])
    page = client.get(url).content.decode()
    assert f'name="thread_{CODE}"' in page
    response = client.post(
        url,
        {
            "decision": "changes_requested",
            "message": "Please check the KV pool.",
            "reopen_codes": [CODE],
            "run": scored.latest_run_id,
            f"thread_{CODE}": "Your log shows 0.7, not 0.85.",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    thread = Thread.objects.get(assessment=scored)
    assert (thread.question_code, thread.status, thread.turn) == (CODE, "open", "vendor")
    assert thread.created_by == personas.rex
    assert [m.body for m in thread.messages.all()] == ["Your log shows 0.7, not 0.85."]
    assert OutboundEmail.objects.filter(kind=EmailKind.THREAD_QUESTION).count() == 1


def test_a_message_on_a_question_not_reopened_refuses_the_decision(client, personas, scored):
    client.force_login(personas.rex)
    response = client.post(
        reverse("assessments:review", args=[scored.pk]),
        {
            "decision": "changes_requested",
            "message": "Please check the KV pool.",
            "reopen_codes": [CODE],
            "run": scored.latest_run_id,
            "thread_KV-02": "This one is not re-opened.",
        },
    )
    assert response.status_code == 400
    assert "KV-02 is not re-opened" in response.content.decode()
    assert not Thread.objects.exists()
    scored.refresh_from_db()
    assert scored.status == "scored"


def test_the_dashboard_counts_answers_waiting_for_a_member(client, personas, invited):
    assessment, link, _token = invited
    ask(personas, assessment)
    client.force_login(personas.vic)
    dashboard = reverse("assessments:dashboard")
    assert "thread-badge" not in client.get(dashboard).content.decode()  # the vendor's turn
    thread_reply_vendor(vendor_link=link, question_code=CODE, body="0.85")
    page = client.get(dashboard).content.decode()
    assert "1 answer from the vendor to read" in page
    thread_resolve(thread=Thread.objects.get(), member=member_of(personas.ava), channel=Channel.WEB)
    assert "thread-badge" not in client.get(dashboard).content.decode()


@pytest.mark.parametrize("code", ["KV-01%00", "X" * 300, "KV-02"])
def test_a_question_without_a_thread_is_404_on_both_sides(client, personas, invited, code):
    assessment, _link, token = invited
    ask(personas, assessment)
    assert client.get(f"/v/{token}/questions/{code}/thread/").status_code == 404
    response = client.post(
        reverse("portal:section", args=[token, "KV"]), {"go": f"thread:{code}\x00"}
    )
    assert response.status_code == 404
    client.force_login(personas.ava)
    status_url = f"/assessments/{assessment.pk}/questions/{code}/thread/status/"
    assert client.post(status_url, {"resolved": "1"}).status_code == 404


def test_a_question_on_a_draft_waits_for_the_invitation(personas, draft):
    ask(personas, draft)
    assert draft.vendor_links.count() == 0  # no link issued by the question
    assert not OutboundEmail.objects.filter(kind=EmailKind.THREAD_QUESTION).exists()
    draft.refresh_from_db()
    assert draft.status == "draft"


def test_the_email_is_in_the_contacts_language(personas, catalog, draft):
    vendor_link_issue(
        assessment=draft,
        contact_email="kv-team@cloud-inference.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
        language="zh-hant",
    )
    ask(personas, draft)
    email = OutboundEmail.objects.get(kind=EmailKind.THREAD_QUESTION)
    assert email.language == "zh-hant"
    assert "查詢閣下就 KV-01 的答案" in email.subject
