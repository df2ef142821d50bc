"""Reviews and risk decisions: four eyes on the reviewer, the decision moving the lifecycle on,
and a decision recorded per finding."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.db import lock_row
from core.errors import ConflictError, ServiceError
from core.text import text_fields_errors
from webhooks.events import WebhookEvent
from webhooks.services import webhooks_emit

from ..audit import audit_record
from ..models import (
    Answer,
    Assessment,
    Review,
    ReviewDecision,
    RiskDecision,
)
from ..selectors import critical_findings_for
from .answers import vendor_question_codes
from .guards import require_member, transition
from .notices import notify_signed_off
from .reassessment import reassess_by_for
from .threads import thread_message_errors, thread_post
from .vendor_mail import changes_requested_notify
from .webhook_events import assessment_event

APPROVALS = (ReviewDecision.APPROVED, ReviewDecision.APPROVED_WITH_CONDITIONS)


def reviewer_conflict(*, assessment: Assessment, reviewer: User) -> bool:
    """Four eyes: a reviewer may not decide on an assessment they created, submitted or edited
    (uploading or removing evidence is editing: a startup log decides findings)."""
    if assessment.created_by_id == reviewer.pk:
        return True
    if assessment.answer_revisions.filter(changed_by=reviewer).exists():
        return True
    return assessment.audit_events.filter(
        actor=reviewer,
        action__in=("assessment.submitted", "evidence.uploaded", "evidence.removed"),
    ).exists()


@transaction.atomic
def review_record(
    *,
    assessment: Assessment,
    member: OrgContext,
    decision: str,
    channel: str,
    conditions: str = "",
    message: str = "",
    reopen_codes: list[str] | None = None,
    run_id: int | None = None,
    thread_notes: dict[str, str] | None = None,
    acknowledged_findings: list[str] | None = None,
) -> Review:
    """Sign off (or send back) a scored assessment: a reviewer who took no part decides.

    `run_id` is the scoring run the reviewer read (the review page carries it): when the
    assessment was scored again since (a rescore batch keeps it `scored` with a new latest run),
    the decision is refused (409) rather than recorded against findings nobody read.

    `thread_notes`: with a request for changes, a message per re-opened question (by code),
    posted in that question's clarification thread (opened, or continued).

    Approving despite critical findings (a live cross-tenant leak) needs each of them named in
    `acknowledged_findings`: an approval is never one click away from a finding nobody saw."""
    require_member(member, assessment, Capability.REVIEW)
    reviewer = member.user
    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
    if run_id is not None and assessment.latest_run_id != run_id:
        raise ConflictError(
            {
                "run": [
                    _(
                        "The assessment was scored again (run %(latest)s) after you read run "
                        "%(read)s: read its findings, then decide."
                    )
                    % {"latest": assessment.latest_run_id, "read": run_id}
                ]
            }
        )
    errors: dict[str, list[Any]] = text_fields_errors(
        {"conditions": (conditions, 4000), "message": (message, 4000)}
    )
    if decision not in ReviewDecision.values:
        errors["decision"] = [
            _("Choose approve, approve with conditions, reject or request changes.")
        ]
    if decision == ReviewDecision.APPROVED_WITH_CONDITIONS and not conditions.strip():
        errors.setdefault("conditions", []).append(_("State the conditions of the approval."))
    spec = assessment.questionnaire.spec
    # Only a request for changes re-opens questions: codes sent with another decision (boxes
    # left ticked on the review page) re-open none.
    reopen = (
        list(dict.fromkeys(reopen_codes or []))
        if decision == ReviewDecision.CHANGES_REQUESTED
        else []
    )
    if decision == ReviewDecision.CHANGES_REQUESTED:
        vendor_codes = vendor_question_codes(spec)
        unknown = [code for code in reopen if code not in vendor_codes]
        if not reopen:
            errors["reopen_codes"] = [_("Choose the questions the vendor should answer again.")]
        elif unknown:
            errors["reopen_codes"] = [
                _("Not vendor questions: %(codes)s.") % {"codes": ", ".join(unknown)}
            ]
        if not message.strip():
            errors.setdefault("message", []).append(_("Tell the vendor what to change."))
    notes = {code: note for code, note in (thread_notes or {}).items() if note.strip()}
    if decision != ReviewDecision.CHANGES_REQUESTED:
        notes = {}
    for code, note in notes.items():
        note_errors = thread_message_errors(
            assessment=assessment, question_code=code, body=note, field=f"thread_{code}"
        )
        note_errors.pop("question_code", None)  # a vendor question: re-opened, checked below
        if code not in reopen:
            note_errors.setdefault(f"thread_{code}", []).append(
                _("%(code)s is not re-opened: tick it, or leave its message empty.")
                % {"code": code}
            )
        errors.update(note_errors)
    if reviewer_conflict(assessment=assessment, reviewer=reviewer):
        errors["reviewer"] = [
            _(
                "You created, edited or submitted this assessment: another reviewer must decide (four-eyes rule)."
            )
        ]
    if assessment.latest_run is None:
        errors.setdefault("status", []).append(_("The assessment has not been scored yet."))
    acknowledged = sorted(set(acknowledged_findings or []))
    if decision in APPROVALS and assessment.latest_run is not None:
        critical = critical_findings_for(run=assessment.latest_run)
        unconfirmed = [rule_id for rule_id in critical if rule_id not in acknowledged]
        if unconfirmed:
            errors["acknowledged_findings"] = [
                _(
                    "Critical findings stand against this approval: %(findings)s. Confirm "
                    "each one to approve despite it."
                )
                % {
                    "findings": "; ".join(
                        f"{rule_id} ({critical[rule_id]})" for rule_id in unconfirmed
                    )
                }
            ]
        acknowledged = [rule_id for rule_id in acknowledged if rule_id in critical]
    else:
        acknowledged = []
    if errors:
        raise ServiceError(errors)
    event = {
        ReviewDecision.APPROVED: "approve",
        ReviewDecision.APPROVED_WITH_CONDITIONS: "approve",
        ReviewDecision.REJECTED: "reject",
        ReviewDecision.CHANGES_REQUESTED: "request_changes",
    }[decision]
    transition(assessment, event)
    assessment.save(update_fields=["status", "updated_at"])
    review = Review.objects.create(
        assessment=assessment,
        run=assessment.latest_run,
        reviewer=reviewer,
        decision=decision,
        conditions=conditions.strip(),
        message=message.strip(),
        reopened_codes=reopen,
    )
    if decision == ReviewDecision.CHANGES_REQUESTED:
        changes_requested_notify(review=review)
    # The next assessment is due from the approval; none after a rejection or while changing.
    assessment.reassess_by = reassess_by_for(assessment)
    assessment.save(update_fields=["reassess_by", "updated_at"])
    if reopen:
        for code in reopen:
            Answer.objects.update_or_create(
                assessment=assessment, question_code=code, defaults={"reopened": True}
            )
    for code, note in notes.items():
        thread_post(
            assessment=assessment, actor=reviewer, question_code=code, body=note, channel=channel
        )
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action=f"review.{decision}",
        actor=reviewer,
        channel=channel,
        detail={"conditions": review.conditions, "reopened": reopen}
        | ({"acknowledged_findings": acknowledged} if acknowledged else {}),
    )
    notify_signed_off(review=review)
    if decision != ReviewDecision.CHANGES_REQUESTED:  # a request for changes decides nothing
        decided = {"decision": decision, "conditions": review.conditions or None}
        webhooks_emit(
            [
                assessment_event(
                    assessment,
                    WebhookEvent.ASSESSMENT_SIGNED_OFF,
                    f"signed_off:review:{review.pk}",
                    review=decided,
                )
            ]
        )
    return review


@transaction.atomic
def risk_decision_record(
    *,
    assessment: Assessment,
    rule_id: str,
    kind: str,
    justification: str,
    owner: str,
    expires_on: dt.date | None,
    member: OrgContext,
    channel: str,
) -> RiskDecision:
    require_member(member, assessment, Capability.EDIT_ASSESSMENT)
    actor = member.user
    errors: dict[str, list[Any]] = text_fields_errors(
        {"justification": (justification, 4000), "owner": (owner, 200)}
    )
    run = assessment.latest_run
    if run is None or not run.findings.filter(rule_id=rule_id).exists():
        errors["rule_id"] = [_("This rule has no finding in the latest scoring run.")]
    if not justification.strip():
        errors.setdefault("justification", []).append(_("Give the justification."))
    if not owner.strip():
        errors.setdefault("owner", []).append(_("Name the owner of this decision."))
    if expires_on is None:
        errors["expires_on"] = [_("Give an expiry date.")]
    elif expires_on <= assessment.organization.local_date():
        errors["expires_on"] = [_("The expiry date must be in the future.")]
    if errors:
        raise ServiceError(errors)
    # The same decision posted again (a double click) is the one already recorded: one row,
    # one audit event, one expiry notice. Posts of one assessment queue on its row.
    lock_row(Assessment, assessment.pk)
    fields = {
        "assessment": assessment,
        "rule_id": rule_id,
        "kind": kind,
        "justification": justification.strip(),
        "owner": owner.strip(),
        "expires_on": expires_on,
    }
    same = RiskDecision.objects.filter(**fields).first()
    if same is not None:
        return same
    decision = RiskDecision.objects.create(**fields, created_by=actor)
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action=f"risk_decision.{kind}",
        actor=actor,
        channel=channel,
        detail={
            "rule": rule_id,
            "owner": decision.owner,
            "expires_on": expires_on.isoformat() if expires_on else None,
        },
    )
    return decision
