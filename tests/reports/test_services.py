"""Requesting, rendering, failing and verifying reports, through the services and the task."""

import datetime as dt
import hashlib
import importlib
import io
import os
import stat

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone, translation

from assessments import factories
from assessments.models import AuditEvent, Channel
from assessments.services.answers import answers_save, assessment_create
from assessments.services.reviews import review_record
from assessments.services.submission import assessment_submit
from assessments.services.vendors import vendor_create
from core.errors import ConflictError, ServiceError
from core.formats import format_date
from reports import services
from reports.context import report_context
from reports.models import Report, ReportNumberSequence
from reports.rendering import render_report
from reports.services import (
    report_number_allocate,
    report_render,
    report_request,
    report_verify,
)
from reports.storage import report_storage
from reports.tasks import MAX_RETRIES
from tests.personas import member_of

from .conftest import QUESTIONNAIRE, make_scored_assessment, pdf_text, run_on_commit

pytestmark = pytest.mark.django_db


def request(assessment, actor, language="en", run=None):
    return report_request(
        assessment=assessment,
        language=language,
        member=member_of(actor),
        channel=Channel.WEB,
        run=run,
    )


def upload(data: bytes, name="report.pdf") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/pdf")


# -- requesting ----------------------------------------------------------------------------


def test_requests_get_consecutive_human_numbers_of_the_year(scored, personas):
    first = request(scored, personas.ava)
    second = request(scored, personas.rex, language="zh-hant")

    year = timezone.localdate().year
    assert first.number == f"AVIA-{year}-000001"
    assert second.number == f"AVIA-{year}-000002"
    assert ReportNumberSequence.objects.get(organization=personas.acme, year=year).last == 2
    assert (first.status, first.run, first.language) == ("queued", scored.latest_run, "en")
    assert first.organization == personas.acme


def test_numbers_continue_from_the_sequence_and_never_repeat(scored, personas):
    year = timezone.localdate().year
    ReportNumberSequence.objects.create(organization=personas.acme, year=year, last=122)

    numbers = [request(scored, personas.ava).number for _ in range(3)]

    assert numbers == [f"AVIA-{year}-000123", f"AVIA-{year}-000124", f"AVIA-{year}-000125"]
    assert Report.objects.values("number").distinct().count() == 3


def test_numbers_run_per_organization(scored, personas):
    """Issue 27: another organization's reports do not move Acme's numbers (which would hint
    at its volume), and each starts at 000001."""
    year = personas.acme.local_date().year
    oscar = member_of(personas.oscar)
    others = factories.incident_assessment(
        member=oscar, vendor=factories.incident_vendor(member=oscar, name="Other Vendor")
    )

    acme_first = request(scored, personas.ava).number
    other_first = report_request(
        assessment=others, language="en", member=oscar, channel=Channel.WEB
    ).number
    acme_second = request(scored, personas.ava).number

    assert (acme_first, acme_second) == (f"AVIA-{year}-000001", f"AVIA-{year}-000002")
    assert other_first == f"AVIA-{year}-000001"


def test_the_migration_keeps_old_numbers_and_continues_after_each_organizations_highest(
    scored, personas
):
    """Reports numbered globally before the change keep their numbers; each organization's
    sequence is seeded past the highest of its own, so nothing repeats within it."""
    from django.apps import apps

    migration = importlib.import_module("reports.migrations.0004_report_numbers_per_organization")
    for number in ("AVIA-2025-000007", "AVIA-2026-000001", "AVIA-2026-000004"):
        Report.objects.create(
            organization=personas.acme,
            assessment=scored,
            run=scored.latest_run,
            language="en",
            number=number,
        )
    ReportNumberSequence.objects.all().delete()

    migration.seed_sequences(apps, None)

    seeded = {
        (row.organization_id, row.year): row.last for row in ReportNumberSequence.objects.all()
    }
    assert seeded == {(personas.acme.pk, 2025): 7, (personas.acme.pk, 2026): 4}
    assert sorted(Report.objects.values_list("number", flat=True)) == [
        "AVIA-2025-000007",
        "AVIA-2026-000001",
        "AVIA-2026-000004",
    ]
    assert report_number_allocate(organization=personas.acme, year=2026) == "AVIA-2026-000005"


