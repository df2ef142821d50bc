"""The isolation probe in the product, end to end, with real processes only: the reference vendor
(a real OpenAI-compatible server on a loopback port) and the real Celery worker.

The vendor consents (PRB-01) and submits through its private link, and gives the endpoint, two
test keys and the signed authorisation on the portal's probe page; the worker scores the
submission; an assessor starts the probe on its page and follows it; the worker probes the
endpoint and attaches the result as PRB-02 evidence; the assessor scores again (ruleset v3, the
newest that applies, reads the probe).
The probe rules that fire are read from the ruleset data: the launch-day vendor is caught
accepting an oversized prompt and echoing another tenant's text, the remediated vendor is not.
The findings page and the PDF (its text extracted) show the figures, and the keys appear
nowhere: not in any output, log, page, database file or report.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import secrets

import pypdf
import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from assessments import factories
from assessments.models import Assessment, AuditEvent, EvidenceFile, RunStatus
from assessments.services.vendor_links import vendor_link_issue
from probes.models import ProbeRun, ProbeRunStatus, ProbeSetup
from reports.context import report_context
from reports.rendering import render_report
from tests.personas import member_of
from tests.probes.conftest import rules_fired_by
from tests.probes.vendor import DECLARED_CONTEXT, MODEL, reference_vendor

from .test_probe_run import database_files, grep_files
from .worker import eventually

PROBE_TIMEOUT = 120
SCORING_TIMEOUT = 60
FORM_TIME = "%Y-%m-%dT%H:%M"
# What probe.md says each reference vendor mode gives. (The prefix-cache check is timed, and
# tests/probes/test_probe.py holds it to its result with enough samples; here, on a machine
# shared with other test runs, it only has to report its figures.)
EXPECTED = {
    "launch-day": {"oversize": "accepted", "canary": "leak"},
    "remediated": {"oversize": "rejected", "canary": "clean"},
}
ANSWERS = {"launch-day": factories.LAUNCH_V2, "remediated": factories.REMEDIATED_V2}
LOG = {"launch-day": factories.LAUNCH_LOG, "remediated": factories.REMEDIATED_LOG}


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("mode", ["launch-day", "remediated"])
def test_a_probe_set_up_in_the_portal_is_run_attached_and_scored(
    worker, personas, tmp_path, capfd, caplog, mode
):
    keys = {
        "key_a": f"sk-tenant-a-{secrets.token_hex(16)}",
        "key_b": f"sk-tenant-b-{secrets.token_hex(16)}",
    }
    ava = member_of(personas.ava)
    # The vendor's answers (PRB-01 = yes; CTX-01 the context its test endpoint serves) and its
    # startup log, through its private link; not yet submitted.
    assessment = factories.incident_assessment(
        member=ava,
        answers_from=ANSWERS[mode],
        answers={"CTX-01": DECLARED_CONTEXT},
        evidence=factories.logs(LOG[mode]),
        through_link=True,
        submit=False,
    )
    _link, token = vendor_link_issue(
        assessment=assessment, contact_email="sec@vendor.test", member=ava, channel="web"
    )
    vendor_browser, assessor = Client(), Client()
    assessor.force_login(personas.ava)
    pages: list[str] = []

    with reference_vendor(tmp_path, mode) as vendor:
        # The vendor: the probe page, then submit.
        now = timezone.localtime()
        saved = vendor_browser.post(
            reverse("probes:portal_setup", args=[token]),
            {
                "base_url": vendor.base_url,
                "model_name": MODEL,
                **keys,
                "signer_name": "Wei Chan, CISO",
                "spend_ceiling_tokens": "2000000",
                "window_starts_at": (now - dt.timedelta(hours=1)).strftime(FORM_TIME),
                "window_ends_at": (now + dt.timedelta(days=1)).strftime(FORM_TIME),
                "authorise": "on",
            },
        )
        assert saved.status_code == 302, saved.content.decode()[:3000]
        pages.append(vendor_browser.get(saved["Location"]).content.decode())
        submitted = vendor_browser.post(reverse("portal:review", args=[token]), {"confirm": "on"})
        assert submitted.status_code == 302, submitted.content.decode()[:3000]
        scored_first = wait_until_scored(assessment, worker, runs=1)
        assert not rules_fired_by(EXPECTED[mode]) & fired(scored_first)

        # The assessor: start the probe on its page and follow it as the page does.
        page_url = reverse("probes:assessment_probe", args=[assessment.pk])
        started = assessor.post(
            reverse("probes:run_start", args=[assessment.pk]),
            {
                "checks": ["oversize", "canary", "prefix_cache"],
                # The most per design: sequential sampling usually stops at 10, and samples
                # on past a look where the noise of a per-tenant cache came out near p < 0.05.
                "samples": "20",
                "prefix_tokens": "1024",
            },
        )
        assert started.status_code == 302 and started["Location"] == page_url
        run = ProbeRun.objects.get(assessment=assessment)
        pages.append(assessor.get(page_url).content.decode())
        progress_url = reverse("probes:run_progress", args=[run.pk])

        def ended() -> bool:
            polled = assessor.get(progress_url, headers={"HX-Request": "true"})
            if polled.status_code == 200:
                pages.append(polled.content.decode())
            return polled.status_code == 204 and polled["HX-Refresh"] == "true"

        eventually(ended, timeout=PROBE_TIMEOUT, what="the probe run ends", worker=worker)
        received = vendor.requests()

    run.refresh_from_db()
    assert run.status == ProbeRunStatus.DONE, run.error
    assert {check: run.outcomes[check] for check in EXPECTED[mode]} == EXPECTED[mode]
    assert run.outcomes["prefix_cache"] != "inconclusive"
    assert run.requests_sent == len(received)
    assert not ProbeSetup.objects.get(assessment=assessment).keys_present
    # Attached through the evidence service as PRB-02: the parser's reading stored, audited.
    evidence = EvidenceFile.objects.get(assessment=assessment, question_code="PRB-02")
    assert run.evidence_id == evidence.pk and evidence.parsed
    assert evidence.parse_result["checks"] == run.outcomes
    assert AuditEvent.objects.filter(
        action="evidence.uploaded", detail__question="PRB-02", actor=None
    ).exists()

    # Score again: the default ruleset (v3, the newest) reads the probe.
    probe_page = assessor.get(reverse("probes:assessment_probe", args=[assessment.pk]))
    pages.append(probe_page.content.decode())
    assert "Score again" in pages[-1]
    assessor.post(reverse("assessments:rescore", args=[assessment.pk]))
    rescored = wait_until_scored(assessment, worker, runs=2)
    assert rescored.ruleset.key == "incident-2026-kv@3"
    oversize_rules = rules_fired_by({"oversize": "accepted"})
    echo_rules = rules_fired_by({"canary": "leak"})
    assert oversize_rules and echo_rules  # the ruleset has such rules
    if mode == "launch-day":
        assert oversize_rules | echo_rules <= fired(rescored)
    else:
        assert not (oversize_rules | echo_rules) & fired(rescored)
    assert rules_fired_by(run.outcomes) <= fired(rescored)

    # The findings page and the PDF show the figures.
    findings = assessor.get(reverse("assessments:findings", args=[assessment.pk]))
    pages.append(findings.content.decode())
    result = run.result
    above = result["checks"]["oversize"]["above"]
    figures = [
        f"{above['prompt_tokens']:,} tokens",  # as counted, or the probe's estimate when refused
        f"HTTP {above['status']}",
        f"{result['tokens_spent']:,}",
        f"{result['checks']['prefix_cache']['median_ttft_ms']['hit']:,} ms",
    ]
    hits = result["checks"]["canary"]["hits"]
    if mode == "launch-day":
        assert hits
        figures.append(hits[0]["canary"])
    for figure in figures:
        assert figure in pages[-1], figure
    pdf = render_report(report_context(run=rescored, language="en", number="AVIA-E2E")).pdf
    text = " ".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages)
    flat = re.sub(r"-\s+", "-", " ".join(text.split()))  # a long code wraps after a hyphen
    assert "Isolation probe" in flat
    # A canary is one long word: the excerpt may wrap it anywhere (overflow-wrap), and the
    # extracted text then holds a line break inside it. Compared without any white space.
    unbroken = "".join(flat.split())
    for figure in figures:
        assert "".join(figure.split()) in unbroken, figure

    # The keys, nowhere.
    out, err = capfd.readouterr()
    files = database_files(tmp_path)
    for key in keys.values():
        assert key not in out and key not in err and key not in caplog.text
        assert key not in worker.log_text()
        assert all(key not in page for page in pages)
        assert key.encode() not in pdf and key not in text
        assert not grep_files(key, files)
    assert grep_files("Wei Chan, CISO", files)  # the search does read the rows


def wait_until_scored(assessment: Assessment, worker, *, runs: int):
    def scored():
        current = Assessment.objects.select_related("latest_run").get(pk=assessment.pk)
        latest = current.latest_run
        if latest is None or current.runs.count() < runs:
            return None
        if latest.status == RunStatus.SUCCEEDED and current.status == "scored":
            return latest
        assert latest.status != RunStatus.FAILED, latest.error
        return None

    return eventually(scored, timeout=SCORING_TIMEOUT, what=f"scoring run {runs}", worker=worker)


def fired(run) -> set[str]:
    return set(run.findings.values_list("rule_id", flat=True))
