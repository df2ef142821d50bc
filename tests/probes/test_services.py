"""The probe's services: the set-up and its signed authorisation, requesting a run inside the
window and the ceiling, executing it against the reference vendor, and destroying the keys."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.utils import timezone

from assessments.models import AuditEvent, Channel
from assessments.services.vendor_links import vendor_link_issue
from core.errors import ConflictError, ServiceError
from probes.keystore import key_decrypt
from probes.models import ProbeRun, ProbeRunStatus, ProbeSetup
from probes.services.runs import TIME_LIMIT_S, probe_run_execute, probe_run_request
from probes.services.setup import probe_setup_save
from tests.personas import member_of

from .conftest import make_v2_assessment, setup_fields
from .vendor import DECLARED_CONTEXT, closed_loopback_port, reference_vendor

pytestmark = pytest.mark.django_db


def database_dump() -> str:
    """Every row of the test database as SQL text (SQLite's own dump)."""
    connection.ensure_connection()
    return "\n".join(connection.connection.iterdump())


def test_the_set_up_keeps_the_keys_only_encrypted(assessment, set_up_probe, keys):
    setup = set_up_probe(assessment)

    assert setup.keys_present
    assert key_decrypt(setup.key_a_ciphertext).reveal() == keys["key_a"]
    assert key_decrypt(setup.key_b_ciphertext).reveal() == keys["key_b"]
    dump = database_dump()
    assert setup.key_a_ciphertext in dump  # the dump does hold the row...
    assert keys["key_a"] not in dump and keys["key_b"] not in dump  # ...never the keys
    event = AuditEvent.objects.get(action="probe.setup_saved")
    assert event.detail["signer_name"] == "Wei Chan, CISO of Inferno AI"
    assert event.detail["spend_ceiling_tokens"] == 3_000_000


def test_a_set_up_with_errors_names_every_field_and_saves_nothing(assessment, personas, keys):
    now = timezone.now()
    fields = setup_fields(
        {"key_a": keys["key_a"], "key_b": keys["key_a"]},
        base_url="http://api.vendor.example",
        model_name=" ",
        declared_context=100,
        signer_name="",
        spend_ceiling_tokens=0,
        window_starts_at=now - dt.timedelta(days=3),
        window_ends_at=now - dt.timedelta(days=1),
    )

    with pytest.raises(ServiceError) as refused:
        probe_setup_save(assessment=assessment, actor=personas.ava, **fields)

    errors = refused.value.errors
    assert set(errors) == {
        "base_url",
        "model_name",
        "declared_context",
        "key_b",
        "signer_name",
        "spend_ceiling_tokens",
        "window_ends_at",
    }
    assert "PROBE_ALLOW_HTTP" in errors["base_url"][0]
    assert "two different test tenants" in errors["key_b"][0]
    assert keys["key_a"] not in str(errors)
    assert not ProbeSetup.objects.exists()
    assert not AuditEvent.objects.filter(action__startswith="probe.").exists()


def test_errors_are_translated_for_the_vendor(assessment, personas, keys):
    from django.utils import translation

    with translation.override("zh-hant"), pytest.raises(ServiceError) as refused:
        probe_setup_save(
            assessment=assessment,
            actor=personas.ava,
            **setup_fields(keys, base_url="ftp://x", window_ends_at=timezone.now()),
        )

    assert "https://host" in refused.value.errors["base_url"][0]
    assert refused.value.errors["base_url"][0] != "The base URL is malformed: expected " + (
        "https://host[:port][/path]."
    )


def test_a_vendor_link_sets_up_only_its_own_assessment(assessment, personas, keys):
    other = make_v2_assessment(personas.acme, personas.ava, vendor_name="Other vendor")
    link, _token = vendor_link_issue(
        assessment=other,
        contact_email="sec@vendor.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )

    with pytest.raises(ServiceError) as refused:
        probe_setup_save(assessment=assessment, vendor_link=link, **setup_fields(keys))

    assert "vendor_link" in refused.value.errors
    setup = probe_setup_save(
        assessment=other, vendor_link=link, **setup_fields(keys, channel=Channel.VENDOR_LINK)
    )
    assert setup.entered_by_link == link and setup.entered_by is None


@pytest.mark.parametrize(
    ("window", "message"),
    [
        ((1, 2), "has not started"),
        ((-3, -1), "has ended"),
    ],
)
def test_a_run_is_refused_outside_the_authorised_window(
    assessment, set_up_probe, personas, window, message
):
    setup = set_up_probe(assessment)
    now = timezone.now()
    # Saved through the service while valid; the clock has since moved (or not yet arrived).
    ProbeSetup.objects.filter(pk=setup.pk).update(
        window_starts_at=now + dt.timedelta(days=window[0]),
        window_ends_at=now + dt.timedelta(days=window[1]),
    )

    with pytest.raises(ConflictError) as refused:
        probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)

    assert message in refused.value.errors["probe"][0]
    assert not ProbeRun.objects.exists()


def test_a_run_without_a_set_up_is_refused(assessment, personas):
    with pytest.raises(ConflictError):
        probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)


