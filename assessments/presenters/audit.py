"""The audit trail as a reader reads it: each recorded action as a sentence in their language,
at the organization's local time. The action codes themselves (`review.approved`) stay in the
database and the API, where they are a contract."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.utils import translation
from django.utils.translation import gettext_lazy as _

from core.formats import format_datetime, list_text

from ..models import AuditEvent, Channel
from .formats import review_decision_label, risk_decision_label

ACTION_LABELS = {
    "vendor.created": _("Vendor added"),
    "vendor.updated": _("Vendor changed"),
    "assessment.created": _("Assessment created"),
    "assessment.updated": _("Due date changed"),
    "answers.saved": _("Answers saved"),
    "answers.imported": _("Answers imported from a workbook"),
    "evidence.uploaded": _("Evidence file uploaded"),
    "evidence.removed": _("Evidence file removed"),
    "vendor_link.issued": _("Private link sent to the vendor"),
    "vendor_link.revoked": _("Private link revoked"),
    "assessment.submitted": _("Answers submitted"),
    "assessment.rescore_requested": _("Scoring requested again"),
    "scoring.succeeded": _("Scored"),
    "scoring.failed": _("Scoring failed"),
    "report.requested": _("Report requested"),
    "report.generated": _("Report generated"),
    "report.failed": _("Report failed"),
    "assessment.renewal_started": _("Reassessment started"),
    "reassessment_policy.updated": _("Reassessment policy changed"),
    "rescore_batch.requested": _("Rescore of the portfolio requested"),
    "probe.setup_saved": _("Isolation probe set up (endpoint and keys given)"),
    "probe.requested": _("Isolation probe requested"),
    "probe.finished": _("Isolation probe finished"),
    "probe.failed": _("Isolation probe failed"),
    "probe.keys_destroyed": _("Probe keys deleted"),
    "thread.opened": _("Question to the vendor opened"),
    "thread.message_posted": _("Message posted in a question thread"),
    "thread.resolved": _("Question thread resolved"),
    "thread.reopened": _("Question thread reopened"),
    "client.opened": _("Client workspace opened by a consultancy"),
    "client.engagement_ended": _("Consultancy's access ended"),
    "organization.copied_from": _("Copied from another organization"),
}


def audit_action_label(action: str, language: str) -> str:
    """ "Review: Approved with conditions", "Risk decision: Mitigation", "Answers saved"."""
    kind, _dot, what = action.partition(".")
    with translation.override(language):
        if kind == "review":
            return str(_("Review: %(decision)s")) % {
                "decision": review_decision_label(what, language)
            }
        if kind == "risk_decision":
            return str(_("Risk decision: %(kind)s")) % {"kind": risk_decision_label(what, language)}
        label = ACTION_LABELS.get(action)
        return str(label) if label is not None else action


@dataclass(frozen=True)
class AuditRow:
    at: str
    at_iso: str
    actor: str
    action: str  # the code, for machines and the curious
    label: str
    subject: str  # what it concerned, when the event names it (a rule, a file, a contact)


def _actor(event: AuditEvent, language: str) -> str:
    """Who acted: a member's email, the vendor's contact, or AVIA itself (the worker)."""
    label = event.actor_label
    prefix = "vendor link: "  # how `audit_record` labels a vendor link's actions
    with translation.override(language):
        if event.channel == Channel.VENDOR_LINK and label.startswith(prefix):
            return str(_("Vendor contact %(email)s")) % {"email": label.removeprefix(prefix)}
    return label


def audit_rows(events: Iterable[AuditEvent], language: str) -> list[AuditRow]:
    rows = []
    for event in events:
        detail = event.detail or {}
        subject = next(
            (
                str(detail[key])
                for key in ("rule", "file", "contact", "report", "question")
                if detail.get(key)
            ),
            # The questions whose answers (or comments) changed.
            list_text([str(code) for code in detail.get("codes") or []], language),
        )
        rows.append(
            AuditRow(
                at=format_datetime(event.created_at, language),
                at_iso=event.created_at.isoformat(timespec="seconds"),
                actor=_actor(event, language),
                action=event.action,
                label=audit_action_label(event.action, language),
                subject=subject,
            )
        )
    return rows
