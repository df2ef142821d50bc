"""Reassessment cycles: the due date from the organization's policy, renewals that start from
the last answers, a vendor-declared configuration change that reopens CTX and the startup log,
and the email that tells the vendor which questions to answer again."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.conf import settings
from django.core import mail
from django.db import transaction
from django.utils import timezone

from assessments.factories import critical_rule_ids
from assessments.models import (
    DEFAULT_REASSESSMENT_DAYS,
    AssessmentStatus,
    Channel,
    RenewalReason,
)
from assessments.services.answers import answer_values, assessment_create
from assessments.services.reassessment import (
    reassessment_policy_for,
    reassessment_policy_update,
    renewal_start,
)
from assessments.services.reviews import review_record
from assessments.services.submission import assessment_submit
from assessments.services.vendor_links import vendor_link_resolve
from assessments.services.vendors import vendor_create
from assessments.storage import evidence_storage
from core.errors import ConflictError, ForbiddenError, ServiceError
from outbox.models import EmailKind, OutboundEmail
from tests.personas import member_of

from .conftest import answered_by_mei


def to_the_vendor() -> list:
    """The emails sent to the vendor's contacts (members are told too: tests/notifications)."""
    return [email for email in mail.outbox if not email.to[0].endswith("@acme.test")]


@pytest.fixture
def invited(catalog, personas, django_capture_on_commit_callbacks):
    """The incident vendor answered through Mei's link with its startup log, scored (not decided)."""
    return answered_by_mei(personas, django_capture_on_commit_callbacks)


# -- the policy and the due date -----------------------------------------------------------


def test_the_due_date_follows_the_tier_from_the_day_of_scoring(invited):
    days = DEFAULT_REASSESSMENT_DAYS[invited.risk_tier]
    scored_on = timezone.localdate(invited.latest_run.finished_at)
    assert invited.reassess_by == scored_on + dt.timedelta(days=days)


def test_the_owners_policy_applies_to_later_decisions(invited, personas, time_machine):
    reassessment_policy_update(
        member=member_of(personas.alice),
        days={"critical": 30, "high": 60, "medium": 120, "low": 240},
        channel=Channel.WEB,
    )
    time_machine.move_to(timezone.now() + dt.timedelta(days=3), tick=False)
    review_record(
        assessment=invited,
        member=member_of(personas.rex),
        decision="approved",
        acknowledged_findings=critical_rule_ids(invited),
        channel=Channel.WEB,
    )
    invited.refresh_from_db()
    days = {"critical": 30, "high": 60, "medium": 120, "low": 240}[invited.risk_tier]
    assert invited.reassess_by == timezone.localdate() + dt.timedelta(days=days)


def test_runs_and_reassessments_are_dated_on_the_organizations_clock(
    catalog, personas, django_capture_on_commit_callbacks, time_machine
):
    """Workers and services run on the server's clock (Hong Kong): a New York buyer's run is
    "as of", and its vendor due again from, New York's date, the one its pages show."""
    personas.acme.time_zone = "America/New_York"
    personas.acme.save(update_fields=["time_zone"])
    # 22:00 on 3 December in New York, already 11:00 on 4 December in Hong Kong.
    time_machine.move_to(dt.datetime(2026, 12, 4, 3, 0, tzinfo=dt.UTC), tick=False)
    in_new_york = dt.date(2026, 12, 3)

    scored = answered_by_mei(personas, django_capture_on_commit_callbacks)

    assert timezone.localdate() == dt.date(2026, 12, 4)  # the server's clock
    assert scored.latest_run.as_of == in_new_york
    days = DEFAULT_REASSESSMENT_DAYS[scored.risk_tier]
    assert scored.reassess_by == in_new_york + dt.timedelta(days=days)
    review_record(
        assessment=scored,
        member=member_of(personas.rex),
        decision="approved",
        acknowledged_findings=critical_rule_ids(scored),
        channel=Channel.WEB,
    )
    scored.refresh_from_db()
    assert scored.reassess_by == in_new_york + dt.timedelta(days=days)


def test_a_rejected_vendor_is_not_due_again(invited, personas):
    review_record(
        assessment=invited, member=member_of(personas.rex), decision="rejected", channel=Channel.WEB
    )
    invited.refresh_from_db()
    assert invited.reassess_by is None


