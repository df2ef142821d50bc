# TEMPORARY shim (not committed): answer-path's factory lands with the same interface.
from django.core.files.uploadedfile import SimpleUploadedFile
from django.conf import settings
from pathlib import Path
import json
from . import services
from .models import Assessment, Channel
from .scoring_runs import scoring_run_execute

LAUNCH, REMEDIATED = "incident-2026-launch", "incident-2026-remediated"
LAUNCH_LOG, REMEDIATED_LOG = (
    "sglang-prefill-glm53-launch.log",
    "sglang-prefill-glm53-remediated.log",
)
ROOT = Path(settings.BASE_DIR)


def incident_assessment(
    *,
    member,
    answers_from=LAUNCH,
    logs=(LAUNCH_LOG,),
    through_link=False,
    submit=True,
    score=True,
    vendor=None,
):
    doc = json.loads((ROOT / "examples" / f"{answers_from}.json").read_text())
    vendor = vendor or services.vendor_create(
        organization=member.organization,
        actor=member.user,
        channel=Channel.WEB,
        name="Cloud Inference Co",
    )
    a = services.assessment_create(
        organization=member.organization,
        vendor=vendor,
        questionnaire_key=f"{doc['questionnaire']}@{doc['version']}",
        actor=member.user,
        channel=Channel.WEB,
    )
    services.answers_save(
        assessment=a,
        answers=doc["answers"],
        comments=doc.get("comments", {}),
        actor=member.user,
        channel=Channel.WEB,
    )
    if through_link:
        link, _t = services.vendor_link_issue(
            assessment=a, contact_email="kv@x.test", actor=member.user, channel=Channel.WEB
        )
        by = {"vendor_link": link, "channel": Channel.VENDOR_LINK}
    else:
        by = {"actor": member.user, "channel": Channel.WEB}
    for name in logs:
        services.evidence_add(
            assessment=a,
            question_code="CTX-08",
            upload=SimpleUploadedFile(
                name, (ROOT / "tests/fixtures/logs" / name).read_bytes(), content_type="text/plain"
            ),
            **by,
        )
    if submit:
        run = services.assessment_submit(assessment=a, **by)
        if score:
            scoring_run_execute(run_id=run.pk)
    return Assessment.objects.select_related("vendor", "questionnaire").get(pk=a.pk)


def incident_vendor(*, member, name="Cloud Inference Co", channel=Channel.WEB, **fields):
    return services.vendor_create(
        organization=member.organization, actor=member.user, channel=channel, name=name, **fields
    )
