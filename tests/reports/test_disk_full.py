"""A full disk during a report render (issue 28, break 4): the report fails with a clear reason,
and neither a truncated PDF nor an empty file is left under MEDIA_ROOT (they kept the disk full,
so that every upload answered 507 until the stray-file sweep ran an hour later). Once there is
room again, the next report and the next upload work.

The disk fills for real: the kernel's file-size limit (RLIMIT_FSIZE) refuses a write partway,
as a full disk does (EFBIG rather than ENOSPC: the same failure for the code that writes).
"""

from __future__ import annotations

import resource
import signal
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from assessments.models import Channel
from assessments.services.answers import assessment_create
from assessments.services.evidence import evidence_add
from reports.models import Report
from reports.services import report_request
from tests.personas import member_of

from .conftest import QUESTIONNAIRE

pytestmark = pytest.mark.django_db
ROOM_LEFT = 20_000  # bytes: less than any rendered report


@contextmanager
def disk_full_after(size: int):
    """Writes to any file beyond `size` bytes fail (the process's file-size limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an error, not a killed process
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def files_under(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*") if path.is_file()) if root.exists() else []


@pytest.fixture
def eager_retries(settings):
    settings.CELERY_TASK_EAGER_PROPAGATES = False  # retries run in place, as in a worker


def request(assessment, personas):
    return report_request(
        assessment=assessment, language="en", member=member_of(personas.ava), channel=Channel.WEB
    )


def test_a_render_on_a_full_disk_fails_clearly_and_leaves_no_file(
    scored, personas, inline_tasks, eager_retries, settings
):
    with disk_full_after(ROOM_LEFT), inline_tasks():
        report = request(scored, personas)

    report.refresh_from_db()
    assert report.status == "failed"
    assert "File too large" in report.error or "No space left" in report.error, report.error
    assert files_under(settings.MEDIA_ROOT / "reports") == []

    # Room again: the next report and an upload work.
    with inline_tasks():
        again = request(scored, personas)
    again.refresh_from_db()
    assert again.status == "ready", again.error
    assert files_under(settings.MEDIA_ROOT / "reports") == [
        settings.MEDIA_ROOT / "reports" / again.storage_name
    ]
    evidence_before = len(files_under(settings.MEDIA_ROOT / "evidence"))
    draft = assessment_create(
        organization=scored.organization,
        vendor=scored.vendor,
        questionnaire_key=QUESTIONNAIRE,
        actor=personas.ava,
        channel=Channel.WEB,
    )
    evidence_add(
        assessment=draft,
        question_code="CTX-08",
        upload=SimpleUploadedFile("startup.log", b"max_total_num_tokens=681280\n"),
        actor=personas.ava,
        channel=Channel.WEB,
    )
    assert len(files_under(settings.MEDIA_ROOT / "evidence")) == evidence_before + 1
    assert Report.objects.filter(status="ready").count() == 1
