"""Evidence downloads: a vendor's file, to members of the assessment's organization only."""

from __future__ import annotations

import logging

from django.http import FileResponse, HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from accounts.decorators import member_page
from accounts.tenancy import OrgContext
from core.storage import REMOTE_ERRORS

from .. import selectors
from ..storage import evidence_storage

logger = logging.getLogger(__name__)


@member_page
def evidence_download(request: HttpRequest, org: OrgContext, evidence_id: int) -> HttpResponse:
    evidence = selectors.evidence_get(organization=org.organization, evidence_id=evidence_id)
    # Proxied, after the permission check above: from an object store the file is fetched
    # (spooled to a temporary file past 8 MB) and streamed from here, never a public URL.
    try:
        handle = evidence_storage().open(evidence.storage_name, "rb")
        handle.file  # noqa: B018 - fetched now, so that a store that is away is answered here
    except REMOTE_ERRORS as exc:
        logger.error("evidence %s not read, the object store failed: %s", evidence.pk, exc)
        return HttpResponse(
            _("The file cannot be read now (the file store cannot be reached)."),
            status=503,
            content_type="text/plain; charset=utf-8",
        )
    # Always an attachment of an inert type: vendor files are never rendered by the browser.
    response = FileResponse(
        handle,
        as_attachment=True,
        filename=evidence.original_name,
        content_type="application/octet-stream",
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response
