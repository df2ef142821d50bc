"""A full disk during a report render (issue 28, break 4): the report fails with a clear reason,
and neither a truncated PDF nor an empty file is left under MEDIA_ROOT (they kept the disk full,
so that every upload answered 507 until the stray-file sweep ran an hour later). Once there is
room again, the next report and the next upload work.

The disk fills partway through the file: a write past ROOM_LEFT bytes writes what fits, then
fails with ENOSPC, as a full disk does. (Reproduced first with the kernel's file-size limit,
RLIMIT_FSIZE, which left a truncated PDF and three empty files; that limit also hits a test
database kept in a file, so the fault is injected at the file the storage writes.)
"""

from __future__ import annotations

import errno
import os
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

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


class _FillingFile:
    """A file on a disk with `room` bytes left."""

    def __init__(self, handle, room: int) -> None:
        self._handle, self._room = handle, room

    def write(self, data: bytes) -> int:
        fits = max(0, self._room)
        self._handle.write(data[:fits])
        self._room -= len(data)
        if self._room < 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return len(data)

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self._handle.close()


@contextmanager
def disk_full_after(room: int):
    """Files opened for writing under MEDIA_ROOT fill up after `room` bytes."""
    real_open = Path.open

    def open_(self, mode="r", *args, **kwargs):
        handle = real_open(self, mode, *args, **kwargs)
        if "media" in self.parts and ("w" in mode or "x" in mode):
            return _FillingFile(handle, room)
        return handle

    with mock.patch.object(Path, "open", open_):
        yield


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
    assert "No space left on device" in report.error, report.error
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
