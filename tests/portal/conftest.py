"""A catalogue, Acme's personas, one assessment with the buyer's USE answers, and a vendor link."""

import datetime as dt
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from assessments.models import Channel, ReviewDecision
from assessments.services.answers import answers_save, assessment_create
from assessments.services.reviews import review_record
from assessments.services.submission import assessment_submit
from assessments.services.vendor_links import vendor_link_issue
from assessments.services.vendors import vendor_create
from tests.personas import member_of

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = json.loads((ROOT / "examples" / "incident-2026-launch.json").read_text(encoding="utf-8"))
LOGS = ROOT / "tests" / "fixtures" / "logs"
QUESTIONNAIRE = "ai-inference-isolation@1"


def use_answers() -> dict:
    return {code: value for code, value in EXAMPLE["answers"].items() if code.startswith("USE-")}


def vendor_answers() -> dict:
    return {
        code: value for code, value in EXAMPLE["answers"].items() if not code.startswith("USE-")
    }


@pytest.fixture
def submitted_then_reopened(assessment, link, personas, inline_scoring):
    """`submitted_then_reopened(reopen=[codes], message=…, answers=None)`: the vendor answers
    through its link (`answers`, the launch-day file by default) and submits; it is scored,
    and Rex requests changes to `reopen` with `message`."""

    def make(*, reopen: list[str], message: str, answers=None) -> None:
        answers_save(
            assessment=assessment,
            answers=vendor_answers() if answers is None else answers,
            vendor_link=link,
            channel=Channel.VENDOR_LINK,
        )
        with inline_scoring():
            assessment_submit(assessment=assessment, vendor_link=link, channel=Channel.VENDOR_LINK)
        review_record(
            assessment=assessment,
            member=member_of(personas.rex),
            decision=ReviewDecision.CHANGES_REQUESTED,
            channel=Channel.WEB,
            message=message,
            reopen_codes=reopen,
        )

    return make


def portal_url(token: str, name: str = "landing", *args) -> str:
    return reverse(f"portal:{name}", args=[token, *args])


def log_upload(name: str = "sglang-prefill-glm53-launch.log") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (LOGS / name).read_bytes(), content_type="text/plain")


@pytest.fixture(autouse=True)
def _isolated(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def make_assessment(organization, actor, vendor_name: str = "Cloud Inference Co"):
    vendor = vendor_create(
        organization=organization, actor=actor, channel=Channel.WEB, name=vendor_name
    )
    return assessment_create(
        organization=organization,
        vendor=vendor,
        questionnaire_key=QUESTIONNAIRE,
        actor=actor,
        channel=Channel.WEB,
        due_date=dt.date(2030, 9, 30),
        answers=use_answers(),
    )


@pytest.fixture
def assessment(catalog, personas):
    return make_assessment(personas.acme, personas.ava)


@pytest.fixture
def link_token(assessment, personas):
    return vendor_link_issue(
        assessment=assessment,
        contact_email="kv-team@cloud-inference.test",
        member=member_of(personas.ava),
        channel=Channel.WEB,
    )


@pytest.fixture
def link(link_token):
    return link_token[0]


@pytest.fixture
def token(link_token) -> str:
    return link_token[1]


@pytest.fixture
def inline_scoring(settings, django_capture_on_commit_callbacks):
    """`with inline_scoring(): ...` runs the scoring queued inside the block, in this process
    (tests never commit, and the services queue scoring on commit)."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    return lambda: django_capture_on_commit_callbacks(execute=True)