def test_the_budget_is_what_is_left_of_the_ceiling(assessment, set_up_probe, personas, settings):
    settings.PROBE_BUDGET_TOKENS = 3_000_000
    set_up_probe(assessment, spend_ceiling_tokens=50_000)

    run = probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)

    assert run.budget_tokens == 50_000
    with pytest.raises(ConflictError, match="already running"):
        probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)
    # The first run spent all but 10,000 tokens of the ceiling.
    ProbeRun.objects.filter(pk=run.pk).update(
        status=ProbeRunStatus.DONE, tokens_spent=40_000, result={}
    )
    second = probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)
    assert second.budget_tokens == 10_000
    ProbeRun.objects.filter(pk=second.pk).update(
        status=ProbeRunStatus.DONE, tokens_spent=10_000, result={}
    )
    with pytest.raises(ConflictError, match="ceiling is used up"):
        probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)


def test_run_options_are_checked(assessment, set_up_probe, personas):
    set_up_probe(assessment)
    with pytest.raises(ServiceError) as refused:
        probe_run_request(
            assessment=assessment,
            actor=personas.ava,
            channel=Channel.API,
            checks=["oversize", "mind_reading"],
            samples=2,
            prefix_tokens=100,
        )
    assert set(refused.value.errors) == {"checks", "samples", "prefix_tokens"}


def test_a_run_against_the_remediated_vendor_stores_the_result_and_destroys_the_keys(
    tmp_path, assessment, set_up_probe, personas, keys, settings, inline_scoring
):
    settings.PROBE_RATE_PER_KEY = 50
    with reference_vendor(tmp_path, "remediated") as vendor:
        set_up_probe(assessment, base_url=vendor.base_url)
        with inline_scoring():
            run = probe_run_request(
                assessment=assessment,
                actor=personas.ava,
                channel=Channel.API,
                samples=40,
                prefix_tokens=1024,
            )
        received = vendor.requests()

    run.refresh_from_db()
    assert run.status == ProbeRunStatus.DONE, run.error
    assert run.outcomes == {"oversize": "rejected", "canary": "clean", "prefix_cache": "isolated"}
    assert run.result["declared_context"] == DECLARED_CONTEXT
    # Spent: what the vendor counted for each prompt, the rejected one included (its refusal
    # states the count; a rejected prompt may still be billed, so it counts).
    above = run.result["checks"]["oversize"]["above"]
    assert above["status"] == 400 and above["measured"] is True
    counted = sum(entry["prompt_tokens"] for entry in received)
    assert run.tokens_spent == run.result["tokens_spent"] == counted
    assert run.result["tokens_measured"] is True
    assert run.requests_sent == len(received)
    assert run.progress["percent"] == 100 and run.progress["check"] == "done"
    assert run.first_request_at is not None and run.finished_at is not None
    setup = ProbeSetup.objects.get()
    assert not setup.keys_present and setup.keys_destroyed_at is not None
    actions = list(
        AuditEvent.objects.filter(action__startswith="probe.")
        .order_by("id")
        .values_list("action", flat=True)
    )
    assert actions == [
        "probe.setup_saved",
        "probe.requested",
        "probe.keys_destroyed",
        "probe.finished",
    ]
    dump = database_dump()
    assert keys["key_a"] not in dump and keys["key_b"] not in dump
    # Another run needs the vendor to enter the keys again.
    with pytest.raises(ConflictError, match="enter them again"):
        probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)


def test_an_unreachable_endpoint_fails_the_run_and_destroys_the_keys(
    assessment, set_up_probe, personas, inline_scoring
):
    set_up_probe(assessment, base_url=f"http://127.0.0.1:{closed_loopback_port()}")

    with inline_scoring():
        run = probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)

    run.refresh_from_db()
    assert run.status == ProbeRunStatus.FAILED
    assert "cannot be reached" in run.error
    assert not ProbeSetup.objects.get().keys_present
    assert AuditEvent.objects.filter(action="probe.failed").exists()


def test_a_redelivered_run_that_had_sent_requests_is_not_repeated(
    tmp_path, assessment, set_up_probe, personas
):
    with reference_vendor(tmp_path, "launch-day") as vendor:
        set_up_probe(assessment, base_url=vendor.base_url)
        run = probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)
        # The worker died mid-probe: the run is "running", its first request had gone out, and
        # it started longer ago than the task's hard time limit (no worker can still be on it;
        # within it, see test_redelivery_while_probing.py).
        started = timezone.now() - dt.timedelta(seconds=TIME_LIMIT_S + 60)
        ProbeRun.objects.filter(pk=run.pk).update(
            status=ProbeRunStatus.RUNNING, started_at=started, first_request_at=started
        )

        probe_run_execute(probe_run_id=run.pk)
        received = vendor.requests()

    run.refresh_from_db()
    assert run.status == ProbeRunStatus.FAILED and "not repeated" in run.error
    assert received == []
    assert not ProbeSetup.objects.get().keys_present


def test_a_finished_run_is_left_as_it_is(assessment, set_up_probe, personas):
    set_up_probe(assessment)
    run = probe_run_request(assessment=assessment, actor=personas.ava, channel=Channel.API)
    ProbeRun.objects.filter(pk=run.pk).update(status=ProbeRunStatus.DONE, result={"checks": {}})

    again = probe_run_execute(probe_run_id=run.pk)

    assert again.status == ProbeRunStatus.DONE and again.result == {"checks": {}}
    assert ProbeSetup.objects.get().keys_present  # untouched: nothing ran
