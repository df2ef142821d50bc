"""The vendor's probe set-up: the endpoint, the two test tenants' keys (encrypted at rest) and
the signed authorisation (the window and the spend ceiling) under which runs may be requested.
Entered by the vendor through its link, or by a member on its behalf."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from assessments.audit import audit_record
from assessments.models import Assessment, VendorLink
from assessments.services.answers import probe_consented
from core.errors import ConflictError, ServiceError
from questionnaires.validation import visibility_for

from ..endpoint import ApiKey, ProbeInputError, endpoint_validate
from ..keystore import key_encrypt
from ..models import ProbeRun, ProbeSetup
from ..runner import SAME_KEYS_MESSAGE, target_problems
from .guards import (
    DECIDED_STATUSES,
    RUN_PENDING_STATUSES,
    probe_outbound_policy,
    problems_translated,
)

MAX_KEY_LENGTH = 1000
MAX_CEILING_TOKENS = 10_000_000_000


def _in_utc_range(moment: dt.datetime) -> bool:
    """Whether a time can be stored: 9999-12-31 23:59 west of UTC (or 0001-01-01 east of it)
    is out of the range of a datetime once in UTC."""
    try:
        moment.astimezone(dt.UTC)
    except (OverflowError, ValueError):
        return False
    return True


@transaction.atomic
def probe_setup_save(
    *,
    assessment: Assessment,
    base_url: str,
    model_name: str,
    declared_context: int,
    key_a: str,
    key_b: str,
    signer_name: str,
    spend_ceiling_tokens: int,
    window_starts_at: dt.datetime,
    window_ends_at: dt.datetime,
    channel: str,
    actor: User | None = None,
    vendor_link: VendorLink | None = None,
) -> ProbeSetup:
    """Save (or replace) the probe set-up of `assessment`: the endpoint, the two test-tenant
    keys (encrypted) and the signed authorisation. Entered by the vendor through its link, or
    by a member on the vendor's behalf. Every problem is reported at once, by field."""
    if vendor_link is not None and vendor_link.assessment_id != assessment.pk:
        raise ServiceError({"vendor_link": [_("This link belongs to another assessment.")]})
    if assessment.status in DECIDED_STATUSES:
        raise ConflictError({"probe": [_("The assessment is decided; it is not probed any more.")]})
    if vendor_link is not None and not probe_consented(assessment):
        # The vendor's own consent (PRB-01 = yes) comes before its endpoint and keys.
        raise ConflictError(
            {
                code: [_("Answer “yes” here first: the probe needs your consent.")]
                for code in consent_codes(assessment)
            }
            or {"probe": [_("This questionnaire has no isolation probe.")]}
        )
    if ProbeRun.objects.filter(assessment=assessment, status__in=RUN_PENDING_STATUSES).exists():
        raise ConflictError(
            {"probe": [_("A probe of this assessment is running; wait until it ends.")]}
        )
    base_url, keys = probe_setup_check(
        base_url=base_url,
        model_name=model_name,
        declared_context=declared_context,
        key_a=key_a,
        key_b=key_b,
        signer_name=signer_name,
        spend_ceiling_tokens=spend_ceiling_tokens,
        window_starts_at=window_starts_at,
        window_ends_at=window_ends_at,
    )

    now = timezone.now()
    setup, created = ProbeSetup.objects.update_or_create(
        assessment=assessment,
        defaults={
            "organization_id": assessment.organization_id,
            "base_url": base_url,
            "model_name": model_name.strip(),
            "declared_context": declared_context,
            "signer_name": signer_name.strip(),
            "spend_ceiling_tokens": spend_ceiling_tokens,
            "window_starts_at": window_starts_at,
            "window_ends_at": window_ends_at,
            "entered_by": actor,
            "entered_by_link": vendor_link,
            "entered_via": channel,
            "entered_at": now,
            "key_a_ciphertext": key_encrypt(keys["key_a"]),
            "key_b_ciphertext": key_encrypt(keys["key_b"]),
            "keys_destroyed_at": None,
        },
    )
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="probe.setup_saved",
        actor=actor,
        vendor_link=vendor_link,
        channel=channel,
        # What was authorised, never the keys.
        detail={
            "base_url": base_url,
            "model": setup.model_name,
            "declared_context": declared_context,
            "signer_name": setup.signer_name,
            "spend_ceiling_tokens": spend_ceiling_tokens,
            "window_starts_at": window_starts_at.isoformat(),
            "window_ends_at": window_ends_at.isoformat(),
            "replaced": not created,
        },
    )
    return setup


