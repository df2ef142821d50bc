"""The incident assessment, built through the real services: the one recipe that the tests, the
benchmarks and `manage.py load_demo` share.

The incident vendor answers with one of the example answer files (`examples/`), uploads the
startup log of its prefill node as evidence for CTX-08, submits, and the run is scored in this
process (`scoring_run_execute`, what the Celery task calls), so no worker is needed. Nothing is
written by hand: every row comes from a service, with its audit trail.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from accounts.tenancy import OrgContext
from questionnaires.models import QuestionnaireVersion
from questionnaires.selectors import questionnaire_visible

from .models import Assessment, Channel, Vendor
from .selectors import critical_findings_for
from .services.answers import answers_save, assessment_create
from .services.evidence import evidence_add
from .services.scoring_runs import scoring_run_execute
from .services.submission import assessment_submit
from .services.vendor_links import vendor_link_issue
from .services.vendors import vendor_create

ROOT = Path(settings.BASE_DIR)
EXAMPLES_DIR = ROOT / "examples"
LOGS_DIR = ROOT / "tests" / "fixtures" / "logs"
LAUNCH = "incident-2026-launch"
REMEDIATED = "incident-2026-remediated"
LAUNCH_V2 = "incident-2026-launch-v2"
REMEDIATED_V2 = "incident-2026-remediated-v2"
# A vendor answering v3 that declares twice the context its endpoint serves, and the probe
# result that found it (`overclaimed`).
OVERCLAIMED_V3 = "overclaimed-v3"
OVERCLAIMED_PROBE = EXAMPLES_DIR / "probe-overclaimed.json"
LAUNCH_LOG = "sglang-prefill-glm53-launch.log"
REMEDIATED_LOG = "sglang-prefill-glm53-remediated.log"
VENDOR_NAME = "Cloud Inference Co"
VENDOR_CONTACT = "kv-team@cloud-inference.test"
EVIDENCE_QUESTION = "CTX-08"


def example(name: str = LAUNCH) -> dict[str, Any]:
    """An example answer file (`{"questionnaire", "version", "answers", "comments"}`)."""
    return json.loads((EXAMPLES_DIR / f"{name}.json").read_text(encoding="utf-8"))


def log_upload(name: str = LAUNCH_LOG) -> SimpleUploadedFile:
    return upload(LOGS_DIR / name)


def upload(path: Path) -> SimpleUploadedFile:
    return SimpleUploadedFile(path.name, path.read_bytes())


def logs(*names: str) -> tuple[tuple[str, Path], ...]:
    """Startup logs of tests/fixtures/logs, as evidence for the log question (CTX-08)."""
    return tuple((EVIDENCE_QUESTION, LOGS_DIR / name) for name in names)


def incident_vendor(
    *, member: OrgContext, name: str = VENDOR_NAME, channel: str = Channel.WEB, **fields: Any
) -> Vendor:
    return vendor_create(
        organization=member.organization,
        actor=member.user,
        channel=channel,
        name=name,
        **({"contact_email": VENDOR_CONTACT} | fields),
    )


def incident_assessment(
    *,
    member: OrgContext,
    vendor: Vendor | None = None,
    answers_from: str = LAUNCH,
    answers: Mapping[str, Any] | None = None,
    comments: Mapping[str, str] | None = None,
    evidence: Sequence[tuple[str, Path]] | None = None,
    through_link: bool = False,
    submit: bool = True,
    score: bool = True,
    due_date: dt.date | None = None,
    channel: str = Channel.WEB,
) -> Assessment:
    """The incident vendor's assessment in `member`'s organization.

    `member` creates it with the buyer's answers (section USE). The vendor's answers (from the
    example file `answers_from`, overridden by `answers`) and the `evidence` files (question
    code, path; default: the launch-day prefill log for CTX-08) are given by the member or,
    `through_link`, by the vendor through a private link; a file AVIA produces (a stored probe
    result for PRB-02) is attached by AVIA. Then it is submitted and scored,
    unless `submit`/`score` say to stop earlier.
    """
    document = example(answers_from)
    # Shipped, or the organization's own (or shared with it): the demo's hk-genai-provider.
    questionnaire = questionnaire_visible(
        organization=member.organization,
        slug=document["questionnaire"],
        version=document["version"],
    )
    if questionnaire is None:
        raise QuestionnaireVersion.DoesNotExist(
            f"{document['questionnaire']}@{document['version']}"
        )
    buyer_codes = {
        question.code
        for section in questionnaire.spec.sections
        if section.answered_by == "buyer"
        for question in section.questions
    }
    all_answers = {**document["answers"], **(answers or {})}
    all_comments = {**document.get("comments", {}), **(comments or {})}
    vendor = vendor or incident_vendor(member=member, channel=channel)
    assessment = assessment_create(
        organization=member.organization,
        vendor=vendor,
        questionnaire_key=questionnaire.key,
        actor=member.user,
        channel=channel,
        due_date=due_date,
        answers={code: value for code, value in all_answers.items() if code in buyer_codes},
    )
    if buyer_comments := {k: v for k, v in all_comments.items() if k in buyer_codes}:
        answers_save(
            assessment=assessment,
            answers={},
            comments=buyer_comments,
            actor=member.user,
            member=member,
            channel=channel,
        )
    vendor_answers = {k: v for k, v in all_answers.items() if k not in buyer_codes}
    vendor_comments = {k: v for k, v in all_comments.items() if k not in buyer_codes}
    if through_link:
        link, _token = vendor_link_issue(
            assessment=assessment, contact_email=VENDOR_CONTACT, member=member, channel=channel
        )
        by: dict[str, Any] = {"vendor_link": link, "channel": Channel.VENDOR_LINK}
    else:
        by = {"actor": member.user, "channel": channel}
    answers_save(assessment=assessment, answers=vendor_answers, comments=vendor_comments, **by)
    for code, path in logs(LAUNCH_LOG) if evidence is None else evidence:
        # A file AVIA produces (a probe result) is attached by AVIA itself, as a probe run does.
        question = questionnaire.spec.questions[code]
        attached_by = {"channel": Channel.SYSTEM} if question.produced_by_avia else by
        evidence_add(assessment=assessment, question_code=code, upload=upload(path), **attached_by)
    if submit:
        return submit_and_score(assessment, score=score, **by)
    return Assessment.objects.select_related("vendor", "questionnaire").get(pk=assessment.pk)


def submit_and_score(assessment: Assessment, *, score: bool = True, **by: Any) -> Assessment:
    """Submit (as `by`: `actor=` or `vendor_link=`, and `channel=`) and, with `score`, score
    the run in this process (what the Celery task calls), so no worker is needed."""
    run = assessment_submit(assessment=assessment, **by)
    if score:
        scoring_run_execute(run_id=run.pk)
    return Assessment.objects.select_related("vendor", "questionnaire").get(pk=assessment.pk)


def critical_rule_ids(assessment: Assessment) -> list[str]:
    """The rule ids an approval of `assessment` must acknowledge (its latest run's critical
    findings): what a reviewer ticks on the sign-off page."""
    # Read again: the caller's instance may predate the run that scored it.
    run = Assessment.objects.select_related("latest_run").get(pk=assessment.pk).latest_run
    return list(critical_findings_for(run=run)) if run is not None else []