def test_a_request_is_queued_on_commit_and_audited(
    scored, personas, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        report = request(scored, personas.ava)

    assert len(callbacks) == 1  # the task is sent when the transaction commits
    assert Report.objects.get().status == "queued"
    event = AuditEvent.objects.get(action="report.requested")
    assert (event.actor, event.channel, event.assessment) == (personas.ava, "web", scored)
    assert event.detail == {"report": report.number, "run": scored.latest_run_id, "language": "en"}


def test_an_unknown_language_is_refused(scored, personas):
    with pytest.raises(ServiceError) as error:
        request(scored, personas.ava, language="fr")

    assert "language" in error.value.errors
    assert not Report.objects.exists()


def test_an_assessment_without_a_finished_run_cannot_be_reported(catalog, personas):
    vendor = vendor_create(
        organization=personas.acme, actor=personas.ava, channel=Channel.WEB, name="Draft Co"
    )
    draft = assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key=QUESTIONNAIRE,
        actor=personas.ava,
        channel=Channel.WEB,
    )

    with pytest.raises(ConflictError):
        request(draft, personas.ava)


def test_a_run_of_another_assessment_is_refused(scored, personas, inline_tasks):
    other = make_scored_assessment(personas, vendor_name="Other Vendor")

    with pytest.raises(ServiceError) as error:
        request(scored, personas.ava, run=other.latest_run)

    assert "run" in error.value.errors


# -- rendering -----------------------------------------------------------------------------


def test_a_rendered_report_is_stored_privately_with_its_checksum(ready_report, private_media):
    storage = report_storage()
    data = storage.open(ready_report.storage_name, "rb").read()
    path = storage.path(ready_report.storage_name)

    assert hashlib.sha256(data).hexdigest() == ready_report.sha256
    assert ready_report.size == len(data) and data.startswith(b"%PDF-")
    assert ready_report.pages > 10 and ready_report.rendered_at is not None
    assert path.startswith(str(private_media / "reports" / str(ready_report.organization_id)))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o440  # read-only once written
    assert ready_report.attempts == 1
    event = AuditEvent.objects.get(action="report.generated")
    assert event.channel == "system"
    assert event.detail["sha256"] == ready_report.sha256


def test_a_ready_report_is_never_rendered_again(ready_report, monkeypatch):
    before = report_storage().open(ready_report.storage_name, "rb").read()

    def must_not_render(context):
        raise AssertionError("a ready report was rendered again")

    monkeypatch.setattr(services, "render_report", must_not_render)
    again = report_render(report_id=ready_report.pk)

    assert again == ready_report
    again.refresh_from_db()
    assert (again.sha256, again.storage_name, again.attempts) == (
        ready_report.sha256,
        ready_report.storage_name,
        1,
    )
    assert report_storage().open(again.storage_name, "rb").read() == before
    assert services.report_file(report=again) == before


def test_a_changed_file_is_refused_rather_than_served(ready_report):
    path = report_storage().path(ready_report.storage_name)
    os.chmod(path, 0o640)
    with open(path, "ab") as handle:
        handle.write(b"%% appended")

    with pytest.raises(services.ReportIntegrityError):
        services.report_file(report=ready_report)


def test_a_permanent_error_fails_the_report_with_its_reason(
    scored, personas, inline_tasks, monkeypatch
):
    def broken(context):
        raise ValueError("the template is broken")

    monkeypatch.setattr(services, "render_report", broken)
    with inline_tasks():
        report = request(scored, personas.ava)

    report.refresh_from_db()
    assert report.status == "failed"
    assert report.error == "ValueError: the template is broken"
    assert report.attempts == 1 and report.sha256 == ""
    assert AuditEvent.objects.filter(action="report.failed").count() == 1


@pytest.fixture
def eager_retries(settings):
    """Eager tasks run their retries in place, but only if errors do not propagate (the
    project propagates them, so that a bug in a task fails the test that queued it)."""
    settings.CELERY_TASK_EAGER_PROPAGATES = False


def test_a_transient_error_is_retried(scored, personas, inline_tasks, eager_retries, monkeypatch):
    calls = []

    def flaky(context):
        calls.append(context.number)
        if len(calls) == 1:
            raise OSError("NFS hiccup")
        return render_report(context)

    monkeypatch.setattr(services, "render_report", flaky)
    with inline_tasks():
        report = request(scored, personas.ava)

    report.refresh_from_db()
    assert report.status == "ready", report.error
    assert report.attempts == 2 and len(calls) == 2


def test_a_transient_error_that_persists_fails_after_the_retries(
    scored, personas, inline_tasks, eager_retries, monkeypatch
):
    def down(context):
        raise OSError("disk full")

    monkeypatch.setattr(services, "render_report", down)
    with inline_tasks():
        report = request(scored, personas.ava)

    report.refresh_from_db()
    assert report.status == "failed"
    assert report.error == "OSError: disk full"
    assert report.attempts == MAX_RETRIES + 1


