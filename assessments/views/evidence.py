"""Evidence downloads: a vendor's file, to members of the assessment's organization only."""

from __future__ import annotations

from django.http import FileResponse, HttpRequest

from accounts.decorators import member_page
from accounts.tenancy import OrgContext

from .. import selectors
from ..storage import evidence_storage


@member_page
def evidence_download(request: HttpRequest, org: OrgContext, evidence_id: int) -> FileResponse:
    evidence = selectors.evidence_get(organization=org.organization, evidence_id=evidence_id)
    handle = evidence_storage().open(evidence.storage_name, "rb")
    # Always an attachment of an inert type: vendor files are never rendered by the browser.
    response = FileResponse(
        handle,
        as_attachment=True,
        filename=evidence.original_name,
        content_type="application/octet-stream",
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response
