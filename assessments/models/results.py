"""The result of an assessment and the assessors' judgement of it: scoring runs with their
findings, reviews, and the risk decisions recorded against a finding's rule."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from assessments.models.assessment import Assessment, ReviewDecision, RiskTier
from scoring.models import Ruleset


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")


class ScoringRun(models.Model):
    """One scoring of an assessment's answers by one ruleset version. Runs are never deleted or
    rewritten once succeeded: a rescore is a new run, and every past run stays viewable."""

    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="runs")
    ruleset = models.ForeignKey(Ruleset, on_delete=models.PROTECT, related_name="runs")
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED)
    as_of = models.DateField()
    answers_snapshot = models.JSONField(default=dict)
    evidence_snapshot = models.JSONField(default=dict)
    risk_score = models.PositiveSmallIntegerField(null=True)
    risk_tier = models.CharField(max_length=10, choices=RiskTier.choices, blank=True)
    sections = models.JSONField(default=dict)
    duration_ms = models.PositiveIntegerField(null=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True)
    # When the run was last handed on: queued, taken by a worker, or queued again by the
    # sweeper, which measures how long a run has been stuck from here.
    dispatched_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk} of assessment {self.assessment_id} ({self.status})"


class Finding(models.Model):
    # No index of its own: the unique (run, rule_id) index serves every lookup by run, and a
    # rescore writes about twenty findings per assessment (one index fewer to keep up).
    run = models.ForeignKey(
        ScoringRun, on_delete=models.CASCADE, related_name="findings", db_index=False
    )
    rule_id = models.CharField(max_length=60)
    severity = models.CharField(max_length=10, choices=RiskTier.choices)
    points = models.PositiveSmallIntegerField()
    section = models.CharField(max_length=20)
    position = models.PositiveSmallIntegerField()
    evidence = models.JSONField(default=list)
    references = models.JSONField(default=list)

    class Meta:
        # A redelivered task cannot duplicate findings: the database refuses a second row.
        constraints = [
            models.UniqueConstraint(fields=["run", "rule_id"], name="unique_finding_per_run")
        ]
        ordering = ["run", "position"]

    def __str__(self) -> str:
        return self.rule_id


class Review(models.Model):
    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="reviews")
    run = models.ForeignKey(ScoringRun, on_delete=models.PROTECT, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decision = models.CharField(max_length=30, choices=ReviewDecision.choices)
    conditions = models.TextField(blank=True, max_length=4000)
    message = models.TextField(blank=True, max_length=4000)
    reopened_codes = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.decision} by {self.reviewer_id}"


class RiskDecisionKind(models.TextChoices):
    ACCEPTANCE = "acceptance", _("Risk acceptance")
    MITIGATION = "mitigation", _("Mitigation")


class RiskDecision(models.Model):
    """A risk acceptance or mitigation recorded against a finding's rule. It is shown beside the
    finding and never hides it."""

    assessment = models.ForeignKey(
        Assessment, on_delete=models.CASCADE, related_name="risk_decisions"
    )
    rule_id = models.CharField(max_length=60)
    kind = models.CharField(max_length=20, choices=RiskDecisionKind.choices)
    justification = models.TextField(max_length=4000)
    owner = models.CharField(max_length=200)
    expires_on = models.DateField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} of {self.rule_id}"