def test_a_report_whose_rendering_keeps_being_interrupted_fails_instead_of_cycling(
    scored, personas, monkeypatch
):
    """A render that takes its worker down (killed, out of memory) leaves the report
    `rendering`; the sweeper queues it again and the next delivery dies the same way. After
    MAX_RENDER_ATTEMPTS the report fails, saying why, rather than "rendering" for ever."""
    report = request(scored, personas.ava)  # queued; tests never commit, so no task runs
    Report.objects.filter(pk=report.pk).update(status="rendering", attempts=20)
    monkeypatch.setattr(services, "render_report", lambda context: pytest.fail("rendered again"))

    report_render(report_id=report.pk)

    report.refresh_from_db()
    assert report.status == "failed" and report.sha256 == ""
    assert "interrupted 20 times" in report.error
    assert AuditEvent.objects.filter(action="report.failed").count() == 1
    assert services.MAX_RENDER_ATTEMPTS > MAX_RETRIES + 1  # the task's own retries still run


def test_a_failed_report_stays_failed(scored, personas, inline_tasks, monkeypatch):
    monkeypatch.setattr(services, "render_report", lambda context: 1 / 0)
    with inline_tasks():
        report = request(scored, personas.ava)
    monkeypatch.undo()

    assert report_render(report_id=report.pk).status == "failed"  # a new request is a new report


# -- a report of an older run --------------------------------------------------------------


def ask_for_output_consistency_tests(scored, personas) -> None:
    """Rex asks for changes to ISO-01 (no output-consistency tests, a finding of the run)."""
    review_record(
        assessment=scored,
        member=member_of(personas.rex),
        decision="changes_requested",
        message="Add output-consistency tests.",
        reopen_codes=["ISO-01"],
        channel=Channel.WEB,
    )


def test_a_report_of_an_older_run_shows_that_run_as_it_was(scored, personas, inline_tasks):
    first_run = scored.latest_run
    ask_for_output_consistency_tests(scored, personas)
    answers_save(
        assessment=scored,
        answers={"ISO-01": "yes"},
        comments={"ISO-01": "Every long-context test now checks output ownership."},
        actor=personas.ava,
        channel=Channel.WEB,
    )
    with run_on_commit():
        assessment_submit(assessment=scored, actor=personas.ava, channel=Channel.WEB)
    scored.refresh_from_db()
    second_run = scored.latest_run
    assert second_run != first_run

    old = report_context(run=first_run, language="en", number="AVIA-TEST-1")
    new = report_context(run=second_run, language="en", number="AVIA-TEST-2")

    rule = "NO-OUTPUT-CONSISTENCY-TESTS"
    assert rule in {f.rule_id for f in old.findings}
    assert rule not in {f.rule_id for f in new.findings}
    iso = {a.code: a for s in old.answer_sections for a in s.answers}["ISO-01"]
    assert (iso.value, iso.comment) == (
        "No",
        "Long-context tests checked status codes and performance, not whose output it was.",
    )
    assert old.decision.decision == "changes_requested"  # the review of that run
    assert new.decision is None

    with inline_tasks():
        report = request(scored, personas.ava, run=first_run)
    report.refresh_from_db()
    text = "".join("".join(pdf_text(services.report_file(report=report))).split())
    assert report.run == first_run
    assert rule in text
    assert f"#{first_run.pk}" in text
    assert "Everylong-contexttestnowchecksoutputownership" not in text


def test_a_report_of_an_older_run_gives_the_submission_that_run_scored(
    scored, personas, inline_tasks
):
    """Resubmitted weeks later after a change request: the first run's report still says when
    the answers it scored were submitted, not when the later ones were."""
    import time_machine

    first_run = scored.latest_run
    first_submitted = scored.submitted_at
    ask_for_output_consistency_tests(scored, personas)
    with time_machine.travel(timezone.now() + dt.timedelta(days=40)):
        answers_save(
            assessment=scored, answers={"ISO-01": "yes"}, actor=personas.ava, channel=Channel.WEB
        )
        with run_on_commit():
            assessment_submit(assessment=scored, actor=personas.ava, channel=Channel.WEB)
    scored.refresh_from_db()
    assert scored.latest_run != first_run

    old = report_context(run=first_run, language="en", number="X")
    new = report_context(run=scored.latest_run, language="en", number="Y")

    first_day = personas.acme.local_date(first_submitted)
    assert old.submitted_at == format_date(first_day, "en")
    assert new.submitted_at == format_date(first_day + dt.timedelta(days=40), "en")


# -- verifying -----------------------------------------------------------------------------


def test_an_unaltered_report_is_recognised(ready_report, personas):
    data = services.report_file(report=ready_report)

    result = report_verify(organization=personas.acme, uploaded_file=upload(data))

    assert result.matched and result.report == ready_report
    assert result.sha256 == ready_report.sha256


