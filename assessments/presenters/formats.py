"""The labels of the assessments' statuses and decisions, in the reader's language (the
numbers, dates and times around them are formatted by `core.formats`)."""

from __future__ import annotations

from django.utils import translation

from ..models import ReviewDecision, RiskDecisionKind, RiskTier


def severity_label(severity: str, language: str) -> str:
    with translation.override(language):
        return str(RiskTier(severity).label) if severity in RiskTier.values else severity


def review_decision_label(decision: str, language: str) -> str:
    with translation.override(language):
        return (
            str(ReviewDecision(decision).label) if decision in ReviewDecision.values else decision
        )


def risk_decision_label(kind: str, language: str) -> str:
    with translation.override(language):
        return str(RiskDecisionKind(kind).label) if kind in RiskDecisionKind.values else kind