def test_only_the_owner_sets_the_policy_and_bad_figures_name_the_tier(personas, catalog):
    with pytest.raises(ForbiddenError):
        reassessment_policy_update(member=member_of(personas.ava), days={}, channel=Channel.WEB)
    with pytest.raises(ServiceError) as refused:
        reassessment_policy_update(
            member=member_of(personas.alice),
            days={"critical": "0", "high": "x", "medium": 365, "low": 99999},
            channel=Channel.WEB,
        )
    assert set(refused.value.errors) == {"critical", "high", "low"}
    assert reassessment_policy_for(organization=personas.acme).pk is None  # nothing saved


# -- renewals ------------------------------------------------------------------------------


def test_a_renewal_starts_from_the_last_answers_comments_and_evidence(
    invited, personas, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        renewal = renewal_start(
            assessment=invited,
            reason=RenewalReason.DUE,
            member=member_of(personas.ava),
            channel=Channel.WEB,
        )
    assert renewal.renewal_of == invited and renewal.status == AssessmentStatus.SENT
    assert answer_values(renewal) == answer_values(invited)
    comments = dict(invited.answers.exclude(comment="").values_list("question_code", "comment"))
    assert comments  # the example file comments some answers
    assert dict(renewal.answers.exclude(comment="").values_list("question_code", "comment")) == (
        comments
    )
    (copy,) = renewal.evidence.all()
    (source,) = invited.evidence.all()
    assert (copy.sha256, copy.parse_result) == (source.sha256, source.parse_result)
    assert copy.storage_name != source.storage_name
    assert evidence_storage().open(copy.storage_name).read() == (
        evidence_storage().open(source.storage_name).read()
    )
    (email,) = to_the_vendor()
    assert email.to == ["mei@inferno.test"]
    token = re.search(r"/v/([\w-]+)/", email.body).group(1)
    assert vendor_link_resolve(token=token).assessment == renewal
    with pytest.raises(ConflictError):  # one open renewal at a time
        renewal_start(
            assessment=invited,
            reason=RenewalReason.DUE,
            member=member_of(personas.ava),
            channel=Channel.WEB,
        )


def test_a_declared_configuration_change_reopens_ctx_and_the_startup_log(
    invited, personas, django_capture_on_commit_callbacks
):
    link = invited.vendor_links.get()
    with django_capture_on_commit_callbacks(execute=True):
        renewal = renewal_start(
            assessment=invited,
            reason=RenewalReason.CONFIGURATION_CHANGE,
            changes=["quantization", "parallelism"],
            note="FP8 weights, TP8 instead of TP4.",
            vendor_link=link,
            channel=Channel.VENDOR_LINK,
        )
    before, after = answer_values(invited), answer_values(renewal)
    assert {code for code in before if code.startswith("CTX-")}
    assert not {code for code in after if code.startswith("CTX-")}
    assert {c: v for c, v in before.items() if not c.startswith("CTX-")} == after
    assert not renewal.evidence.exists()  # the startup log must be uploaded again
    assert renewal.configuration_change == {
        "changes": ["quantization", "parallelism"],
        "note": "FP8 weights, TP8 instead of TP4.",
    }
    (email,) = to_the_vendor()
    assert "CTX" in email.body and "FP8 weights, TP8 instead of TP4." in email.body
    # The declared changes, in Mei's language, listed as Chinese lists them (not a Python list);
    # and every date in the one format of her language.
    assert "（量化、並行" in email.body and "['" not in email.body
    assert not re.search(r"\d{4}-\d{2}-\d{2}", email.subject + email.body), email.body
    assert re.search(r"\d{4}年\d{1,2}月\d{1,2}日", email.body)
    with transaction.atomic(), pytest.raises(ServiceError) as missing:
        assessment_submit(assessment=renewal, actor=personas.ava, channel=Channel.WEB)
    assert "CTX-01" in missing.value.errors


def test_the_english_renewal_email_lists_the_changes_in_words(
    invited, personas, django_capture_on_commit_callbacks
):
    link = invited.vendor_links.get()
    link.language = "en"
    link.save(update_fields=["language"])
    with django_capture_on_commit_callbacks(execute=True):
        renewal_start(
            assessment=invited,
            reason=RenewalReason.CONFIGURATION_CHANGE,
            changes=["quantization"],
            vendor_link=link,
            channel=Channel.VENDOR_LINK,
        )
    (email,) = [m for m in mail.outbox if m.to == [link.contact_email]]
    assert "You told us the deployment changed (Quantization)." in email.body


def test_every_email_writes_dates_in_the_one_format_of_its_language():
    """A date in an email goes through the language's format ("4 Jan 2027" / "2027年1月4日"),
    never a fixed ISO pattern beside it."""
    emails = sorted((settings.BASE_DIR / "templates" / "emails").glob("*.txt"))
    assert emails
    for path in emails:
        for pattern in re.findall(r'\|date:"([^"]*)"', path.read_text()):
            assert pattern in ("DATE_FORMAT", "DATETIME_FORMAT"), (path.name, pattern)


@pytest.mark.parametrize(
    "changes, key", [([], "changes"), (["firmware"], "changes")], ids=["none", "unknown"]
)
def test_a_configuration_change_must_say_what_changed(invited, personas, changes, key):
    with pytest.raises(ServiceError) as refused:
        renewal_start(
            assessment=invited,
            reason=RenewalReason.CONFIGURATION_CHANGE,
            changes=changes,
            member=member_of(personas.ava),
            channel=Channel.WEB,
        )
    assert key in refused.value.errors
    assert not invited.renewals.exists()


def test_a_draft_cannot_be_renewed(catalog, personas):
    vendor = vendor_create(
        organization=personas.acme, actor=personas.ava, channel=Channel.WEB, name="New Co"
    )
    draft = assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key="ai-inference-isolation@1",
        actor=personas.ava,
        channel=Channel.WEB,
    )
    with pytest.raises(ConflictError):
        renewal_start(
            assessment=draft,
            reason=RenewalReason.DUE,
            member=member_of(personas.ava),
            channel=Channel.WEB,
        )


