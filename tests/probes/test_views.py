"""The assessor's probe page (start, progress, result), the result attached as PRB-02 evidence
through the evidence service, the findings page's probe panel and the PDF chapter (one
presenter), and PRB-02 refused to everyone but AVIA itself."""

from __future__ import annotations

import io
import json

import pypdf
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import api_token_create
from assessments import factories
from assessments.models import AssessmentStatus, AuditEvent, Channel, EvidenceFile
from assessments.presenters.probe import endpoint_without_credentials, probe_view
from assessments.services.answers import answers_save
from assessments.services.evidence import evidence_add, evidence_remove
from core.errors import ServiceError
from probes.models import ProbeRun, ProbeRunStatus
from probes.services.runs import probe_run_fail
from probes.services.setup import probe_setup_save
from reports.context import report_context
from reports.rendering import render_report, report_html
from tests.html_elements import Elements
from tests.personas import member_of
from tests.reports.conftest import ARTIFACTS as REPORT_ARTIFACTS
from tests.reports.conftest import render_first_page_png

from .conftest import make_v2_assessment, probed, rules_fired_by, setup_fields
from .vendor import closed_loopback_port

RATE_FOR_TESTS = 100  # requests per second per key: a whole probe in a second or two


def page_url(assessment) -> str:
    return reverse("probes:assessment_probe", args=[assessment.pk])


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def fast_probes(settings):
    settings.PROBE_RATE_PER_KEY = RATE_FOR_TESTS


@pytest.fixture
def consented(catalog, personas):
    return make_v2_assessment(personas.acme, personas.ava)


