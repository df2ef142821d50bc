"""Submission and scoring requests: answers submitted, an assessment rescored, the scoring run
queued on commit with the default ruleset (`scoring.registry.default_ruleset`: the newest that
applies to the answers' questionnaire version)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Organization, User
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from core.errors import ServiceError
from core.queueing import publish_on_commit
from questionnaires.validation import missing_required
from scoring.models import Ruleset
from scoring.selectors import default_ruleset_for
from webhooks.events import WebhookEvent
from webhooks.services import webhooks_emit

from ..audit import audit_record
from ..models import (
    Assessment,
    AssessmentStatus,
    ScoringRun,
    VendorLink,
)
from .answers import answer_values
from .guards import require_member, transition
from .notices import notify_submitted
from .webhook_events import assessment_event

# The scoring task, queued by its name: the task (`assessments.tasks`) imports the services that
# it runs, never the reverse. (The name is the one it had in the scoring app, so messages queued
# before an upgrade are still understood.)
SCORE_RUN_TASK = "scoring.tasks.score_assessment_run"


@transaction.atomic
def assessment_submit(
    *,
    assessment: Assessment,
    channel: str,
    actor: User | None = None,
    vendor_link: VendorLink | None = None,
) -> ScoringRun:
    """Submit the answers and queue a scoring run. A vendor link checks the vendor's sections;
    a member checks every section."""
    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
    spec = assessment.questionnaire.spec
    sections = None if vendor_link is None else {s.code for s in spec.sections if s.vendor_facing}
    evidence_codes = set(assessment.evidence.values_list("question_code", flat=True))
    missing = missing_required(
        spec, answer_values(assessment), sections=sections, evidence_codes=evidence_codes
    )
    if missing:
        raise ServiceError({code: [_("This question is required.")] for code in missing})
    answering_changes = assessment.status == AssessmentStatus.CHANGES_REQUESTED
    transition(assessment, "submit")
    assessment.submitted_at = timezone.now()
    assessment.save(update_fields=["status", "submitted_at", "updated_at"])
    assessment.answers.filter(reopened=True).update(reopened=False)
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="assessment.submitted",
        actor=actor,
        vendor_link=vendor_link,
        channel=channel,
    )
    run = _queue_run(assessment, requested_by=actor)
    notify_submitted(
        assessment=assessment, run=run, submitter=actor, answering_changes=answering_changes
    )
    webhooks_emit(
        [assessment_event(assessment, WebhookEvent.ASSESSMENT_SUBMITTED, f"submitted:run:{run.pk}")]
    )
    return run


@transaction.atomic
def assessment_rescore(*, assessment: Assessment, member: OrgContext, channel: str) -> ScoringRun:
    """Score again with the default ruleset; earlier runs stay as they were."""
    require_member(member, assessment, Capability.EDIT_ASSESSMENT)
    actor = member.user
    assessment = Assessment.objects.select_for_update().get(pk=assessment.pk)
    transition(assessment, "rescore")
    assessment.save(update_fields=["status", "updated_at"])
    audit_record(
        organization=assessment.organization,
        assessment=assessment,
        action="assessment.rescore_requested",
        actor=actor,
        channel=channel,
    )
    return _queue_run(assessment, requested_by=actor)


def _queue_run(assessment: Assessment, *, requested_by: User | None) -> ScoringRun:
    ruleset = default_ruleset_for(questionnaire=assessment.questionnaire)
    if ruleset is None:
        raise ServiceError({"ruleset": [_("No ruleset is loaded for this questionnaire.")]})
    run = scoring_run_create(assessment=assessment, ruleset=ruleset, requested_by=requested_by)
    publish_on_commit(SCORE_RUN_TASK, run.pk)
    return run


def scoring_run_create(
    *, assessment: Assessment, ruleset: Ruleset, requested_by: User | None
) -> ScoringRun:
    """A queued run of `ruleset` over the assessment's answers, for the caller to carry out
    (`scoring_run_execute`): the scoring task."""
    return scoring_runs_create(
        assessments=[assessment],
        organization=assessment.organization,
        ruleset=ruleset,
        requested_by=requested_by,
    )[0]


def scoring_runs_create(
    *,
    assessments: Sequence[Assessment],
    organization: Organization,
    ruleset: Ruleset,
    requested_by: User | None,
) -> list[ScoringRun]:
    """Queued runs of `ruleset`, one per assessment of `organization` in their order, made in
    one statement, for the caller to carry out (`scoring_runs_execute`): a rescore batch's
    chunk."""
    return ScoringRun.objects.bulk_create(
        ScoringRun(
            assessment=assessment,
            ruleset=ruleset,
            # Date rules (e.g. "pentest more than 365 days before submission") read the
            # submission date, on the organization's clock (a worker runs on the server's).
            as_of=organization.local_date(assessment.submitted_at),
            requested_by=requested_by,
        )
        for assessment in assessments
    )
