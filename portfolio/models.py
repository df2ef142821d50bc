"""The portfolio over time: rescore batches (every assessment scored with an older ruleset,
scored again with a new one as one operation).

A batch holds one item per assessment. Each item records its own state, the run that was the
assessment's latest when the batch was made (`before_run`) and the run the batch made (`run`),
so a batch survives a worker restart — a chunk delivered again skips what is finished — and
never counts an assessment twice. Every run stays: a rescore is a new `ScoringRun` made by the
one scoring service (`assessments.services.scoring_runs.scoring_runs_execute`).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.models import Organization
from assessments.models import Assessment, ScoringRun
from scoring.models import Ruleset


class BatchStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Finished with failures")


class RescoreBatch(models.Model):
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="rescore_batches"
    )
    ruleset = models.ForeignKey(Ruleset, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(
        max_length=10, choices=BatchStatus.choices, default=BatchStatus.QUEUED
    )
    total = models.PositiveIntegerField()
    # What the requester chose on the page ("tier: high"), kept with the batch for the record.
    filters = models.JSONField(default=dict, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Moved on by every finished item: a batch that stops moving is resumed by the sweeper.
    progressed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"rescore batch {self.pk} ({self.status})"


class ItemState(models.TextChoices):
    PENDING = "pending", _("Waiting")
    RUNNING = "running", _("Scoring")
    DONE = "done", _("Rescored")
    FAILED = "failed", _("Failed")


class RescoreItem(models.Model):
    # No index of its own: the unique (batch, assessment) index serves lookups by batch.
    batch = models.ForeignKey(
        RescoreBatch, on_delete=models.CASCADE, related_name="items", db_index=False
    )
    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="+")
    before_run = models.ForeignKey(
        ScoringRun, on_delete=models.PROTECT, null=True, related_name="+"
    )
    # Set once, by the one process that made the run (a conditional update).
    run = models.ForeignKey(
        ScoringRun, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    state = models.CharField(max_length=10, choices=ItemState.choices, default=ItemState.PENDING)
    # Rule ids of the findings the new run added and removed, against `before_run`.
    added = models.JSONField(default=list, blank=True)
    removed = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["batch", "assessment"], name="one_item_per_assessment_per_batch"
            )
        ]
        indexes = [models.Index(fields=["batch", "state"])]
        ordering = ["batch", "id"]

    def __str__(self) -> str:
        return f"assessment {self.assessment_id} in batch {self.batch_id} ({self.state})"
