"""One choice of ruleset (`scoring.registry.default_ruleset`: the newest that applies to the
answers' version), wherever answers are scored.

The same answers of each questionnaire version go in through every entry point — the vendor
portal's pages (the web app), a workbook imported in the portal, the REST API, and
`manage.py score` — and each is scored with the same ruleset (v3, which v3.md says scores v1, v2
and v3 answers), with the same findings, score and tier: those the engine gives for the answers.
A member's "Score again" on the web app chooses it again.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from assessments import factories
from assessments.models import Assessment, Channel
from assessments.services.evidence import evidence_add
from questionnaires.models import QuestionnaireVersion
from questionnaires.validation import validate_answers
from scoring.evidence import parse_evidence
from scoring.registry import builtin_catalog
from scoring.selectors import default_ruleset_for
from tests.personas import member_of
from tests.spreadsheets.conftest import as_typed, fill, saved_answers, upload, waiting_assessment

pytestmark = pytest.mark.django_db

NEWEST = "incident-2026-kv@3"
LAUNCH_LOG = factories.LOGS_DIR / factories.LAUNCH_LOG
# questionnaire version → the example answer file, and one evidence file with who attaches it
# (the vendor's startup log; AVIA's probe result, the v3 one found an over-claimed context).
EXAMPLES = {
    "1": (factories.LAUNCH, "CTX-08", LAUNCH_LOG),
    "2": (factories.LAUNCH_V2, "PRB-02", factories.EXAMPLES_DIR / "probe-launch-day.json"),
    "3": (factories.OVERCLAIMED_V3, "PRB-02", factories.OVERCLAIMED_PROBE),
}


@pytest.mark.parametrize("version", ["1", "2", "3"])
def test_the_catalogue_and_the_database_make_the_same_choice(catalog, version):
    key = f"ai-inference-isolation@{version}"
    questionnaire = QuestionnaireVersion.objects.get(slug="ai-inference-isolation", version=version)

    chosen = default_ruleset_for(questionnaire=questionnaire)

    assert chosen is not None
    assert chosen.key == builtin_catalog().default_ruleset_for(key).key == NEWEST


def vendor_answers(spec, name: str) -> dict:
    answers = factories.example(name)["answers"]
    return {
        code: value
        for code, value in answers.items()
        if spec.questions[code].section in {s.code for s in spec.sections if s.vendor_facing}
    }


def attach(assessment: Assessment, code: str, path: Path, member) -> None:
    """The evidence file as it arrives: a startup log uploaded by the assessor, a probe result
    attached by AVIA (a probe run)."""
    question = assessment.questionnaire.spec.questions[code]
    by = {"actor": member.user} if not question.produced_by_avia else {}
    evidence_add(
        assessment=assessment,
        question_code=code,
        upload=factories.upload(path),
        channel=Channel.SYSTEM if question.produced_by_avia else Channel.WEB,
        **by,
    )


def by_portal_pages(client: Client, token: str, spec, answers: dict) -> None:
    for section in spec.sections:
        if not section.vendor_facing:
            continue
        form = {
            code: value
            for code, value in answers.items()
            if spec.questions[code].section == section.code
        }
        response = client.post(reverse("portal:section", args=[token, section.code]), form)
        assert response.status_code == 302, (section.code, response.content.decode()[:2000])


def by_workbook(client: Client, token: str, spec, answers: dict) -> None:
    download = client.get(reverse("portal_workbook:download", args=[token, "zh-hant"]))
    content = fill(download.content, as_typed(spec, answers, "zh-hant"))
    response = client.post(
        reverse("portal_workbook:page", args=[token]), {"workbook": upload(content)}
    )
    assert response.status_code == 302, [(c.code, c.message) for c in response.context["cells"]]


def portal_submit(client: Client, token: str) -> None:
    response = client.post(reverse("portal:review", args=[token]), {"confirm": "on"})
    assert response.status_code == 302


def result_of(assessment: Assessment) -> tuple:
    assessment.refresh_from_db()
    run = assessment.latest_run
    findings = sorted(run.findings.values_list("rule_id", "severity", "points"))
    return run.ruleset.key, run.risk_score, run.risk_tier, findings


@pytest.mark.parametrize("version", ["1", "2", "3"])
def test_the_same_answers_score_alike_through_every_entry_point(
    catalog, personas, settings, inline_scoring, version
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    ava = member_of(personas.ava)
    example, evidence_code, evidence_path = EXAMPLES[version]
    key = f"ai-inference-isolation@{version}"
    portal, workbook, api = (waiting_assessment(ava, questionnaire=key) for _ in range(3))
    spec = portal.assessment.questionnaire.spec
    answers = vendor_answers(spec, example)
    for waiting in (portal, workbook, api):
        attach(waiting.assessment, evidence_code, evidence_path, ava)

    vendor = Client()
    with inline_scoring():
        by_portal_pages(vendor, portal.token, spec, answers)
        portal_submit(vendor, portal.token)
    with inline_scoring():
        by_workbook(vendor, workbook.token, spec, answers)
        portal_submit(vendor, workbook.token)
    member = Client()
    member.force_login(personas.ava)
    with inline_scoring():
        patched = member.patch(
            reverse("api:assessment-answers", args=[api.assessment.pk]),
            json.dumps({"answers": answers}),
            content_type="application/json",
        )
        assert patched.status_code == 200, patched.content
        submitted = member.post(reverse("api:assessment-submit", args=[api.assessment.pk]))
        assert submitted.status_code == 202, submitted.content

    stored = saved_answers(portal.assessment)
    assert saved_answers(workbook.assessment) == saved_answers(api.assessment) == stored
    portal.assessment.refresh_from_db()
    as_of = portal.assessment.latest_run.as_of
    answer_file = Path(settings.MEDIA_ROOT).parent / "answers.json"
    answer_file.write_text(
        json.dumps({"questionnaire": spec.slug, "version": version, "answers": stored}),
        encoding="utf-8",
    )
    out = io.StringIO()
    call_command(
        "score",
        str(answer_file),
        "--evidence",
        f"{evidence_code}={evidence_path}",
        "--as-of",
        as_of.isoformat(),
        stdout=out,
    )
    cli = json.loads(out.getvalue())

    # What the rules give for these answers and this evidence, from the engine itself.
    catalog_now = builtin_catalog()
    engine = catalog_now.compiled(catalog_now.default_ruleset_for(key).key)
    question = catalog_now.questionnaire(key).questions[evidence_code]
    expected = engine.score(
        validate_answers(catalog_now.questionnaire(key), stored).values,
        as_of=as_of,
        evidence={evidence_code: [parse_evidence(evidence_path, parser=question.parser)]},
    )
    want = (
        NEWEST,
        expected.risk_score,
        expected.risk_tier,
        sorted((f.rule_id, f.severity, f.points) for f in expected.findings),
    )
    assert result_of(portal.assessment) == want
    assert result_of(workbook.assessment) == want
    assert result_of(api.assessment) == want
    cli_findings = sorted((f["rule"], f["severity"], f["points"]) for f in cli["findings"])
    assert (cli["ruleset"], cli["risk_score"], cli["risk_tier"], cli_findings) == want
    if version == "3":
        assert "PROBE-CONTEXT-OVERCLAIMED" in {f.rule_id for f in expected.findings}

    # A member's "Score again" on the web app makes the same choice.
    with inline_scoring():
        member.post(reverse("assessments:rescore", args=[portal.assessment.pk]))
    assert portal.assessment.runs.count() == 2
    assert result_of(portal.assessment) == want