# -- changes requested ---------------------------------------------------------------------


def test_changes_requested_sends_the_reopened_questions_as_links_with_the_note(
    invited, personas, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        review_record(
            assessment=invited,
            member=member_of(personas.rex),
            decision="changes_requested",
            message="Your pool is smaller than the context you advertise: explain.",
            reopen_codes=["CTX-02", "KV-01"],
            channel=Channel.WEB,
        )
    (email,) = to_the_vendor()
    assert email.to == ["mei@inferno.test"]
    assert "Your pool is smaller than the context you advertise: explain." in email.body
    spec = invited.questionnaire.spec
    for code in ("CTX-02", "KV-01"):
        assert spec.questions[code].text.zh_hant in email.body  # in Mei's language
    urls = re.findall(r"https?://\S+/v/([\w-]+)/s/(\w+)/#q-([\w-]+)", email.body)
    assert [(section, code) for _token, section, code in urls] == [
        ("CTX", "CTX-02"),
        ("KV", "KV-01"),
    ]
    link = vendor_link_resolve(token=urls[0][0])
    assert link.assessment == invited and link.language == "zh-hant"
    assert OutboundEmail.objects.get(kind=EmailKind.CHANGES_REQUESTED).body == ""  # secret


def test_the_vendor_reports_a_configuration_change_through_its_link(
    invited, client, django_capture_on_commit_callbacks
):
    token = invited.vendor_token
    landing = client.get(f"/v/{token}/")
    assert landing.status_code == 200 and "/configuration-change/" in landing.content.decode()
    refused = client.post(f"/v/{token}/configuration-change/", {"changes": []}, follow=True)
    assert not invited.renewals.exists() and refused.status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/v/{token}/configuration-change/",
            {"changes": ["parallelism"], "note": "TP4 → TP8"},
        )
    renewal = invited.renewals.get()
    assert renewal.configuration_change == {"changes": ["parallelism"], "note": "TP4 → TP8"}
    (email,) = to_the_vendor()
    new_token = re.search(r"/v/([\w-]+)/", email.body).group(1)
    assert vendor_link_resolve(token=new_token).assessment == renewal
    assert vendor_link_resolve(token=token).assessment == invited  # the old link still works


def test_the_new_link_goes_to_the_contact_who_declared_the_change(
    catalog, personas, client, django_capture_on_commit_callbacks
):
    """Mei declares; Ken was invited after her: the portal tells Mei the link was emailed to
    her, so it must be."""
    scored = answered_by_mei(
        personas, django_capture_on_commit_callbacks, then_invited=("ken@inferno.test",)
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/v/{scored.vendor_token}/configuration-change/",
            {"changes": ["parallelism"]},
            follow=True,
        )
    assert "mei@inferno.test" in response.content.decode()
    (email,) = to_the_vendor()
    assert email.to == ["mei@inferno.test"]
    new_token = re.search(r"/v/([\w-]+)/", email.body).group(1)
    link = vendor_link_resolve(token=new_token)
    assert link.assessment == scored.renewals.get()
    assert (link.contact_email, link.language) == ("mei@inferno.test", "zh-hant")