def test_an_altered_report_is_not_found(ready_report, personas):
    data = bytearray(services.report_file(report=ready_report))
    data[-10] ^= 0x01

    result = report_verify(organization=personas.acme, uploaded_file=upload(bytes(data)))

    assert not result.matched


def test_another_organizations_report_is_not_found(ready_report, personas):
    data = services.report_file(report=ready_report)

    result = report_verify(organization=personas.other, uploaded_file=upload(data))

    assert not result.matched and result.report is None


def test_a_file_too_large_to_be_a_report_is_refused(personas, monkeypatch):
    monkeypatch.setattr(services, "VERIFY_MAX_BYTES", 10)

    with pytest.raises(ServiceError):
        report_verify(organization=personas.acme, uploaded_file=upload(b"x" * 11))


@pytest.mark.parametrize("content", [b"", b"Name,Score\nAcme,100\n", b"\x89PNG\r\n\x1a\n"])
def test_a_file_that_is_not_a_pdf_is_refused_with_a_clear_message(personas, content):
    with translation.override("en"):
        with pytest.raises(ServiceError) as refused:
            report_verify(organization=personas.acme, uploaded_file=upload(content))
        message = str(refused.value.errors["file"][0])

    assert "This file is not a PDF, so it cannot be an AVIA report." in message


def test_risk_decisions_made_after_a_later_run_stay_out_of_the_older_report(
    scored, personas, inline_tasks
):
    from assessments.services.reviews import risk_decision_record

    decision = risk_decision_record(
        assessment=scored,
        rule_id="NO-STAGED-ROLLOUT",
        kind="acceptance",
        justification="Staged rollout is planned for Q3.",
        owner="Head of procurement",
        expires_on=timezone.localdate() + dt.timedelta(days=90),
        member=member_of(personas.alice),
        channel=Channel.WEB,
    )
    first = report_context(run=scored.latest_run, language="en", number="X")
    finding = {f.rule_id: f for f in first.findings}["NO-STAGED-ROLLOUT"]
    assert [d.justification for d in finding.decisions] == [decision.justification]

    # A rescore makes a later run; a decision recorded after it belongs to that run only.
    from assessments.services.submission import assessment_rescore

    with run_on_commit():
        assessment_rescore(assessment=scored, member=member_of(personas.ava), channel=Channel.WEB)
    scored.refresh_from_db()
    first_run = scored.runs.order_by("created_at").first()
    risk_decision_record(
        assessment=scored,
        rule_id="NO-STAGED-ROLLOUT",
        kind="mitigation",
        justification="Canary stage added.",
        owner="Vendor manager",
        expires_on=timezone.localdate() + dt.timedelta(days=30),
        member=member_of(personas.alice),
        channel=Channel.WEB,
    )
    old = report_context(run=first_run, language="en", number="X")
    new = report_context(run=scored.latest_run, language="en", number="Y")

    def kinds(context):
        finding = {f.rule_id: f for f in context.findings}["NO-STAGED-ROLLOUT"]
        return [d.kind_label for d in finding.decisions]

    assert kinds(old) == ["Risk acceptance"]
    assert kinds(new) == ["Risk acceptance", "Mitigation"]


def test_a_risk_acceptance_that_has_expired_when_the_report_is_made_says_so(scored, personas):
    from assessments.services.reviews import risk_decision_record
    from reports.rendering import report_html

    risk_decision_record(
        assessment=scored,
        rule_id="NO-STAGED-ROLLOUT",
        kind="acceptance",
        justification="Staged rollout is planned for Q3.",
        owner="Head of procurement",
        expires_on=timezone.localdate() + dt.timedelta(days=30),
        member=member_of(personas.alice),
        channel=Channel.WEB,
    )

    def decision(context):
        (only,) = {f.rule_id: f for f in context.findings}["NO-STAGED-ROLLOUT"].decisions
        return only

    now = timezone.now()
    later = now + dt.timedelta(days=60)
    current = report_context(run=scored.latest_run, language="en", number="X", generated_at=now)
    expired = report_context(
        run=scored.latest_run, language="zh-hant", number="Y", generated_at=later
    )

    assert not decision(current).expired and decision(expired).expired
    assert "已屆滿" in report_html(expired)
    assert "(expired)" not in report_html(current).split('id="finding-NO-STAGED-ROLLOUT"')[1]


def test_the_verification_reads_the_upload_in_chunks(ready_report, personas):
    data = services.report_file(report=ready_report)
    big = SimpleUploadedFile("r.pdf", data)
    big.file = io.BytesIO(data)  # chunks() works on any file object

    assert report_verify(organization=personas.acme, uploaded_file=big).matched