@pytest.fixture
def scored_launch_day(catalog, personas, settings):
    """The launch-day vendor's v2 assessment, submitted and scored before any probe."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    ava = member_of(personas.ava)
    return factories.incident_assessment(
        member=ava,
        answers_from=factories.LAUNCH_V2,
        evidence=factories.logs(factories.LAUNCH_LOG),
    )


# -- starting and following a run ----------------------------------------------------------


def test_the_assessor_starts_a_probe_and_follows_its_progress(consented, personas):
    probe_setup_save(
        assessment=consented,
        actor=personas.ava,
        **setup_fields(
            {"key_a": "sk-page-a-0000", "key_b": "sk-page-b-0000"},
            base_url=f"http://127.0.0.1:{closed_loopback_port()}",
        ),
    )
    client = logged_in(personas.ava)
    page = client.get(page_url(consented)).content.decode()
    assert "Open now" in page and "3,000,000 tokens" in page  # the window and the ceiling
    assert "sk-page-a-0000" not in page

    response = client.post(
        reverse("probes:run_start", args=[consented.pk]),
        {"checks": ["oversize"], "samples": "5", "prefix_tokens": "1024"},
    )

    assert response.status_code == 302
    run = ProbeRun.objects.get(assessment=consented)
    assert (run.status, run.checks, run.samples) == (ProbeRunStatus.QUEUED, ["oversize"], 5)
    page = client.get(page_url(consented)).content.decode()
    progress_url = reverse("probes:run_progress", args=[run.pk])
    assert f'hx-get="{progress_url}"' in page and "Refresh" in page
    polled = client.get(progress_url, headers={"HX-Request": "true"})
    assert polled.status_code == 200 and 'id="probe-progress"' in polled.content.decode()
    assert client.get(progress_url).status_code == 302  # without htmx: the page itself

    probe_run_fail(probe_run_id=run.pk, error="the endpoint cannot be reached")

    ended = client.get(progress_url, headers={"HX-Request": "true"})
    assert ended.status_code == 204 and ended["HX-Refresh"] == "true"


def test_a_viewer_reads_the_page_but_cannot_start_a_probe(consented, personas):
    probe_setup_save(assessment=consented, actor=personas.ava, **setup_fields(
        {"key_a": "sk-view-a-0000", "key_b": "sk-view-b-0000"}
    ))  # fmt: skip
    viewer = logged_in(personas.vic)

    page = viewer.get(page_url(consented)).content.decode()
    assert "Start the probe" not in page
    refused = viewer.post(reverse("probes:run_start", args=[consented.pk]), {"checks": ["canary"]})
    assert refused.status_code == 403
    assert not ProbeRun.objects.exists()


@pytest.mark.parametrize("consent", ["no", None])
def test_the_page_says_a_result_is_not_scored_without_the_vendors_consent(
    catalog, personas, consent
):
    """Scoring ignores a hidden question's files: without PRB-01 = yes a probe's result is not
    scored, and the member who may still run one is told so."""
    assessment = make_v2_assessment(personas.acme, personas.ava, consent=consent)
    body = logged_in(personas.ava).get(page_url(assessment)).content.decode()
    assert "PRB-01" in body and "scored only with the vendor" in body

    answers_save(
        assessment=assessment,
        answers={"PRB-01": "yes"},
        actor=personas.ava,
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )
    body = logged_in(personas.ava).get(page_url(assessment)).content.decode()
    assert "scored only with the vendor" not in body


def test_a_start_outside_the_window_is_refused_on_the_page(consented, personas):
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    probe_setup_save(
        assessment=consented,
        actor=personas.ava,
        **setup_fields(
            {"key_a": "sk-win-a-0000", "key_b": "sk-win-b-0000"},
            window_starts_at=now + timedelta(days=1),
            window_ends_at=now + timedelta(days=2),
        ),
    )

    response = logged_in(personas.ava).post(
        reverse("probes:run_start", args=[consented.pk]), {"checks": ["oversize"]}
    )

    assert response.status_code == 409
    assert "has not started yet" in response.content.decode()
    assert not ProbeRun.objects.exists()


def test_another_organizations_probe_pages_are_not_found(consented, personas):
    outsider = logged_in(personas.oscar)
    assert outsider.get(page_url(consented)).status_code == 404
    assert outsider.post(reverse("probes:run_start", args=[consented.pk])).status_code == 404


# -- the result: evidence, rescoring, the findings panel, the PDF --------------------------


def test_a_finished_probe_is_attached_as_evidence_and_scored_again(
    scored_launch_day, personas, launch_day_vendor, fast_probes, inline_scoring
):
    assessment = scored_launch_day
    assert assessment.status == AssessmentStatus.SCORED
    fired_before = set(assessment.latest_run.findings.values_list("rule_id", flat=True))

    run = probed(assessment, personas.ava, launch_day_vendor.base_url)

    assert run.status == ProbeRunStatus.DONE, run.error
    evidence = EvidenceFile.objects.get(assessment=assessment, question_code="PRB-02")
    assert run.evidence == evidence and evidence.parsed
    assert evidence.channel == Channel.SYSTEM and evidence.uploaded_by is None
    assert evidence.parse_result["checks"] == run.outcomes
    uploaded = AuditEvent.objects.get(action="evidence.uploaded", detail__question="PRB-02")
    assert uploaded.actor is None and uploaded.channel == Channel.SYSTEM
    client = logged_in(personas.ava)
    page = client.get(page_url(assessment)).content.decode()
    assert "Score again" in page and evidence.original_name in page

    with inline_scoring():
        client.post(reverse("assessments:rescore", args=[assessment.pk]))

    assessment.refresh_from_db()
    latest = assessment.latest_run
    assert latest.ruleset.version == "3"  # the newest that applies
    fired = set(latest.findings.values_list("rule_id", flat=True))
    expected = rules_fired_by(run.outcomes)
    assert {"PROBE-OVERSIZE-ACCEPTED", "PROBE-CROSS-TENANT-ECHO"} <= expected
    assert expected <= fired and not expected <= fired_before

    findings = client.get(reverse("assessments:findings", args=[assessment.pk])).content.decode()
    result = run.result
    above = result["checks"]["oversize"]["above"]
    assert (
        f"{above['prompt_tokens']:,} tokens ({above['percent_of_declared']:.1f} % of the "
        f"declared context) · HTTP {above['status']}"
    ) in findings
    hit = result["checks"]["canary"]["hits"][0]
    assert f"<mark>{hit['canary']}</mark>" in findings
    assert f"{result['tokens_spent']:,}" in findings
    assert "Across tenants (A sends first, B measures)" in findings and "<svg" in findings

    # The verdict and the findings come first; the probe's detail waits behind a summary.
    first_finding = findings.index('class="finding severity-')
    assert findings.index('id="score-title"') < first_finding < findings.index('id="probe"')
    panel = findings[findings.index('id="probe"') :]
    assert panel.index('class="probe-summary"') < panel.index('<details class="probe-detail">')
    assert panel.index("<summary>") < panel.index("<mark>")

    html = report_html(report_context(run=latest, language="en", number="AVIA-T"))
    assert 'id="probe"' in html and f"<mark>{hit['canary']}</mark>" in html
    chinese = report_html(report_context(run=latest, language="zh-hant", number="AVIA-T"))
    assert "隔離探測" in chinese
    # The PDF's headings are words, never the rules' codes (probe.oversize = accepted).
    for edition in (html, chinese):
        assert "probe.oversize" not in edition and "probe.&lt;check&gt;" not in edition
    # The probe chapter of the real PDF, in both languages, as pictures for the CI artefacts.
    for language, title in (("en", "Isolation probe"), ("zh-hant", "隔離探測")):
        rendered = render_report(report_context(run=latest, language=language, number="AVIA-T"))
        pdf = pypdf.PdfReader(io.BytesIO(rendered.pdf))
        (chapter,) = [  # the chapters (a chapter's sections are nested lists)
            item
            for item in pdf.outline
            if not isinstance(item, list) and str(item["/Title"]) == title
        ]
        page = pdf.get_destination_page_number(chapter) + 1
        assert hit["canary"] in "".join(
            "".join(pdf.pages[index].extract_text().split())
            for index in range(page - 1, len(pdf.pages))
        )
        REPORT_ARTIFACTS.mkdir(parents=True, exist_ok=True)
        source = REPORT_ARTIFACTS / f"probe-chapter-{language}.pdf"
        source.write_bytes(rendered.pdf)
        picture = render_first_page_png(
            source, REPORT_ARTIFACTS / f"probe-chapter-{language}", page
        )
        assert picture.stat().st_size > 10_000


def test_the_result_panel_escapes_the_vendors_text_and_hides_credentials():
    document = json.loads(
        (factories.EXAMPLES_DIR / "probe-launch-day.json").read_text(encoding="utf-8")
    )
    document["endpoint"] = "https://tenant:s3cret@api.example.com"
    document["checks"]["canary"]["hits"][0]["excerpt"] = (
        "before <script>alert(1)</script> c-5f0d8e1b2a4c4f6e9d3b7a1c0e2f4a6b after"
    )

    html = render_to_string("probes/_result.html", {"probe": probe_view(document, "en")})

    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "s3cret" not in html and "https://api.example.com" in html
    assert "<mark>c-5f0d8e1b2a4c4f6e9d3b7a1c0e2f4a6b</mark>" in html
    assert "943,718 tokens · HTTP 200" in html and "1,153,433 tokens · HTTP 200" in html
    assert "p = 0.41" in html and "298 ms vs 305 ms" in html
    assert endpoint_without_credentials("https://u@[::1]:8443/x") == "https://[::1]:8443/x"


# -- PRB-02 is AVIA's: never uploaded or removed by anyone else ----------------------------


def test_the_api_refuses_a_probe_result_upload(consented, personas):
    _token, key = api_token_create(user=personas.ava, organization=personas.acme, name="t")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    upload = SimpleUploadedFile("probe.json", b'{"endpoint": "https://x"}')

    response = api.post(
        f"/api/v1/assessments/{consented.pk}/evidence/",
        {"question": "PRB-02", "file": upload},
        format="multipart",
    )

    assert response.status_code == 400
    assert "AVIA attaches this evidence itself" in response.json()["errors"]["PRB-02"][0]
    assert not EvidenceFile.objects.exists()


def test_only_avia_itself_attaches_and_nobody_removes_a_probe_result(consented, personas):
    content = (factories.EXAMPLES_DIR / "probe-launch-day.json").read_bytes()
    with pytest.raises(ServiceError) as refused:
        evidence_add(
            assessment=consented,
            question_code="PRB-02",
            upload=SimpleUploadedFile("probe.json", content),
            actor=personas.ava,
            channel=Channel.SYSTEM,
        )
    assert list(refused.value.errors) == ["PRB-02"]

    attached = evidence_add(
        assessment=consented,
        question_code="PRB-02",
        upload=SimpleUploadedFile("probe.json", content),
        channel=Channel.SYSTEM,
    )
    assert attached.parsed

    with pytest.raises(ServiceError):
        evidence_remove(evidence=attached, actor=personas.ava, vendor_link=None, channel="web")
    assert EvidenceFile.objects.filter(pk=attached.pk).exists()


def test_the_progress_is_announced_from_a_live_region_that_stays_in_the_page(consented, personas):
    """Polling swaps the progress block whole; the line that says which check runs is a live
    region outside it whose text alone is swapped, so screen readers announce the change."""
    probe_setup_save(
        assessment=consented,
        actor=personas.ava,
        **setup_fields(
            {"key_a": "sk-live-a-0000", "key_b": "sk-live-b-0000"},
            base_url=f"http://127.0.0.1:{closed_loopback_port()}",
        ),
    )
    client = logged_in(personas.ava)
    client.post(reverse("probes:run_start", args=[consented.pk]), {"checks": ["oversize"]})
    run = ProbeRun.objects.get(assessment=consented)
    progress_url = reverse("probes:run_progress", args=[run.pk])
    for response in (
        client.get(page_url(consented)),
        client.get(progress_url, headers={"HX-Request": "true"}),
    ):
        page = Elements()
        page.feed(response.content.decode())
        polled = page.by_id("probe-progress")
        assert "role" not in polled["attrs"] and "aria-live" not in polled["attrs"]
        assert polled["attrs"]["hx-select"] == "#probe-progress"
        selected, _, style = polled["attrs"]["hx-select-oob"].partition(":")
        status = page.by_id(selected.lstrip("#"))
        assert style == "innerHTML" and status["attrs"]["role"] == "status"
        assert "probe-progress" not in status["ancestors"]
        assert "Queued" in status["text"]
