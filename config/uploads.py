"""A bound on what an upload may cost before any view sees it.

Each upload is checked against its own limit (`EVIDENCE_MAX_BYTES`, `WORKBOOK_MAX_BYTES`) by the
service that keeps it, with a message naming the question: but Django writes the whole body to a
temporary file first, so a 20 GB body would fill the disk before that message. A multipart body
larger than `REQUEST_MAX_BYTES` (several times the largest upload, so that a file somewhat over
its limit still gets the named message) is refused before a byte of it is read: Django's
`RequestDataTooBig`, which the API answers with 413 (`core.api.base`) and the pages with the 413
page (`config.errors`).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadhandler import FileUploadHandler
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _


def too_large_message() -> str:
    return _("The request is larger than %(limit)s; nothing was saved.") % {
        "limit": filesizeformat(settings.REQUEST_MAX_BYTES)
    }


class BoundedUploadHandler(FileUploadHandler):
    """First of the upload handlers: refuses an oversized body, passes everything else on."""

    def handle_raw_input(
        self,
        input_data: Any,
        META: dict[str, Any],  # noqa: N803 (Django's name)
        content_length: int,
        boundary: bytes,
        encoding: str | None = None,
    ) -> None:
        if content_length > settings.REQUEST_MAX_BYTES:
            raise RequestDataTooBig(too_large_message())

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None