def probe_setup_check(
    *,
    base_url: str,
    model_name: str,
    declared_context: int | None,
    key_a: str,
    key_b: str,
    signer_name: str,
    spend_ceiling_tokens: int | None,
    window_starts_at: dt.datetime | None,
    window_ends_at: dt.datetime | None,
) -> tuple[str, dict[str, ApiKey]]:
    """Every problem of a probe set-up at once, by field (ServiceError); else the base URL as
    validated and the two keys. Saves nothing: a form reports these beside its own errors."""
    errors: dict[str, list[str]] = {}
    try:
        base_url = endpoint_validate(
            base_url, allow_http=settings.PROBE_ALLOW_HTTP, policy=probe_outbound_policy()
        )
    except ProbeInputError as exc:
        errors.update(problems_translated(exc.errors))
    target = target_problems(model=model_name, declared_context=declared_context)
    if "model" in target:
        errors["model_name"] = target.pop("model")
    errors.update(problems_translated(target))
    keys: dict[str, ApiKey] = {}
    for field, value in (("key_a", key_a), ("key_b", key_b)):
        text = (value or "").strip()
        if not text:
            errors[field] = [_("Enter the API key of this test tenant.")]
        elif len(text) > MAX_KEY_LENGTH or any(ch.isspace() for ch in text):
            # The message never repeats the key.
            errors[field] = [_("This does not look like an API key (spaces, or too long).")]
        else:
            keys[field] = ApiKey(text)
    if len(keys) == 2 and keys["key_a"].same_as(keys["key_b"]):
        errors["key_b"] = [_(SAME_KEYS_MESSAGE)]
    if not (signer_name or "").strip():
        errors["signer_name"] = [_("Name the person who signs the authorisation.")]
    elif len(signer_name) > 200:
        errors["signer_name"] = [_("The name is longer than 200 characters.")]
    if not isinstance(spend_ceiling_tokens, int) or not (
        0 < spend_ceiling_tokens <= MAX_CEILING_TOKENS
    ):
        errors["spend_ceiling_tokens"] = [
            _("The spend ceiling must be a whole number of tokens between 1 and 10,000,000,000.")
        ]
    out_of_range = [
        name
        for name, moment in (
            ("window_starts_at", window_starts_at),
            ("window_ends_at", window_ends_at),
        )
        if moment is not None and not _in_utc_range(moment)
    ]
    if out_of_range:
        for name in out_of_range:
            errors[name] = [_("Enter a date between the years 2 and 9998.")]
    elif window_starts_at is None or window_ends_at is None:
        errors["window_ends_at"] = [_("Give the start and the end of the authorised window.")]
    elif window_ends_at <= window_starts_at:
        errors["window_ends_at"] = [_("The window must end after it starts.")]
    elif window_ends_at <= timezone.now():
        errors["window_ends_at"] = [_("The authorised window has already ended.")]
    if errors:
        raise ServiceError(errors)
    return base_url, keys


def consent_codes(assessment: Assessment) -> list[str]:
    """The questions whose answer decides whether the probe is asked for (PRB-01)."""
    spec = assessment.questionnaire.spec
    question = spec.probe_question
    if question is None or not question.show_if:
        return []
    by_identifier = {q.identifier: q.code for q in spec.iter_questions()}
    reads = visibility_for(spec).reads(question.code)
    return [by_identifier[name] for name in reads if name in by_identifier]


def tokens_spent_under(setup: ProbeSetup) -> int:
    """Prompt tokens the runs under this authorisation have spent (counted against its
    ceiling). Saving the set-up again is a new authorisation."""
    spent = ProbeRun.objects.filter(setup=setup, created_at__gte=setup.entered_at).aggregate(
        total=Sum("tokens_spent")
    )["total"]
    return spent or 0
