"""Evidence files: an upload checked (type, size, who may attach it) and kept even when it
cannot be parsed, and its removal."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from accounts.models import User
from core.errors import ConflictError, ServiceError, StorageFullError, StorageUnavailableError
from core.storage import StorageUnavailable, TooLarge, delete_quietly
from core.text import readable_name, text_errors
from scoring.evidence import parse_evidence

from .. import lifecycle
from ..audit import audit_record
from ..models import (
    Assessment,
    AssessmentStatus,
    Channel,
    EvidenceFile,
    VendorLink,
)
from ..sniffing import sniff_content_type
from ..storage import evidence_storage, store_upload
from .answers import editable_codes

logger = logging.getLogger(__name__)


ACCEPTED_EVIDENCE_TYPES = {
    "text/plain",
    "application/gzip",
    "application/pdf",
    "image/png",
    "image/jpeg",
    "application/json",
}


PRODUCED_BY_AVIA_MESSAGE = gettext_noop(
    "AVIA attaches this evidence itself (the isolation probe's result); it cannot be uploaded "
    "or removed."
)


def is_avia_itself(*, actor: User | None, vendor_link: VendorLink | None, channel: str) -> bool:
    """Whether a write comes from AVIA itself (a finished probe attaching its result), not
    from a person: no member, no vendor link, the system channel (never a request's)."""
    return channel == Channel.SYSTEM and actor is None and vendor_link is None


@transaction.atomic
def evidence_add(
    *,
    assessment: Assessment,
    question_code: str,
    upload: UploadedFile,
    actor: User | None = None,
    vendor_link: VendorLink | None = None,
    channel: str,
) -> EvidenceFile:
    """Store an evidence file privately and parse it. A file the parser cannot read is kept
    and marked "not parsed"; only files of a refused type or over the size limit are refused.

    A question whose evidence AVIA produces (the isolation probe's result) takes a file from
    AVIA itself only — `channel=SYSTEM`, no person, no vendor link — and takes it in any status,
    since AVIA measured it; everyone else (portal, pages, API) is refused."""
    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
    spec = assessment.questionnaire.spec
    question = spec.questions.get(question_code or "")
    errors: dict[str, list[Any]] = {}
    if question is None or question.type != "file":
        readable_code = (
            question_code and len(question_code) <= 20 and not text_errors(question_code)
        )
        errors[question_code if readable_code else "question"] = [
            _("This question does not take evidence files.")
        ]
    elif question.produced_by_avia:
        if not is_avia_itself(actor=actor, vendor_link=vendor_link, channel=channel):
            raise ServiceError({question_code: [_(PRODUCED_BY_AVIA_MESSAGE)]})
    else:
        allowed = editable_codes(assessment, vendor_link)
        if allowed is not None and question_code not in allowed:
            errors[question_code] = [_("This question cannot be answered here.")]
    produced_by_avia = question is not None and question.produced_by_avia
    if assessment.status not in lifecycle.EDITABLE_STATUSES and not produced_by_avia:
        raise ConflictError(
            {
                "status": [
                    _("Evidence cannot be added while the assessment is %(status)s.")
                    % {"status": AssessmentStatus(assessment.status).label}
                ]
            }
        )
    limit = settings.EVIDENCE_MAX_BYTES
    if upload.size is not None and upload.size > limit:
        errors.setdefault(question_code or "file", []).append(
            _("The file is %(size)s MB; the limit is %(limit)s MB.")
            % {"size": round(upload.size / 1_048_576, 1), "limit": limit // 1_048_576}
        )
    if upload.size == 0:
        errors.setdefault(question_code or "file", []).append(_("The file is empty."))
    if errors:
        raise ServiceError(errors)
    head = upload.read(8192)
    upload.seek(0)
    content_type = sniff_content_type(head)
    if content_type not in ACCEPTED_EVIDENCE_TYPES:
        raise ServiceError(
            {
                question_code: [
                    _(
                        "Files of this type (%(type)s) are not accepted as evidence; upload a "
                        "text log, a gzip-compressed log, a PDF or an image."
                    )
                    % {"type": content_type}
                ]
            }
        )
    storage = evidence_storage()
    # A "../../x" or "C:\\x" name is reduced to its last part; files are stored under a
    # random name in any case, the original name is only shown.
    original_name = readable_name(upload.name or "", max_length=255, default="evidence")
    try:
        stored = store_upload(
            upload, storage=storage, directory=str(assessment.organization_id), max_bytes=limit
        )
    except TooLarge:
        raise ServiceError(
            {
                question_code: [
                    _("The file is larger than %(limit)s MB.") % {"limit": limit // 1_048_576}
                ]
            }
        ) from None
    except StorageUnavailable as exc:
        logger.error("evidence upload not stored, the object store failed: %s", exc)
        raise _store_unavailable(question_code) from exc
    except OSError as exc:
        logger.error("evidence upload not stored: %s", exc)
        raise StorageFullError(
            {
                question_code: [
                    _(
                        "The file could not be stored (the server's disk may be full); nothing was saved. Please try again later."
                    )
                ]
            }
        ) from exc
    # The file is written before its row: if parsing or the row fails, remove the file again.
    try:
        # Parsed from the upload itself (the bytes just stored, by their SHA-256), not read back
        # from the storage: from an object store that would be a second transfer of the file.
        upload.seek(0)
        result = parse_evidence(
            upload, parser=question.parser, source_name=original_name, max_bytes=limit
        )
        evidence = EvidenceFile.objects.create(
            assessment=assessment,
            question_code=question_code,
            original_name=original_name,
            storage_name=stored.name,
            size=stored.size,
            sha256=stored.sha256,
            content_type=content_type,
            parsed=result.parsed,
            parse_result=result.to_dict(),
            uploaded_by=actor,
            channel=channel,
        )
        audit_record(
            organization=assessment.organization,
            assessment=assessment,
            action="evidence.uploaded",
            actor=actor,
            vendor_link=vendor_link,
            channel=channel,
            detail={
                "question": question_code,
                "file": original_name,
                "parsed": result.parsed,
                "sha256": evidence.sha256,
            },
        )
    except BaseException:
        delete_quietly(storage, stored.name)
        raise
    return evidence


def _store_unavailable(question_code: str) -> StorageUnavailableError:
    return StorageUnavailableError(
        {
            question_code: [
                _(
                    "The file could not be stored (the file store cannot be reached); nothing "
                    "was saved. Please try again later."
                )
            ]
        }
    )


@transaction.atomic
def evidence_remove(
    *, evidence: EvidenceFile, actor: User | None, vendor_link: VendorLink | None, channel: str
) -> None:
    assessment = Assessment.objects.select_for_update().get(pk=evidence.assessment_id)
    question = assessment.questionnaire.spec.questions.get(evidence.question_code)
    if question is not None and question.produced_by_avia:
        raise ServiceError({evidence.question_code: [_(PRODUCED_BY_AVIA_MESSAGE)]})
    if assessment.status not in lifecycle.EDITABLE_STATUSES:
        raise ConflictError({"status": [_("Evidence cannot be removed now.")]})
    allowed = editable_codes(assessment, vendor_link)
    if allowed is not None and evidence.question_code not in allowed:
        raise ConflictError({evidence.question_code: [_("This question cannot be answered here.")]})
    name, storage_name = evidence.original_name, evidence.storage_name
    evidence.delete()
    transaction.on_commit(lambda: evidence_storage().delete(storage_name))
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="evidence.removed",
        actor=actor,
        vendor_link=vendor_link,
        channel=channel,
        detail={"file": name},
    )
