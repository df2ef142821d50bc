"""What every portal page shares: its addresses, the context its header needs, the answerer the
vendor link acts as."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from .. import lifecycle
from ..answering import Answerer
from ..models import (
    Assessment,
    AssessmentStatus,
)
from ..services.vendor_links import portal_question_path
from .access import Portal


def portal_url(name: str, portal: Portal, *args: Any) -> str:
    return reverse(f"portal:{name}", args=[portal.token, *args])


def portal_context(portal: Portal, **extra: Any) -> dict[str, Any]:
    """What every portal page's template needs (its header, the assessment's state)."""
    assessment = portal.assessment
    status = assessment.status
    return {
        "portal": portal,
        "token": portal.token,
        "assessment": assessment,
        "organization_name": assessment.organization.display_name,
        "organization_has_logo": assessment.organization.has_logo,
        "prepared_by": assessment.organization.prepared_by(),
        "vendor_name": assessment.vendor.name,
        "questionnaire_title": portal.spec.title.get(portal.language),
        # An organization's questionnaire written in English only: said, not half translated.
        "english_only": assessment.questionnaire.english_only,
        "is_open": status in lifecycle.EDITABLE_STATUSES,
        "changes_requested": status == AssessmentStatus.CHANGES_REQUESTED,
        "is_submitted": status
        in (AssessmentStatus.SUBMITTED, AssessmentStatus.SCORED, AssessmentStatus.SCORING_FAILED),
        "is_closed": status in (AssessmentStatus.APPROVED, AssessmentStatus.REJECTED),
        **extra,
    }


def portal_answerer(portal: Portal) -> Answerer:
    return Answerer(assessment=portal.assessment, vendor_link=portal.link)


def question_url(portal: Portal, code: str) -> str:
    """Where a question is answered in the portal (its section, at the question)."""
    return portal_question_path(portal.token, portal.spec.questions[code])


def codes_with_evidence(assessment: Assessment) -> set[str]:
    return set(assessment.evidence.values_list("question_code", flat=True))
