"""Vendors, assessments and everything attached to one: answers and their history, evidence
files, vendor links, scoring runs with their findings, reviews and the audit trail.

Every row of tenant data carries its organization (directly or through its assessment); reads
go through `assessments.selectors`, which always take the organization.

One module per idea, each importing only `assessment` (the assessment and the vocabulary the
others share): `answers` (what the vendor gives, and its links), `results` (runs, findings,
reviews, risk decisions), `threads` (clarifications) and `audit_trail`. Everything is imported
here, because Django, the migrations and the rest of the code name every model
`assessments.models.X`.
"""

from assessments.models.answers import (
    Answer,
    AnswerDraft,
    AnswerRevision,
    EvidenceFile,
    TokenFailureCount,
    VendorLink,
)
from assessments.models.assessment import (
    CLOSED_STATUSES,
    DEFAULT_REASSESSMENT_DAYS,
    OPEN_STATUSES,
    RENEWABLE_STATUSES,
    Assessment,
    AssessmentStatus,
    Channel,
    ConfigurationChange,
    ReassessmentPolicy,
    RenewalReason,
    ReviewDecision,
    RiskTier,
    Vendor,
    overdue,
)
from assessments.models.audit_trail import (
    AppendOnlyError,
    AuditChainHead,
    AuditEvent,
    AuditEventQuerySet,
)
from assessments.models.results import (
    Finding,
    Review,
    RiskDecision,
    RiskDecisionKind,
    RunStatus,
    ScoringRun,
)
from assessments.models.threads import Thread, ThreadMessage, ThreadStatus, ThreadTurn

__all__ = [
    "CLOSED_STATUSES",
    "DEFAULT_REASSESSMENT_DAYS",
    "OPEN_STATUSES",
    "RENEWABLE_STATUSES",
    "Answer",
    "AnswerDraft",
    "AnswerRevision",
    "AppendOnlyError",
    "Assessment",
    "AssessmentStatus",
    "AuditChainHead",
    "AuditEvent",
    "AuditEventQuerySet",
    "Channel",
    "ConfigurationChange",
    "EvidenceFile",
    "Finding",
    "ReassessmentPolicy",
    "RenewalReason",
    "Review",
    "ReviewDecision",
    "RiskDecision",
    "RiskDecisionKind",
    "RiskTier",
    "RunStatus",
    "ScoringRun",
    "Thread",
    "ThreadMessage",
    "ThreadStatus",
    "ThreadTurn",
    "TokenFailureCount",
    "Vendor",
    "VendorLink",
    "overdue",
]
